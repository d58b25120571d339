"""Malformed IR: each case gives one located diagnostic, exactly."""

from __future__ import annotations

import pytest

from cutec.cli import main
from cutec.diagnostics import CompileError
from cutec.ir.parser import parse_module

F32_FUNC = "func @f(%a: f32) {\n  %s\n  return\n}\n"

# (IR text, expected first diagnostic line "line:col: error: message")
CASES = [
    ("%x = arith.constant 1 : i32 :", "1:29: error: expected an operation, found ':'"),
    ("module {", "1:9: error: expected '}', found end of input"),
    ('"foo.bar"() : () -> ()', "1:1: error: unknown operation 'foo.bar'"),
    ("frob", "1:1: error: unknown operation 'frob'"),
    ("func @f() {\n  %x = arith.addi %y, %y : i32\n}", "2:19: error: use of undefined value '%y'"),
    (
        "func @f(%a: i32) {\n  %a = arith.addi %a, %a : i32\n}",
        "2:3: error: redefinition of value '%a'",
    ),
    (
        "func @f(%a: i32) {\n  %x = arith.addi %a, %a : f32\n}",
        "2:28: error: operand #0 has type i32, but f32 is written",
    ),
    (
        "func @f(%a: i32) {\n  %x = arith.cmpi lt, %a, %a : i32\n}",
        "2:19: error: unknown predicate 'lt'; expected one of eq, ne, slt, sle, sgt, sge, ult, "
        "ule, ugt, uge",
    ),
    ("func @f(%a: i33) {\n}", "1:13: error: expected a type, found 'i33'"),
    ("func @f(%a: !cute.nothing<>) {\n}", "1:13: error: unknown type '!cute.nothing'"),
    (
        "func @f(%a: !gpu.ptr<f32, texture>) {\n}",
        "1:27: error: unknown address space 'texture'; expected one of global, shared, "
        "shared::cluster, reg, local, param, generic",
    ),
    ("func @f(%a: vector<4f32>) {\n}", "1:21: error: expected a vector shape like 4x2xf32"),
    ("func @f(%a: vector<0xf32>) {\n}", "1:20: error: vector dimensions must be positive"),
    ('%x = "arith.addi"() : (i32) -> i32', "1:21: error: 0 operands but the type lists 1"),
    ('"builtin.module"() {a = 1, a = 2} : () -> ()', "1:28: error: duplicate attribute 'a'"),
    (
        "%x:2 = arith.constant 1 : i32",
        "1:1: error: operation defines 1 results but 2 names were given",
    ),
    ("%x = arith.constant 1.5 : i32", "1:21: error: float literal with non-float type i32"),
    (
        '%x = arith.constant "s"',
        "1:21: error: 'value' must be IntegerAttr or FloatAttr, found \"s\"",
    ),
    ('func @f() {\n  return loc("x":1)\n}', "2:19: error: expected ':', found ')'"),
    ("func @f() {\n  return $\n}", "2:10: error: unexpected character '$'"),
    ('func @f() {\n  return "abc\n}', "2:10: error: unterminated string"),
    (
        "func @f(%a: i32) -> i32 {\n  %t:2 = scf.if %a -> (i32) {\n  }\n}",
        "2:3: error: operation defines 1 results but 2 names were given",
    ),
    (
        "func @f(%a: i32) {\n  %y = arith.addi %a#1, %a : i32\n}",
        "2:19: error: '%a' has only 1 results",
    ),
    (
        "func @f(%a: i32) {\n  %y = arith.extsi %a : i32 into i64\n}",
        "2:29: error: expected 'to', found 'into'",
    ),
    (
        "func @f() {\n  %t = gpu.thread_id w : index\n}",
        "2:22: error: unknown dim 'w'; expected one of x, y, z",
    ),
    (
        "module {\n  %c = arith.constant 1 : i32\n  %c2 = arith.addi %c#0 %c : i32\n}",
        "3:25: error: expected ',', found '%c'",
    ),
]


@pytest.mark.parametrize(("text", "expected"), CASES, ids=[e for _, e in CASES])
def test_malformed_ir_gives_one_located_diagnostic(text: str, expected: str) -> None:
    with pytest.raises(CompileError) as info:
        parse_module(text, "t.mlir")
    rendered = info.value.render()
    assert rendered.splitlines()[0] == f"t.mlir:{expected}"


def test_diagnostic_quotes_the_line_with_a_caret() -> None:
    with pytest.raises(CompileError) as info:
        parse_module("func @f() {\n  %x = arith.addi %y, %y : i32\n}", "t.mlir")
    assert info.value.render().splitlines()[1:] == [
        "  %x = arith.addi %y, %y : i32",
        "                  ^",
    ]


@pytest.mark.parametrize(("text", "expected"), CASES[:6], ids=[e for _, e in CASES[:6]])
def test_cutec_opt_exits_1_with_the_diagnostic(
    tmp_path, capsys: pytest.CaptureFixture[str], text: str, expected: str
) -> None:
    path = tmp_path / "t.mlir"
    path.write_text(text)
    assert main(["opt", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.splitlines()[0] == f"{path}:{expected}"
    assert "Traceback" not in err


LAYOUT_CASES = [
    (
        "func @f(%a: !cute.layout<(4,8)>) {\n}",
        "1:13: error: invalid '!cute.layout' type: expected a layout 'shape:stride', got '(4,8)'",
    ),
    (
        "func @f(%a: !cute.layout<(4,8):(1,4,2)>) {\n}",
        "1:13: error: invalid '!cute.layout' "
        "type: shape (4,8) and stride (1,4,2) are not congruent",
    ),
    (
        "func @f(%a: !cute.layout<(4,x):(1,4)>) {\n}",
        "1:13: error: invalid '!cute.layout' "
        "type: expected an integer, '?' or '(' at column 4 of '(4,x)'",
    ),
    (
        "func @f(%a: !cute.tensor<f32, tmem, 4:1>) {\n}",
        "1:31: error: unknown memory 'tmem'; expected one of gmem, smem, dsmem, rmem",
    ),
    (
        "func @f(%a: !cute.tensor<f32, gmem, (4,8):(1,4)) {\n}",
        "2:2: error: expected '>', found end of input",
    ),
]


@pytest.mark.parametrize(("text", "expected"), LAYOUT_CASES, ids=[e for _, e in LAYOUT_CASES])
def test_malformed_layout_types(text: str, expected: str) -> None:
    with pytest.raises(CompileError) as info:
        parse_module(text, "t.mlir")
    assert info.value.render().splitlines()[0] == f"t.mlir:{expected}"
