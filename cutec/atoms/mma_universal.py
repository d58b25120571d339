"""UniversalFMA atoms: one thread computes d = a * b + c (CuTe's UniversalFMA<D,A,B,C>)."""

from __future__ import annotations

from cutec.atoms.family import Family
from cutec.atoms.mma_record import MmaAtom
from cutec.atoms.ptx_template import Operand, PtxTemplate
from cutec.layout import Layout
from cutec.target import target

# One thread, one value: CuTe's Layout<_1> and Layout<Shape<_1,_1>> (static size-1 modes
# take stride 0).
_THR = Layout(1)
_ONE = Layout((1, 1))


def _fma(dtype: str, instr: str, reg: str) -> MmaAtom:
    name = "UniversalFMA_" + dtype.upper() * 4
    ops = tuple(Operand(n, reg) for n in ("d", "a", "b", "c"))
    return MmaAtom(
        name=name,
        family=Family.UNIVERSAL_FMA,
        min_target=target("sm_75"),
        shape_mnk=(1, 1, 1),
        d_type=dtype,
        a_type=dtype,
        b_type=dtype,
        c_type=dtype,
        thr_id=_THR,
        a_layout=_ONE,
        b_layout=_ONE,
        c_layout=_ONE,
        ptx=PtxTemplate(f"{instr} $d, $a, $b, $c;", ops),
    )


ATOMS: tuple[MmaAtom, ...] = (
    _fma("f32", "fma.rn.f32", "f32"),
    _fma("f64", "fma.rn.f64", "f64"),
    _fma("f16", "fma.rn.f16", "b16"),
    # Integer multiply-add keeps the low 32 bits, as C++'s int a*b+c does.
    _fma("s32", "mad.lo.s32", "s32"),
)
