"""vectorize: access widths from layouts, alignment and facts, checked by values."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cutec.analysis.contiguity import vector_width
from cutec.diagnostics import CompileError
from cutec.driver import Options, Source, Stage, compile
from cutec.frontend import compile_source
from cutec.ir.dialects.builtin import KernelOp, ModuleOp
from cutec.ir.dialects.cute_compute import CopyOp
from cutec.ir.layout_of import LayoutAnalysis
from cutec.passes.vectorize import Vectorize
from cutec.ptx.ptxas import assemble, find_ptxas
from tests.ir.test_address_of import addresses

SGEMM_2 = (Path(__file__).parents[2] / "examples" / "sgemm_2.cute").read_text()


def module(text: str = SGEMM_2) -> ModuleOp:
    return compile_source(text, "sgemm_2.cute")


def copies(m: ModuleOp, kernel: str) -> list[CopyOp]:
    (k,) = [k for k in m.walk_type(KernelOp) if k.sym_name == kernel]
    return list(k.walk_type(CopyOp))


def test_sgemm_2_nt_moves_128_bits_and_tn_one_element() -> None:
    m = module()
    la = LayoutAnalysis()
    assert {vector_width(la, c.src, c.dst).elements for c in copies(m, "sgemm_nt")} == {4}
    tn = vector_width(la, copies(m, "sgemm_tn")[0].src, copies(m, "sgemm_tn")[0].dst)
    assert tn.elements == 1
    assert tn.limits[0].startswith("128-bit accesses not used: 4 consecutive elements of")
    Vectorize().run(m)
    # The register -> shared copies have no atom: the pass writes their width.
    plain = [c for c in copies(m, "sgemm_nt") if c.tiled is None]
    assert plain and all(c.attributes["vector"].value == 4 for c in plain)


def test_without_the_assumption_128_bit_loads_are_refused() -> None:
    text = SGEMM_2.replace("ldA % 4 == 0, ", "")
    la = LayoutAnalysis()
    c = copies(module(text), "sgemm_nt")[0]
    width = vector_width(la, c.src, c.dst)
    assert width.elements == 1
    assert "is not known to be a multiple of 4" in width.limits[0] and "ldA" in width.limits[0]
    with pytest.raises(CompileError) as e:
        Vectorize().run(module(text))
    d = e.value.diagnostics[0]
    assert d.message.startswith("UniversalCopy<uint128_t> moves 4 elements at once, but this copy")
    assert (d.location.line, d.location.col) == (39, 3)


def test_without_align_the_base_limits_the_width() -> None:
    text = SGEMM_2.replace("(1, ldA) align 16,", "(1, ldA),", 1)
    c = copies(module(text), "sgemm_nt")[0]
    width = vector_width(LayoutAnalysis(), c.src, c.dst)
    assert width.elements == 1
    assert width.limits[0] == (
        "128-bit accesses not used: the base is aligned to 4 bytes only (declare `align 16`)"
    )


def test_every_chosen_vector_is_contiguous_and_aligned_for_every_thread() -> None:
    # Soundness by values: for extents that satisfy the facts, each thread's vectors
    # are p consecutive elements starting at a multiple of p.
    m = module()
    la = LayoutAnalysis()
    rng = np.random.default_rng(0)
    for c in copies(m, "sgemm_nt"):
        p = vector_width(la, c.src, c.dst).elements
        for side in (c.src, c.dst):
            a = la.address_of(side)
            for _ in range(3):
                env = {s: 4 * int(rng.integers(64, 512)) for s in ("M", "N", "K", "ldA", "ldB")}
                env |= {"bid_x": int(rng.integers(0, 8)), "bid_y": int(rng.integers(0, 8))}
                for tid in range(0, 256, 37):
                    env |= {"tid_x": tid, "k_tile_next": 1}
                    addr = addresses(a, env).reshape(-1, p)
                    assert (addr[:, 0] % p == 0).all()
                    assert (np.diff(addr, axis=1) == 1).all()


# A 16-bit copy through registers, 8 elements a thread along M, on whole tiles (a
# predicated copy moves one element per access; axpby's predicated vectors are
# tests/gpu's gemm_auto with an f16 C).
HALF_COPY = """
kernel k[T: dtype = f16](A: T[M, N] : (1, ldA) align 16, C: T[M, N] : (1, ldC) align 16)
  assume M % 64 == 0, N % 16 == 0, ldA % 8 == 0, ldC % 8 == 0
  grid (M / 64, N / 16) threads 128
{
  gA = local_tile(A, (64, 16), (block.x, block.y))
  gC = local_tile(C, (64, 16), (block.x, block.y))
  c = tiled_copy(auto, thr = (8, 16), val = (8, 1))
  tA = c.slice(thread.x).partition_S(gA)
  tC = c.slice(thread.x).partition_D(gC)
  r = make_fragment_like(tA)
  copy(c, tA, r)
  copy(c, r, tC)
}
"""


@pytest.mark.parametrize("t", ["f16", "bf16"])
def test_16_bit_elements_move_16_bytes_at_a_time(t: str) -> None:
    """Eight 16-bit elements a vector (the PTX emitter packs them in pairs into
    .v4.b32, which ptxas assembles), and the values on the CPU."""
    import ml_dtypes

    import cutec.runtime as rt

    m = compile_source(HALF_COPY, "half.cute", defines={"T": t})
    la = LayoutAnalysis()
    for c in m.walk_type(CopyOp):
        assert vector_width(la, c.src, c.dst).elements == 8
    k = rt.jit(HALF_COPY, device="cpu", T=t)
    assert "ld.global.v4.b32" in k.ptx and "st.global.v4.b32" in k.ptx
    if find_ptxas() is not None:
        for target in ("sm_80", "sm_90a"):
            options = Options(defines={"T": t}, target=target)
            ptx = compile(Source(HALF_COPY, "half.cute"), Stage.PTX, options).ptx
            assert ptx is not None
            result = assemble(ptx, target)
            assert result.ok, result.stderr
    dtype = np.float16 if t == "f16" else ml_dtypes.bfloat16
    rng = np.random.default_rng(1)
    a = np.asfortranarray(rng.standard_normal((128, 48)).astype(dtype))
    c = np.asfortranarray(np.full((128, 48), np.nan, dtype))
    k(a, c)
    np.testing.assert_array_equal(c.astype(np.float32), a.astype(np.float32))


# The same copy on tiles that may run past M and N: the predicate pass guards it,
# and a vector moves under its first element's predicate where none can straddle M.
RESIDUE_COPY = HALF_COPY.replace(
    "assume M % 64 == 0, N % 16 == 0, ldA % 8 == 0, ldC % 8 == 0\n  grid (M / 64, N / 16)",
    "assume M % {m} == 0, ldA % {m} == 0, ldC % {m} == 0\n"
    "  grid (ceil_div(M, 64), ceil_div(N, 16))",
)


@pytest.mark.parametrize(("m_div", "width", "sizes"), [(8, 8, (72, 45)), (2, 2, (70, 45))])
def test_a_residue_guarded_copy_moves_vectors_under_one_predicate(
    m_div: int, width: int, sizes: tuple[int, int]
) -> None:
    import cutec.runtime as rt

    source = RESIDUE_COPY.replace("{m}", str(m_div))
    result = compile(Source(source, "residue.cute"), Stage.PTX, Options())
    assert result.ptx is not None
    widths = {r.message.split("(")[1].split("-bit")[0] for r in result.remarks
              if r.message.startswith("copy by UniversalCopy")}  # fmt: skip
    assert widths == {str(16 * width)}
    if width == 8:
        assert "@%p" in result.ptx and "ld.global.v4.b32" in result.ptx
    k = rt.jit(source, device="cpu")
    a = np.asfortranarray(np.random.default_rng(2).standard_normal(sizes).astype(np.float16))
    c = np.asfortranarray(np.full(sizes, np.nan, np.float16))
    k(a, c)
    np.testing.assert_array_equal(c, a)
