"""Arrays a kernel can take: torch tensors, CuPy arrays, anything with
``__cuda_array_interface__`` or DLPack, numpy arrays (host memory), and cutec's
own small `DeviceArray`, so that torch is not required.

`view_of` reads any of them into an `ArrayView`: base address, shape, strides
in elements, cutec's element-type name and where the memory lives. The launch
path reads torch tensors directly (it is the common case and every
microsecond counts there); everything else comes through here.
"""

from __future__ import annotations

import contextlib
import ctypes
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from cutec.dtypes import DTYPES, DType, numpy_dtype
from cutec.runtime import cuda

# numpy dtype name -> cutec element type (f32 before tf32, s64 before u64: first wins).
_FROM_NUMPY: dict[str, str] = {}
for _row in DTYPES.values():
    if _row.numpy is not None:
        _FROM_NUMPY.setdefault(_row.numpy, _row.name)

# torch dtype name (str(torch.float32) without "torch.") -> cutec element type.
TORCH_DTYPES: dict[str, str] = {
    "float64": "f64", "float32": "f32", "float16": "f16", "bfloat16": "bf16",
    "float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2", "int64": "s64", "int32": "s32",
    "int16": "s16", "int8": "s8", "uint8": "u8", "uint16": "u16", "uint32": "u32",
    "uint64": "u64", "bool": "bool",
}  # fmt: skip

_KDL_CPU, _KDL_CUDA, _KDL_CUDA_HOST, _KDL_CUDA_MANAGED = 1, 2, 3, 13


@dataclass(frozen=True)
class ArrayView:
    """What a kernel needs to know of an array argument."""

    ptr: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]  # in elements
    dtype: str  # cutec's element-type name (f32, f16, s32 ...), or the foreign name
    device: int | None  # the GPU's ordinal; None: host memory
    kind: str  # what it was: torch, cupy, numpy, DeviceArray, cuda_array_interface, dlpack
    owner: Any = None  # keeps the memory alive while the view is in use
    # The array says it must not be written: numpy's writeable flag off (a read-only
    # memmap, np.broadcast_to), __cuda_array_interface__'s read-only data, a torch
    # inference tensor outside inference mode (torch refuses to write it).
    readonly: bool = False


def element_name(np_dtype: Any) -> str:
    """cutec's name of a numpy (or ml_dtypes) dtype; the numpy name if cutec has none."""
    name = np.dtype(np_dtype).name
    return _FROM_NUMPY.get(name, name)


