"""The `pipeline` pass by the values its kernels compute on the CPU (whose native
backend lands a cp.async only at the wait that covers it and reports shared-memory
races), with more k-tiles than stages and fewer; the schedule's mistakes planted
on purpose are caught; and each misuse of the annotation is one located error.

The IR shape of the transformed loop is in lit/pipeline.mlir.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cutec.cpu import native
from cutec.cpu.reference import AccessError
from cutec.diagnostics import CompileError
from cutec.driver import Options, Source, Stage, compile
from cutec.ir.builder import Builder
from cutec.ir.dialects import gpu, thread
from cutec.ir.dialects.builtin import KernelOp
from cutec.passes import software_pipeline as pipeline
from tests.passes.test_lowering_values import _gemm_args

EXAMPLE = Path(__file__).parents[2] / "examples" / "sgemm_pipeline_pass.cute"

# 16 threads, 16x16x2 tiles; REG: operands through registers per k-block (double-
# buffered), else the gemm reads shared memory (one barrier, no registers moved).
SMALL = """
func mainloop(A, B, C, alpha, beta, BP, REG) {
  copy_a = tiled_copy(SM80_CP_ASYNC_CACHEALWAYS[f32], thr = (16, 1), val = (1, 1))
  mma = tiled_mma(UniversalFMA[f32], atoms = (4, 4, 1))
  sA = smem f32[make_layout((16, 2))]
  sB = smem f32[make_layout((16, 2))]
  gA = local_tile(A, (16, 16, 2), (block.x, block.y, _), step = (1, X, 1))
  gB = local_tile(B, (16, 16, 2), (block.x, block.y, _), step = (X, 1, 1))
  gC = local_tile(C, (16, 16, 2), (block.x, block.y, _), step = (1, 1, X))
  tAgA = copy_a.slice(thread.x).partition_S(gA)
  tAsA = copy_a.slice(thread.x).partition_D(sA)
  tBgB = copy_a.slice(thread.x).partition_S(gB)
  tBsB = copy_a.slice(thread.x).partition_D(sB)
  thr_mma = mma.slice(thread.x)
  tCsA = thr_mma.partition_A(sA)
  tCsB = thr_mma.partition_B(sB)
  tCgC = thr_mma.partition_C(gC)
  tCrA = thr_mma.partition_fragment_A(sA)
  tCrB = thr_mma.partition_fragment_B(sB)
  tCrC = thr_mma.make_fragment_C(tCgC)
  clear(tCrC)
  for k_tile in range(size(tAgA, 3)) pipeline(stages = BP) {
    copy(copy_a, tAgA[_, _, _, k_tile], tAsA)
    copy(copy_a, tBgB[_, _, _, k_tile], tBsB)
    cp_async_fence()
    cp_async_wait(0)
    sync()
    if REG {
      for k_block in range(2) unroll {
        copy(tCsA[_, _, k_block], tCrA[_, _, k_block])
        copy(tCsB[_, _, k_block], tCrB[_, _, k_block])
        gemm(mma, tCrA[_, _, k_block], tCrB[_, _, k_block], tCrC)
      }
    } else {
      gemm(mma, tCsA, tCsB, tCrC)
    }
    sync()
  }
  axpby(alpha, tCrC, beta, tCgC)
}

kernel smem_operands_nt[BP: int = 3](A: f32[M, K] : (1, ldA), B: f32[N, K] : (1, ldB),
    C: f32[M, N] : (1, ldC), alpha: f32, beta: f32)
  assume M % 16 == 0, N % 16 == 0, K % 2 == 0
  grid (ceil_div(M, 16), ceil_div(N, 16)) threads 16
{
  mainloop(A, B, C, alpha, beta, BP, false)
}

