"""TMA loads at thread level to PTX: a kernel's tensor maps are `.param .align 64 .b8
[128]` parameters after its arguments, `thread.tensor_map` their generic address
(cvta.param), and a TMA atom's `thread.atom` the cp.async.bulk.tensor that reads
through it. tests/ptx/data/tma_tile.mlir is the kernel tests/runtime/launch_ptx.py
writes by hand (its launch record fits both); the GPU test launches both."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutec.diagnostics import CompileError
from cutec.driver import Options, Source, Stage, compile
from cutec.ptx.ptxas import find_ptxas

TMA_TILE = Path(__file__).parent / "data" / "tma_tile.mlir"


def tma_tile_ptx() -> str:
    """The PTX cutec writes for tests/ptx/data/tma_tile.mlir (sm_90a)."""
    result = compile(Source.from_file(TMA_TILE), Stage.PTX, Options(target="sm_90a"))
    assert result.ptx is not None
    return result.ptx


def test_a_tensor_map_is_a_param_after_the_arguments() -> None:
    ptx = tma_tile_ptx()
    params = [line.strip() for line in ptx.splitlines() if line.strip().startswith(".param")]
    assert len(params) == 7
    assert params[-1] == ".param .align 64 .b8 tma_tile_param_6[128]"
    assert "mov.b64 %rd14, tma_tile_param_6;" in ptx
    load = next(line for line in ptx.splitlines() if "cp.async.bulk.tensor" in line).split()
    assert load[0] == "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"


@pytest.mark.skipif(find_ptxas() is None, reason="no ptxas (install the test extra)")
def test_the_tma_kernel_assembles() -> None:
    result = compile(Source.from_file(TMA_TILE), Stage.CUBIN, Options(target="sm_90a"))
    assert result.cubin is not None and result.warnings == []


def _with(text: str, old: str, new: str) -> Source:
    assert old in text
    return Source.from_file("k.mlir", text.replace(old, new))


def test_an_unlisted_map_is_a_located_error() -> None:
    source = _with(TMA_TILE.read_text(), 'thread.tensor_map "A_map"', 'thread.tensor_map "B_map"')
    with pytest.raises(CompileError, match=r"no tensor map 'B_map'.*'A_map'"):
        compile(source, Stage.PTX, Options(target="sm_90a"))


@pytest.mark.parametrize(
    ("maps", "message"),
    [('["M", "M"]', "distinct identifiers"), ('["M"]', "reuses argument names")],
)
def test_the_tensor_maps_attribute_is_checked(maps: str, message: str) -> None:
    text = TMA_TILE.read_text().replace('"A_map" : i64', '"M" : i64')
    source = _with(text, 'tensor_maps = ["A_map"]', f"tensor_maps = {maps}")
    with pytest.raises(CompileError, match=message):
        compile(source, Stage.PTX, Options(target="sm_90a"))


def test_a_tensor_map_for_sm80_is_a_located_error() -> None:
    text = TMA_TILE.read_text().replace('target = "sm_90a"', 'target = "sm_80"')
    with pytest.raises(CompileError) as info:
        compile(Source.from_file("k.mlir", text), Stage.PTX, Options(target="sm_80"))
    assert "k.mlir:" in info.value.render()
