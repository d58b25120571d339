"""The lowered examples compute the right values: every thread of every block, run by
the thread-dialect reference interpreter, touches the elements CuTe's partitioning
gives it, writes each output element exactly once, stays in bounds (the
interpreter raises on any out-of-bounds or misaligned access and on shared-memory
races) and the GEMMs match a float64 reference."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import cutec
from cutec.cpu.reference import run_kernel
from cutec.driver import Options, Source, Stage, compile
from cutec.ir.dialects.builtin import KernelOp, ModuleOp

EXAMPLES = Path(__file__).parents[2] / "examples"


def _kernels(source: Source, **defines: object) -> dict[str, KernelOp]:
    module = compile(source, Stage.THREAD, Options(defines=defines)).module
    assert isinstance(module, ModuleOp)
    assert not [op.name for op in module.walk() if op.name.startswith("cute.")]
    return {k.sym_name: k for k in module.walk_type(KernelOp)}


@pytest.fixture(scope="module")
def tiled_copy() -> dict[str, KernelOp]:
    return _kernels(Source.from_file(EXAMPLES / "tiled_copy.cute"))


def _column_major(m: int, n: int, seed: int) -> np.ndarray:
    """An (m, n) column-major f32 matrix, stored as its transpose's rows."""
    return np.random.default_rng(seed).standard_normal((n, m)).astype(np.float32)


