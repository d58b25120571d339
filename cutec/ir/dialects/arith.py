"""The arith dialect: constants, integer and float arithmetic, comparisons,
select and casts — MLIR's arith, the subset kernels need.

Integers are signless: an op says how it reads the bits (``divsi`` signed,
``divui`` unsigned). Constants hold the signed value (i1: 0 or 1); folding
wraps to the type's width, as the hardware does. Every op is pure.

Folding protocol: ``fold(constants)`` gets one `Attribute` or None per
operand and returns one result per op result, each an `Attribute` (the
canonicalizer materialises it as a constant) or an existing `Value`; or None
when it cannot fold.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import ClassVar

from cutec.ir.attributes import Attribute, FloatAttr, IntegerAttr, StringAttr
from cutec.ir.core import Operation, Value
from cutec.ir.dialect import Dialect
from cutec.ir.dialects.arith_base import FLOAT_LIKE, INT_LIKE
from cutec.ir.dialects.arith_cast import (
    CAST_OPS,
    BitcastOp,
    ExtFOp,
    ExtSIOp,
    ExtUIOp,
    FPToSIOp,
    FPToUIOp,
    IndexCastOp,
    IndexCastUIOp,
    SIToFPOp,
    TruncFOp,
    TruncIOp,
    UIToFPOp,
)
from cutec.ir.dialects.arith_float import (
    FLOAT_OPS,
    AddFOp,
    DivFOp,
    FmaOp,
    MaximumFOp,
    MinimumFOp,
    MulFOp,
    NegFOp,
    SubFOp,
)
from cutec.ir.dialects.arith_fold import (
    FoldResult,
    int_value,
    round_float,
    to_signed,
    to_unsigned,
)
from cutec.ir.dialects.arith_int import (
    INT_OPS,
    AddIOp,
    AndIOp,
    CeilDivSIOp,
    DivSIOp,
    DivUIOp,
    FloorDivSIOp,
    MaxSIOp,
    MaxUIOp,
    MinSIOp,
    MinUIOp,
    MulIOp,
    OrIOp,
    RemSIOp,
    RemUIOp,
    ShLIOp,
    ShRSIOp,
    ShRUIOp,
    SubIOp,
    XOrIOp,
)
from cutec.ir.opdef import AnyType, FieldValues, attr_def, operand_def, result_def
from cutec.ir.traits import ConstantLike, Pure
from cutec.ir.types import (
    FloatType,
    IndexType,
    IntegerType,
    Type,
    VectorType,
    bit_width,
)


class ConstantOp(Operation):
    """A compile-time constant: ``%c = arith.constant 42 : i32``, ``arith.constant 1.5 : f32``."""

    name = "arith.constant"
    traits = (Pure(), ConstantLike())
    value = attr_def((IntegerAttr, FloatAttr))
    result = result_def(AnyType)
    assembly_format = "attr-dict $value"

    def __init__(self, value: Attribute) -> None:
        super().__init__(result_types=[_attr_type(value)], attributes={"value": value})

    @classmethod
    def infer_result_types(cls, fields: FieldValues) -> Sequence[Type]:
        return [fields.value.type]

    def verify_(self) -> None:
        value = self.value
        if value.type != self.result.type:
            raise self.error(f"value of type {value.type} but result of type {self.result.type}")
        t = value.type
        if isinstance(t, IntegerType | IndexType) and int_value(value.value, t) != value.value:
            raise self.error(f"value {value.value} does not fit in {t}")
        # A finite literal beyond the type's largest finite value (1.0e39 : f32) is a
        # mistake, as in MLIR; `inf` is written as such.
        finite = isinstance(t, FloatType) and math.isfinite(value.value)
        if finite and math.isinf(round_float(value.value, t)):
            raise self.error(f"value {value.value} is out of range for {t}")

    def fold(self, constants: Sequence[Attribute | None]) -> FoldResult:
        return [self.value]


def _attr_type(value: Attribute) -> Type:
    if isinstance(value, IntegerAttr | FloatAttr):
        return value.type
    raise TypeError(f"arith.constant cannot hold {value}")


def constant(value: int | float, type: Type) -> ConstantOp:
    """An `arith.constant` of `value` with `type` (int or float type)."""
    if isinstance(type, FloatType):
        return ConstantOp(FloatAttr(round_float(float(value), type), type))
    return ConstantOp(IntegerAttr(int_value(int(value), type), type))


# --------------------------------------------------------------------------- binary ops


INT_PREDICATES: dict[str, Callable[[int, int], bool]] = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "slt": lambda a, b: a < b,
    "sle": lambda a, b: a <= b,
    "sgt": lambda a, b: a > b,
    "sge": lambda a, b: a >= b,
    "ult": lambda a, b: a < b,
    "ule": lambda a, b: a <= b,
    "ugt": lambda a, b: a > b,
    "uge": lambda a, b: a >= b,
}


def _ordered(f: Callable[[float, float], bool]) -> Callable[[float, float], bool]:
    return lambda a, b: not (math.isnan(a) or math.isnan(b)) and f(a, b)


def _unordered(f: Callable[[float, float], bool]) -> Callable[[float, float], bool]:
    return lambda a, b: math.isnan(a) or math.isnan(b) or f(a, b)


FLOAT_PREDICATES: dict[str, Callable[[float, float], bool]] = {
    "oeq": _ordered(lambda a, b: a == b),
    "one": _ordered(lambda a, b: a != b),
    "olt": _ordered(lambda a, b: a < b),
    "ole": _ordered(lambda a, b: a <= b),
    "ogt": _ordered(lambda a, b: a > b),
    "oge": _ordered(lambda a, b: a >= b),
    "ord": _ordered(lambda a, b: True),
    "ueq": _unordered(lambda a, b: a == b),
    "une": _unordered(lambda a, b: a != b),
    "ult": _unordered(lambda a, b: a < b),
    "ule": _unordered(lambda a, b: a <= b),
    "ugt": _unordered(lambda a, b: a > b),
    "uge": _unordered(lambda a, b: a >= b),
    "uno": _unordered(lambda a, b: False),
}


def _bool_type_like(t: Type) -> Type:
    i1 = IntegerType(1)
    return VectorType(t.shape, i1) if isinstance(t, VectorType) else i1


class _CmpOp(Operation):
    """``%p = arith.cmpX <pred>, %a, %b : t`` with an i1 (or vector of i1) result."""

    traits = (Pure(),)
    predicates: ClassVar[dict]
    predicate = attr_def(StringAttr)
    lhs = operand_def(AnyType)
    rhs = operand_def(AnyType)
    result = result_def(AnyType)
    assembly_format = "$predicate `,` $lhs `,` $rhs attr-dict `:` type($lhs)"

    def __init__(self, predicate: str, lhs: Value, rhs: Value) -> None:
        super().__init__(
            operands=[lhs, rhs],
            result_types=[_bool_type_like(lhs.type)],
            attributes={"predicate": StringAttr(predicate)},
        )

    @classmethod
    def infer_result_types(cls, fields: FieldValues) -> Sequence[Type]:
        return [_bool_type_like(fields.lhs.type)]

    def verify_(self) -> None:
        a, b = self.lhs.type, self.rhs.type
        if a != b:
            raise self.error(f"compares {a} with {b}")
        if self.result.type != _bool_type_like(a):
            raise self.error(f"result must be {_bool_type_like(a)}")


class CmpIOp(_CmpOp):
    """Integer comparison: ``%p = arith.cmpi slt, %a, %b : i32``."""

    name = "arith.cmpi"
    predicates = INT_PREDICATES
    predicate = attr_def(StringAttr, one_of=INT_PREDICATES)
    lhs = operand_def(INT_LIKE)
    rhs = operand_def(INT_LIKE)

    def fold(self, constants: Sequence[Attribute | None]) -> FoldResult:
        a, b = constants
        t = self.lhs.type
        pred = self.predicate.value
        if self.lhs_is_rhs() and not isinstance(t, VectorType):
            return [IntegerAttr(int(pred in ("eq", "sle", "sge", "ule", "uge")), IntegerType(1))]
        if isinstance(a, IntegerAttr) and isinstance(b, IntegerAttr):
            conv = to_unsigned if pred.startswith("u") else to_signed
            w = bit_width(t)
            result = self.predicates[pred](conv(a.value, w), conv(b.value, w))
            return [IntegerAttr(int(result), IntegerType(1))]
        return None

    def lhs_is_rhs(self) -> bool:
        return self.lhs is self.rhs


class CmpFOp(_CmpOp):
    """Float comparison, ordered (o*) or unordered (u*): ``arith.cmpf olt, %a, %b : f32``."""

    name = "arith.cmpf"
    predicates = FLOAT_PREDICATES
    predicate = attr_def(StringAttr, one_of=FLOAT_PREDICATES)
    lhs = operand_def(FLOAT_LIKE)
    rhs = operand_def(FLOAT_LIKE)

    def fold(self, constants: Sequence[Attribute | None]) -> FoldResult:
        a, b = constants
        if isinstance(a, FloatAttr) and isinstance(b, FloatAttr):
            result = self.predicates[self.predicate.value](a.value, b.value)
            return [IntegerAttr(int(result), IntegerType(1))]
        return None


class SelectOp(Operation):
    """``%r = arith.select %cond, %a, %b : t`` — %a where %cond is true, else %b."""

    name = "arith.select"
    traits = (Pure(),)
    cond = operand_def(AnyType)
    true_value = operand_def(AnyType)
    false_value = operand_def(AnyType)
    result = result_def(AnyType)
    assembly_format = "$cond `,` $true_value `,` $false_value attr-dict `:` type($result)"

    def __init__(self, cond: Value, true_value: Value, false_value: Value) -> None:
        super().__init__(operands=[cond, true_value, false_value], result_types=[true_value.type])

    def verify_(self) -> None:
        c, a, b = self.cond.type, self.true_value.type, self.false_value.type
        if a != b or self.result.type != a:
            raise self.error(f"selects between {a} and {b} into {self.result.type}")
        if c != IntegerType(1) and c != _bool_type_like(a):
            raise self.error(f"condition must be i1, got {c}")

    def fold(self, constants: Sequence[Attribute | None]) -> FoldResult:
        cond = constants[0]
        if self.true_value is self.false_value:
            return [self.true_value]
        if isinstance(cond, IntegerAttr):
            return [self.true_value if cond.value else self.false_value]
        return None


ARITH_OPS: tuple[type[Operation], ...] = (
    ConstantOp,
    *INT_OPS,
    *FLOAT_OPS,
    CmpIOp,
    CmpFOp,
    SelectOp,
)

DIALECT = Dialect("arith", ops=ARITH_OPS + CAST_OPS)

# The integer ops' canonicalization patterns make constants, so they attach last.
from cutec.ir.dialects import arith_patterns  # noqa: E402

arith_patterns.attach()

__all__ = [
    "ARITH_OPS",
    "DIALECT",
    "FLOAT_PREDICATES",
    "INT_PREDICATES",
    "AddFOp",
    "AddIOp",
    "AndIOp",
    "BitcastOp",
    "CeilDivSIOp",
    "CmpFOp",
    "CmpIOp",
    "ConstantOp",
    "DivFOp",
    "DivSIOp",
    "DivUIOp",
    "ExtFOp",
    "ExtSIOp",
    "ExtUIOp",
    "FPToSIOp",
    "FPToUIOp",
    "FloorDivSIOp",
    "FmaOp",
    "IndexCastOp",
    "IndexCastUIOp",
    "MaxSIOp",
    "MaxUIOp",
    "MaximumFOp",
    "MinSIOp",
    "MinUIOp",
    "MinimumFOp",
    "MulFOp",
    "MulIOp",
    "NegFOp",
    "OrIOp",
    "RemSIOp",
    "RemUIOp",
    "SIToFPOp",
    "SelectOp",
    "ShLIOp",
    "ShRSIOp",
    "ShRUIOp",
    "SubFOp",
    "SubIOp",
    "TruncFOp",
    "TruncIOp",
    "UIToFPOp",
    "XOrIOp",
    "constant",
]
