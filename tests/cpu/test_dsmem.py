"""Distributed shared memory: map_shared_rank(t, rank) (cute.map_shared_rank, thread.mapa)
on both CPU backends: the neighbour exchange in clusters of 2 and 4 CTAs (remote loads
and remote stores, values that say which CTA wrote them; a vectorized copy); each
misuse a located error, and cp.async, TMA, wgmma and atomics on a dsmem tensor refused;
a remote access out of bounds, to a rank outside the cluster, of a CTA that has
exited (no final cluster_sync), and racing with the owner's threads (no cluster
barrier between) reported, the same by both; ptxas assembles the PTX."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cutec.cpu import native, reference
from cutec.cpu.reference import AccessError, InterpreterError
from cutec.diagnostics import CompileError
from cutec.driver import Options, Source, Stage, compile
from cutec.ir.core import VerifyError
from cutec.ir.dialects.builtin import KernelOp
from cutec.ir.parser import parse_module
from cutec.ir.printer import print_op
from cutec.ir.verifier import verify
from cutec.ptx.ptxas import assemble, find_ptxas

BACKENDS = [reference, native]
IDS = ["interpreter", "native"]

# Each CTA stores its tile of x; after the cluster barrier it reads the tile of the CTA
# of the next rank (reversed: another thread's element) and stores its own tile, plus
# 0.5, into that CTA's inbox; after a second barrier it reads its inbox (written by the
# CTA of the previous rank); a third keeps every CTA's memory until all are done.
NEIGHBOURS = """\
kernel neighbours(x: f32[M], got: f32[M], inbox_out: f32[M]) grid 2 * C threads 64
    cluster (C, 1, 1) {
  mine = smem f32[64]
  inbox = smem f32[64]
  mine[thread.x] = x[64 * block.x + thread.x]
  cluster_sync()
  next = (block_rank_in_cluster() + 1) % C
  theirs = map_shared_rank(mine, next)
  got[64 * block.x + thread.x] = theirs[63 - thread.x]
  box = map_shared_rank(inbox, next)
  box[thread.x] = mine[thread.x] + 0.5
  cluster_sync()
  inbox_out[64 * block.x + thread.x] = inbox[thread.x]
  cluster_sync()
}
"""


def neighbours_text(c: int, end: str = "  cluster_sync()\n}\n") -> str:
    text = NEIGHBOURS.replace("C", str(c))
    return text[: text.rindex("  cluster_sync()")] + end


def _kernel(text: str, file: str, target: str = "sm_90a") -> KernelOp:
    module = compile(Source(text, file), Stage.THREAD, Options(target=target)).module
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


def _args(n: int) -> dict[str, Any]:
    x = (1000 * (np.arange(n) // 64) + np.arange(n) % 64).astype(np.float32)  # 1000 * CTA + i
    return {"x": x, "got": np.zeros(n, np.float32), "inbox_out": np.zeros(n, np.float32),
            "M": n}  # fmt: skip


@pytest.mark.parametrize("backend", BACKENDS, ids=IDS)
@pytest.mark.parametrize("c", [2, 4])
def test_neighbours_exchange_tiles_through_map_shared_rank(backend: Any, c: int) -> None:
    kernel = _kernel(neighbours_text(c), "neighbours.cute")
    n = 64 * 2 * c
    args = _args(n)
    backend.run_kernel(kernel, 2 * c, args)
    cta, i = np.arange(2 * c)[:, None], np.arange(64)
    nxt = cta - cta % c + (cta % c + 1) % c  # the CTA of the next rank in the cluster
    prev = cta - cta % c + (cta % c - 1) % c
    assert np.array_equal(args["got"].reshape(2 * c, 64), 1000 * nxt + 63 - i)
    assert np.array_equal(args["inbox_out"].reshape(2 * c, 64), 1000 * prev + i + 0.5)


def test_the_ir_prints_and_parses_back() -> None:
    kernel = _kernel(neighbours_text(2), "neighbours.cute")
    text = print_op(kernel.parent_op)  # type: ignore[arg-type]
    assert "thread.mapa" in text and "!gpu.ptr<f32, shared::cluster>" in text
    assert print_op(parse_module(text, "again.mlir")) == text
    cute = compile(Source(neighbours_text(2), "n.cute"), Stage.CUTE, Options(target="sm_90a"))
    cute_text = print_op(cute.module)
    assert "cute.map_shared_rank" in cute_text and "dsmem" in cute_text
    assert print_op(parse_module(cute_text, "again.mlir")) == cute_text


def test_the_verifier_refuses_mapa_of_a_global_pointer() -> None:
    text = """module {
  kernel @k(%p: !gpu.ptr<f32, global>, %r: index) attributes {reqntid = array<i32: 32, 1, 1>} {
    %q = thread.mapa %p, %r : !gpu.ptr<f32, global>, index -> !gpu.ptr<f32, shared::cluster>
    return
  }
}"""
    with pytest.raises(VerifyError, match="maps a shared pointer, not a global one"):
        verify(parse_module(text, "k.mlir"))


KERNEL = """\
kernel k(out: f32[M]) grid 4 threads 64 CLUSTER {
  s = smem f32[64]
  r = map_shared_rank(TENSOR, RANK)
  out[thread.x] = r[thread.x]
}
"""
MISUSES = [
    ("cluster (2, 1, 1)", "out", "1", "sm_90a",
     "3:23:map_shared_rank maps a shared (smem) tensor, not a gmem one"),
    ("", "s", "1", "sm_90a",
     "3:7:map_shared_rank needs the kernel's cluster clause (cluster (1, 1, 1) for a "
     "cluster of one CTA)"),
    ("cluster (2, 1, 1)", "s", "1", "sm_80",
     "3:7:map_shared_rank (mapa, distributed shared memory) needs sm_90; the target "
     "is sm_80"),
    ("cluster (2, 1, 1)", "s", "2", "sm_90a",
     "3:26:rank 2 is outside the cluster of 2 CTAs (ranks 0..1)"),
    ("cluster (2, 2, 1)", "s", "-1", "sm_90a",
     "3:26:rank -1 is outside the cluster of 4 CTAs (ranks 0..3)"),
]  # fmt: skip


@pytest.mark.parametrize("cluster, tensor, rank, target, message", MISUSES,
                         ids=["gmem", "no-cluster", "sm_80", "rank-2", "rank-minus-1"])  # fmt: skip
def test_each_misuse_is_one_located_error(
    cluster: str, tensor: str, rank: str, target: str, message: str
) -> None:
    text = KERNEL.replace("CLUSTER", cluster).replace("TENSOR", tensor).replace("RANK", rank)
    with pytest.raises(CompileError) as info:
        compile(Source(text, "bad.cute"), Stage.PTX, Options(target=target))
    (d,) = info.value.diagnostics
    line, col, text = message.split(":", 2)
    assert (d.location.line, d.location.col, d.message) == (int(line), int(col), text)


def test_an_atomic_on_another_ctas_shared_memory_is_refused() -> None:
    text = KERNEL.replace("CLUSTER", "cluster (2, 1, 1)").replace("TENSOR", "s")
    text = text.replace("RANK", "1").replace("out[thread.x] = r[thread.x]", "atomic_add(r, 0, 1.0)")
    with pytest.raises(CompileError) as info:
        compile(Source(text, "atomic.cute"), Stage.PTX, Options(target="sm_90a"))
    (d,) = info.value.diagnostics
    message = "atomics on shared memory are not supported yet (atomic_add of a dsmem tensor)"
    assert (d.location.line, d.location.col, d.message) == (4, 14, message)


def test_a_wgmma_reading_another_ctas_shared_memory_is_refused() -> None:
    """examples/wgmma_sm90.cute with A partitioned from rank 0's copy of sA: a GMMA
    descriptor addresses the CTA's own shared memory only."""
    text = (Path(__file__).parents[2] / "examples" / "wgmma_sm90.cute").read_text()
    old = "tCsA = thr_mma.partition_A(sA)"
    assert old in text
    text = text.replace(old, "tCsA = thr_mma.partition_A(map_shared_rank(sA, 0))")
    with pytest.raises(CompileError) as info:
        compile(Source(text, "w.cute"), Stage.PTX, Options(target="sm_90a", kernel="hgemm_nt"))
    (d,) = info.value.diagnostics
    message = ("SM90_64x64x16_F16F16F16_SS_NT reads A from shared memory through descriptors; "
               "make_fragment_A needs an smem partition, not dsmem")  # fmt: skip
    assert (d.location.line, d.location.col, d.message) == (53, 10, message)


