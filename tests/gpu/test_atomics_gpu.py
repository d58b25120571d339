"""On a GPU: the atomics of tests/cpu/test_atomics.py. Every thread takes one ticket of a
counter (the olds are a permutation of 0..n-1, in some order the hardware chooses),
max/min and small-integer float sums equal numpy's, and the flag handoff between two
CTAs (CTA 0 writes data, fences, releases a flag; CTA 1 spins on it with acquire loads)
delivers the data: the pattern a stream-K GEMM's fix-up uses."""

from __future__ import annotations

import numpy as np
import pytest

import cutec.runtime as rt
from tests.cpu.test_atomics import COUNTER, EXTREMES, HANDOFF, SUMS

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)


def _cuda(a: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(a).cuda()


@pytest.mark.parametrize("n", [1, 300, 100_000])
def test_every_thread_takes_one_ticket(n: int) -> None:
    k = rt.jit(COUNTER)
    counter = torch.zeros(1, dtype=torch.int32, device="cuda")
    out = torch.full((n,), -1, dtype=torch.int32, device="cuda")
    k(counter, out)
    assert int(counter.item()) == n
    assert np.array_equal(np.sort(out.cpu().numpy()), np.arange(n))


def test_max_min_and_sums() -> None:
    rng = np.random.default_rng(0)
    n = 5000
    x = rng.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32)
    y = rng.integers(-(2**62), 2**62, n, dtype=np.int64)
    hi, lo = _cuda(np.full(1, -(2**31), np.int32)), _cuda(np.full(1, 2**31 - 1, np.int32))
    hi64 = _cuda(np.full(1, np.iinfo(np.int64).min))
    lo64 = _cuda(np.full(1, np.iinfo(np.int64).max))
    rt.jit(EXTREMES)(_cuda(x), _cuda(y), hi, lo, hi64, lo64, grid=(-(-n // 64), 1, 1))
    assert (hi.item(), lo.item(), hi64.item(), lo64.item()) == (x.max(), x.min(), y.max(), y.min())
    b = 7
    f = rng.integers(-50, 50, n).astype(np.float32)
    bins, total = torch.zeros(b, device="cuda"), _cuda(np.full(1, 0.5))
    seen = torch.full((n,), -7, dtype=torch.int32, device="cuda")
    slot = torch.full((1,), -1, dtype=torch.int32, device="cuda")
    rt.jit(SUMS)(_cuda(f), bins, total, seen, slot, grid=(-(-n // 96), 1, 1))
    want = np.zeros(b, np.float32)
    np.add.at(want, np.arange(n) % b, f)
    assert np.array_equal(bins.cpu().numpy(), want)
    assert total.item() == 0.5 + f.astype(np.float64).sum()
    values = np.sort(np.append(seen.cpu().numpy(), slot.cpu().numpy()))
    assert np.array_equal(values, np.arange(-1, n))


@pytest.mark.parametrize("repeat", range(20))
def test_the_flag_handoff_between_two_ctas(repeat: int) -> None:
    n = 64
    data = torch.zeros(n, device="cuda")
    flag = torch.zeros(1, dtype=torch.int32, device="cuda")
    out = torch.full((n,), float("nan"), device="cuda")
    rt.jit(HANDOFF)(data, flag, out, grid=(2, 1, 1))
    torch.cuda.synchronize()
    assert np.array_equal(out.cpu().numpy(), 2 * np.arange(n, dtype=np.float32) + 1)
