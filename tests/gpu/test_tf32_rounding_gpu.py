"""tf32(x) on the GPU: the bits the sm_90a (cvt.rn.tf32.f32) and the sm_80 (integer
rounding) kernels write equal the rule the CPU backends follow (tests/cpu/
test_tf32_rounding.py): nearest even, the 13 low bits zero, a NaN 0x7FFFFFFF."""

from __future__ import annotations

import numpy as np
import pytest

import cutec.runtime as rt
from tests.cpu.test_tf32_rounding import ROUND, expected_bits, samples

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
    y, z = torch.zeros_like(p), torch.zeros_like(p)
    kern(p, p.clone(), y, z)
    want = expected_bits(x)
    np.testing.assert_array_equal(y.cpu().numpy().view(np.uint32), want)
    np.testing.assert_array_equal(z.cpu().numpy().view(np.uint32), want)
