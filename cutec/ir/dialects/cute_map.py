"""Element-wise computation on register fragments: ``cute.map`` and its ``cute.yield``.

CuTe computes on fragments with ``transform(in..., out, f)``; cutec's form is one
op whose region is the scalar function, applied to every element::

    cute.map %out, %x, %y : !cute.tensor<f32, rmem, (4,2):(1,4)>, !cute.tensor<f16, rmem, ...>,
        !cute.tensor<f32, rmem, ...> {
    ^bb0(%a: f16, %b: f32):
      %e = arith.extf %a : f16 to f32
      %s = arith.fma %alpha, %e, %b : f32
      cute.yield %s : f32
    }

``out[i] = body(x[i], y[i])`` for every linear index i: the inputs and the
output are register tensors of one size (their layouts may differ), the
block's arguments have the inputs' element types and the yield the output's.
The body may use values defined outside (``%alpha``), holds only pure scalar
ops, and is unrolled per element by lower-to-thread (the fragments become
registers), so any arith op the PTX emitter knows runs element-wise. The
frontend builds one map per operator of a fragment expression (``a * x + y``
is two), each into a fresh fragment; promote-registers and CSE leave one
instruction per element and operator.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from cutec.ir.core import Block, Operation, Region, Value
from cutec.ir.dialects.cute_base import CuteOp, same_shape_mismatch
from cutec.ir.dialects.cute_types import TensorType
from cutec.ir.opdef import operand_def, region_def, var_operand_def
from cutec.ir.traits import HasParent, MemoryEffect, Pure, Terminator, reads, writes
from cutec.ir.types import Type
from cutec.target import AddressSpace

if TYPE_CHECKING:
    from cutec.ir.parser import Parser, ResultName
    from cutec.ir.printer import Printer


class MapOp(CuteOp):
    """``out[i] = body(inputs[0][i], ...)`` over register fragments (see the module)."""

    name = "cute.map"
    out = operand_def(TensorType)
    inputs = var_operand_def(TensorType)
    body_region = region_def()

    def __init__(self, out: Value, inputs: Sequence[Value]) -> None:
        elements = [_element(v) for v in inputs]
        super().__init__(operands=[out, *inputs], regions=[Region([Block(elements)])])

    @property
    def body(self) -> Block:
        return self.body_region.blocks[0]

    def memory_effects(self) -> tuple[MemoryEffect, ...]:
        return (*reads(AddressSpace.REGISTER), *writes(AddressSpace.REGISTER))

    def verify_(self) -> None:
        out = self.out.type
        assert isinstance(out, TensorType)
        for v in (self.out, *self.inputs):
            t = v.type
            assert isinstance(t, TensorType)
            if t.space is not AddressSpace.REGISTER:
                raise self.error(f"maps register fragments, not {t.space.memory} tensors")
            why = same_shape_mismatch(out, t)
            if why:
                raise self.error(why)
        if len(self.body_region.blocks) != 1:
            raise self.error("the body is one block")
        args = tuple(a.type for a in self.body.args)
        want = tuple(_element(v) for v in self.inputs)
        if args != want:
            raise self.error(f"the body takes the inputs' elements {want}, not {args}")
        term = self.body.last_op
        if not isinstance(term, YieldOp) or len(term.operands) != 1:
            raise self.error("the body ends in 'cute.yield' of one value")
        if term.operands[0].type != out.element:
            raise self.error(
                f"the body yields {term.operands[0].type}, the output holds {out.element}"
            )
        for op in self.body.ops:
            if op is not term and not op.has_trait(Pure):
                raise self.error(f"the body holds pure scalar ops only, not '{op.name}'")

    def print_custom(self, p: Printer) -> None:
        p.print(self.name, " ")
        p.print_operands(self.operands)
        p.print_attr_dict_with_keyword(self.attributes)
        p.print(" : ")
        p.print_types([v.type for v in self.operands])
        p.print(" ")
        p.print_region(self.body_region)

    @classmethod
    def parse_custom(cls, parser: Parser, results: list[ResultName]) -> Operation:
        operands = parser.parse_operand_list()
        attrs = parser.parse_optional_attr_dict_with_keyword()
        loc = parser.tok.loc
        parser.parse_punct(":")
        parser.check_types(operands, parser.parse_type_list(), loc)
        region = parser.parse_region()
        return cls.create(operands=operands, attributes=attrs, regions=[region])


class YieldOp(Operation):
    """Ends a ``cute.map`` body with the element's value: ``cute.yield %s : f32``."""

    name = "cute.yield"
    traits = (Terminator(), Pure(), HasParent(("cute.map",)))
    value = operand_def()
    assembly_format = "$value attr-dict `:` type($value)"

    def __init__(self, value: Value) -> None:
        super().__init__(operands=[value])


def _element(v: Value) -> Type:
    t = v.type
    assert isinstance(t, TensorType)
    return t.element


CUTE_MAP_OPS: tuple[type[Operation], ...] = (MapOp, YieldOp)
