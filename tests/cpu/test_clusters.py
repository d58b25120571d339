"""Clusters of more than one CTA on the CPU (cutec/cpu/cluster.py): both backends run
the CTAs of a cluster together, so a cluster barrier orders one CTA's stores before
another CTA's loads (a test that fails when the CTAs run one after another); the
cluster registers of clusters of 2 and 4 CTAs; mbarrier inits published by an init
fence and a cluster barrier, a missing fence reported; a CTA that never reaches the
cluster barrier the others wait at is a located deadlock; a grid that is not whole
clusters is refused, and the launcher rounds a kernel's own grid up on the CPU too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import cutec.runtime as rt
from cutec.atoms.tma import TmaDataType, TmaTensorMap
from cutec.cpu import native, reference
from cutec.cpu.reference import AccessError, InterpreterError
from cutec.cpu.tma import TensorMapArgument
from cutec.driver import Options, Source, Stage, compile
from cutec.ir.dialects.builtin import KernelOp
from cutec.ir.parser import parse_module
from cutec.ir.verifier import verify
from cutec.ptx.ptxas import assemble, find_ptxas

BACKENDS = [reference, native]
IDS = ["interpreter", "native"]


def _kernel(text: str, file: str) -> KernelOp:
    module = compile(Source(text, file), Stage.THREAD, Options(target="sm_90a")).module
    return next(iter(module.walk_type(KernelOp)))


def _report(kernel: KernelOp, grid: Any, args: dict[str, Any]) -> str:
    """The error both backends raise (the same text)."""
    found = []
    for backend in BACKENDS:
        with pytest.raises((AccessError, InterpreterError)) as info:
            backend.run_kernel(kernel, grid, dict(args))
        found.append(str(info.value))
    assert found[0] == found[1], found
    return found[0]


# Each CTA stores its 64 values, then reads those of the CTA of the next rank in its
# cluster after the cluster barrier: right only if that CTA stored before this one
# loads, which the CPU's order (rank 0 runs first) gives only through the barrier.
EXCHANGE = """\
kernel exchange(x: f32[M], out: f32[M]) grid (GX, GY) threads 64 cluster (CX, CY, 1) {
  b = block.x + GX * block.y
  x[64 * b + thread.x] = f32(64 * b + thread.x)
  SYNC
  r = (block_rank_in_cluster() + 1) % (CX * CY)
  px = block.x - block.x % CX + r % CX
  py = block.y - block.y % CY + r / CX
  out[64 * b + thread.x] = x[64 * (px + GX * py) + thread.x]
}
"""
SHAPES = [(2, 1), (1, 2), (4, 1)]


def exchange_text(cx: int, cy: int, sync: str = "cluster_sync()") -> tuple[str, tuple[int, int]]:
    """EXCHANGE in clusters of (cx, cy) on a grid of two clusters, and that grid."""
    grid = (2 * cx, cy)
    text = EXCHANGE.replace("SYNC", sync).replace("GX", str(grid[0])).replace("GY", str(grid[1]))
    return text.replace("CX", str(cx)).replace("CY", str(cy)), grid


def _exchange(cx: int, cy: int, sync: str = "cluster_sync()") -> tuple[KernelOp, tuple[int, int]]:
    text, grid = exchange_text(cx, cy, sync)
    return _kernel(text, "exchange.cute"), grid


def partners(cx: int, cy: int, grid: tuple[int, int]) -> np.ndarray:
    """The 64 values each CTA reads: its next-rank partner's (x fastest in the cluster)."""
    want = []
    for by in range(grid[1]):
        for bx in range(grid[0]):
            r = (bx % cx + cx * (by % cy) + 1) % (cx * cy)
            px, py = bx - bx % cx + r % cx, by - by % cy + r // cx
            want.append(64 * (px + grid[0] * py) + np.arange(64))
    return np.concatenate(want).astype(np.float32)


@pytest.mark.parametrize("backend", BACKENDS, ids=IDS)
@pytest.mark.parametrize("shape", SHAPES, ids=["2x1", "1x2", "4x1"])
def test_a_cluster_barrier_orders_one_ctas_stores_before_anothers_loads(
    backend: Any, shape: tuple[int, int]
) -> None:
    kernel, grid = _exchange(*shape)
    n = 64 * grid[0] * grid[1]
    x, out = np.full(n, -1.0, np.float32), np.zeros(n, np.float32)
    backend.run_kernel(kernel, grid, {"x": x, "out": out, "M": n})
    assert np.array_equal(out, partners(*shape, grid))


