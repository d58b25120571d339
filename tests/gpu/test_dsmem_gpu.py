"""On a GPU, map_shared_rank gives the CPU's answers (tests/cpu/test_dsmem.py): each CTA
of a cluster of 2 or 4 reads the next rank's tile through mapa and ld.shared::cluster
and stores into its inbox with st.shared::cluster, and copies the other CTA's tile 16
bytes a thread (ld.shared::cluster.v4); the values say which CTA wrote them."""

from __future__ import annotations

import numpy as np
import pytest

import cutec.runtime as rt
from cutec.cpu import reference
from cutec.driver import Options, Source, Stage, compile
from cutec.ir.dialects.builtin import KernelOp
from tests.cpu.test_dsmem import VECTORS, _args, neighbours_text

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


def test_a_copy_reads_another_ctas_tile_16_bytes_a_thread() -> None:
    module = compile(Source(VECTORS, "v.cute"), Stage.THREAD, Options(target="sm_90a")).module
    want = np.zeros(256, np.float32)
    reference.run_kernel(next(iter(module.walk_type(KernelOp))), 4, {"out": want})
    out = torch.zeros(256, device="cuda")
    rt.jit(VECTORS, arch="sm_90a")(out)
    torch.cuda.synchronize()
    assert np.array_equal(out.cpu().numpy(), want)
