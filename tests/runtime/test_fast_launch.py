"""The C launcher (cutec/runtime/fastlaunch.c) without a GPU.

torch is stood in for by a tensor class of the same shape (dtype, data_ptr(),
get_device(), size(), stride()) and cuLaunchKernel by a ctypes recorder
(`set_launch`), so the packed parameter bytes, the grid, the stream and the
way back into Python for new shapes and mistakes are checked here exactly as a
GPU launch goes through them. tests/gpu/test_jit_gpu.py runs it for real.
"""

from __future__ import annotations

import ctypes
import struct
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import cutec.runtime as rt
from cutec.runtime import cuda, fastlaunch, launcher
from cutec.runtime.tensor_map import TensorMapCache

EXAMPLES = Path(__file__).parents[2] / "examples"


class FakeDtype:
    def __init__(self, name: str) -> None:
        self.name = name

    def __str__(self) -> str:
        return f"torch.{self.name}"


F32, F16 = FakeDtype("float32"), FakeDtype("float16")


class FakeTensor:
    """What the launch paths read of a torch tensor."""

    def __init__(self, shape: tuple[int, ...], stride: tuple[int, ...], ptr: int,
                 dtype: FakeDtype = F32, device: int = 0, inference: bool = False
                 ) -> None:  # fmt: skip
        self.shape, self._stride, self.ptr = shape, stride, ptr
        self.dtype, self.device, self.inference = dtype, device, inference

    def is_inference(self) -> bool:
        return self.inference

    def data_ptr(self) -> int:
        return self.ptr

    def get_device(self) -> int:
        return self.device

    def size(self) -> tuple[int, ...]:
        return self.shape

    def stride(self) -> tuple[int, ...]:
        return self._stride


_LAUNCH = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_void_p, *([ctypes.c_uint] * 7), ctypes.c_void_p,
    ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p,
)  # fmt: skip


class _Attribute(ctypes.Structure):
    """CUlaunchAttribute (cuda.h): an id, then a 64-byte value at offset 8."""

    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("x", ctypes.c_uint),
                ("y", ctypes.c_uint), ("z", ctypes.c_uint),
                ("rest", ctypes.c_char * 52)]  # fmt: skip


class _Config(ctypes.Structure):
    """CUlaunchConfig (cuda.h)."""

    _fields_ = [("dims", ctypes.c_uint * 6), ("smem", ctypes.c_uint), ("stream", ctypes.c_void_p),
                ("attrs", ctypes.POINTER(_Attribute)), ("count", ctypes.c_uint)]  # fmt: skip


