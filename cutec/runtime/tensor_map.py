"""TMA tensor maps built at launch: the 128 bytes ``cuTensorMapEncodeTiled`` writes.

A kernel that copies with TMA takes, for each map, a `.param .align 64 .b8 [128]`
(docs/abi.md, *Tensor-map parameters*) that the host encodes from the tensor's base
address and the view's extents and strides (`cutec.atoms.tma.TmaTensorMap`, which
checks the driver's rules first). Encoding costs a driver call, so the maps are kept
per (pointer, description): the description holds the dtype, extents, byte strides,
box, element strides, interleave, swizzle, L2 promotion and out-of-bounds fill, so a
launch on the same tensor with the same recipe reuses the bytes.

Each map lives in a host buffer aligned to `MAP_ALIGN` = 128 bytes, which is
``alignof(CUtensorMap)`` in CUDA 13's headers (the driver demands 64). A launch copies
its 128 bytes into its own parameter buffer, at the map's 64-byte aligned offset (the
launch function and the C launcher, `cutec.runtime.launcher`), and the driver copies
them into the parameter space; so a map may be dropped from the cache at any time
(`TENSOR_MAPS` is the process's cache). A map holds
a device address and is never written to disk; the recipe it is built from is part of
the launch record (`cutec.ir.signature.TensorMapParam`).

The encoder is a parameter of the cache (`Encoder`: one `EncodeCall` to 128 bytes),
so that the CPU tests record its calls; `encode_with_driver` is the real one.
Importing this module touches no driver.
"""

from __future__ import annotations

import ctypes
import struct
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from cutec.atoms.tma import TmaDescriptorError, TmaTensorMap
from cutec.ir.signature import TensorMapParam
from cutec.runtime import cuda

MAP_BYTES = 128  # sizeof(CUtensorMap)
MAP_ALIGN = 128  # alignof(CUtensorMap) in CUDA 13; cuTensorMapEncodeTiled needs 64
# Maps kept at once: a map per (tensor, recipe) a program launches with, 256 bytes each;
# past this the oldest is dropped (and encoded again if it is used again).
DEFAULT_CAPACITY = 4096


class TensorMapError(cuda.CudaError):
    """A tensor map that could not be built: the description breaks a driver rule (cutec's
    check, `cutec.atoms.tma`) or the driver refused it (`code` is its CUresult's name).
    The message names the kernel and the parameter."""


@dataclass(frozen=True)
class EncodeCall:
    """The arguments of one ``cuTensorMapEncodeTiled``, as the driver's integers: the enum
    fields are ``CU_TENSOR_MAP_*`` values, the strides are bytes of dims 1..rank-1."""

    data_type: int
    address: int
    global_dims: tuple[int, ...]
    global_strides: tuple[int, ...]
    box_dims: tuple[int, ...]
    element_strides: tuple[int, ...]
    interleave: int
    swizzle: int
    l2_promotion: int
    oob_fill: int

    @property
    def rank(self) -> int:
        return len(self.global_dims)

    @classmethod
    def of(cls, desc: TmaTensorMap, address: int) -> EncodeCall:
        """The call that encodes `desc` over the tensor at `address`."""
        assert desc.element_strides is not None
        return cls(
            desc.dtype.cu_value,
            address,
            desc.global_dims,
            desc.global_strides,
            desc.box_dims,
            desc.element_strides,
            int(desc.interleave),
            int(desc.swizzle),
            int(desc.l2_promotion),
            int(desc.oob_fill),
        )


# What encodes a map: the call's arguments to the 128 bytes, or `cuda.CudaError`.
Encoder = Callable[[EncodeCall], bytes]


def driver_arguments(call: EncodeCall, cu: Any) -> tuple[Any, ...]:
    """`call` as the positional arguments of cuda.bindings' ``cuTensorMapEncodeTiled``
    (`cu` is ``cuda.bindings.driver``): the enum fields as the driver's enum members, the
    arrays as lists of ``cuuint64_t`` / ``cuuint32_t`` (the bindings refuse plain ints)."""
    return (
        cu.CUtensorMapDataType(call.data_type),
        call.rank,
        call.address,
        [cu.cuuint64_t(d) for d in call.global_dims],
        # A rank-1 map has no strides, but the bindings pass an empty list as NULL and the
        # driver refuses a NULL array (measured on an H200): one stride it never reads.
        [cu.cuuint64_t(s) for s in call.global_strides or (0,)],
        [cu.cuuint32_t(b) for b in call.box_dims],
        [cu.cuuint32_t(e) for e in call.element_strides],
        cu.CUtensorMapInterleave(call.interleave),
        cu.CUtensorMapSwizzle(call.swizzle),
        cu.CUtensorMapL2promotion(call.l2_promotion),
        cu.CUtensorMapFloatOOBfill(call.oob_fill),
    )


