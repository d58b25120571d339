"""The conversion driver: legality by class, dialect and callback, partial and
full conversion, legalising what patterns create, type conversion, and located
errors for ops that stay illegal."""

from __future__ import annotations

import pytest

from cutec.ir import types as T
from cutec.ir.attributes import UnitAttr
from cutec.ir.conversion import (
    ConversionError,
    ConversionPattern,
    ConversionTarget,
    TypeConverter,
    apply_full_conversion,
    apply_partial_conversion,
)
from cutec.ir.core import Block, Operation
from cutec.ir.dialects import arith, scf
from cutec.ir.dialects.arith_cast import ExtSIOp, TruncIOp
from cutec.ir.parser import parse_module
from cutec.ir.printer import print_op
from cutec.ir.rewrite import PatternRewriter
from cutec.ir.verifier import verify

TEXT = """
func @f(%x: i32, %n: index) -> i32 {
  %a = arith.muli %x, %x : i32 loc("k.cute":3:7)
  %b = arith.subi %a, %x : i32 loc("k.cute":4:7)
  %c0 = arith.constant 0 : index
  %r = scf.for %i = %c0 to %n step %n iter_args(%acc = %b) -> (i32) {
    %m = arith.muli %acc, %acc : i32 loc("k.cute":6:9)
    scf.yield %m : i32
  } loc("k.cute":5:3)
  return %r : i32
}
"""


def _ops(module: Operation) -> list[Operation]:
    return [op for op in module.walk() if op is not module]


class MulToTaggedSub(ConversionPattern):
    """``muli(a, b) → subi(a, b) {tmp}`` (an op the target still rejects)."""

    op_type = arith.MulIOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        a, b = op.operands
        sub = rewriter.insert_before(op, arith.SubIOp(a, b))
        sub.attributes["tmp"] = UnitAttr()
        rewriter.replace_op(op, [sub.result])
        return True


class TaggedSubToAdd(ConversionPattern):
    """``subi(a, b) {tmp} → addi(a, b)``."""

    op_type = arith.SubIOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        if "tmp" not in op.attributes:
            return False
        rewriter.replace_op(op, [rewriter.insert_before(op, arith.AddIOp(*op.operands)).result])
        return True


def _target() -> ConversionTarget:
    target = ConversionTarget()
    target.add_legal_dialect("arith")
    target.add_illegal_op(arith.MulIOp)
    target.add_dynamically_legal_op(arith.SubIOp, lambda op: "tmp" not in op.attributes)
    return target


def test_legality_by_class_dialect_and_callback() -> None:
    module = parse_module(TEXT, "t.mlir")
    target = _target()
    legality = {op.name: target.is_legal(op) for op in _ops(module)}
    assert legality["arith.muli"] is False  # the class rule wins over the dialect's
    assert legality["arith.constant"] is True
    assert legality["scf.for"] is None and legality["builtin.func"] is None
    sub = next(op for op in _ops(module) if isinstance(op, arith.SubIOp))
    assert target.is_legal(sub) is True
    sub.attributes["tmp"] = UnitAttr()
    assert target.is_legal(sub) is False
    target.add_illegal_dialect("scf")
    target.add_legal_op(scf.YieldOp)
    assert [target.is_legal(op) for op in _ops(module) if op.name.startswith("scf.")] == [
        False,
        True,
    ]


def test_partial_conversion_legalises_what_patterns_create_and_leaves_unknown_ops() -> None:
    module = parse_module(TEXT, "t.mlir")
    assert apply_partial_conversion(module, _target(), [MulToTaggedSub(), TaggedSubToAdd()])
    out = print_op(module, print_locations=False)
    assert "muli" not in out and "tmp" not in out
    assert "%a = arith.addi %x, %x : i32" in out
    assert "%m = arith.addi %acc, %acc : i32" in out and "scf.for" in out
    verify(module)
    # Nothing illegal is left: a second run changes nothing.
    assert not apply_partial_conversion(module, _target(), [MulToTaggedSub(), TaggedSubToAdd()])


