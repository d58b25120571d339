"""Integer binary ops of the arith dialect (signless; each op says how it reads the bits)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from cutec.ir.attributes import Attribute, IntegerAttr
from cutec.ir.core import Operation
from cutec.ir.dialects.arith_base import INT_LIKE, PURE_SAME_TYPE, BinaryOp
from cutec.ir.dialects.arith_fold import (
    FoldResult,
    int_value,
    to_signed,
    to_unsigned,
)
from cutec.ir.opdef import operand_def, result_def
from cutec.ir.traits import Commutative
from cutec.ir.types import VectorType, bit_width


class IntBinaryOp(BinaryOp):
    """An integer binary op folded by `compute` on signed or unsigned values."""

    lhs = operand_def(INT_LIKE)
    rhs = operand_def(INT_LIKE)
    result = result_def(INT_LIKE)
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
    traits = (*PURE_SAME_TYPE, Commutative())
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
    traits = (*PURE_SAME_TYPE, Commutative())
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
    traits = (*PURE_SAME_TYPE, Commutative())
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
    traits = (*PURE_SAME_TYPE, Commutative())
    right_identity = 0
    compute = staticmethod(lambda a, b: a | b)

    def fold_special(self, lhs: Attribute | None, rhs: Attribute | None) -> FoldResult:
        return [self.lhs] if self.lhs is self.rhs else None


class XOrIOp(IntBinaryOp):
    """Bitwise exclusive or: ``%c = arith.xori %a, %b : i32``."""

    name = "arith.xori"
    traits = (*PURE_SAME_TYPE, Commutative())
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
    traits = (*PURE_SAME_TYPE, Commutative())
    compute = staticmethod(max)


class MinSIOp(IntBinaryOp):
    """Signed minimum: ``%c = arith.minsi %a, %b : i32``."""

    name = "arith.minsi"
    traits = (*PURE_SAME_TYPE, Commutative())
    compute = staticmethod(min)


class MaxUIOp(IntBinaryOp):
    """Unsigned maximum: ``%c = arith.maxui %a, %b : i32``."""

    name = "arith.maxui"
    traits = (*PURE_SAME_TYPE, Commutative())
    unsigned = True
    compute = staticmethod(max)


class MinUIOp(IntBinaryOp):
    """Unsigned minimum: ``%c = arith.minui %a, %b : i32``."""

    name = "arith.minui"
    traits = (*PURE_SAME_TYPE, Commutative())
    unsigned = True
    compute = staticmethod(min)


INT_OPS: tuple[type[Operation], ...] = (
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
)
