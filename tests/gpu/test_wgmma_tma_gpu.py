"""CuTe's TMA + wgmma tutorial (examples/wgmma_tma_sm90.cute) and the TMA tile kernels
(tests/cpu/data/tma_tile.cute) on an sm_90 GPU, against float64.

The tutorial's error bar is test_wgmma_gpu's: at most the larger of twice cuBLAS's
normwise error on the same inputs and the f16-accumulation tolerance. Its tensor maps
cover the whole operands, so ragged sizes run wherever the map's strides are
multiples of 16 bytes (NT: the extents M and N; TN: the leading dimensions, so K = 1003
takes rows padded to 1008), and a launch whose stride is not is refused, naming the
argument. The tile kernels move f16 exactly.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import cutec.runtime as rt
from tests.cpu.test_tma_language import STORE, batched_operands, store_operands, view_operands
from tests.gpu.test_wgmma_gpu import F16_ACC_TOLERANCE, _normwise, _operands

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)
if torch.cuda.get_device_capability() != (9, 0):
    pytest.skip("wgmma and TMA need compute capability 9.0", allow_module_level=True)

ROOT = Path(__file__).parents[2]
TUTORIAL = ROOT / "examples" / "wgmma_tma_sm90.cute"
TILE = ROOT / "tests" / "cpu" / "data" / "tma_tile.cute"

SIZES = {
    "hgemm_nt": [(128, 128, 64), (256, 384, 192), (1024, 512, 1024), (200, 136, 72),
                 (72, 200, 1003), (3000, 2000, 1003), (4096, 4096, 4096), (8192, 8192, 8192)],
    "hgemm_tn": [(128, 128, 64), (256, 384, 192), (1024, 512, 1024), (200, 136, 72),
                 (72, 200, 1003), (3000, 2000, 1003), (4096, 4096, 4096), (8192, 8192, 8192)],
}  # fmt: skip
LAYOUT = {"hgemm_nt": "NT", "hgemm_tn": "TN"}


@pytest.mark.parametrize(
    ("kernel", "m", "n", "k"), [(kern, *size) for kern, sizes in SIZES.items() for size in sizes]
)
def test_wgmma_tma_sm90_against_float64(kernel: str, m: int, n: int, k: int) -> None:
    kern = rt.jit(TUTORIAL, kernel=kernel)
    gen = torch.Generator(device="cuda").manual_seed(m + 3 * n + 7 * k)
    a, b = _operands(LAYOUT[kernel], m, n, k, gen)
    if kernel == "hgemm_tn" and k % 8:  # K-major rows padded to 16 bytes
        a, b = (_padded_rows(x) for x in (a, b))
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


def _padded_rows(x: torch.Tensor) -> torch.Tensor:
    """`x` (rows, k), row-major, as a view of rows padded to a multiple of 8 elements."""
    rows, k = x.shape
    padded = torch.zeros(rows, -(-k // 8) * 8, dtype=x.dtype, device=x.device)
    padded[:, :k] = x
    return padded[:, :k]


def test_a_map_stride_that_is_not_16_bytes_is_refused_naming_the_argument() -> None:
    kern = rt.jit(TUTORIAL, kernel="hgemm_tn")
    gen = torch.Generator(device="cuda").manual_seed(1)
    a, b = _operands("TN", 128, 128, 1003, gen)
    c = torch.zeros(128, 128, device="cuda").half().t()
    with pytest.raises(Exception, match="ldA"):
        kern(a, b, c, 1.0, 0.0)


@pytest.mark.parametrize(("kernel", "k_major"), [("tile_k_sw128", True), ("tile_mn_sw128", False),
                                                ("tile_plain", False)])  # fmt: skip
@pytest.mark.parametrize(("m", "k"), [(128, 64), (200, 72), (1000, 520)])
def test_tma_tiles_land_exactly(kernel: str, k_major: bool, m: int, k: int) -> None:
    gen = torch.Generator(device="cuda").manual_seed(m * k)
    a = torch.randn(m, k, generator=gen, device="cuda").half()
    if not k_major:
        a = a.t().contiguous().t()
    d = torch.zeros_like(a)
    rt.jit(TILE, kernel=kernel)(a, d)
    torch.cuda.synchronize()
    assert torch.equal(a, d)


def test_tma_slices_of_a_batched_tensor_and_make_tensor_views_land_exactly() -> None:
    a, _ = batched_operands(200, 72, 3)
    storage = torch.from_numpy(np.array(a.base)).cuda()  # the padded buffer, -1 in the pads
    dev_a = storage.as_strided(a.shape, tuple(x // a.itemsize for x in a.strides))
    dev_d = torch.zeros(3, 200, 72, dtype=torch.float16, device="cuda").permute(1, 2, 0)
    rt.jit(TILE, kernel="tile_batched")(dev_a, dev_d)
    torch.cuda.synchronize()
    assert torch.equal(dev_d.cpu(), torch.from_numpy(np.array(a)))
    flat, mat, _, ld = view_operands(1000, 72)
    dev_d = torch.zeros(72, 1000, dtype=torch.float16, device="cuda").t()
    rt.jit(TILE, kernel="tile_view")(torch.from_numpy(flat).cuda(), 1000, 72, ld, dev_d)
    torch.cuda.synchronize()
    assert torch.equal(dev_d.cpu(), torch.from_numpy(np.ascontiguousarray(mat)))


@pytest.mark.parametrize(("m", "n"), [(128, 16), (200, 72), (1000, 520)])
def test_tma_stores_write_the_tile_and_nothing_past_it(m: int, n: int) -> None:
    a, storage, _, want = store_operands(m, n)
    dev = torch.from_numpy(storage).cuda()
    dev_a = torch.from_numpy(np.ascontiguousarray(a.T)).cuda().t()  # (M, N) m-major
    rt.jit(STORE, kernel="store_tile")(dev_a, dev.t()[:m])
    torch.cuda.synchronize()
    np.testing.assert_array_equal(dev.cpu().numpy(), want)


@pytest.mark.parametrize(("m", "n", "k"), [(128, 256, 64), (200, 300, 72), (3000, 2000, 1003),
                                           (4096, 4096, 4096)])  # fmt: skip
def test_the_warp_specialised_example_against_float64(m: int, n: int, k: int) -> None:
    kern = rt.jit(ROOT / "examples" / "gemm_ws_sm90.cute", kernel="gemm_ws_tn")
    gen = torch.Generator(device="cuda").manual_seed(m + n + k)
    a, b = (_padded_rows(torch.randn(r, k, generator=gen, device="cuda").half()) for r in (m, n))
    c0 = torch.randn(n, m, generator=gen, device="cuda").t()  # (M,N) f32, m-major
    c = c0.clone()
    kern(a, b, c, 1.0, 0.5)
    torch.cuda.synchronize()
    ref = a.double() @ b.double().t() + 0.5 * c0.double()
    cublas = (a.float() @ b.float().t()).double() + 0.5 * c0.double()
    # (benchmarks/gemm_impls.py's bar for f32 output: 1e-5; cuBLAS's f16 x f16 -> f32 measures 5e-6)
    assert _normwise(c, ref) <= max(2 * _normwise(cublas, ref), 1e-5), (m, n, k)
