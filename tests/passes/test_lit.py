"""IR text tests: each lit/*.mlir names the `cutec opt` flags on its RUN line and
states the expected output with FileCheck directives (CHECK, CHECK-NEXT, ...)."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cutec.cli import main

CASES = sorted((Path(__file__).parent / "lit").glob("*.mlir"))


def _run_line(path: Path) -> list[str]:
    for line in path.read_text().splitlines():
        if line.startswith("// RUN: cutec "):
            return shlex.split(line[len("// RUN: cutec ") :].replace("%s", str(path)))
    raise AssertionError(f"{path.name} has no '// RUN: cutec' line")


def _filecheck() -> list[str]:
    exe = shutil.which("filecheck")
    if exe is None:
        candidate = Path(sys.executable).parent / "filecheck"
        exe = str(candidate) if candidate.exists() else None
    if exe is None:
        pytest.skip("filecheck is not installed (pip install -e '.[test]')")
    return [exe]


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.name)
def test_lit(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_run_line(path)) == 0, capsys.readouterr().err
    output = capsys.readouterr().out
    check = subprocess.run([*_filecheck(), str(path)], input=output, capture_output=True, text=True)
    assert check.returncode == 0, f"FileCheck failed:\n{check.stdout}{check.stderr}\n{output}"
