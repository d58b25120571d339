"""The reference interpreter's memory: buffers, pointers, the trace, values as bytes.

A `Buffer` is the bytes of one memory object (a kernel argument's numpy array,
shared with the caller, or one CTA's shared array); a `Pointer` value is a
buffer, a byte offset, an element type and the address space it is used in.
Values are Python ints (the stored two's-complement form) and floats; this
module turns them into bytes and back with numpy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cutec.ir.attributes import FloatAttr, IntegerAttr
from cutec.ir.core import Operation
from cutec.ir.dialects.arith_fold import int_value, round_float
from cutec.ir.dialects.gpu import PointerType
from cutec.ir.traits import AddressSpace
from cutec.ir.types import FloatType, IndexType, IntegerType, Type, bit_width

Dim3 = tuple[int, int, int]


class AccessError(Exception):
    """A memory access out of bounds, misaligned or through the wrong space; names
    the op's location, the thread and the block."""

    def __init__(self, message: str, op: Operation, thread: Dim3, block: Dim3) -> None:
        loc = op.location or op.parsed_at
        where = f"{loc}: " if loc is not None else ""
        super().__init__(f"{where}{message} ({op.name}, thread {thread}, block {block})")
        self.op, self.thread, self.block = op, thread, block


class InterpreterError(Exception):
    """The kernel did something the interpreter cannot give a meaning to (a divergent
    barrier, a division by zero, an op it does not know)."""


@dataclass(eq=False)
class Buffer:
    """Bytes of one memory object: an argument's array or a CTA's shared array."""

    name: str
    space: AddressSpace
    data: np.ndarray  # uint8, shares memory with the caller's array for arguments

    @property
    def size(self) -> int:
        return int(self.data.size)


@dataclass(eq=False)
class RemoteBuffer(Buffer):
    """Shared buffer `local` of the cluster's CTA `owner` as another CTA reaches it
    through ``thread.mapa``: the same bytes, in the shared::cluster space."""

    local: Buffer = field(default=None)  # type: ignore[assignment]
    owner: Any = None  # the owning CTA (the interpreter's _Cta)


@dataclass(frozen=True)
class Pointer:
    buffer: Buffer
    offset: int  # bytes from the buffer's start
    element: Type
    space: AddressSpace


@dataclass(frozen=True)
class Access:
    """One memory access of one thread (``trace=True``)."""

    block: Dim3
    thread: Dim3
    op: Operation
    kind: str  # "load", "store" or "atomic" (a read-modify-write)
    buffer: str
    offset: int  # bytes
    nbytes: int


@dataclass
class Run:
    """What a run leaves: the trace of every access (with ``trace=True``)."""

    trace: list[Access] = field(default_factory=list)

    def elements(self, buffer: str, kind: str, itemsize: int) -> dict[tuple[Dim3, Dim3], list[int]]:
        """(block, thread) -> the indices of the `itemsize`-byte elements it touched
        in `buffer` by `kind` ("load" or "store"), in program order."""
        out: dict[tuple[Dim3, Dim3], list[int]] = {}
        for a in self.trace:
            if a.buffer == buffer and a.kind == kind:
                first = a.offset // itemsize
                touched = range(first, first + max(a.nbytes // itemsize, 1))
                out.setdefault((a.block, a.thread), []).extend(touched)
        return out

    def store_counts(self, buffer: str, size: int, itemsize: int) -> np.ndarray:
        """How many times each of `buffer`'s `size` elements was stored to (all ones:
        every output element written exactly once)."""
        counts = np.zeros(size, dtype=np.int64)
        for indices in self.elements(buffer, "store", itemsize).values():
            np.add.at(counts, indices, 1)
        return counts


# --------------------------------------------------------------------------- bytes <-> values

INT_DTYPES = {1: np.uint8, 8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
FLOAT_DTYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "tf32": np.float32}


def scalar_bytes(t: Type) -> int:
    return max(bit_width(t) // 8, 1) if not isinstance(t, PointerType) else 8


def decode(raw: np.ndarray, t: Type) -> Any:
    if isinstance(t, IntegerType | IndexType):
        return int_value(int(raw.view(INT_DTYPES[bit_width(t)])[0]), t)
    if isinstance(t, FloatType):
        if t.kind == "bf16":
            bits = np.uint32(raw.view(np.uint16)[0]) << np.uint32(16)
            return float(np.array([bits], dtype=np.uint32).view(np.float32)[0])
        if t.kind in FLOAT_DTYPES:
            return float(raw.view(FLOAT_DTYPES[t.kind])[0])
    raise NotImplementedError(f"the reference interpreter cannot load {t}")


def encode(value: Any, t: Type) -> np.ndarray:
    if isinstance(t, IntegerType | IndexType):
        width = bit_width(t)
        unsigned = int(value) & ((1 << max(width, 8)) - 1)
        return np.array([unsigned], dtype=np.uint64).view(np.uint8)[: max(width // 8, 1)]
    if isinstance(t, FloatType):
        if t.kind == "bf16":
            bits = np.array([value], dtype=np.float32).view(np.uint32)[0] >> np.uint32(16)
            return np.array([bits], dtype=np.uint16).view(np.uint8)
        if t.kind in FLOAT_DTYPES:
            return np.array([value], dtype=FLOAT_DTYPES[t.kind]).view(np.uint8)
    raise NotImplementedError(f"the reference interpreter cannot store {t}")


def to_attr(value: Any, t: Type) -> IntegerAttr | FloatAttr | None:
    if isinstance(t, IntegerType | IndexType) and isinstance(value, int):
        return IntegerAttr(value, t)
    if isinstance(t, FloatType) and isinstance(value, float):
        return FloatAttr(value, t)
    return None


def argument(value: Any, t: Type, name: str) -> Any:
    if isinstance(t, PointerType):
        if not isinstance(value, np.ndarray):
            raise TypeError(f"argument {name} ({t}) must be a numpy array")
        flat = value.reshape(-1, order="A")
        if value.size and not np.shares_memory(flat, value):  # (an empty array shares none)
            raise TypeError(f"argument {name}: pass a contiguous array")
        return Pointer(Buffer(name, t.space, flat.view(np.uint8)), 0, t.element, t.space)
    if isinstance(t, FloatType):
        return round_float(float(value), t)
    if isinstance(t, IntegerType | IndexType):
        return int_value(int(value), t)
    raise TypeError(f"argument {name}: cannot pass a value of type {t}")
