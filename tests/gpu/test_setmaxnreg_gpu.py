"""On a Hopper GPU: a kernel whose producer warpgroup gives registers back
(warpgroup_reg_dealloc) and whose two consumer warpgroups take them
(warpgroup_reg_alloc) runs to its end with each role's values (a setmaxnreg the pool
could not serve would hang it)."""

from __future__ import annotations

import pytest

import cutec.runtime as rt
from tests.ptx.test_setmaxnreg import DEFAULTS, ROLES

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)
if torch.cuda.get_device_capability() != (9, 0):
    pytest.skip("setmaxnreg is sm_90a: compute capability 9.0 only", allow_module_level=True)


def test_roles_run_with_their_registers() -> None:
    out = torch.zeros(384, dtype=torch.float32, device="cuda")
    rt.jit(ROLES.format(**DEFAULTS), kernel="roles")(out)
    torch.cuda.synchronize()
    assert out.tolist() == [1.0] * 128 + [2.0] * 256
