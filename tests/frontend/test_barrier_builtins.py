# ruff: noqa: E501  (the case tables keep each message on one line)
"""The mbarrier, named-barrier and cluster-barrier builtins (cutec/frontend/build_barriers.py):
what each builds, and one located error per misuse."""

from __future__ import annotations

import pytest

from cutec.diagnostics import CompileError
from cutec.driver import Options, Source, Stage, compile

HEAD = "kernel k(out: f32[M]) grid 1 threads 128{cluster} {{\n  bars = smem s64[4]\n"


def _build(body: str, arch: str = "sm_90a", cluster: str = "", stage: Stage = Stage.CUTE) -> str:
    text = HEAD.format(cluster=cluster) + body + "}\n"
    return compile(Source(text, "b.cute"), stage, Options(target=arch)).text


def test_each_builtin_builds_its_op() -> None:
    body = (
        "  i = thread.x % 4\n"
        "  mbarrier_init(bars[i], 96)\n"
        "  mbarrier_init_fence()\n"
        "  mbarrier_arrive(bars[1])\n"
        "  mbarrier_arrive_and_expect_tx(bars[2], 1024)\n"
        "  mbarrier_expect_tx(bars[i], 16)\n"
        "  mbarrier_wait(bars[i], thread.x / 4)\n"
        "  named_barrier_arrive(2, 64)\n"
        "  named_barrier_sync(15, 128)\n"
        "  cluster_arrive_relaxed()\n"
        "  cluster_wait()\n"
        "  cluster_sync()\n"
    )
    text = _build(body, cluster=" cluster (1, 1, 1)")
    for line in (
        "cute.mbarrier_init %",
        "thread.fence_mbarrier_init",
        "cute.mbarrier_arrive %",
        "cute.mbarrier_arrive_expect_tx %",
        "cute.mbarrier_expect_tx %",
        "cute.mbarrier_wait %",
        "thread.named_barrier_arrive {id = 2 : i32, count = 64 : i32}",
        "thread.named_barrier_sync {id = 15 : i32, count = 128 : i32}",
        "thread.cluster_arrive {relaxed}",
    ):
        assert line in text, line
    assert text.count("thread.cluster_wait") == 2 and text.count("thread.cluster_arrive") == 2
    thread_ir = _build(body, cluster=" cluster (1, 1, 1)", stage=Stage.THREAD)
    for op in ("expect_tx", "arrive_expect_tx", "arrive ", "wait", "init"):
        assert thread_ir.count(f"thread.mbarrier_{op}") == 1, op


CASES = [
    ("  x = smem f32[4]\n  mbarrier_arrive(x[0])\n", 4, 19,
     "an mbarrier is an element of an smem s64 tensor (bars = smem s64[N]), not of a smem "
     "f32 tensor"),
    ("  mbarrier_arrive(bars)\n", 3, 19,
     "mbarrier_arrive takes an mbarrier, an element bars[i] of an smem s64 tensor, not a "
     "smem tensor _4:_1"),
    ("  mbarrier_init(bars[0], 0)\n", 3, 26,
     "mbarrier_init's count (arrivals per phase) must be 1..1048575, got 0"),
    ("  mbarrier_init(bars[0], 1 << 20)\n", 3, 26,
     "mbarrier_init's count (arrivals per phase) must be 1..1048575, got 1048576"),
    ("  mbarrier_wait(bars[4], 0)\n", 3, 22, "mbarrier 4 is outside the 4 of this tensor"),
    ("  mbarrier_wait(bars[0], 1.0)\n", 3, 26, "mbarrier_wait's phase is an integer, not the float 1.0"),
    ("  named_barrier_sync(0, 128)\n", 3, 22,
     "named_barrier_sync's barrier id must be 1..15 (barrier 0 is sync()'s), got 0"),
    ("  named_barrier_arrive(16, 128)\n", 3, 24,
     "named_barrier_arrive's barrier id must be 1..15 (barrier 0 is sync()'s), got 16"),
    ("  named_barrier_sync(1, 40)\n", 3, 25,
     "named_barrier_sync's thread count must be a multiple of 32 (whole warps) up to 128, got 40"),
    ("  named_barrier_sync(1, 256)\n", 3, 25,
     "named_barrier_sync's thread count must be a multiple of 32 (whole warps) up to 128, got 256"),
    ("  named_barrier_sync(thread.x, 64)\n", 3, 22,
     "named_barrier_sync's barrier id must be known at compile time, but it is a run-time value"),
    ("  mbarrier_arrive(bars[0], tx = 4)\n", 3, 3, "mbarrier_arrive takes no keyword arguments"),
    ("  named_barrier_sync(1)\n", 3, 3, "'named_barrier_sync' takes 2 arguments, got 1"),
    ("  cluster_sync()\n", 3, 3,
     "cluster_sync needs the kernel's cluster clause (cluster (1, 1, 1) for a cluster of one CTA)"),
]  # fmt: skip


@pytest.mark.parametrize(("body", "line", "col", "message"), CASES, ids=[c[3][:40] for c in CASES])
def test_misuse_is_one_located_error(body: str, line: int, col: int, message: str) -> None:
    with pytest.raises(CompileError) as info:
        _build(body)
    (d,) = info.value.diagnostics
    assert (d.location.line, d.location.col, d.message) == (line, col, message)


@pytest.mark.parametrize(
    ("body", "col", "message"),
    [
        ("  mbarrier_expect_tx(bars[0], 64)\n", 3,
         "mbarrier_expect_tx (mbarrier.expect_tx) needs sm_90; the target is sm_80"),
        ("  mbarrier_arrive_and_expect_tx(bars[0], 64)\n", 3,
         "mbarrier_arrive_and_expect_tx (mbarrier.expect_tx) needs sm_90; the target is sm_80"),
        ("  cluster_arrive()\n", 3, "cluster_arrive (barrier.cluster) needs sm_90; the target is sm_80"),
    ],
)  # fmt: skip
def test_hopper_only_builtins_are_refused_on_sm_80(body: str, col: int, message: str) -> None:
    with pytest.raises(CompileError) as info:
        _build(body, arch="sm_80")
    (d,) = info.value.diagnostics
    assert (d.location.line, d.location.col, d.message) == (3, col, message)


def test_the_other_builtins_build_on_sm_80() -> None:
    body = (
        "  mbarrier_init(bars[0], 32)\n  mbarrier_init_fence()\n  sync()\n"
        "  mbarrier_arrive(bars[0])\n  mbarrier_wait(bars[0], 0)\n  named_barrier_sync(1, 128)\n"
    )
    assert "thread.named_barrier_sync" in _build(body, arch="sm_80", stage=Stage.THREAD)
