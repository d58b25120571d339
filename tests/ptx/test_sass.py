"""The SASS check of CPU CI (cutec.ptx.sass, tests/ptx/sass_check.py): ptxas assembles,
nvdisasm disassembles, and a kernel's opcodes are what its PTX meant."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutec.driver import Options, Source, Stage, compile
from cutec.ptx.ptxas import assemble, find_ptxas
from cutec.ptx.sass import sass_instructions
from tests.ptx import ptxas_cases as cases
from tests.ptx.sass_check import assert_sass, needs_disassembler

pytestmark = [
    pytest.mark.skipif(find_ptxas() is None, reason="no ptxas (install the test extra)"),
    needs_disassembler,
]

EXAMPLES = Path(__file__).parents[2] / "examples"


@pytest.fixture(scope="module")
def hgemm_sm80() -> bytes:
    source = Source.from_file(EXAMPLES / "hgemm_pipeline_pass.cute")
    result = compile(source, Stage.CUBIN, Options(target="sm_80"))
    assert result.cubin is not None
    return result.cubin


def test_mma_sync_is_hmma(hgemm_sm80: bytes) -> None:
    ops = assert_sass(
        hgemm_sm80, contains={"HMMA", "LDSM", "LDGSTS"}, absent={"HGMMA"}, kernel="hgemm_tn"
    )
    # One k-tile's: 128x128x64 / (16x8x16 per HMMA) / 4 warps (the k-loop is not unrolled).
    assert ops["HMMA"] == 128


def test_a_wrong_expectation_fails_naming_the_opcodes(hgemm_sm80: bytes) -> None:
    with pytest.raises(AssertionError, match=r"missing \['HGMMA'\], present \['HMMA'\]"):
        assert_sass(hgemm_sm80, contains={"HGMMA"}, absent={"HMMA"}, kernel="hgemm_tn")
    with pytest.raises(KeyError, match="no function 'hgemm_nt'"):
        assert_sass(hgemm_sm80, kernel="hgemm_nt")


def test_wgmma_is_hgmma() -> None:
    ptx = cases.module("k.cute", cases.injected("k"))
    cubin = assemble(ptx, "sm_90a").cubin
    assert_sass(cubin, contains={"HGMMA", "WARPGROUP"}, absent={"HMMA"}, kernel="k")
    assert sass_instructions(cubin)["k"].count("HGMMA.64x8x16.F32") == 2
