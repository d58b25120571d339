"""On a GPU, map_shared_rank gives the CPU's answers (tests/cpu/test_dsmem.py): each CTA
of a cluster of 2 or 4 reads the next rank's tile through mapa and ld.shared::cluster
and stores into its inbox with st.shared::cluster; the values say which CTA wrote them."""

from __future__ import annotations

import numpy as np
import pytest

import cutec.runtime as rt
from cutec.cpu import reference
from cutec.driver import Options, Source, Stage, compile
from cutec.ir.dialects.builtin import KernelOp
from tests.cpu.test_dsmem import _args, neighbours_text

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)
if torch.cuda.get_device_capability() != (9, 0):
    pytest.skip("clusters here are sm_90a code: compute capability 9.0", allow_module_level=True)


@pytest.mark.parametrize("c", [2, 4])
def test_neighbours_exchange_tiles_through_map_shared_rank(c: int) -> None:
    text, n = neighbours_text(c), 64 * 2 * c
    module = compile(Source(text, "n.cute"), Stage.THREAD, Options(target="sm_90a")).module
    want = _args(n)
    reference.run_kernel(next(iter(module.walk_type(KernelOp))), 2 * c, want)
    x = torch.from_numpy(want["x"]).cuda()
    got, inbox = torch.zeros(n, device="cuda"), torch.zeros(n, device="cuda")
    rt.jit(text, arch="sm_90a")(x, got, inbox)
    torch.cuda.synchronize()
    assert np.array_equal(got.cpu().numpy(), want["got"])
    assert np.array_equal(inbox.cpu().numpy(), want["inbox_out"])