def view_of(x: Any) -> ArrayView | None:
    """The array behind `x`, or None if `x` is not an array."""
    if isinstance(x, DeviceArray):
        return ArrayView(x.ptr, x.shape, x.strides, x.dtype, x.device, "DeviceArray", x)
    module = type(x).__module__
    if module.startswith("torch") and hasattr(x, "data_ptr"):
        return _torch_view(x)
    if isinstance(x, np.ndarray):
        strides = tuple(s // x.itemsize for s in x.strides)
        return ArrayView(x.ctypes.data, x.shape, strides, element_name(x.dtype), None, "numpy", x,
                         not x.flags.writeable)  # fmt: skip
    cai = getattr(x, "__cuda_array_interface__", None)
    if cai is not None:
        return _cai_view(x, cai, "cupy" if module.startswith("cupy") else "cuda_array_interface")
    if hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__"):
        return _dlpack_view(x)
    return None


def host_array(v: ArrayView) -> np.ndarray | None:
    """The numpy array over a host array's memory (device="cpu" runs on it in place): the
    array itself where it is one contiguous block (C or Fortran order), else a flat view
    of the elements from its first to its last (a padded view, a stride-0 broadcast);
    None where a stride is negative or not a whole number of elements."""
    owner = v.owner
    if v.kind == "torch":
        owner = owner.detach().numpy()
    if not isinstance(owner, np.ndarray):
        owner = np.from_dlpack(owner[0] if isinstance(owner, tuple) else owner)
    if owner.flags.c_contiguous or owner.flags.f_contiguous:
        return owner
    size = owner.itemsize
    if any(s < 0 or s % size for s in owner.strides):
        return None
    # The kernel addresses element (i, j, ...) at sum(index * stride) from the first one,
    # with the strides it is passed: the memory from the first element to the last.
    span = 1 + sum((e - 1) * (s // size) for e, s in zip(owner.shape, owner.strides, strict=True))
    return np.lib.stride_tricks.as_strided(
        owner, shape=(span,), strides=(size,), writeable=owner.flags.writeable
    )


def buffer_overrun(a: np.ndarray) -> tuple[int, int] | None:
    """(bytes `a` reaches past its base, bytes its memory holds from there) where `a`
    claims more than the memory it comes from holds (`as_strided` makes such views without
    a check); None where it fits, or where that memory's size is unknown.

    The memory is that of the last array of `a`'s `base` chain: its own allocation, or
    the buffer (bytes, mmap) it was made over."""
    if a.size == 0:
        return None
    root, obj = a, a.base
    while obj is not None:
        if isinstance(obj, np.ndarray):
            root = obj
        obj = getattr(obj, "base", None)
    if root.flags.owndata:
        start, held = root.ctypes.data, root.nbytes
    else:
        try:
            memory = np.frombuffer(root.base, np.uint8)  # type: ignore[arg-type]
        except (TypeError, ValueError, AttributeError):
            return None
        start, held = memory.ctypes.data, memory.nbytes
    low = high = a.ctypes.data
    for e, s in zip(a.shape, a.strides, strict=True):
        low, high = low + min(0, (e - 1) * s), high + max(0, (e - 1) * s)
    high += a.itemsize
    if start <= low and high <= start + held:
        return None
    return high - a.ctypes.data, start + held - a.ctypes.data


def _torch_view(t: Any) -> ArrayView:
    dtype = str(t.dtype).removeprefix("torch.")
    device = t.get_device() if t.is_cuda else None
    return ArrayView(
        t.data_ptr(), tuple(t.shape), tuple(t.stride()), TORCH_DTYPES.get(dtype, dtype),
        device, "torch", t, torch_readonly(t),
    )  # fmt: skip


def torch_readonly(t: Any) -> bool:
    """Whether torch refuses to write tensor `t`: an inference tensor outside
    torch.inference_mode() (torch has no read-only tensors otherwise)."""
    return bool(t.is_inference()) and not sys.modules["torch"].is_inference_mode_enabled()


def _cai_view(x: Any, cai: dict[str, Any], kind: str) -> ArrayView:
    np_dtype = np.dtype(cai["typestr"])
    shape = tuple(int(s) for s in cai["shape"])
    if cai.get("strides") is None:
        strides = _c_strides(shape)
    else:
        strides = tuple(int(s) // np_dtype.itemsize for s in cai["strides"])
    ptr = int(cai["data"][0])
    device = getattr(getattr(x, "device", None), "id", None)
    if device is None:
        device = _pointer_device(ptr)
    readonly = bool(cai["data"][1])
    return ArrayView(ptr, shape, strides, element_name(np_dtype), device, kind, x, readonly)


def _pointer_device(ptr: int) -> int | None:
    """The GPU a device pointer belongs to (None for host memory)."""
    if ptr == 0:
        return None
    cu = cuda.driver()
    attr = cu.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
    err, ordinal = cu.cuPointerGetAttribute(attr, ptr)
    return int(ordinal) if err == cu.CUresult.CUDA_SUCCESS else None


def _c_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, step = [], 1
    for s in reversed(shape):
        strides.append(step)
        step *= max(s, 1)
    return tuple(reversed(strides))


class _DLDataType(ctypes.Structure):
    _fields_ = (("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16))


class _DLTensor(ctypes.Structure):
    _fields_ = (
        ("data", ctypes.c_void_p),
        ("device_type", ctypes.c_int32),
        ("device_id", ctypes.c_int32),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    )


# DLPack type codes: 0 int, 1 uint, 2 float, 4 bfloat, 6 bool.
_DL_NAMES = {
    (0, 8): "s8", (0, 16): "s16", (0, 32): "s32", (0, 64): "s64",
    (1, 8): "u8", (1, 16): "u16", (1, 32): "u32", (1, 64): "u64",
    (2, 16): "f16", (2, 32): "f32", (2, 64): "f64", (4, 16): "bf16", (6, 8): "bool",
}  # fmt: skip


def _dlpack_view(x: Any) -> ArrayView:
    device_type, device_id = x.__dlpack_device__()
    capsule = x.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, (ctypes.py_object, ctypes.c_char_p)
    # The capsule holds a DLManagedTensor, whose first member is the DLTensor. The
    # capsule is not consumed: its destructor gives the tensor back when it dies.
    t = _DLTensor.from_address(get(capsule, b"dltensor"))
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = tuple(t.strides[i] for i in range(t.ndim)) if t.strides else _c_strides(shape)
    dtype = _DL_NAMES.get((t.dtype.code, t.dtype.bits), f"dlpack{t.dtype.code}:{t.dtype.bits}")
    device = device_id if device_type in (_KDL_CUDA, _KDL_CUDA_MANAGED) else None
    ptr = (t.data or 0) + t.byte_offset
    return ArrayView(ptr, shape, strides, dtype, device, "dlpack", (x, capsule))


class DeviceArray:
    """A small array in GPU memory: enough to launch kernels without torch or CuPy.

        a = cutec.DeviceArray.from_numpy(np.random.rand(64, 32).astype(np.float32))
        b = cutec.DeviceArray.empty((64, 32), "f32")
        kernel(a, b)
        print(b.numpy())

    Strides are in elements (a Fortran-ordered numpy array keeps its column-major
    strides). It exposes ``__cuda_array_interface__``, so CuPy, numba and torch
    (``torch.as_tensor(a, device="cuda")``) can view it.
    """

    def __init__(
        self,
        shape: tuple[int, ...],
        dtype: str,
        strides: tuple[int, ...] | None = None,
        device: int = 0,
    ) -> None:
        self.shape = tuple(int(s) for s in shape)
        self.row: DType = DTYPES[dtype]
        self.dtype = self.row.name
        self.strides = _c_strides(self.shape) if strides is None else tuple(strides)
        self.device = device
        self._dev = cuda.device(device)
        span = 1 + sum((s - 1) * abs(st) for s, st in zip(self.shape, self.strides, strict=True))
        self.nbytes = max(span, 0) * self.row.bits // 8 if all(self.shape) else 0
        self._dev.make_current()
        self.ptr = int(
            cuda.check(cuda.driver().cuMemAlloc(max(self.nbytes, 1)), "allocating device memory")
        )

    @classmethod
    def empty(cls, shape: tuple[int, ...], dtype: str, device: int = 0) -> DeviceArray:
        return cls(shape, dtype, None, device)

    @classmethod
    def from_numpy(cls, a: np.ndarray, device: int = 0) -> DeviceArray:
        """A copy of `a` on GPU `device` (C or Fortran order kept; others made C order)."""
        if not (a.flags.c_contiguous or a.flags.f_contiguous):
            a = np.ascontiguousarray(a)
        out = cls(a.shape, element_name(a.dtype), tuple(s // a.itemsize for s in a.strides), device)
        if out.nbytes:
            cuda.check(
                cuda.driver().cuMemcpyHtoD(out.ptr, a.ctypes.data, out.nbytes),
                "copying an array to the GPU",
            )
        return out

    def numpy(self) -> np.ndarray:
        """A host copy (waits for the GPU's work on the default stream)."""
        np_dtype = numpy_dtype(self.row)
        buffer = np.empty(self.nbytes // np_dtype.itemsize, np_dtype)
        if self.nbytes:
            self._dev.make_current()
            cuda.check(
                cuda.driver().cuMemcpyDtoH(buffer.ctypes.data, self.ptr, self.nbytes),
                "copying an array from the GPU",
            )
        byte_strides = tuple(s * np_dtype.itemsize for s in self.strides)
        return np.lib.stride_tricks.as_strided(buffer, self.shape, byte_strides).copy(order="A")

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        np_dtype = numpy_dtype(self.row)
        return {
            "shape": self.shape,
            "typestr": np_dtype.str,
            "data": (self.ptr, False),
            "strides": tuple(s * np_dtype.itemsize for s in self.strides),
            "version": 3,
        }

    def __repr__(self) -> str:
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, strides={self.strides})"

    def __del__(self) -> None:
        ptr = getattr(self, "ptr", 0)
        if ptr:
            # At interpreter shutdown the driver may already be gone.
            with contextlib.suppress(Exception):
                cuda.driver().cuMemFree(ptr)
            self.ptr = 0
