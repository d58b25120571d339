"""On a GPU, the .cute mbarrier pipeline (tests/cpu/data/mbarrier_handoff.cute: a producer
warp stores tiles into two stages of shared memory and arrives, consumer warps wait on
the phase parity and read; the sums handed back through a named barrier) gives the CPU
interpreter's answer: on sm_90a with a cluster of one CTA and cluster_sync() after the
inits, and as sm_80 code (test_wait loops, sync()) on the same GPU."""

from __future__ import annotations

import numpy as np
import pytest

import cutec.runtime as rt
from cutec.cpu import reference
from tests.cpu.test_barriers import _kernel, handoff_inputs, handoff_text

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)


@pytest.mark.parametrize(("arch", "cluster"), [("sm_90a", True), ("sm_80", False)])
@pytest.mark.parametrize("nt", [1, 2, 7, 64])
def test_the_cute_mbarrier_pipeline_matches_the_cpu(arch: str, cluster: bool, nt: int) -> None:
    if arch == "sm_90a" and torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a code runs on compute capability 9.0 only")
    x, want = handoff_inputs(nt)
    k = rt.jit(handoff_text(cluster), arch=arch)
    out = torch.full((64,), float("nan"), device="cuda")
    k(torch.from_numpy(x).cuda(), out)
    torch.cuda.synchronize()
    y = out.cpu().numpy()
    cpu = np.full(64, np.nan, np.float32)
    kernel = _kernel(handoff_text(cluster), "handoff.cute", arch)
    reference.run_kernel(kernel, 1, {"x": x, "y": cpu, "N": x.size})
    # Each consumer adds its tiles in order, as the CPU does (a mul and an add ptxas
    # may fuse: compared normwise, not bit for bit, against the float64 sums too).
    assert np.linalg.norm(y - cpu) <= 1e-6 * np.linalg.norm(cpu)
    assert np.linalg.norm(y - want) / np.linalg.norm(want) < 1e-6
