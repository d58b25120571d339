"""Ampere `mma.sync.aligned` atoms: one warp (32 threads) computes a 16x8xK (or 8x8x4) tile.

Layouts are CuTe's mma_traits_sm80.hpp. All are TN: A is K-major (PTX `.row`),
B is K-major (PTX `.col`). Lane l = 4*g + q is "group" g = l/4, "thread in group"
q = l%4 in the PTX ISA's fragment figures, hence the thread modes (4,8).
"""

from __future__ import annotations

from cutec.atoms.family import Family
from cutec.atoms.mma_record import MmaAtom
from cutec.atoms.ptx_template import Operand, PtxTemplate
from cutec.layout import Layout
from cutec.target import target

WARP = Layout(32)
# (T32,V1) -> (n,k) of an 8x4 tile: lane (q,g) owns (g, q).
SM80_8x4 = Layout(((4, 8), 1), ((8, 1), 0))
# (T32,V2) -> (m,n) of an 8x8 tile: lane (q,g) owns row g, columns 2q, 2q+1.
SM80_8x8_ROW = Layout(((4, 8), 2), ((16, 1), 8))
# (T32,V4) -> (n,k) of an 8x16 tile: lane (q,g) owns row g, columns 4q..4q+3.
SM80_8x16_ROW = Layout(((4, 8), 4), ((32, 1), 8))
# (T32,V4) -> (m,n) of a 16x8 tile: rows g and g+8, columns 2q, 2q+1.
SM80_16x8_ROW = Layout(((4, 8), (2, 2)), ((32, 1), (16, 8)))

# 16x8x16 f16/bf16 A: rows g, g+8 and columns 2q+{0,1}, 8+2q+{0,1}.
A_16x16_F16 = Layout(((4, 8), (2, 2, 2)), ((32, 1), (16, 8, 128)))
B_8x16_F16 = Layout(((4, 8), (2, 2)), ((16, 1), (8, 64)))
A_16x4_TF32 = Layout(((4, 8), 2), ((16, 1), 8))
A_16x8_TF32 = Layout(((4, 8), (2, 2)), ((16, 1), (8, 64)))
B_8x8_TF32 = Layout(((4, 8), 2), ((8, 1), 32))
A_16x32_S8 = Layout(((4, 8), (4, 2, 2)), ((64, 1), (16, 8, 256)))
B_8x32_S8 = Layout(((4, 8), (4, 2)), ((32, 1), (8, 128)))

_PTX_TYPE = {
    "f16": "f16",
    "bf16": "bf16",
    "tf32": "tf32",
    "f32": "f32",
    "f64": "f64",
    "s8": "s8",
    "s32": "s32",
}


def _mma(
    m: int,
    n: int,
    k: int,
    d: str,
    ab: str,
    layouts: tuple[Layout, Layout, Layout],
    regs: tuple[tuple[str, int], tuple[str, int], tuple[str, int]],
) -> MmaAtom:
    """A TN mma.sync atom; regs gives (ptx type, count) of the D(=C), A and B fragments."""
    (d_reg, d_n), (a_reg, a_n), (b_reg, b_n) = regs
    types = f"{_PTX_TYPE[d]}.{_PTX_TYPE[ab]}.{_PTX_TYPE[ab]}.{_PTX_TYPE[d]}"
    # mma.sync takes every fragment as a vector, even of one register: {%r0}.
    vec = {
        name: f"{{${name}}}" if count == 1 else f"${name}"
        for name, count in (("d", d_n), ("a", a_n), ("b", b_n), ("c", d_n))
    }
    text = (
        f"mma.sync.aligned.m{m}n{n}k{k}.row.col.{types} "
        f"{vec['d']}, {vec['a']}, {vec['b']}, {vec['c']};"
    )
    ops = (
        Operand("d", d_reg, d_n),
        Operand("a", a_reg, a_n),
        Operand("b", b_reg, b_n),
        Operand("c", d_reg, d_n),
    )
    abn = ab.upper()
    return MmaAtom(
        name=f"SM80_{m}x{n}x{k}_{d.upper()}{abn}{abn}{d.upper()}_TN",
        family=Family.MMA_SYNC,
        min_target=target("sm_80"),
        shape_mnk=(m, n, k),
        d_type=d,
        a_type=ab,
        b_type=ab,
        c_type=d,
        thr_id=WARP,
        a_layout=layouts[0],
        b_layout=layouts[1],
        c_layout=layouts[2],
        ptx=PtxTemplate(text, ops),
    )


def _half_precision() -> list[MmaAtom]:
    rows = []
    for ab, accs in (("f16", ("f16", "f32")), ("bf16", ("f32",))):
        for d in accs:
            # f16 accumulators are packed two to a b32 register.
            acc = ("b32", 2) if d == "f16" else ("f32", 4)
            rows.append(
                _mma(
                    16,
                    8,
                    8,
                    d,
                    ab,
                    (SM80_16x8_ROW, SM80_8x8_ROW, SM80_16x8_ROW),
                    (acc, ("b32", 2), ("b32", 1)),
                )
            )
            rows.append(
                _mma(
                    16,
                    8,
                    16,
                    d,
                    ab,
                    (A_16x16_F16, B_8x16_F16, SM80_16x8_ROW),
                    (acc, ("b32", 4), ("b32", 2)),
                )
            )
    return rows


ATOMS: tuple[MmaAtom, ...] = (
    *_half_precision(),
    _mma(
        16,
        8,
        4,
        "f32",
        "tf32",
        (A_16x4_TF32, SM80_8x4, SM80_16x8_ROW),
        (("f32", 4), ("b32", 2), ("b32", 1)),
    ),
    _mma(
        16,
        8,
        8,
        "f32",
        "tf32",
        (A_16x8_TF32, B_8x8_TF32, SM80_16x8_ROW),
        (("f32", 4), ("b32", 4), ("b32", 2)),
    ),
    _mma(
        16,
        8,
        32,
        "s32",
        "s8",
        (A_16x32_S8, B_8x32_S8, SM80_16x8_ROW),
        (("s32", 4), ("b32", 4), ("b32", 2)),
    ),
    _mma(
        8,
        8,
        4,
        "f64",
        "f64",
        (SM80_8x4, SM80_8x4, SM80_8x8_ROW),
        (("f64", 2), ("f64", 1), ("f64", 1)),
    ),
)