def test_a_tma_into_another_ctas_shared_memory_is_refused() -> None:
    """examples/wgmma_tma_sm90.cute with A's TMA landing in rank 0's copy of sA: a TMA
    load here lands in the CTA's own shared memory (multicast is not supported)."""
    text = (Path(__file__).parents[2] / "examples" / "wgmma_tma_sm90.cute").read_text()
    old = "group_modes(sA, 0, 2), group_modes(gA, 0, 2))"
    assert old in text
    text = text.replace(old, "group_modes(map_shared_rank(sA, 0), 0, 2), group_modes(gA, 0, 2))")
    with pytest.raises(CompileError) as info:
        compile(Source(text, "t.cute"), Stage.PTX, Options(target="sm_90a", kernel="hgemm_nt"))
    (d,) = info.value.diagnostics
    assert (d.location.line, d.message) == (47, "tma_partition's shared tensor is in dsmem")


def test_a_cp_async_into_another_ctas_shared_memory_is_refused() -> None:
    """cp.async (like TMA and wgmma's descriptors) reads or writes the CTA's own shared
    memory only: a dsmem tensor there is the copy atom's located error."""
    text = """\
kernel k(x: f32[M]) grid 4 threads 64 cluster (2, 1, 1) {
  s = smem f32[64]
  r = map_shared_rank(s, 1)
  c = tiled_copy(SM80_CP_ASYNC_CACHEALWAYS[u32], thr = 64, val = 1)
  g = local_tile(x, make_shape(64), make_coord(block.x))
  copy(c, c.slice(thread.x).partition_S(g), c.slice(thread.x).partition_D(r))
}
"""
    with pytest.raises(CompileError) as info:
        compile(Source(text, "cp.cute"), Stage.PTX, Options(target="sm_90a"))
    (d,) = info.value.diagnostics
    message = "copy atom SM80_CP_ASYNC_CACHEALWAYS<uint32_t> copies gmem to smem, not gmem to dsmem"
    assert (d.location.line, d.location.col, d.message) == (6, 3, message)


