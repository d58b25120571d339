"""`cutec compile` prints ptxas's performance warnings located in the source, wherever it
runs the cubin stage, and they leave the exit code 0. cutec emits no wgmma yet, so the
emitter is stood in for by PTX that ptxas serialises (tests/ptx/ptxas_cases.py), whose
.loc lines name the compiled file."""

from __future__ import annotations

from pathlib import Path

import pytest

import cutec.driver as driver
from cutec.cli import main
from cutec.ptx.ptxas import find_ptxas
from tests.ptx import ptxas_cases as cases

pytestmark = pytest.mark.skipif(find_ptxas() is None, reason="no ptxas (install the test extra)")

TRANSPOSE = Path(__file__).parents[2] / "examples" / "transpose.cute"


@pytest.fixture
def serialising(monkeypatch: pytest.MonkeyPatch) -> str:
    """The emitter writes, for transpose.cute, a kernel whose wgmma ptxas serialises."""
    ptx = cases.module(str(TRANSPOSE), cases.serialised("transpose"))
    monkeypatch.setattr(driver, "emit_ptx", lambda module, target: ptx)
    return ptx


@pytest.mark.parametrize(
    "flags",
    [
        ["-o", "k.cubin"],
        ["--emit=cubin", "-o", "k.cubin"],
        ["--resource-usage", "-o", "k.ptx"],
        ["--resource-usage", "--emit=cute", "-o", "k.mlir"],
    ],
)
def test_the_cubin_stage_prints_them(
    serialising: str, flags: list[str], capsys, tmp_path: Path
) -> None:
    flags = [str(tmp_path / f) if f.startswith("k.") else f for f in flags]
    assert main(["compile", str(TRANSPOSE), *flags]) == 0
    err = capsys.readouterr().err.splitlines()
    decl, moved = (f"{TRANSPOSE}:{line}:{col}" for line, col in (cases.DECLARED, cases.MOVED))
    assert err[:3] == [
        f"{decl}: warning: kernel 'transpose': ptxas (C7511) Potential Performance Loss: "
        "wgmma.mma_async instructions are serialized due to insufficient register resources "
        "for the wgmma pipeline",
        "kernel transpose[B: int = 32](S: f32[M, N], D: f32[N, M])",
        "^",
    ]
    assert err[3].startswith(f"{moved}: note: ptxas (C7519) warpgroup.arrive is injected")
    assert Path(flags[-1]).stat().st_size > 0  # the output is written all the same


def test_ptx_alone_runs_no_ptxas(serialising: str, capsys, tmp_path: Path) -> None:
    assert main(["compile", str(TRANSPOSE), "-o", str(tmp_path / "k.ptx")]) == 0
    assert capsys.readouterr().err == ""
    assert (tmp_path / "k.ptx").read_text() == serialising
