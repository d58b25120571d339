"""mbarriers on the CPU (cutec/cpu/mbarrier.py, both backends): a hand-written thread-IR
kernel with one producer warp and two consumer warps synchronised by mbarriers
(tests/cpu/data/mbarrier_pipeline.mlir) runs to the right answer; the same kernel
with one wait removed is caught (a report with the checks on, a deadlock without);
an mbarrier nothing completes is a deadlock report naming it; the phase, parity
and transaction-count rules on their own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cutec.cpu import native, reference
from cutec.cpu.mbarrier import MbarrierError, Mbarriers
from cutec.cpu.reference import AccessError, InterpreterError
from cutec.ir.core import VerifyError
from cutec.ir.dialects.builtin import KernelOp
from cutec.ir.parser import parse_module
from cutec.ir.verifier import verify

PIPELINE = Path(__file__).parent / "data" / "mbarrier_pipeline.mlir"
PRODUCER_WAIT = "thread.mbarrier_wait %empty, %parity : !gpu.ptr<i64, shared>, i32"
CONSUMER_WAIT = "thread.mbarrier_wait %full, %parity : !gpu.ptr<i64, shared>, i32"
BACKENDS = [reference, native]


def _kernel(text: str, file: str = "mb.mlir") -> KernelOp:
    module = parse_module(text, file)
    verify(module)
    (kernel,) = module.walk_type(KernelOp)
    return kernel


def _pipeline(producer_wait: str = PRODUCER_WAIT, consumer_wait: str = CONSUMER_WAIT
              ) -> KernelOp:  # fmt: skip
    text = PIPELINE.read_text().replace("PRODUCER_WAIT", producer_wait)
    return _kernel(text.replace("CONSUMER_WAIT", consumer_wait))


def _inputs(nt: int) -> tuple[np.ndarray, np.ndarray]:
    x = np.random.default_rng(nt).standard_normal(nt * 64).astype(np.float32)
    want = (2 * x.reshape(nt, 64).astype(np.float64)).sum(0)
    return x, want


@pytest.mark.parametrize("backend", BACKENDS, ids=["interpreter", "native"])
@pytest.mark.parametrize("nt", [1, 2, 7])
def test_producer_and_consumer_warps_compute_the_right_answer(backend: Any, nt: int) -> None:
    """Two stages, so with 7 tiles each mbarrier goes through 3 or 4 phases and the
    producer waits on consumers' arrivals; two CTAs run one after another (the second
    starts with fresh mbarriers)."""
    x, want = _inputs(nt)
    for check in (True, False):
        y = np.full(64, np.nan, np.float32)
        backend.run_kernel(_pipeline(), 2, [x, y, nt], check_shared=check)
        assert np.allclose(y, want, rtol=1e-5), (check, y[:4], want[:4])


def test_both_backends_give_the_same_bits() -> None:
    x, _ = _inputs(5)
    got = []
    for backend in BACKENDS:
        y = np.full(64, np.nan, np.float32)
        backend.run_kernel(_pipeline(), 1, [x, y, 5])
        got.append(y.tobytes())
    assert got[0] == got[1]


def _reports(kernel: KernelOp, nt: int | None, check_shared: bool = True) -> str:
    """The error both backends raise (the same text); `nt` None: the one-argument
    kernels below."""
    found = []
    for backend in BACKENDS:
        if nt is None:
            args: list[Any] = [np.zeros(1, np.float32)]
        else:
            args = [_inputs(nt)[0], np.zeros(64, np.float32), nt]
        with pytest.raises((AccessError, InterpreterError)) as info:
            backend.run_kernel(kernel, 1, args, check_shared=check_shared)
        found.append((type(info.value), str(info.value)))
    assert found[0] == found[1]
    return found[1][1]


def test_a_consumer_without_its_wait_is_caught() -> None:
    """The consumers read a stage whose copies land only at a wait on its full
    barrier: with the checks, the read of a pending byte is reported; without them,
    the consumers run ahead of the producer two phases of an empty barrier, whose
    parity then reads as not complete: a deadlock."""
    kernel = _pipeline(consumer_wait="")
    assert _reports(kernel, 5) == (
        "mb.mlir:75:14: load of byte 0 of shared@mb.mlir:15:13, which a cp.async of thread "
        "(0, 0, 0) writes, before a cp.async wait lands it (thread.load, thread (32, 0, 0), "
        "block (0, 0, 0))"
    )
    assert _reports(kernel, 5, check_shared=False) == (
        "mb.mlir:49:9: deadlock in block (0, 0, 0): no warp can go on: warp 0 (threads "
        "0..31) waits on the mbarrier at byte 24 of shared@mb.mlir:16:13 (for the phase of "
        "parity 0) at mb.mlir:49:9; warps 1-2 (threads 32..95) finished"
    )


def test_a_producer_without_its_wait_is_caught() -> None:
    """The producer copies into a stage whose earlier copies the consumers have not
    waited for: a cp.async store to a pending byte; without the checks the consumers
    are left waiting for arrivals that came too early."""
    kernel = _pipeline(producer_wait="")
    assert _reports(kernel, 5) == (
        "mb.mlir:56:16: cp.async store of byte 0 of shared@mb.mlir:15:13, which a cp.async "
        "of thread (0, 0, 0) writes, before a cp.async wait lands it (thread.cp_async, thread "
        "(0, 0, 0), block (0, 0, 0))"
    )
    report = _reports(kernel, 5, check_shared=False)
    assert report.startswith("mb.mlir:71:9: deadlock in block (0, 0, 0): no warp can go on:")
    assert "warps 1-2 (threads 32..95) wait on the mbarrier at byte 8" in report


SINGLE = """
module {
  kernel @k(%y: !gpu.ptr<f32, global>) attributes {reqntid = array<i32: 64, 1, 1>} {
    %bar = thread.alloc_shared {bytes = 8 : i64, align = 8 : i64} : !gpu.ptr<i64, shared>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c16 = arith.constant 16 : i32
    %t = gpu.thread_id x : index
    %ti = arith.index_cast %t : index to i32
    %first = arith.cmpi eq, %ti, %c0 : i32
    scf.if %first {
      INIT
      thread.fence_mbarrier_init
      scf.yield
    }
    gpu.barrier
    scf.if %first {
      BEFORE
      thread.mbarrier_arrive %bar : !gpu.ptr<i64, shared>
      scf.yield
    }
    thread.mbarrier_wait %bar, %c0 : !gpu.ptr<i64, shared>, i32
    return
  }
}
"""
INIT = "thread.mbarrier_init %bar, %c1 : !gpu.ptr<i64, shared>, i32"


def _single(init: str = INIT, before: str = "") -> KernelOp:
    return _kernel(SINGLE.replace("INIT", init).replace("BEFORE", before), "one.mlir")


def test_an_mbarrier_phase_completes_for_all_waiters() -> None:
    """Thread 0 arrives (count 1): both warps pass their wait."""
    for backend in BACKENDS:
        backend.run_kernel(_single(), 1, [np.zeros(1, np.float32)])


@pytest.mark.parametrize("backend", BACKENDS, ids=["interpreter", "native"])
def test_a_proxy_fence_publishes_an_init_as_the_init_fence_does(backend: Any) -> None:
    """fence.proxy.async.shared::cta after the init (what CuTe's TMA kernels use): the
    other threads' waits find the init published; with no fence they are reported."""
    fenced = SINGLE.replace("thread.fence_mbarrier_init", "thread.fence_proxy_async")
    backend.run_kernel(_kernel(fenced.replace("INIT", INIT).replace("BEFORE", ""), "one.mlir"),
                       1, [np.zeros(1, np.float32)])  # fmt: skip
    unfenced = SINGLE.replace("thread.fence_mbarrier_init", "")
    with pytest.raises(AccessError, match=r"one.mlir:22:5: missing init fence: thread \(0, 0, "
                       r"0\) initialised this mbarrier"):  # fmt: skip
        backend.run_kernel(_kernel(unfenced.replace("INIT", INIT).replace("BEFORE", ""),
                                   "one.mlir"), 1, [np.zeros(1, np.float32)])  # fmt: skip


def test_an_unfinished_transaction_count_is_a_deadlock_naming_the_mbarrier() -> None:
    expect = "thread.mbarrier_expect_tx %bar, %c16 : !gpu.ptr<i64, shared>, i32"
    assert _reports(_single(before=expect), None) == (
        "one.mlir:22:5: deadlock in block (0, 0, 0): no warp can go on: warps 0-1 (threads "
        "0..63) wait on the mbarrier at byte 0 of shared@one.mlir:4:12 (for the phase of "
        "parity 0) at one.mlir:22:5"
    )


def test_mbarrier_misuse_is_reported() -> None:
    """An mbarrier no init wrote; an arrival more than the count; an init count of 0."""
    assert _reports(_single(init=""), None) == (
        "one.mlir:19:7: the mbarrier is not initialised (no mbarrier_init wrote it) (byte 0 "
        "of shared@one.mlir:4:12) (thread.mbarrier_arrive, thread (0, 0, 0), block (0, 0, 0))"
    )
    twice = _single(init=INIT.replace("%c1", "%c16"))  # 16 arrivals never come: deadlock
    assert "deadlock" in _reports(twice, None)
    zero = _single(init=INIT.replace("%c1", "%c0"))
    assert _reports(zero, None).startswith(
        "one.mlir:12:7: mbarrier_init count 0 is outside 1..1048575 (byte 0 of shared@"
    )


def test_the_mbarrier_must_be_an_i64_in_shared_memory() -> None:
    text = SINGLE.replace("INIT", INIT).replace("BEFORE", "")
    text = text.replace("!gpu.ptr<i64, shared>", "!gpu.ptr<i32, shared>")
    with pytest.raises(VerifyError, match=r"the mbarrier is a !gpu.ptr<i64, shared>"):
        _kernel(text)


def test_phases_parity_and_transaction_counts() -> None:
    """The rules on their own: a phase completes at zero pending arrivals and zero
    transaction count, and flips the parity; a wait for parity p is satisfied while
    the current phase's parity is not p (a fresh mbarrier satisfies parity 1)."""
    phases: list[int] = []
    bars = Mbarriers(lambda: phases.append(1))
    raw = np.full(8, 0xFF, np.uint8)
    with pytest.raises(MbarrierError, match="not initialised"):
        bars.arrive(raw)
    bars.init(raw, 2)
    assert bars.ready((0, 0), raw, 1) and not bars.ready((0, 0), raw, 0)
    bars.expect_tx(raw, 128)
    bars.arrive(raw)
    bars.arrive(raw)  # both arrivals, but 128 bytes outstanding
    assert not bars.ready((0, 0), raw, 0) and not phases
    bars.complete_tx(raw, 100)
    bars.complete_tx(raw, 28)
    assert bars.ready((0, 0), raw, 0) and not bars.ready((0, 0), raw, 1) and phases == [1]
    bars.arrive(raw)
    landed: list[int] = []
    bars.async_arrival((0, 0), raw, lambda: landed.append(1))
    assert not landed  # lands only when a thread waits on it
    assert bars.ready((0, 0), raw, 1) and landed == [1] and len(phases) == 2
    assert bars.ready((0, 0), raw, 0) is False


def pipeline_text() -> str:
    """The pipeline kernel with both waits (for cutec.jit, here and on the GPU)."""
    text = PIPELINE.read_text().replace("PRODUCER_WAIT", PRODUCER_WAIT)
    return text.replace("CONSUMER_WAIT", CONSUMER_WAIT)


def test_the_pipeline_through_jit_on_the_cpu() -> None:
    import cutec.runtime as rt

    k = rt.jit(pipeline_text(), device="cpu")
    x, want = _inputs(6)
    y = np.full(64, np.nan, np.float32)
    k(x, y, 6)
    assert k.cpu_backend == "native"
    assert np.allclose(y, want, rtol=1e-5)
