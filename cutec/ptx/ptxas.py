"""The ptxas driver: find the assembler and run it on PTX text.

cutec pins ``nvidia-cuda-nvcc==13.0.88`` in its test extra because the GPU
machine's driver (CUDA 13.0) loads PTX ISA <= 9.0 only, and a newer ptxas
accepts PTX that driver rejects. So the pinned wheel's ptxas comes first:

1. ``$CUTEC_PTXAS`` if set;
2. the ptxas inside the installed ``nvidia-cuda-nvcc`` wheel;
3. ``ptxas`` on PATH.

With ``-v`` ptxas reports each kernel's resources; `parse_resource_usage`
reads them into `ResourceUsage` records (``cutec compile --resource-usage``).
Its numbered messages (``ptxas info : (C7511) Potential Performance Loss: ...``)
are read by `parse_messages` into `PtxasMessage` records, which
`cutec.ptx.ptxas_warnings` turns into located warnings.
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

# Where NVIDIA's CUDA wheels put their tools inside the `nvidia` namespace package
# (13.x: nvidia/cu13/bin; 12.x: nvidia/cuda_nvcc/bin).
_WHEEL_DIRS = ("cu13/bin", "cuda_nvcc/bin")


def find_cuda_tool(name: str, override: str) -> str | None:
    """Path of CUDA tool `name` (ptxas, nvdisasm): ``$override`` if set, else the one in an
    installed NVIDIA wheel, else `name` on PATH; None when there is none."""
    path = os.environ.get(override)
    if path:
        return path
    try:
        import nvidia  # the namespace package of NVIDIA's CUDA wheels
    except ImportError:
        nvidia = None
    for root in getattr(nvidia, "__path__", []):
        for sub in _WHEEL_DIRS:
            candidate = Path(root) / sub / name
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
    return shutil.which(name)


@cache
def find_ptxas() -> str | None:
    """Path of the ptxas to use, or None when there is none."""
    return find_cuda_tool("ptxas", "CUTEC_PTXAS")


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

    @property
    def resources(self) -> dict[str, ResourceUsage]:
        """Each kernel's resources, when ptxas ran with ``-v`` (else empty)."""
        return parse_resource_usage(self.stderr)

    @property
    def messages(self) -> list[PtxasMessage]:
        """ptxas's numbered messages (printed with or without ``-v``)."""
        return parse_messages(self.stderr)


@dataclass(frozen=True)
class ResourceUsage:
    """What one kernel uses, as ``ptxas -v`` reports it (bytes, per thread unless said)."""

    kernel: str
    arch: str
    registers: int = 0
    shared_bytes: int = 0  # static shared memory per CTA
    stack_frame: int = 0
    spill_stores: int = 0
    spill_loads: int = 0
    barriers: int = 0

    @property
    def spills(self) -> bool:
        return self.spill_stores > 0 or self.spill_loads > 0

    def __str__(self) -> str:
        return (
            f"{self.kernel} ({self.arch}): {self.registers} registers, "
            f"{self.shared_bytes} bytes smem, {self.stack_frame} bytes stack, "
            f"{self.spill_stores} bytes spill stores, {self.spill_loads} bytes spill loads, "
            f"{self.barriers} barriers"
        )


_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '([^']+)'")
_PROPERTIES = re.compile(
    r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads"
)
_USED = re.compile(r"Used (\d+) registers")
_BARRIERS = re.compile(r"used (\d+) barriers")
_SMEM = re.compile(r"(\d+) bytes smem")


def parse_resource_usage(text: str) -> dict[str, ResourceUsage]:
    """The kernels' resources in ``ptxas -v`` output, by kernel name.

    ptxas prints, per entry function::

        ptxas info    : Compiling entry function 'k' for 'sm_90a'
        ptxas info    : Function properties for k
            8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
        ptxas info    : Used 40 registers, used 1 barriers, 4096 bytes smem, 368 bytes cmem[0]
    """
    found: dict[str, ResourceUsage] = {}
    fields: dict[str, int] = {}
    kernel = arch = None
    for line in text.splitlines():
        if m := _ENTRY.search(line):
            kernel, arch, fields = m.group(1), m.group(2), {}
        elif kernel is None:
            continue
        elif m := _PROPERTIES.search(line):
            stack, stores, loads = map(int, m.groups())
            fields.update(stack_frame=stack, spill_stores=stores, spill_loads=loads)
        elif m := _USED.search(line):
            fields["registers"] = int(m.group(1))
            if b := _BARRIERS.search(line):
                fields["barriers"] = int(b.group(1))
            if sm := _SMEM.search(line):
                fields["shared_bytes"] = int(sm.group(1))
            assert arch is not None
            found[kernel] = ResourceUsage(kernel, arch, **fields)
            kernel = None
    return found


@dataclass(frozen=True)
class PtxasMessage:
    """One numbered message of ptxas, as it prints it::

    ptxas info    : (C7511) Potential Performance Loss: wgmma.mma_async instructions
        are serialized due to ... in the function 'k'
    ptxas info    : (C7519) warpgroup.arrive is injected in around line 29 by
        compiler to allow use of registers in GMMA in function 'k'
    ptxas info    : (C7508) Potential Performance Loss: 'setmaxnreg' ignored; unable
        to determine register count at entry.
    """

    code: str  # C7511
    text: str  # the message less its "in the function '...'" tail
    function: str | None = None  # the function it names, if any
    ptx_line: int | None = None  # the PTX line it names ("around line 29"), if any

    @property
    def performance(self) -> bool:
        """A "Potential Performance Loss": wgmma serialised, setmaxnreg ignored ..."""
        return "Potential Performance Loss" in self.text

    @property
    def injected(self) -> bool:
        """ptxas added a warpgroup.arrive or warpgroup.wait the PTX lacked (C7517, C7519)."""
        return " is injected " in self.text


_MESSAGE = re.compile(r"^ptxas (?:info|warning)\s*: \((C\d+)\) (.*?)\s*$")
_IN_FUNCTION = re.compile(r"\s+in (?:the )?function '([^']+)'\.?$")
# The PTX line a message names ("warpgroup.arrive is injected in around line 29").
AROUND_LINE = re.compile(r"\b(?:in )?around line (\d+)")


def parse_messages(text: str) -> list[PtxasMessage]:
    """ptxas's numbered messages in `text` (its output), in order."""
    found = []
    for line in text.splitlines():
        m = _MESSAGE.match(line)
        if m is None:
            continue
        code, body = m.groups()
        function = None
        if f := _IN_FUNCTION.search(body):
            function, body = f.group(1), body[: f.start()]
        at = AROUND_LINE.search(body)
        found.append(PtxasMessage(code, body, function, int(at.group(1)) if at else None))
    return found


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
