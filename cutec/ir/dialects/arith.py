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
from cutec.ir.dialects.arith_cast import CAST_OPS
from cutec.ir.dialects.arith_fold import (
    FoldResult,
    int_value,
    round_float,
    to_signed,
    to_unsigned,
)
from cutec.ir.traits import Commutative, ConstantLike, Pure
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


class SameTypeOp(Operation):
    """Custom form ``%r = arith.<op> %a, %b, ... : t`` — operands and result of one type."""

    num_results = 1

    def print_custom(self, p: Printer) -> None:
        p.print(self.name, " ")
        p.print_operands(self.operands)
        p.print(" : ", self.result.type)

    @classmethod
    def parse_custom(cls, parser: Parser, results: list[ResultName]) -> Operation:
        operands = parser.parse_comma_list(parser.parse_operand)
        loc = parser.tok.loc
        t = parser.parse_colon_type()
        parser.check_types(operands, [t] * len(operands), loc)
        return cls.create(operands=operands, result_types=[t])


class BinaryOp(SameTypeOp):
    """``%c = arith.<op> %a, %b : t`` — two operands and a result of one type."""

    traits: ClassVar = (Pure(),)
    num_operands = 2
    # What the operands must be: "int" or "float".
    operand_kind: ClassVar[str]

    def __init__(self, lhs: Value, rhs: Value) -> None:
        super().__init__(operands=[lhs, rhs], result_types=[lhs.type])

    @property
    def lhs(self) -> Value:
        return self.operands[0]

    @property
    def rhs(self) -> Value:
        return self.operands[1]

    def verify_(self) -> None:
        t = self.result.type
        if self.operand_types != (t, t):
            raise self.error(
                f"operands ({', '.join(map(str, self.operand_types))}) and result {t} "
                "must have one type"
            )
        ok = is_integer_like(t) if self.operand_kind == "int" else is_float_like(t)
        if not ok:
            raise self.error(f"expects {self.operand_kind} operands, got {t}")


class IntBinaryOp(BinaryOp):
    """An integer binary op folded by `compute` on signed or unsigned values."""

    operand_kind = "int"
    unsigned: ClassVar[bool] = False
    # rhs value that makes the op return its lhs (x + 0, x * 1, x << 0 ...).
    right_identity: ClassVar[int | None] = None

    @staticmethod
    def compute(a: int, b: int) -> int | None:
        raise NotImplementedError

    def fold(self, constants: Sequence[Attribute | None]) -> FoldResult:
        t = self.result.type
        lhs, rhs = constants
        if isinstance(t, VectorType):
            return None
        if isinstance(lhs, IntegerAttr) and isinstance(rhs, IntegerAttr):
            width = bit_width(t)
            conv = to_unsigned if self.unsigned else to_signed
            value = self.compute(conv(lhs.value, width), conv(rhs.value, width))
            if value is None:
                return None
            return [IntegerAttr(int_value(value, t), t)]
        if isinstance(rhs, IntegerAttr) and rhs.value == self.right_identity:
            return [self.lhs]
        return self.fold_special(lhs, rhs)

    def fold_special(self, lhs: Attribute | None, rhs: Attribute | None) -> FoldResult:
        """Folds with one constant operand beyond the right identity."""
        return None


def _div_trunc(a: int, b: int) -> int | None:
    """C-style division (rounds toward zero); None for division by zero."""
    if b == 0:
        return None
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _rem_trunc(a: int, b: int) -> int | None:
    q = _div_trunc(a, b)
    return None if q is None else a - q * b


class AddIOp(IntBinaryOp):
    """Wrapping integer addition: ``%c = arith.addi %a, %b : i32``."""

    name = "arith.addi"
    traits = (Pure(), Commutative())
    right_identity = 0
    compute = staticmethod(lambda a, b: a + b)


class SubIOp(IntBinaryOp):
    """Wrapping integer subtraction: ``%c = arith.subi %a, %b : i32``."""

    name = "arith.subi"
    right_identity = 0
    compute = staticmethod(lambda a, b: a - b)

    def fold(self, constants: Sequence[Attribute | None]) -> FoldResult:
        if self.lhs is self.rhs and not isinstance(self.result.type, VectorType):
            return [IntegerAttr(0, self.result.type)]
        return super().fold(constants)


