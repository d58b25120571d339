"""PTX of TMA loads written in the language: ptxas assembles the TMA tutorial
(examples/wgmma_tma_sm90.cute) and the tile kernels of tests/cpu/data/tma_tile.cute
for sm_90a, one cp.async.bulk.tensor per box (the MN-major 128-byte swizzled tile of
(128, 64) takes 16 boxes of (64, 8); the K-major one a single box), the tutorial's
mainloop runs HGMMA and no HMMA, with no ptxas performance warning."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutec.driver import Options, Source, Stage, compile
from tests.ptx.sass_check import assert_sass, needs_disassembler

ROOT = Path(__file__).parents[2]
TUTORIAL = ROOT / "examples" / "wgmma_tma_sm90.cute"
TILE = ROOT / "tests" / "cpu" / "data" / "tma_tile.cute"
TMA = "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"


@pytest.mark.parametrize(("kernel", "boxes"), [("hgemm_nt", 16), ("hgemm_tn", 1)])
def test_the_tutorial_loads_each_tile_in_cutes_boxes(kernel: str, boxes: int) -> None:
    result = compile(
        Source.from_file(TUTORIAL), Stage.CUBIN, Options(target="sm_90a", kernel=kernel)
    )
    assert result.ptx is not None and result.cubin
    # BP = 3 stages of A and B in the prologue, one of each in the mainloop
    assert result.ptx.count(TMA) == (3 + 1) * 2 * boxes
    assert "cvta.param.u64" in result.ptx
    assert ".param .align 64 .b8" in result.ptx


@needs_disassembler
@pytest.mark.parametrize("kernel", ["hgemm_nt", "hgemm_tn"])
def test_the_tutorial_runs_hgmma_without_a_ptxas_warning(kernel: str) -> None:
    result = compile(
        Source.from_file(TUTORIAL), Stage.CUBIN, Options(target="sm_90a", kernel=kernel)
    )
    assert result.warnings == []
    ops = assert_sass(result.cubin, contains={"HGMMA", "UTMALDG"}, absent={"HMMA"}, kernel=kernel)
    assert ops["HGMMA"] == 16  # 2 x 2 tiles of 64x64 by 4 k-blocks of 16


@pytest.mark.parametrize(
    ("kernel", "boxes"), [("tile_k_sw128", 1), ("tile_mn_sw128", 4), ("tile_plain", 1)]
)
def test_tile_kernels_assemble(kernel: str, boxes: int) -> None:
    result = compile(Source.from_file(TILE), Stage.CUBIN, Options(target="sm_90a", kernel=kernel))
    assert result.ptx is not None and result.cubin
    assert result.ptx.count(TMA) == boxes


def test_tma_stores_assemble_with_their_bulk_group() -> None:
    store = ROOT / "tests" / "cpu" / "data" / "tma_store_tile.cute"
    result = compile(Source.from_file(store), Stage.CUBIN, Options(target="sm_90a"))
    assert result.ptx is not None and result.cubin
    ptx = result.ptx
    assert ptx.count("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group") == 4
    fence, commit = ptx.index("fence.proxy.async.shared::cta;"), ptx.index("commit_group;")
    assert fence < ptx.index("bar.sync 0;") < commit < ptx.index("wait_group.read 0;")
