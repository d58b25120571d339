"""tf32(x): an f32 (or a tf32 lane holding more than tf32's bits) rounded to tf32 precision,
to nearest even, the 13 low mantissa bits cleared, a NaN made 0x7FFFE000. Both CPU backends
against an independent rule (the nearer of the two tf32 neighbours, exact in float64), the
folder on constants, and ptxas on both targets' PTX (cvt.rn.tf32.f32 on sm_90, integer
rounding on sm_80, whose cvt.rna rounds ties away). tests/gpu/test_tf32_rounding_gpu.py
checks the GPU's bits against the same rule."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import cutec
from cutec.atoms.tma import TmaDataType, map_dtype
from cutec.cpu import native, reference
from cutec.driver import Options, Source, Stage, compile
from cutec.ir.dialects.arith_fold import round_tf32
from cutec.ir.dialects.builtin import KernelOp
from cutec.ptx.ptxas import find_ptxas

ROUND = """\
kernel round(P: f32[N], Q: tf32[N], Y: tf32[N], Z: tf32[N], W: f32[N])
  grid ceil_div(N, 128) threads 128
{
  i = block.x * 128 + thread.x
  if i < N {
    Y[i] = tf32(P[i])
    Z[i] = tf32(Q[i])
    W[i] = f32(Q[i])
  }
}
"""

# A TMA load through a tf32 map (CU_TENSOR_MAP_DATA_TYPE_TFLOAT32), stored back as it landed.
TMA_TF32 = """\
kernel tma_tf32[BM: int = 32, BK: int = 16](
    A: tf32[M, K] : (1, ldA) align 16, D: tf32[M, K] : (1, ldD))
  assume ldA % 4 == 0
  grid (ceil_div(M, BM), ceil_div(K, BK)) threads 128
{
  s_layout = make_layout((BM, BK))
  tma = make_tma_atom(SM90_TMA_LOAD, A, s_layout, (BM, BK))
  sA = smem tf32[s_layout]
  mA = tma.get_tma_tensor(shape(D))
  gA = local_tile(mA, (BM, BK), (block.x, block.y))
  gD = local_tile(D, (BM, BK), (block.x, block.y))
  bar = smem s64[1]
  (tAgA, tAsA) = tma_partition(tma, 0, make_layout(1), group_modes(sA, 0, 2),
                               group_modes(gA, 0, 2))
  if thread.x == 0 {
    mbarrier_init(bar[0], 1)
    mbarrier_init_fence()
  }
  sync()
  if thread.x == 0 {
    mbarrier_arrive_and_expect_tx(bar[0], size(sA) * 4)
    copy(tma.with(bar[0]), tAgA, tAsA)
  }
  mbarrier_wait(bar[0], 0)
  copy(local_partition(sA, make_layout((32, 4)), thread.x),
       local_partition(gD, make_layout((32, 4)), thread.x))
}
"""


def expected_bits(x: np.ndarray) -> np.ndarray:
    """The tf32 neighbour nearer to each f32 (ties to the even one), as f32 bits: an
    independent statement of the rule, exact in float64."""
    bits = x.view(np.uint32)
    lo = bits & np.uint32(0xFFFFE000)
    hi = (lo.astype(np.uint64) + 0x2000).astype(np.uint32)  # may carry into inf: wanted
    with np.errstate(invalid="ignore", over="ignore"):
        low = lo.view(np.float32)
        d_lo = np.abs(x.astype(np.float64) - low.astype(np.float64))
        # tf32's step at lo is 2^13 f32 steps; measured so, past the largest finite value
        # too (rounding sees an unbounded exponent: beyond half a step there is inf).
        step = np.abs(np.spacing(low).astype(np.float64)) * 8192.0
        d_hi = step - d_lo
    tie_even = (lo >> 13) & 1 == 0
    pick_lo = (d_lo < d_hi) | ((d_lo == d_hi) & tie_even)
    out = np.where(pick_lo, lo, hi)
    out = np.where(np.isinf(x), bits, out)  # inf's mantissa is zero: kept
    return np.where(np.isnan(x), np.uint32(0x7FFFE000), out).astype(np.uint32)


def samples(n: int = 4096, seed: int = 0) -> np.ndarray:
    """Random values over many exponents, exact ties (odd and even kept part), values just
    either side of a tie, the carries into the next binade and to infinity, subnormals,
    zeros, infinities and NaNs."""
    rng = np.random.default_rng(seed)
    rand = (rng.standard_normal(n) * 10.0 ** rng.integers(-30, 30, n)).astype(np.float32)
    base = rng.integers(0, 1 << 32, n // 4, dtype=np.uint64).astype(np.uint32) & np.uint32(
        0xFFFFE000
    )
    ties = base | np.uint32(0x1000)
    special = np.array(
        [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFFFFFFF,
         0x3F800FFF, 0x3F801000, 0x3F801001, 0x3F803000, 0x3FFFF000, 0x7F7FF000, 0x7F7FFFFF,
         0x00001000, 0x00003000, 0x00000FFF, 0x807FF000],
        dtype=np.uint32,
    )  # fmt: skip
    near = np.concatenate([ties - np.uint32(1), ties + np.uint32(1)])
    all_bits = np.concatenate([rand.view(np.uint32), ties, near, special])
    return all_bits.view(np.float32)


def _kernel(arch: str = "sm_90a") -> Any:
    result = compile(Source(ROUND, "r.cute"), Stage.THREAD, Options(target=arch))
    return next(iter(result.module.walk_type(KernelOp)))


@pytest.mark.parametrize("backend", [reference, native], ids=["interpreter", "native"])
def test_both_backends_round_to_nearest_even(backend: Any) -> None:
    x = samples(512 if backend is reference else 4096)
    n = x.size
    y, z, w = np.zeros(n, np.float32), np.zeros(n, np.float32), np.zeros(n, np.float32)
    args = {"P": x, "Q": x.copy(), "Y": y, "Z": z, "W": w, "N": n}
    backend.run_kernel(_kernel(), (n + 127) // 128, args)
    want = expected_bits(x)
    np.testing.assert_array_equal(y.view(np.uint32), want)
    np.testing.assert_array_equal(z.view(np.uint32), want)  # tf32(x) of a tf32 lane too
    # f32(x) of a tf32 is the lane (the interpreter's Python floats quiet signalling NaNs).
    nan = np.isnan(x)
    np.testing.assert_array_equal(w.view(np.uint32)[~nan], x.view(np.uint32)[~nan])
    assert np.isnan(w[nan]).all()


def test_the_folder_rounds_as_the_kernels() -> None:
    x = samples(256)
    got = np.array([round_tf32(float(v)) for v in x], np.float32).view(np.uint32)
    np.testing.assert_array_equal(got, expected_bits(x))


def _aligned(shape: tuple[int, int]) -> np.ndarray:
    """A zeroed float32 array whose data starts on 16 bytes (the kernel's `align 16`)."""
    n = shape[0] * shape[1]
    buf = np.zeros(n + 4, np.float32)
    first = (-buf.ctypes.data % 16) // 4
    return buf[first : first + n].reshape(shape)


def test_a_tf32_tensor_map_load_rounds() -> None:
    """What a TFLOAT32 map (a tf32 tensor's) loads lands rounded, as tf32(x) rounds: the
    H200's TMA unit does (tests/gpu/test_tf32_rounding_gpu.py), and so gemm's Hopper body
    reads its tf32 operands rounded without an instruction of its own."""
    x = samples(1 << 10)
    k = 16
    m = x.size // k // 4 * 4  # ldA % 4 == 0; the specials are at the end of the samples
    a = _aligned((k, m))
    a[...] = x[-m * k :].reshape(k, m)
    d = _aligned((k, m))
    cutec.jit(TMA_TF32, "tma_tf32", device="cpu")(a.T, d.T)
    np.testing.assert_array_equal(d.T.view(np.uint32), expected_bits(a.T))


@pytest.mark.skipif(find_ptxas() is None, reason="no ptxas (install the test extra)")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_ptxas_assembles_the_rounding(arch: str) -> None:
    ptx = compile(Source(ROUND, "r.cute"), Stage.PTX, Options(target=arch)).ptx
    assert ("cvt.rn.tf32.f32" in ptx) == (arch == "sm_90a")
    assert "cvt.rna" not in ptx  # ties away from zero is not tf32()'s rounding
    compile(Source(ROUND, "r.cute"), Stage.CUBIN, Options(target=arch))


def test_a_tf32_tensors_store_map_writes_its_bits() -> None:
    """Loads through a tf32 tensor's map round (TFLOAT32); its store map is FLOAT32, so
    a TMA store writes the f32 lanes' bits, as the CPU model copies them (whether a
    TFLOAT32 store would convert is not measured)."""
    assert map_dtype("tf32", store=False) is TmaDataType.TFLOAT32
    assert map_dtype("tf32", store=True) is TmaDataType.FLOAT32
    assert map_dtype("f16", store=True) is TmaDataType.FLOAT16
