"""Launching kernels with TMA tensor-map parameters and clusters, without a GPU: the
parameter layout (a map is 128 bytes at a multiple of 64), the bytes the Python launch
function packs, the map cache hit that makes no driver call, the grid rounded up to
whole clusters and launched through cuLaunchKernelEx, and launch records with maps read
back from the cache (cutec/runtime/launcher.py; test_fast_launch.py has the C side)."""

from __future__ import annotations

import ctypes
import json
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import cutec.runtime as rt
from cutec.atoms.tma import TmaDataType, TmaTensorMap
from cutec.driver import Source
from cutec.ir import types as T
from cutec.ir.dialects.gpu import PointerType
from cutec.ir.signature import (
    KernelLaunch,
    KernelSignature,
    LaunchInfo,
    ScalarParam,
    TensorMapParam,
    TensorParam,
)
from cutec.ptx.tables import TENSOR_MAP, Param, param_layout
from cutec.runtime import cache, launcher
from cutec.runtime.errors import ArgumentValueError
from cutec.runtime.jit import Kernel
from cutec.runtime.tensor_map import TensorMapCache
from cutec.target import AddressSpace
from tests.runtime.test_tensor_map import FakeEncoder

EXAMPLES = Path(__file__).parents[2] / "examples"

# A: f16[M, K] : (1, ldA) read through a map in 64 x 32 boxes; D: f32[M] written; n: i32.
A = TensorParam("A", "f16", ("M", "K"), (1, "ldA"), 16, "read")
D = TensorParam("D", "f32", ("M",), (1,), 16, "write")
N = ScalarParam("n", "i32")
A_MAP = TensorMapParam("A_map", "A", TmaDataType.FLOAT16, ("M", "K"), ("ldA",), (64, 32), (1, 1))
ABI = (("A", "ptr"), ("M", "index"), ("K", "index"), ("ldA", "index"), ("D", "ptr"),
       ("A_map", "tensor_map"), ("n", "i32"))  # fmt: skip
SIGNATURE = KernelSignature("k", (A, D, A_MAP, N), ABI, ())
# A, M, K, ldA, D at 0..39; the map at the next multiple of 64; n after its 128 bytes.
OFFSETS = (0, 8, 16, 24, 32, 64, 192)
PLAIN = KernelSignature("k", (A, D, N), (*ABI[:5], ABI[6]), ())


class _Dev:
    id = 0


class FakeGpuArray:
    """A GPU array by `__cuda_array_interface__` and `device.id`: all the launch reads."""

    def __init__(self, shape: tuple[int, ...], strides: tuple[int, ...], ptr: int, typestr: str):
        size = np.dtype(typestr).itemsize
        self.__cuda_array_interface__ = {
            "shape": shape, "strides": tuple(s * size for s in strides), "typestr": typestr,
            "data": (ptr, False), "version": 3,
        }  # fmt: skip
        self.device = _Dev()


def _a(m: int = 200, k: int = 96, ld: int = 256, ptr: int = 0x10000) -> FakeGpuArray:
    return FakeGpuArray((m, k), (1, ld), ptr, "<f2")


def _d(m: int = 200, ptr: int = 0x90000) -> FakeGpuArray:
    return FakeGpuArray((m,), (1,), ptr, "<f4")


