"""The tuple, layout and launch-geometry builtins: CuTe's get<i>/select/take/append/
prepend/product/depth/flatten/filter/upcast/downcast/round_up on compile-time values
(checked by static_assert inside the .cute file), and block_dim/grid_dim/warp_idx/
lane_idx/warpgroup_idx reaching PTX."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutec.diagnostics import CompileError
from cutec.driver import Source, Stage, compile
from cutec.frontend import compile_source
from cutec.layout import Layout
from cutec.layout import algebra as LA

DATA = Path(__file__).parent / "data" / "builtins.cute"


def test_static_asserts_of_the_tuple_builtins_hold_and_geometry_reaches_ptx() -> None:
    result = compile(Source.from_file(DATA), Stage.PTX)
    ptx = result.ptx
    assert ptx is not None
    for register in ("shfl.sync.idx.b32", "%laneid", "%ntid.x", "%nctaid.y"):
        assert register in ptx


def test_filter_and_upcast_are_the_algebra_s() -> None:
    module = compile_source(
        "kernel k(A: f32[64]) grid 1 threads 32 {\n"
        '  static_assert(filter((4, 1, 2) : (1, 7, 0)) == (4 : 1), "filter")\n'
        '  static_assert(upcast((8, 4) : (1, 8), 2) == ((4, 4) : (1, 4)), "upcast")\n'
        '  static_assert(downcast((4, 4) : (1, 4), 2) == ((8, 4) : (1, 8)), "downcast")\n'
        "}\n",
        "k.cute",
    )
    assert module is not None
    assert LA.upcast(Layout((8, 4), (1, 8)), 2) == Layout((4, 4), (1, 4))


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("get((4, 5), 7)", "get<7>: index out of range for (4,5)"),
        ("take((4, 5))", "'take' takes at least 3 arguments, got 1"),
        ("upcast((4, 5), 0)", "upcast takes a layout"),
        ("round_up(10, 0)", "round_up's multiple must be positive"),
        ("warp_idx(1)", "warp_idx() takes no arguments"),
        ("block_dim.w", "'block_dim' has members x, y and z, not 'w'"),
    ],
)
def test_builtin_mistakes_are_located(expr: str, message: str) -> None:
    with pytest.raises(CompileError) as info:
        compile_source(f"kernel k() grid 1 threads 32 {{\n  x = {expr}\n}}\n", "k.cute")
    rendered = info.value.render()
    assert rendered.startswith("k.cute:2:"), rendered
    assert message in rendered, rendered
