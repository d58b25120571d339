# ruff: noqa: E501  (the case table keeps each message on one line)
"""Fragment arithmetic in the language: operators, functions and conversions on register
fragments build cute.map ops (one per operator); scalars keep their arith ops; mistakes
are one located error."""

from __future__ import annotations

import pytest

from cutec.diagnostics import CompileError
from cutec.frontend import compile_source
from cutec.ir.dialects.cute_map import MapOp
from cutec.ir.printer import print_op

HEAD = (
    "kernel k(A: f32[128] : (1), H: f16[128] : (1), alpha: f32, n: int)"
    " grid 1 threads 32 {\n"
    "  ta = local_partition(A, make_layout(32), thread.x)\n"
    "  th = local_partition(H, make_layout(32), thread.x)\n"
    "  ra = make_fragment_like(ta)\n"
    "  rh = make_fragment_like(th)\n"
    "  copy(ta, ra)\n"
    "  copy(th, rh)\n"
)


def _maps(body: str) -> list[MapOp]:
    module = compile_source(HEAD + body + "}\n", "k.cute")
    return list(module.walk_type(MapOp))


def _body_ops(m: MapOp) -> list[str]:
    return [op.name for op in m.body.ops]


def test_axpy_is_one_map_per_operator() -> None:
    maps = _maps("  rz = alpha * f32(rh) + ra\n  copy(rz, ta)\n")
    assert [_body_ops(m) for m in maps] == [
        ["arith.extf", "cute.yield"],
        ["arith.mulf", "cute.yield"],
        ["arith.addf", "cute.yield"],
    ]
    assert [len(m.inputs) for m in maps] == [1, 1, 2]


def test_functions_on_fragments() -> None:
    maps = _maps(
        "  a = fma(ra, ra, 1.0)\n  b = max(a, ra)\n  c = abs(-b)\n  d = min(c, 0.5)\n"
        "  copy(d, ta)\n"
    )
    names = [_body_ops(m)[:-1] for m in maps]
    assert names == [
        ["arith.constant", "arith.fma"],
        ["arith.maximumf"],
        ["arith.negf"],
        ["arith.negf", "arith.maximumf"],
        ["arith.constant", "arith.minimumf"],
    ]


def test_scalar_functions_and_conversions_stay_scalar() -> None:
    module = compile_source(
        "kernel k(A: f32[128] : (1), n: int, x: f32) grid 1 threads 32 {\n"
        "  y = fma(x, x, f32(n))\n"
        "  A[thread.x] = abs(y) + f32(f16(x))\n"
        "}\n",
        "k.cute",
    )
    text = print_op(module)
    for op in ("arith.sitofp", "arith.fma", "arith.truncf", "arith.extf", "arith.maximumf"):
        assert op in text
    assert "cute.map" not in text


@pytest.mark.parametrize(
    ("body", "line", "col", "message"),
    [
        (
            "  rs = make_fragment_like(local_partition(A, make_layout(16), thread.x))\n"
            "  x = ra + rs\n",
            9,
            7,
            "'+': fragments of 8 and 4 elements; element-wise operations take fragments of one size",
        ),
        ("  x = ra + rh\n", 8, 12, "'+': this operand holds f16, the left one f32"),
        (
            "  x = ra * ta\n",
            8,
            7,
            "'*' computes on register fragments, not a gmem tensor",
        ),
        ("  x = fma(1.0, 2.0, 3.0)\n", 8, 7, "fma() of compile-time numbers: write the value"),
        (
            "  c = make_identity_tensor((128,))\n  x = ra + local_partition(c, make_layout(32), thread.x)\n",
            9,
            7,
            "'+' computes on register fragments, not a coordinate tensor",
        ),
        ("  x = fma(ra, ra)\n", 8, 7, "fma"),
    ],
)
def test_fragment_mistakes_are_located(body: str, line: int, col: int, message: str) -> None:
    with pytest.raises(CompileError) as info:
        compile_source(HEAD + body + "}\n", "k.cute")
    rendered = info.value.render()
    assert rendered.startswith(f"k.cute:{line}:{col}: error: "), rendered
    assert message in rendered
