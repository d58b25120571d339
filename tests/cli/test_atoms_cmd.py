"""`cutec atoms`: the listing, `show NAME`, `--svg`, and unknown names.

The verb is reached through `cutec.cli.main` once "atoms_cmd" is in COMMANDS; until
then these tests build the same parser from `atoms_cmd.add_parser`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import pytest

from cutec import cli
from cutec.commands import atoms_cmd


def _main(argv: Sequence[str]) -> int:
    if "atoms_cmd" in cli.COMMANDS:
        return cli.main(list(argv))
    parser = argparse.ArgumentParser(prog="cutec")
    atoms_cmd.add_parser(parser.add_subparsers())
    args = parser.parse_args(list(argv))
    return int(args.run(args))


def test_listing_groups_wgmma_over_n(capsys: pytest.CaptureFixture[str]) -> None:
    assert _main(["atoms"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("MMA atoms (1174)\nNAME")
    rows = [line.split()[0] for line in out.splitlines() if line and line[0].isupper()]
    assert "SM80_16x8x16_F32F16F16F32_TN" in rows and "SM75_U32x4_LDSM_N" in rows
    assert "SM90_64xNx16_F32F16F16_SS_TN" in rows and "SM90_64x128x16_F32F16F16_SS_TN" not in rows
    line = next(x for x in out.splitlines() if x.startswith("SM90_64xNx8_F32TF32TF32_SS_TN "))
    assert "N=8..256 step 8 (32 atoms)" in line and "wgmma, warpgroup" in line
    assert "SM90_TMA_STORE_5D" in rows and "Copy atoms (35)" in out
    assert len(out.splitlines()) < 120  # the 1152 wgmma rows are 36 groups


def test_listing_all_has_every_atom(capsys: pytest.CaptureFixture[str]) -> None:
    assert _main(["atoms", "--all"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("SM90_64x")]
    assert len(rows) == 1152
    assert any(
        r.split()[:3] == ["SM90_64x256x16_F16F16F16_RS_TT", "sm_90a", "64x256x16"] for r in rows
    )


def test_show_mma_prints_cute_form_and_tables(capsys: pytest.CaptureFixture[str]) -> None:
    assert _main(["atoms", "show", "SM80_16x8x16_F32F16F16F32_TN"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        "MMA_Atom\n"
        "  ThrID:      _32:_1\n"
        "  Shape_MNK:  (_16,_8,_16)\n"
        "  LayoutA_TV: ((_4,_8),(_2,_2,_2)):((_32,_1),(_16,_8,_128))\n"
    )
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 $d, $a, $b, $c;" in out
    # print_layout of LayoutC_TV: thread 1 (row 1) holds values at 32 and 48 in column 0, 1.
    table = out[out.index("LayoutC_TV: ((_4") :]
    assert " 1  |  32 |  48 |  40 |  56 |" in table


def test_show_copy_and_svg(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    svg = tmp_path / "ldsm.svg"
    assert _main(["atoms", "show", "SM75_U32x4_LDSM_N", "--svg", str(svg)]) == 0
    out = capsys.readouterr().out
    assert "  SrcLayout: (_32,_128):(_128,_1)\n" in out
    assert "  DstLayout: (_32,(_32,_4)):(_32,(_1,_1024))\n" in out
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16 $d, $src;" in out
    text = svg.read_text()
    assert text.startswith("<svg") and ">Src (16b values)<" in text and "T31V7" in text


def test_show_mma_svg_draws_a_b_c(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    svg = tmp_path / "mma.svg"
    assert _main(["atoms", "show", "SM80_16x8x8_F16F16F16F16_TN", "--svg", str(svg)]) == 0
    text = svg.read_text()
    assert all(f">{op}<" in text for op in "ABC") and "T31V3" in text
    wgmma = tmp_path / "wgmma.svg"
    assert _main(["atoms", "show", "SM90_64x8x16_F16F16F16_SS_TN", "--svg", str(wgmma)]) == 0
    text = wgmma.read_text()
    assert ">C<" in text and ">A<" not in text  # A and B are shared-memory descriptors


def test_tma_needs_bits(capsys: pytest.CaptureFixture[str]) -> None:
    assert _main(["atoms", "show", "SM90_TMA_LOAD_2D"]) == 1
    assert "give --bits" in capsys.readouterr().err
    assert _main(["atoms", "show", "SM90_TMA_LOAD_2D", "--bits", "8192"]) == 0
    assert "(table omitted: 8192 cells)" in capsys.readouterr().out


def test_unknown_name_suggests_close_matches(capsys: pytest.CaptureFixture[str]) -> None:
    assert _main(["atoms", "show", "SM80_16x8x16_F32F16F16_TN"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: no atom named 'SM80_16x8x16_F32F16F16_TN'; did you mean ")
    assert "SM80_16x8x16_F32F16F16F32_TN" in err
    assert _main(["atoms", "show", "ldmatrix_x4"]) == 1
    assert "`cutec atoms` lists them" in capsys.readouterr().err


def test_show_needs_a_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert _main(["atoms", "show"]) == 1
    assert capsys.readouterr().err == "error: `cutec atoms show` needs an atom name\n"