kernel register_operands_nt[BP: int = 3](A: f32[M, K] : (1, ldA), B: f32[N, K] : (1, ldB),
    C: f32[M, N] : (1, ldC), alpha: f32, beta: f32)
  assume M % 16 == 0, N % 16 == 0, K % 2 == 0
  grid (ceil_div(M, 16), ceil_div(N, 16)) threads 16
{
  mainloop(A, B, C, alpha, beta, BP, true)
}
"""


def _kernel(text: str, file: str, name: str, **defines: Any) -> KernelOp:
    module = compile(Source(text, file), Stage.THREAD, Options(defines=defines, kernel=name)).module
    return next(k for k in module.walk_type(KernelOp) if k.sym_name == name)


def _run(kernel: KernelOp, name: str, m: int, n: int, k: int, tile: tuple[int, int]) -> float:
    """C = 1.5 A B^T + beta C on the CPU; the normwise error against float64."""
    layout = "nt" if "_nt" in name else "tn"  # m- and n-major operands, or k-major
    args, ref = _gemm_args(layout, m, n, k, 0.5 if k % 4 else 0.0)
    grid = (-(-m // tile[0]), -(-n // tile[1]))
    native.run_kernel(kernel, grid, args)
    c = args["C"].T  # (m, n), stored n-major rows of the column-major C
    return float(np.linalg.norm(c - ref) / np.linalg.norm(ref))


@pytest.mark.parametrize("name", ["smem_operands_nt", "register_operands_nt"])
@pytest.mark.parametrize("stages", [2, 3, 4])
def test_small_loop_values(name: str, stages: int) -> None:
    """1, 2, 3 and 8 k-tiles through 2, 3 and 4 stages (fewer tiles than stages
    than the prologue fills, as many, more)."""
    kernel = _kernel(SMALL, "small.cute", name, BP=stages)
    for k in (2, 4, 6, 16):
        assert _run(kernel, name, 32, 48, k, (16, 16)) < 1e-6, k


@pytest.mark.parametrize(
    ("name", "sizes"),
    [
        ("sgemm_nt", [(128, 256, 80), (128, 128, 16), (128, 128, 48)]),
        ("sgemm_tn", [(256, 128, 64), (128, 128, 32)]),
        ("sgemm_nt_any", [(132, 260, 84), (4, 8, 2)]),
        ("sgemm_tn_any", [(131, 259, 83), (3, 5, 1)]),
    ],
)
def test_example_values(name: str, sizes: list[tuple[int, int, int]]) -> None:
    """examples/sgemm_pipeline_pass.cute (4 stages, k-tiles of 16): 5, 1 and 3
    k-tiles, and sizes the tiles do not divide for the `_any` kernels."""
    kernel = _kernel(EXAMPLE.read_text(), str(EXAMPLE), name)
    for m, n, k in sizes:
        assert _run(kernel, name, m, n, k, (128, 128)) < 1e-6, (m, n, k)


def _too_shallow(b: Builder, stages: int) -> None:
    b.insert(thread.CpAsyncWaitOp([], stages - 1))
    b.insert(gpu.BarrierOp())


def _no_barrier(b: Builder, stages: int) -> None:
    b.insert(thread.CpAsyncWaitOp([], stages - 2))


@pytest.mark.parametrize(
    ("publish", "message"),
    [
        (_too_shallow, "before a cp.async wait lands it"),
        (_no_barrier, "before a cp.async wait lands it|shared-memory race"),
    ],
)
@pytest.mark.parametrize("name", ["smem_operands_nt", "register_operands_nt"])
def test_planted_schedule_errors_are_caught(
    monkeypatch: pytest.MonkeyPatch, publish: Any, message: str, name: str
) -> None:
    """A wait one group too shallow, or no barrier after it: the CPU backend reads a
    stage whose copies have not landed (for this thread or another) and says so."""
    monkeypatch.setattr(pipeline, "publish", publish)
    kernel = _kernel(SMALL, "small.cute", name, BP=3)
    with pytest.raises(AccessError, match=message):
        _run(kernel, name, 32, 32, 8, (16, 16))


def test_stage_strides_keep_alignment_and_swizzle() -> None:
    """A stage starts 128 bytes (and a swizzle's span) after the last: padded TN smem
    (cosize 2108 f32) gets 2112; a Sw<3,3,3> f16 tile needs 512-element strides."""
    from cutec.ir.dialects.cute_types import LayoutSpec, TensorType
    from cutec.ir.traits import AddressSpace
    from cutec.ir.types import f16, f32

    padded = TensorType(f32, AddressSpace.SHARED, LayoutSpec.parse("(128,16):(1,132)"))
    assert str(pipeline.staged_type(padded, 4).spec) == "(128,16,4):(1,132,2112)"
    sw = TensorType(f16, AddressSpace.SHARED, LayoutSpec.parse("Sw<3,3,3> o 0 o (8,40):(40,1)"))
    assert str(pipeline.staged_type(sw, 3).spec) == "Sw<3,3,3> o 0 o (8,40,3):(40,1,512)"


HEAD = (
    "kernel k(A: f32[M, K] : (1, ldA)) threads 32 {\n"
    "  c = tiled_copy(SM80_CP_ASYNC_CACHEALWAYS[f32], thr = (32, 1), val = (1, 1))\n"
    "  sA = smem f32[make_layout((32, 4))]\n"
    "  gA = local_tile(A, (32, 4), (block.x, _))\n"
    "  tAgA = c.slice(thread.x).partition_S(gA)\n"
    "  tAsA = c.slice(thread.x).partition_D(sA)\n"
    "  r = make_fragment_like(tAsA)\n"
)
LOOP = "  for k in range(size(tAgA, 3)) {clause} {{\n{body}  }}\n}}\n"
COPY = "    copy(c, tAgA[_, _, _, k], tAsA)\n    cp_async_fence()\n    cp_async_wait(0)\n"


@pytest.mark.parametrize(
    ("clause", "body", "line", "col", "message"),
    [
        ("pipeline(stages = 1)", COPY + "    sync()\n", 8, 51,
         "a pipeline needs at least 2 stages, got 1"),
        ("pipeline(depth = 3)", COPY + "    sync()\n", 8, 42,
         "'pipeline' takes one parameter, 'stages', not 'depth'"),
        ("pipeline(stages = M)", COPY + "    sync()\n", 8, 51,
         "the number of pipeline stages must be known at compile time"),
        ("unroll(2) pipeline(stages = 2)", "    sync()\n", 8, 43,
         "'pipeline' software-pipelines the cp.async copies into shared memory of its "
         "loop, and this loop's body has none"),
        ("pipeline(stages = 2)", COPY + "    copy(tAsA, r)\n", 8, 3,
         "cannot pipeline this loop: its body must publish the copied tiles with sync() "
         "before computing on them"),
        ("pipeline(stages = 2)", COPY + "    sync()\n    copy(r, tAsA)\n", 13, 5,
         "cannot pipeline this loop: its compute writes shared memory, which the stages "
         "would race"),
        ("pipeline(stages = 2)", COPY + "    sync()\n    cp_async_wait(0)\n", 13, 5,
         "cannot pipeline this loop: after its first sync() the body computes; "
         "'thread.cp_async_wait' there is the pipeline's to place"),
        ("pipeline(stages = 2)", "    copy(tAsA, r)\n" + COPY + "    sync()\n", 9, 5,
         "cannot pipeline this loop: before its first sync() only the cp.async copies and "
         "what they need may run, not 'cute.copy'"),
    ],
)  # fmt: skip
def test_misuse_is_one_located_error(
    clause: str, body: str, line: int, col: int, message: str
) -> None:
    text = HEAD + LOOP.format(clause=clause, body=body)
    with pytest.raises(CompileError) as info:
        compile(Source(text, "k.cute"), Stage.CUTE)
    diags = info.value.diagnostics
    assert len(diags) == 1, [d.message for d in diags]
    assert message in diags[0].message
    loc = diags[0].location
    assert (loc.line, loc.col) == (line, col), diags[0].message


def test_a_loop_without_the_annotation_is_left_alone() -> None:
    """sgemm_sm80.cute pipelines by hand: the pass does not touch it."""
    path = EXAMPLE.parent / "sgemm_sm80.cute"
    with_pass = compile(Source.from_file(path), Stage.CUTE).text
    without = compile(
        Source.from_file(path),
        Stage.CUTE,
        Options(pipeline="predicate,canonicalize,cse,vectorize,select-atoms"),
    ).text
    assert with_pass == without


def test_a_fully_unrolled_loop_cannot_be_pipelined() -> None:
    loop = "  for k in range(4) unroll pipeline(stages = 2) {\n"
    text = HEAD + loop + COPY + "    sync()\n  }\n}\n"
    with pytest.raises(CompileError) as info:
        compile(Source(text, "k.cute"), Stage.CUTE)
    (diag,) = info.value.diagnostics
    assert diag.message.startswith("a fully unrolled loop runs at compile time and cannot be")
    assert (diag.location.line, diag.location.col) == (8, 28)  # the clause


@pytest.mark.parametrize("k", [64, 256])
def test_tensor_core_example_values(k: int) -> None:
    """examples/hgemm_pipeline_pass.cute (swizzled stages, ldmatrix double-buffered,
    mma.sync) in the interpreter, which runs warp-collective atoms: 1 and 4 k-tiles
    of 64 through 3 stages, one 32x32 CTA; small integers keep f16 sums exact."""
    from cutec.cpu.reference import run_kernel

    path = EXAMPLE.parent / "hgemm_pipeline_pass.cute"
    kernel = _kernel(path.read_text(), str(path), "hgemm_tn", BM=32, BN=32)
    rng = np.random.default_rng(k)
    m = n = 32
    a = rng.integers(-3, 4, (m, k)).astype(np.float16)  # (M,K) k-major
    b = rng.integers(-3, 4, (n, k)).astype(np.float16)  # (N,K) k-major
    c0 = rng.integers(-3, 4, (m, n)).astype(np.float16)
    c = c0.copy(order="F")
    args = {"A": a, "M": m, "K": k, "ldA": k, "B": b, "N": n, "ldB": k, "C": c, "ldC": m}
    run_kernel(kernel, (1, 1), {**args, "alpha": 2.0, "beta": -1.0})
    ref = 2.0 * (a.astype(np.float64) @ b.astype(np.float64).T) - c0.astype(np.float64)
    assert np.array_equal(c.astype(np.float64), ref)


def test_pipelined_ir_round_trips() -> None:
    """The printed IR of a pipelined kernel parses back to the same text."""
    from cutec.ir.parser import parse_module
    from cutec.ir.printer import print_op
    from cutec.ir.verifier import verify

    text = compile(Source(SMALL, "small.cute"), Stage.CUTE).text
    module = parse_module(text, "small.mlir")
    verify(module)
    assert print_op(module) == text
    assert "pipeline_stages" not in text and "(16,2,3):(1,16,32)" in text


@pytest.mark.parametrize(
    ("clause", "col", "message"),
    [
        ("pipeline stages = 4", 47, "expected '(', found 'stages'"),
        ("pipeline(stages = 4) unroll(2)", 59, "expected '{', found 'unroll'"),
    ],
)
def test_clause_syntax_errors(clause: str, col: int, message: str) -> None:
    text = SMALL.replace("pipeline(stages = BP)", clause)
    line = SMALL[: SMALL.index("pipeline(stages = BP)")].count("\n") + 1
    with pytest.raises(CompileError) as info:
        compile(Source(text, "small.cute"), Stage.AST)
    (diag,) = info.value.diagnostics
    assert diag.message == message
    assert (diag.location.line, diag.location.col) == (line, col)


def test_a_value_the_loop_carries_stays_with_the_compute() -> None:
    """A scalar the compute carries (after the last sync(), which is dropped) comes out
    of the pipelined loop: C = (number of k-tiles) * A B^T."""
    text = SMALL.replace(
        "    sync()\n  }\n  axpby(alpha, tCrC, beta, tCgC)",
        "    sync()\n    s = s + alpha\n  }\n  axpby(s, tCrC, beta, tCgC)",
    ).replace("  clear(tCrC)\n  for", "  clear(tCrC)\n  s = alpha - alpha\n  for")
    kernel = _kernel(text, "carried.cute", "register_operands_nt")
    for k in (2, 6, 16):
        args, ref = _gemm_args("nt", 32, 32, k, 0.0)  # ref = 1.5 A B^T
        native.run_kernel(kernel, (2, 2), args)
        want = ref * (k // 2)  # s = 1.5 * tiles
        assert np.linalg.norm(args["C"].T - want) / np.linalg.norm(want) < 1e-6, k


@pytest.mark.parametrize("wait_after", [True, False])
def test_shared_memory_read_after_the_loop_waits_for_the_stand_in_copies(
    monkeypatch: pytest.MonkeyPatch, wait_after: bool
) -> None:
    """The last iterations copy stand-in tiles nobody reads; a kernel that reads the
    shared tiles after the loop gets wait_group(0) and a barrier first (planted:
    without them, the read meets copies still in flight). With 2 k-tiles through 4
    stages, groups 3 and 4, into stages 3 and 0, may be pending at the end."""
    text = SMALL.replace(
        "  axpby(alpha, tCrC, beta, tCgC)",
        "  copy(tCsA[_, _, 0], tCrA[_, _, 0])\n"
        "  gemm(mma, tCrA[_, _, 0], tCrB[_, _, 0], tCrC)\n"  # the read is used
        "  axpby(alpha, tCrC, beta, tCgC)",
    )
    if not wait_after:
        monkeypatch.setattr(pipeline, "_shared_after", lambda loop: False)
    kernel = _kernel(text, "after.cute", "register_operands_nt", BP=4)
    if wait_after:
        _run(kernel, "register_operands_nt", 32, 32, 4, (16, 16))  # (C has an extra term)
    else:
        with pytest.raises(AccessError, match=r"before a cp\.async wait lands it"):
            _run(kernel, "register_operands_nt", 32, 32, 4, (16, 16))


# Two pipelined loops over the same shared tiles (the first half of K, then the
# rest, into the same accumulators), as a stream-K gemm's whole-tile and split-tile
# paths: the buffers are staged once, by the first loop the pass meets.
TWICE = """
kernel twice_nt[BP: int = 3](A: f32[M, K] : (1, ldA), B: f32[N, K] : (1, ldB),
    C: f32[M, N] : (1, ldC), alpha: f32, beta: f32)
  assume M % 16 == 0, N % 16 == 0, K % 4 == 0
  grid (ceil_div(M, 16), ceil_div(N, 16)) threads 16
{
  copy_a = tiled_copy(SM80_CP_ASYNC_CACHEALWAYS[f32], thr = (16, 1), val = (1, 1))
  mma = tiled_mma(UniversalFMA[f32], atoms = (4, 4, 1))
  sA = smem f32[make_layout((16, 2))]
  sB = smem f32[make_layout((16, 2))]
  gA = local_tile(A, (16, 16, 2), (block.x, block.y, _), step = (1, X, 1))
  gB = local_tile(B, (16, 16, 2), (block.x, block.y, _), step = (X, 1, 1))
  gC = local_tile(C, (16, 16, 2), (block.x, block.y, _), step = (1, 1, X))
  tAgA = copy_a.slice(thread.x).partition_S(gA)
  tAsA = copy_a.slice(thread.x).partition_D(sA)
  tBgB = copy_a.slice(thread.x).partition_S(gB)
  tBsB = copy_a.slice(thread.x).partition_D(sB)
  thr_mma = mma.slice(thread.x)
  tCsA = thr_mma.partition_A(sA)
  tCsB = thr_mma.partition_B(sB)
  tCgC = thr_mma.partition_C(gC)
  tCrC = thr_mma.make_fragment_C(tCgC)
  clear(tCrC)
  half = size(tAgA, 3) / 2
  for k_tile in range(half) pipeline(stages = BP) {
    copy(copy_a, tAgA[_, _, _, k_tile], tAsA)
    copy(copy_a, tBgB[_, _, _, k_tile], tBsB)
    cp_async_fence()
    cp_async_wait(0)
    sync()
    gemm(mma, tCsA, tCsB, tCrC)
    sync()
  }
  for k_tile in range(half, size(tAgA, 3)) pipeline(stages = BP) {
    copy(copy_a, tAgA[_, _, _, k_tile], tAsA)
    copy(copy_a, tBgB[_, _, _, k_tile], tBsB)
    cp_async_fence()
    cp_async_wait(0)
    sync()
    gemm(mma, tCsA, tCsB, tCrC)
    sync()
  }
  axpby(alpha, tCrC, beta, tCgC)
}
"""


def test_two_loops_over_the_same_buffers_stage_them_once() -> None:
    kernel = _kernel(TWICE, "twice.cute", "twice_nt", BP=3)
    # sA and sB, 3 stages of 16x2 f32 each: 2 x 384 bytes, not 3 x 3 stages
    allocs = [op for op in kernel.walk() if isinstance(op, thread.AllocSharedOp)]
    assert sorted(op.attributes["bytes"].value for op in allocs) == [384, 384]
    for k in (4, 8, 12, 32):
        assert _run(kernel, "twice_nt", 32, 48, k, (16, 16)) < 1e-6, k


def test_two_loops_must_agree_on_the_stages() -> None:
    text = TWICE.replace("range(half, size(tAgA, 3)) pipeline(stages = BP)",
                         "range(half, size(tAgA, 3)) pipeline(stages = 2)")  # fmt: skip
    with pytest.raises(CompileError) as info:
        _kernel(text, "twice.cute", "twice_nt", BP=3)
    assert "another loop pipelines over 3 stages" in str(info.value)
