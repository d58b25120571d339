"""mbarriers, named barriers and cluster barriers written in .cute, run on the CPU
(cutec/cpu/mbarrier.py, cutec/cpu/warp_barriers.py): a producer warp hands a tile to
a consumer warp through an mbarrier in both backends; the two planted bugs the CPU
reports at their line (a missing init fence, a wait on the wrong initial parity, a
deadlock rather than a hang); a fresh mbarrier's parity 1 passes at once; named
barriers order a producer's stores before consumers' loads; a cluster of one CTA
synchronises (both backends, with the same reports; larger clusters: test_clusters.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import cutec.runtime as rt
from cutec.cli import main
from cutec.cpu import native, reference
from cutec.cpu.reference import AccessError, InterpreterError
from cutec.driver import Options, Source, Stage, compile
from cutec.ir.dialects.builtin import KernelOp

BACKENDS = [reference, native]

HANDOFF = """\
kernel handoff(out: f32[M]) grid 1 threads 64 {
  bars = smem s64[2]
  data = smem f32[32]
  if thread.x == 0 {
    mbarrier_init(bars[0], 32)
    mbarrier_init(bars[1], 1)
    mbarrier_init_fence()
  }
  sync()
  if thread.x < 32 {
    data[thread.x] = 2.0 * f32(thread.x)
    mbarrier_arrive(bars[0])
  } else {
    mbarrier_wait(bars[0], 0)
    out[thread.x - 32] = data[thread.x - 32] + 1.0
  }
}
"""
WAIT_LINE = 14  # mbarrier_wait's line in HANDOFF
ARRIVE_LINE = 12


def _kernel(text: str, file: str, arch: str = "sm_90a") -> KernelOp:
    module = compile(Source(text, file), Stage.THREAD, Options(target=arch)).module
    return next(iter(module.walk_type(KernelOp)))


def _report(kernel: KernelOp, nout: int = 32, backends: list[Any] = BACKENDS) -> str:
    """The error every backend in `backends` raises (the same text)."""
    found = []
    for backend in backends:
        with pytest.raises((AccessError, InterpreterError)) as info:
            backend.run_kernel(kernel, 1, {"out": np.zeros(nout, np.float32), "M": nout})
        found.append(str(info.value))
    assert len(set(found)) == 1, found
    return found[0]


@pytest.mark.parametrize("backend", BACKENDS, ids=["interpreter", "native"])
def test_a_producer_warp_hands_a_tile_to_a_consumer_warp(backend: Any) -> None:
    out = np.zeros(32, np.float32)
    backend.run_kernel(_kernel(HANDOFF, "handoff.cute"), 1, {"out": out, "M": 32})
    assert np.array_equal(out, 2.0 * np.arange(32) + 1.0)


def test_planted_bug_missing_init_fence() -> None:
    """Thread 0 initialises, no fence: the other threads' arrivals are reported at the
    arrive's line (thread 1 is the first that is not thread 0)."""
    text = HANDOFF.replace("    mbarrier_init_fence()\n", "")
    report = _report(_kernel(text, "fence.cute"))
    assert report == (
        f"fence.cute:{ARRIVE_LINE - 1}:5: missing init fence: thread (0, 0, 0) initialised "
        "this mbarrier, and no mbarrier_init_fence() by that thread and barrier came before "
        "this use (byte 0 of shared@fence.cute:2:10) (thread.mbarrier_arrive, thread (1, 0, "
        "0), block (0, 0, 0))"
    )


def test_a_fence_with_no_barrier_after_it_is_reported_too() -> None:
    text = HANDOFF.replace("  sync()\n", "")
    report = _report(_kernel(text, "nosync.cute"))
    assert report.startswith(
        f"nosync.cute:{ARRIVE_LINE - 1}:5: missing barrier after the init fence: thread (0, 0, "
        "0) initialised this mbarrier and fenced it, but no barrier joined it since"
    )


