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

A library is loaded, as a cache entry is read, only from directories of this
user's alone (`cache.private_dir`: made 0700, checked where they exist) and only
when the file is this user's alone too (docs/runtime.md, *The cache's threat
model*); elsewhere it is refused with one `CacheWarning`, and built where it may
be, or the launch goes through cuda.bindings. It is written 0700, whatever the
umask, and never built for a process that launches nothing on a GPU.
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
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType

from cutec.runtime import cache as disk_cache

_SOURCE = (Path(__file__).parent / "fastlaunch.c").read_text()


@dataclass(frozen=True)
class _Place:
    """Where the library may be: its path, and the cutec cache it is in (None: a
    directory of its own, CUTEC_EXT_DIR or a temporary one)."""

    library: Path
    cache_root: Path | None = None

    def usable(self, create: bool) -> bool:
        """Whether the library may be loaded from (and built in) its directory, and the
        cache above it: this user's alone, made so where missing and `create`."""
        if self.cache_root is not None and not disk_cache.usable_root(self.cache_root, create):
            return False
        return disk_cache.private_dir(self.library.parent, create=create)


def _places() -> list[_Place]:
    """Where the library may live, in order of preference (see the module docstring)."""
    tag = hashlib.sha256((_SOURCE + sys.version).encode()).hexdigest()[:16]
    name = f"cutec_fastlaunch_{tag}{importlib.machinery.EXTENSION_SUFFIXES[0]}"
    if not disk_cache.enabled():  # CUTEC_CACHE=0: for this process only
        return [_Place(Path(tempfile.mkdtemp()) / name)]
    override = os.environ.get("CUTEC_EXT_DIR")
    if override:
        return [_Place(Path(override) / name)]
    roots = [disk_cache.user_directory(), disk_cache.directory()]
    return [_Place(root / "fastlaunch" / name, root) for root in dict.fromkeys(roots)]


def _library_paths() -> list[Path]:
    """The paths of `_places`."""
    return [place.library for place in _places()]


def _build(target: Path) -> bool:
    """Compile the library to `target` (its directory made and checked by the caller)."""
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    include = sysconfig.get_paths().get("include")
    if compiler is None or include is None or not Path(include, "Python.h").is_file():
        return False
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
        os.chmod(out, 0o700)  # the compiler's mode follows the umask
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
    places = _places()  # once: with the cache off, each call makes a temporary dir
    path = next((p.library for p in places if _trusted(p)), None)
    try:
        if path is None:
            path = next((p.library for p in places if _buildable(p) and _build(p.library)), None)
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


def _trusted(place: _Place) -> bool:
    """Whether a library is at `place`, in directories and a file of this user's alone
    (not merely a file of the right name: see the module docstring)."""
    if not os.path.lexists(place.library):
        return False
    warn_as = place.library.parent
    return place.usable(create=False) and disk_cache.trusted_file(place.library, warn_as)


def _buildable(place: _Place) -> bool:
    """Whether the library may be built at `place` (its directories made 0700)."""
    return place.usable(create=True) and os.access(place.library.parent, os.W_OK)
