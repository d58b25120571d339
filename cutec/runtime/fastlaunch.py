"""cutec's launch path in C (fastlaunch.c), as Triton's launcher is.

Through cuda.bindings, a ``cuLaunchKernel`` call spends about as long converting
its Python arguments as the driver spends launching, and reading a torch
tensor's fields from Python costs about 0.6 us a tensor. The extension has two
entry points:

* `launch(function, gx, gy, gz, bx, by, bz, smem, stream, params)`: one
  ``cuLaunchKernel`` with plain integers, for the Python launch function
  (`cutec.runtime.launcher`), which has checked and packed everything;
* `Launcher(...)`: a kernel object's whole call in C for torch tensors and
  Python scalars with shapes seen before (`launcher.fast_call` makes it);
  everything else goes to the Python launch function.

It is compiled on first use with the system C compiler against this Python's
headers and cached, named by a hash of its source and the Python version
(written atomically), in the user's cutec cache (``~/.cache/cutec/fastlaunch``,
or ``$CUTEC_EXT_DIR``), not in ``$CUTEC_CACHE_DIR``: it belongs to the
installation, like Python's bytecode, so a new kernel cache does not build it
again (the 0.4 s of a C compile were a third of a cold compile of sgemm_2 on an
H100 host). Where that directory cannot be written it goes beside the kernels;
with the cache off, to a temporary directory for this process. Without a C
compiler, Python headers or libcuda, `load()` returns None and the launch goes
through cuda.bindings as before: slower, never wrong.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from functools import cache
from pathlib import Path
from types import ModuleType

from cutec.runtime import cache as disk_cache

_SOURCE = (Path(__file__).parent / "fastlaunch.c").read_text()


def _library_paths() -> list[Path]:
    """Where the library may live, in order of preference (see the module docstring)."""
    tag = hashlib.sha256((_SOURCE + sys.version).encode()).hexdigest()[:16]
    name = f"cutec_fastlaunch_{tag}{importlib.machinery.EXTENSION_SUFFIXES[0]}"
    if not disk_cache.enabled():  # CUTEC_CACHE=0: for this process only
        return [Path(tempfile.mkdtemp()) / name]
    override = os.environ.get("CUTEC_EXT_DIR")
    if override:
        return [Path(override) / name]
    roots = [disk_cache.user_directory(), disk_cache.directory()]
    return [root / "fastlaunch" / name for root in dict.fromkeys(roots)]


def _buildable(target: Path) -> bool:
    """Whether `target`'s directory exists or can be made, and can be written."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(target.parent, os.W_OK)


def _build(target: Path) -> bool:
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    include = sysconfig.get_paths().get("include")
    if compiler is None or include is None or not Path(include, "Python.h").is_file():
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".build-") as tmp:
        src = Path(tmp) / "fastlaunch.c"
        out = Path(tmp) / target.name
        src.write_text(_SOURCE)
        proc = subprocess.run(
            [compiler, "-O2", "-shared", "-fPIC", f"-I{include}", str(src), "-o", str(out),
             "-ldl"],
            capture_output=True, text=True,
        )  # fmt: skip
        if proc.returncode != 0:
            return False
        os.replace(out, target)  # atomic: a concurrent process sees all of it or none
    return True


def load() -> ModuleType | None:
    """The compiled extension where it can launch (libcuda found); else None."""
    module = extension()
    return module if module is not None and module.have_driver() else None


@cache
def extension() -> ModuleType | None:
    """The compiled extension, built on first use, with or without libcuda (tests hand it
    a recorder with `set_launch`); None where it cannot be built or is turned off."""
    if os.environ.get("CUTEC_FAST_LAUNCH", "1") in ("0", "off", "false"):
        return None
    paths = _library_paths()  # once: with the cache off, each call makes a temporary dir
    path = next((p for p in paths if p.is_file()), None)
    try:
        if path is None:
            path = next((p for p in paths if _buildable(p) and _build(p)), None)
        if path is None:
            return None
        spec = importlib.util.spec_from_file_location("cutec_fastlaunch", path)
        if spec is None or spec.loader is None:
            return None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    except (OSError, ImportError):
        return None