def _launch_function(
    monkeypatch: pytest.MonkeyPatch, signature: KernelSignature = SIGNATURE,
    cluster: tuple[int, int, int] | None = None, maps: TensorMapCache | None = None,
) -> tuple[Any, list[dict[str, Any]]]:  # fmt: skip
    """The Python launch function of `signature` (grid ceil_div(M, 64)), launching into a
    recorder of each launch's grid, cluster and parameter bytes."""
    calls: list[dict[str, Any]] = []
    layout = param_layout(signature.abi_types())
    assert layout is not None

    def record(grid: Any, cluster: Any, params: int) -> None:
        pointers = (ctypes.c_void_p * len(layout)).from_address(params)
        calls.append({
            "grid": tuple(grid), "cluster": cluster,
            "addresses": [p or 0 for p in pointers],
            "bytes": [ctypes.string_at(p, q.size) for p, q in zip(pointers, layout, strict=True)],
        })  # fmt: skip

    def cu_launch(handle, g0, g1, g2, b0, b1, b2, smem, stream, params, extra):
        record((g0, g1, g2), None, params)
        return (0,)

    def cu_launch_cluster(handle, grid, block, cluster, smem, stream, params):
        record(grid, cluster, params)
        return 0

    monkeypatch.setattr(
        launcher, "cuda_env",
        lambda: {"_fast": False, "_cu_launch": cu_launch, "_cu_launch_ex": None,
                 "_cu_launch_cluster": cu_launch_cluster, "_launch_failed": None,
                 "_pending": [], "_blocking": False, "_synchronize_after": None,
                 "_torch_stream": lambda dev: 0},
    )  # fmt: skip
    fn, _ = launcher.build_launcher(
        signature, (128, 1, 1), ("ceil_div(M,64)", "1", "1"), 32, frozenset(),
        lambda key, dev: launcher.Variant("fn", 0, "handle", 0xF00D), None, lambda s: s,
        cluster=cluster, maps=maps,
    )  # fmt: skip
    return fn, calls


# ------------------------------------------------------------------ the layout
def test_a_map_is_128_bytes_at_a_multiple_of_64() -> None:
    ptr = PointerType(T.f16, AddressSpace.GLOBAL)
    layout = param_layout((T.i32, TENSOR_MAP, T.f32, ptr, TENSOR_MAP))
    assert layout == [Param("s32", 4, 0), Param("b8", 128, 64), Param("f32", 4, 192),
                      Param("u64", 8, 200), Param("b8", 128, 256)]  # fmt: skip
    assert [p.offset for p in param_layout(SIGNATURE.abi_types()) or []] == list(OFFSETS)


# ------------------------------------------------------------------ the Python launch
def test_the_launch_packs_the_map_at_its_aligned_offset(monkeypatch: pytest.MonkeyPatch) -> None:
    encoder = FakeEncoder()
    fn, calls = _launch_function(monkeypatch, maps=TensorMapCache(encoder))
    a, d = _a(), _d()
    fn(None, a, d, 7)
    ((call,),) = [calls]
    addresses, data = call["addresses"], call["bytes"]
    # Each .param where the layout puts it, in a buffer laid out as the parameter space.
    assert [x - addresses[0] for x in addresses] == list(OFFSETS)
    assert addresses[5] % 64 == 0
    assert data[:5] == [struct.pack("<Q", 0x10000), *(struct.pack("<q", v) for v in (200, 96, 256)),
                        struct.pack("<Q", 0x90000)]  # fmt: skip
    assert data[5] == struct.pack("<16Q", *[1] * 16)  # the encoder's first map
    assert data[6] == struct.pack("<i", 7)
    (enc,) = encoder.calls
    assert enc.address == 0x10000 and enc.global_dims == (200, 96)
    assert enc.global_strides == (512,) and enc.box_dims == (64, 32)
    assert call["grid"] == (4, 1, 1) and call["cluster"] is None


def test_a_map_cache_hit_makes_no_driver_call(monkeypatch: pytest.MonkeyPatch) -> None:
    encoder = FakeEncoder()
    maps = TensorMapCache(encoder)
    fn, calls = _launch_function(monkeypatch, maps=maps)
    fn(None, _a(), _d(), 1)
    fn(None, _a(), _d(ptr=0xA0000), 2)  # another output: the same map
    assert len(encoder.calls) == 1
    fn(None, _a(ptr=0x20000), _d(), 3)  # another base: another map
    fn(None, _a(ld=320), _d(), 4)  # another stride: another map
    assert [c.address for c in encoder.calls] == [0x10000, 0x20000, 0x10000]
    assert encoder.calls[2].global_strides == (640,)
    assert [c["bytes"][5][0] for c in calls] == [1, 1, 2, 3]
    # A second launch function (another kernel object) finds the maps in the shared cache.
    again, _ = _launch_function(monkeypatch, maps=maps)
    again(None, _a(ptr=0x20000), _d(), 5)
    assert len(encoder.calls) == 3


