"""On a GPU, the producer/consumer mbarrier pipeline (tests/cpu/data/mbarrier_pipeline.mlir)
gives the CPU backends' answer, bit for bit (each consumer adds its tiles in order)."""

from __future__ import annotations

import numpy as np
import pytest

import cutec.runtime as rt
from cutec.cpu import native
from tests.cpu.test_mbarrier import _inputs, _pipeline, pipeline_text

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)


@pytest.mark.parametrize("nt", [1, 2, 7, 64])
def test_the_mbarrier_pipeline_equals_the_cpu_bit_for_bit(nt: int) -> None:
    x, want = _inputs(nt)
    k = rt.jit(pipeline_text())
    out = torch.full((64,), float("nan"), device="cuda")
    k(torch.from_numpy(x).cuda(), out, nt)
    y = out.cpu().numpy()
    cpu = np.full(64, np.nan, np.float32)
    native.run_kernel(_pipeline(), 1, [x, cpu, nt])
    assert y.tobytes() == cpu.tobytes()
    # Sums of up to 64 f32 tiles: normwise against the float64 sums (elementwise
    # relative error is large where a sum cancels).
    assert np.linalg.norm(y - want) / np.linalg.norm(want) < 1e-6