def test_planted_bug_wrong_initial_parity_is_a_deadlock_at_the_wait() -> None:
    """The consumers wait on parity 0 of bars[1], which nobody arrives on: a fresh
    mbarrier's phase 0 never completes. A located deadlock, never a hang."""
    text = HANDOFF.replace("mbarrier_wait(bars[0], 0)", "mbarrier_wait(bars[1], 0)")
    report = _report(_kernel(text, "parity.cute"))
    assert report == (
        f"parity.cute:{WAIT_LINE}:5: deadlock in block (0, 0, 0): no warp can go on: warp 0 "
        "(threads 0..31) finished; warp 1 (threads 32..63) waits on the mbarrier at byte 8 of "
        f"shared@parity.cute:2:10 (for the phase of parity 0) at parity.cute:{WAIT_LINE}:5"
    )


@pytest.mark.parametrize("backend", BACKENDS, ids=["interpreter", "native"])
def test_parity_1_of_a_fresh_mbarrier_passes_at_once(backend: Any) -> None:
    text = HANDOFF.replace("mbarrier_wait(bars[0], 0)", "mbarrier_wait(bars[1], 1)")
    text = text.replace("data[thread.x - 32] + 1.0", "7.0")
    out = np.zeros(32, np.float32)
    backend.run_kernel(_kernel(text, "fresh.cute"), 1, {"out": out, "M": 32})
    assert (out == 7.0).all()


@pytest.mark.parametrize("backend", BACKENDS, ids=["interpreter", "native"])
def test_arrive_and_expect_tx_counts_the_bytes(backend: Any) -> None:
    """With no bytes expected the arrivals complete the phase; with 16 that nothing
    delivers (no TMA here), the consumers wait forever: a deadlock naming the mbarrier."""
    done = HANDOFF.replace("mbarrier_arrive(bars[0])", "mbarrier_arrive_and_expect_tx(bars[0], 0)")
    out = np.zeros(32, np.float32)
    backend.run_kernel(_kernel(done, "tx.cute"), 1, {"out": out, "M": 32})
    assert np.array_equal(out, 2.0 * np.arange(32) + 1.0)
    stuck = done.replace("bars[0], 0)", "bars[0], 16)")
    report = _report(_kernel(stuck, "tx.cute"), backends=[backend])
    assert report.startswith(f"tx.cute:{WAIT_LINE}:5: deadlock in block (0, 0, 0)")
    assert (
        "waits on the mbarrier at byte 0 of shared@tx.cute:2:10 (for the phase of parity 0)"
        in report
    )


