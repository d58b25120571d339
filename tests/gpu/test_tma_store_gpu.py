"""On a Hopper GPU: cutec's PTX of tests/ptx/data/tma_store.mlir (threads stage a tile
with st.shared and fence.proxy.async, one thread stores it with cp.async.bulk.tensor,
commits and waits with cp.async.bulk.wait_group.read), launched through cutec.jit with
its launch record and the tensor map the runtime builds, writes each box's in-bounds
elements and nothing else, as the CPU interpreter does (tests/cpu/test_tma_store.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cutec.driver import Source
from cutec.ir.signature import KernelLaunch
from cutec.runtime import cache
from cutec.runtime.jit import Kernel
from tests.cpu.test_tma_store import operands
from tests.ptx.test_tma_store_ptx import TMA_STORE, TMA_STORE_MLIR

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)
if torch.cuda.get_device_capability() != (9, 0):
    pytest.skip("the kernel is sm_90a: compute capability 9.0 only", allow_module_level=True)


def _kernel(device: str | int, text: str | None) -> Kernel:
    source = (Source.from_file(TMA_STORE_MLIR) if text is None
              else Source.from_file("tma_store.mlir", text))  # fmt: skip
    k = Kernel(source, "tma_store", {}, "sm_90a", device, True)
    cache.store(k._key("signature", "sm_90a"), cache.Entry(KernelLaunch(*TMA_STORE).to_json(), {}))
    return k


@pytest.mark.parametrize("wait", ["read", "plain"])
@pytest.mark.parametrize("m, n", [(40, 20), (32, 32), (20, 9), (100, 36)])
def test_a_tma_store_writes_the_boxes_the_cpu_writes(
    m: int, n: int, wait: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUTEC_CACHE_DIR", str(tmp_path))
    text = None
    if wait == "plain":
        text = TMA_STORE_MLIR.read_text().replace(", read}", "}")
    s, storage, want = operands(m, n, seed=m + n)
    on_cpu = storage.copy()
    _kernel("cpu", text)(s, on_cpu.T[:m])
    np.testing.assert_array_equal(on_cpu, want)
    gpu = _kernel(0, text)
    for _ in range(2):  # the second launch finds its map in the cache
        d = torch.from_numpy(storage).cuda()
        gpu(torch.from_numpy(s).cuda(), d.t()[:m])
        torch.cuda.synchronize()
        np.testing.assert_array_equal(d.cpu().numpy(), on_cpu)
