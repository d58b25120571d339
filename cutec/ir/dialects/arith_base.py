"""Base classes of arith ops that share one custom form."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from cutec.ir.core import Operation, Value
from cutec.ir.traits import Pure
from cutec.ir.types import (
    is_float_like,
    is_integer_like,
)

if TYPE_CHECKING:
    from cutec.ir.parser import Parser, ResultName
    from cutec.ir.printer import Printer


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