def test_the_missing_init_fence_through_cutec_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "fence.cute"
    path.write_text(HANDOFF.replace("    mbarrier_init_fence()\n", ""))
    assert main(["run", str(path), "--device", "cpu", "--set", "M=32"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}:{ARRIVE_LINE - 1}:5: missing init fence: ")


NAMED = """\
kernel named(out: f32[M]) grid 1 threads 128 {
  s = smem f32[64]
  if thread.x >= 64 {
    s[thread.x - 64] = f32(thread.x) + 0.5
    named_barrier_arrive(1, 128)
  } else {
    named_barrier_sync(1, 128)
    out[thread.x] = 2.0 * s[63 - thread.x]
  }
}
"""


@pytest.mark.parametrize("backend", BACKENDS, ids=["interpreter", "native"])
def test_a_named_barrier_orders_producers_before_consumers(backend: Any) -> None:
    """Warps 0-1 wait at barrier 1 until warps 2-3 have stored and arrived (both backends
    run warp 0 first: without the wait its loads read unwritten bytes)."""
    out = np.zeros(64, np.float32)
    backend.run_kernel(_kernel(NAMED, "named.cute"), 1, {"out": out, "M": 64})
    assert np.array_equal(out, 2.0 * (64 + np.arange(63, -1, -1) + 0.5))


def test_named_barriers_run_natively_through_jit() -> None:
    k = rt.jit(NAMED, device="cpu")
    out = np.zeros(64, np.float32)
    k(out)
    assert k.cpu_backend == "native"
    assert np.array_equal(out, 2.0 * (64 + np.arange(63, -1, -1) + 0.5))


def test_without_the_named_barrier_the_stores_race_with_the_loads() -> None:
    text = NAMED.replace("    named_barrier_sync(1, 128)\n", "").replace(
        "    named_barrier_arrive(1, 128)\n", ""
    )
    assert _report(_kernel(text, "n.cute"), 64) == (
        "n.cute:4:5: shared-memory race on byte 0 of shared@n.cute:2:7: store by this "
        "thread, load by thread (63, 0, 0), no barrier between (thread.store, thread (64, 0, "
        "0), block (0, 0, 0))"
    )


def test_named_barrier_misuse() -> None:
    """Too few arrivals are a deadlock naming the barrier; one barrier reached with two
    counts is an error at the second."""
    few = NAMED.replace("named_barrier_arrive(1, 128)", "named_barrier_arrive(2, 128)")
    assert _report(_kernel(few, "few.cute"), 64) == (
        "few.cute:7:5: deadlock in block (0, 0, 0): no warp can go on: warps 0-1 (threads "
        "0..63) wait at named barrier 1 at few.cute:7:5; warps 2-3 (threads 64..127) finished"
    )
    counts = NAMED.replace("named_barrier_arrive(1, 128)", "named_barrier_arrive(1, 96)")
    assert _report(_kernel(counts, "counts.cute"), 64) == (
        "counts.cute:5:5: named barrier 1 is reached with a count of 96 threads while 64 "
        "threads have arrived with a count of 128 (thread.named_barrier_arrive, thread (64, "
        "0, 0), block (0, 0, 0))"
    )


CLUSTER = """\
kernel clustered(out: f32[M]) grid 2 threads 64 cluster (1, 1, 1) {
  s = smem f32[64]
  s[63 - thread.x] = f32(thread.x + 64 * block.x)
  cluster_sync()
  out[64 * block.x + thread.x] = s[thread.x]
}
"""


@pytest.mark.parametrize("backend", BACKENDS, ids=["interpreter", "native"])
def test_a_cluster_of_one_cta_synchronises(backend: Any) -> None:
    out = np.zeros(128, np.float32)
    backend.run_kernel(_kernel(CLUSTER, "cluster.cute"), 2, {"out": out, "M": 128})
    want = np.concatenate([np.arange(63, -1, -1), 64 + np.arange(63, -1, -1)])
    assert np.array_equal(out, want)


PIPELINE = Path(__file__).parent / "data" / "mbarrier_handoff.cute"


def handoff_text(cluster: bool) -> str:
    """tests/cpu/data/mbarrier_handoff.cute with a CTA barrier, or a cluster of one CTA
    and a cluster barrier (sm_90), after the inits (here and on the GPU)."""
    text = PIPELINE.read_text()
    if cluster:
        return text.replace("CLUSTER", "cluster (1, 1, 1)").replace("SYNC", "cluster_sync()")
    return text.replace("CLUSTER", "").replace("SYNC", "sync()")


def handoff_inputs(nt: int) -> tuple[np.ndarray, np.ndarray]:
    """x of `nt` tiles, and the float64 sums y the kernel approximates."""
    x = np.random.default_rng(nt).standard_normal(nt * 64).astype(np.float32)
    return x, (2 * x.reshape(nt, 64).astype(np.float64)).sum(0)


@pytest.mark.parametrize("cluster", [False, True], ids=["sync", "cluster_sync"])
@pytest.mark.parametrize("nt", [1, 5])
def test_the_mbarrier_pipeline_in_cute(cluster: bool, nt: int) -> None:
    """Five tiles: each mbarrier goes through two or three phases, so the parities
    alternate and the producer waits on the consumers' arrivals. Both backends give the
    same bits."""
    x, want = handoff_inputs(nt)
    kernel = _kernel(handoff_text(cluster), "handoff.cute")
    got = []
    for backend in BACKENDS:
        y = np.full(64, np.nan, np.float32)
        backend.run_kernel(kernel, 1, {"x": x, "y": y, "N": x.size})
        assert np.allclose(y, want, rtol=1e-5)
        got.append(y.tobytes())
    assert got[0] == got[1]


def test_a_cluster_wait_without_its_arrive_is_an_error() -> None:
    kernel = _kernel(CLUSTER.replace("cluster_sync()", "cluster_wait()"), "wait.cute")
    assert _report(kernel, 128) == (
        "wait.cute:4:3: cluster_wait without a cluster_arrive before it (thread.cluster_wait, "
        "thread (0, 0, 0), block (0, 0, 0))"
    )
