"""Wrap rendered instructions into a minimal ``.entry`` kernel and run ``ptxas`` on it.

Used by the copy and sync template tests: every template is rendered with
made-up registers of the declared types, placed in a kernel that declares
those registers, and assembled for the atom's own target at the lowest PTX ISA
version it claims (never above 9.0, what the GPU machine's driver accepts).
``ptx_harness`` (the MMA tests' harness) supplies ptxas itself; its
`fragment_kernel` fixes one PTX version per target (7.0 for sm_80, too old for
cp.async's ``.L2::128B`` hint, none for plain sm_90), hence this module's
per-instruction version.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from cutec.atoms.ptx_template import PtxTemplate
from tests.atoms.ptx_harness import assemble, ptxas_path

__all__ = ["assemble", "fake_operands", "kernel", "ptx_version_for", "ptxas_path"]

MAX_PTX_VERSION = (9, 0)

# The lowest PTX ISA version each target exists in.
TARGET_MIN_PTX: dict[str, tuple[int, int]] = {
    "sm_75": (6, 3),
    "sm_80": (7, 0),
    "sm_90": (7, 8),
    "sm_90a": (8, 0),
}

# PTX register type -> register-name prefix declared in the kernel.
_PREFIX = {
    "pred": "%p",
    "b16": "%rs",
    "u16": "%rs",
    "s16": "%rs",
    "f16": "%rs",
    "bf16": "%rs",
    "b32": "%r",
    "u32": "%r",
    "s32": "%r",
    "f16x2": "%r",
    "bf16x2": "%r",
    "b64": "%rd",
    "u64": "%rd",
    "s64": "%rd",
    "f32": "%f",
    "f64": "%fd",
}
_DECLS = {"%p": "pred", "%rs": "b16", "%r": "b32", "%rd": "b64", "%f": "f32", "%fd": "f64"}


def fake_operands(template: PtxTemplate, imms: Mapping[str, str] | None = None) -> dict:
    """Distinct registers of each operand's type; immediates from `imms` (default "1")."""
    counters: dict[str, int] = {}
    values: dict[str, str | list[str]] = {}
    for op in template.operands:
        if op.kind == "imm":
            values[op.name] = (imms or {}).get(op.name, "1")
            continue
        prefix = _PREFIX[op.ptx_type]
        regs = []
        for _ in range(op.count):
            n = counters.get(prefix, 0)
            counters[prefix] = n + 1
            regs.append(f"{prefix}{n}")
        values[op.name] = regs if op.count > 1 else regs[0]
    return values


def kernel(lines: Iterable[str], target: str, version: tuple[int, int]) -> str:
    """A PTX module with one parameterless kernel running `lines`."""
    if version > MAX_PTX_VERSION:
        raise ValueError(f"PTX ISA {version} is above the {MAX_PTX_VERSION} the driver takes")
    decls = "\n".join(f"    .reg .{t} {p}<32>;" for p, t in _DECLS.items())
    body = "\n".join(f"    {line}" for line in lines)
    return (
        f".version {version[0]}.{version[1]}\n.target {target}\n.address_size 64\n\n"
        f".visible .entry atom_test()\n{{\n{decls}\n{body}\n    ret;\n}}\n"
    )


def ptx_version_for(target: str, min_ptx: tuple[int, int]) -> tuple[int, int]:
    """The lowest version both the instruction and the target accept."""
    return max(min_ptx, TARGET_MIN_PTX[target])
