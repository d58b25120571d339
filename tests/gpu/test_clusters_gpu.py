"""On a GPU, clusters give the CPU's answers (tests/cpu/test_clusters.py): each CTA reads,
after cluster_sync(), the global values that the CTA of the next rank in its cluster
stored before it (clusters of 2x1, 1x2 and 4x1 CTAs); block_rank_in_cluster() on a grid
the launcher rounds up to whole clusters."""

from __future__ import annotations

import numpy as np
import pytest

import cutec.runtime as rt
from tests.cpu.test_clusters import RANKS, SHAPES, exchange_text, partners

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)
if torch.cuda.get_device_capability() != (9, 0):
    pytest.skip("clusters here are sm_90a code: compute capability 9.0", allow_module_level=True)


@pytest.mark.parametrize("shape", SHAPES, ids=["2x1", "1x2", "4x1"])
def test_a_cluster_barrier_orders_one_ctas_stores_before_anothers_loads(
    shape: tuple[int, int],
) -> None:
    text, grid = exchange_text(*shape)
    n = 64 * grid[0] * grid[1]
    x = torch.full((n,), -1.0, device="cuda")
    out = torch.zeros(n, device="cuda")
    rt.jit(text, arch="sm_90a")(x, out)
    torch.cuda.synchronize()
    assert np.array_equal(out.cpu().numpy(), partners(*shape, grid))


def test_the_launcher_rounds_the_grid_up_to_whole_clusters() -> None:
    out = torch.full((4,), -1, dtype=torch.int32, device="cuda")
    rt.jit(RANKS, arch="sm_90a")(out)
    torch.cuda.synchronize()
    assert out.cpu().tolist() == [0, 1, 0, 1]