@pytest.mark.parametrize("backend", BACKENDS, ids=IDS)
def test_without_the_barrier_a_cta_reads_before_its_partner_stores(backend: Any) -> None:
    """What the test above would see if the CTAs ran one after another: rank 0 reads
    rank 1's values before rank 1 has run."""
    kernel, grid = _exchange(2, 1, sync="")
    x, out = np.full(256, -1.0, np.float32), np.zeros(256, np.float32)
    backend.run_kernel(kernel, grid, {"x": x, "out": out, "M": 256})
    want = partners(2, 1, grid)
    assert (out[:64] == -1).all() and np.array_equal(out[64:128], want[64:128])


REGISTERS = """
module {
  kernel @ids(%out: !gpu.ptr<index, global>) attributes {reqntid = array<i32: 32, 1, 1>,
      cluster_dim = array<i32: CLUSTER>} {
    %t = gpu.thread_id x : index
    %bx = gpu.block_id x : index
    %by = gpu.block_id y : index
    %bz = gpu.block_id z : index
    %gx = gpu.grid_dim x : index
    %gy = gpu.grid_dim y : index
    %row = arith.muli %bz, %gy : index
    %row2 = arith.addi %row, %by : index
    %lin0 = arith.muli %row2, %gx : index
    %lin = arith.addi %lin0, %bx : index
    %c16 = arith.constant 16 : index
    %base = arith.muli %lin, %c16 : index
    %p = thread.ptr_add %out, %base : !gpu.ptr<index, global>, index
    %c1 = arith.constant 1 : index
    %rank = gpu.cluster_block_rank : index
    thread.store %rank, %p : index, !gpu.ptr<index, global>
STORES
    return
  }
}
"""
CLUSTER_OPS = ["cluster_id", "cluster_dim", "cluster_block_id", "cluster_dim_blocks"]


def _registers_kernel(cluster: tuple[int, int, int]) -> KernelOp:
    """Each CTA stores its rank, then each cluster register of each dimension."""
    stores, k = [], 1
    for name in CLUSTER_OPS:
        for d in "xyz":
            stores += [
                f"    %{name}_{d} = gpu.{name} {d} : index",
                f"    %k{k} = arith.constant {k} : index",
                f"    %p{k} = thread.ptr_add %p, %k{k} : !gpu.ptr<index, global>, index",
                f"    thread.store %{name}_{d}, %p{k} : index, !gpu.ptr<index, global>",
            ]
            k += 1
    text = REGISTERS.replace("CLUSTER", ", ".join(map(str, cluster)))
    module = parse_module(text.replace("STORES", "\n".join(stores)), "ids.mlir")
    verify(module)
    (kernel,) = module.walk_type(KernelOp)
    return kernel


