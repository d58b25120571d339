"""`cutec layout --tiled-mma ATOM ...` and `--tiled-copy ATOM ...`: text, SVG, errors."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from cutec.atoms.tiled import make_copy_atom, make_tiled_copy, make_tiled_mma
from cutec.cli import main

MMA = "SM80_16x8x16_F32F16F16F32_TN"
SVG = "{http://www.w3.org/2000/svg}"


def _labels(svg: Path) -> list[list[str]]:
    """The cell labels (T<t>V<v>) of each panel of the picture, in drawing order."""
    root = ET.parse(svg).getroot()
    return [
        [t.text or "" for t in panel.iter(f"{SVG}text") if (t.text or "").startswith("T")]
        for panel in root.findall(f"{SVG}svg")
    ]


def test_tiled_mma_text_is_cutes_print_and_tables(capsys) -> None:
    assert main(["layout", "--tiled-mma", MMA, "--atoms", "(2,2,1)"]) == 0
    out = capsys.readouterr().out
    mma = make_tiled_mma(MMA, (2, 2, 1))
    assert out.startswith(f"{mma}\n\nA: {mma.get_layoutA_TV()} on tile (_32,_16)\n")
    assert f"\nB: {mma.get_layoutB_TV()} on tile (_16,_16)\n" in out
    assert f"\nC: {mma.get_layoutC_TV()} on tile (_32,_16)\n" in out
    rows = [line for line in out.splitlines() if line.startswith(" 0  |")]
    # A(0,0) is held by threads 0 and 64 (the two N atoms): the first, as print_latex.
    assert [r.split("|")[1].strip() for r in rows] == ["T0V0", "T0V0", "T0V0"]
    assert "(up to 2 (thread, value) pairs hold a cell; the first is shown)" in out


def test_tiled_mma_permutation(capsys) -> None:
    argv = ["layout", "--tiled-mma", "UniversalFMA_F32F32F32F32", "--atoms", "(16,16,1)"]
    assert main([*argv, "--permutation", "(32,(16,2):(2,1),_)"]) == 0
    out = capsys.readouterr().out
    assert "PermutationMNK: (_32,(_16,_2):(_2,_1),_)" in out
    assert "C: " in out and "on tile (_32,_32)" in out and "(table omitted" not in out


def test_tiled_mma_svg_draws_a_b_c(capsys, tmp_path: Path) -> None:
    svg = tmp_path / "mma.svg"
    assert main(["layout", "--tiled-mma", MMA, "--atoms", "(2,2,1)", "--svg", str(svg)]) == 0
    out = capsys.readouterr().out
    assert "+---" not in out  # the text form, no tables, when drawing
    root = ET.parse(svg).getroot()
    assert [t.text for t in root.findall(f"{SVG}text")] == ["A", "B", "C"]
    a, b, c = _labels(svg)
    assert (len(a), len(b), len(c)) == (32 * 16, 16 * 16, 32 * 16)  # one label a cell
    assert a[0] == "T0V0" and c[0] == "T0V0"
    # C is held once per cell: its labels are exactly the (thread, value) pairs.
    assert sorted(c) == sorted(f"T{t}V{v}" for t in range(128) for v in range(4))


def test_wgmma_smem_operands_are_left_out(capsys, tmp_path: Path) -> None:
    svg = tmp_path / "wgmma.svg"
    argv = ["layout", "--tiled-mma", "SM90_64x8x16_F32F16F16_SS_TN", "--svg", str(svg)]
    assert main(argv) == 0
    root = ET.parse(svg).getroot()
    assert [t.text for t in root.findall(f"{SVG}text")] == ["C"]


def test_tiled_copy_text_and_svg(capsys, tmp_path: Path) -> None:
    argv = ["layout", "--tiled-copy", "UniversalCopy<uint128_t>", "--thr", "(4,2)"]
    assert main([*argv, "--val", "(4,1)"]) == 0
    out = capsys.readouterr().out
    tc = make_tiled_copy(make_copy_atom("UniversalCopy<uint128_t>", 32), (4, 2), (4, 1))
    assert out.startswith(f"{tc}\n\nS: {tc.get_layoutS_TV()} on tile (_16,_2)\n")
    assert " 4  | T1V0 | T5V0 |" in out and "ValueType:    32b" in out
    svg = tmp_path / "copy.svg"
    argv += ["--val", "(8,1)", "--element", "f16", "--svg", str(svg)]
    assert main(argv) == 0
    assert "ValueType:    16b" in capsys.readouterr().out
    s, d = _labels(svg)
    assert s[:3] == ["T0V0", "T4V0", "T0V1"] and sorted(s) == sorted(d) and len(s) == 32 * 2


def test_ldmatrix_tiled_copy(capsys) -> None:
    argv = ["layout", "--tiled-copy", "SM75_U32x4_LDSM_N", "--thr", "(32,1)", "--val", "(1,8)"]
    assert main([*argv, "--element", "f16"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("TiledCopy\n") and "\nS: " in out and "\nD: " in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--tiled-mma", "UniversalFMA_F32"],
            "error: no MMA atom named 'UniversalFMA_F32'; did you mean UniversalFMA_F32F32F32F32",
        ),
        (["--tiled-mma", "nope"], "error: no MMA atom named 'nope'; `cutec atoms` lists them"),
        (
            ["--tiled-mma", "UniversalCopy<uint128_t>"],
            "error: UniversalCopy<uint128_t> is not an MMA atom: draw it with --tiled-copy",
        ),
        (
            ["--tiled-copy", MMA, "--thr", "(32,8)"],
            f"error: {MMA} is not a copy atom: draw it with --tiled-mma",
        ),
        (
            ["--tiled-copy", "SM90_TMA_LOAD_2D", "--thr", "(32,8)"],
            "error: SM90_TMA_LOAD_2D copies a whole box from one thread: it has no thread tiling",
        ),
        (
            ["--tiled-copy", "UniversalCopy<uint128_t>"],
            "error: --tiled-copy needs --thr, the thread layout, e.g. --thr (32,8)",
        ),
        (["--tiled-mma", MMA, "--atoms", "(2,2"], "error: --atoms (2,2: "),
        (["--tiled-mma", MMA, "--atoms", "(2,_)"], "error: --atoms (2,_): expected a shape"),
        (["--tiled-mma", MMA, "--atoms", "(2,n)"], "error: --atoms (2,n): "),
        (["--tiled-mma", MMA, "--atoms", "(2,2,2,2)"], "error: make_tiled_mma: atom layout"),
        (["--tiled-mma", MMA, "--permutation", "(1,2,3,4)"], "error: make_tiled_mma: a perm"),
        (["--tiled-mma", MMA, "--thr", "(32,8)"], "error: --thr applies to --tiled-copy"),
        (
            ["--tiled-copy", "UniversalCopy<uint128_t>", "--thr", "(32,8)", "--atoms", "(2,2)"],
            "error: --atoms applies to --tiled-mma",
        ),
        (["--tiled-mma", MMA, "--tiled-copy", "x"], "error: give --tiled-mma or --tiled-copy"),
        (["--tiled-mma", MMA, "(4,8):(1,4)"], "error: --tiled-mma and --tiled-copy take no"),
        (["(4,8):(1,4)", "--thr", "(32,8)"], "error: --thr applies to --tiled-mma or --tiled"),
        ([], "error: give a layout, --op NAME with its arguments, or --tiled-mma/-copy"),
        (
            ["--tiled-copy", "UniversalCopy<uint128_t>", "--thr", "(32,8)", "--element", "f7"],
            "error: unknown element type 'f7'; known: f64",
        ),
        (
            ["--tiled-copy", "SM75_U32x4_LDSM_N", "--thr", "(32,1)", "--element", "f16"],
            "error: TiledCopy uses too few vals for SM75_U32x4_LDSM_N",
        ),
        (
            ["--tiled-mma", "UniversalFMA_F32F32F32F32", "--atoms", "(256,256,1)", "--svg", "x"],
            "error: --svg draws tiles of at most 16384 cells; C is 256x256",
        ),
        (
            ["--tiled-mma", MMA, "--svg", "/nonexistent/dir/x.svg"],
            "error: cannot write '/nonexistent/dir/x.svg': No such file or directory",
        ),
    ],
)
def test_mistakes_are_one_line_and_exit_1(capsys, argv: list[str], message: str) -> None:
    assert main(["layout", *argv]) == 1
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert lines[-1].startswith(message), lines
    assert "Traceback" not in captured.err and "internal compiler error" not in captured.err
    if not message.startswith("error: cannot write"):
        assert len(lines) == 1 and captured.out == ""


def test_help_describes_the_tiled_flags(capsys) -> None:
    assert main(["layout", "--help"]) == 0
    out = capsys.readouterr().out
    for flag in ("--tiled-mma ATOM", "--atoms LAYOUT", "--permutation TILERS", "--tiled-copy"):
        assert flag in out
    assert "--thr LAYOUT" in out and "--val LAYOUT" in out and "--element TYPE" in out
