"""The `cutec layout` verb."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from cutec.commands import layout_cmd


def _run(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    layout_cmd.add_parser(parser.add_subparsers())
    args = parser.parse_args(["layout", *argv])
    return args.run(args)


def test_prints_layout_and_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run("(4,8):(1,4)") == 0
    out = capsys.readouterr().out
    assert out.startswith("(_4,_8):(_1,_4)\n       0    1 ")
    assert " 3  |  3 |  7 | 11 | 15 | 19 | 23 | 27 | 31 |" in out


def test_op_composition(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run("--op", "composition", "(4,8):(1,4)", "8:2") == 0
    assert capsys.readouterr().out.splitlines()[0] == "_8:_2"


def test_svg(tmp_path: Path) -> None:
    out = tmp_path / "l.svg"
    assert _run("(2,2):(1,2)", "--svg", str(out)) == 0
    assert out.read_text().startswith("<svg") and ">3</text>" in out.read_text()


def test_error_is_reported(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run("--op", "complement", "(2,2):(1,1)") == 1
    assert capsys.readouterr().err.startswith("error: complement of (_2,_2):(_1,_1)")
