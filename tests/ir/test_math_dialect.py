"""The math dialect's folders: the exact function in double precision, rounded to the
type once, with IEEE's special values."""

from __future__ import annotations

import math
import struct

import pytest

from cutec.ir.attributes import FloatAttr
from cutec.ir.dialects import math as m
from cutec.ir.parser import parse_module
from cutec.ir.types import FloatType

F32, F64, F16 = FloatType("f32"), FloatType("f64"), FloatType("f16")


def _op(cls: type[m.UnaryMathOp], t: FloatType) -> m.UnaryMathOp:
    text = f"func @f(%x: {t}) -> {t} {{\n  %y = {cls.name} %x : {t}\n  return %y : {t}\n}}"
    module = parse_module(text, "t.mlir")
    op = next(o for o in module.walk() if isinstance(o, cls))
    return op


def _fold(cls: type[m.UnaryMathOp], x: float, t: FloatType = F32) -> float:
    folded = _op(cls, t).fold([FloatAttr(x, t)])
    assert folded is not None
    (attr,) = folded
    assert isinstance(attr, FloatAttr) and attr.type == t
    return attr.value


def _f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


@pytest.mark.parametrize(
    ("cls", "x", "expected"),
    [
        (m.ExpOp, 1.0, _f32(math.e)),
        (m.Exp2Op, 3.0, 8.0),
        (m.Exp2Op, -1.5, _f32(2**-1.5)),
        (m.LogOp, 10.0, _f32(math.log(10.0))),
        (m.Log2Op, 1024.0, 10.0),
        (m.SqrtOp, 2.0, _f32(math.sqrt(2.0))),
        (m.RsqrtOp, 4.0, 0.5),
        (m.RsqrtOp, 3.0, _f32(1 / math.sqrt(3.0))),
    ],
)
def test_folds_to_the_function_rounded_to_f32(
    cls: type[m.UnaryMathOp], x: float, expected: float
) -> None:
    assert _fold(cls, x) == expected


@pytest.mark.parametrize(
    ("cls", "x", "expected"),
    [
        (m.ExpOp, 1000.0, math.inf),  # overflows the type (and Python's double)
        (m.ExpOp, 100.0, math.inf),  # inside double, outside f32
        (m.ExpOp, -math.inf, 0.0),
        (m.Exp2Op, 200.0, math.inf),
        (m.LogOp, 0.0, -math.inf),
        (m.LogOp, -0.0, -math.inf),
        (m.Log2Op, math.inf, math.inf),
        (m.SqrtOp, math.inf, math.inf),
        (m.RsqrtOp, 0.0, math.inf),
        (m.RsqrtOp, -0.0, -math.inf),
        (m.RsqrtOp, math.inf, 0.0),
    ],
)
def test_ieee_special_values(cls: type[m.UnaryMathOp], x: float, expected: float) -> None:
    assert _fold(cls, x) == expected


@pytest.mark.parametrize("cls", [m.LogOp, m.Log2Op, m.SqrtOp, m.RsqrtOp])
def test_out_of_domain_is_nan(cls: type[m.UnaryMathOp]) -> None:
    assert math.isnan(_fold(cls, -1.0))
    assert math.isnan(_fold(cls, math.nan))


def test_sqrt_keeps_the_sign_of_zero() -> None:
    assert math.copysign(1.0, _fold(m.SqrtOp, -0.0)) == -1.0


def test_f64_is_not_rounded_and_f16_is() -> None:
    assert _fold(m.SqrtOp, 2.0, F64) == math.sqrt(2.0)
    assert _fold(m.ExpOp, 1.0, F16) == 2.71875  # e to f16's 11 bits
    assert _fold(m.ExpOp, 12.0, F16) == math.inf  # e^12 > 65504


def test_no_fold_without_a_constant() -> None:
    assert _op(m.ExpOp, F32).fold([None]) is None
