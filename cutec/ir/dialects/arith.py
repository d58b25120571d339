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
from typing import TYPE_CHECKING, ClassVar

from cutec.ir.attributes import Attribute, FloatAttr, IntegerAttr, StringAttr
from cutec.ir.core import Operation, Value
from cutec.ir.dialect import Dialect
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
from cutec.ir.traits import ConstantLike, Pure
from cutec.ir.types import (
    FloatType,
    IntegerType,
    Type,
    VectorType,
    bit_width,
    is_float_like,
    is_integer_like,
)

if TYPE_CHECKING:
    from cutec.ir.parser import Parser, ResultName
    from cutec.ir.printer import Printer


class ConstantOp(Operation):
    """A compile-time constant: ``%c = arith.constant 42 : i32``, ``arith.constant 1.5 : f32``."""

    name = "arith.constant"
    traits = (Pure(), ConstantLike())
    num_operands = 0
    num_results = 1

    def __init__(self, value: Attribute) -> None:
        super().__init__(result_types=[_attr_type(value)], attributes={"value": value})

    @property
    def value(self) -> Attribute:
        return self.attributes["value"]

    def verify_(self) -> None:
        value = self.attributes.get("value")
        if not isinstance(value, IntegerAttr | FloatAttr):
            raise self.error("needs an integer or float 'value' attribute")
        if value.type != self.result.type:
            raise self.error(f"value of type {value.type} but result of type {self.result.type}")
        fits = not isinstance(value.type, IntegerType) or (
            int_value(value.value, value.type) == value.value
        )
        if not fits:
            raise self.error(f"value {value.value} does not fit in {value.type}")

    def fold(self, constants: Sequence[Attribute | None]) -> FoldResult:
        return [self.value]

    def print_custom(self, p: Printer) -> None:
        p.print("arith.constant ", self.value)

    @classmethod
    def parse_custom(cls, parser: Parser, results: list[ResultName]) -> ConstantOp:
        loc = parser.tok.loc
        value = parser.parse_attribute()
        if not isinstance(value, IntegerAttr | FloatAttr):
            raise parser.error("arith.constant takes an integer or float literal", loc)
        return cls.create(result_types=[value.type], attributes={"value": value})


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
    num_operands = 2
    num_results = 1
    predicates: ClassVar[dict]
    operand_kind: ClassVar[str]

    def __init__(self, predicate: str, lhs: Value, rhs: Value) -> None:
        super().__init__(
            operands=[lhs, rhs],
            result_types=[_bool_type_like(lhs.type)],
            attributes={"predicate": StringAttr(predicate)},
        )

    @property
    def predicate(self) -> str:
        attr = self.attributes["predicate"]
        assert isinstance(attr, StringAttr)
        return attr.value

    def verify_(self) -> None:
        attr = self.attributes.get("predicate")
        if not isinstance(attr, StringAttr) or attr.value not in self.predicates:
            raise self.error(f"predicate must be one of {', '.join(self.predicates)}")
        a, b = self.operand_types
        if a != b:
            raise self.error(f"compares {a} with {b}")
        ok = is_integer_like(a) if self.operand_kind == "int" else is_float_like(a)
        if not ok:
            raise self.error(f"expects {self.operand_kind} operands, got {a}")
        if self.result.type != _bool_type_like(a):
            raise self.error(f"result must be {_bool_type_like(a)}")

    def print_custom(self, p: Printer) -> None:
        p.print(self.name, " ", self.predicate, ", ")
        p.print_operands(self.operands)
        p.print(" : ", self.operand_types[0])

    @classmethod
    def parse_custom(cls, parser: Parser, results: list[ResultName]) -> Operation:
        loc = parser.tok.loc
        pred = parser.parse_identifier("a comparison predicate")
        if pred not in cls.predicates:
            raise parser.error(
                f"unknown predicate '{pred}'; expected one of {', '.join(cls.predicates)}", loc
            )
        parser.parse_punct(",")
        operands = parser.parse_comma_list(parser.parse_operand)
        type_loc = parser.tok.loc
        t = parser.parse_colon_type()
        parser.check_types(operands, [t, t], type_loc)
        return cls.create(
            operands=operands,
            result_types=[_bool_type_like(t)],
            attributes={"predicate": StringAttr(pred)},
        )


