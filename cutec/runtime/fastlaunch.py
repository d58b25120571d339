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
headers and cached beside the kernels (in the disk cache's directory, named by
a hash of its source and the Python version; written atomically). Without a C
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


def _library_path() -> Path:
    tag = hashlib.sha256((_SOURCE + sys.version).encode()).hexdigest()[:16]
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    # With the disk cache off (CUTEC_CACHE=0), the library lives for this process only.
    root = disk_cache.directory() if disk_cache.enabled() else Path(tempfile.mkdtemp())
    return root / "fastlaunch" / f"cutec_fastlaunch_{tag}{suffix}"


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
    path = _library_path()
    try:
        if not path.is_file() and not _build(path):
            return None
        spec = importlib.util.spec_from_file_location("cutec_fastlaunch", path)
        if spec is None or spec.loader is None:
            return None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    except (OSError, ImportError):
        return None
