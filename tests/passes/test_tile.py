"""The whole-tensor GEMM (examples/gemm_auto.cute) by the values it computes on
the CPU, in every majorness, f16 / bf16 (f32 accumulation, C f32 or 16-bit) and
tf32, at sizes the tiles divide and sizes they do not; the heuristic's choices
(`cutec.heuristics.tile_plan`) said as remarks by the `tile` pass; misuses located.

Small integers keep every product and sum exact in each type, so the results are
compared with float64 exactly (up to C's own rounding)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import cutec.runtime as rt
from cutec.cpu import native
from cutec.diagnostics import CompileError
from cutec.driver import Options, Source, Stage, compile
from cutec.heuristics import planner
from cutec.ir.dialects.builtin import KernelOp
from cutec.ir.printer import print_op
from tests.gemm_auto_launch import DIVISIBLE

EXAMPLE = Path(__file__).parents[2] / "examples" / "gemm_auto.cute"
SMALL = {"BM": 32, "BN": 32, "BK": 32, "BP": 2}  # 2x2 warps of 16x8 atoms, 1 k-block


def _call_line(kernel: str, text: str | None = None) -> int:
    """The line of `kernel`'s whole-tensor gemm call in examples/gemm_auto.cute."""
    lines = (text or EXAMPLE.read_text()).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"kernel {kernel}["))
    return next(i + 1 for i in range(start, len(lines)) if lines[i].startswith("  gemm("))


def _kernel(name: str, **defines: Any) -> KernelOp:
    options = Options(**DIVISIBLE, target="sm_80", defines={**SMALL, **defines}, kernel=name)
    module = compile(Source.from_file(EXAMPLE), Stage.THREAD, options).module
    assert module is not None
    return next(k for k in module.walk_type(KernelOp) if k.sym_name == name)


def _numpy(t: str) -> Any:
    if t == "bf16":
        return pytest.importorskip("ml_dtypes").bfloat16
    return np.float16 if t == "f16" else np.float32  # tf32 takes float32 arrays


