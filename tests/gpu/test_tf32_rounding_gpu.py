"""tf32 rounding on the GPU: the bits the sm_90a (cvt.rn.tf32.f32) and the sm_80 (integer
rounding) kernels write for tf32(x), and those a TFLOAT32 tensor map's load lands, equal
the rule the CPU backends follow (tests/cpu/test_tf32_rounding.py): nearest even, the 13
low bits zero, a NaN 0x7FFFE000."""

from __future__ import annotations

import numpy as np
import pytest

import cutec.runtime as rt
from tests.cpu.test_tf32_rounding import ROUND, TMA_TF32, expected_bits, samples

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no GPU", allow_module_level=True)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_the_gpu_rounds_as_the_cpu_backends(arch: str) -> None:
    if arch == "sm_90a" and torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a needs compute capability 9.0")
    x = samples(1 << 16)
    kern = rt.jit(ROUND, "round", arch=arch)
    p = torch.from_numpy(x).cuda()
    y, z, w = torch.zeros_like(p), torch.zeros_like(p), torch.zeros_like(p)
    kern(p, p.clone(), y, z, w)
    want = expected_bits(x)
    np.testing.assert_array_equal(y.cpu().numpy().view(np.uint32), want)
    np.testing.assert_array_equal(z.cpu().numpy().view(np.uint32), want)
    np.testing.assert_array_equal(w.cpu().numpy().view(np.uint32), x.view(np.uint32))  # f32(x)


def test_a_tf32_tensor_map_rounds_as_the_cpu_backends() -> None:
    """The TMA unit converts what a TFLOAT32 map loads: the bits in shared memory are
    rounded as tf32(x) rounds (the same NaN too), which the CPU backends' TMA model
    does (cutec/cpu/tma.py, tests/cpu/test_tf32_rounding.py)."""
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("TMA needs compute capability 9.0")
    x = samples(1 << 14)
    k = 16
    m = x.size // k // 4 * 4  # ldA % 4 == 0; the specials are at the end of the samples
    a = torch.from_numpy(x[-m * k :].reshape(k, m)).cuda().t()  # (M, K) M-major
    d = torch.zeros(k, m, device="cuda").t()
    rt.jit(TMA_TF32, "tma_tf32")(a, d)
    got = d.cpu().numpy().view(np.uint32)
    want = expected_bits(a.cpu().numpy())
    same = {
        "nearest even": float(np.mean(got == want)),
        "truncated": float(np.mean(got == (a.cpu().numpy().view(np.uint32) & 0xFFFFE000))),
        "unchanged": float(np.mean(got == a.cpu().numpy().view(np.uint32))),
    }
    np.testing.assert_array_equal(got, want, err_msg=str(same))
