"""On a Hopper (compute capability 9.0): the whole-tensor gemm's warp-specialised TMA +
wgmma body (examples/gemm_auto.cute compiled for sm_90a) against float64, every
majorness of f16, bf16 and tf32 (TN, NN and TT on wgmma, NT on mma.sync), at sizes the tiles
divide and ragged ones
(3000x2000x1003: the maps read zeros past M, N and K; K-major operands are views of rows
padded to 16 bytes, which each launch's variant is told: docs/runtime.md, *Specialisation*).
A kernel's `ptx` is the variant's the last launch ran, so the PTX is checked after the
launches. The bar is the issue's: at most twice cuBLAS's relative Frobenius error for the
same inputs, and 1e-5 for f32 accumulation."""

from __future__ import annotations

from pathlib import Path

import pytest

import cutec.runtime as rt

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
    pytest.skip("the Hopper body needs compute capability 9.0", allow_module_level=True)

EXAMPLE = Path(__file__).parents[2] / "examples" / "gemm_auto.cute"
TILES = {"BN": 256, "BK": 64, "BP": 4}  # the benchmark's
DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16, "tf32": torch.float32}


def _operand(rows: int, k: int, mn_major: bool, t: str, gen: torch.Generator) -> torch.Tensor:
    """(rows, k) on the GPU: MN-major (stride (1, rows)) or K-major with rows padded to a
    multiple of 16 bytes."""
    if mn_major:
        return torch.randn(k, rows, generator=gen, device="cuda").to(DTYPES[t]).t()
    padded = -(-k // 8) * 8  # the example's ld % 8 == 0 (16 bytes for 16-bit types)
    return torch.randn(rows, padded, generator=gen, device="cuda").to(DTYPES[t])[:, :k]


def _normwise(x: torch.Tensor, ref: torch.Tensor) -> float:
    return float(torch.linalg.norm(x.double() - ref) / torch.linalg.norm(ref))


def _check(kern: object, kernel: str, t: str, m: int, n: int, k: int) -> None:
    gen = torch.Generator(device="cuda").manual_seed(m + 3 * n + 7 * k)
    a = _operand(m, k, kernel[-2] == "n", t, gen)
    b = _operand(n, k, kernel[-1] == "t", t, gen)
    ref = a.double() @ b.double().t()
    torch.backends.cuda.matmul.allow_tf32 = t == "tf32"
    try:
        cublas = _normwise(torch.matmul(a, b.t()).float(), ref)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = False
    for beta in (0.0, 0.5):
        c0 = torch.randn(n, m, generator=gen, device="cuda").t()  # (M,N) M-major
        c = c0.clone() if beta else torch.full_like(c0, float("nan"))  # beta = 0: C unread
        kern(a, b, c, 1.0, beta)  # type: ignore[operator]
        want = ref + beta * c0.double()
        assert torch.isfinite(c).all(), (kernel, t, m, n, k, beta)
        err = _normwise(c, want)
        assert err <= max(2 * cublas, 1e-5 if t != "tf32" else 0.0), (err, cublas, m, n, k, beta)


@pytest.mark.parametrize("t", ["f16", "bf16"])
@pytest.mark.parametrize("kernel", ["gemm_nt", "gemm_tn", "gemm_nn", "gemm_tt"])
def test_the_hopper_body_against_float64(kernel: str, t: str) -> None:
    kern = rt.jit(EXAMPLE, kernel, T=t, **TILES)
    for m, n, k in [(3000, 2000, 1003), (4096, 4096, 4096), (200, 136, 72)]:
        _check(kern, kernel, t, m, n, k)
        assert "wgmma.mma_async" in kern.ptx and "setmaxnreg.inc" in kern.ptx


@pytest.mark.parametrize("kernel", ["gemm_tn", "gemm_nn", "gemm_tt"])
def test_tf32_runs_on_wgmma_against_float64(kernel: str) -> None:
    """tf32 with a K-major operand runs on wgmma: TN reads both by descriptor; NN's M-major
    A and TT's N-major B (TT computes Cᵀ = B·Aᵀ) are loaded into registers (RS wgmma).
    The TFLOAT32 tensor maps round the operands to nearest."""
    kern = rt.jit(EXAMPLE, kernel, T="tf32", BN=256, BP=4)
    for m, n, k in [(3000, 2000, 1003), (2048, 2048, 2048), (200, 136, 72)]:
        _check(kern, kernel, "tf32", m, n, k)
        assert "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32" in kern.ptx
        assert "mma.sync" not in kern.ptx


def test_tf32_nt_on_mma_sync_rounds_its_operands_against_float64() -> None:
    """tf32 NT keeps the mma.sync body (wgmma reads tf32 K-major only, and neither operand
    is); its operands are rounded to nearest on the way to the MMA (cvt.rn.tf32.f32),
    which truncated them before: 7.8e-4 against cuBLAS's 2.9e-4 at 4096^3."""
    kern = rt.jit(EXAMPLE, "gemm_nt", T="tf32", BN=256)
    for m, n, k in [(3000, 2000, 1003), (2048, 2048, 2048)]:
        _check(kern, "gemm_nt", "tf32", m, n, k)
        assert "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" in kern.ptx
        assert "cvt.rn.tf32.f32" in kern.ptx


@pytest.mark.parametrize("kernel", ["gemm_nt", "gemm_tn"])
def test_the_persistent_hopper_body_against_float64(kernel: str) -> None:
    """PERSIST = true: one wave of CTAs, each looping over tiles with the ring running on
    across them (the producer loads the next tile during this one's epilogue)."""
    kern = rt.jit(EXAMPLE, kernel, PERSIST="true", **TILES)
    for m, n, k in [(3000, 2000, 1003), (4096, 4096, 1024)]:
        _check(kern, kernel, "f16", m, n, k)
        assert "wgmma.mma_async" in kern.ptx


def test_operands_below_4_bytes_against_float64() -> None:
    """gemm_auto fed K-major f16 operands of odd leading dimension (1003): no tensor map
    and no cp.async fits, so the launch's variant is the mma.sync body copying them an
    element at a time through registers with an unpipelined k-loop."""
    kern = rt.jit(EXAMPLE, "gemm_tn", BK=16)
    gen = torch.Generator(device="cuda").manual_seed(11)
    m, n, k = 300, 200, 1003
    a = torch.randn(m, k, generator=gen, device="cuda").half()  # ld = 1003: odd
    b = torch.randn(n, k, generator=gen, device="cuda").half()
    ref = a.double() @ b.double().t()
    cublas = _normwise(torch.matmul(a, b.t()).float(), ref)
    c = torch.full((n, m), float("nan"), device="cuda").t()
    kern(a, b, c, 1.0, 0.0)
    assert "wgmma" not in kern.ptx and "cp.async.cg" not in kern.ptx
    assert torch.isfinite(c).all()
    assert _normwise(c, ref) <= max(2 * cublas, 1e-5)
