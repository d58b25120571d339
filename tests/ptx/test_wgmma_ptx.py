"""wgmma end to end to SASS-ready PTX: one warpgroup, one 64xNxK tile per instruction row.

Each case is a small .cute kernel (A and B staged through GMMA-layout shared memory,
one `gemm` by a wgmma atom) compiled for sm_90a and assembled by ptxas: every
element type of the atom table, both majors where the type has them, every
swizzle, N from 8 to 256. The PTX is checked for what the lowering promises: one
wgmma per k-block, descriptors of the layout's swizzle, accumulators updated in
place (no mov into them between wgmma.fence and the wait), and no spill.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cutec.diagnostics import CompileError
from cutec.driver import Options, Source, Stage, compile
from cutec.ptx.ptxas import find_ptxas
from tests.ptx.sass_check import assert_sass, needs_disassembler

pytestmark = pytest.mark.skipif(find_ptxas() is None, reason="no ptxas (install the test extra)")

# dtype name -> (bits, accumulator types the atom table has)
BITS = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8}
SWIZZLE_BYTES = {"INTER": 16, "SW32": 32, "SW64": 64, "SW128": 128}


def k_extent(t: str, swizzle: str) -> int:
    """Two k-blocks, or a K-major swizzle atom's width if that is more."""
    return max(2 * 256 // BITS[t], SWIZZLE_BYTES[swizzle] * 8 // BITS[t])


def kernel_source(
    t: str, d: str, n: int, a_major: str, b_major: str, swizzle: str, warpgroups: int = 1
) -> str:
    """A (M,K) x B (N,K) -> C (M,N) kernel by one wgmma SS atom (`k_extent`), M = 64 rows
    per warpgroup (a TiledMMA of `warpgroups` atoms along M)."""
    k, m = k_extent(t, swizzle), 64 * warpgroups
    suffix = ("T" if a_major == "K" else "N") + ("N" if b_major == "K" else "T")
    atom = f"SM90_64x{n}x{256 // BITS[t]}_{d.upper()}{t.upper()}{t.upper()}_SS_{suffix}"
    tiled = atom if warpgroups == 1 else f"{atom}, atoms = ({warpgroups}, 1, 1)"
    stored = "f32" if t == "tf32" else t

    def stride(rows: int, major: str) -> str:
        return f"({k}, 1)" if major == "K" else f"(1, {rows})"

    a = f"{stored}[{m}, {k}] : {stride(m, a_major)}"
    b = f"{stored}[{n}, {k}] : {stride(n, b_major)}"
    return f"""
kernel wg(A: {a}, B: {b}, C: {d}[{m}, {n}] : (1, {m}))
  grid (1, 1) threads {128 * warpgroups}
{{
  sA = smem {stored}[tile_to_shape(GMMA.Layout_{a_major}_{swizzle}_Atom[{t}], ({m}, {k}))]
  sB = smem {stored}[tile_to_shape(GMMA.Layout_{b_major}_{swizzle}_Atom[{t}], ({n}, {k}))]
  thr = make_layout(({8 * warpgroups}, 16))
  copy(local_partition(A, thr, thread.x), local_partition(sA, thr, thread.x))
  copy(local_partition(B, thr, thread.x), local_partition(sB, thr, thread.x))
  fence_view_async_shared()
  sync()
  mma = tiled_mma({tiled})
  thr_mma = mma.slice(thread.x)
  tCsA = thr_mma.partition_A(sA)
  tCsB = thr_mma.partition_B(sB)
  tCgC = thr_mma.partition_C(C)
  tCrC = thr_mma.make_fragment_C(tCgC)
  clear(tCrC)
  gemm(mma, tCsA, tCsB, tCrC)
  copy(tCrC, tCgC)
}}
"""


def _compile(source: str) -> str:
    result = compile(Source.from_file("wg.cute", source), Stage.CUBIN, Options(target="sm_90a"))
    assert result.cubin is not None and result.ptx is not None
    for usage in result.resources.values():
        assert not usage.spills and usage.stack_frame == 0, usage
    return result.ptx


def _check_in_place(ptx: str, k_blocks: int) -> None:
    """k_blocks wgmmas between one fence and one wait, each updating the same registers,
    and no instruction between the fence and the wait writing or reading them."""
    body = ptx[ptx.index("wgmma.fence.sync.aligned;") : ptx.index("wgmma.wait_group")]
    mmas = re.findall(r"wgmma\.mma_async\S* (\{[^}]*\})", body)
    assert len(mmas) == k_blocks
    assert len(set(mmas)) == 1, "each k-block's wgmma must update the same registers"
    accumulators = set(re.findall(r"%\w+", mmas[0]))
    for line in body.splitlines():
        if "wgmma.mma_async" not in line:
            assert not accumulators & set(re.findall(r"%\w+", line)), line


CASES = [
    # (type, accumulator, N, A major, B major, swizzle)
    ("f16", "f32", 64, "K", "K", "SW128"),
    ("f16", "f16", 128, "MN", "MN", "SW128"),
    ("f16", "f32", 64, "MN", "K", "SW64"),
    ("f16", "f32", 64, "K", "MN", "SW32"),
    ("bf16", "f32", 256, "K", "K", "SW128"),
    ("bf16", "f32", 64, "MN", "MN", "INTER"),
    ("f16", "f32", 8, "K", "K", "INTER"),
    ("f16", "f32", 24, "K", "K", "SW32"),
    ("tf32", "f32", 64, "K", "K", "SW128"),
    ("tf32", "f32", 16, "K", "K", "SW32"),
    ("e4m3", "f32", 64, "K", "K", "SW128"),
    ("e4m3", "f16", 32, "K", "K", "SW64"),
]


@pytest.mark.parametrize(("t", "d", "n", "a_major", "b_major", "swizzle"), CASES)
def test_wgmma_kernel_assembles_with_accumulators_in_place(
    t: str, d: str, n: int, a_major: str, b_major: str, swizzle: str
) -> None:
    ptx = _compile(kernel_source(t, d, n, a_major, b_major, swizzle))
    _check_in_place(ptx, k_extent(t, swizzle) // (256 // BITS[t]))
    mode = {"INTER": 0, "SW128": 1, "SW64": 2, "SW32": 3}[swizzle]
    fixed = [int(x) for x in re.findall(r"or\.b64 %rd\d+, %rd\d+, (\d+);", ptx)]
    assert fixed and all(x >> 62 == mode for x in fixed), fixed


def rs_source(t: str, d: str, n: int) -> str:
    """`kernel_source` with A read into registers first (an RS atom, K-major A)."""
    return (
        kernel_source(t, d, n, "K", "K", "SW128")
        .replace("_SS_TN", "_RS_TN")
        .replace(
            "  tCsA = thr_mma.partition_A(sA)\n",
            "  tCsA = thr_mma.partition_A(sA)\n  tCrA = thr_mma.make_fragment_A(tCsA)\n"
            "  copy(tCsA, tCrA)\n",
        )
        .replace("gemm(mma, tCsA,", "gemm(mma, tCrA,")
    )


@pytest.mark.parametrize(("t", "d", "n"), [("f16", "f32", 64), ("bf16", "f32", 128)])
def test_rs_wgmma_assembles_with_registers_written_before_the_fence(t: str, d: str, n: int) -> None:
    ptx = _compile(rs_source(t, d, n))
    _check_in_place(ptx, 4)
    body = ptx[ptx.index("wgmma.fence.sync.aligned;") : ptx.index("wgmma.wait_group")]
    a_regs = set(re.findall(r"\}, (\{[^}]*\}), %rd", body))
    assert len(a_regs) == 4  # one register quad of A per k-block
    lines = [line.split() for line in body.splitlines() if "wgmma" not in line]
    written = {words[1].rstrip(",") for words in lines if len(words) > 1}
    for quad in a_regs:
        assert not written & set(re.findall(r"%\w+", quad)), quad


TWO_WARPGROUPS = kernel_source("f16", "f32", 64, "K", "K", "SW128", warpgroups=2)


def test_two_warpgroups_each_take_their_rows() -> None:
    """A TiledMMA of two atoms along M: each warpgroup's A descriptor starts at its own
    64 rows (the view's offset depends on the thread index, a multiple of the swizzle's
    repeat)."""
    _check_in_place(_compile(TWO_WARPGROUPS), 4)


@pytest.mark.slow
@pytest.mark.parametrize("n", range(8, 257, 8))
def test_every_n_assembles(n: int) -> None:
    ptx = _compile(kernel_source("f16", "f32", n, "K", "K", "INTER"))
    _check_in_place(ptx, 2)
    assert f"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.f16.f16" in ptx


def test_mn_major_tf32_is_a_located_error() -> None:
    """Only 16-bit types may be MN-major in shared memory (PTX ISA: the transpose
    immediates exist for .f16/.bf16 only): the atom table has K-major tf32 atoms only,
    and one reading an MN-major buffer is refused at the gemm."""
    source = kernel_source("tf32", "f32", 64, "MN", "K", "SW128").replace("_SS_NN", "_SS_TN")
    with pytest.raises(CompileError) as info:
        compile(Source.from_file("wg.cute", source), Stage.PTX, Options(target="sm_90a"))
    rendered = info.value.render()
    assert rendered.startswith("wg.cute:19:3:"), rendered
    assert "32-bit operands must be K-major in shared memory" in rendered, rendered


def test_a_layout_no_descriptor_describes_is_a_located_error() -> None:
    """A K-major atom reading an MN-major buffer: the descriptor cannot name it."""
    source = kernel_source("f16", "f32", 64, "MN", "K", "SW128").replace("_SS_NN", "_SS_TN")
    with pytest.raises(CompileError) as info:
        compile(Source.from_file("wg.cute", source), Stage.PTX, Options(target="sm_90a"))
    rendered = info.value.render()
    assert "wg.cute:" in rendered and "GMMA layout" in rendered, rendered


@pytest.mark.parametrize(
    ("before", "after", "message"),
    [
        ("", "warpgroup_commit_batch()\n  warpgroup_wait(0)", "no warpgroup_arrive() before it"),
        ("warpgroup_arrive()", "warpgroup_wait(0)", "its wgmma batch is not closed"),
        ("warpgroup_arrive()", "warpgroup_commit_batch()", "no warpgroup_wait(n) after"),
    ],
)
def test_a_kernel_placing_batches_places_all_of_them(before: str, after: str, message: str) -> None:
    """Naming any warpgroup op makes the author responsible for every wgmma batch: a
    missing bracket is one located error (the compiler places none of its own)."""
    source = kernel_source("f16", "f32", 64, "K", "K", "SW128").replace(
        "  gemm(mma, tCsA, tCsB, tCrC)\n", f"  {before}\n  gemm(mma, tCsA, tCsB, tCrC)\n  {after}\n"
    )
    with pytest.raises(CompileError) as info:
        compile(Source.from_file("wg.cute", source), Stage.PTX, Options(target="sm_90a"))
    rendered = info.value.render()
    assert rendered.startswith("wg.cute:") and message in rendered, rendered


def test_a_kernel_placing_its_batch_gets_exactly_its_brackets() -> None:
    source = kernel_source("f16", "f32", 64, "K", "K", "SW128").replace(
        "  gemm(mma, tCsA, tCsB, tCrC)\n",
        "  warpgroup_arrive()\n  gemm(mma, tCsA, tCsB, tCrC)\n  warpgroup_commit_batch()\n"
        "  warpgroup_wait(0)\n",
    )
    ptx = _compile(source)
    for instruction in ("wgmma.fence", "wgmma.commit_group", "wgmma.wait_group"):
        assert ptx.count(instruction) == 1, instruction


@needs_disassembler
@pytest.mark.parametrize("kernel", ["hgemm_nt", "hgemm_tn"])
def test_wgmma_tutorial_runs_hgmma_without_a_ptxas_warning(kernel: str) -> None:
    """The issue's bar for the Hopper tutorials: SASS with HGMMA and no HMMA in the
    mainloop, and no ptxas performance warning (a serialised wgmma)."""
    path = Path(__file__).parents[2] / "examples" / "wgmma_sm90.cute"
    result = compile(Source.from_file(path), Stage.CUBIN, Options(target="sm_90a", kernel=kernel))
    assert result.warnings == []
    ops = assert_sass(result.cubin, contains={"HGMMA"}, absent={"HMMA"}, kernel=kernel)
    assert ops["HGMMA"] == 16  # 2 x 2 tiles of 64x64 by 4 k-blocks of 16


def test_fragments_of_another_tiled_mma_are_a_located_error() -> None:
    """Operands partitioned for a 64x64 atom, multiplied by a 64x32 one: the value modes
    do not hold the atom's values (the descriptor would name the wrong N)."""
    source = kernel_source("f16", "f32", 64, "K", "K", "SW128").replace(
        "  gemm(mma, ",
        "  mma32 = tiled_mma(SM90_64x32x16_F32F16F16_SS_TN)\n  gemm(mma32, ",
    )
    with pytest.raises(CompileError) as info:
        compile(Source.from_file("wg.cute", source), Stage.PTX, Options(target="sm_90a"))
    rendered = info.value.render()
    assert rendered.startswith("wg.cute:") and "first modes hold" in rendered, rendered
