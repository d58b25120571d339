"""The whole-tensor gemm's warp-specialised TMA + wgmma body (examples/gemm_auto.cute for
sm_90a) run by the CPU backend against float64: every majorness of f16, bf16 and tf32 TN,
ragged in M, N and K (K = 130: K-major operands are views of rows padded to 8
elements, so each leading dimension is a multiple of 8, a fact the launch's variant
gets), one tile per CTA and persistent."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import cutec

EXAMPLE = Path(__file__).parents[2] / "examples" / "gemm_auto.cute"
NUMPY = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "tf32": np.float32}


@pytest.fixture(scope="module")
def source() -> Path:
    """gemm_auto, which assumes nothing of its sizes: each launch's variant gets the facts
    its sizes allow (docs/runtime.md, *Specialisation*). The operands here have leading
    dimensions of multiples of 8 (16 bytes of f16), the facts TMA needs, so the variant
    a launch runs is the Hopper body; `run.ptx` is read after the launch (before it, it
    is the unspecialised variant's, which has no tensor maps)."""
    return EXAMPLE


def _operand(rng: np.random.Generator, rows: int, k: int, mn_major: bool, t: str) -> np.ndarray:
    if mn_major:
        return np.asfortranarray(rng.standard_normal((rows, k)).astype(NUMPY[t]))
    padded = np.zeros((rows, -(-k // 8) * 8), NUMPY[t])  # ld % 8 == 0
    padded[:, :k] = rng.standard_normal((rows, k)).astype(NUMPY[t])
    return padded[:, :k]


def _tf32(x: np.ndarray) -> np.ndarray:
    """f32 values rounded to tf32, to nearest even (finite values)."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0xFFF + ((bits >> 13) & 1)) & ~np.uint64(0x1FFF)
    return bits.astype(np.uint32).view(np.float32)


def _check(run: cutec.Kernel, kernel: str, t: str, m: int, n: int, k: int) -> None:
    rng = np.random.default_rng(m + n + k)
    a = _operand(rng, m, k, kernel[-2] == "n", t)
    b = _operand(rng, n, k, kernel[-1] == "t", t)
    c0 = np.asfortranarray(rng.standard_normal((m, n)).astype(np.float32))
    c = c0.copy(order="F")
    run(a, b, c, 1.0, 0.5)
    # tf32 operands are rounded to nearest (truncating them errs about 1e-4 here).
    a64, b64 = ((_tf32(x) if t == "tf32" else x).astype(np.float64) for x in (a, b))
    ref = a64 @ b64.T + 0.5 * c0
    err = np.linalg.norm(c - ref) / np.linalg.norm(ref)
    assert err < 1e-6, err


@pytest.mark.parametrize(
    ("kernel", "t"),
    [("gemm_nt", "f16"), ("gemm_tn", "f16"),
     pytest.param("gemm_tn", "tf32", marks=pytest.mark.slow), ("gemm_tt", "tf32"),
     pytest.param("gemm_nn", "tf32", marks=pytest.mark.slow),
     *(pytest.param(k, "f16", marks=pytest.mark.slow) for k in ("gemm_nn", "gemm_tt")),
     *(pytest.param(k, "bf16", marks=pytest.mark.slow) for k in ("gemm_nt", "gemm_tn"))],
)  # fmt: skip
def test_the_hopper_body_on_the_cpu_against_float64(kernel: str, t: str, source: Path) -> None:
    run = cutec.jit(source, kernel=kernel, device="cpu", arch="sm_90a", T=t, BN=128,
                    BK=64 if t != "tf32" else 32, BP=3)  # fmt: skip
    _check(run, kernel, t, 136, 200, 130)
    assert "wgmma.mma_async" in run.ptx  # the launch's variant
    assert run.cpu_backend == "native"


def test_the_persistent_hopper_body_on_the_cpu_against_float64(source: Path) -> None:
    """PERSIST = true with 64x64 tiles: the CPU's 4 CTAs loop over 30 tiles in grouped
    order (two groups along M, of 8 tiles and of 2), the mbarrier ring running on across
    them."""
    run = cutec.jit(source, kernel="gemm_tn", device="cpu", arch="sm_90a", BM=64, BN=64,
                    BK=64, BP=2, PERSIST="true")  # fmt: skip
    _check(run, "gemm_tn", "f16", 600, 130, 130)
    assert "wgmma.mma_async" in run.ptx
    assert "setmaxnreg" not in run.ptx  # one consumer warpgroup: no register moves


@pytest.mark.slow
def test_two_wgmma_rows_per_consumer_on_the_cpu_against_float64(source: Path) -> None:
    """BM = 256: each consumer warpgroup takes 128 rows, two 64-row wgmmas (MMA_M = 2)."""
    run = cutec.jit(source, kernel="gemm_nt", device="cpu", arch="sm_90a", BM=256, BN=64,
                    BK=64, BP=2)  # fmt: skip
    _check(run, "gemm_nt", "f16", 264, 72, 130)
    assert "setmaxnreg.inc" in run.ptx


@pytest.fixture(scope="module")
def tma_epilogue_source(source: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same with `epilogue = "tma"`. A store map's rows are whole 16-byte chunks: C's
    leading dimension and M multiples of 4 f32, which a launch's variant knows where its
    sizes are multiples of 8 (M = 136 here; ldC = M)."""
    text = source.read_text().replace(
        "stream_k = STREAM_K)", 'stream_k = STREAM_K, epilogue = "tma")'
    )
    path = tmp_path_factory.mktemp("hopper") / "gemm_auto_tma_epilogue.cute"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("kernel", "defines"),
    [("gemm_nt", {"BN": 32, "BK": 64, "BP": 2, "PERSIST": "true"}),
     pytest.param("gemm_tn", {"BM": 64, "BN": 64, "BK": 64, "BP": 2},
                  marks=pytest.mark.slow)],
)  # fmt: skip
def test_the_tma_epilogue_on_the_cpu_against_float64(
    kernel: str, defines: dict, tma_epilogue_source: Path
) -> None:
    """`epilogue = "tma"`: for beta = 0 (C filled with NaN: not read) the tile goes out in
    chunks of 32 columns through two shared buffers and TMA stores (ragged in M and N: the
    stores skip what lies past C; persistent, 6 tiles of 128x32 on 4 CTAs: the buffers
    reused across tiles by two consumer warpgroups); beta = 0.5 takes the registers'
    epilogue."""
    run = cutec.jit(tma_epilogue_source, kernel=kernel, device="cpu", arch="sm_90a",
                    **defines)  # fmt: skip
    rng = np.random.default_rng(5)
    m, n, k = 136, 72, 64  # small: TMA stores run on the interpreter
    a = _operand(rng, m, k, kernel[-2] == "n", "f16")
    b = _operand(rng, n, k, kernel[-1] == "t", "f16")
    ab = a.astype(np.float64) @ b.astype(np.float64).T
    for beta in (0.0, 0.5):
        c0 = np.asfortranarray(rng.standard_normal((m, n)).astype(np.float32))
        c = c0.copy(order="F") if beta else np.asfortranarray(np.full((m, n), np.nan, np.float32))
        run(a, b, c, 1.5, beta)
        ref = 1.5 * ab + beta * c0
        assert np.linalg.norm(c - ref) / np.linalg.norm(ref) < 1e-6, beta
    assert "cp.async.bulk.tensor.2d.global.shared::cta" in run.ptx
    assert run.cpu_backend is not None and run.cpu_backend.startswith("reference")


@pytest.mark.slow
@pytest.mark.parametrize("tacc", ["f32", "f16"])
def test_the_tma_epilogue_of_an_f16_c_on_the_cpu(tacc: str, source: Path, tmp_path: Path) -> None:
    """An f16 C (f32 or f16 accumulators): the chunk partitioned by an f16-accumulator
    wgmma's C layout, 64x32 boxes of C's 128-byte-swizzled atoms; ragged in N."""
    text = source.read_text().replace(
        "stream_k = STREAM_K)", 'stream_k = STREAM_K, epilogue = "tma")'
    )
    path = tmp_path / "gemm_auto_f16_c.cute"
    path.write_text(text)
    run = cutec.jit(path, kernel="gemm_nt", device="cpu", arch="sm_90a", TC="f16", TACC=tacc,
                    BN=32, BK=64, BP=2)  # fmt: skip
    rng = np.random.default_rng(1)
    a, b = _operand(rng, 136, 64, True, "f16"), _operand(rng, 40, 64, True, "f16")
    c = np.asfortranarray(np.full((136, 40), np.nan, np.float16))
    run(a, b, c, 1.5, 0.0)
    assert "cp.async.bulk.tensor.2d.global.shared::cta" in run.ptx  # M, ldC: 136
    ref = 1.5 * (a.astype(np.float64) @ b.astype(np.float64).T)
    assert np.linalg.norm(c.astype(np.float64) - ref) / np.linalg.norm(ref) < 1e-3


def test_tts_transposed_c_is_written_two_elements_at_a_time(source: Path) -> None:
    """tf32 TT writes Cᵀ (the body's C is C with its modes reordered): where the launch
    gives C's leading dimension and M as multiples of 16 bytes, each thread's pairs of
    accumulators are adjacent in C, and the predicated epilogue moves them 8 bytes at a
    time (a pair lies wholly inside or outside C); an M of 138 gives no such fact, and
    the pairs go one element at a time. Values at a ragged N and K either way."""
    run = cutec.jit(source, kernel="gemm_tt", device="cpu", arch="sm_90a", T="tf32", BN=128,
                    BK=32, BP=2)  # fmt: skip
    _check(run, "gemm_tt", "tf32", 144, 200, 130)
    assert "st.global.v2.f32" in run.ptx
    _check(run, "gemm_tt", "tf32", 138, 200, 130)
    assert "wgmma.mma_async" in run.ptx and "st.global.v2.f32" not in run.ptx