def test_a_map_that_breaks_a_rule_names_the_parameter(monkeypatch: pytest.MonkeyPatch) -> None:
    fn, calls = _launch_function(monkeypatch, maps=TensorMapCache(FakeEncoder()))
    # ldA = 100 f16 elements: 200 bytes, no multiple of 16 (docs/abi.md).
    with pytest.raises(rt.CudaError, match=r"k: parameter 'A_map'.*16"):
        fn(None, _a(ld=100), _d(), 1)
    assert calls == []


def test_on_the_cpu_a_map_is_passed_as_its_description() -> None:
    got: list[Any] = []
    fn, _ = launcher.build_launcher(
        SIGNATURE, (128, 1, 1), ("ceil_div(M,64)", "1", "1"), 32, frozenset(),
        lambda key, dev: launcher.Variant("fn", 0), lambda *a: got.append(a), lambda s: s,
        cpu=True,
    )  # fmt: skip
    a = np.zeros((96, 200), np.float16).T  # column-major 200 x 96
    fn(None, a, np.zeros(200, np.float32), 7)
    ((_, grid, _, _, values, arrays),) = got
    desc = values[5]
    assert isinstance(desc, TmaTensorMap)
    assert desc.global_dims == (200, 96) and desc.global_strides == (400,)
    assert desc.box_dims == (64, 32) and grid == (4, 1, 1)
    assert arrays["A"] is a


