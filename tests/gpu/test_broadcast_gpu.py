"""A broadcast operand (a stride-0 mode) on the GPU: a bias row over M added to a
ragged D, the partial tiles predicated like any other (tests/runtime/test_broadcast_cpu.py
runs the same kernel on the CPU)."""

from __future__ import annotations

import pytest

import cutec.runtime as rt

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

from tests.runtime.test_broadcast_cpu import BIAS  # noqa: E402  (after the skip)


@pytest.mark.parametrize(("m", "n"), [(70, 13), (64, 16), (1, 1)])
def test_a_bias_row_broadcast_over_m(m: int, n: int) -> None:
    k = rt.jit(BIAS)
    d = torch.randn(n, m, device="cuda").t()  # (M, N) column-major
    row = torch.randn(n, device="cuda")
    bias = row.expand(m, n)  # strides (0, 1)
    want = d.double() + row.double()
    for _ in range(2):  # the second call goes through the C launcher
        out = d.clone()
        k(out, bias)
        torch.cuda.synchronize()
        assert torch.allclose(out.double(), want, rtol=1e-6, atol=1e-6)
