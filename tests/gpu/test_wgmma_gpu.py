"""The Hopper tutorials on an sm_90 GPU: wgmma (SS) through descriptors, against float64.

Each kernel's normwise error is compared with cuBLAS's on the same inputs and
output dtype (the issue's bar: at most twice cuBLAS's). CuTe's wgmma tutorials
accumulate in f16; torch's f16 matmul accumulates in f32, so the bar used here
is the larger of twice cuBLAS's error and the f16-accumulation tolerance of
benchmarks/gemm_impls.py (1e-2).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import cutec
import cutec.runtime as rt
from tests.ptx.test_wgmma_ptx import BITS, CASES, TWO_WARPGROUPS, kernel_source, rs_source

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)
if torch.cuda.get_device_capability() != (9, 0):
    pytest.skip("wgmma needs compute capability 9.0", allow_module_level=True)

EXAMPLES = Path(__file__).parents[2] / "examples"


F16_ACC_TOLERANCE = 1e-2


def _normwise(out: torch.Tensor, ref: torch.Tensor) -> float:
    out64, ref64 = out.double(), ref.double()
    return float(torch.linalg.norm(out64 - ref64) / torch.linalg.norm(ref64))


def _operands(layout: str, m: int, n: int, k: int, gen: torch.Generator):
    """A (M,K) and B (N,K) for BLAS's C = op(A) · op(B) named by `layout` (CuTe's
    tutorials): NT has both MN-major, TN both K-major."""

    def make(rows: int, mn_major: bool) -> torch.Tensor:
        if mn_major:
            return torch.randn(k, rows, generator=gen, device="cuda").half().t()
        return torch.randn(rows, k, generator=gen, device="cuda").half()

    return make(m, layout[0] == "N"), make(n, layout[1] == "T")


@pytest.mark.parametrize(("kernel", "layout"), [("hgemm_nt", "NT"), ("hgemm_tn", "TN")])
@pytest.mark.parametrize(("m", "n", "k"), [(128, 128, 64), (256, 384, 192), (1024, 512, 1024)])
def test_wgmma_sm90_against_float64(kernel: str, layout: str, m: int, n: int, k: int) -> None:
    kern = rt.jit(EXAMPLES / "wgmma_sm90.cute", kernel=kernel)
    gen = torch.Generator(device="cuda").manual_seed(m + 3 * n + 7 * k)
    a, b = _operands(layout, m, n, k, gen)
    for beta in (0.0, 0.5):
        c0 = torch.randn(n, m, generator=gen, device="cuda").half().t()  # (M,N) m-major
        c = c0.clone() if beta else torch.full_like(c0, float("nan"))
        kern(a, b, c, 1.0, beta)
        torch.cuda.synchronize()
        ref = a.double() @ b.double().t() + (beta * c0.double() if beta else 0)
        cublas = (a @ b.t()).double() + (beta * c0.double() if beta else 0)
        bar = max(2 * _normwise(cublas.half(), ref), F16_ACC_TOLERANCE)
        assert torch.isfinite(c).all()
        assert _normwise(c, ref) <= bar, (kernel, m, n, k, beta)


def test_wgmma_sm90_refuses_sizes_its_tiles_do_not_divide() -> None:
    kern = rt.jit(EXAMPLES / "wgmma_sm90.cute", kernel="hgemm_tn")
    gen = torch.Generator(device="cuda").manual_seed(1)
    a, b = _operands("TN", 200, 128, 64, gen)
    c = torch.zeros(128, 200, device="cuda").half().t()
    with pytest.raises(cutec.ArgumentError, match="M"):
        kern(a, b, c, 1.0, 0.0)


# Every element type, major and swizzle of tests/ptx/test_wgmma_ptx.py, run: a wrong
# descriptor field reads the wrong elements.
def _tile_case(source: str, t: str, d: str, n: int, a_major: str, b_major: str) -> None:
    k = int(source.split("A: ")[1].split("[64, ")[1].split("]")[0])
    torch_t = {"f16": torch.float16, "bf16": torch.bfloat16, "tf32": torch.float32,
               "e4m3": torch.float8_e4m3fn}[t]  # fmt: skip
    gen = torch.Generator(device="cuda").manual_seed(n + k)

    def operand(rows: int, major: str) -> torch.Tensor:
        x = torch.randint(-3, 4, (rows, k), generator=gen, device="cuda").float()
        if major == "MN":
            return x.t().contiguous().to(torch_t).t()
        return x.to(torch_t)

    a, b = operand(64, a_major), operand(n, b_major)
    c = torch.zeros(n, 64, device="cuda", dtype=torch.float32 if d == "f32" else torch.float16).t()
    rt.jit(source, kernel="wg")(a, b, c)
    torch.cuda.synchronize()
    ref = a.double() @ b.double().t()  # small integers: every sum exact in f16 and f32
    assert BITS[t] in (8, 16, 32)
    assert torch.equal(c.double(), ref), (t, d, n, a_major, b_major)


@pytest.mark.parametrize(("t", "d", "n", "a_major", "b_major", "swizzle"), CASES)
def test_wgmma_tile_against_float64(
    t: str, d: str, n: int, a_major: str, b_major: str, swizzle: str
) -> None:
    _tile_case(kernel_source(t, d, n, a_major, b_major, swizzle), t, d, n, a_major, b_major)


@pytest.mark.parametrize(("t", "n"), [("f16", 64), ("bf16", 128)])
def test_rs_wgmma_tile_against_float64(t: str, n: int) -> None:
    _tile_case(rs_source(t, "f32", n), t, "f32", n, "K", "K")


def test_two_warpgroups_against_float64() -> None:
    gen = torch.Generator(device="cuda").manual_seed(5)
    a = torch.randint(-3, 4, (128, 64), generator=gen, device="cuda").half()
    b = torch.randint(-3, 4, (64, 64), generator=gen, device="cuda").half()
    c = torch.zeros(64, 128, device="cuda").t()
    rt.jit(TWO_WARPGROUPS, kernel="wg")(a, b, c)
    torch.cuda.synchronize()
    assert torch.equal(c.double(), a.double() @ b.double().t())


def test_wgmma_reads_tf32_operands_truncated() -> None:
    """wgmma reads a tf32 operand's f32 bits without their low 13 mantissa bits, as
    mma.sync does (tests/atoms/gpu/test_mma_gpu.py) and cutec/cpu/wgmma.py models:
    fractional A against an identity B gives A truncated."""
    k = 32  # tf32 SW128: 128 bytes of K
    gen = torch.Generator(device="cuda").manual_seed(7)
    a = torch.randn(64, k, generator=gen, device="cuda")
    b = torch.zeros(64, k, device="cuda")
    b[:k, :k] = torch.eye(k, device="cuda")  # (N, K): B[n, k] = (n == k)
    c = torch.zeros(64, 64, device="cuda").t()
    rt.jit(kernel_source("tf32", "f32", 64, "K", "K", "SW128"), kernel="wg")(a, b, c)
    torch.cuda.synchronize()
    bits = a.cpu().view(torch.int32)
    truncated = (bits & ~0x1FFF).view(torch.float32)
    assert not torch.equal(truncated, a.cpu())  # the inputs do have low bits
    assert torch.equal(c[:, :k].cpu(), truncated)
