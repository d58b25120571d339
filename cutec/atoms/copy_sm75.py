"""SM75 ``ldmatrix``: a warp loads one, two or four 8x8 matrices of 16-bit elements.

Memory side: each of the first ``8 * num`` lanes supplies the shared address of
one 16-byte matrix row; lane ``l`` addresses row ``l % 8`` of matrix ``l // 8``,
so row ``r`` of matrix ``m`` occupies bits ``[128 * (8m + r), +128)`` of the
block. The other lanes' addresses are ignored: CuTe's SrcLayout gives them
stride 0 (``((8*num, 4/num), 128) : ((128, 0), 1)``).

Register side (the PTX ISA's fragment figure): lane ``l`` receives in register
``m`` the two elements of matrix ``m`` at row ``l // 4``, columns
``2 * (l % 4) + {0, 1}``. With ``.trans`` it receives the elements at rows
``2 * (l % 4) + {0, 1}`` of column ``l // 4`` (the matrix transposed).

CuTe names (arch/copy_sm75.hpp): ``SM75_U32x{1,2,4}_LDSM_N`` and, transposed,
``SM75_U16x{2,4,8}_LDSM_T`` (the count of 16-bit values a lane receives).
"""

from __future__ import annotations

from cutec.atoms.copy_record import REG, SHARED, CopyAtom, Registers, braced
from cutec.atoms.family import Family
from cutec.atoms.ptx_template import Operand, PtxTemplate
from cutec.layout import Layout
from cutec.target import target

LDSM_NUMS = (1, 2, 4)

# (src-thr, src-val) -> bit: the row addresses, lanes past 8*num broadcast.
MATRIX_ROWS_LAYOUT: dict[int, Layout] = {
    1: Layout(((8, 4), 128), ((128, 0), 1)),
    2: Layout(((16, 2), 128), ((128, 0), 1)),
    4: Layout((32, 128), (128, 1)),
}

# (thr, val) -> bit of the register fragments, not transposed: lane l, bit k of
# register m is bit 32*l + k + 1024*m (rows of 128 bits hold 4 lanes' 32 bits).
FRAGMENT_N_LAYOUT: dict[int, Layout] = {
    1: Layout((32, 32), (32, 1)),
    2: Layout((32, (32, 2)), (32, (1, 1024))),
    4: Layout((32, (32, 4)), (32, (1, 1024))),
}

# Transposed: lane l = l0 + 4*l1, value (k, h, m) -> bit 256*l0 + 16*l1 + k + 128*h + 1024*m:
# element h of register m is row 2*l0 + h, column l1 of matrix m.
FRAGMENT_T_LAYOUT: dict[int, Layout] = {
    1: Layout(((4, 8), (16, 2)), ((256, 16), (1, 128))),
    2: Layout(((4, 8), (16, 2, 2)), ((256, 16), (1, 128, 1024))),
    4: Layout(((4, 8), (16, 2, 4)), ((256, 16), (1, 128, 1024))),
}


def matrix_name(op: str, num: int, trans: bool) -> str:
    """CuTe's name: ``SM75_U32x{num}_LDSM_N`` or ``SM75_U16x{2 num}_LDSM_T`` (op LDSM/STSM)."""
    arch = "SM75" if op == "LDSM" else "SM90"
    return f"{arch}_U16x{2 * num}_{op}_T" if trans else f"{arch}_U32x{num}_{op}_N"


def ldmatrix_template(num: int, trans: bool) -> PtxTemplate:
    """``ldmatrix.sync.aligned.m8n8.x<num>{.trans}.shared.b16 {d...}, [src];``"""
    t = ".trans" if trans else ""
    text = f"ldmatrix.sync.aligned.m8n8.x{num}{t}.shared.b16 {braced('d', num)}, $src;"
    return PtxTemplate(text, (Operand("d", "b32", num), Operand("src", "b32", kind="addr")))


def _ldmatrix(num: int, trans: bool) -> CopyAtom:
    frag = (FRAGMENT_T_LAYOUT if trans else FRAGMENT_N_LAYOUT)[num]
    return CopyAtom(
        name=matrix_name("LDSM", num, trans),
        family=Family.LDMATRIX,
        min_target=target("sm_75"),
        min_ptx=(6, 5),
        src_spaces=(SHARED,),
        dst_spaces=(REG,),
        thr_id=Layout(32),
        src_layout=MATRIX_ROWS_LAYOUT[num],
        dst_layout=frag,
        ref_layout=frag,
        src_regs=Registers(128, 1),
        dst_regs=Registers(32, num),
        templates=(("copy", ldmatrix_template(num, trans)),),
        transpose=trans,
    )


ATOMS: list[CopyAtom] = [_ldmatrix(num, trans) for trans in (False, True) for num in LDSM_NUMS]
