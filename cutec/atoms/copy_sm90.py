"""SM90 copy atoms: ``stmatrix`` and TMA ``cp.async.bulk.tensor``.

``stmatrix`` is ldmatrix run backwards: the same register fragments (source)
and the same per-lane row addresses (destination). CuTe defines its traits by
swapping ldmatrix's: ``Src = LDSM::Dst``, ``Dst = LDSM::Src``, and its
RefLayout is the register side (its Src). Names: ``SM90_U32x{1,2,4}_STSM_N``,
``SM90_U16x{2,4,8}_STSM_T``.

TMA copies a whole box between global memory and shared memory, issued by one
thread, described by a tensor map (tma.py). CuTe's traits are those of a
one-thread copy of ``NumBitsPerTMA`` bits (the box), so a TMA atom exists per
box size: `tma_atom(kind, rank, bits)`.

* load  ``SM90_TMA_LOAD_<r>D``:  global -> shared::cluster, completes by
  ``complete_tx::bytes`` on an mbarrier the consumer waits on;
* store ``SM90_TMA_STORE_<r>D``: shared::cta -> global, completes by bulk group
  (``cp.async.bulk.commit_group`` / ``wait_group.read``).

Operands: ``$tmap`` is the generic 64-bit address of the tensor map, ``$coords``
the ``r`` signed 32-bit element coordinates of the box corner (innermost first).
"""

from __future__ import annotations

import re

from cutec.atoms.copy_record import (
    GLOBAL,
    REG,
    SHARED,
    SHARED_CLUSTER,
    CopyAtom,
    CopyAtomError,
    Registers,
    braced,
    one_thread_layouts,
)
from cutec.atoms.copy_sm75 import (
    FRAGMENT_N_LAYOUT,
    FRAGMENT_T_LAYOUT,
    LDSM_NUMS,
    MATRIX_ROWS_LAYOUT,
    matrix_name,
)
from cutec.atoms.family import Family
from cutec.atoms.ptx_template import Operand, PtxTemplate
from cutec.layout import Layout
from cutec.target import target

# --- stmatrix -------------------------------------------------------------------------------------


def stmatrix_template(num: int, trans: bool) -> PtxTemplate:
    """``stmatrix.sync.aligned.m8n8.x<num>{.trans}.shared.b16 [dst], {s...};``"""
    t = ".trans" if trans else ""
    text = f"stmatrix.sync.aligned.m8n8.x{num}{t}.shared.b16 $dst, {braced('s', num)};"
    return PtxTemplate(text, (Operand("dst", "b32", kind="addr"), Operand("s", "b32", num)))


def _stmatrix(num: int, trans: bool) -> CopyAtom:
    frag = (FRAGMENT_T_LAYOUT if trans else FRAGMENT_N_LAYOUT)[num]
    return CopyAtom(
        name=matrix_name("STSM", num, trans),
        family=Family.STMATRIX,
        min_target=target("sm_90"),
        min_ptx=(7, 8),
        src_spaces=(REG,),
        dst_spaces=(SHARED,),
        thr_id=Layout(32),
        src_layout=frag,
        dst_layout=MATRIX_ROWS_LAYOUT[num],
        ref_layout=frag,
        src_regs=Registers(32, num),
        dst_regs=Registers(128, 1),
        templates=(("copy", stmatrix_template(num, trans)),),
        transpose=trans,
    )


# --- TMA ------------------------------------------------------------------------------------------

TMA_RANKS = (1, 2, 3, 4, 5)
TMA_KINDS = ("LOAD", "STORE")
_TMA_NAME = re.compile(r"SM90_TMA_(LOAD|STORE)_(\d+)D")


def tma_name(kind: str, rank: int) -> str:
    """CuTe's name of the TMA atom: ``SM90_TMA_LOAD_2D``."""
    return f"SM90_TMA_{kind}_{rank}D"


# Every TMA atom's name and family; the records are made per box size (`tma_atom`).
TMA_FAMILIES: dict[str, Family] = {
    tma_name(kind, rank): Family.TMA_LOAD if kind == "LOAD" else Family.TMA_STORE
    for kind in TMA_KINDS
    for rank in TMA_RANKS
}


