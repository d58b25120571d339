"""`cutec layout` on bad input: one ``error: ...`` line and exit code 1, quickly; never a
hang, an internal compiler error or a silently accepted layout (issue 26)."""

from __future__ import annotations

import time

import pytest

from cutec.cli import main

FMA = "UniversalFMA_F32F32F32F32"
HUGE = "(10000,10000):(1,10000)"


def _error(capsys, *argv: str) -> str:
    """The one error line of `cutec layout ARGV`, which must exit 1 within a second."""
    start = time.process_time()
    assert main(["layout", *argv]) == 1
    assert time.process_time() - start < 1.0
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err.strip()


@pytest.mark.parametrize("op", ["print_layout", "layout_table", "layout_svg"])
def test_drawing_a_huge_layout_is_refused_not_computed(capsys, op: str) -> None:
    assert _error(capsys, "--op", op, HUGE) == (
        f"error: {op}: a layout's table or picture shows at most 16384 cells; "
        "(_10000,_10000):(_1,_10000) has 100000000"
    )


@pytest.mark.parametrize("atoms", ["(4096,4096,1)", f"({2**70},1,1)"])
def test_a_huge_tiled_mma_prints_without_its_tables(capsys, atoms: str) -> None:
    start = time.process_time()
    assert main(["layout", "--tiled-mma", FMA, "--atoms", atoms]) == 0
    assert time.process_time() - start < 2.0
    out = capsys.readouterr().out
    assert "(table omitted: 16777216 (thread, value) pairs)" in out or (
        f"(table omitted: {2**70} cells)" in out
    )


def test_a_huge_tiled_mma_is_not_drawn(capsys, tmp_path) -> None:
    err = _error(capsys, "--tiled-mma", FMA, "--atoms", "(4096,4096,1)", "--svg", "x.svg")
    assert err == "error: --svg draws tiles of at most 16384 cells; C is 4096x4096"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--op", "shape_div", "4", "0"], "error: shape_div: division by zero: 4 / 0"),
        (
            ["--op", "upcast", "(4,8):(1,4)", "0"],
            "error: upcast<0>: the factor 0 must be a positive static integer",
        ),
        (
            ["--op", "downcast", "(4,8):(1,4)", "0"],
            "error: downcast<0>: the factor 0 must be a positive static integer",
        ),
        (
            ["--op", "recast_layout", "(4,8):(1,4)", "32", "0"],
            "error: recast_layout<32,0>: the factor 0 must be a positive static integer",
        ),
        (
            ["--op", "crd2idx", "(1,2)", "(4,8):(1,4)"],
            "error: crd2idx: 'shape' takes an integer or a tuple of integers, got (4,8):(1,4)",
        ),
        (
            ["--op", "select", "(4,8):(1,4)", "(0,7)"],
            "error: select: 'idx' takes a static integer, got (0,7)",
        ),
        (["--op", "select", "(4,8):(1,4)", "7"], "error: select<7>: no mode 7 in (4,8)"),
        (
            ["--op", "flat_divide", "(4,8):(1,4)", "(-2,2)"],
            "error: flat_divide: shape -2 has a negative extent -2",
        ),
        (["--op", "idx2crd", "--", "-5", "(4,8)"], "error: idx2crd: the index -5 is negative"),
        (
            ["(4,-8):(1,4)"],
            "error: malformed layout text '(4,-8):(1,4)' at column 12: "
            "shape (4,-8) has a negative extent -8",
        ),
        (
            ["--op", "format_layout", "(2,2):(1,2)", "false"],
            "error: format_layout: its parameter 'static_marks' cannot be given on the "
            "command line",
        ),
        (["--op", "size", "(2,2)", "0", "x"], "error: size: 'idx' takes a static integer, got x"),
        (["--op", "stride", "4"], "error: stride: 'layout' takes a layout, got 4"),
        (
            ["--op", "get", "Sw<3,4,3> o 0 o (8,64):(64,1)", "0"],
            "error: get: 'layout' takes a layout, got Sw<3,4,3> o 0 o (8,64):(64,1)",
        ),
        (["--op", "size", "(X,1)"], "error: size: 'x' takes a layout or a swizzled layout or"),
        (
            ["--tiled-copy", "UniversalCopy<uint128_t>", "--thr", "(-32,8)"],
            "error: --thr (-32,8): shape (-32,8) has a negative extent -32",
        ),
    ],
)
def test_mistakes_are_one_clean_line(capsys, argv: list[str], message: str) -> None:
    assert _error(capsys, *argv).startswith(message)


def test_deeply_nested_text_is_refused(capsys) -> None:
    err = _error(capsys, "(" * 5000 + "1" + ")" * 5000)
    assert err.endswith("at column 64: nested more than 64 levels deep")
    assert len(err) < 200


def test_parse_ops_read_the_text_itself(capsys) -> None:
    assert main(["layout", "--op", "parse_layout", "(4,8):(1,4)"]) == 0
    assert capsys.readouterr().out.startswith("(_4,_8):(_1,_4)\n")
    assert main(["layout", "--op", "parse_int_tuple", "(4,(2,M))"]) == 0
    assert capsys.readouterr().out == "(_4,(_2,M))\n"


def test_print_layout_prints_its_table_once(capsys) -> None:
    assert main(["layout", "--op", "print_layout", "(2,2):(1,2)"]) == 0
    out = capsys.readouterr().out
    assert out.count("(_2,_2):(_1,_2)") == 1
    assert " 1  | 1 | 3 |" in out


def test_format_ops_print_their_text(capsys) -> None:
    assert main(["layout", "--op", "format_layout", "(2,2):(1,2)"]) == 0
    assert capsys.readouterr().out == "(_2,_2):(_1,_2)\n"
