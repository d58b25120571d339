"""Dynamic leaves give the static answer after substitution; errors are LayoutErrors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutec.layout import (
    ComposedLayout,
    DynamicValueError,
    Layout,
    LayoutError,
    Swizzle,
    coalesce,
    complement,
    composition,
    left_inverse,
    local_tile,
    logical_divide,
    logical_product,
    parse_layout,
    print_layout,
    shape_div,
    size,
    tile_to_shape,
    upcast,
    zipped_divide,
)
from cutec.layout import inttuple as it
from cutec.layout.divisors import watch_divisors
from cutec.layout.symbolic import evaluate, sym
from cutec.layout.text import format_layout


# No deadline: the symbolic evaluation of every index takes ~0.1 s, over 0.2 s on a busy machine.
@settings(deadline=None)
@given(st.sampled_from([1, 2, 4, 8]), st.integers(1, 6), st.integers(1, 9))
def test_dynamic_rest_mode_equals_static_after_substitution(tile: int, m: int, k: int) -> None:
    mm, ld = sym("M", divisibility=tile), sym("ld")
    dyn = zipped_divide(Layout((mm, k), (1, ld)), (tile,))
    env = {"M": m * tile, "ld": m * tile + 3}
    static = zipped_divide(Layout((m * tile, k), (1, m * tile + 3)), (tile,))
    assert size(dyn).subs(env) == size(static)
    for i in range(size(static)):
        assert evaluate(dyn(i), env) == static(i)


def test_dynamic_leaves_print_as_cute_prints_run_time_ints() -> None:
    layout = logical_divide(Layout(sym("N"), 1), 128)
    assert str(layout) == "(_128,ceil_div(N,128)):(_1,_128)"
    assert format_layout(layout, env={"N": 1024}) == "(_128,8):(_1,_128)"


def test_coalesce_does_not_merge_what_it_cannot_prove() -> None:
    m = sym("M")
    assert str(coalesce(Layout((m, 4), (1, m)))) == "(M,_4):(_1,M)"
    assert str(coalesce(Layout((4, m), (1, 4)))) == "(_4,M):(_1,_4)"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: complement(Layout((2, 2), (1, 1))), r"complement of \(_2,_2\):\(_1,_1\)"),
        (lambda: composition(Layout((4, 3), (1, 5)), Layout(2, 6)), "composition of"),
        (lambda: shape_div(6, 4), "shape_div"),
        (lambda: left_inverse(Layout((2, 4), (3, 4))), "left_inverse"),
        (lambda: parse_layout("(4,8):(1,4"), "malformed layout text"),
        (lambda: parse_layout("(4,8):(1,4,2)"), "not congruent"),
        (lambda: Layout((4, 8), 1), "not congruent"),
        (lambda: logical_divide(Layout(6, 1), (2, 2)), "more modes"),
        (lambda: upcast(Layout((4, 3), (1, 3)), 2), "upcast<2>"),
        (lambda: print_layout(Layout((2, 2, 2))), "rank-2"),
        (lambda: Swizzle(3, 4, 2), "Sw<3,4,2>"),
        # A zero extent: CuTe's static divisibility check divides by it (no compile);
        # found by fuzzing, it was a ZeroDivisionError (an internal error).
        (lambda: composition(Layout((64, 8), (1, 128)), Layout((16, 0), (1, 16))), "zero-extent"),
        (lambda: tile_to_shape(Layout((8, 8)), (128, 64, 0)), r"\(128,64,0\) has a zero extent"),
    ],
)
def test_impossible_operations_raise_layout_error(call, message: str) -> None:
    with pytest.raises(LayoutError, match=message):
        call()


def test_complement_with_several_dynamic_strides_is_a_dynamic_value_error() -> None:
    with pytest.raises(DynamicValueError):
        complement(Layout((2, 2), (sym("a"), sym("b"))))


def test_swizzle_function_and_composition() -> None:
    sw = Swizzle(3, 4, 3)
    assert sw(0b1_0000_0000) == 0b1_0000_0000 ^ 0b0001_0000 * 2
    assert [Swizzle(1, 0, 1)(i) for i in range(4)] == [0, 1, 3, 2]
    c = composition(sw, Layout((8, 64), (64, 1)))
    assert isinstance(c, ComposedLayout)
    assert str(c) == "Sw<3,4,3> o _0 o (_8,_64):(_64,_1)"
    assert c(1, 0) == sw(64)
    assert str(parse_layout(str(c))) == str(c)
    assert (
        str(zipped_divide(c, (8, 16))) == "Sw<3,4,3> o _0 o ((_8,_16),(_1,_4)):((_64,_1),(_0,_16))"
    )


def test_local_tile_offset_and_projection() -> None:
    from cutec.layout import X, local_tile_and_offset

    tile, offset = local_tile_and_offset(
        Layout((1024, 512), (1, 1024)), (128, 128, 8), (2, 3, None), (1, X, 1)
    )
    assert (str(tile), offset) == ("(_128,_8,_64):(_1,_1024,_8192)", 256)
    assert str(local_tile(Layout((64, 64)), (16, 16), (1, 1))) == "(_16,_16):(_1,_64)"


def test_print_layout_matches_cute(capsys: pytest.CaptureFixture[str]) -> None:
    print_layout(Layout((2, 3), (3, 1)))
    assert capsys.readouterr().out == (
        "(_2,_3):(_3,_1)\n"
        "      0   1   2 \n"
        "    +---+---+---+\n"
        " 0  | 0 | 1 | 2 |\n"
        "    +---+---+---+\n"
        " 1  | 3 | 4 | 5 |\n"
        "    +---+---+---+\n"
    )


def test_a_swizzle_wider_than_cutes_int_masks_is_an_error() -> None:
    # Found by fuzzing: swizzle(3, 3, 1000000007) built gigabit masks for seconds.
    assert Swizzle(3, 4, 24).size() == 1 << 31
    with pytest.raises(LayoutError, match=r"B \+ M \+ \|S\| must be at most 31"):
        Swizzle(3, 3, 1000000007)


def test_product_of_dynamic_block_matches_cute_after_substitution() -> None:
    # CuTe's complement of (d0,d1,d2):(_3,_1,_1) divides static strides by dynamic ones
    # (1/d1, 3/d2); the product's composition then divides by those quotients, which may be
    # 0 by the facts alone but are assumed non-zero (CuTe divides by them at run time).
    d = [sym(f"d{i}") for i in range(3)]
    product = logical_product(Layout(tuple(d), (3, 1, 1)), Layout(2, 6))
    env = {"d0": 3, "d1": 1, "d2": 3}
    assert format_layout(product, env=env) == "((3,1,3),(1,1,2)):((_3,_1,_1),(6,18,54))"


def test_watch_divisors_notes_the_dynamic_divisors_that_may_be_zero() -> None:
    m = sym("M")
    with watch_divisors() as seen:
        it.idiv(8, m)  # M >= 1: never 0, not noted
        it.ceil_div_leaf(3, 4 // m)  # 4//M is 0 for M > 4: noted
        it.idiv(0, 4 // m)  # CuTe's _0 / x is the static _0: no division
        it.imod(m, 2 // m)
    assert seen == [4 // m, 2 // m]
    it.idiv(1, 4 // m)  # outside a watch: nothing to note, no error
    assert seen == [4 // m, 2 // m]