def parse_tma_name(name: str) -> tuple[str, int] | None:
    """``("LOAD", 2)`` for ``SM90_TMA_LOAD_2D``; None for a name that is no TMA atom."""
    m = _TMA_NAME.fullmatch(name)
    return (m.group(1), int(m.group(2))) if m else None


def _tensor_operand(rank: int) -> tuple[str, tuple[Operand, ...]]:
    """``[tmap, {c0, ...}]`` text and its operands."""
    ops = (Operand("tmap", "b64"), Operand("coords", "b32", rank))
    return f"[$tmap, {braced('coords', rank)}]", ops


def tma_load_templates(rank: int) -> tuple[tuple[str, PtxTemplate], ...]:
    """The load, plain and with an L2 cache-policy operand (CuTe always passes one)."""
    tensor, tensor_ops = _tensor_operand(rank)
    head = f"cp.async.bulk.tensor.{rank}d.shared::cluster.global.mbarrier::complete_tx::bytes"
    dst = Operand("dst", "b32", kind="addr")
    mbar = Operand("mbar", "b32", kind="addr")
    plain = PtxTemplate(f"{head} $dst, {tensor}, $mbar;", (dst, *tensor_ops, mbar))
    hinted = PtxTemplate(
        f"{head}.L2::cache_hint $dst, {tensor}, $mbar, $policy;",
        (dst, *tensor_ops, mbar, Operand("policy", "b64")),
    )
    return (("copy", plain), ("copy.L2::cache_hint", hinted))


def tma_store_templates(rank: int) -> tuple[tuple[str, PtxTemplate], ...]:
    """``cp.async.bulk.tensor.<r>d.global.shared::cta.bulk_group [tmap, {c}], [src];``"""
    tensor, tensor_ops = _tensor_operand(rank)
    text = f"cp.async.bulk.tensor.{rank}d.global.shared::cta.bulk_group {tensor}, $src;"
    return (("copy", PtxTemplate(text, (*tensor_ops, Operand("src", "b32", kind="addr")))),)


def tma_atom(kind: str, rank: int, bits: int) -> CopyAtom:
    """``SM90_TMA_<kind>_<rank>D`` moving a box of `bits` bits (CuTe's NumBitsPerTMA)."""
    if kind not in TMA_KINDS:
        raise CopyAtomError(f"TMA atom kind must be one of {TMA_KINDS}, got {kind!r}")
    if rank not in TMA_RANKS:
        raise CopyAtomError(f"TMA tensors have rank 1..5; got {rank}")
    # The box's inner extent is a multiple of 16 bytes, so the box is too.
    if bits <= 0 or bits % 128:
        raise CopyAtomError(f"a TMA box moves a positive multiple of 128 bits; got {bits}")
    thr, src, dst, ref = one_thread_layouts(bits)
    load = kind == "LOAD"
    return CopyAtom(
        name=tma_name(kind, rank),
        family=TMA_FAMILIES[tma_name(kind, rank)],
        min_target=target("sm_90"),
        min_ptx=(8, 0),
        src_spaces=(GLOBAL,) if load else (SHARED,),
        dst_spaces=(SHARED_CLUSTER,) if load else (GLOBAL,),
        thr_id=thr,
        src_layout=src,
        dst_layout=dst,
        ref_layout=ref,
        src_regs=None,
        dst_regs=None,
        templates=tma_load_templates(rank) if load else tma_store_templates(rank),
    )


def tma_load(rank: int, bits: int) -> CopyAtom:
    """``SM90_TMA_LOAD_<rank>D`` for a box of `bits` bits."""
    return tma_atom("LOAD", rank, bits)


def tma_store(rank: int, bits: int) -> CopyAtom:
    """``SM90_TMA_STORE_<rank>D`` for a box of `bits` bits."""
    return tma_atom("STORE", rank, bits)


ATOMS: list[CopyAtom] = [_stmatrix(num, trans) for trans in (False, True) for num in LDSM_NUMS]
