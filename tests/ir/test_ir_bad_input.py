"""IR text that once crashed or was wrongly accepted (issue 26): deep nesting, float
literals without a '.', constants that do not fit their type; and deep IR built in
Python clones without recursion."""

from __future__ import annotations

import pytest

from cutec.cli import main
from cutec.diagnostics import CompileError
from cutec.ir.dialects import arith, scf
from cutec.ir.lexer import MAX_NESTING
from cutec.ir.parser import parse_module
from cutec.ir.printer import print_op
from cutec.ir.types import FloatType, f32, i1
from cutec.ir.verifier import verify
from cutec.ptx.tables import float_immediate, ptx_type

KERNEL = """module {{
  kernel @k(%x: !gpu.ptr<f32, global>, %k: i32) attributes {{reqntid = array<i32: 32, 1, 1>}} {{
{body}
    return
  }}
}}
"""


def _nested_ifs(n: int) -> str:
    body = "    %p = arith.cmpi slt, %k, %k : i32\n" + "scf.if %p {\n" * n
    body += "    %c = arith.constant 1.0 : f32\n"
    body += "    thread.store %c, %x : f32, !gpu.ptr<f32, global>\n"
    return KERNEL.format(body=body + "scf.yield\n}\n" * n)


def _error(text: str) -> str:
    with pytest.raises(CompileError) as info:
        verify(parse_module(text, "t.mlir"))
    return info.value.render().splitlines()[0]


@pytest.mark.parametrize("depth", [330, 5000])
def test_deeply_nested_regions_are_one_located_error(depth: int) -> None:
    # 330 nested scf.if once raised RecursionError in the parser (an internal error).
    assert _error(_nested_ifs(depth)) == (
        f"t.mlir:{MAX_NESTING + 2}:11: error: brackets nested more than {MAX_NESTING} deep"
    )


def test_deeply_nested_attributes_are_one_located_error() -> None:
    text = "func @f() attributes {a = " + "[" * 3000 + "]" * 3000 + "} {\n  return\n}\n"
    assert _error(text) == "t.mlir:1:154: error: brackets nested more than 128 deep"


def test_nesting_within_the_limit_parses_and_prints_back() -> None:
    text = _nested_ifs(100)
    module = parse_module(text, "t.mlir")
    verify(module)
    assert print_op(module, print_locations=False).count("scf.if %p {") == 100


@pytest.mark.parametrize(
    ("literal", "type_", "expected"),
    [
        ("1.0e39", "f32", "'arith.constant' op value 1e+39 is out of range for f32"),
        ("1e5", "f16", "'arith.constant' op value 100000.0 is out of range for f16"),
        (str(2**64), "index", f"'arith.constant' op value {2**64} does not fit in index"),
        (str(2**200), "index", f"'arith.constant' op value {2**200} does not fit in index"),
        (str(2**31), "i32", f"'arith.constant' op value {2**31} does not fit in i32"),
    ],
)
def test_constants_that_do_not_fit_their_type_are_refused(
    literal: str, type_: str, expected: str
) -> None:
    text = f"func @f() {{\n  %c = arith.constant {literal} : {type_}\n  return\n}}\n"
    assert _error(text) == f"t.mlir:2:8: error: {expected}"


@pytest.mark.parametrize(
    ("literal", "value"),
    [("1e5", 100000.0), ("2E-3", 0.002), ("-4e0", -4.0), ("3.4028234e38", 3.4028234e38)],
)
def test_float_literals_with_an_exponent_and_no_point(literal: str, value: float) -> None:
    module = parse_module(f"func @f() {{\n  %c = arith.constant {literal} : f32\n  return\n}}\n")
    verify(module)
    const = next(op for op in module.walk() if isinstance(op, arith.ConstantOp))
    assert const.value.value == pytest.approx(value, rel=1e-7)


def test_largest_index_constant_fits() -> None:
    text = f"func @f() {{\n  %c = arith.constant {2**63 - 1} : index\n  return\n}}\n"
    verify(parse_module(text))


def test_cutec_compile_reports_an_f32_overflow_as_a_user_error(tmp_path, capsys) -> None:
    body = "    %c = arith.constant 1.0e39 : f32\n"
    body += "    thread.store %c, %x : f32, !gpu.ptr<f32, global>"
    path = tmp_path / "k.mlir"
    path.write_text(KERNEL.format(body=body))
    assert main(["compile", str(path), "--emit=ptx"]) == 1
    assert capsys.readouterr().err.startswith(
        f"{path}:3:10: error: 'arith.constant' op value 1e+39 is out of range for f32"
    )


@pytest.mark.parametrize(
    ("ir", "value", "expected"),
    [("f32", 1e39, "0f7F800000"), ("f32", -1e39, "0fFF800000"), ("f16", 1e6, "0x7C00")],
)
def test_ptx_immediates_of_overflowing_floats_are_infinities(
    ir: str, value: float, expected: str
) -> None:
    # Only unverified IR reaches the emitter with such a value; it packs as the type's
    # rounding would give, not struct's OverflowError.
    assert float_immediate(value, ptx_type(FloatType(ir))) == expected


def _deep_ifs(depth: int) -> scf.IfOp:
    """`depth` scf.if nested in each other, built through the API (the parser refuses
    this depth), the innermost holding a constant."""
    cond = arith.constant(1, i1).result
    outer = inner = scf.IfOp(cond)
    for _ in range(depth - 1):
        nxt = scf.IfOp(cond)
        inner.then_block.append(nxt)
        inner.then_block.append(scf.YieldOp([]))
        inner = nxt
    inner.then_block.append(arith.constant(2.0, f32))
    inner.then_block.append(scf.YieldOp([]))
    return outer


def test_clone_of_deep_ir_needs_no_recursion() -> None:
    # 200-300 levels once overflowed Python's stack in Operation.clone.
    outer = _deep_ifs(2000)
    copy = outer.clone()
    depth, op = 0, copy
    while isinstance(op, scf.IfOp):
        assert op is not outer and op.cond is outer.cond
        op, depth = op.then_block.ops.first, depth + 1
    assert depth == 2000
    assert isinstance(op, arith.ConstantOp) and op.value.value == 2.0
