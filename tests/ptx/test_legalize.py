"""Legalisation: the rewrites keep each op's value (checked by folding the
rewritten IR to constants) and leave only ops the printer has rows for."""

from __future__ import annotations

import itertools
import math

import pytest

from cutec.ir.attributes import FloatAttr, IntegerAttr
from cutec.ir.dialects import arith
from cutec.ir.dialects.builtin import ModuleOp
from cutec.ir.parser import parse_module
from cutec.ir.verifier import verify
from cutec.passes.canonicalize import Canonicalize
from cutec.ptx.legalize import legalize


def _legal(text: str) -> ModuleOp:
    """The module of `text`, legalised in place."""
    module = parse_module(text, "l.mlir")
    legalize(module)
    return module


def _folded(text: str) -> ModuleOp:
    """The legalised module of `text`, verified and folded to its constants."""
    module = _legal(text)
    verify(module)
    Canonicalize().run(module)
    return module


def _returned(module: ModuleOp) -> IntegerAttr | FloatAttr:
    (func,) = module.body.ops
    ret = func.body.terminator
    owner = ret.operands[0].owner
    assert isinstance(owner, arith.ConstantOp), f"not folded: {module}"
    return owner.value


DIV = """func @f() -> {t} {{
  %a = arith.constant {a} : {t}
  %b = arith.constant {b} : {t}
  %q = arith.{op} %a, %b : {t}
  return %q : {t}
}}"""


@pytest.mark.parametrize("t", ["i32", "index"])
@pytest.mark.parametrize("op", ["floordivsi", "ceildivsi"])
def test_rounded_divisions_keep_their_values(op: str, t: str) -> None:
    for a, b in itertools.product([-7, -6, -1, 0, 1, 6, 7], [-3, -2, -1, 1, 2, 3]):
        got = _returned(_folded(DIV.format(op=op, a=a, b=b, t=t))).value
        want = a // b if op == "floordivsi" else -((-a) // b)
        assert got == want, (op, a, b)


def test_rounded_divisions_leave_only_ops_with_instructions() -> None:
    text = """func @f(%a: i32, %b: i32) -> i32 {
  %q = arith.floordivsi %a, %b : i32
  %r = arith.ceildivsi %q, %b : i32
  return %r : i32
}"""
    module = _legal(text)
    verify(module)
    names = {op.name for op in module.walk()}
    assert not names & {"arith.floordivsi", "arith.ceildivsi"}
    assert {"arith.divsi", "arith.remsi", "arith.xori", "arith.select"} <= names


HALF = """func @f() -> {t} {{
  %a = arith.constant {a} : {t}
  %b = arith.constant {b} : {t}
  %q = arith.{op} %a, %b : {t}
  return %q : {t}
}}"""


@pytest.mark.parametrize("t", ["f16", "bf16"])
@pytest.mark.parametrize("op", ["addf", "subf", "mulf", "divf", "maximumf", "minimumf"])
def test_half_arithmetic_is_computed_in_f32(op: str, t: str) -> None:
    text = HALF.format(op=op, a=1.5, b=-0.375, t=t)
    legal = _legal(text)
    (func,) = legal.body.ops
    computed = [o for o in func.body.ops if o.name == f"arith.{op}"]
    assert [str(o.result.type) for o in computed] == ["f32"]
    want = {
        "addf": 1.125,
        "subf": 1.875,
        "mulf": -0.5625,
        "divf": -4.0,
        "maximumf": 1.5,
        "minimumf": -0.375,
    }[op]
    assert _returned(_folded(text)).value == want


def test_half_comparisons_compare_in_f32() -> None:
    text = """func @f(%a: f16, %b: f16) -> i1 {
  %c = arith.cmpf olt, %a, %b : f16
  return %c : i1
}"""
    legal = _legal(text)
    verify(legal)
    (cmp,) = [o for o in legal.walk() if isinstance(o, arith.CmpFOp)]
    assert str(cmp.lhs.type) == "f32" and cmp.predicate.value == "olt"
    assert not [o for o in legal.walk() if isinstance(o, arith.TruncFOp)]


def test_the_rewrites_keep_nan() -> None:
    text = HALF.format(op="maximumf", a="nan", b=1.0, t="bf16")
    assert math.isnan(_returned(_folded(text)).value)