def test_copy_kernel_threads_touch_their_local_partition(tiled_copy) -> None:
    """Thread t of block (bx, by) reads S(bx*128 + t%32 + 32i, by*64 + t//32 + 8j):
    local_partition of the (128,64) tile by the column-major (32,8) thread layout."""
    m, n = 256, 128
    s, d = _column_major(m, n, 0), np.zeros((n, m), np.float32)
    args = {"S": s, "M": m, "N": n, "D": d}
    run = run_kernel(tiled_copy["copy_kernel"], (2, 2), args, trace=True)
    assert np.array_equal(s, d)
    loads = run.elements("S", "load", 4)
    for (block, thread), got in loads.items():
        bx, by, _ = block
        t = thread[0]
        rows = [bx * 128 + t % 32 + 32 * i for i in range(4)]
        cols = [by * 64 + t // 32 + 8 * j for j in range(8)]
        want = sorted(r + m * c for r in rows for c in cols)
        assert sorted(got) == want, (block, thread)
    assert len(loads) == 4 * 256
    assert (run.store_counts("D", m * n, 4) == 1).all()


def test_vectorized_copy_moves_four_contiguous_elements_per_access(tiled_copy) -> None:
    m, n = 256, 128
    s, d = _column_major(m, n, 1), np.zeros((n, m), np.float32)
    run = run_kernel(
        tiled_copy["copy_kernel_vectorized"], (2, 2), {"S": s, "M": m, "N": n, "D": d}, trace=True
    )
    assert np.array_equal(s, d)
    global_accesses = [a for a in run.trace if a.buffer in ("S", "D")]
    assert global_accesses and all(a.nbytes == 16 for a in global_accesses)
    assert (run.store_counts("D", m * n, 4) == 1).all()


@pytest.mark.parametrize(("m", "n"), [(260, 100), (128, 64), (4, 1)])
def test_predicated_copy_touches_nothing_out_of_bounds(tiled_copy, m: int, n: int) -> None:
    s, d = _column_major(m, n, 2), np.zeros((n, m), np.float32)
    grid = (-(-m // 128), -(-n // 64))
    run = run_kernel(
        tiled_copy["copy_if_kernel_vectorized"], grid, {"S": s, "M": m, "N": n, "D": d}, trace=True
    )
    assert np.array_equal(s, d)
    assert (run.store_counts("D", m * n, 4) == 1).all()


STATIC_COPY = """
kernel copy_static(S: f32[64, 8], D: f32[64, 8]) grid 1 threads 64 {
  tS = local_partition(S, make_layout((16, 4)), thread.x)
  tD = local_partition(D, make_layout((16, 4)), thread.x)
  r = make_fragment_like(tS)
  copy(tS, r)
  copy(r, tD)
}
"""


def test_static_shapes_lower_and_copy() -> None:
    kernel = _kernels(Source(STATIC_COPY, "static.cute"))["copy_static"]
    s, d = _column_major(64, 8, 3), np.zeros((8, 64), np.float32)
    run = run_kernel(kernel, 1, {"S": s, "D": d}, trace=True)
    assert np.array_equal(s, d)
    assert (run.store_counts("D", 64 * 8, 4) == 1).all()


def _gemm_args(name: str, m: int, n: int, k: int, beta: float) -> tuple[dict, np.ndarray]:
    """Arguments of an sgemm kernel (NT: m- and n-major; TN: k-major) and the reference."""
    rng = np.random.default_rng(4)
    nt = name.endswith("nt")
    a = rng.standard_normal((k, m) if nt else (m, k)).astype(np.float32)
    b = rng.standard_normal((k, n) if nt else (n, k)).astype(np.float32)
    c = rng.standard_normal((n, m)).astype(np.float32)
    am, bm = (a.T, b.T) if nt else (a, b)
    alpha = 1.5
    ref = alpha * (am.astype(np.float64) @ bm.astype(np.float64).T)
    if beta:
        ref += beta * c.T.astype(np.float64)
    else:
        c[:] = np.nan  # beta == 0 never reads C (CuTe's isBetaZero)
    args = {
        "A": a, "M": m, "K": k, "ldA": m if nt else k,
        "B": b, "N": n, "ldB": n if nt else k,
        "C": c, "ldC": m, "alpha": alpha, "beta": beta,
    }  # fmt: skip
    return args, ref


@pytest.mark.parametrize(
    ("example", "kernel", "beta"),
    [
        # CI runs one kernel of each beta; the others are slow cases (`pytest -m slow`).
        pytest.param("sgemm_1", "sgemm_nt", 0.25, marks=pytest.mark.slow),
        ("sgemm_1", "sgemm_tn", 0.0),
        pytest.param("sgemm_2", "sgemm_nt", 0.0, marks=pytest.mark.slow),
        pytest.param("sgemm_2", "sgemm_tn", 0.25, marks=pytest.mark.slow),
        ("sgemm_2_shared", "sgemm_nt", 0.25),
    ],
)
def test_sgemm_matches_float64(example: str, kernel: str, beta: float) -> None:
    k = _kernels(Source.from_file(EXAMPLES / f"{example}.cute"))[kernel]
    m = n = 128
    args, ref = _gemm_args(kernel, m, n, 16, beta)
    run = run_kernel(k, (1, 1), args, trace=True)
    got = args["C"].T.astype(np.float64)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-4)
    assert (run.store_counts("C", m * n, 4) == 1).all()


@pytest.mark.parametrize(
    ("example", "kernel", "shape"),
    [
        ("sgemm_1", "sgemm_tn", (100, 36, 13)),
        pytest.param("sgemm_2", "sgemm_nt", (132, 20, 11), marks=pytest.mark.slow),
        ("sgemm_2", "sgemm_tn", (40, 100, 9)),
    ],
)
def test_partial_tiles_are_predicated(example: str, kernel: str, shape: tuple) -> None:
    """M, N and K that the tiles do not divide: the residue is guarded (the
    interpreter raises on any out-of-bounds access) and K's is zero-filled. NT's M
    spans two CTAs, so a partial tile after a whole one is among them."""
    k = _kernels(Source.from_file(EXAMPLES / f"{example}.cute"))[kernel]
    m, n, kk = shape
    args, ref = _gemm_args(kernel, m, n, kk, 0.5)
    run = run_kernel(k, (-(-m // 128), -(-n // 128)), args, trace=True)
    got = args["C"].T.astype(np.float64)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-4)
    assert (run.store_counts("C", m * n, 4) == 1).all()


CP_ASYNC = """
kernel stage(S: f32[M, N] align 16, D: f32[M, N] align 16)
  assume M % 4 == 0
  grid (ceil_div(M, 32), ceil_div(N, 8)) threads 64
{
  cp = tiled_copy(SM80_CP_ASYNC_CACHEGLOBAL_ZFILL[u128], thr = (8, 8), val = (4, 1))
  cS = make_identity_tensor(shape(S))
  gS = local_tile(S, (32, 8), (block.x, block.y))
  gD = local_tile(D, (32, 8), (block.x, block.y))
  gC = local_tile(cS, (32, 8), (block.x, block.y))
  sT = smem f32[(32, 8)]
  t = cp.slice(thread.x)
  tS = t.partition_S(gS)
  tT = t.partition_D(sT)
  tC = t.partition_S(gC)
  p = make_fragment_like(tC, dtype = bool)
  for i in range(size(p)) unroll {
    p[i] = elem_less(tC[i], shape(S))
  }
  copy(cp, tS, tT, pred = p)
  cp_async_fence()
  cp_async_wait(0)
  sync()
  r = make_fragment_like(tS)
  copy(t.partition_S(sT), r)
  copy(r, t.partition_D(gD), pred = p)
}
"""


@pytest.mark.parametrize(("m", "n"), [(36, 10), (32, 8)])
def test_cp_async_zfill_stages_through_shared_memory(m: int, n: int) -> None:
    """cp.async.cg of 16 bytes, src-size 0 past the end, committed, waited, read back."""
    kernel = _kernels(Source(CP_ASYNC, "cp_async.cute"))["stage"]
    s, d = _column_major(m, n, 5), np.zeros((n, m), np.float32)
    run = run_kernel(
        kernel, (-(-m // 32), -(-n // 8)), {"S": s, "M": m, "N": n, "D": d}, trace=True
    )
    assert np.array_equal(s, d)
    assert (run.store_counts("D", m * n, 4) == 1).all()
    cp_async = [op for op in kernel.walk() if op.name == "thread.cp_async"]
    assert cp_async and all(op.cache_op == "cg" and op.src_size is not None for op in cp_async)


def test_tiled_copy_threads_load_what_the_algebra_assigns() -> None:
    """sgemm_2 NT's first A copy: each thread loads, in 128-bit accesses, exactly the
    elements of its TiledCopy partition_S of the (128,8) tile, as the cute-level
    algebra (address_of) places them: evaluated here with the thread and block
    indices, reached in the kernel through partition, lower-to-thread, promotion
    and simplification."""
    from cutec.ir.dialects.cute_compute import CopyOp
    from cutec.ir.layout_of import LayoutAnalysis
    from cutec.layout.symbolic import evaluate

    source = Source.from_file(EXAMPLES / "sgemm_2.cute")
    options = Options(kernel="sgemm_nt", pipeline="")
    cute = compile(source, Stage.CUTE, options).module
    la = LayoutAnalysis()
    first = next(op for op in cute.walk_type(CopyOp) if op.tiled is not None)
    address = la.address_of(first.src)  # tAgA[_, _, _, 0]
    m, n, k = 256, 128, 8  # two CTAs along M, one k-tile: the first copy is all it checks
    env = {"M": m, "K": k, "ldA": m}
    expected: dict[tuple[int, int], set[int]] = {}
    for bx in range(2):
        for t in range(256):
            at = {**env, "bid_x": bx, "bid_y": 0, "tid_x": t}
            size = 4  # ((4,1),1,1): one 128-bit access
            expected[bx, t] = {
                evaluate(address.offset + address.layout(i), at) for i in range(size)
            }
    kernel = _kernels(source)["sgemm_nt"]
    args, _ = _gemm_args("sgemm_nt", m, n, k, 0.5)
    run = run_kernel(kernel, (2, 1), args, trace=True)
    first_loads: dict[tuple[int, int], set[int]] = {}
    for a in run.trace:
        if a.buffer == "A" and a.kind == "load" and a.block[1] == 0:
            key = (a.block[0], a.thread[0])
            if key not in first_loads:  # the copy before the k-loop comes first
                assert a.nbytes == 16
                first_loads[key] = set(range(a.offset // 4, a.offset // 4 + 4))
    assert first_loads == expected


SWIZZLED = """
kernel swz(S: f32[32, 8] : (8, 1), D: f32[32, 8] : (8, 1)) grid 1 threads 32 {
  sT = smem f32[composition(swizzle(2, 2, 3), (32, 8) : (8, 1))]
  tS = local_partition(S, make_layout((32, 1)), thread.x)
  tT = local_partition(sT, make_layout((32, 1)), thread.x)
  copy(tS, tT)
  sync()
  tT2 = local_partition(sT, make_layout((4, 8)), thread.x)
  tD2 = local_partition(D, make_layout((4, 8)), thread.x)
  copy(tT2, tD2)
}
"""


def test_swizzled_shared_memory_swizzles_every_view() -> None:
    """Two partitions of one swizzled buffer (each thread's slice keeps the swizzle
    outside its offset): element (m, n) lives at Sw<2,2,3>(8m + n) for the writer's
    view and the reader's, so the round trip is exact and the bytes sit where the
    swizzle says."""
    from cutec.layout import Swizzle

    kernel = _kernels(Source(SWIZZLED, "swizzled.cute"))["swz"]
    s = np.random.default_rng(6).standard_normal((32, 8)).astype(np.float32)
    d = np.zeros_like(s)
    run = run_kernel(kernel, 1, {"S": s, "D": d}, trace=True)
    assert np.array_equal(s, d)
    sw = Swizzle(2, 2, 3)
    stores = [a for a in run.trace if a.kind == "store" and a.buffer.startswith("shared")]
    assert len(stores) == 32 * 8
    for a in stores:
        m = a.thread[0]  # thread m writes row m, in order n = 0..7
        n = sum(1 for b in stores[: stores.index(a)] if b.thread == a.thread)
        assert a.offset == 4 * sw(8 * m + n), (m, n)


BIG_SMEM = """
kernel stage(S: f32[128, 128], D: f32[128, 128]) grid 1 threads 256 {
  sT = smem f32[(128, 128)]
  tS = local_partition(S, make_layout((32, 8)), thread.x)
  tT = local_partition(sT, make_layout((32, 8)), thread.x)
  copy(tS, tT)
  sync()
  tT2 = local_partition(sT, make_layout((8, 32)), thread.x)
  tD2 = local_partition(D, make_layout((8, 32)), thread.x)
  copy(tT2, tD2)
}
"""


def test_shared_memory_past_48_kib_is_dynamic() -> None:
    """64 KiB of shared memory: past the 48 KiB of static .shared, so the buffer is
    the kernel's dynamic shared memory, which the kernel records for the launch."""
    from cutec.ptx.ptxas import assemble, find_ptxas

    result = compile(Source(BIG_SMEM, "big.cute"), Stage.PTX, Options(target="sm_90a"))
    (kernel,) = result.module.walk_type(KernelOp)
    assert kernel.attributes["dynamic_smem"].value == 128 * 128 * 4
    assert not [op for op in kernel.walk() if op.name == "thread.alloc_shared"]
    assert ".extern .shared" in result.ptx
    if find_ptxas() is not None:
        assert assemble(result.ptx, "sm_90a").ok
    s = np.random.default_rng(7).standard_normal((128, 128)).astype(np.float32)
    d = np.zeros_like(s)
    run_kernel(kernel, 1, {"S": s, "D": d})
    assert np.array_equal(s, d)


def test_64_bit_offsets_compute_the_same_addresses() -> None:
    """lower-to-thread{offset-bits=64}: no 32-bit bound is recorded, values agree."""
    from cutec.passes import PASSES, PassManager, parse_pipeline

    source = Source.from_file(EXAMPLES / "tiled_copy.cute")
    module = compile(source, Stage.CUTE, Options(kernel="copy_if_kernel_vectorized")).module
    pipeline = "partition,lower-to-thread{offset-bits=64},promote-registers,simplify"
    PassManager(parse_pipeline(pipeline, PASSES)).run(module)
    (kernel,) = module.walk_type(KernelOp)
    assert "offsets" not in kernel.attributes
    adds = [op for op in kernel.walk() if op.name == "thread.ptr_add"]
    assert adds and all(str(op.offset.type) == "i64" for op in adds)
    m, n = 132, 70
    s, d = _column_major(m, n, 8), np.zeros((n, m), np.float32)
    run_kernel(kernel, (2, 2), {"S": s, "M": m, "N": n, "D": d})
    assert np.array_equal(s, d)


CP_ASYNC_UNGUARDED = """
kernel stage(S: f32[M, N] align 16, D: f32[M, N] align 16)
  assume M % 4 == 0
  grid (ceil_div(M, 32), ceil_div(N, 8)) threads 64
{
  cp = tiled_copy(SM80_CP_ASYNC_CACHEGLOBAL[u128], thr = (8, 8), val = (4, 1))
  gS = local_tile(S, (32, 8), (block.x, block.y))
  gD = local_tile(D, (32, 8), (block.x, block.y))
  sT = smem f32[(32, 8)]
  t = cp.slice(thread.x)
  copy(cp, t.partition_S(gS), t.partition_D(sT))
  cp_async_fence()
  cp_async_wait(0)
  sync()
  r = make_fragment_like(t.partition_D(sT))
  copy(t.partition_S(sT), r)
  copy(r, t.partition_D(gD))
}
"""


def test_predicate_pass_guards_cp_async_with_zero_fill() -> None:
    """A cp.async from a partial tile, written without a predicate: the predicate
    pass adds one, and past the end the copy reads nothing and writes zeros
    (src-size 0) even with a non-_ZFILL atom; the store back is masked."""
    kernel = _kernels(Source(CP_ASYNC_UNGUARDED, "cp_async.cute"))["stage"]
    cp_async = [op for op in kernel.walk() if op.name == "thread.cp_async"]
    assert cp_async and all(op.src_size is not None for op in cp_async)
    m, n = 36, 10
    s, d = _column_major(m, n, 9), np.zeros((n, m), np.float32)
    run = run_kernel(kernel, (2, 2), {"S": s, "M": m, "N": n, "D": d}, trace=True)
    assert np.array_equal(s, d)
    assert (run.store_counts("D", m * n, 4) == 1).all()


@pytest.mark.parametrize("m", [2048, 1300])
def test_elementwise_fragment_arithmetic(m: int) -> None:
    """examples/elementwise.cute: z = alpha * f32(x) + y with x in f16, as cute.map ops
    lowered per element: against float64 of the same f16 inputs (one rounding per op)."""
    kernel = _kernels(Source.from_file(EXAMPLES / "elementwise.cute"))["axpy"]
    rng = np.random.default_rng(10)
    x = rng.standard_normal(m).astype(np.float16)
    y = rng.standard_normal(m).astype(np.float32)
    z = np.full(m, np.nan, np.float32)
    run = run_kernel(
        kernel, (-(-m // 1024),), {"x": x, "M": m, "y": y, "z": z, "alpha": 1.5}, trace=True
    )
    ref = np.float32(1.5) * x.astype(np.float32) + y  # f32 mul then f32 add, as written
    np.testing.assert_array_equal(z, ref)
    assert (run.store_counts("z", m, 4) == 1).all()
    loads = [a for a in run.trace if a.buffer in ("x", "y")]
    assert {a.nbytes for a in loads} == {8, 16}  # 4 f16 and 4 f32 per access


@pytest.mark.parametrize(
    "view", ["make_tensor(sS, (B, B) : (B + 1, 1))", "composition(sS, (B, B) : (B, 1))"]
)
def test_transpose_through_a_second_view_of_shared_memory(view: str) -> None:
    """examples/transpose.cute, and the same kernel with the transposed view written as
    a composition: D = Sᵀ, each element written once, the smem reads hit exactly the
    elements the writes filled."""
    text = (EXAMPLES / "transpose.cute").read_text()
    if not view.startswith("make_tensor"):
        text = text.replace("make_tensor(sS, (B, B) : (B + 1, 1))", view)
        assert view in text
    kernel = _kernels(Source(text, "transpose.cute"))["transpose"]
    m, n = 64, 96
    s = np.random.default_rng(11).standard_normal((n, m)).astype(np.float32)  # (M,N) col-major
    d = np.zeros((m, n), np.float32)  # (N,M) column-major: rows of M
    run = run_kernel(kernel, (m // 32, n // 32), {"S": s, "M": m, "N": n, "D": d}, trace=True)
    np.testing.assert_array_equal(d, s.T)
    assert (run.store_counts("D", m * n, 4) == 1).all()
    shared = [a for a in run.trace if a.buffer.startswith("shared") and a.block == (0, 0, 0)]
    written = {a.offset for a in shared if a.kind == "store"}
    read = {a.offset for a in shared if a.kind == "load"}
    assert len(written) == 32 * 32 and read == written


REDUCE = """
kernel rows(A: f32[8, 4] : (4, 1), S: f32[8], T: f32[1]) grid 1 threads 8 {
  tA = local_partition(A, make_layout((8, 1)), thread.x)      // (1,4): the thread's row
  r = make_fragment_like(tA)
  copy(tA, r)
  S[thread.x] = reduce_sum(r)
  m = reduce_max(r, 1)                                        // over mode 1: 1 element
  T[0] = reduce_min(m) if thread.x == 0 else T[0]
}
"""


def test_fragment_reductions() -> None:
    """reduce_sum over a whole fragment, reduce_max over a mode, reduce_min of that."""
    kernel = _kernels(Source(REDUCE, "reduce.cute"))["rows"]
    a = np.random.default_rng(12).standard_normal((8, 4)).astype(np.float32)
    s, t = np.zeros(8, np.float32), np.zeros(1, np.float32)
    run_kernel(kernel, 1, {"A": a, "S": s, "T": t})
    want = np.zeros(8, np.float32)
    for j in range(4):  # left to right, rounded to f32 after each add
        want = (want + a[:, j]).astype(np.float32)
    np.testing.assert_array_equal(s, want)
    assert t[0] == a[0].max()


def test_layout_tilers_in_local_tile_and_divides() -> None:
    """local_tile(S, (8,8):(8,1), b): a layout tiler takes the tensor's elements in its
    own order: on a 64x64 column-major tensor, tile b is column b seen as an 8x8
    row-major block; copied tile for tile, columns 0..3 of D become S's."""
    source = Source.from_file(Path(__file__).parents[1] / "frontend" / "data" / "layout_tiler.cute")
    text = compile(source, Stage.CUTE).text
    assert "tiler = #cute.layout<(8,8):(8,1)>" in text
    kernel = _kernels(source)["k"]
    s = np.random.default_rng(13).standard_normal((64, 64)).astype(np.float32)
    d = np.zeros_like(s)
    run_kernel(kernel, 4, {"S": s, "D": d})
    np.testing.assert_array_equal(d[:4], s[:4])  # rows of the stored array: columns of (M,N)
    assert not d[4:].any()


def test_recast_moves_the_bytes_as_wider_elements() -> None:
    """recast(S, s32) of 64 f16: 32 words, each a pair of halves, copied bit for bit."""
    source = Source.from_file(Path(__file__).parents[1] / "frontend" / "data" / "recast.cute")
    kernel = _kernels(source)["k"]
    s = np.random.default_rng(14).standard_normal(64).astype(np.float16)
    d = np.zeros_like(s)
    run = run_kernel(kernel, 1, {"S": s, "D": d}, trace=True)
    assert np.array_equal(s.view(np.uint16), d.view(np.uint16))
    assert {a.nbytes for a in run.trace if a.buffer in ("S", "D")} == {4}


SWIZZLED_INDEX = """
kernel swizzled_index(A: f32[32, 8] : (1, 32), D: f32[32, 8] : (1, 32))
  grid (1, 1, 1) threads 128
{
  s = smem f32[GMMA.Layout_MN_SW128_Atom[f32]]
  for i in range(2) {
    e = thread.x + 128 * i
    s[e % 32, e / 32] = A[e % 32, e / 32]
  }
  sync()
  for i in range(2) {
    e = 255 - thread.x - 128 * i
    D[e % 32, e / 32] = s[e % 32, e / 32]
  }
}
"""


def test_a_swizzled_shared_tensor_at_computed_coordinates(tmp_path: Path) -> None:
    """Elements of a swizzled shared tensor at coordinates computed in a loop (each
    thread reads what another wrote): the swizzle applies to the whole offset."""
    path = tmp_path / "swizzled_index.cute"
    path.write_text(SWIZZLED_INDEX)
    a = np.asfortranarray(np.arange(256, dtype=np.float32).reshape(32, 8, order="F"))
    d = np.asfortranarray(np.zeros((32, 8), np.float32))
    cutec.jit(path, device="cpu")(a, d)
    np.testing.assert_array_equal(d, a)


GUARDED_LOOP = """
kernel guarded_loop(A: f32[M] : (1), D: f32[M] : (1)) grid (ceil_div(M, 128)) threads 32
{
  tA = local_partition(local_tile(A, (128,), (block.x,)), make_layout(32), thread.x)
  tD = local_partition(local_tile(D, (128,), (block.x,)), make_layout(32), thread.x)
  for v in range(size(tA)) {
    tD[v] = 2.0 * tA[v]
  }
}
"""


def test_guarded_elements_at_a_loop_index(tmp_path: Path) -> None:
    """Elements of a tile past M at a run-time index (a loop that is not unrolled): the
    guard's coordinate is built from the index (it was an internal compiler error)."""
    path = tmp_path / "guarded_loop.cute"
    path.write_text(GUARDED_LOOP)
    a = np.arange(200, dtype=np.float32)
    d = np.zeros(200, np.float32)
    cutec.jit(path, device="cpu")(a, d)
    np.testing.assert_array_equal(d, 2 * a)
