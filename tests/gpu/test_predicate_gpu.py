"""Views the predicate pass once left unguarded, on the GPU: tiles of slices of rank-3
tensors (examples/batched_gemm.cute; at 130x75x41x3 its unguarded PTX gave a relative
error of 7e18), checked against float64 with C poisoned around the output."""

from __future__ import annotations

from pathlib import Path

import pytest

import cutec.runtime as rt

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

EXAMPLES = Path(__file__).parents[2] / "examples"


def _mkl(m: int, k: int, batch: int) -> torch.Tensor:
    """An (m, k, batch) tensor, m-major within a batch, of random values (never zeros)."""
    return torch.randn(batch, k, m, device="cuda").permute(2, 1, 0)


SIZES = [(130, 75, 41, 3), (64, 64, 32, 2), (1, 1, 1, 1)]


@pytest.mark.parametrize(("m", "n", "k", "batch"), SIZES)
def test_batched_gemm_of_slices_matches_float64(m: int, n: int, k: int, batch: int) -> None:
    kern = rt.jit(EXAMPLES / "batched_gemm.cute")
    a, b = _mkl(m, k, batch), _mkl(n, k, batch)
    # C inside a larger buffer of NaN: a write past it would show
    whole = torch.full((batch, n + 3, m + 5), float("nan"), device="cuda")
    whole[:, :n, :m] = torch.randn(batch, n, m, device="cuda")
    c = whole.permute(2, 1, 0)[:m, :n, :]
    want = 1.5 * torch.einsum("mkl,nkl->mnl", a.double(), b.double()) - 0.5 * c.double()
    kern(a, b, c, 1.5, -0.5)
    torch.cuda.synchronize()
    err = (c.double() - want).norm() / want.norm()
    assert err < 1e-5
    assert torch.isnan(whole[:, n:, :]).all() and torch.isnan(whole[:, :, m:]).all()
