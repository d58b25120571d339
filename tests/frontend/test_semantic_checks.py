"""The language's semantic checks: mistakes CuTe would let through to wrong results
(or a hang) are one located error each."""

from __future__ import annotations

import pytest

from cutec.diagnostics import CompileError
from cutec.frontend import compile_source

CASES = [
    (
        "tiled_copy_more_threads_than_the_block",
        "kernel k(A: f32[128, 8]) grid 1 threads 128 {\n"
        "  c = tiled_copy(UniversalCopy[f32], thr = (32, 8), val = (1, 1))\n"
        "  t = c.slice(thread.x).partition_S(A)\n"
        "}\n",
        (2, 7),
        "this TiledCopy has 256 threads but the kernel runs 128 (threads 128)",
    ),
    (
        "tiled_mma_more_threads_than_the_block",
        "kernel k() grid 1 threads 64 {\n"
        "  m = tiled_mma(UniversalFMA[f32], atoms = (16, 16, 1))\n"
        "}\n",
        (2, 7),
        "this TiledMMA has 256 threads but the kernel runs 64",
    ),
    (
        "thread_layout_larger_than_the_tile",
        "kernel k(A: f32[M, N]) grid 1 threads 256 {\n"
        "  g = local_tile(A, (20, 8), (block.x, 0))\n"
        "  t = local_partition(g, make_layout((32, 8)), thread.x)\n"
        "}\n",
        (3, 7),
        "the thread layout (32,8) does not divide the tensor (_20,_8):(_1,M): mode 0 has 20 "
        "elements, not a multiple of 32",
    ),
    (
        "tiled_copy_tile_does_not_divide",
        "kernel k(A: f32[96, 8]) grid 1 threads 256 {\n"
        "  c = tiled_copy(UniversalCopy[u128], thr = (32, 8), val = (4, 1))\n"
        "  t = c.slice(thread.x).partition_S(A)\n"
        "}\n",
        (3, 7),
        "the TiledCopy's tile (128,8) does not divide the tensor (_96,_8):(_1,_96)",
    ),
    (
        "tiled_mma_tile_does_not_divide",
        "kernel k(C: f32[128, 64]) grid 1 threads 256 {\n"
        "  m = tiled_mma(UniversalFMA[f32], atoms = (16, 16, 1),\n"
        "                tile = ((16, 4, 2) : (4, 1, 64), (16, 4, 2) : (4, 1, 64), 1))\n"
        "  t = m.slice(thread.x).partition_C(C)\n"
        "}\n",
        (4, 7),
        "the TiledMMA's tile (128,128) does not divide the tensor (_128,_64):(_1,_128): mode 1 "
        "has 64 elements, not a multiple of 128",
    ),
    (
        "tiled_mma_tile_mode_is_swizzled",
        "kernel k() grid 1 threads 256 {\n"
        "  m = tiled_mma(UniversalFMA[f32], atoms = (16, 16, 1),\n"
        "                tile = (composition(swizzle(1, 0, 1), (4, 4) : (4, 1)), 16, 1))\n"
        "}\n",
        (3, 25),
        "an MMA tile mode is a plain layout",
    ),
    (
        "ldmatrix_partition_copied_without_its_tiled_copy",
        "kernel k() grid 1 threads 32 {\n"
        "  mma = tiled_mma(SM80_16x8x16_F32F16F16F32_TN)\n"
        "  sA = smem f16[(16, 16) : (16, 1)]\n"
        "  s2r = tiled_copy_A(SM75_U32x4_LDSM_N, mma)\n"
        "  tXsA = s2r.slice(thread.x).partition_S(sA)\n"
        "  rA = make_fragment_like(tXsA)\n"
        "  copy(tXsA, rA)\n"
        "}\n",
        (7, 8),
        "the source is a partition for the SM75_U32x4_LDSM_N instruction: copy it with its "
        "tiled copy",
    ),
]


@pytest.mark.parametrize(("name", "source", "at", "message"), CASES, ids=[c[0] for c in CASES])
def test_semantic_mistake_is_one_located_error(
    name: str, source: str, at: tuple[int, int], message: str
) -> None:
    with pytest.raises(CompileError) as info:
        compile_source(source, "k.cute")
    assert len(info.value.diagnostics) == 1
    rendered = info.value.render()
    assert rendered.startswith(f"k.cute:{at[0]}:{at[1]}: error: "), rendered
    assert message in rendered, rendered


def test_fewer_threads_than_the_block_is_fine() -> None:
    """Warp specialisation: a 128-thread tiled copy in a 256-thread kernel."""
    compile_source(
        "kernel k(A: f32[128, 8]) grid 1 threads 256 {\n"
        "  c = tiled_copy(UniversalCopy[f32], thr = (32, 4), val = (1, 2))\n"
        "  t = c.slice(thread.x % 128).partition_S(A)\n"
        "}\n",
        "k.cute",
    )


def test_a_mistake_in_an_unrolled_loop_is_reported_once() -> None:
    """The loop body is built once per iteration; its mistake is one diagnostic."""
    with pytest.raises(CompileError) as info:
        compile_source(
            "kernel k(A: f32[128]) grid 1 threads 32 {\n"
            "  for i in range(4) unroll {\n"
            "    x = A[i] + undefined_name\n"
            "  }\n"
            "}\n",
            "k.cute",
        )
    assert len(info.value.diagnostics) == 1
    assert info.value.render().startswith("k.cute:3:16: error: undefined name 'undefined_name'")


def test_messages_speak_the_language_types() -> None:
    """The IR's index is the language's int, i1 its bool."""
    with pytest.raises(CompileError) as info:
        compile_source(
            "kernel k(A: f32[128], n: int) grid 1 threads 32 {\n  A[0] = n\n}\n", "k.cute"
        )
    rendered = info.value.render()
    assert "int" in rendered and "index" not in rendered, rendered


def test_method_arity_error_points_at_the_method() -> None:
    with pytest.raises(CompileError) as info:
        compile_source(
            "kernel k(A: f32[128, 8]) grid 1 threads 256 {\n"
            "  c = tiled_copy(UniversalCopy[f32], thr = (32, 8), val = (1, 1))\n"
            "  t = c.slice(thread.x).partition_S(A, A)\n"
            "}\n",
            "k.cute",
        )
    assert info.value.render().startswith(
        "k.cute:3:25: error: 'partition_S' takes one tensor, got 2 arguments"
    )


def test_a_layout_tiler_on_a_dynamic_tensor_is_a_located_error_at_lowering() -> None:
    """The predicate pass cannot guard a layout tiler's cut of a dynamic tensor."""
    from cutec.driver import Source, Stage, compile

    source = Source(
        "kernel k(S: f32[64, N], D: f32[64, N]) grid 4 threads 64 {\n"
        "  t = local_tile(S, (8, 8) : (8, 1), block.x)\n"
        "  r = make_fragment_like(local_partition(t, make_layout((8, 8)), thread.x))\n"
        "  copy(local_partition(t, make_layout((8, 8)), thread.x), r)\n"
        "}\n",
        "k.cute",
    )
    with pytest.raises(CompileError) as info:
        compile(source, Stage.CUTE)
    assert info.value.render().startswith("k.cute:2:7: error: the layout tiler (_8,_8):(_8,_1)")
