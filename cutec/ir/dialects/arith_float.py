"""Float ops of the arith dialect, folded in double precision and rounded to the type."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import ClassVar

from cutec.ir.attributes import Attribute, FloatAttr
from cutec.ir.core import Operation, Value
from cutec.ir.dialects.arith_base import FLOAT_LIKE, PURE_SAME_TYPE, BinaryOp
from cutec.ir.dialects.arith_fold import (
    FoldResult,
    round_float,
)
from cutec.ir.opdef import operand_def, result_def
from cutec.ir.traits import Commutative
from cutec.ir.types import FloatType


class FloatBinaryOp(BinaryOp):
    """A float binary op folded in double precision, then rounded to the type."""

    lhs = operand_def(FLOAT_LIKE)
    rhs = operand_def(FLOAT_LIKE)
    result = result_def(FLOAT_LIKE)
    compute: ClassVar[Callable[[float, float], float]]

    def fold(self, constants: Sequence[Attribute | None]) -> FoldResult:
        lhs, rhs = constants
        t = self.result.type
        if isinstance(lhs, FloatAttr) and isinstance(rhs, FloatAttr) and isinstance(t, FloatType):
            return [FloatAttr(round_float(self.compute(lhs.value, rhs.value), t), t)]
        return self.fold_identity(rhs)

    def fold_identity(self, rhs: Attribute | None) -> FoldResult:
        return None


def _is_float(attr: Attribute | None, value: float) -> bool:
    """Bitwise test, so that -0.0 and 0.0 differ."""
    return (
        isinstance(attr, FloatAttr)
        and attr.value == value
        and math.copysign(1.0, attr.value) == math.copysign(1.0, value)
    )


class AddFOp(FloatBinaryOp):
    """Float addition: ``%c = arith.addf %a, %b : f32``."""

    name = "arith.addf"
    traits = (*PURE_SAME_TYPE, Commutative())
    compute = staticmethod(lambda a, b: a + b)

    def fold_identity(self, rhs: Attribute | None) -> FoldResult:
        # x + (-0.0) == x for every x, including -0.0; x + 0.0 is not (−0 + 0 = +0).
        return [self.lhs] if _is_float(rhs, -0.0) else None


class SubFOp(FloatBinaryOp):
    """Float subtraction: ``%c = arith.subf %a, %b : f32``."""

    name = "arith.subf"
    compute = staticmethod(lambda a, b: a - b)

    def fold_identity(self, rhs: Attribute | None) -> FoldResult:
        return [self.lhs] if _is_float(rhs, 0.0) else None


class MulFOp(FloatBinaryOp):
    """Float multiplication: ``%c = arith.mulf %a, %b : f32``."""

    name = "arith.mulf"
    traits = (*PURE_SAME_TYPE, Commutative())
    compute = staticmethod(lambda a, b: a * b)

    def fold_identity(self, rhs: Attribute | None) -> FoldResult:
        return [self.lhs] if _is_float(rhs, 1.0) else None


def _ieee_div(a: float, b: float) -> float:
    if b != 0.0:
        return a / b
    if a == 0.0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


class DivFOp(FloatBinaryOp):
    """Float division (IEEE: x/0 is ±inf): ``%c = arith.divf %a, %b : f32``."""

    name = "arith.divf"
    compute = staticmethod(_ieee_div)

    def fold_identity(self, rhs: Attribute | None) -> FoldResult:
        return [self.lhs] if _is_float(rhs, 1.0) else None


def _maximum(a: float, b: float) -> float:
    if math.isnan(a) or math.isnan(b):
        return math.nan
    if a == b == 0.0:
        return a if math.copysign(1.0, a) > 0 else b
    return max(a, b)


def _minimum(a: float, b: float) -> float:
    if math.isnan(a) or math.isnan(b):
        return math.nan
    if a == b == 0.0:
        return a if math.copysign(1.0, a) < 0 else b
    return min(a, b)


class MaximumFOp(FloatBinaryOp):
    """IEEE maximum, NaN-propagating, +0 > -0: ``%c = arith.maximumf %a, %b : f32``."""

    name = "arith.maximumf"
    traits = (*PURE_SAME_TYPE, Commutative())
    compute = staticmethod(_maximum)


class MinimumFOp(FloatBinaryOp):
    """IEEE minimum, NaN-propagating, -0 < +0: ``%c = arith.minimumf %a, %b : f32``."""

    name = "arith.minimumf"
    traits = (*PURE_SAME_TYPE, Commutative())
    compute = staticmethod(_minimum)


class NegFOp(Operation):
    """Float negation (flips the sign bit): ``%b = arith.negf %a : f32``."""

    name = "arith.negf"
    traits = PURE_SAME_TYPE
    input = operand_def(FLOAT_LIKE)
    result = result_def(FLOAT_LIKE)
    assembly_format = "$input attr-dict `:` type($result)"

    def __init__(self, value: Value) -> None:
        super().__init__(operands=[value], result_types=[value.type])

    def fold(self, constants: Sequence[Attribute | None]) -> FoldResult:
        (a,) = constants
        if isinstance(a, FloatAttr):
            return [FloatAttr(-a.value, a.type)]
        return None


class FmaOp(Operation):
    """Fused multiply-add a*b+c with one rounding: ``%d = arith.fma %a, %b, %c : f32``."""

    name = "arith.fma"
    traits = PURE_SAME_TYPE
    a = operand_def(FLOAT_LIKE)
    b = operand_def(FLOAT_LIKE)
    c = operand_def(FLOAT_LIKE)
    result = result_def(FLOAT_LIKE)
    assembly_format = "$a `,` $b `,` $c attr-dict `:` type($result)"

    def __init__(self, a: Value, b: Value, c: Value) -> None:
        super().__init__(operands=[a, b, c], result_types=[a.type])

    def fold(self, constants: Sequence[Attribute | None]) -> FoldResult:
        values = [c.value for c in constants if isinstance(c, FloatAttr)]
        if len(values) == 3 and isinstance(self.result.type, FloatType):
            a, b, c = values
            exact = math.fma(a, b, c) if hasattr(math, "fma") else a * b + c
            return [FloatAttr(round_float(exact, self.result.type), self.result.type)]
        return None


# --------------------------------------------------------------------------- compare, select


FLOAT_OPS: tuple[type[Operation], ...] = (
    AddFOp,
    SubFOp,
    MulFOp,
    DivFOp,
    MaximumFOp,
    MinimumFOp,
    NegFOp,
    FmaOp,
)