@pytest.mark.parametrize("backend", BACKENDS, ids=IDS)
@pytest.mark.parametrize("cluster", [(2, 1, 1), (1, 2, 1), (4, 1, 1), (2, 2, 1), (1, 2, 2)])
def test_the_cluster_registers(backend: Any, cluster: tuple[int, int, int]) -> None:
    grid = (4, 2, 2)
    out = np.full((2, 2, 4, 16), -1, np.int64)
    backend.run_kernel(_registers_kernel(cluster), grid, {"out": out})
    b = np.stack(np.meshgrid(*(np.arange(g) for g in grid), indexing="ij"), -1)  # x, y, z
    b = b.transpose(2, 1, 0, 3)  # (z, y, x, dim): the CTAs in out's order
    c, g = np.array(cluster), np.array(grid)
    within = b % c
    rank = within[..., 0] + c[0] * (within[..., 1] + c[1] * within[..., 2])  # x fastest
    assert np.array_equal(out[..., 0], rank)
    assert np.array_equal(out[..., 1:4], b // c)  # cluster_id
    assert np.array_equal(out[..., 4:7], np.broadcast_to(g // c, b.shape))  # cluster_dim
    assert np.array_equal(out[..., 7:10], within)  # cluster_block_id
    assert np.array_equal(out[..., 10:13], np.broadcast_to(c, b.shape))  # cluster_dim_blocks


# Thread 0 of each CTA initialises its CTA's mbarrier and fences the init; the cluster
# barrier publishes it; then warp 0 stores and arrives and warp 1 waits and reads.
HANDOFF = """\
kernel handoff(out: f32[M]) grid 4 threads 64 cluster (2, 1, 1) {
  bars = smem s64[1]
  data = smem f32[32]
  if thread.x == 0 {
    mbarrier_init(bars[0], 32)
    mbarrier_init_fence()
  }
  cluster_sync()
  if thread.x < 32 {
    data[thread.x] = f32(thread.x + 100 * block.x)
    mbarrier_arrive(bars[0])
  } else {
    mbarrier_wait(bars[0], 0)
    out[32 * block.x + thread.x - 32] = data[thread.x - 32] + 0.5
  }
}
"""


@pytest.mark.parametrize("backend", BACKENDS, ids=IDS)
def test_an_init_fence_and_a_cluster_barrier_publish_each_ctas_mbarrier(backend: Any) -> None:
    out = np.zeros(128, np.float32)
    backend.run_kernel(_kernel(HANDOFF, "handoff.cute"), 4, {"out": out, "M": 128})
    want = np.arange(32) + 100 * np.arange(4)[:, None] + 0.5
    assert np.array_equal(out, want.reshape(-1).astype(np.float32))


def test_a_missing_init_fence_in_a_cluster_is_reported() -> None:
    text = HANDOFF.replace("    mbarrier_init_fence()\n", "")
    report = _report(_kernel(text, "fence.cute"), 4, {"out": np.zeros(128, np.float32), "M": 128})
    # (rank 1 arrives last at the cluster barrier, so its warps go on first)
    assert report == (
        "fence.cute:10:5: missing init fence: thread (0, 0, 0) initialised this mbarrier, and "
        "no mbarrier_init_fence() by that thread and barrier came before this use (byte 0 of "
        "shared@fence.cute:2:10) (thread.mbarrier_arrive, thread (1, 0, 0), block (1, 0, 0))"
    )


def test_a_cta_that_never_reaches_the_cluster_barrier_is_a_located_deadlock() -> None:
    """CTA rank 1 waits on an mbarrier nobody arrives on before its cluster barrier;
    rank 0 waits at the cluster barrier for it: the report names both, at the wait."""
    text = HANDOFF.replace("  cluster_sync()\n", "  sync()\n  if block_rank_in_cluster() == 1 {\n"
                           "    mbarrier_wait(bars[0], 0)\n  }\n  cluster_sync()\n")  # fmt: skip
    report = _report(_kernel(text, "stuck.cute"), 2, {"out": np.zeros(64, np.float32), "M": 64})
    assert report == (
        "stuck.cute:10:5: deadlock in the cluster of blocks (0, 0, 0)..(1, 0, 0): no warp can "
        "go on: block (0, 0, 0): warps 0-1 (threads 0..63) wait at the cluster barrier at "
        "stuck.cute:12:3; block (1, 0, 0): warps 0-1 (threads 0..63) wait on the mbarrier at "
        "byte 0 of shared@stuck.cute:2:10 (for the phase of parity 0) at stuck.cute:10:5"
    )


@pytest.mark.parametrize("backend", BACKENDS, ids=IDS)
def test_a_grid_that_is_not_whole_clusters_is_refused(backend: Any) -> None:
    kernel, _ = _exchange(2, 1)
    args = {"x": np.zeros(192, np.float32), "out": np.zeros(192, np.float32), "M": 192}
    with pytest.raises(ValueError, match=r"grid=\(3, 1, 1\) is not a whole number of clusters "
                       r"of \(2, 1, 1\) CTAs"):  # fmt: skip
        backend.run_kernel(kernel, 3, args)


RANKS = """\
kernel ranks(out: s32[N]) grid N - 1 threads 32 cluster (2, 1, 1) {
  out[block.x] = s32(block_rank_in_cluster())
}
"""


def test_the_launcher_rounds_the_grid_up_to_whole_clusters_on_the_cpu() -> None:
    """grid N - 1 = 3 in clusters of 2 runs 4 CTAs, as on the GPU; both run natively."""
    k = rt.jit(RANKS, device="cpu")
    out = np.full(4, -1, np.int32)
    k(out)
    assert k.cpu_backend == "native"
    assert out.tolist() == [0, 1, 0, 1]


def test_the_mbarrier_pipeline_in_a_cluster_of_two() -> None:
    """tests/cpu/data/mbarrier_handoff.cute (mbarrier phases and a named barrier in each
    CTA) in clusters of 2: both CTAs compute the same sums; both backends, same bits."""
    text = (Path(__file__).parent / "data" / "mbarrier_handoff.cute").read_text()
    text = text.replace("CLUSTER", "cluster (2, 1, 1)").replace("SYNC", "cluster_sync()")
    kernel = _kernel(text, "handoff.cute")
    x = np.random.default_rng(5).standard_normal(5 * 64).astype(np.float32)
    want = (2 * x.reshape(5, 64).astype(np.float64)).sum(0)
    got = []
    for backend in BACKENDS:
        y = np.full(64, np.nan, np.float32)
        backend.run_kernel(kernel, 2, {"x": x, "y": y, "N": x.size})
        assert np.allclose(y, want, rtol=1e-5)
        got.append(y.tobytes())
    assert got[0] == got[1]


TMA_TILE = Path(__file__).parents[1] / "ptx" / "data" / "tma_tile.mlir"


def test_tma_loads_in_a_cluster_of_two_after_the_tutorials_init() -> None:
    """tests/ptx/data/tma_tile.mlir as CuTe's wgmma_tma_sm90 starts, in clusters of 2:
    thread 0 of each CTA initialises its mbarrier, fence.mbarrier_init, then a cluster
    barrier (not a CTA barrier); each CTA's TMA load completes on its own mbarrier."""
    text = TMA_TILE.read_text()
    for old, new in [
        ("tensor_maps = [", "cluster_dim = array<i32: 2, 1, 1>, tensor_maps = ["),
        ("thread.fence_proxy_async", "thread.fence_mbarrier_init"),
        ("    gpu.barrier\n", "    thread.cluster_arrive\n    thread.cluster_wait\n"),
    ]:
        assert old in text
        text = text.replace(old, new)
    module = parse_module(text, "tma.mlir")
    verify(module)
    (kernel,) = module.walk_type(KernelOp)
    m, n = 64, 16  # boxes of 16 x 8: a grid of (4, 2) CTAs, two clusters per row
    a = np.random.default_rng(7).standard_normal((n, m)).astype(np.float32)  # A^T: A col-major
    d = np.full(m * n, np.nan, np.float32)
    desc = TmaTensorMap(TmaDataType.FLOAT32, (m, n), (4 * m,), (16, 8))
    reference.run_kernel(kernel, (4, 2), [a, m, n, m, d, d.size, TensorMapArgument(desc, "A")])
    want = [a[8 * by : 8 * by + 8, 16 * bx : 16 * bx + 16].reshape(-1)
            for by in range(2) for bx in range(4)]  # fmt: skip
    np.testing.assert_array_equal(d, np.concatenate(want))


@pytest.mark.skipif(find_ptxas() is None, reason="no ptxas (install the test extra)")
def test_ptxas_accepts_the_cluster_kernels() -> None:
    """The kernels above (and tests/gpu/test_clusters_gpu.py's), as the driver compiles
    them for sm_90a, with their cluster shape."""
    kernels = [(exchange_text(*s)[0], "exchange.cute", s) for s in SHAPES]
    kernels += [(HANDOFF, "handoff.cute", (2, 1)), (RANKS, "ranks.cute", (2, 1))]
    for text, name, (cx, cy) in kernels:
        ptx = compile(Source(text, name), Stage.PTX, Options(target="sm_90a")).text
        assert f".reqnctapercluster {cx}, {cy}, 1" in ptx
        result = assemble(ptx, "sm_90a")
        assert result.ok, result.stderr


SHARED = """\
kernel mirrored(out: f32[M]) grid 4 threads 64 cluster (2, 1, 1) {
  s = smem f32[64]
  s[63 - thread.x] = f32(thread.x + 64 * block.x)
  cluster_sync()
  out[64 * block.x + thread.x] = s[thread.x]
}
"""


@pytest.mark.parametrize("backend", BACKENDS, ids=IDS)
def test_each_cta_of_a_cluster_has_its_own_shared_memory_and_race_check(backend: Any) -> None:
    """The CTAs of a cluster store to the same offsets of their own shared memory, their
    warps interleaved: no race across CTAs; the cluster barrier orders each CTA's
    stores before its loads."""
    out = np.zeros(256, np.float32)
    backend.run_kernel(_kernel(SHARED, "shared.cute"), 4, {"out": out, "M": 256})
    want = 64 * np.arange(4)[:, None] + np.arange(63, -1, -1)
    assert np.array_equal(out, want.reshape(-1).astype(np.float32))


def test_without_the_cluster_barrier_a_ctas_threads_race() -> None:
    text = SHARED.replace("  cluster_sync()\n", "")
    report = _report(_kernel(text, "race.cute"), 4, {"out": np.zeros(256, np.float32), "M": 256})
    assert report == (
        "race.cute:3:3: shared-memory race on byte 124 of shared@race.cute:2:7: store by this "
        "thread, load by thread (31, 0, 0), no barrier between (thread.store, thread (32, 0, "
        "0), block (0, 0, 0))"
    )
