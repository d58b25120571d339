"""The shared custom form and helpers of the cute dialect's ops.

Every cute op prints as

    %r = cute.<op> %a, %i, %j {static parameters} : <types of the non-index operands> -> <result>

Index operands (run-time coordinates, thread indices, dynamic leaves) are not
repeated in the type list: they are always ``index``. An op without a result
drops ``-> result``; an op without non-index operands prints only its result type.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cutec.ir.attributes import Attribute
from cutec.ir.core import Operation, Value
from cutec.ir.dialects.cute_types import DYN, TensorType
from cutec.ir.types import IndexType, Type
from cutec.layout.inttuple import leaves

if TYPE_CHECKING:
    from cutec.ir.parser import Parser, ResultName
    from cutec.ir.printer import Printer


def is_index(value: Value) -> bool:
    return isinstance(value.type, IndexType)


class CuteOp(Operation):
    """Base of the cute ops: the custom form above."""

    def print_custom(self, p: Printer) -> None:
        p.print(self.name)
        if self.operands:
            p.print(" ")
            p.print_operands(self.operands)
        p.print_attr_dict(self.attributes)
        typed = [v.type for v in self.operands if not is_index(v)]
        if typed or self.results:
            p.print(" : ")
        p.print_types(typed)
        if self.results:
            p.print(" -> " if typed else "", self.results[0].type)

    @classmethod
    def parse_custom(cls, parser: Parser, results: list[ResultName]) -> Operation:
        operands = parser.parse_operand_list()
        attrs = parser.parse_optional_attr_dict()
        typed = [v for v in operands if not is_index(v)]
        has_result = cls.num_results != 0
        result_types: list[Type] = []
        if typed or has_result:
            loc = parser.tok.loc
            parser.parse_punct(":")
            if typed:
                parser.check_types(typed, parser.parse_type_list(), loc)
                if has_result:
                    parser.parse_punct("->")
                    result_types = [parser.parse_type()]
            else:
                result_types = [parser.parse_type()]
        return cls.create(operands=operands, result_types=result_types, attributes=attrs)

    # -- helpers for verify_ ------------------------------------------------------
    def tensor_result(self) -> TensorType:
        if len(self.results) != 1 or not isinstance(self.results[0].type, TensorType):
            raise self.error("must have one !cute.tensor result")
        return self.results[0].type


def same_shape_mismatch(
    a: TensorType, b: TensorType, per_call: tuple[int, int] = (1, 1)
) -> str | None:
    """Why two tensors cannot be paired element for element, or None.

    Only static sizes are compared: a ``?`` may hold anything at compile time.
    With `per_call` = (p, q), p elements of `a` pair with q of `b` (an atom call
    that reads one 16-byte row and receives fewer values: ldmatrix x1/x2).
    """

    def static_size(t: TensorType) -> int | None:
        n = 1
        for leaf in leaves(t.spec.shape):
            if leaf is DYN:
                return None
            n *= leaf
        return n

    sa, sb = static_size(a), static_size(b)
    p, q = per_call
    if sa is not None and sb is not None and sa * q != sb * p:
        if (p, q) != (1, 1):
            return (
                f"sizes differ: {sa} elements in {a.spec} ({p} per atom call) vs {sb} in "
                f"{b.spec} ({q} per call)"
            )
        return f"sizes differ: {sa} elements in {a.spec} vs {sb} in {b.spec}"
    return None


def attrs_of(**kw: Attribute | None) -> dict[str, Attribute]:
    """An attribute dictionary without the None entries."""
    return {k: v for k, v in kw.items() if v is not None}
