"""PTX test harness: wrap rendered atom templates into minimal kernels and run ptxas.

Two kinds of kernel, one module:

* `kernel(lines, target, version)`: a parameterless ``.entry`` running the given
  instruction lines on made-up registers (`fake_operands` declares them by type);
  the copy and sync template tests assemble every template this way.
* `fragment_kernel(template, ...)`: the GPU test kernel, which does real work.
  Thread t loads the registers of every input operand from ``in[t, :]`` (one 64-bit
  slot per register, the value in its low bits), runs the instruction, and stores
  every output operand's registers to ``out[t, :]``. Optionally it first copies
  ``smem_bytes`` bytes from a third pointer into a `.shared` buffer and adds that
  buffer's address (>> 4) to the named descriptor operands, for wgmma.

The PTX ISA version is per instruction: `ptx_version_for(target, min_ptx)` is the
lowest version both the target and the instruction accept (cp.async's ``.L2::128B``
needs 7.4 where plain sm_80 needs 7.0), never above 9.0, what the GPU machine's
CUDA 13.0 driver accepts. `fragment_kernel` defaults to the target's `ptx_version`;
both come from cutec/target.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from cutec.atoms.ptx_template import Operand, PtxTemplate
from cutec.dtypes import REGISTER_PREFIX, register_class
from cutec.ptx.ptxas import AssembleResult, find_ptxas
from cutec.ptx.ptxas import assemble as ptxas_assemble
from cutec.target import MAX_PTX_VERSION, target

# Register-name prefix -> the register class `kernel` declares under it.
_DECLS = {prefix: cls for cls, prefix in REGISTER_PREFIX.items()}


def ptx_version_for(target_name: str, min_ptx: tuple[int, int]) -> tuple[int, int]:
    """The lowest version both the instruction and the target accept."""
    return target(target_name).ptx_version_for(min_ptx)


def _version_line(version: tuple[int, int]) -> str:
    if version > MAX_PTX_VERSION:
        raise ValueError(f"PTX ISA {version} is above the {MAX_PTX_VERSION} the driver takes")
    return f".version {version[0]}.{version[1]}"


def ptxas_path() -> str | None:
    """The ptxas cutec uses (the pinned 13.0 wheel's first), or None (tests then skip)."""
    return find_ptxas()


def assemble(ptx: str, arch: str) -> AssembleResult:
    """Run `ptxas -arch=<arch>` on `ptx`; the result carries the return code and messages."""
    return ptxas_assemble(ptx, arch)


def fake_operands(template: PtxTemplate, imms: Mapping[str, str] | None = None) -> dict:
    """Distinct registers of each operand's type; immediates from `imms` (default "1")."""
    counters: dict[str, int] = {}
    values: dict[str, str | list[str]] = {}
    for op in template.operands:
        if op.kind == "imm":
            values[op.name] = (imms or {}).get(op.name, "1")
            continue
        prefix = REGISTER_PREFIX[register_class(op.ptx_type)]
        regs = []
        for _ in range(op.count):
            n = counters.get(prefix, 0)
            counters[prefix] = n + 1
            regs.append(f"{prefix}{n}")
        values[op.name] = regs if op.count > 1 else regs[0]
    return values


def kernel(lines: Iterable[str], target: str, version: tuple[int, int]) -> str:
    """A PTX module with one parameterless kernel running `lines`."""
    decls = "\n".join(f"    .reg .{t} {p}<32>;" for p, t in _DECLS.items())
    body = "\n".join(f"    {line}" for line in lines)
    return (
        f"{_version_line(version)}\n.target {target}\n.address_size 64\n\n"
        f".visible .entry atom_test()\n{{\n{decls}\n{body}\n    ret;\n}}\n"
    )


def _regs(op: Operand) -> list[str]:
    return [f"%v_{op.name}{i}" for i in range(op.count)]


def _move(op: Operand, reg: str, address: str, load: bool) -> list[str]:
    """Load or store one register through a 64-bit slot (predicates travel as b32 0/1)."""
    if op.ptx_type == "pred":
        if load:
            return [f"ld.global.b32 %h1, {address};", f"setp.ne.b32 {reg}, %h1, 0;"]
        return [f"selp.b32 %h1, 1, 0, {reg};", f"st.global.b32 {address}, %h1;"]
    return [
        f"ld.global.{op.ptx_type} {reg}, {address};"
        if load
        else f"st.global.{op.ptx_type} {address}, {reg};"
    ]


@dataclass(frozen=True)
class FragmentKernel:
    """A kernel `name(in, out[, smem_src])` and the slot order of its in/out buffers."""

    ptx: str
    name: str
    inputs: tuple[tuple[str, int], ...]  # (operand, registers) in slot order
    outputs: tuple[tuple[str, int], ...]


def fragment_kernel(
    template: PtxTemplate,
    *,
    arch: str,
    inputs: Sequence[str],
    outputs: Sequence[str],
    imms: dict[str, str] | None = None,
    before: Sequence[str] = (),
    after: Sequence[str] = (),
    smem_bytes: int = 0,
    smem_descriptors: Sequence[str] = (),
    name: str = "atom_test",
    version: tuple[int, int] | None = None,
) -> FragmentKernel:
    """The kernel running `template` once per thread on registers loaded from `in`.

    `before`/`after` lines go around the instruction (wgmma's fence and waits);
    with `smem_bytes`, the third parameter is copied into shared memory first and
    the shared base address >> 4 is added to each operand in `smem_descriptors`.
    `version` is the PTX ISA version (default: the target's `ptx_version`).
    """
    ops = {op.name: op for op in template.operands}
    values: dict[str, str | list[str]] = {}
    for op in template.operands:
        values[op.name] = (imms or {}).get(op.name, "1") if op.kind == "imm" else _regs(op)
    decls = [
        f".reg .{op.ptx_type} %v_{op.name}<{op.count}>;"
        for op in template.operands
        if op.kind == "reg"
    ]
    decls += [".reg .b32 %h<4>;", ".reg .b64 %hd<8>;", ".reg .pred %hp<2>;"]
    n_in = sum(ops[n].count for n in inputs)
    n_out = sum(ops[n].count for n in outputs)
    params = [".param .u64 p_in", ".param .u64 p_out"] + (
        [".param .u64 p_smem"] if smem_bytes else []
    )
    body = [
        "ld.param.u64 %hd0, [p_in];",
        "cvta.to.global.u64 %hd0, %hd0;",
        "ld.param.u64 %hd1, [p_out];",
        "cvta.to.global.u64 %hd1, %hd1;",
        "mov.u32 %h0, %tid.x;",
        f"mul.wide.u32 %hd2, %h0, {8 * n_in};",
        "add.u64 %hd2, %hd0, %hd2;",
        f"mul.wide.u32 %hd3, %h0, {8 * max(n_out, 1)};",
        "add.u64 %hd3, %hd1, %hd3;",
    ]
    shared = ""
    if smem_bytes:
        # Every thread copies words tid, tid + ntid, ... then the CTA waits, and the
        # async proxy (which wgmma reads shared memory through) is made to see the writes.
        shared = f".shared .align 128 .b8 smem_buf[{smem_bytes}];\n"
        body += [
            "ld.param.u64 %hd4, [p_smem];",
            "cvta.to.global.u64 %hd4, %hd4;",
            "mov.u32 %h2, %h0;",
            "COPY:",
            f"setp.ge.u32 %hp0, %h2, {smem_bytes // 4};",
            "@%hp0 bra COPIED;",
            "mul.wide.u32 %hd5, %h2, 4;",
            "add.u64 %hd6, %hd4, %hd5;",
            "ld.global.b32 %h1, [%hd6];",
            "mov.u64 %hd7, smem_buf;",
            "add.u64 %hd7, %hd7, %hd5;",
            "st.shared.b32 [%hd7], %h1;",
            "mov.u32 %h3, %ntid.x;",
            "add.u32 %h2, %h2, %h3;",
            "bra COPY;",
            "COPIED:",
            "bar.sync 0;",
            "fence.proxy.async.shared::cta;",
        ]
    slot = 0
    for n in inputs:
        for reg in _regs(ops[n]):
            body += _move(ops[n], reg, f"[%hd2+{8 * slot}]", load=True)
            slot += 1
    for n in smem_descriptors:
        body += [
            "mov.u64 %hd5, smem_buf;",
            "shr.u64 %hd5, %hd5, 4;",
            f"add.u64 %v_{n}0, %v_{n}0, %hd5;",
        ]
    body += [*before, template.render(values), *after]
    slot = 0
    for n in outputs:
        for reg in _regs(ops[n]):
            body += _move(ops[n], reg, f"[%hd3+{8 * slot}]", load=False)
            slot += 1
    lines = "\n".join(f"    {line}" if not line.endswith(":") else line for line in body)
    header = (
        f"{_version_line(version or target(arch).ptx_version)}\n.target {arch}\n.address_size 64\n"
    )
    ptx = (
        f"{header}\n{shared}"
        f".visible .entry {name}({', '.join(params)})\n{{\n"
        + "\n".join(f"    {d}" for d in decls)
        + f"\n{lines}\n    ret;\n}}\n"
    )
    return FragmentKernel(
        ptx,
        name,
        tuple((n, ops[n].count) for n in inputs),
        tuple((n, ops[n].count) for n in outputs),
    )