def encode_with_driver(call: EncodeCall) -> bytes:
    """The 128 bytes the CUDA driver encodes for `call` (`cuda.CudaError` if it refuses)."""
    cu = cuda.driver()
    result = cu.cuTensorMapEncodeTiled(*driver_arguments(call, cu))
    tensor_map = cuda.check(result, "encoding a tensor map (cuTensorMapEncodeTiled)")
    # CUtensorMap.opaque: its 128 bytes as 16 little-endian 64-bit words.
    return struct.pack("<16Q", *(int(word) for word in tensor_map.opaque))


class HostTensorMap:
    """One encoded map in a host buffer whose `address` is a multiple of `MAP_ALIGN`."""

    __slots__ = ("_storage", "address")

    def __init__(self, data: bytes) -> None:
        assert len(data) == MAP_BYTES, len(data)
        # ctypes arrays promise only their element's alignment: over-allocate and start
        # at the first multiple of MAP_ALIGN inside.
        self._storage = (ctypes.c_ubyte * (MAP_BYTES + MAP_ALIGN - 1))()
        base = ctypes.addressof(self._storage)
        self.address = base + (-base % MAP_ALIGN)
        ctypes.memmove(self.address, data, MAP_BYTES)

    def data(self) -> bytes:
        """The map's 128 bytes."""
        return ctypes.string_at(self.address, MAP_BYTES)


class TensorMapCache:
    """Encoded maps by (pointer, description), at most `capacity` of them (oldest dropped)."""

    def __init__(self, encode: Encoder = encode_with_driver, capacity: int = DEFAULT_CAPACITY):
        self._encode = encode
        self._capacity = capacity
        self._maps: dict[tuple[int, TmaTensorMap], HostTensorMap] = {}
        self._lock = threading.Lock()  # one encode per key, and eviction, across threads

    def __len__(self) -> int:
        return len(self._maps)

    def get(self, kernel: str, param: str, pointer: int, desc: TmaTensorMap) -> HostTensorMap:
        """The map of `desc` over the tensor at `pointer`, encoded on first use;
        `TensorMapError` naming `kernel` and `param` if it cannot be built."""
        key = (pointer, desc)
        found = self._maps.get(key)
        if found is not None:
            return found
        with self._lock:
            found = self._maps.get(key)
            if found is None:
                found = HostTensorMap(self._encoded(kernel, param, pointer, desc))
                if len(self._maps) >= self._capacity:
                    del self._maps[next(iter(self._maps))]
                self._maps[key] = found
        return found

    def for_param(
        self, kernel: str, param: TensorMapParam, pointer: int, values: Mapping[str, int]
    ) -> HostTensorMap:
        """The map `param`'s recipe describes at the launch's run-time `values`, over the
        tensor at `pointer` (its `tensor`'s base)."""
        try:
            desc = param.describe(values)
        except TmaDescriptorError as e:
            raise TensorMapError(f"{_where(kernel, param.name)}: {e}") from None
        return self.get(kernel, param.name, pointer, desc)

    def _encoded(self, kernel: str, param: str, pointer: int, desc: TmaTensorMap) -> bytes:
        where = _where(kernel, param)
        try:
            desc.check_global_address(pointer)
        except TmaDescriptorError as e:
            raise TensorMapError(f"{where}: {e}") from None
        try:
            data = self._encode(EncodeCall.of(desc, pointer))
        except cuda.NoDriverError:
            raise
        except cuda.CudaError as e:
            raise TensorMapError(
                f"{where}: the driver refused its tensor map (dims {desc.global_dims}, byte "
                f"strides {desc.global_strides}, box {desc.box_dims}, {desc.dtype.name}, "
                f"swizzle {desc.swizzle.name}): {e}",
                e.code,
            ) from None
        if len(data) != MAP_BYTES:
            raise TensorMapError(f"{where}: the encoder gave {len(data)} bytes, not {MAP_BYTES}")
        return data


# The process's maps: every kernel's launch function keeps its maps here
# (`cutec.runtime.launcher.build_launcher`).
TENSOR_MAPS = TensorMapCache()


def _where(kernel: str, param: str) -> str:
    return f"{kernel}: parameter '{param}'"