class MulIOp(IntBinaryOp):
    """Wrapping integer multiplication: ``%c = arith.muli %a, %b : i32``."""

    name = "arith.muli"
    traits = (Pure(), Commutative())
    right_identity = 1
    compute = staticmethod(lambda a, b: a * b)

    def fold_special(self, lhs: Attribute | None, rhs: Attribute | None) -> FoldResult:
        if isinstance(rhs, IntegerAttr) and rhs.value == 0:
            return [rhs]
        return None


class DivSIOp(IntBinaryOp):
    """Signed division rounding toward zero: ``%c = arith.divsi %a, %b : i32``."""

    name = "arith.divsi"
    right_identity = 1
    compute = staticmethod(_div_trunc)


class DivUIOp(IntBinaryOp):
    """Unsigned division: ``%c = arith.divui %a, %b : i32``."""

    name = "arith.divui"
    unsigned = True
    right_identity = 1
    compute = staticmethod(lambda a, b: a // b if b else None)


class RemSIOp(IntBinaryOp):
    """Signed remainder (sign of the dividend): ``%c = arith.remsi %a, %b : i32``."""

    name = "arith.remsi"
    compute = staticmethod(_rem_trunc)


class RemUIOp(IntBinaryOp):
    """Unsigned remainder: ``%c = arith.remui %a, %b : i32``."""

    name = "arith.remui"
    unsigned = True
    compute = staticmethod(lambda a, b: a % b if b else None)


class FloorDivSIOp(IntBinaryOp):
    """Signed division rounding toward -inf: ``%c = arith.floordivsi %a, %b : index``."""

    name = "arith.floordivsi"
    right_identity = 1
    compute = staticmethod(lambda a, b: a // b if b else None)


class CeilDivSIOp(IntBinaryOp):
    """Signed division rounding toward +inf: ``%c = arith.ceildivsi %a, %b : index``."""

    name = "arith.ceildivsi"
    right_identity = 1
    compute = staticmethod(lambda a, b: -((-a) // b) if b else None)


class AndIOp(IntBinaryOp):
    """Bitwise and: ``%c = arith.andi %a, %b : i32``."""

    name = "arith.andi"
    traits = (Pure(), Commutative())
    compute = staticmethod(lambda a, b: a & b)

    def fold_special(self, lhs: Attribute | None, rhs: Attribute | None) -> FoldResult:
        if self.lhs is self.rhs:
            return [self.lhs]
        if isinstance(rhs, IntegerAttr) and rhs.value == 0:
            return [rhs]
        return None


class OrIOp(IntBinaryOp):
    """Bitwise or: ``%c = arith.ori %a, %b : i32``."""

    name = "arith.ori"
    traits = (Pure(), Commutative())
    right_identity = 0
    compute = staticmethod(lambda a, b: a | b)

    def fold_special(self, lhs: Attribute | None, rhs: Attribute | None) -> FoldResult:
        return [self.lhs] if self.lhs is self.rhs else None


class XOrIOp(IntBinaryOp):
    """Bitwise exclusive or: ``%c = arith.xori %a, %b : i32``."""

    name = "arith.xori"
    traits = (Pure(), Commutative())
    right_identity = 0
    compute = staticmethod(lambda a, b: a ^ b)


def _shift_ok(b: int, width: int) -> bool:
    return 0 <= b < width


class ShLIOp(IntBinaryOp):
    """Shift left (a shift by >= width is poison and not folded): ``arith.shli``."""

    name = "arith.shli"
    unsigned = True
    right_identity = 0

    def fold(self, constants: Sequence[Attribute | None]) -> FoldResult:
        rhs = constants[1]
        if isinstance(rhs, IntegerAttr) and not _shift_ok(rhs.value, bit_width(self.result.type)):
            return None
        return super().fold(constants)

    compute = staticmethod(lambda a, b: a << b)


class ShRSIOp(ShLIOp):
    """Arithmetic shift right: ``%c = arith.shrsi %a, %b : i32``."""

    name = "arith.shrsi"
    unsigned = False
    compute = staticmethod(lambda a, b: a >> b)


class ShRUIOp(ShLIOp):
    """Logical shift right: ``%c = arith.shrui %a, %b : i32``."""

    name = "arith.shrui"
    unsigned = True
    compute = staticmethod(lambda a, b: a >> b)


class MaxSIOp(IntBinaryOp):
    """Signed maximum: ``%c = arith.maxsi %a, %b : i32``."""

    name = "arith.maxsi"
    traits = (Pure(), Commutative())
    compute = staticmethod(max)


class MinSIOp(IntBinaryOp):
    """Signed minimum: ``%c = arith.minsi %a, %b : i32``."""

    name = "arith.minsi"
    traits = (Pure(), Commutative())
    compute = staticmethod(min)


class MaxUIOp(IntBinaryOp):
    """Unsigned maximum: ``%c = arith.maxui %a, %b : i32``."""

    name = "arith.maxui"
    traits = (Pure(), Commutative())
    unsigned = True
    compute = staticmethod(max)


class MinUIOp(IntBinaryOp):
    """Unsigned minimum: ``%c = arith.minui %a, %b : i32``."""

    name = "arith.minui"
    traits = (Pure(), Commutative())
    unsigned = True
    compute = staticmethod(min)


class FloatBinaryOp(BinaryOp):
    """A float binary op folded in double precision, then rounded to the type."""

    operand_kind = "float"
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
    traits = (Pure(), Commutative())
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
    traits = (Pure(), Commutative())
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
    traits = (Pure(), Commutative())
    compute = staticmethod(_maximum)


class MinimumFOp(FloatBinaryOp):
    """IEEE minimum, NaN-propagating, -0 < +0: ``%c = arith.minimumf %a, %b : f32``."""

    name = "arith.minimumf"
    traits = (Pure(), Commutative())
    compute = staticmethod(_minimum)


class NegFOp(SameTypeOp):
    """Float negation (flips the sign bit): ``%b = arith.negf %a : f32``."""

    name = "arith.negf"
    traits = (Pure(),)
    num_operands = 1

    def __init__(self, value: Value) -> None:
        super().__init__(operands=[value], result_types=[value.type])

    def verify_(self) -> None:
        if self.operand_types[0] != self.result.type or not is_float_like(self.result.type):
            raise self.error("operand and result must be one float type")

    def fold(self, constants: Sequence[Attribute | None]) -> FoldResult:
        (a,) = constants
        if isinstance(a, FloatAttr):
            return [FloatAttr(-a.value, a.type)]
        return None


class FmaOp(SameTypeOp):
    """Fused multiply-add a*b+c with one rounding: ``%d = arith.fma %a, %b, %c : f32``."""

    name = "arith.fma"
    traits = (Pure(),)
    num_operands = 3

    def __init__(self, a: Value, b: Value, c: Value) -> None:
        super().__init__(operands=[a, b, c], result_types=[a.type])

    def verify_(self) -> None:
        t = self.result.type
        if self.operand_types != (t, t, t) or not is_float_like(t):
            raise self.error("operands and result must be one float type")

    def fold(self, constants: Sequence[Attribute | None]) -> FoldResult:
        if all(isinstance(c, FloatAttr) for c in constants) and isinstance(
            self.result.type, FloatType
        ):
            a, b, c = (x.value for x in constants)  # type: ignore[union-attr]
            exact = math.fma(a, b, c) if hasattr(math, "fma") else a * b + c
            return [FloatAttr(round_float(exact, self.result.type), self.result.type)]
        return None


# --------------------------------------------------------------------------- compare, select

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
    AddIOp,
    SubIOp,
    MulIOp,
    DivSIOp,
    DivUIOp,
    RemSIOp,
    RemUIOp,
    FloorDivSIOp,
    CeilDivSIOp,
    AndIOp,
    OrIOp,
    XOrIOp,
    ShLIOp,
    ShRSIOp,
    ShRUIOp,
    MaxSIOp,
    MinSIOp,
    MaxUIOp,
    MinUIOp,
    AddFOp,
    SubFOp,
    MulFOp,
    DivFOp,
    MaximumFOp,
    MinimumFOp,
    NegFOp,
    FmaOp,
    CmpIOp,
    CmpFOp,
    SelectOp,
)

DIALECT = Dialect("arith", ops=ARITH_OPS + CAST_OPS)