OUT_OF_BOUNDS = """\
kernel oob(out: f32[M], n: int) grid 4 threads 64 cluster (2, 1, 1) {
  s = smem f32[64]
  s[thread.x] = f32(thread.x)
  cluster_sync()
  r = map_shared_rank(s, RANK)
  out[64 * block.x + thread.x] = r[thread.x + n]
  cluster_sync()
}
"""


def test_a_remote_access_out_of_bounds_is_reported() -> None:
    text = OUT_OF_BOUNDS.replace("RANK", "(block_rank_in_cluster() + 1) % 2")
    report = _report(_kernel(text, "oob.cute"), 4, {"out": np.zeros(256, np.float32),
                                                    "M": 256, "n": 1})  # fmt: skip
    # (rank 1 is released first from the barrier, so it reads rank 0's buffer first)
    assert report == (
        "oob.cute:6:34: out-of-bounds load of 4 bytes at byte offset 256 of shared@oob.cute:2:7 "
        "of cluster rank 0 (256 bytes) (thread.load, thread (63, 0, 0), block (1, 0, 0))"
    )


def test_a_run_time_rank_outside_the_cluster_is_reported() -> None:
    text = OUT_OF_BOUNDS.replace("RANK", "n")
    report = _report(_kernel(text, "rank.cute"), 4, {"out": np.zeros(256, np.float32),
                                                     "M": 256, "n": 3})  # fmt: skip
    assert report == (
        "rank.cute:5:7: mapa to rank 3, outside the cluster of 2 CTAs (ranks 0..1) "
        "(thread.mapa, thread (0, 0, 0), block (1, 0, 0))"
    )


def test_a_remote_load_of_a_cta_that_exited_is_reported() -> None:
    """Without a cluster_sync after the last remote access, a CTA may finish while
    another still reads its shared memory: rank 1, released first from the barrier, reads
    rank 0's tile, stores into its inbox and finishes; then rank 0 reads rank 1's tile."""
    text = NEIGHBOURS.replace("C", "2")
    text = text[: text.index("  cluster_sync()\n  inbox_out")] + "}\n"  # no barrier after
    report = _report(_kernel(text, "exit.cute"), 4, _args(256))
    assert report == (
        "exit.cute:9:34: load of shared@exit.cute:3:10 of cluster rank 1, whose CTA has "
        "exited: a cluster_sync() before each CTA's end keeps its shared memory for the "
        "others (thread.load, thread (0, 0, 0), block (0, 0, 0))"
    )


def _replace(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new, 1)


def test_a_remote_load_with_no_cluster_barrier_after_the_owners_store_is_a_race() -> None:
    """A CTA barrier in place of the first cluster_sync orders nothing across CTAs."""
    text = _replace(NEIGHBOURS.replace("C", "2"), "  cluster_sync()\n", "  sync()\n")
    report = _report(_kernel(text, "race.cute"), 4, _args(256))
    assert report == (
        "race.cute:9:34: shared-memory race on byte 252 of shared@race.cute:3:10 of cluster "
        "rank 1: load by this thread, store by thread (63, 0, 0) of block (1, 0, 0), no "
        "cluster barrier between (thread.load, thread (0, 0, 0), block (0, 0, 0))"
    )