def _check(
    kernel: KernelOp,
    name: str,
    t: str,
    tc: str,
    m: int,
    n: int,
    k: int,
    tile: int = 32,
    grid: tuple[int, int] | None = None,
) -> None:
    """C = 2 A B^T - C at (m, n, k); A m-major for NT / NN, B n-major for NT / TT."""
    rng = np.random.default_rng(m * n + k)
    a = rng.integers(-3, 4, (m, k)).astype(np.float64)
    b = rng.integers(-3, 4, (n, k)).astype(np.float64)
    c = rng.integers(-3, 4, (m, n)).astype(np.float64)
    a_mn, b_mn = name[-2] == "n", name[-1] == "t"
    # An m-major (M,K) is a (K,M) row-major array; a k-major one (M,K) row-major.
    a_arr = np.ascontiguousarray(a.T if a_mn else a).astype(_numpy(t))
    b_arr = np.ascontiguousarray(b.T if b_mn else b).astype(_numpy(t))
    c_arr = np.asfortranarray(c).astype(_numpy(tc))
    args = {"A": a_arr, "M": m, "K": k, "ldA": m if a_mn else k,
            "B": b_arr, "N": n, "ldB": n if b_mn else k,
            "C": c_arr, "ldC": m, "alpha": 2.0, "beta": -1.0}  # fmt: skip
    native.run_kernel(kernel, grid or (-(-m // tile), -(-n // tile)), args)
    want = 2.0 * a @ b.T - c
    got = np.asarray(args["C"], dtype=np.float64)
    if tc == "f32":
        np.testing.assert_array_equal(got, want)
    else:  # C rounded to its 16-bit type once
        np.testing.assert_array_equal(got, want.astype(_numpy(tc)).astype(np.float64))


SIZES = [(64, 32, 64), (40, 48, 72), (24, 8, 8)]  # divided; M, N, K residues; one partial tile


@pytest.mark.parametrize("name", ["gemm_nt", "gemm_tn", "gemm_nn", "gemm_tt"])
# bf16 takes f16's plan and atoms but for the MMA's type: here a slow case (CI time); its
# values stay in the default run through the 16-bit-output and narrower-copy tests below.
@pytest.mark.parametrize(
    ("t", "tc"),
    [("f16", "f32"), pytest.param("bf16", "f32", marks=pytest.mark.slow), ("tf32", "f32")],
)
def test_values_every_majorness(name: str, t: str, tc: str) -> None:
    kernel = _kernel(name, T=t, TC=tc)
    for m, n, k in SIZES:
        _check(kernel, name, t, tc, m, n, k)


@pytest.mark.parametrize("name", ["gemm_nt", "gemm_tn", "gemm_nn", "gemm_tt"])
@pytest.mark.parametrize("t", ["f16", "tf32"])
def test_persistent_values_every_majorness(name: str, t: str) -> None:
    """PERSIST = true: fewer CTAs than tiles, each taking tiles cta, cta + ctas, ...
    (1-D and 2-D grids; a CTA with no tile), the epilogue's chunk over the stages'
    bytes with a barrier at the end of each tile (the CPU backend checks the races)."""
    kernel = _kernel(name, T=t, PERSIST="true")
    for (m, n, k), grid in [((96, 64, 40), (4, 1)), ((40, 72, 72), (2, 2)), ((24, 8, 8), (3, 1))]:
        _check(kernel, name, t, "f32", m, n, k, grid=grid)


@pytest.mark.parametrize(("t", "tc"), [("f16", "f16"), ("bf16", "bf16")])
def test_values_16_bit_output(t: str, tc: str) -> None:
    kernel = _kernel("gemm_tn", T=t, TC=tc)
    for m, n, k in SIZES[1:]:
        _check(kernel, "gemm_tn", t, tc, m, n, k)


@pytest.mark.parametrize("name", ["gemm_nt", "gemm_tn", "gemm_nn", "gemm_tt"])
def test_values_f16_accumulation(name: str) -> None:
    """acc_dtype = f16: mma.sync's F16F16F16F16 atom (sgemm_sm80's), f16 C. The small
    integers keep every partial sum exact in f16, so the check is exact."""
    kernel = _kernel(name, T="f16", TC="f16", TACC="f16")
    for m, n, k in SIZES:
        _check(kernel, name, "f16", "f16", m, n, k)


@pytest.mark.parametrize("name", ["gemm_nt", "gemm_nn"])
def test_tf32_operands_are_rounded_to_nearest(name: str) -> None:
    """tf32 A and B with bits below tf32's precision: the gemm rounds them to nearest even
    before the MMA, which would truncate them (a bias that made the error 2.7x cuBLAS's on
    an H200). Values 1 + 3 * 2^-12 (tf32: 1 + 2^-10; truncated: 1) and small integers keep
    every sum exact, so the check is exact against the rounded inputs' product."""
    m, n, k = 40, 48, 72
    rng = np.random.default_rng(3)
    a = rng.choice([1 + 3 * 2.0**-12, -(2 + 3 * 2.0**-11), 3.0], (m, k))
    b = rng.integers(-3, 4, (n, k)).astype(np.float64)
    b[b == 2] = 1 + 2.0**-12 + 2.0**-13  # tf32: 1 (below half a step); also the tie below
    b[b == -2] = 1 + 2.0**-11  # a tie between 1 and 1 + 2^-10: to even, 1
    rounded = {1 + 3 * 2.0**-12: 1 + 2.0**-10, -(2 + 3 * 2.0**-11): -(2 + 2.0**-9)}
    a_tf32 = np.vectorize(lambda x: rounded.get(x, x))(a)
    b_tf32 = np.where(b == 1 + 2.0**-12 + 2.0**-13, 1.0, np.where(b == 1 + 2.0**-11, 1.0, b))
    a_mn, b_mn = name[-2] == "n", name[-1] == "t"
    a_arr = np.ascontiguousarray(a.T if a_mn else a).astype(np.float32)
    b_arr = np.ascontiguousarray(b.T if b_mn else b).astype(np.float32)
    args = {"A": a_arr, "M": m, "K": k, "ldA": m if a_mn else k,
            "B": b_arr, "N": n, "ldB": n if b_mn else k,
            "C": np.zeros((m, n), np.float32, order="F"), "ldC": m,
            "alpha": 1.0, "beta": 0.0}  # fmt: skip
    native.run_kernel(_kernel(name, T="tf32"), (2, 2), args)
    np.testing.assert_array_equal(args["C"].astype(np.float64), a_tf32 @ b_tf32.T)


@pytest.mark.parametrize("defines", [{}, {"BK": 64}])
def test_no_k_tile_reads_no_uninitialised_shared_memory(defines: dict[str, int]) -> None:
    """K = 0: the loop runs no iteration but the pipeline's register prologue still
    loads block 0 (unguarded: a branch around it cost PRMTs every k-tile); the stage
    it reads was zeroed, so the shared-memory checks stay quiet, and C = beta C."""
    kernel = _kernel("gemm_tn", **defines)
    m = n = 32
    c = np.asfortranarray(np.arange(m * n, dtype=np.float32).reshape(m, n))
    args = {"A": np.ones((m, 8), np.float16), "M": m, "K": 0, "ldA": 8,
            "B": np.ones((n, 8), np.float16), "N": n, "ldB": 8,
            "C": c.copy(order="F"), "ldC": m, "alpha": 2.0, "beta": -1.0}  # fmt: skip
    native.run_kernel(kernel, (1, 1), args)
    np.testing.assert_array_equal(args["C"], -c)


@pytest.mark.parametrize("name", ["gemm_nt", "gemm_tn", "gemm_nn", "gemm_tt"])
def test_values_deeper_pipeline_and_four_k_blocks(name: str) -> None:
    """4 stages, BK = 64 (4 k-blocks of 16): the pipeline spreads A's and B's copies,
    each with its K-residue predicate, over k-blocks 0 and 1 (docs/passes.md,
    *pipeline*)."""
    kernel = _kernel(name, BK=64, BP=4)
    for m, n, k in [(32, 32, 64 * 5), (40, 40, 72)]:
        _check(kernel, name, "f16", "f32", m, n, k)


def test_values_default_tiles() -> None:
    """The example as written (128x128x32, 3 stages): one partial CTA tile in M and
    N, three k-tiles the last of which is partial."""
    module = compile(
        Source.from_file(EXAMPLE),
        Stage.THREAD,
        Options(**DIVISIBLE, target="sm_80", kernel="gemm_nn"),
    ).module
    assert module is not None
    (kernel,) = module.walk_type(KernelOp)
    _check(kernel, "gemm_nn", "f16", "f32", 200, 136, 72, tile=128)


TILE_ONLY = (
    "kernel k(A: f16[M, K] : (ldA, 1) align 16, B: f16[N, K] : (ldB, 1) align 16,\n"
    "         C: f32[M, N] : (1, ldC), alpha: f32, beta: f32)\n"
    "  assume K % 8 == 0, ldA % 8 == 0, ldB % 8 == 0\n{{\n  {body}\n}}\n"
)


@pytest.mark.parametrize(
    ("body", "threads", "why"),
    [
        ("gemm(A, B, C, alpha, beta, tile = (128, 256, 32))", 256,
         "launch: 256 threads: the 128x256 tile holds 8 warps of 64x64 or more"),
        ("gemm(A, B, C, alpha, beta, tile = (128, 128, 32))", 128,
         "launch: 128 threads: the 128x128 tile is too small for 8 warps of 64x64"),
        ("gemm(A, B, C, alpha, beta, tile = (128, 128, 32), num_threads = 256)", 256,
         "launch: 256 threads: the gemm's num_threads"),
    ],
)  # fmt: skip
def test_launch_left_to_the_gemm(body: str, threads: int, why: str) -> None:
    """No `threads` or `grid` clause: the whole-tensor gemm sets the block and one CTA
    per tile of C, with a remark each."""
    text = TILE_ONLY.format(body=body)
    result = compile(
        Source(text, "k.cute"), Stage.CUTE, Options(**DIVISIBLE, target="sm_80", remarks=True)
    )
    assert result.module is not None
    (kernel,) = result.module.walk_type(KernelOp)
    assert kernel.attributes["reqntid"].values == (threads, 1, 1)  # type: ignore[union-attr]
    bn = 256 if "256, 32" in body else 128
    grid = tuple(g.value for g in kernel.attributes["grid"].elements)  # type: ignore[union-attr]
    assert grid == ("ceil_div(M,128)", f"ceil_div(N,{bn})", "1")
    said = [str(r.message) for r in result.remarks]
    assert f"tile: {why}" in said
    assert (
        f"tile: launch: grid (ceil_div(M,128), ceil_div(N,{bn})), one CTA per 128x{bn} tile of C"
        in said
    )


def test_example_with_only_the_tile_matches_float64() -> None:
    """examples/gemm_auto.cute's gemm_tn_tile (no threads, no grid) through the jit on
    the CPU: the launch comes from the kernel's inferred block and grid."""
    k = rt.jit(EXAMPLE, kernel="gemm_tn_tile", device="cpu", arch="sm_80")
    rng = np.random.default_rng(5)
    m, n, kk = 136, 264, 40  # two partial CTA tiles in M, two in N
    a = rng.integers(-3, 4, (m, kk)).astype(np.float16)
    b = rng.integers(-3, 4, (n, kk)).astype(np.float16)
    c = np.asfortranarray(np.full((m, n), np.nan, np.float32))
    k(a, b, c, 1.0, 0.0)
    np.testing.assert_array_equal(c, a.astype(np.float64) @ b.astype(np.float64).T)


def test_num_threads_the_plan_cannot_use_is_one_located_error() -> None:
    text = TILE_ONLY.format(
        body="gemm(A, B, C, alpha, beta, tile = (128, 128, 32), num_threads = 64)"
    )
    with pytest.raises(CompileError) as info:
        compile(Source(text, "k.cute"), Stage.CUTE, Options(**DIVISIBLE, target="sm_80"))
    (d,) = info.value.diagnostics
    assert (
        d.message == "the whole-tensor gemm runs on 128 or 256 threads (2x2 or 2x4 warps), not 64"
    )
    assert d.location is not None and (d.location.line, d.location.col) == (5, 3)


def test_kernel_without_threads_or_gemm_is_one_located_error() -> None:
    text = TILE_ONLY.format(body="clear(C)")
    with pytest.raises(CompileError) as info:
        compile(Source(text, "k.cute"), Stage.CUTE, Options(**DIVISIBLE, target="sm_80"))
    (d,) = info.value.diagnostics
    assert d.message == "kernel 'k' needs a 'threads' clause (the block size)"
    assert d.location is not None and (d.location.line, d.location.col) == (1, 1)


def test_remarks_say_each_choice_at_the_call() -> None:
    """The tile pass reports the warp layout, each operand's smem layout and copy
    threads at the user's gemm line (as select-atoms its MMA); the attribute is gone."""
    result = compile(
        Source.from_file(EXAMPLE),
        Stage.CUTE,
        Options(**DIVISIBLE, target="sm_80", kernel="gemm_nt", remarks=True),
    )
    line = _call_line("gemm_nt")
    at_call = [str(r.message) for r in result.remarks if r.location and r.location.line == line]
    assert at_call[:5] == [
        "tile: launch: 128 threads: the 128x128 tile is too small for 8 warps of 64x64",
        "tile: launch: grid (ceil_div(M,128), ceil_div(N,128)), one CTA per 128x128 tile of C",
        "tile: CTA tile (128, 128, 32) on 128 threads: 2x2 warps of MMA atoms tiled (32, 32, "
        "16), each warp a 64x64 quarter of C",
        "tile: A (M-major, 16-bit): shared tile of Swizzle<3,3,3> o (_64,_8):(_1,_64) atoms "
        "(128-byte rows, 8 rows in distinct banks); copied 16 bytes per thread by threads "
        "(_16,_8):(_1,_16), values (_8,_1):(_1,_0)",
        "tile: B (N-major, 16-bit): shared tile of Swizzle<3,3,3> o (_64,_8):(_1,_64) atoms "
        "(128-byte rows, 8 rows in distinct banks); copied 16 bytes per thread by threads "
        "(_16,_8):(_1,_16), values (_8,_1):(_1,_0)",
    ]
    # the expansion is the user's gemm: the passes' remarks on it are at the call too
    assert any(m.startswith("pipelined over 3 shared-memory stages") for m in at_call)
    assert any(m.startswith("MMA by SM80_16x8x16_F32F16F16F32_TN") for m in at_call)
    assert any(m.startswith("copy by SM75_U16x8_LDSM_T (ldmatrix.x4") for m in at_call)
    assert result.module is not None and "tile_plan" not in str(result.module)


HEAD = (
    "kernel k(A: f16[M, K] : (ldA, 1) align 16, B: f16[N, K] : (ldB, 1) align 16,\n"
    "         C: f32[M, N] : (1, ldC), alpha: f32, beta: f32)\n"
    "  assume K % 8 == 0, ldA % 8 == 0, ldB % 8 == 0\n"
    "  grid (ceil_div(M, 128), ceil_div(N, 128)) threads {threads}\n{{\n  {body}\n}}\n"
)


@pytest.mark.parametrize(
    ("threads", "body", "col", "message"),
    [
        (64, "gemm(A, B, C, alpha, beta, tile = (128, 128, 32), stages = 3)", 3,
         "the whole-tensor gemm runs on 128 or 256 threads (2x2 or 2x4 warps), not 64"),
        (256, "gemm(A, B, C, alpha, beta, tile = (64, 96, 32), stages = 3)", 3,
         "the tile (64, 96, 32) must be a multiple of (32, 64) for 2x4 warps of mma.sync "
         "atoms"),
        (128, "gemm(A, B, C, alpha, beta, tile = (48, 128, 32), stages = 3)", 3,
         "the tile (48, 128, 32) must be a multiple of (32, 32) for 2x2 warps of mma.sync "
         "atoms"),
        (128, "gemm(A, B, C, alpha, beta, tile = (128, 128, 24), stages = 3)", 3,
         "the K-major A tile needs BK to be a power of two times 8 (16 bytes of 16-bit "
         "elements), got 24"),
        (128, "gemm(A, B, C, alpha, beta, tile = (128, 0, 32), stages = 3)", 3,
         "tile sizes must be positive, got (128, 0, 32)"),
        (128, "gemm(A, B, C, alpha, beta, tile = (1024, 32, 64), stages = 2)", 3,
         "the epilogue cannot lay 128 threads over a (1024, 32) chunk of C in 16-byte "
         "vectors along M"),
        (128, "gemm(A, B, C, alpha, beta, tile = (128, 128), stages = 3)", 3,
         "tile must be 3 compile-time integers, got a tuple"),
        (128, "gemm(A, B, C, alpha, beta, tile = (128, 128, 32), depth = 3)", 3,
         "the whole-tensor gemm has no keyword 'depth' "
         "(tile, stages, acc_dtype, num_threads, persistent, wave, stream_k, split_min_k, "
         "epilogue)"),
        (128, "gemm(A, B, C, alpha, beta, tile = (128, 128, 32), wave = 0)", 3,
         "wave must be positive, got 0"),
        (128, "gemm(A, B, C, alpha, beta, tile = (128, 128, 32), wave = alpha)", 3,
         "wave must be an int, the CTAs of one wave, got a run-time f32"),
        (128, "gemm(A, B, C, alpha, beta, tile = (128, 128, 32), stream_k = (C, B))", 3,
         "a stream-K gemm needs 'wave', the CTAs of the full waves' kernel"),
        (128, "gemm(A, B, C, alpha, beta, tile = (128, 128, 32), wave = 132, stream_k = 3)", 3,
         "stream_k takes (workspace, flags), got the integer 3"),
        (128, "gemm(A, B, C, alpha, beta, tile = (128, 128, 32), wave = 1, persistent = true, "
         "stream_k = 3)", 3, "a stream-K gemm takes one wave already: leave out 'persistent'"),
        (128, "gemm(A, B, C, alpha, beta, tile = (128, 128, 32), wave = 132, stream_k = (C, B))",
         3, "stream_k's flags must hold i32, not f16"),
        (128, "gemm(A, B, C, alpha, beta, tile = (128, 128, 32), wave = 132, stream_k = (A, B))",
         3, "stream_k's workspace must hold f32, not f16"),
        (128, "gemm(A, B, C, alpha, beta, tile = (128, 128, 32), split_min_k = 0)", 3,
         "split_min_k needs 'wave': it says when the tail after the waves splits"),
        (128, "gemm(A, B, C, alpha, beta, tile = (128, 128, 32), wave = 9, split_min_k = -1)",
         3, "split_min_k must be 0 or more, got -1"),
        (128, "gemm(A, B, C, alpha, beta, tile = (128, 128, 32), stream_k = true, wave = 132)",
         3, "stream_k = true takes the wave from the GPU (the kernel's resident CTAs): leave "
         "out 'wave'"),
        (128, "gemm(A, B, C, alpha, beta, tile = (128, 128, 32), num_threads = 256)", 3,
         "num_threads = 256, but the kernel's 'threads' clause runs 128"),
        (128, "gemm(A, B, C, alpha, beta, tile = (128, 128, 32), acc_dtype = bf16)", 3,
         "acc_dtype must be f32 or the operands' type f16, got the type bf16"),
        (128, 'gemm(A, B, C, alpha, beta, tile = (128, 128, 32), epilogue = "smem")', 3,
         "epilogue must be one of 'registers', 'tma', got 'smem'"),
        (128, "gemm(A, B, C, alpha, tile = (128, 128, 32))", 3,
         "the whole-tensor gemm takes (A, B, C, alpha, beta, tile = ..., stages = ...)"),
        (128, "gemm(A, B, smem f32[(8, 8)], alpha, beta, tile = (128, 128, 32))", 14,
         "the whole-tensor gemm's C must be a global tensor"),
        (128, "gemm(A, B, C, alpha, beta, tile = (128, 128, 512))", 3,
         "shared memory use reaches 262144 bytes with this 131072-byte buffer; the limit "
         "on sm_80 is 166912 (163 KiB per CTA)"),
    ],
)  # fmt: skip
def test_misuse_is_one_located_error(threads: int, body: str, col: int, message: str) -> None:
    text = HEAD.format(threads=threads, body=body)
    with pytest.raises(CompileError) as info:
        compile(Source(text, "k.cute"), Stage.CUTE, Options(**DIVISIBLE, target="sm_80"))
    (d,) = info.value.diagnostics
    assert d.message == message
    # a mistake found inside the expansion names the library line in a note
    assert all(n.location and n.location.file.endswith("gemm_tiled.cute") for n in d.notes)
    assert d.location is not None and (d.location.line, d.location.col) == (6, col)


def test_a_zero_tile_is_located_where_the_launch_is_inferred() -> None:
    """With no `threads` or `grid` clause the launch comes from the tile: a zero tile
    size is the user's located error there, not a division by zero (found by the
    value-mutation fuzzer)."""
    text = HEAD.format(threads=128, body="gemm(A, B, C, alpha, beta, tile = (0, 256, 32))")
    text = text.replace("  grid (ceil_div(M, 128), ceil_div(N, 128)) threads 128\n", "")
    with pytest.raises(CompileError) as info:
        compile(Source(text, "k.cute"), Stage.CUTE, Options(**DIVISIBLE, target="sm_80"))
    (d,) = info.value.diagnostics
    assert d.message == "tile sizes must be positive, got (0, 256, 32)"
    assert d.location is not None and (d.location.line, d.location.col) == (5, 3)


def test_plan_round_trips_through_the_printed_ir() -> None:
    """Before the tile pass the plan is an attribute of the printed IR; parsed back,
    the pass reports the same remarks at the same line."""
    options = Options(**DIVISIBLE, target="sm_80", kernel="gemm_tt", pipeline="", remarks=True)
    before = compile(Source.from_file(EXAMPLE), Stage.CUTE, options).module
    assert before is not None
    text = print_op(before)
    assert "tile_plan = [" in text
    again = compile(
        Source(text, "g.mlir", lang="mlir"),
        Stage.CUTE,
        Options(**DIVISIBLE, target="sm_80", pipeline="tile"),
    )
    lines = {(r.location.line if r.location else None) for r in again.remarks}
    assert [r.message[:10] for r in again.remarks] == [
        "tile: laun",
        "tile: laun",
        "tile: CTA ",
        "tile: A (K",
        "tile: B (N",
        "tile: epil",
    ]
    assert lines == {_call_line("gemm_tt")}


@pytest.mark.parametrize("name", ["gemm_nt", "gemm_tn", "gemm_nn", "gemm_tt"])
def test_16_bit_shared_accesses_are_conflict_free(name: str) -> None:
    """The plan's swizzles: every cp.async store and ldmatrix of the 16-bit kernels
    takes the minimum wavefronts (the bank-conflicts pass, from the layouts)."""
    result = compile(
        Source.from_file(EXAMPLE),
        Stage.THREAD,
        Options(**DIVISIBLE, target="sm_80", kernel=name, remarks=True),
    )
    banks = [r.message for r in result.remarks if "wavefront" in r.message]
    assert any("ldmatrix.x4" in m for m in banks) and any("cp.async" in m for m in banks)
    assert all(m.endswith("(conflict-free)") for m in banks), banks


def test_missing_divisibility_fact_copies_through_registers_and_says_so() -> None:
    """NT without `M % 8 == 0`: M's divisibility is unknown, so no cp.async of A (4 bytes
    or more) can be guarded by one predicate. A's elements go through registers one at a
    time (ld.global + st.shared), the k-loop is not pipelined, the remark at the user's
    gemm says why, and the values hold at an odd M."""
    text = EXAMPLE.read_text()
    no_m = {n: d for n, d in DIVISIBLE["divisors"].items() if n != "M"}  # M may be odd
    options = Options(
        divisors=no_m,
        alignments=DIVISIBLE["alignments"],
        target="sm_80",
        kernel="gemm_nt",
        defines=SMALL,
        remarks=True,
    )
    result = compile(Source(text, "g.cute"), Stage.THREAD, options)
    line = _call_line("gemm_nt", text)
    (a,) = [r for r in result.remarks if r.message.startswith("tile: A (")]
    assert "copied 2 bytes per thread" in a.message and "not pipelined" in a.message
    assert a.location is not None and (a.location.file, a.location.line) == ("g.cute", line)
    assert result.module is not None
    (kernel,) = result.module.walk_type(KernelOp)
    for m, n, k in [(37, 32, 40), (5, 8, 8)]:
        _check(kernel, "gemm_nt", "f16", "f32", m, n, k)


ANY = """
kernel any_nt[T: dtype = tf32](A: T[M, K] : (1, ldA), B: T[N, K] : (1, ldB),
    C: f32[M, N] : (1, ldC), alpha: f32, beta: f32)
  grid (ceil_div(M, 32), ceil_div(N, 32)) threads 128
{
  gemm(A, B, C, alpha, beta, tile = (32, 32, 32), stages = 2)
}

kernel half_tn[T: dtype = f16](A: T[M, K] : (ldA, 1) align 8, B: T[N, K] : (ldB, 1) align 4,
    C: f32[M, N] : (1, ldC), alpha: f32, beta: f32)
  assume K % 4 == 0, ldA % 4 == 0, ldB % 2 == 0
  grid (ceil_div(M, 32), ceil_div(N, 32)) threads 128
{
  gemm(A, B, C, alpha, beta, tile = (32, 32, 32), stages = 3)
}
"""


@pytest.mark.parametrize(
    ("name", "t", "sizes", "copies"),
    [
        ("any_nt", "tf32", [(37, 29, 13), (5, 3, 1)], ("4 bytes", "4 bytes")),
        ("half_tn", "f16", [(37, 29, 12), (64, 32, 68)], ("8 bytes", "4 bytes")),
        ("half_tn", "bf16", [(37, 29, 12)], ("8 bytes", "4 bytes")),
    ],
)
def test_narrower_copies_where_the_facts_allow_no_16_bytes(
    name: str, t: str, sizes: list[tuple[int, int, int]], copies: tuple[str, str]
) -> None:
    """No facts (tf32: 4-byte cp.async of one element) or only 8- and 4-byte ones
    (f16): the plan narrows each operand's copy, says why, and the values hold at
    sizes no vector of 16 bytes divides."""
    options = Options(target="sm_80", kernel=name, defines={"T": t}, remarks=True)
    result = compile(Source(ANY, "any.cute"), Stage.THREAD, options)
    said = [r.message for r in result.remarks if r.message.startswith("tile: ")]
    for operand, nbytes in zip("AB", copies, strict=True):
        (line,) = [m for m in said if m.startswith(f"tile: {operand} (")]
        assert f"copied {nbytes} per thread" in line and "16-byte copies not used" in line
    assert result.module is not None
    (kernel,) = result.module.walk_type(KernelOp)
    for m, n, k in sizes:
        _check(kernel, "gemm_" + ("nt" if name == "any_nt" else "tn"), t, "f32", m, n, k)


def test_copies_through_registers_in_the_persistent_body() -> None:
    """The unpipelined k-loop (copies below 4 bytes) in the persistent body: each CTA's
    tiles one after another over the one stage (the CPU backend checks its races)."""
    text = re.sub(r"\n  assume [^\n]*", "", EXAMPLE.read_text())
    options = Options(target="sm_80", kernel="gemm_tn", defines={**SMALL, "PERSIST": "true"})
    module = compile(Source(text, "g.cute"), Stage.THREAD, options).module
    assert module is not None
    (kernel,) = module.walk_type(KernelOp)
    _check(kernel, "gemm_tn", "f16", "f32", 70, 45, 37, grid=(3, 1))


@pytest.mark.parametrize("t", ["f16", "bf16"])
def test_no_cp_async_fits_copies_one_element_at_a_time(t: str) -> None:
    """16-bit operands with nothing known (odd leading dimensions and K): not even 4 bytes
    (2 elements) may move as one, so both go through registers an element at a time
    and the k-loop is not pipelined (UniversalCopy, no cp.async); values exact."""
    text = ANY.replace("assume K % 4 == 0, ldA % 4 == 0, ldB % 2 == 0\n", "")
    text = text.replace(" align 8", "").replace(" align 4", "")
    options = Options(target="sm_80", kernel="half_tn", defines={"T": t}, remarks=True)
    result = compile(Source(text, "any.cute"), Stage.THREAD, options)
    said = [r.message for r in result.remarks if r.message.startswith("tile: ")]
    for operand in "AB":
        (line,) = [m for m in said if m.startswith(f"tile: {operand} (")]
        assert "copied 2 bytes per thread" in line and "not pipelined" in line
    assert result.module is not None
    (kernel,) = result.module.walk_type(KernelOp)
    atoms = {op.atom.value for op in kernel.walk() if op.name == "thread.atom"}
    assert not any(a.startswith("SM80_CP_ASYNC") for a in atoms), atoms
    for m, n, k in [(37, 29, 13), (32, 32, 33)]:
        _check(kernel, "gemm_tn", t, "f32", m, n, k)


def test_eight_warps_match_float64() -> None:
    """`num_threads = 256` on sm_80: 2x4 warps (each an eighth of C), ragged sizes, every
    majorness."""
    rng = np.random.default_rng(3)
    source = EXAMPLE.read_text().replace(
        "stream_k = STREAM_K)", "stream_k = STREAM_K, num_threads = 256)"
    )
    for kernel in ("gemm_nt", "gemm_tn", "gemm_nn", "gemm_tt"):
        k = rt.jit(source, kernel=kernel, device="cpu", arch="sm_80", BM=64, BN=64)
        m, n, kk = 72, 80, 40
        a = rng.integers(-3, 4, (m, kk)).astype(np.float16)
        b = rng.integers(-3, 4, (n, kk)).astype(np.float16)
        a = np.asfortranarray(a) if kernel[5] == "n" else a
        b = np.asfortranarray(b) if kernel[6] == "t" else b
        c = np.asfortranarray(np.full((m, n), np.nan, np.float32))
        k(a, b, c, 1.0, 0.0)
        np.testing.assert_array_equal(c, a.astype(np.float64) @ b.astype(np.float64).T)


def test_the_stream_k_grid_follows_the_librarys_rule() -> None:
    """The tail kernel's grid is one wave exactly when gemm_tiled.cute splits: a wave W
    below 1 counts as 1, at least one full wave, the tiles after the last full wave
    neither none nor more than two thirds of W, and the k-loop saved, (W - rest) / W of
    K, at least split_min_k (2048) of K. The grid is a min/max expression
    (build_tile_gemm._tail_splits) of the symbolic tiles and W, as the launcher
    evaluates it (its Python text)."""
    import builtins

    from cutec.frontend.build_tile_gemm import _tail_splits
    from cutec.layout.symbolic import sym
    from cutec.runtime.launcher import grid_code

    # W as the frontend makes a kernel's int parameter: >= 0 to the algebra
    text = str(_tail_splits(sym("T"), sym("W", min_value=0), sym("K", min_value=0), 2048))
    code = builtins.compile(grid_code(text, {"T": "T", "W": "W", "K": "K"}), "grid", "eval")
    env = {"_ceil_div": lambda a, b: -(-a // b)}
    for k in (0, 1000, 4095, 4096, 8192):
        for tiles in range(1, 120):
            for w in range(-2, 50):
                v = max(w, 1)
                full, rest = tiles // v, tiles % v
                splits = full > 0 and rest > 0 and 3 * rest <= 2 * v and (v - rest) * k >= 2048 * v
                got = eval(code, env, {"T": tiles, "W": w, "K": k})
                assert got == int(splits), (tiles, w, k, text)


def test_stream_k_launch_remarks() -> None:
    """The pair's launches, said at the gemm: the full waves' kernel one CTA per tile
    (those past the full waves returning), the tail one wave or none (its grid
    attribute is the rule's min/max expression, not shown)."""
    path = Path(__file__).parents[2] / "examples" / "gemm_stream_k.cute"
    said = {}
    for kernel in ("gemm_nn", "gemm_nn_tail"):
        result = compile(
            Source.from_file(path),
            Stage.CUTE,
            Options(**DIVISIBLE, target="sm_80", kernel=kernel, remarks=True),
        )
        said[kernel] = [str(r.message) for r in result.remarks if "launch: grid" in str(r.message)]
    assert said["gemm_nn"] == [
        "tile: launch: grid (ceil_div(M,128), ceil_div(N,256)), one CTA per 128x256 tile of C "
        "(those past the full waves of W return at once when the stream-K kernel takes the "
        "last wave's tiles)"
    ]
    assert said["gemm_nn_tail"] == [
        "tile: launch: grid (resident_ctas, or 0), as many CTAs as the GPU holds at once, "
        "sharing the k-tiles of the 128x256 tiles of C after the last full wave of W "
        "(stream-K); none when that wave is empty or more than two thirds full"
    ]


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        (HEAD.format(threads=128, body="gemm(A, B, C, alpha, beta, tile = (128, 128, 32), "
                     "stream_k = true)\n  gemm(A, B, C, alpha, beta, tile = (128, 128, 32), "
                     "stream_k = true)"),
         "a kernel holds one stream_k = true gemm", 7),
        (HEAD.format(threads=128, body="gemm(A, B, C, alpha, beta, tile = (128, 128, 32), "
                     "stream_k = true)").replace("beta: f32)", "beta: f32, stream_k_wave: int)"),
         "stream_k = true adds a parameter 'stream_k_wave': rename the kernel's", 6),
        (HEAD.format(threads=128, body="gemm(A, B, C, alpha, beta, tile = (128, 128, 32), "
                     "stream_k = true)") + "kernel k__tail() grid (1) threads 32 { }\n",
         "kernel 'k__tail' is the name of kernel 'k''s stream-K tail", 8),
    ],
)  # fmt: skip
def test_stream_k_true_misuse_is_one_located_error(text: str, message: str, line: int) -> None:
    with pytest.raises(CompileError) as info:
        compile(Source(text, "k.cute"), Stage.CUTE, Options(**DIVISIBLE, target="sm_80"))
    (d,) = info.value.diagnostics
    assert d.message == message
    assert d.location is not None and d.location.line == line


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_stream_k_true_remarks(target: str) -> None:
    """`stream_k = true` says where the tail goes and which k-tile the tail runs: at
    128x256x64 of f16 the first kernel's, on sm_80 too (the epilogue's chunk takes the
    stages' bytes in the tail as in the first kernel: 147 KB)."""
    options = Options(**DIVISIBLE, kernel="gemm_tn", remarks=True, target=target,
                      defines={"STREAM_K": True, "BN": 256, "BK": 64})  # fmt: skip
    path = Path(__file__).parents[2] / "examples" / "gemm_auto.cute"
    result = compile(Source.from_file(path), Stage.CUTE, options)
    said = [str(r.message) for r in result.remarks if "stream-K" in str(r.message)]
    hopper = "tile: not a warp-specialised TMA + wgmma kernel: a stream-K gemm runs on the "
    assert (hopper + "mma.sync body" in said) == (target == "sm_90a")
    assert [m for m in said if not m.startswith(hopper)] == [
        "tile: launch: grid (ceil_div(M,128), ceil_div(N,256)), one CTA per 128x256 tile of C "
        "(those past the full waves of resident_ctas CTAs return at once when the stream-K "
        "kernel takes the last wave's tiles)",
        "tile: stream-K: the tiles after the last full wave go to kernel 'gemm_tn__tail', "
        "which the runtime launches after this one when it splits them",
        "tile: launch: grid (resident_ctas, or 0), as many CTAs as the GPU holds at once, "
        "sharing the k-tiles of the 128x256 tiles of C after the last full wave of "
        "resident_ctas CTAs (stream-K); none when that wave is empty or more than two thirds "
        "full",
        "tile: stream-K tail: the first kernel's BK = 64 and 3 stages",
    ]


def test_each_remark_is_said_once() -> None:
    """The tail kernel repeats the first kernel's choices, and an unrolled epilogue its
    copies' (8 identical remarks before): each (message, line) is said once."""
    options = Options(
        **DIVISIBLE, target="sm_80", kernel="gemm_tn", remarks=True, defines={"STREAM_K": True}
    )
    path = Path(__file__).parents[2] / "examples" / "gemm_auto.cute"
    result = compile(Source.from_file(path), Stage.PTX, options)
    said = [(str(r.message), r.location) for r in result.remarks]
    assert len(said) == len(set(said)) > 10
    assert sum("stream-K tail" in m for m, _ in said) == 1


def test_the_planner_picks_the_library_body_per_target(monkeypatch) -> None:
    """A library builtin's body is the planner's choice per target: with a rule giving
    sm_90a a test-only body, sm_90a's gemm is that body (its mistake located at the
    call, the body's line a note) and sm_80's is still gemm_tiled."""
    test_body = planner.LibraryBody(str(Path(__file__).parent / "data" / "gemm_test_body.cute"),
                                    "gemm_test_body")  # fmt: skip
    rule = planner.BodyRule(lambda t: t.name == "sm_90a", test_body, "a test body", lambda f: None)
    monkeypatch.setattr(planner, "GEMM_BODIES", (rule, *planner.GEMM_BODIES))
    text = HEAD.format(threads=128, body="gemm(A, B, C, alpha, beta, tile = (128, 128, 32))")
    with pytest.raises(CompileError) as info:
        compile(Source(text, "k.cute"), Stage.CUTE, Options(**DIVISIBLE, target="sm_90a"))
    (d,) = info.value.diagnostics
    assert d.message == "static assertion failed: the test body was chosen"
    assert d.location is not None and (d.location.line, d.location.col) == (6, 3)
    assert [n.location.file for n in d.notes if n.location] == [test_body.file]
    built = compile(Source(text, "k.cute"), Stage.CUTE, Options(**DIVISIBLE, target="sm_80"))
    assert built.module is not None and "tile: CTA tile (128, 128, 32)" in "\n".join(
        d.message for d in built.remarks
    )


# ------------------------------------------------------------------ the Hopper body


def test_sm90a_remarks_say_the_hopper_bodys_choices_at_the_call() -> None:
    """On sm_90a the gemm is the warp-specialised body; the tile pass says its block,
    body, warpgroups, stages, operands' GMMA atoms and wgmma at the user's line."""
    options = Options(**DIVISIBLE, target="sm_90a", kernel="gemm_nt", remarks=True,
                      defines={"BN": 256, "BK": 64, "BP": 4})  # fmt: skip
    result = compile(Source.from_file(EXAMPLE), Stage.CUTE, options)
    line = _call_line("gemm_nt")
    at_call = [str(r.message) for r in result.remarks if r.location and r.location.line == line]
    assert at_call[:8] == [
        "tile: launch: 384 threads: the Hopper body's warpgroups",
        "tile: launch: grid (ceil_div(M,128), ceil_div(N,256)), one CTA per 128x256 tile of C",
        "tile: body: a warp-specialised TMA + wgmma kernel",
        "tile: warp specialisation: 384 threads, 2 consumer warpgroups of 64x256 (128 "
        "accumulator registers each) and a producer warpgroup whose elected thread issues "
        "the TMA loads; setmaxnreg 40 in the producer, 232 in the consumers",
        "tile: stages: 4 of 128x256x64 (196672 bytes of shared memory with their full/empty "
        "mbarriers)",
        "tile: A (MN-major): TMA into GMMA.Layout_MN_SW128_Atom (128-byte swizzle)",
        "tile: B (MN-major): TMA into GMMA.Layout_MN_SW128_Atom (128-byte swizzle)",
        "tile: MMA by SM90_64x256x16_F32F16F16_SS_NT (wgmma.mma_async m64n256k16)",
    ]


def test_sm90a_stages_that_do_not_fit_are_one_located_error() -> None:
    text = TILE_ONLY.format(body="gemm(A, B, C, alpha, beta, tile = (128, 256, 64), stages = 5)")
    with pytest.raises(CompileError) as info:
        compile(Source(text, "k.cute"), Stage.CUTE, Options(**DIVISIBLE, target="sm_90a"))
    (d,) = info.value.diagnostics
    assert d.message.startswith("the Hopper body's 5 stages of 128x256x64 take 245840 bytes")
    assert d.location is not None and (d.location.line, d.location.col) == (5, 3)


def test_sm90a_a_kernel_of_128_threads_keeps_mma_sync_and_says_why() -> None:
    text = HEAD.format(threads=128, body="gemm(A, B, C, alpha, beta, tile = (128, 128, 32))")
    result = compile(
        Source(text, "k.cute"), Stage.CUTE, Options(**DIVISIBLE, target="sm_90a", remarks=True)
    )
    said = [str(r.message) for r in result.remarks]
    assert "tile: body: cp.async, ldmatrix and mma.sync (CuTe's sgemm_sm80)" in said
    assert (
        "tile: not a warp-specialised TMA + wgmma kernel: the kernel runs 128 threads; the "
        "Hopper body's 128-row tile needs 384 (2 consumer warpgroups and a producer)"
    ) in said
