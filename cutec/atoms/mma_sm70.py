"""Volta `mma.sync.aligned.m8n8k4` atoms: a quadpair (8 threads) computes 8x8x4 in f16.

Layouts are CuTe's mma_traits_sm70.hpp (the seed's worked example). In CuTe's
names T means K-major ("row" in PTX for A, "col" for B) and N means M/N-major.
ptxas 13 no longer targets sm_70, so these assemble for sm_75 (and run on Hopper).
"""

from __future__ import annotations

from cutec.atoms.family import Family
from cutec.atoms.mma_record import MmaAtom
from cutec.atoms.ptx_template import Operand, PtxTemplate
from cutec.layout import Layout
from cutec.target import target

# Logical thread t -> lane: quadpair 0 is lanes [0,4) U [16,20).
QUADPAIR = Layout((4, 2), (1, 16))
# (T8,V4) -> (m,k): K-major A (or B): thread t owns row t.
ROW_8x4 = Layout((8, 4), (1, 8))
# (T8,V4) -> (m,k): M-major A (or B): thread (t0,t1) owns column k=t0, rows 4*t1 + [0,4).
COL_8x4 = Layout(((4, 2), 4), ((8, 4), 1))
# (T8,V8) -> (m,n): f16 accumulators, thread t owns row t.
C_8x8_16B = Layout((8, 8), (1, 8))
# (T8,V8) -> (m,n): f32 accumulators (the seed derives these strides value by value).
C_8x8_32B = Layout(((2, 2, 2), (2, 2, 2)), ((1, 16, 4), (8, 2, 32)))

# CuTe suffix -> (A layout, B layout, PTX A order, PTX B order).
_MAJORS = {
    "TN": (ROW_8x4, ROW_8x4, "row", "col"),
    "NT": (COL_8x4, COL_8x4, "col", "row"),
    "NN": (COL_8x4, ROW_8x4, "col", "col"),
    "TT": (ROW_8x4, COL_8x4, "row", "row"),
}


def _m8n8k4(acc: str, suffix: str) -> MmaAtom:
    a_layout, b_layout, a_order, b_order = _MAJORS[suffix]
    # f16 accumulators travel packed two to a b32 register; f32 ones one each.
    acc_reg, acc_count = ("b32", 4) if acc == "f16" else ("f32", 8)
    types = f"{acc}.f16.f16.{acc}"
    text = f"mma.sync.aligned.m8n8k4.{a_order}.{b_order}.{types} $d, $a, $b, $c;"
    ops = (
        Operand("d", acc_reg, acc_count),
        Operand("a", "b32", 2),
        Operand("b", "b32", 2),
        Operand("c", acc_reg, acc_count),
    )
    return MmaAtom(
        name=f"SM70_8x8x4_{acc.upper()}F16F16{acc.upper()}_{suffix}",
        family=Family.QUADPAIR_MMA,
        min_target=target("sm_75"),
        shape_mnk=(8, 8, 4),
        d_type=acc,
        a_type="f16",
        b_type="f16",
        c_type=acc,
        thr_id=QUADPAIR,
        a_layout=a_layout,
        b_layout=b_layout,
        c_layout=C_8x8_16B if acc == "f16" else C_8x8_32B,
        ptx=PtxTemplate(text, ops),
        a_major="K" if a_order == "row" else "MN",
        b_major="K" if b_order == "col" else "MN",
    )


ATOMS: tuple[MmaAtom, ...] = tuple(
    _m8n8k4(acc, suffix) for acc in ("f16", "f32") for suffix in ("TN", "NT", "NN", "TT")
)
