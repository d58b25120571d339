"""Planted bugs in the Hopper tutorials, each reported by the CPU backend at its line.

Each case changes one statement of hgemm_tn in examples/wgmma_tma_sm90.cute (TMA +
mbarriers + wgmma) or examples/wgmma_sm90.cute (cp.async + wgmma), runs it on the CPU
at 64x64 tiles (the tutorials' compile-time BM, BN), and checks the one report:

* a missing init fence: the first wait on the barrier, by another thread;
* a wrong initial parity: the consumers wait for a phase that has already completed
  and never completes again, a deadlock at the wait;
* an expect_tx that announces fewer bytes than the TMAs land (a located error at the
  wait), or more (the phase never completes: a deadlock at the wait);
* a missing warpgroup_wait: the accumulators would be read before they land, refused
  at compile time at the batch's commit;
* a missing proxy fence between cp.async's generic writes and the wgmma reading them.

The unmodified kernels compute the right product in the same setting. (An early stage
release, a consumer arriving before its warpgroup_wait, is caught by the CPU's wgmma
model when the stage is rewritten between the issue and the wait,
tests/cpu/test_wgmma.py; the tutorial's producer rewrites it only after every warp of
the warpgroup has waited in the CPU's schedule, so here it runs.)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import cutec
from cutec.cpu.reference import AccessError, InterpreterError
from cutec.diagnostics import CompileError

EXAMPLES = Path(__file__).parents[2] / "examples"
TMA = EXAMPLES / "wgmma_tma_sm90.cute"
CP_ASYNC = EXAMPLES / "wgmma_sm90.cute"
M, N, K = 64, 64, 256


def _mutate(path: Path, old: str, new: str, tmp: Path) -> tuple[Path, str]:
    """`path` with `old` replaced by `new` once in hgemm_tn; the file and its text."""
    text = path.read_text()
    at = text.index("kernel hgemm_tn")
    body = text[at:]
    assert old in body, old
    mutated = text[:at] + body.replace(old, new, 1)
    out = tmp / path.name
    out.write_text(mutated)
    return out, mutated


def _line(text: str, snippet: str) -> int:
    """The line of `snippet`'s first occurrence in hgemm_tn."""
    at = text.index(snippet, text.index("kernel hgemm_tn"))
    return text.count("\n", 0, at) + 1


def _run(path: Path) -> np.ndarray:
    rng = np.random.default_rng(0)
    a = np.ascontiguousarray(rng.standard_normal((M, K)).astype(np.float16))
    b = np.ascontiguousarray(rng.standard_normal((N, K)).astype(np.float16))
    c = np.asfortranarray(np.zeros((M, N), np.float16))
    cutec.jit(path, kernel="hgemm_tn", device="cpu", BM=64, BN=64)(a, b, c, 1.0, 0.0)
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    assert np.linalg.norm(c.astype(np.float64) - ref) / np.linalg.norm(ref) < 1e-2
    return c


@pytest.mark.parametrize("path", [TMA, CP_ASYNC], ids=["tma", "cp_async"])
def test_the_unplanted_tutorial_runs(path: Path) -> None:
    _run(path)


WAIT = "    mbarrier_wait(producer_mbar[read_pipe], read_phase)"
TX = "mbarrier_arrive_and_expect_tx(producer_mbar[pipe], TMA_BYTES"
TX_LOOP = "mbarrier_arrive_and_expect_tx(producer_mbar[write_pipe], TMA_BYTES"
CASES = [
    ("missing init fence", TMA, "    mbarrier_init_fence()\n", "", WAIT,
     "missing init fence: thread (0, 0, 0) initialised this mbarrier, and no "
     "mbarrier_init_fence() by that thread and barrier came before this use"),
    ("wrong initial parity", TMA, "  read_phase = 0\n", "  read_phase = 1\n", WAIT,
     "deadlock in the cluster of blocks (0, 0, 0)..(1, 0, 0): no warp can go on: block "
     "(0, 0, 0): warps 0-3 (threads 0..127) wait on the mbarrier at byte 0 of "
     "dynamic_shared (for the phase of parity 1)"),
    ("expect_tx too small", TMA, TX_LOOP + ")", TX_LOOP + " - 1024)", WAIT,
     "1024 bytes more landed on this mbarrier's phase (of parity 1) than its expect_tx "
     "announced"),
    ("expect_tx too large", TMA, TX + ")", TX + " + 1024)", WAIT,
     "deadlock in the cluster of blocks (0, 0, 0)..(1, 0, 0): no warp can go on: block "
     "(0, 0, 0): warps 0-3 (threads 0..127) wait on the mbarrier at byte 0 of "
     "dynamic_shared (for the phase of parity 0)"),
    ("missing proxy fence", CP_ASYNC, "    fence_view_async_shared()", "   ",
     "    gemm(mma, tCrA", "missing proxy fence: the wgmma reads byte 0 of shared@"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "path", "old", "new", "at", "message"), CASES,
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_a_planted_bug_is_reported_at_its_line(
    name: str, path: Path, old: str, new: str, at: str, message: str, tmp_path: Path
) -> None:
    mutated, text = _mutate(path, old, new, tmp_path)
    with pytest.raises((AccessError, InterpreterError)) as info:
        _run(mutated)
    report = str(info.value)
    assert report.startswith(f"{mutated}:{_line(text, at)}:5: "), report
    assert message in report, report


def test_a_missing_warpgroup_wait_is_refused_at_compile_time(tmp_path: Path) -> None:
    mutated, text = _mutate(TMA, "    warpgroup_wait(0)\n", "", tmp_path)
    with pytest.raises(CompileError) as info:
        _run(mutated)
    (d,) = info.value.diagnostics
    assert d.location.line == _line(text, "    warpgroup_commit_batch()")
    assert "no warpgroup_wait(n) after its batch's warpgroup_commit_batch()" in d.message
