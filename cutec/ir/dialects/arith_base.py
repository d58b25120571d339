"""Base classes of arith ops that share one custom form."""

from __future__ import annotations

from cutec.ir.core import Operation, Value
from cutec.ir.opdef import AnyType, TypeConstraint, operand_def, result_def
from cutec.ir.traits import Pure, SameOperandsAndResultType
from cutec.ir.types import is_float_like, is_integer_like

INT_LIKE = TypeConstraint(is_integer_like, "integer-like")
FLOAT_LIKE = TypeConstraint(is_float_like, "float-like")

# The traits of a pure op whose operands and result share one type.
PURE_SAME_TYPE = (Pure(), SameOperandsAndResultType())


class BinaryOp(Operation):
    """``%c = arith.<op> %a, %b : t`` — two operands and a result of one type.

    Subclasses narrow `lhs`, `rhs` and `result` to `INT_LIKE` or `FLOAT_LIKE`.
    """

    traits = PURE_SAME_TYPE
    lhs = operand_def(AnyType)
    rhs = operand_def(AnyType)
    result = result_def(AnyType)
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($result)"

    def __init__(self, lhs: Value, rhs: Value) -> None:
        super().__init__(operands=[lhs, rhs], result_types=[lhs.type])
