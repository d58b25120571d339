"""TMA stores on the CPU (cutec/cpu/reference_tma_store.py; the native backend falls back
to the interpreter): tests/ptx/data/tma_store.mlir launched through the JIT with its
launch record writes each box's in-bounds elements and leaves the rest of the output
(a sentinel) alone, at ragged and whole sizes, as tests/gpu/test_tma_store_gpu.py
expects on the GPU; a swizzled map reads the tile swizzled; the box is read at the
wait that covers it (or at the CTA's end); and one planted bug per check: a missing
proxy fence, the staging tile rewritten before the wait_group.read, a missing barrier
before the tile is rewritten; and the record of proxy fences on its own."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cutec.atoms.tma import TmaDataType, TmaSwizzle, TmaTensorMap
from cutec.cpu import checks, reference, tma
from cutec.cpu.reference import AccessError
from cutec.driver import Source
from cutec.ir.dialects.builtin import KernelOp
from cutec.ir.parser import parse_module
from cutec.ir.signature import KernelLaunch
from cutec.ir.verifier import verify
from cutec.runtime import cache
from cutec.runtime.jit import Kernel
from cutec.runtime.tensor_map import TensorMapError
from tests.ptx.test_tma_store_ptx import TMA_STORE, TMA_STORE_MLIR

SENTINEL = -7.0
FENCE = "      thread.fence_proxy_async\n"
COMMIT = "        thread.bulk_commit\n"
WAIT = "        thread.bulk_wait {pending = 0 : i32, read}\n"


def operands(m: int, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The boxes' values S (two 16 x 8 boxes per CTA of the grid over 16 x 16 tiles), the
    output's storage (n rows of a padded leading dimension, all SENTINEL), and the
    column-major M x N matrix D that the kernel should leave in it (SENTINEL where the
    storage is padding)."""
    tiles_m, tiles_n = -(-m // 16), -(-n // 16)
    s = np.random.default_rng(seed).standard_normal(tiles_m * tiles_n * 256).astype(np.float32)
    ld = -(-m // 4) * 4 + 4  # 16-byte strides, padded
    storage = np.full((n, ld), SENTINEL, np.float32)
    padded = np.empty((16 * tiles_m, 16 * tiles_n), np.float32)
    boxes = s.reshape(tiles_n, tiles_m, 2, 8, 16)  # (cta y, cta x, k, column, row)
    for y, x, k in np.ndindex(tiles_n, tiles_m, 2):
        column = 16 * y + 8 * k
        padded[16 * x : 16 * x + 16, column : column + 8] = boxes[y, x, k].T
    want = storage.copy()
    want[:, :m] = padded[:m, :n].T
    return s, storage, want


def _jit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Kernel:
    """The JIT's kernel of tma_store.mlir with its launch record (from the cache)."""
    monkeypatch.setenv("CUTEC_CACHE_DIR", str(tmp_path))
    k = Kernel(Source.from_file(TMA_STORE_MLIR), "tma_store", {}, "sm_90a", "cpu", True)
    cache.store(k._key("signature", "sm_90a"), cache.Entry(KernelLaunch(*TMA_STORE).to_json(), {}))
    return k


@pytest.mark.parametrize("m, n", [(40, 20), (32, 32), (20, 9)])
def test_the_tma_store_kernel_writes_each_box_in_bounds(
    m: int, n: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s, storage, want = operands(m, n)
    k = _jit(tmp_path, monkeypatch)
    k(s, storage.T[:m])
    np.testing.assert_array_equal(storage, want)
    assert k.cpu_backend is not None and k.cpu_backend.startswith("reference")


def test_a_store_map_whose_rows_end_inside_a_16_byte_chunk_is_refused_at_launch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A TMA store writes whole 16-byte chunks (an H200 writes elements 17..19 of a
    17-row f32 column): M = 17 is refused, naming the map, before anything runs."""
    s, storage, _ = operands(17, 9)
    k = _jit(tmp_path, monkeypatch)
    with pytest.raises(TensorMapError, match="parameter 'D_map': a TMA store writes whole"):
        k(s, storage.T[:17])
    assert (storage == SENTINEL).all()


def test_the_interpreter_refuses_a_store_past_a_partial_chunk() -> None:
    text = TMA_STORE_MLIR.read_text()
    with pytest.raises(AccessError) as info:
        _run(text, m=17, n=9)
    line = _line(text, 'thread.atom "SM90_TMA_STORE')
    assert str(info.value).startswith(f"tma.mlir:{line}:9: a TMA store writes whole 16-byte")


def _kernel(text: str) -> KernelOp:
    module = parse_module(text, "tma.mlir")
    verify(module)
    (kernel,) = module.walk_type(KernelOp)
    return kernel


def _run(text: str, m: int = 40, n: int = 20, swizzle: TmaSwizzle = TmaSwizzle.NONE,
         check_shared: bool = True) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """tma_store (or a variant, `text`) in the interpreter with the launch's map (dims
    (m, n), box (16, 8), `swizzle`): the output's storage and what it should hold."""
    s, storage, want = operands(m, n)
    ld = storage.shape[1]
    desc = TmaTensorMap(TmaDataType.FLOAT32, (m, n), (4 * ld,), (16, 8), swizzle=swizzle)
    grid = (-(-m // 16), -(-n // 16))
    args = [s, s.size, storage, m, n, ld, tma.TensorMapArgument(desc, "D")]
    reference.run_kernel(_kernel(text), grid, args, check_shared=check_shared)
    return storage, want


def _variant(old: str, new: str) -> str:
    text = TMA_STORE_MLIR.read_text()
    assert old in text
    return text.replace(old, new)


def _line(text: str, op: str) -> int:
    """The 1-based line of the first line of `text` that holds `op`."""
    return next(i for i, line in enumerate(text.splitlines(), 1) if op in line)


def test_a_plain_wait_gives_the_same_boxes() -> None:
    text = _variant(WAIT, WAIT.replace(", read", ""))
    got, want = _run(text)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("swizzle", [TmaSwizzle.B64, TmaSwizzle.B128])
def test_a_swizzled_map_reads_the_tile_swizzled(swizzle: TmaSwizzle) -> None:
    """Byte o of each box is read from byte swizzle(o) of the tile (the threads write
    element t of the tile at 4 t, unswizzled). (The box's 64-byte inner dimension is
    too wide for the 32B swizzle.)"""
    m, n = 32, 16
    got, _ = _run(TMA_STORE_MLIR.read_text(), m, n, swizzle)
    s, _, want = operands(m, n)
    tiles = s.reshape(-1, 128).view(np.uint8)
    placed = np.ascontiguousarray(tiles[:, tma.swizzle(np.arange(512), swizzle.span_bytes)])
    assert not np.array_equal(placed, tiles)
    boxes = placed.view(np.float32).reshape(n // 16, m // 16, 2, 8, 16)
    for y, x, k in np.ndindex(n // 16, m // 16, 2):
        want[16 * y + 8 * k : 16 * y + 8 * k + 8, 16 * x : 16 * x + 16] = boxes[y, x, k]
    np.testing.assert_array_equal(got, want)


def test_without_a_wait_the_box_is_read_at_the_ctas_end() -> None:
    """No wait covers the first box's store, so (checks off) it is read at the CTA's
    end, after the tile was rewritten for the second box: both boxes hold the second's
    values. (With the checks, the rewrite is reported.)"""
    text = _variant(WAIT, "")
    m, n = 16, 16
    got, want = _run(text, m, n, check_shared=False)
    np.testing.assert_array_equal(got[8:], want[8:])
    np.testing.assert_array_equal(got[:8], want[8:])
    with pytest.raises(AccessError, match=r"rewritten before cp.async.bulk.wait_group.read"):
        _run(text, m, n)


def test_a_missing_proxy_fence_is_reported_at_the_store() -> None:
    text = _variant(FENCE, "")
    at = _line(text, "SM90_TMA_STORE_2D")
    with pytest.raises(AccessError, match=rf"tma.mlir:{at}:9: missing proxy fence: the TMA "
                       r"store reads byte 0 of shared@tma.mlir:12:13, which thread \(0, 0, 0\) "
                       r"wrote through the generic proxy and did not fence"):  # fmt: skip
        _run(text)


def test_a_fence_before_the_write_is_no_fence() -> None:
    """The fence must follow the write: one before it leaves the write unfenced."""
    text = _variant(FENCE, "").replace(
        "      thread.store %v, %here", FENCE + "      thread.store %v, %here"
    )
    with pytest.raises(AccessError, match="missing proxy fence: the TMA store"):
        _run(text)


def test_a_tile_rewritten_before_the_wait_is_reported_at_the_write() -> None:
    rewrite = "        thread.store %v, %here : f32, !gpu.ptr<f32, shared>\n"
    text = _variant(COMMIT, COMMIT + rewrite)
    at, store = _line(text, "thread.bulk_commit") + 1, _line(text, "SM90_TMA_STORE_2D")
    with pytest.raises(AccessError, match=rf"tma.mlir:{at}:9: store of byte 0 of "
                       rf"shared@tma.mlir:12:13, which the TMA store at tma.mlir:{store}:9 "
                       r"reads: the staging tile is rewritten before "
                       r"cp.async.bulk.wait_group.read"):  # fmt: skip
        _run(text)
    # After the wait the tile may be rewritten: the same write there is no error.
    text = _variant(WAIT, WAIT + rewrite)
    got, want = _run(text)
    np.testing.assert_array_equal(got, want)


def test_a_missing_barrier_before_the_tile_is_rewritten_is_a_race() -> None:
    """Without the barrier after thread 0's wait, the other threads write the next box
    into the tile while thread 0's store may still read it."""
    text = _variant("      gpu.barrier\n      scf.yield", "      scf.yield")
    at = _line(text, "thread.store %v, %here")
    with pytest.raises(AccessError, match=rf"tma.mlir:{at}:7: shared-memory race on byte 4 "
                       r"of shared@tma.mlir:12:13: store by this thread, load by thread "
                       r"\(0, 0, 0\)"):  # fmt: skip
        _run(text)


def test_proxy_fences_record_each_writers_last_fence() -> None:
    """`checks.ProxyFences`, which the TMA store and wgmma checks share: a generic write
    is unfenced until its writer fences; another thread's fence does not cover it; a
    write after the fence is unfenced again; bytes the async proxy wrote (a TMA load
    landing) need no fence."""
    shadow, proxy = checks.SharedShadow(64), checks.ProxyFences()
    units = np.arange(64)
    assert proxy.unfenced(shadow, units) is None  # nothing written
    assert shadow.access(16, 4, 3, checks.STORE, 1, 1) is None  # thread 3 writes 16..19
    assert proxy.unfenced(shadow, units) == 16
    proxy.fence([shadow], [2])
    assert proxy.unfenced(shadow, units) == 16
    proxy.fence([shadow], [3])
    assert proxy.unfenced(shadow, units) is None
    assert shadow.access(18, 1, 3, checks.STORE, 2, 1) is None  # rewritten after the fence
    assert proxy.unfenced(shadow, units) == 18
    assert shadow.access(32, 16, 0, checks.ASYNC, 2, 1) is None  # a TMA load's bytes ...
    shadow.land(32, 16)
    proxy.async_write(shadow, 32, 16)  # ... landed by the async proxy
    assert proxy.unfenced(shadow, units[32:]) is None
