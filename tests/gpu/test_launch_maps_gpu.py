"""On a Hopper GPU: a kernel taking a TMA tensor map by value (`.param .align 64 .b8
[128]`) loads the right box through the map the launch builds, and a kernel with
`.reqnctapercluster 2, 1, 1` launches in clusters on a grid rounded up to whole clusters;
each through the Python launch function and the C launcher (tests/runtime/launch_ptx.py
has the kernels; test_launch_maps.py assembles them without a GPU)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import cutec.runtime as rt
from cutec.ir.signature import KernelSignature, LaunchInfo
from cutec.runtime import cuda, launcher
from cutec.runtime.jit import _stream_of
from cutec.runtime.tensor_map import TensorMapCache
from tests.ptx.test_tma_ptx import tma_tile_ptx
from tests.runtime.launch_ptx import CLUSTER_IDS, CLUSTER_IDS_PTX, TMA_TILE, TMA_TILE_PTX

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)
if torch.cuda.get_device_capability() != (9, 0):
    pytest.skip("the kernels are sm_90a: compute capability 9.0 only", allow_module_level=True)


def _launchers(record: tuple[KernelSignature, LaunchInfo], ptx: str,
               maps: TensorMapCache | None = None) -> list[Any]:  # fmt: skip
    """The Python launch function and the C launcher of a hand-written kernel."""
    signature, launch = record
    fn = cuda.load_function(cuda.device(0), ptx.encode(), signature.kernel, ptx=True)
    variant = launcher.Variant(fn, 0, fn.handle, int(fn.handle))
    launch_fn, _ = launcher.build_launcher(
        signature, launch.block, launch.grid, 32, frozenset(), lambda key, dev: variant, None,
        _stream_of, cluster=launch.cluster, maps=maps,
    )  # fmt: skip
    kernel = SimpleNamespace(name=signature.kernel)
    out = [lambda *args: launch_fn(kernel, *args)]
    fast = launcher.fast_call(kernel, launch_fn)
    if fast is not None:
        out.append(fast)
    return out


@pytest.mark.parametrize("source", ["hand-written", "cutec"])
@pytest.mark.parametrize("m, n", [(40, 20), (64, 32), (17, 9)])
def test_a_tma_load_through_the_launchs_map_gives_the_box(m: int, n: int, source: str) -> None:
    """The hand-written kernel, and cutec's PTX of the same kernel at thread level
    (tests/ptx/data/tma_tile.mlir: thread.tensor_map and a TMA atom)."""
    ptx = TMA_TILE_PTX if source == "hand-written" else tma_tile_ptx()
    maps = TensorMapCache()
    ld = -(-m // 4) * 4 + 4  # a multiple of 4 f32: 16-byte strides, padded
    storage = torch.randn(n, ld, device="cuda")
    a = storage.t()[:m]  # column-major M x N, leading dimension ld
    tiles_m, tiles_n = -(-m // 16), -(-n // 8)
    padded = np.zeros((tiles_m * 16, tiles_n * 8), np.float32)  # out of bounds: zeros
    padded[:m, :n] = a.cpu().numpy()
    want = np.concatenate([
        padded[16 * bx:16 * bx + 16, 8 * by:8 * by + 8].flatten(order="F")
        for by in range(tiles_n) for bx in range(tiles_m)
    ])  # fmt: skip
    for launch in _launchers(TMA_TILE, ptx, maps):
        for _ in range(2):  # the second launch finds its map in the cache
            d = torch.full((tiles_m * tiles_n * 128,), float("nan"), device="cuda")
            launch(a, d)
            torch.cuda.synchronize()
            np.testing.assert_array_equal(d.cpu().numpy(), want)
    assert len(maps) == 1  # both launch paths, every call: one map, encoded once


def test_a_cluster_launch_runs_whole_clusters() -> None:
    for launch in _launchers(CLUSTER_IDS, CLUSTER_IDS_PTX):
        d = torch.full((16,), -1, dtype=torch.int32, device="cuda")
        launch(d, 3)  # 3 CTAs asked for: 2 clusters of 2 launched
        torch.cuda.synchronize()
        rank, cluster, cta, clusters = d.cpu().numpy().reshape(4, 4).T
        assert rank.tolist() == [0, 1, 0, 1] and cluster.tolist() == [0, 0, 1, 1]
        assert cta.tolist() == [0, 1, 2, 3] and clusters.tolist() == [2, 2, 2, 2]


def test_the_jit_launches_a_cluster_kernel_on_whole_clusters() -> None:
    from tests.runtime.launch_ptx import CTAS_IR

    k = rt.jit(CTAS_IR)
    out = torch.zeros(6, dtype=torch.int32, device="cuda")
    k(out, 3)
    k(out, 3)  # a second launch, of the remembered shape
    torch.cuda.synchronize()
    assert out.cpu().tolist() == [1, 2, 3, 4, 0, 0]
    assert ".reqnctapercluster 2, 1, 1" in k.ptx
