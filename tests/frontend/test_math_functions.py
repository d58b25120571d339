"""exp, exp2, log, log2, sqrt and rsqrt in the language: one math op each, element-wise
on a fragment (the op in the cute.map body), as it is on a scalar; floats only."""

from __future__ import annotations

import re

import pytest

from cutec.diagnostics import CompileError
from cutec.frontend import compile_source
from cutec.ir.dialects.cute_map import MapOp
from cutec.ir.printer import print_op

HEAD = (
    "kernel k(A: f32[128] : (1), I: i32[128] : (1), alpha: f32, n: int)"
    " grid 1 threads 32 {\n"
    "  ta = local_partition(A, make_layout(32), thread.x)\n"
    "  ti = local_partition(I, make_layout(32), thread.x)\n"
    "  ra = make_fragment_like(ta)\n"
    "  ri = make_fragment_like(ti)\n"
    "  copy(ta, ra)\n"
    "  copy(ti, ri)\n"
)
FUNCTIONS = ("exp", "exp2", "log", "log2", "sqrt", "rsqrt")


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_on_a_fragment_the_op_is_the_map_body(fn: str) -> None:
    module = compile_source(HEAD + f"  rz = {fn}(ra)\n  copy(rz, ta)\n}}\n", "k.cute")
    (m,) = module.walk_type(MapOp)
    assert [op.name for op in m.body.ops] == [f"math.{fn}", "cute.yield"]
    assert len(m.inputs) == 1


def test_in_an_expression() -> None:
    module = compile_source(
        HEAD + "  rz = exp(ra) * rsqrt(ra + 1.0) + log(alpha * ra)\n  copy(rz, ta)\n}\n",
        "k.cute",
    )
    bodies = [[op.name for op in m.body.ops][:-1] for m in module.walk_type(MapOp)]
    assert bodies == [
        ["math.exp"],
        ["arith.constant", "arith.addf"],
        ["math.rsqrt"],
        ["arith.mulf"],
        ["arith.mulf"],
        ["math.log"],
        ["arith.addf"],
    ]


def test_on_a_scalar_it_stays_scalar() -> None:
    module = compile_source(
        "kernel k(A: f32[128] : (1), x: f32, d: f64) grid 1 threads 32 {\n"
        "  A[thread.x] = sqrt(x) + exp2(log2(x)) + f32(sqrt(d))\n"
        "}\n",
        "k.cute",
    )
    text = print_op(module)
    for op in ("math.sqrt", "math.exp2", "math.log2"):
        assert op in text
    assert re.search(r"math\.sqrt %\w+ : f64", text)
    assert "cute.map" not in text


@pytest.mark.parametrize(
    ("body", "line", "col", "message"),
    [
        ("  x = exp(ri)\n", 8, 11, "exp() computes on floats, not i32; convert it first"),
        ("  A[0] = sqrt(f32(n)) + log(n)\n", 8, 29, "log() computes on floats, not index"),
        ("  x = rsqrt(2.0)\n", 8, 7, "rsqrt() of compile-time numbers: write the value"),
        ("  x = exp(ra, ra)\n", 8, 7, "'exp' takes 1 arguments, got 2"),
        (
            "  x = log2(ta)\n",
            8,
            7,
            "log2() computes on scalars and register fragments, not a gmem tensor",
        ),
    ],
)
def test_mistakes_are_located(body: str, line: int, col: int, message: str) -> None:
    with pytest.raises(CompileError) as info:
        compile_source(HEAD + body + "}\n", "k.cute")
    rendered = info.value.render()
    assert rendered.startswith(f"k.cute:{line}:{col}: error: "), rendered
    assert message in rendered
