"""The algebra refuses arguments CuTe would not compile, with a LayoutError, never a
Python error from inside (ZeroDivisionError, IndexError, a zip of unequal lengths) and
never a silent answer (issue 26)."""

from __future__ import annotations

import pytest

from cutec.layout import (
    ComposedLayout,
    Layout,
    LayoutError,
    Swizzle,
    X,
    compact_col_major,
    compact_order,
    composition,
    crd2idx,
    downcast,
    elem_scale,
    flat_divide,
    get,
    group_modes,
    idx2crd,
    layout_svg,
    layout_table,
    left_inverse,
    parse_int_tuple,
    parse_layout,
    print_layout,
    recast_layout,
    select,
    shape_div,
    size,
    slice_and_offset,
    tv_layout_svg,
    upcast,
)
from cutec.layout.text import MAX_NESTING, format_int_tuple, parse_value
from cutec.layout.visual import MAX_CELLS

L48 = Layout((4, 8), (1, 4))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: Layout((4, -8), (1, 4)), "shape (4,-8) has a negative extent -8"),
        (lambda: flat_divide(L48, (-2, 2)), "shape -2 has a negative extent -2"),
        (lambda: shape_div(4, 0), "shape_div: division by zero: 4 / 0"),
        (lambda: shape_div((4, 8), 0), "shape_div: division by zero"),
        (lambda: upcast(L48, 0), "upcast<0>: the factor 0 must be a positive static integer"),
        (lambda: upcast(L48, -2), "upcast<-2>: the factor -2 must be"),
        (lambda: downcast(L48, 0), "downcast<0>: the factor 0 must be"),
        (lambda: recast_layout(L48, 32, 0), "recast_layout<32,0>: the factor 0 must be"),
        (lambda: recast_layout(L48, 0, 16), "recast_layout<0,16>: the factor 0 must be"),
        (lambda: upcast((4, 8), 2), "upcast<2> needs a layout or a swizzle, got (4, 8)"),
        (lambda: idx2crd(-5, (4, 8)), "idx2crd: the index -5 is negative"),
        (lambda: idx2crd((1, 2, 3), (4, 8)), "idx2crd: index (1,2,3) does not match shape"),
        (lambda: idx2crd(3, 8, (1, 2)), "idx2crd: shape 8 and stride (1,2) differ in rank"),
        (lambda: crd2idx((1, 2), (4, 8), (1,)), "crd2idx: shape (4, 8) and stride (1,)"),
        (lambda: crd2idx(0, ((2, 2), (2, 2)), 8), "crd2idx: shape ((2, 2), (2, 2)) and stride 8"),
        (lambda: select(L48, 7), "select<7>: no mode 7 in (4,8)"),
        (lambda: get(L48, -1), "get<-1>: index out of range for (4,8)"),
        (lambda: size(L48, -1), "get<-1>: index out of range for (4,8)"),
        (lambda: group_modes(L48, 0, 5), "group<0,5>: out of range for (4,8)"),
        (lambda: compact_order(4, (4, 8)), "compact_order: the order (4,8) does not match"),
        (lambda: compact_col_major(1000, ((2, 2), (2, 2))), "compact: (1000) and ((2,2),(2,2))"),
        (lambda: elem_scale(((2, 2), (2, 2)), (1, 2, 3)), "elem_scale: ((2,2),(2,2)) and (1,2,3)"),
        (lambda: slice_and_offset((1, 1, 1), L48), "slice_and_offset: (1,1,1) and (4,8)"),
        (lambda: composition(4, (1, 2)), "tiler (1,2) applies to a layout, not 4"),
        (lambda: left_inverse(X), "the inverse of X: not a layout"),
        (lambda: ComposedLayout(1, 0, L48), "A o O o B: A must be a layout or a swizzle, got 1"),
        (lambda: ComposedLayout(L48, (1, 2), L48), "the offset O must be an integer"),
    ],
)
def test_bad_arguments_are_layout_errors(call, message: str) -> None:
    with pytest.raises(LayoutError) as err:
        call()
    assert message in str(err.value)


def test_zero_extents_and_negative_strides_are_still_layouts() -> None:
    # Only negative extents are refused: an empty mode and a reversed mode are CuTe's.
    assert Layout((0, 8), (1, 4)).size() == 0
    assert Layout(4, -1)(3) == -3


@pytest.mark.parametrize("draw", [print_layout, layout_table, layout_svg])
def test_huge_layouts_are_refused_before_drawing(draw) -> None:
    with pytest.raises(LayoutError) as err:
        draw(Layout((10000, 10000), (1, 10000)))
    assert f"shows at most {MAX_CELLS} cells" in str(err.value)
    assert "has 100000000" in str(err.value)


def test_huge_tv_layouts_are_refused_before_drawing() -> None:
    with pytest.raises(LayoutError, match=f"shows at most {MAX_CELLS} cells"):
        tv_layout_svg(Layout((4096, 4096), (1, 0)), (4096, 1))


def test_small_layouts_still_draw() -> None:
    assert layout_table(L48).splitlines()[0] == "(_4,_8):(_1,_4)"
    assert layout_svg(L48).startswith("<svg")


@pytest.mark.parametrize("read", [parse_value, parse_layout, parse_int_tuple])
def test_deep_nesting_is_refused_not_recursed(read) -> None:
    text = "(" * 5000 + "1" + ")" * 5000
    with pytest.raises(LayoutError) as err:
        read(text)
    message = str(err.value)
    assert f"nested more than {MAX_NESTING} levels deep" in message
    assert len(message) < 200  # the text is elided, not repeated


def test_nesting_up_to_the_limit_reads() -> None:
    text = "(" * MAX_NESTING + "1" + ")" * MAX_NESTING
    assert format_int_tuple(parse_value(text)) == text.replace("1", "_1")


def test_deep_expressions_are_refused_not_recursed() -> None:
    with pytest.raises(LayoutError, match="nested more than 64 levels deep"):
        parse_value("-" * 5000 + "M")
    with pytest.raises(LayoutError, match="nested more than 64 levels deep"):
        parse_value("(4," + "(" * 200 + "M" + ")" * 200 + ")")
    assert format_int_tuple(parse_value("(4,--M)")) == "(_4,M)"


def test_a_swizzled_vector_draws_as_one_column() -> None:
    # A rank-1 swizzled layout once crashed the table (a ComposedLayout has no stride).
    table = layout_table(ComposedLayout(Swizzle(1, 0, 1), 0, Layout(4, 1)))
    cells = [line.split("|")[1].strip() for line in table.splitlines() if "|" in line]
    assert cells == ["0", "1", "3", "2"]
