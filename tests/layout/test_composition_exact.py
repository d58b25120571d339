"""composition stays exact CuTe, and says (LayoutWarning) when CuTe's result is not A o B."""

from __future__ import annotations

import warnings

import pytest

from cutec.layout import Layout, LayoutWarning, composition, logical_divide
from cutec.layout.text import parse_value


@pytest.mark.parametrize(
    ("lhs", "rhs", "expected"),
    [
        # CuTe composes with an integer n as n:_1, also for n == 1 (not make_layout(_1) = _1:_0).
        ("_4:_48", "_1", "_1:_48"),
        ("(_2,_3,_2):(_1,_2,_6)", "_1", "_1:_1"),
        ("(_8,_3,(_8)):(_24,_1,(_3))", "((_2):(_1),_1)", "((_2),_1):((_24),_1)"),
        ("(_4,_2,_6,_2):(_48,_1,_4,_192)", "(_8:_1,_8,_4:_1,_1)", "(_8,_8,_4,_1):(_48,_1,_4,_192)"),
        (
            "(_8,_1,(_4,_4)):(_1,_8,(_8,_32))",
            "(((_2,_8)):((_8,_24)),(_2):(_1),_1)",
            "(((_2,_8)),(_2),_1):(((_8,_24)),(_8),_8)",
        ),
        ("(_6,_4):(_1,_7)", "_4:_4", "(_2,_2):(_4,_7)"),
    ],
)
def test_composition_with_integer_tiler_is_n_stride_1(lhs: str, rhs: str, expected: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LayoutWarning)
        assert str(composition(parse_value(lhs), parse_value(rhs))) == expected


def test_divides_still_use_make_layout_for_integers() -> None:
    assert str(logical_divide(Layout(4, 48), 1)) == "(_1,_4):(_0,_48)"


def test_weak_divisibility_warns_but_keeps_cutes_result() -> None:
    with pytest.warns(LayoutWarning) as record:
        result = composition(Layout((6, 4), (1, 7)), Layout(4, 4))
    assert str(result) == "(_2,_2):(_4,_7)"
    assert len(record) == 1
    assert str(record[0].message) == (
        "composition((6,4):(1,7), 4:4) is not the function composition: at index 2 "
        "CuTe's result gives 7, A(B(2)) = 9 (CuTe's weak divisibility condition)"
    )


@pytest.mark.parametrize(
    ("lhs", "rhs"),
    [
        ("(_4,_8):(_1,_4)", "(_2,_2):(_2,_1)"),
        ("(_6,_4):(_1,_7)", "_3:_2"),
        ("(_8,_16):(_16,_1)", "(_4:_2,_8)"),
        ("_4:_48", "_1"),
    ],
)
def test_exact_compositions_do_not_warn(lhs: str, rhs: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", LayoutWarning)
        composition(parse_value(lhs), parse_value(rhs))


def test_dynamic_and_large_layouts_are_not_checked() -> None:
    from cutec.layout.symbolic import sym

    with warnings.catch_warnings():
        warnings.simplefilter("error", LayoutWarning)
        composition(Layout((6, sym("N", min_value=1)), (1, 7)), Layout(4, 4))
        composition(Layout((6, 4), (1, 7)), Layout((4, 2048), (4, 24)))


def test_cute_source_gets_one_located_warning(capsys, tmp_path) -> None:
    from cutec.cli import main

    src = tmp_path / "weak.cute"
    src.write_text(
        "kernel k(A: f32[M] : (1)) threads 32 {\n"
        "  a = composition((6, 4) : (1, 7), 4 : 4)\n"
        "  b = composition((4, 8) : (1, 4), (2, 2) : (2, 1))\n"
        "}\n"
    )
    assert main(["compile", str(src), "--emit=cute"]) == 0
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ": warning: " in ln]
    assert len(lines) == 1, err
    assert lines[0].startswith(f"{src}:2:7: warning: composition((6,4):(1,7), 4:4) is not")
    assert "error" not in err and "Traceback" not in err
