"""The ptxas driver: find the assembler and run it on PTX text.

cutec pins ``nvidia-cuda-nvcc==13.0.88`` in its test extra because the GPU
machine's driver (CUDA 13.0) loads PTX ISA <= 9.0 only, and a newer ptxas
accepts PTX that driver rejects. So the pinned wheel's ptxas comes first:

1. ``$CUTEC_PTXAS`` if set;
2. the ptxas inside the installed ``nvidia-cuda-nvcc`` wheel;
3. ``ptxas`` on PATH.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

# Where the nvidia-cuda-nvcc wheels put ptxas inside the `nvidia` namespace package
# (13.x: nvidia/cu13/bin; 12.x: nvidia/cuda_nvcc/bin).
_WHEEL_DIRS = ("cu13/bin", "cuda_nvcc/bin")


@cache
def find_ptxas() -> str | None:
    """Path of the ptxas to use, or None when there is none."""
    override = os.environ.get("CUTEC_PTXAS")
    if override:
        return override
    try:
        import nvidia  # the namespace package of NVIDIA's CUDA wheels
    except ImportError:
        nvidia = None
    for root in getattr(nvidia, "__path__", []):
        for sub in _WHEEL_DIRS:
            candidate = Path(root) / sub / "ptxas"
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
    return shutil.which("ptxas")


@cache
def ptxas_version(path: str) -> tuple[int, int]:
    """(major, minor) release of the ptxas at `path`."""
    out = subprocess.run([path, "--version"], capture_output=True, text=True, check=True).stdout
    m = re.search(r"release (\d+)\.(\d+)", out)
    if m is None:
        raise RuntimeError(f"cannot read the version of {path}: {out!r}")
    return int(m.group(1)), int(m.group(2))


@dataclass(frozen=True)
class AssembleResult:
    """What ptxas said: exit code, messages, and the cubin when it succeeded."""

    returncode: int
    stderr: str
    cubin: bytes | None

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def assemble(ptx: str, arch: str, *, options: tuple[str, ...] = ()) -> AssembleResult:
    """Assemble `ptx` for `arch` (``sm_80``, ``sm_90a`` ...) with the chosen ptxas."""
    exe = find_ptxas()
    if exe is None:
        raise FileNotFoundError("no ptxas found: install cutec's test extra or set CUTEC_PTXAS")
    with tempfile.TemporaryDirectory(prefix="cutec-ptxas-") as tmp:
        src = Path(tmp) / "kernel.ptx"
        out = Path(tmp) / "kernel.cubin"
        src.write_text(ptx)
        proc = subprocess.run(
            [exe, f"-arch={arch}", *options, str(src), "-o", str(out)],
            capture_output=True,
            text=True,
        )
        cubin = out.read_bytes() if proc.returncode == 0 and out.exists() else None
    return AssembleResult(proc.returncode, proc.stdout + proc.stderr, cubin)