_LAUNCH_EX = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(_Config), ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
    ctypes.c_void_p,
)  # fmt: skip


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The C extension with a recording cuLaunchKernel, FakeTensor as torch's tensor."""
    monkeypatch.setenv("CUTEC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(sys.modules["cutec.runtime.jit"], "_KERNELS", {})
    extension = fastlaunch.extension()
    if extension is None:
        pytest.skip("no C compiler or Python headers to build the C launcher")
    if extension.have_driver():
        pytest.skip("a real libcuda is loaded: the recorder would replace it")
    state: dict[str, Any] = {"calls": [], "result": 0, "size": 0, "inference_mode": False}

    def record(function, g0, g1, g2, b0, b1, b2, smem, stream, params, extra):
        raw = ctypes.string_at(params[0], state["size"])
        state["calls"].append(((g0, g1, g2), (b0, b1, b2), smem, stream, raw, function))
        return state["result"]

    def record_ex(config, function, params, extra):
        c = config.contents
        attrs = [(c.attrs[i].id, (c.attrs[i].x, c.attrs[i].y, c.attrs[i].z))
                 for i in range(c.count)]  # fmt: skip
        raw = ctypes.string_at(params[0], state["size"])
        state["calls"].append((tuple(c.dims[:3]), tuple(c.dims[3:]), c.smem, c.stream, raw,
                               function, attrs))  # fmt: skip
        return state["result"]

    callback, callback_ex = _LAUNCH(record), _LAUNCH_EX(record_ex)
    extension.set_launch(ctypes.cast(callback, ctypes.c_void_p).value)
    extension.set_launch_ex(ctypes.cast(callback_ex, ctypes.c_void_p).value)
    monkeypatch.setattr(launcher, "_torch_tensor_type", lambda: FakeTensor)
    monkeypatch.setattr(launcher, "_torch_dtype", lambda e: {"f32": F32, "f16": F16}.get(e))
    monkeypatch.setattr(launcher, "_torch_inference_mode",
                        lambda: lambda: state["inference_mode"])  # fmt: skip
    monkeypatch.setattr(
        launcher, "cuda_env",
        lambda: {"_fast": True, "_cu_launch": extension.launch,
                 "_cu_launch_ex": extension.launch_ex, "_launch_failed": None,
                 "_pending": [], "_blocking": False, "_synchronize_after": None,
                 "_torch_stream": lambda dev: 0x5000 + dev},
    )  # fmt: skip
    yield state
    extension.set_launch(0)
    extension.set_launch_ex(0)
    del callback, callback_ex


def _sgemm(state: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> rt.Kernel:
    k = rt.jit(EXAMPLES / "sgemm_2.cute", kernel="sgemm_nt")
    variants: list[int] = []

    def variant(key: int, dev: int) -> launcher.Variant:
        variants.append(key)
        return launcher.Variant(key, 0, "handle", 0xF00D + key)

    monkeypatch.setattr(k, "_variant", variant)
    layout = launcher.param_layout(k.signature.abi_types())
    state["size"] = layout[-1].offset + layout[-1].size
    state["variants"] = variants
    return k


def _operands(m: int, n: int, kk: int, base: int = 0x10000) -> tuple[FakeTensor, ...]:
    return (
        FakeTensor((m, kk), (1, m), base),
        FakeTensor((n, kk), (1, n), base + 0x100000),
        FakeTensor((m, n), (1, m), base + 0x200000),
    )


def test_c_launcher_packs_the_abi(fake: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    k = _sgemm(fake, monkeypatch)
    a, b, c = _operands(256, 128, 64)
    k(a, b, c, 1.5, -2.0)
    assert type(type(k).__dict__["__call__"]).__name__ == "Launcher"
    ((grid, block, smem, stream, raw, function),) = fake["calls"]
    assert grid == (2, 1, 1) and block == (256, 1, 1) and smem == 0 and stream == 0x5000
    expected = struct.pack("<QqqqQqqQqff", a.ptr, 256, 64, 256, b.ptr, 128, 128, c.ptr, 256,
                           1.5, -2.0)  # fmt: skip
    assert raw == expected
    assert function == 0xF00D + fake["variants"][0]


def test_c_launcher_remembers_shapes_and_reads_new_pointers(
    fake: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    k = _sgemm(fake, monkeypatch)
    k(*_operands(256, 128, 64), 1.0, 0.0)
    checked = k._launcher.__globals__["_checked"]
    assert len(checked) == 1
    # Same shapes, new bases and scalars: no Python check runs again (nothing new in
    # _checked), and the parameters are this call's.
    a, b, c = _operands(256, 128, 64, base=0x7000000)
    k(a, b, c, 3.0, 4.0)
    assert len(checked) == 1 and len(fake["calls"]) == 2
    raw = fake["calls"][-1][4]
    assert struct.unpack_from("<Q", raw, 0)[0] == a.ptr
    assert struct.unpack_from("<ff", raw, len(raw) - 8) == (3.0, 4.0)
    # A new shape goes through Python's checks once.
    k(*_operands(512, 128, 64), 1.0, 0.0)
    assert len(checked) == 2 and fake["calls"][-1][0] == (4, 1, 1)


def test_c_launcher_leaves_the_unusual_to_python(
    fake: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    k = _sgemm(fake, monkeypatch)
    a, b, c = _operands(256, 128, 64)
    # A 4-byte-aligned C (allowed: align 4), a keyword, an int alpha: all still launch right.
    c4 = FakeTensor(c.shape, c._stride, c.ptr + 4)
    k(a, b, c4, 1.0, 0.0)
    assert struct.unpack_from("<Q", fake["calls"][-1][4], 56)[0] == c4.ptr
    k(a, b, c, 1.0, 0.0, stream=9)
    assert fake["calls"][-1][3] == 9
    k(a, b, c, 2, 0.0)
    assert struct.unpack_from("<f", fake["calls"][-1][4], 72)[0] == 2.0
    # Mistakes get Python's messages.
    with pytest.raises(TypeError, match=r"'A'.*f16"):
        k(FakeTensor(a.shape, a._stride, a.ptr, F16), b, c, 1.0, 0.0)
    with pytest.raises(ValueError, match="'B' is on GPU 1 but 'A' is on GPU 0"):
        k(a, FakeTensor(b.shape, b._stride, b.ptr, device=1), c, 1.0, 0.0)
    with pytest.raises(ValueError, match="'C'"):
        k(a, b, FakeTensor((256, 64), (1, 256), c.ptr), 1.0, 0.0)
    with pytest.raises(TypeError):
        k(a, b, c, 1.0)
    assert len(fake["calls"]) == 3


def test_c_launcher_reports_a_failed_launch(
    fake: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    k = _sgemm(fake, monkeypatch)
    failures: list[tuple] = []

    def failed(err, variant, grid, block, smem, stream, params, cluster):
        assert cluster is None  # sgemm_nt has no cluster clause
        failures.append((err, variant.address, grid, block, smem, stream))
        raise cuda.CudaError("launch failed")

    monkeypatch.setattr(launcher, "_fast_failed", failed)
    fake["result"] = 700
    with pytest.raises(cuda.CudaError):
        k(*_operands(256, 128, 64), 1.0, 0.0)
    ((err, address, grid, block, _, stream),) = failures
    assert err == 700 and address == 0xF00D + fake["variants"][0]
    assert grid == (2, 1, 1) and block == (256, 1, 1) and stream == 0x5000


def test_the_extension_lives_with_the_installation_not_the_kernel_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new CUTEC_CACHE_DIR (a cold kernel cache) does not build the C launcher again:
    it lives in the user's cutec cache first, beside the kernels only as a fallback,
    in CUTEC_EXT_DIR when that is set, and per process with the cache off."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("CUTEC_CACHE_DIR", str(tmp_path / "kernels"))
    monkeypatch.delenv("CUTEC_EXT_DIR", raising=False)
    monkeypatch.delenv("CUTEC_CACHE", raising=False)
    first, second = fastlaunch._library_paths()
    assert first.parent == tmp_path / "xdg" / "cutec" / "fastlaunch"
    assert second.parent == tmp_path / "kernels" / "fastlaunch"
    monkeypatch.setenv("CUTEC_EXT_DIR", str(tmp_path / "ext"))
    assert [p.parent for p in fastlaunch._library_paths()] == [tmp_path / "ext"]
    monkeypatch.setenv("CUTEC_CACHE", "0")
    (only,) = fastlaunch._library_paths()
    assert tmp_path not in only.parents


class _CountingDict(dict):
    """The launch function's per-shape checks, counting how often Python looks them up."""

    def __init__(self, items: dict) -> None:
        super().__init__(items)
        self.lookups = 0

    def get(self, key: Any, default: Any = None) -> Any:
        self.lookups += 1
        return super().get(key, default)


def _count_python_calls(k: rt.Kernel) -> _CountingDict:
    env = k._launcher.__globals__
    env["_checked"] = counting = _CountingDict(env["_checked"])
    return counting


def test_c_launcher_makes_the_per_call_checks(
    fake: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The checks that depend on more than the shapes, made in C at every call: what they
    find goes to Python, which refuses the call (or, for spans that meet without sharing
    an element, launches it). A plain call never enters Python."""
    k = _sgemm(fake, monkeypatch)
    a, b, c = _operands(256, 128, 64)
    k(a, b, c, 1.0, 0.0)
    python = _count_python_calls(k)
    k(a, b, c, 1.0, 0.0)
    assert python.lookups == 0 and len(fake["calls"]) == 2
    # C on A's memory; C on the rows below A's in one column-major buffer of 512 rows.
    with pytest.raises(ValueError, match="parameter 'C' is written by the kernel and shares "
                       "memory with 'A'"):  # fmt: skip
        k(a, b, FakeTensor(c.shape, c._stride, a.ptr), 1.0, 0.0)
    rows = FakeTensor((256, 64), (1, 512), 0x800000)
    below = FakeTensor((256, 128), (1, 512), 0x800000 + 256 * 4)
    k(rows, b, below, 1.0, 0.0)  # a new shape (resolve), then Python's closer look
    assert python.lookups == 3 and len(fake["calls"]) == 3
    # alpha beyond f32; an inference tensor as C outside, then inside, inference mode.
    with pytest.raises(ValueError, match=r"parameter 'alpha': 1e\+300 is beyond the range"):
        k(a, b, c, 1e300, 0.0)
    inference = FakeTensor(c.shape, c._stride, c.ptr, inference=True)
    with pytest.raises(ValueError, match=r"parameter 'C' is written by the kernel; got an "
                       r"inference tensor outside torch\.inference_mode\(\)"):  # fmt: skip
        k(a, b, inference, 1.0, 0.0)
    k(FakeTensor(a.shape, a._stride, a.ptr, inference=True), b, c, 1.0, 0.0)  # read: fine
    fake["inference_mode"] = True
    before = python.lookups
    k(a, b, inference, 1.0, 0.0)
    assert python.lookups == before and len(fake["calls"]) == 5


# ------------------------------------------------------------------ tensor maps and clusters
def _direct(signature: Any, cluster: Any = None, maps: Any = None) -> tuple[Any, Any]:
    """The C launcher of a signature built by hand (no compile writes tensor maps yet),
    grid ceil_div(M, 64), and its launch function."""
    fn, _ = launcher.build_launcher(
        signature, (128, 1, 1), ("ceil_div(M,64)", "1", "1"), 32, frozenset(),
        lambda key, dev: launcher.Variant(key, 0, "handle", 0xF00D), None, lambda s: s,
        cluster=cluster, maps=maps,
    )  # fmt: skip
    fast = launcher.fast_call(SimpleNamespace(name=signature.kernel), fn)
    assert type(fast).__name__ == "Launcher"
    return fast, fn


def test_c_launcher_packs_tensor_maps_from_the_map_cache(fake: dict[str, Any]) -> None:
    from tests.runtime.test_launch_maps import SIGNATURE
    from tests.runtime.test_tensor_map import FakeEncoder

    encoder = FakeEncoder()
    fast, fn = _direct(SIGNATURE, maps=TensorMapCache(encoder))
    fake["size"] = 196
    a = FakeTensor((200, 96), (1, 256), 0x10000, F16)
    d = FakeTensor((200,), (1,), 0x90000)
    fast(a, d, 7)
    head = struct.pack("<QqqqQ", a.ptr, 200, 96, 256, d.ptr)
    first_map = struct.pack("<16Q", *[1] * 16)

    def packed(call: tuple[Any, ...]) -> tuple[bytes, bytes, int]:
        """The .params of a launch: the five before the map, the map, n (the bytes
        between them are padding, whatever the stack held)."""
        raw = call[4]
        return raw[:40], raw[64:192], struct.unpack("<i", raw[192:196])[0]

    assert packed(fake["calls"][0]) == (head, first_map, 7)
    assert fake["calls"][0][0] == (4, 1, 1)
    python = _CountingDict(fn.__globals__["_checked"])
    fn.__globals__["_checked"] = python
    fast(a, d, 7)  # the same tensor: the remembered map, no Python, no driver
    assert python.lookups == 0 and len(encoder.calls) == 1
    assert packed(fake["calls"][1]) == (head, first_map, 7)
    other = FakeTensor((200, 96), (1, 256), 0x20000, F16)
    fast(other, d, 7)  # another base: Python finds its map (encoded once) and the C key
    fast(other, d, 7)
    fast(a, d, 7)  # the first base is still remembered
    assert python.lookups == 1 and [c.address for c in encoder.calls] == [0x10000, 0x20000]
    assert [call[4][64] for call in fake["calls"]] == [1, 1, 2, 2, 1]


def test_c_launcher_launches_clusters_with_their_shape(fake: dict[str, Any]) -> None:
    from tests.runtime.test_launch_maps import PLAIN

    fast, _ = _direct(PLAIN, cluster=(2, 1, 1))
    fake["size"] = 44
    a = FakeTensor((130, 96), (1, 256), 0x10000, F16)
    fast(a, FakeTensor((130,), (1,), 0x90000), 3)
    ((grid, block, _, stream, raw, function, attrs),) = fake["calls"]
    # ceil(130 / 64) = 3 CTAs, rounded up to 2 clusters of 2; attribute 4 is the cluster
    # dimension (CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION).
    assert grid == (4, 1, 1) and block == (128, 1, 1) and stream == 0x5000
    assert attrs == [(4, (2, 1, 1))] and function == 0xF00D
    assert raw == struct.pack("<QqqqQi", a.ptr, 130, 96, 256, 0x90000, 3)