# ------------------------------------------------------------------ clusters
def test_a_cluster_launch_rounds_the_grid_up_to_whole_clusters(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fn, calls = _launch_function(monkeypatch, PLAIN, cluster=(2, 1, 1))
    fn(None, _a(m=130), _d(m=130), 1)  # ceil(130 / 64) = 3 CTAs: 2 clusters of 2
    fn(None, _a(m=256), _d(m=256), 1)  # 4 CTAs: already whole clusters
    fn(None, _a(m=130), _d(m=130), 1, grid=(6, 1, 1))
    assert [(c["grid"], c["cluster"]) for c in calls] == [
        ((4, 1, 1), (2, 1, 1)), ((4, 1, 1), (2, 1, 1)), ((6, 1, 1), (2, 1, 1))]  # fmt: skip
    with pytest.raises(ArgumentValueError, match=r"grid=\(3, 1, 1\) is not a whole number of "
                       r"clusters of \(2, 1, 1\)"):  # fmt: skip
        fn(None, _a(), _d(), 1, grid=(3, 1, 1))


def test_a_cluster_of_one_cta_launches_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    fn, calls = _launch_function(monkeypatch, PLAIN, cluster=(1, 1, 1))
    fn(None, _a(m=130), _d(m=130), 1)
    assert [(c["grid"], c["cluster"]) for c in calls] == [((3, 1, 1), None)]
    assert "_cu_launch_cluster" not in fn.__cutec_source__


@pytest.mark.parametrize("cluster", [(4, 4, 1), (16, 1, 1), (3, 3, 1)])
def test_a_cluster_beyond_the_portable_size_is_refused(
    cluster: tuple[int, int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ArgumentValueError, match=rf"k: its clause 'cluster \({cluster[0]}, "
                       r".*a portable cluster has at most 8"):  # fmt: skip
        _launch_function(monkeypatch, PLAIN, cluster=cluster)


def test_a_cluster_grid_is_rounded_on_the_cpu_too() -> None:
    """The CPU runs the CTAs a GPU would: the ones past the kernel's grid included."""
    got: list[Any] = []
    fn, _ = launcher.build_launcher(
        PLAIN, (128, 1, 1), ("ceil_div(M,64)", "1", "1"), 32, frozenset(),
        lambda key, dev: launcher.Variant("fn", 0), lambda *a: got.append(a), lambda s: s,
        cpu=True, cluster=(4, 1, 1),
    )  # fmt: skip
    fn(None, np.zeros((96, 130), np.float16).T, np.zeros(130, np.float32), 1)
    assert got[0][1] == (4, 1, 1)


# ------------------------------------------------------------------ records in the cache
def test_a_record_with_maps_and_a_cluster_round_trips_through_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUTEC_CACHE_DIR", str(tmp_path))
    record = KernelLaunch(SIGNATURE, LaunchInfo((128, 1, 1), None, ("ceil_div(M,64)", "1", "1"),
                                                (2, 1, 1), 0, 32))  # fmt: skip
    key = cache.key("a record with a map")
    cache.store(key, cache.Entry(record.to_json(), {}))
    assert cache.load_checked(key, lambda e: KernelLaunch.from_json(e.meta)) == record
    # What is on disk is the recipe: no map (which holds a device address) is written.
    text = json.dumps(record.to_json())
    assert '"maps": "A"' in text and '"box": [64, 32]' in text


def test_the_jit_launches_a_cached_record_with_a_map(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record with a tensor-map parameter read from the cache is the kernel's signature
    (it was refused and compiled again before the launcher packed maps)."""
    monkeypatch.setenv("CUTEC_CACHE_DIR", str(tmp_path))
    k = Kernel(Source.from_file(EXAMPLES / "tiled_copy.cute"), "copy_kernel", {}, None, "cpu",
               True)  # fmt: skip
    plain = k._launch_record("sm_90a")
    s = plain.signature.params[0]
    assert isinstance(s, TensorParam) and s.shape is not None
    tile = TensorMapParam("S_map", s.name, TmaDataType.FLOAT32, ("M", "N"), ("M",), (32, 8),
                          (1, 1))  # fmt: skip
    signature = KernelSignature(
        plain.signature.kernel, (*plain.signature.params, tile),
        (*plain.signature.abi, ("S_map", "tensor_map")), plain.signature.facts,
    )  # fmt: skip
    record = KernelLaunch(signature, plain.launch)
    cache.store(k._key("signature", "sm_90a"), cache.Entry(record.to_json(), {}))
    assert k.signature == signature


# ------------------------------------------------------------------ the GPU tests' kernels
@pytest.mark.parametrize("ptx", ["TMA_TILE_PTX", "CLUSTER_IDS_PTX"])
def test_the_gpu_tests_kernels_assemble_for_sm_90a(ptx: str) -> None:
    """tests/gpu/test_launch_maps_gpu.py's kernels, assembled here where no GPU runs them;
    their launch records are valid (read back as the cache reads them)."""
    from cutec.ptx.ptxas import assemble, find_ptxas
    from tests.runtime import launch_ptx

    if find_ptxas() is None:
        pytest.skip("no ptxas")
    result = assemble(getattr(launch_ptx, ptx), "sm_90a")
    assert result.ok and result.cubin, result.stderr
    for signature, launch in (launch_ptx.TMA_TILE, launch_ptx.CLUSTER_IDS):
        record = KernelLaunch(signature, launch)
        assert KernelLaunch.from_json(json.loads(json.dumps(record.to_json()))) == record
        layout = param_layout(signature.abi_types())
        assert layout is not None and layout[-1].offset in (16, 64)


def test_the_jit_runs_a_cluster_kernels_rounded_grid_on_the_cpu() -> None:
    """Through cutec.jit, the launch record's cluster reaches the launch: 3 CTAs asked
    for, 2 clusters of 2 run (the fourth CTA writes too)."""
    from tests.runtime.launch_ptx import CTAS_IR

    k = rt.jit(CTAS_IR, device="cpu", arch="sm_90a")
    out = np.zeros(6, np.int32)
    k(out, 3)
    assert out.tolist() == [1, 2, 3, 4, 0, 0]
