"""TMA on the CPU (``cp.async.bulk.tensor``: TMA_LOAD and TMA_STORE atoms).

On the CPU a tensor-map parameter's value is the launch's description of the map
(`cutec.atoms.tma.TmaTensorMap`, built and checked against ``cuTensorMapEncodeTiled``'s
rules by the launcher: a description the driver would reject never reaches a kernel)
over the memory of one kernel argument (`TensorMapArgument`). A map bound to that
argument's buffer is a `BoundMap`, the value of ``thread.tensor_map``.

`box` is what one load moves, with the hardware's rules: the box at coordinates
``c`` (innermost first) holds the elements ``c[i] + b[i] * element_strides[i]`` for
``b[i]`` in ``0..ceil(box_dims[i] / element_strides[i])``, dimension 0 fastest,
dense in shared memory; an element outside ``0..global_dims[i]`` in any dimension
is filled (zeros, or NaN with ``NAN_REQUEST_ZERO_FMA``) and counts toward the
transaction bytes like the others. A TFLOAT32 map's load rounds each f32 to tf32
(`arith_fold.tf32_words`), as the H200 does (a tf32 tensor's store map is FLOAT32).
A store writes the box's elements that lie inside ``0..global_dims[i]`` in every
dimension and skips the others (`store_box`). The swizzle permutes 16-byte chunks of the
shared *address* as CuTe's ``Swizzle<B,4,3>`` does: bits 4..4+B-1 are XORed with
bits 7..7+B-1, so the pattern repeats every 1024 bytes (128B swizzle) and a
buffer's pattern starts at its base (buffers sit at multiples of 1024 in the
shared window, `cutec.cpu.wgmma.shared_window`).

A load (`issue`: its checks, the box read when issued, where each byte lands) is
this module's for both backends; each runs it where its thread issues the load
(reference_tma.py, native_tma.py) and hands it to `cutec.cpu.mbarrier.Mbarriers.async_tx`,
which lands it (`Load.land`) when a wait on the mbarrier finds its bytes counted toward
the phase; until then the destination holds 0xFF bytes (`Load.poison`), and a read of
them is reported naming the load (`PendingLoads`). A store reads its box at the bulk
wait that covers it (`cutec.cpu.reference_tma_store`, the interpreter's).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cutec.atoms.tma import (
    TmaDataType,
    TmaDescriptorError,
    TmaInterleave,
    TmaOobFill,
    TmaTensorMap,
)
from cutec.cpu.checks import SharedShadow
from cutec.cpu.reference_memory import Pointer
from cutec.ir.attributes import IntegerAttr
from cutec.ir.core import Operation
from cutec.ir.dialects.arith_fold import tf32_words

# The shared destination of cp.async.bulk.tensor must be 128-byte aligned (PTX ISA).
SHARED_ALIGN = 128

# The NaN fill's bytes, per element size (a quiet NaN of the float type of that size;
# bf16 and f16 share 2 bytes, and 0x7FFF is a NaN in both).
_NAN_BITS = {2: np.uint16(0x7FFF), 4: np.uint32(0x7FC00000), 8: np.uint64(0x7FF8000000000000)}


class TmaError(Exception):
    """A TMA copy that cannot run (the caller locates it at the op)."""


@dataclass(frozen=True)
class TensorMapArgument:
    """A tensor-map parameter's value on the CPU: the map's description and the name of
    the kernel argument (a pointer) whose memory it maps (the launch record's
    `TensorMapParam.tensor`)."""

    desc: TmaTensorMap
    tensor: str


@dataclass(frozen=True)
class BoundMap:
    """A map over a bound argument: what ``thread.tensor_map`` yields on the CPU."""

    name: str
    desc: TmaTensorMap
    base: Pointer

    def check(self) -> None:
        """The driver's rule on the tensor's address, and the map's reach within the
        argument's memory (its farthest element must lie inside the array)."""
        address = int(self.base.buffer.data.ctypes.data) + self.base.offset
        try:
            self.desc.check_global_address(address)
        except TmaDescriptorError as e:
            raise TmaError(f"tensor map '{self.name}': {e}") from None
        if self.desc.interleave != TmaInterleave.NONE:
            raise TmaError(f"tensor map '{self.name}': interleaved maps are not modelled")
        d = self.desc
        last = (d.global_dims[0] - 1) * d.dtype.nbytes + sum(
            (n - 1) * s for n, s in zip(d.global_dims[1:], d.global_strides, strict=True)
        )
        end = self.base.offset + last + d.dtype.nbytes
        if end > self.base.buffer.size:
            raise TmaError(
                f"tensor map '{self.name}' (dims {d.global_dims}, byte strides "
                f"{d.global_strides}) reaches byte {end} of {self.base.buffer.name}, which "
                f"has {self.base.buffer.size} bytes"
            )