def test_an_illegal_op_no_pattern_converts_is_one_located_error_each() -> None:
    module = parse_module(TEXT, "t.mlir")
    with pytest.raises(ConversionError) as info:
        apply_partial_conversion(module, _target(), [MulToTaggedSub()])
    # Both muli became tagged subi, which nothing converts further.
    where = [(d.location.line, d.location.col) for d in info.value.diagnostics]
    assert where == [(3, 7), (6, 9)]
    assert [d.message for d in info.value.diagnostics] == [
        "failed to legalize operation 'arith.subi'"
    ] * 2
    assert info.value.render().startswith(
        "k.cute:3:7: error: failed to legalize operation 'arith.subi'"
    )


def test_full_conversion_rejects_ops_no_rule_covers() -> None:
    module = parse_module(TEXT, "t.mlir")
    target = _target()
    target.add_legal_dialect("builtin")
    with pytest.raises(ConversionError) as info:
        apply_full_conversion(module, target, [MulToTaggedSub(), TaggedSubToAdd()])
    for_, yield_ = info.value.diagnostics
    assert for_.message == "failed to legalize operation 'scf.for' (no legality rule covers it)"
    assert (for_.location.line, for_.location.col) == (5, 3)
    assert yield_.message.startswith("failed to legalize operation 'scf.yield'")
    target.add_legal_dialect("scf")
    module = parse_module(TEXT, "t.mlir")
    assert apply_full_conversion(module, target, [MulToTaggedSub(), TaggedSubToAdd()])


# --------------------------------------------------------------------------- types

WIDEN = """
func @f(%x: i64) -> i64 {
  %t = arith.trunci %x : i64 to i32
  %a = arith.addi %t, %t : i32
  %e = arith.extsi %a : i32 to i64
  return %e : i64
}
"""


def _widen() -> TypeConverter:
    converter = TypeConverter([lambda t: t])
    converter.add_conversion(lambda t: T.i64 if t == T.i32 else None)
    return converter


class DropCast(ConversionPattern):
    """``trunci / extsi x → x`` once x already has the converted type."""

    op_type = TruncIOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        (source,) = op.operands
        if self.convert_result_types(op) != [source.type]:
            return False
        rewriter.replace_op(op, [source])
        return True


class DropExt(DropCast):
    op_type = ExtSIOp


class ConvertResults(ConversionPattern):
    """Any op: the same op with converted result types (operands converted already)."""

    op_type = arith.AddIOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        types = self.convert_result_types(op)
        if types is None:
            return False
        new = type(op).create(operands=op.operands, result_types=types, attributes=op.attributes)
        rewriter.replace_op(op, [rewriter.insert_before(op, new).result])
        return True


def test_type_converter_maps_and_judges_types() -> None:
    converter = _widen()
    assert converter.convert_type(T.i32) == T.i64 and converter.convert_type(T.f32) == T.f32
    assert converter.is_legal(T.i64) and not converter.is_legal(T.i32)
    assert TypeConverter().convert_type(T.f32) is None  # no conversion claims it
    block = Block([T.i32, T.f32])
    assert converter.convert_block_signature(block)
    assert [a.type for a in block.args] == [T.i64, T.f32]
    assert not TypeConverter([lambda t: None]).convert_block_signature(block)


def test_full_conversion_with_a_type_converter() -> None:
    converter = _widen()
    target = ConversionTarget()
    target.add_legal_dialect("builtin")
    target.add_dynamically_legal_dialect("arith", converter.is_op_legal)
    target.add_illegal_op(TruncIOp, ExtSIOp)  # i64 -> i64 would be typed right, and wrong
    module = parse_module(WIDEN, "t.mlir")
    patterns = [DropCast(converter), DropExt(converter), ConvertResults(converter)]
    assert apply_full_conversion(module, target, patterns)
    verify(module)
    out = print_op(module, print_locations=False)
    assert "%a = arith.addi %x, %x : i64\n    return %a : i64" in out
