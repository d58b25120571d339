"""SM80 ``cp.async``: one thread copies 4, 8 or 16 bytes global -> shared, asynchronously.

CuTe's atoms (arch/copy_sm80.hpp, atom/copy_traits_sm80.hpp):

* ``SM80_CP_ASYNC_CACHEALWAYS<T>``  ``cp.async.ca`` (L1 and L2), 4/8/16 bytes;
* ``SM80_CP_ASYNC_CACHEGLOBAL<T>``  ``cp.async.cg`` (L2 only), 16 bytes only;
* ``..._ZFILL<T>`` the same with the ``src-size`` operand: the hardware reads
  ``src_size`` bytes and zero-fills the rest of the destination, so
  ``src_size = pred ? sizeof(T) : 0`` turns a masked-off copy into zeros
  (CuTe's predication of residue tiles).

Layouts are those of a one-thread copy of ``8 * sizeof(T)`` bits. The result is
visible only after ``cp.async.commit_group`` / ``cp.async.wait_group`` (sync.py).
All use CuTe's ``.L2::128B`` prefetch hint.
"""

from __future__ import annotations

from cutec.atoms.copy_record import (
    GLOBAL,
    SHARED,
    CopyAtom,
    CopyAtomError,
    Registers,
    one_thread_layouts,
)
from cutec.atoms.family import Family
from cutec.atoms.ptx_template import Operand, PtxTemplate
from cutec.target import target

# cache operator -> the byte widths PTX allows it (PTX ISA, cp.async: .cg takes 16 only).
CP_ASYNC_BYTES: dict[str, tuple[int, ...]] = {"ca": (4, 8, 16), "cg": (16,)}
_CUTE_NAME = {"ca": "SM80_CP_ASYNC_CACHEALWAYS", "cg": "SM80_CP_ASYNC_CACHEGLOBAL"}


def cp_async_template(cache: str, nbytes: int, zfill: bool) -> PtxTemplate:
    """``cp.async.<cache>.shared.global.L2::128B [dst], [src], nbytes{, src_size};``"""
    ops = [Operand("dst", "b32", kind="addr"), Operand("src", "b64", kind="addr")]
    tail = ""
    if zfill:
        ops.append(Operand("src_size", "b32"))
        tail = ", $src_size"
    text = f"cp.async.{cache}.shared.global.L2::128B $dst, $src, {nbytes}{tail};"
    return PtxTemplate(text, tuple(ops))


def _cp_async(cache: str, nbytes: int, zfill: bool) -> CopyAtom:
    bits = 8 * nbytes
    thr, src, dst, ref = one_thread_layouts(bits)
    suffix = "_ZFILL" if zfill else ""
    return CopyAtom(
        name=f"{_CUTE_NAME[cache]}{suffix}<uint{bits}_t>",
        family=Family.CP_ASYNC,
        min_target=target("sm_80"),
        min_ptx=(7, 4),  # cp.async is PTX 7.0; its .L2::128B prefetch hint needs 7.4
        src_spaces=(GLOBAL,),
        dst_spaces=(SHARED,),
        thr_id=thr,
        src_layout=src,
        dst_layout=dst,
        ref_layout=ref,
        src_regs=Registers(bits, 1),
        dst_regs=Registers(bits, 1),
        templates=(("copy", cp_async_template(cache, nbytes, zfill)),),
        cache=cache,
        zfill=zfill,
    )


def cp_async(bits: int, cache: str = "ca", zfill: bool = False) -> CopyAtom:
    """The cp.async atom moving `bits` bits with cache operator ``ca`` or ``cg``."""
    if cache not in CP_ASYNC_BYTES:
        raise CopyAtomError(f"cp.async cache operator must be 'ca' or 'cg', got {cache!r}")
    allowed = CP_ASYNC_BYTES[cache]
    if bits % 8 or bits // 8 not in allowed:
        widths = ", ".join(f"{8 * b} bits ({b} bytes)" for b in allowed)
        raise CopyAtomError(f"cp.async.{cache} copies {widths}; got {bits} bits")
    return _cp_async(cache, bits // 8, zfill)


ATOMS: list[CopyAtom] = [
    _cp_async(cache, nbytes, zfill)
    for zfill in (False, True)
    for cache, widths in CP_ASYNC_BYTES.items()
    for nbytes in widths
]
