"""A cubin's SASS: which machine instructions ptxas chose for each kernel.

The disassembler is nvdisasm, found as ptxas is (`find_cuda_tool`):
``$CUTEC_NVDISASM``, else the ``nvidia-cuda-nvdisasm`` wheel of cutec's test
extra, else ``nvdisasm`` on PATH. It reads a cubin for any architecture, so CPU
CI checks that a kernel's SASS holds the instructions its PTX meant (HGMMA for
wgmma on sm_90a, HMMA for mma.sync) and not others:

    ops = sass_opcodes(cubin, "hgemm_tn")   # Counter({"HMMA": 128, "LDSM": 96, ...})
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from collections import Counter
from functools import cache
from pathlib import Path

from cutec.ptx.ptxas import find_cuda_tool


@cache
def find_disassembler() -> str | None:
    """Path of the nvdisasm to use, or None when there is none."""
    return find_cuda_tool("nvdisasm", "CUTEC_NVDISASM")


def disassemble(cubin: bytes) -> str:
    """nvdisasm's listing of the code sections of `cubin`."""
    exe = find_disassembler()
    if exe is None:
        raise FileNotFoundError(
            "no nvdisasm found: install cutec's test extra (nvidia-cuda-nvdisasm) or set "
            "CUTEC_NVDISASM"
        )
    with tempfile.TemporaryDirectory(prefix="cutec-sass-") as tmp:
        path = Path(tmp) / "kernel.cubin"
        path.write_bytes(cubin)
        proc = subprocess.run([exe, "--print-code", str(path)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise ValueError(f"nvdisasm cannot read the cubin: {proc.stderr.strip()}")
    return proc.stdout


# `//------ .text.hgemm_tn ------`: the code section of a function.
_SECTION = re.compile(r"^//-+ \.text\.(\S+)\s+-+")
# `/*0090*/  @!P0 HMMA.16816.F32 R4, R8, R12, R4 ;`: the opcode after an optional guard.
_INSTRUCTION = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?([A-Z][\w.]*)")


def sass_instructions(cubin: bytes) -> dict[str, list[str]]:
    """Each function's instructions, by name: its opcodes with their modifiers
    (``HMMA.16816.F32``), in address order."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in disassemble(cubin).splitlines():
        if m := _SECTION.match(line):
            current = found.setdefault(m.group(1), [])
        elif current is not None and (m := _INSTRUCTION.match(line)):
            current.append(m.group(1))
    return found


def sass_opcodes(cubin: bytes, kernel: str | None = None) -> Counter[str]:
    """How often each opcode (without modifiers: ``HMMA``, ``HGMMA``, ``LDSM``) occurs in
    `kernel` of `cubin`, or in all its functions when `kernel` is None."""
    functions = sass_instructions(cubin)
    if kernel is not None and kernel not in functions:
        raise KeyError(f"the cubin has no function '{kernel}' (it has {', '.join(functions)})")
    chosen = functions.values() if kernel is None else [functions[kernel]]
    return Counter(op.split(".", 1)[0] for ops in chosen for op in ops)
