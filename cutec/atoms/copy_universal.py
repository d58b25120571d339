"""``UniversalCopy<uint<bits>_t>``: one thread, a plain ld/st; valid on every target."""

from __future__ import annotations

from cutec.atoms.copy_record import (
    BASE_TARGET,
    GLOBAL,
    LOCAL,
    REG,
    SHARED,
    SHARED_CLUSTER,
    CopyAtom,
    CopyAtomError,
    Registers,
    one_thread_layouts,
)
from cutec.atoms.family import Family
from cutec.atoms.ptx_template import Operand, PtxTemplate

# --- UniversalCopy --------------------------------------------------------------------------------

UNIVERSAL_BITS = (8, 16, 32, 64, 128)
UNIVERSAL_SPACES = (GLOBAL, SHARED, LOCAL, REG)

# bits -> (PTX vector prefix and type, register type, registers). Wide copies are
# vectors of b32 because fragments (mma operands, f32 accumulators) live in
# 32-bit registers; a .b8 load lands in a 16-bit register (PTX has no 8-bit ones).
_UNIVERSAL_PTX: dict[int, tuple[str, str, int]] = {
    8: ("b8", "b16", 1),
    16: ("b16", "b16", 1),
    32: ("b32", "b32", 1),
    64: ("v2.b32", "b32", 2),
    128: ("v4.b32", "b32", 4),
}

# Address registers: 64-bit for global, 32-bit windows for shared and local.
ADDRESS_TYPE = {GLOBAL: "b64", SHARED: "b32", SHARED_CLUSTER: "b32", LOCAL: "b32"}


def _universal_templates(bits: int) -> tuple[tuple[str, PtxTemplate], ...]:
    ptx_type, reg_type, count = _UNIVERSAL_PTX[bits]
    out: list[tuple[str, PtxTemplate]] = []
    for space in (GLOBAL, SHARED, LOCAL):
        addr = Operand("addr", ADDRESS_TYPE[space], kind="addr")
        val = Operand("v", reg_type, count)
        out.append((f"ld.{space}", PtxTemplate(f"ld.{space}.{ptx_type} $v, $addr;", (val, addr))))
        out.append((f"st.{space}", PtxTemplate(f"st.{space}.{ptx_type} $addr, $v;", (addr, val))))
    return tuple(out)


def _universal_copy(bits: int) -> CopyAtom:
    thr, src, dst, ref = one_thread_layouts(bits)
    return CopyAtom(
        name=f"UniversalCopy<uint{bits}_t>",
        family=Family.UNIVERSAL_COPY,
        min_target=BASE_TARGET,
        min_ptx=(6, 3),
        src_spaces=UNIVERSAL_SPACES,
        dst_spaces=UNIVERSAL_SPACES,
        thr_id=thr,
        src_layout=src,
        dst_layout=dst,
        ref_layout=ref,
        src_regs=Registers(bits, 1),
        dst_regs=Registers(bits, 1),
        templates=_universal_templates(bits),
    )


def universal_copy(bits: int) -> CopyAtom:
    """``UniversalCopy<uint<bits>_t>``: one thread, plain ld/st of `bits` bits."""
    if bits not in UNIVERSAL_BITS:
        raise CopyAtomError(
            f"UniversalCopy moves {', '.join(map(str, UNIVERSAL_BITS))} bits; got {bits}"
        )
    return _universal_copy(bits)


ATOMS: list[CopyAtom] = [_universal_copy(b) for b in UNIVERSAL_BITS]
