"""The mbarrier family in PTX (cutec/ptx/mbarrier.py): the producer/consumer pipeline of
tests/cpu/data/mbarrier_pipeline.mlir assembles for every target, its waits are parity
loops (try_wait on sm_90, test_wait on sm_80), and expect_tx is refused before sm_90."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutec.diagnostics import CompileError
from cutec.ir.dialects.builtin import ModuleOp
from cutec.ir.parser import parse_module
from cutec.ir.verifier import verify
from cutec.ptx.ptxas import assemble, find_ptxas
from cutec.target import COMPILE_TARGETS
from tests.ptx.legal import ptx_of

ROOT = Path(__file__).parents[2]
PIPELINE = ROOT / "tests" / "cpu" / "data" / "mbarrier_pipeline.mlir"
ALL_OPS = ROOT / "tests" / "ir" / "roundtrip" / "thread_mbarrier.mlir"
needs_ptxas = pytest.mark.skipif(find_ptxas() is None, reason="no ptxas (install the test extra)")


def _pipeline() -> ModuleOp:
    text = PIPELINE.read_text()
    text = text.replace("PRODUCER_WAIT", "thread.mbarrier_wait %empty, %parity : "
                        "!gpu.ptr<i64, shared>, i32")  # fmt: skip
    text = text.replace("CONSUMER_WAIT", "thread.mbarrier_wait %full, %parity : "
                        "!gpu.ptr<i64, shared>, i32")  # fmt: skip
    module = parse_module(text, "mbarrier_pipeline.mlir")
    verify(module)
    return module


@pytest.mark.parametrize("target", COMPILE_TARGETS)
def test_the_pipeline_emits_mbarrier_instructions(target: str) -> None:
    ptx = ptx_of(_pipeline(), target)
    wait = "try_wait" if target == "sm_90a" else "test_wait"
    assert ptx.count("mbarrier.init.shared.b64 [") == 4
    assert ptx.count(f"mbarrier.{wait}.parity.shared.b64 ") == 2
    assert ptx.count("mbarrier.arrive.shared.b64 ") == 1
    assert ptx.count("cp.async.mbarrier.arrive.noinc.shared.b64 [") == 1
    # each wait loops back to its own label until the phase has completed
    lines = [line.strip() for line in ptx.splitlines()]
    for i, line in enumerate(lines):
        if line.startswith(f"mbarrier.{wait}"):
            label = lines[i - 1].rstrip(":")
            assert lines[i + 1].endswith(f"bra {label};") and lines[i + 1].startswith("@!%p")


@needs_ptxas
@pytest.mark.parametrize("target", COMPILE_TARGETS)
def test_ptxas_accepts_the_pipeline(target: str) -> None:
    result = assemble(ptx_of(_pipeline(), target), target)
    assert result.ok, result.stderr


@needs_ptxas
def test_expect_tx_assembles_on_sm_90_and_is_refused_before() -> None:
    module = parse_module(ALL_OPS.read_text(), "thread_mbarrier.mlir")
    verify(module)
    result = assemble(ptx_of(module, "sm_90a"), "sm_90a")
    assert result.ok, result.stderr
    with pytest.raises(CompileError, match=r"mbarrier\.expect_tx needs sm_90"):
        ptx_of(module, "sm_80")