def swizzle(offsets: np.ndarray, span: int) -> np.ndarray:
    """Shared byte addresses under the swizzle of `span` bytes (0: none): the 16-byte
    chunk index (bits 4..) XORed with the 128-byte row index (bits 7..), B bits each."""
    if not span:
        return offsets
    mask = span // 16 - 1
    return offsets ^ (((offsets >> 7) & mask) << 4)


def box_elements(m: BoundMap, coords: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """The elements of the box at `coords` (innermost first), in the box's order: the
    byte offset of each in the argument's buffer, and whether it is in bounds."""
    d = m.desc
    assert d.element_strides is not None
    counts = [-(-b // e) for b, e in zip(d.box_dims, d.element_strides, strict=True)]
    # Element coordinates of the box, dimension 0 fastest (C order over reversed dims).
    grids = np.meshgrid(*[np.arange(n) for n in reversed(counts)], indexing="ij")
    inside = np.ones(grids[0].shape, dtype=bool)
    offset = np.zeros(grids[0].shape, dtype=np.int64)
    strides = (d.dtype.nbytes, *d.global_strides)
    for i, g in enumerate(reversed(grids)):
        x = coords[i] + g * d.element_strides[i]
        inside &= (x >= 0) & (x < d.global_dims[i])
        offset += x * strides[i]
    return m.base.offset + offset.reshape(-1), inside.reshape(-1)


def box(m: BoundMap, coords: list[int]) -> np.ndarray:
    """The bytes of the box at `coords` (innermost first), in the box's order: each
    element read from the tensor, or the fill where it is out of bounds."""
    offset, inside = box_elements(m, coords)
    size = m.desc.dtype.nbytes
    out = np.zeros((offset.size, size), dtype=np.uint8)
    if m.desc.oob_fill == TmaOobFill.NAN_REQUEST_ZERO_FMA:
        out[:] = np.array([_NAN_BITS[size]]).view(np.uint8)
    out[inside] = m.base.buffer.data[offset[inside][:, None] + np.arange(size)]
    if m.desc.dtype == TmaDataType.TFLOAT32:
        out = tf32_words(out.reshape(-1).view("<u4")).astype("<u4").view(np.uint8)
    return out.reshape(-1)


def store_box(m: BoundMap, coords: list[int], data: np.ndarray) -> None:
    """Write the box at `coords` from its bytes `data` (in the box's order): the
    elements out of bounds are skipped."""
    offset, inside = box_elements(m, coords)
    size = m.desc.dtype.nbytes
    values = data.reshape(offset.size, size)[inside]
    m.base.buffer.data[offset[inside][:, None] + np.arange(size)] = values


# ------------------------------------------------------------------ a load, for both backends
@dataclass(frozen=True)
class Load:
    """One issued TMA load: the box's bytes (`data`, read when issued) and the byte of the
    destination buffer each lands at (`at`, swizzled), as `issue` made them."""

    op: Operation
    at: np.ndarray
    data: np.ndarray

    @property
    def nbytes(self) -> int:
        """The transaction bytes the load completes on its mbarrier: the whole box."""
        return int(self.data.size)

    @property
    def span(self) -> tuple[int, int]:
        """The destination bytes first..end-1 that the load writes."""
        return int(self.at.min()), int(self.at.max()) + 1

    def chunks(self) -> list[tuple[int, int]]:
        """The destination's runs of bytes (first, bytes): 16-byte chunks, which the
        swizzle permutes (one run without it), for the shared-memory shadow."""
        first = int(self.at[0])
        if int(self.at[-1]) - first + 1 == self.nbytes:  # contiguous: not swizzled
            return [(first, self.nbytes)]
        return [(int(self.at[k]), min(16, self.nbytes - k)) for k in range(0, self.nbytes, 16)]

    def poison(self, dst: np.ndarray) -> None:
        """The destination holds 0xFF bytes (NaN) until the load lands."""
        dst[self.at] = 0xFF

    def land(self, dst: np.ndarray, shadow: SharedShadow | None) -> None:
        """The box lands in the destination (`dst`, its bytes; `shadow`, its shadow)."""
        dst[self.at] = self.data
        for first, n in self.chunks() if shadow is not None else ():
            shadow.land(first, n)


def place(op: Operation, m: object, coords: list[int], buffer: str, shared: bool, size: int,
          offset: int, what: str = "destination"
          ) -> tuple[BoundMap, list[int], np.ndarray]:  # fmt: skip
    """A TMA copy's checks, for both backends (a `TmaError`, located by the caller):
    `op` (a TMA atom) of map `m` (a `BoundMap`, else the operand is no map) at `coords`
    (innermost first, i32 values) with its shared side (`what`: "destination" or
    "source") at byte `offset` of the buffer named `buffer` (`shared`: whether it is
    shared memory; `size`: its bytes). The map, the coordinates as s32 values, and the
    shared byte of each byte of the box (swizzled), in the box's order."""
    if not isinstance(m, BoundMap):
        raise TmaError("the map operand is not a thread.tensor_map")
    d = m.desc
    if len(coords) != d.rank:
        raise TmaError(f"{len(coords)} coordinates for tensor map '{m.name}' of rank {d.rank}")
    bits = op.attributes.get("bits")
    if isinstance(bits, IntegerAttr) and bits.value != d.box_bits:
        raise TmaError(f"the atom moves {bits.value // 8} bytes but the box {d.box_dims} of "
                       f"tensor map '{m.name}' is {d.box_bytes} bytes")  # fmt: skip
    if not shared:
        raise TmaError(f"the TMA {what} {buffer} is not shared memory")
    if offset % SHARED_ALIGN or not 0 <= offset <= size - d.box_bytes:
        raise TmaError(
            f"the TMA {what}, byte {offset} of {buffer} ({size} bytes), must "
            f"be {SHARED_ALIGN}-byte aligned and hold the {d.box_bytes}-byte box"
        )
    m.check()
    at = swizzle(offset + np.arange(d.box_bytes), d.swizzle.span_bytes)
    end = int(at.max()) + 1
    if end > size:
        raise TmaError(f"the swizzled box reaches byte {end} of {buffer}")
    signed = [(c + (1 << 31)) % (1 << 32) - (1 << 31) for c in coords]  # the s32 operands
    return m, signed, at


def issue(op: Operation, m: object, coords: list[int], dst: str, shared: bool, size: int,
          offset: int) -> Load:  # fmt: skip
    """The TMA load `op` (a TMA_LOAD atom) into byte `offset` of the buffer named `dst`,
    checked (`place`), with the box read now."""
    m, signed, at = place(op, m, coords, dst, shared, size, offset)
    return Load(op, at, box(m, signed))


class PendingLoads:
    """The loads of one CTA that have not landed, by destination buffer (any key the
    backend names its buffers by): a read of their bytes is reported naming the load."""

    def __init__(self) -> None:
        self.loads: dict[object, list[Load]] = {}

    def add(self, buffer: object, load: Load) -> None:
        self.loads.setdefault(buffer, []).append(load)

    def remove(self, buffer: object, load: Load) -> None:
        self.loads[buffer].remove(load)

    def message(self, buffer: object, name: str, byte: int, kind: str) -> str | None:
        """The report of a `kind` access ("load" ...) of `byte` of buffer `name` before its
        load landed, or None when no pending load writes that byte."""
        for load in self.loads.get(buffer, ()):
            first, end = load.span
            if first <= byte < end:
                where = load.op.location or load.op.parsed_at
                return (f"{kind} of byte {byte} of {name}, which the TMA load at {where} "
                        "writes, before its mbarrier phase completes")  # fmt: skip
        return None
