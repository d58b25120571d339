"""The math dialect: transcendental functions of one float, ``%y = math.exp %x : f32``.

One op per function — ``math.exp``, ``math.exp2``, ``math.log``, ``math.log2``,
``math.sqrt``, ``math.rsqrt`` — pure, one float operand and a result of its type.
Each folds a constant in double precision and rounds to the type (`round_float`),
with IEEE's special values: ``log(0) = -inf``, ``log(x < 0) = NaN``,
``sqrt(-0) = -0``, ``sqrt(x < 0) = NaN``, ``rsqrt(±0) = ±inf``, ``exp`` overflowing
to ``+inf``. The reference interpreter (cutec/cpu/reference.py) evaluates the ops
by these folders, so its values are the exact function rounded once to the type;
the PTX of the approximate forms (docs/language.md, *Fragment arithmetic*) differs
from them within its stated bounds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import ClassVar

from cutec.ir.attributes import Attribute, FloatAttr
from cutec.ir.core import Operation, Value
from cutec.ir.dialect import Dialect
from cutec.ir.dialects.arith_base import FLOAT_LIKE, PURE_SAME_TYPE
from cutec.ir.dialects.arith_fold import FoldResult, round_float
from cutec.ir.opdef import operand_def, result_def
from cutec.ir.types import FloatType


def _exp(x: float) -> float:
    if math.isnan(x):
        return x
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def _exp2(x: float) -> float:
    if math.isnan(x):
        return x
    try:
        return math.pow(2.0, x)
    except OverflowError:
        return math.inf


def _logarithm(fn: Callable[[float], float]) -> Callable[[float], float]:
    def compute(x: float) -> float:
        if math.isnan(x) or x < 0.0:
            return math.nan
        if x == 0.0:  # either sign
            return -math.inf
        if math.isinf(x):
            return math.inf
        return fn(x)

    return compute


def _sqrt(x: float) -> float:
    if math.isnan(x) or x < 0.0:
        return math.nan
    return math.sqrt(x)  # sqrt(-0.0) is -0.0, sqrt(inf) inf


def _rsqrt(x: float) -> float:
    if math.isnan(x) or x < 0.0:
        return math.nan
    if x == 0.0:
        return math.copysign(math.inf, x)
    if math.isinf(x):
        return 0.0
    return 1.0 / math.sqrt(x)


class UnaryMathOp(Operation):
    """``%y = math.<fn> %x : t``: one float operand, a result of its type."""

    traits = PURE_SAME_TYPE
    input = operand_def(FLOAT_LIKE)
    result = result_def(FLOAT_LIKE)
    assembly_format = "$input attr-dict `:` type($result)"
    compute: ClassVar[Callable[[float], float]]

    def __init__(self, value: Value) -> None:
        super().__init__(operands=[value], result_types=[value.type])

    def fold(self, constants: Sequence[Attribute | None]) -> FoldResult:
        (a,) = constants
        t = self.result.type
        if isinstance(a, FloatAttr) and isinstance(t, FloatType):
            return [FloatAttr(round_float(type(self).compute(a.value), t), t)]
        return None


class ExpOp(UnaryMathOp):
    """e to the x: ``%y = math.exp %x : f32``."""

    name = "math.exp"
    compute = staticmethod(_exp)


class Exp2Op(UnaryMathOp):
    """2 to the x: ``%y = math.exp2 %x : f32``."""

    name = "math.exp2"
    compute = staticmethod(_exp2)


class LogOp(UnaryMathOp):
    """The natural logarithm: ``%y = math.log %x : f32``."""

    name = "math.log"
    compute = staticmethod(_logarithm(math.log))


class Log2Op(UnaryMathOp):
    """The base-2 logarithm: ``%y = math.log2 %x : f32``."""

    name = "math.log2"
    compute = staticmethod(_logarithm(math.log2))


class SqrtOp(UnaryMathOp):
    """The square root: ``%y = math.sqrt %x : f32``."""

    name = "math.sqrt"
    compute = staticmethod(_sqrt)


class RsqrtOp(UnaryMathOp):
    """The reciprocal square root 1/sqrt(x): ``%y = math.rsqrt %x : f32``."""

    name = "math.rsqrt"
    compute = staticmethod(_rsqrt)


MATH_OPS: tuple[type[Operation], ...] = (ExpOp, Exp2Op, LogOp, Log2Op, SqrtOp, RsqrtOp)

DIALECT = Dialect("math", ops=MATH_OPS)

__all__ = [
    "DIALECT",
    "MATH_OPS",
    "Exp2Op",
    "ExpOp",
    "Log2Op",
    "LogOp",
    "RsqrtOp",
    "SqrtOp",
    "UnaryMathOp",
]