class CmpIOp(_CmpOp):
    """Integer comparison: ``%p = arith.cmpi slt, %a, %b : i32``."""

    name = "arith.cmpi"
    predicates = INT_PREDICATES
    operand_kind = "int"

    def fold(self, constants: Sequence[Attribute | None]) -> FoldResult:
        a, b = constants
        t = self.operand_types[0]
        if self.lhs_is_rhs() and not isinstance(t, VectorType):
            return [
                IntegerAttr(
                    int(self.predicate in ("eq", "sle", "sge", "ule", "uge")), IntegerType(1)
                )
            ]
        if isinstance(a, IntegerAttr) and isinstance(b, IntegerAttr):
            conv = to_unsigned if self.predicate.startswith("u") else to_signed
            w = bit_width(t)
            result = self.predicates[self.predicate](conv(a.value, w), conv(b.value, w))
            return [IntegerAttr(int(result), IntegerType(1))]
        return None

    def lhs_is_rhs(self) -> bool:
        return self.operands[0] is self.operands[1]


class CmpFOp(_CmpOp):
    """Float comparison, ordered (o*) or unordered (u*): ``arith.cmpf olt, %a, %b : f32``."""

    name = "arith.cmpf"
    predicates = FLOAT_PREDICATES
    operand_kind = "float"

    def fold(self, constants: Sequence[Attribute | None]) -> FoldResult:
        a, b = constants
        if isinstance(a, FloatAttr) and isinstance(b, FloatAttr):
            result = self.predicates[self.predicate](a.value, b.value)
            return [IntegerAttr(int(result), IntegerType(1))]
        return None


class SelectOp(Operation):
    """``%r = arith.select %cond, %a, %b : t`` — %a where %cond is true, else %b."""

    name = "arith.select"
    traits = (Pure(),)
    num_operands = 3
    num_results = 1

    def __init__(self, cond: Value, true_value: Value, false_value: Value) -> None:
        super().__init__(operands=[cond, true_value, false_value], result_types=[true_value.type])

    def verify_(self) -> None:
        c, a, b = self.operand_types
        if a != b or self.result.type != a:
            raise self.error(f"selects between {a} and {b} into {self.result.type}")
        if c != IntegerType(1) and c != _bool_type_like(a):
            raise self.error(f"condition must be i1, got {c}")

    def fold(self, constants: Sequence[Attribute | None]) -> FoldResult:
        cond = constants[0]
        if self.operands[1] is self.operands[2]:
            return [self.operands[1]]
        if isinstance(cond, IntegerAttr):
            return [self.operands[1] if cond.value else self.operands[2]]
        return None

    def print_custom(self, p: Printer) -> None:
        p.print("arith.select ")
        p.print_operands(self.operands)
        p.print(" : ", self.result.type)

    @classmethod
    def parse_custom(cls, parser: Parser, results: list[ResultName]) -> Operation:
        operands = parser.parse_comma_list(parser.parse_operand)
        loc = parser.tok.loc
        t = parser.parse_colon_type()
        if len(operands) != 3:
            raise parser.error("arith.select takes a condition and two values", loc)
        parser.check_types(operands[1:], [t, t], loc)
        return cls.create(operands=operands, result_types=[t])


ARITH_OPS: tuple[type[Operation], ...] = (
    ConstantOp,
    *INT_OPS,
    *FLOAT_OPS,
    CmpIOp,
    CmpFOp,
    SelectOp,
)

DIALECT = Dialect("arith", ops=ARITH_OPS + CAST_OPS)

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