def test_an_owner_store_after_a_remote_store_with_no_cluster_barrier_is_a_race() -> None:
    """Each CTA clears its inbox after the first cluster_sync, while the CTA of the
    previous rank stores into it: rank 1, released first, stored into rank 0's."""
    old = "  box = map_shared_rank(inbox, next)\n"
    text = _replace(NEIGHBOURS.replace("C", "2"), old, "  inbox[thread.x] = 0.0\n" + old)
    report = _report(_kernel(text, "race.cute"), 4, _args(256))
    assert report == (
        "race.cute:10:3: shared-memory race on byte 0 of shared@race.cute:4:11: store by this "
        "thread, a store by another CTA of the cluster (map_shared_rank), no cluster barrier "
        "between (thread.store, thread (0, 0, 0), block (0, 0, 0))"
    )


WAR = """\
kernel war(out: f32[M]) grid 4 threads 64 cluster (2, 1, 1) {
  inbox = smem f32[64]
  inbox[thread.x] = 0.0
  cluster_sync()
  out[64 * block.x + thread.x] = inbox[thread.x]
  sync()
  box = map_shared_rank(inbox, (block_rank_in_cluster() + 1) % 2)
  box[thread.x] = 1.0
  cluster_sync()
}
"""


def test_a_remote_store_into_what_the_owner_read_is_a_race() -> None:
    """Each CTA reads its inbox, then (after a CTA barrier only) stores into the next
    rank's: rank 0 stores into what rank 1 read, with no cluster barrier between."""
    report = _report(_kernel(WAR, "war.cute"), 4, {"out": np.zeros(256, np.float32), "M": 256})
    assert report == (
        "war.cute:8:3: shared-memory race on byte 0 of shared@war.cute:2:11 of cluster rank "
        "1: store by this thread, load by thread (0, 0, 0) of block (1, 0, 0), no cluster "
        "barrier between (thread.store, thread (0, 0, 0), block (0, 0, 0))"
    )


@pytest.mark.parametrize("backend", BACKENDS, ids=IDS)
def test_a_remote_store_counts_as_written_for_the_owners_loads(backend: Any) -> None:
    """The inbox each CTA loads was written only by another CTA: no uninitialised load
    (the remote store marks the owner's shadow), and the values are the other CTA's."""
    kernel = _kernel(neighbours_text(2), "neighbours.cute")
    args = _args(256)
    backend.run_kernel(kernel, 4, args, check_shared=True)
    assert args["inbox_out"][64] == 0.5 and args["inbox_out"][0] == 1000.5


# A copy of 4 elements of the next rank's tile into registers: another CTA's shared
# memory keeps its buffer's alignment, so vectorize makes it one ld.shared::cluster.v4.
VECTORS = """\
kernel vectors(out: f32[256] align 16) grid 4 threads 16 cluster (2, 1, 1) {
  s = smem f32[64]
  for i in range(4) { s[16 * i + thread.x] = f32(16 * i + thread.x + 1000 * block.x) }
  cluster_sync()
  r = map_shared_rank(s, (block_rank_in_cluster() + 1) % 2)
  mine = local_tile(r, make_shape(4), make_coord(thread.x))
  f = make_fragment_like(mine)
  copy(mine, f)
  copy(f, local_tile(out, make_shape(4), make_coord(16 * block.x + thread.x)))
  cluster_sync()
}
"""


@pytest.mark.parametrize("backend", BACKENDS, ids=IDS)
def test_a_copy_reads_another_ctas_tile_16_bytes_a_thread(backend: Any) -> None:
    out = np.zeros(256, np.float32)
    backend.run_kernel(_kernel(VECTORS, "vectors.cute"), 4, {"out": out})
    cta = np.arange(4)[:, None]
    assert np.array_equal(out.reshape(4, 64), 1000 * (cta ^ 1) + np.arange(64))


@pytest.mark.skipif(find_ptxas() is None, reason="no ptxas (install the test extra)")
def test_ptxas_assembles_the_vector_copy() -> None:
    ptx = compile(Source(VECTORS, "v.cute"), Stage.PTX, Options(target="sm_90a")).text
    assert "ld.shared::cluster.v4.f32" in ptx
    result = assemble(ptx, "sm_90a")
    assert result.ok, result.stderr


@pytest.mark.skipif(find_ptxas() is None, reason="no ptxas (install the test extra)")
@pytest.mark.parametrize("c", [2, 4])
def test_ptxas_assembles_mapa_and_shared_cluster_accesses(c: int) -> None:
    ptx = compile(Source(neighbours_text(c), "n.cute"), Stage.PTX, Options(target="sm_90a")).text
    assert ptx.count("mapa.shared::cluster.u64") == 2
    assert "ld.shared::cluster.f32" in ptx and "st.shared::cluster.f32" in ptx
    assert f".reqnctapercluster {c}, 1, 1" in ptx
    result = assemble(ptx, "sm_90a")
    assert result.ok, result.stderr
