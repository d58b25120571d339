"""What a TMA tensor map describes, checked before the driver ever sees it.

A Hopper TMA copy (`cp.async.bulk.tensor`) names a *tensor map*: a 128-byte
opaque object the host builds with ``cuTensorMapEncodeTiled``. This module is
the description of that call's arguments and the driver's rules for them
(CUDA driver API, "Tensor Map Object Management"): `check_box` the rules on
what one TMA moves, `check_global` those on the tensor. The runtime encodes the
128 bytes (cutec/runtime/tensor_map.py).

Dimension order is the driver's: index 0 is the innermost (contiguous)
dimension. For a row-major ``R x C`` matrix, ``global_dims = (C, R)`` and
``global_strides = (C * elem_bytes,)``: strides are in bytes and exist only for
dimensions 1..rank-1 (dimension 0 is contiguous by definition).

The box is what one TMA moves: ``prod(ceil(box_dims[i] / element_strides[i]))``
elements, which is the ``NumBitsPerTMA / elem_bits`` of CuTe's TMA Copy_Traits
(`box_bits`) and the byte count an mbarrier's ``expect_tx`` must announce
(`box_bytes`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

MAX_RANK = 5
MAX_BOX_DIM = 256
MAX_ELEMENT_STRIDE = 8
MAX_GLOBAL_DIM = 1 << 32
MAX_GLOBAL_STRIDE = 1 << 40  # exclusive


class TmaDescriptorError(ValueError):
    """A tensor-map description the driver would reject (message says why)."""


class TmaDataType(enum.Enum):
    """``CUtensorMapDataType``: value is the driver enum; `nbytes` the element size.

    The packed sub-byte types (16U4/16U6) are not modelled.
    """

    UINT8 = (0, 1)
    UINT16 = (1, 2)
    UINT32 = (2, 4)
    INT32 = (3, 4)
    UINT64 = (4, 8)
    INT64 = (5, 8)
    FLOAT16 = (6, 2)
    FLOAT32 = (7, 4)
    FLOAT64 = (8, 8)
    BFLOAT16 = (9, 2)
    FLOAT32_FTZ = (10, 4)
    TFLOAT32 = (11, 4)
    TFLOAT32_FTZ = (12, 4)

    @property
    def cu_value(self) -> int:
        """The ``CU_TENSOR_MAP_DATA_TYPE_*`` integer."""
        return self.value[0]

    @property
    def nbytes(self) -> int:
        """Bytes per element."""
        return self.value[1]

    @property
    def is_float(self) -> bool:
        """Whether NaN out-of-bounds fill is allowed for this type."""
        return self.name.startswith(("FLOAT", "BFLOAT", "TFLOAT"))


# cutec element type names -> tensor-map data type (the integer types are
# moved as raw bits, so signed 8/16-bit map to the unsigned codes).
TMA_DTYPE_OF: dict[str, TmaDataType] = {
    "u8": TmaDataType.UINT8,
    "s8": TmaDataType.UINT8,
    "e4m3": TmaDataType.UINT8,
    "e5m2": TmaDataType.UINT8,
    "u16": TmaDataType.UINT16,
    "s16": TmaDataType.UINT16,
    "u32": TmaDataType.UINT32,
    "s32": TmaDataType.INT32,
    "u64": TmaDataType.UINT64,
    "s64": TmaDataType.INT64,
    "f16": TmaDataType.FLOAT16,
    "bf16": TmaDataType.BFLOAT16,
    "f32": TmaDataType.FLOAT32,
    "tf32": TmaDataType.TFLOAT32,
    "f64": TmaDataType.FLOAT64,
}


def map_dtype(element: str, store: bool) -> TmaDataType:
    """The data type of a map over a tensor of `element`s: TMA_DTYPE_OF, except that a
    store map of a tf32 tensor is FLOAT32. A TFLOAT32 map's loads round to tf32 (measured
    on an H200: what gemm's Hopper body wants); whether its stores convert is not
    measured, so stores write the f32 lanes' bits, as the CPU model copies them."""
    if element == "tf32" and store:
        return TmaDataType.FLOAT32
    return TMA_DTYPE_OF[element]


class TmaInterleave(enum.IntEnum):
    """``CUtensorMapInterleave``."""

    NONE = 0
    B16 = 1
    B32 = 2


class TmaSwizzle(enum.IntEnum):
    """``CUtensorMapSwizzle`` (the Hopper subset: 16-byte swizzle atoms)."""

    NONE = 0
    B32 = 1
    B64 = 2
    B128 = 3

    @property
    def span_bytes(self) -> int:
        """Bytes one swizzle pattern spans; 0 for NONE."""
        return {0: 0, 1: 32, 2: 64, 3: 128}[int(self)]

    @property
    def cute_swizzle(self) -> tuple[int, int, int]:
        """CuTe's ``Swizzle<B,M,S>`` on byte offsets that this mode writes.

        16-byte chunks (M = 4) are XOR-permuted within a span of 2^B chunks,
        keyed by the row bits 3 above them (S = 3): B = log2(span / 16).
        """
        return ({0: 0, 1: 1, 2: 2, 3: 3}[int(self)], 4, 3)

    @classmethod
    def from_cute(cls, b: int, m: int, s: int) -> TmaSwizzle:
        """The mode for CuTe's ``Swizzle<B,M,S>`` on byte offsets (M = 4, S = 3)."""
        if m != 4 or s != 3 or not 0 <= b <= 3:
            raise TmaDescriptorError(
                f"Swizzle<{b},{m},{s}> has no TMA mode; supported (byte offsets): "
                "Swizzle<0,4,3> NONE, <1,4,3> 32B, <2,4,3> 64B, <3,4,3> 128B"
            )
        return cls(b)


class TmaL2Promotion(enum.IntEnum):
    """``CUtensorMapL2promotion``."""

    NONE = 0
    L2_64B = 1
    L2_128B = 2
    L2_256B = 3


class TmaOobFill(enum.IntEnum):
    """``CUtensorMapFloatOOBfill``: NONE fills out-of-bounds elements with zeros."""

    NONE = 0
    NAN_REQUEST_ZERO_FMA = 1


# A TMA store writes global memory in whole 16-byte chunks: where the innermost extent
# ends inside a chunk, a box that reaches past it also writes the rest of that chunk,
# past the tensor (measured on an H200; triton-lang/triton#11583 reports it on an H100).
STORE_CHUNK_BYTES = 16


def store_overrun(global_dims: tuple[int, ...], elem_bytes: int) -> str | None:
    """Why a TMA store through a map of extents `global_dims` could write past the
    tensor, or None: its innermost extent is no multiple of 16 bytes."""
    inner = global_dims[0] * elem_bytes
    if inner % STORE_CHUNK_BYTES == 0:
        return None
    return (
        f"a TMA store writes whole {STORE_CHUNK_BYTES}-byte chunks, and the innermost extent "
        f"({global_dims[0]} elements, {inner} bytes) is no multiple of {STORE_CHUNK_BYTES} "
        "bytes: a box past it would overwrite the memory after the tensor's rows"
    )


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class TmaTensorMap:
    """The arguments of ``cuTensorMapEncodeTiled`` (all but the addresses).

    Construction validates every rule the driver documents and raises
    `TmaDescriptorError` naming the violated rule and the allowed values.
    """

    dtype: TmaDataType
    global_dims: tuple[int, ...]
    global_strides: tuple[int, ...]
    box_dims: tuple[int, ...]
    element_strides: tuple[int, ...] | None = None
    interleave: TmaInterleave = TmaInterleave.NONE
    swizzle: TmaSwizzle = TmaSwizzle.NONE
    l2_promotion: TmaL2Promotion = TmaL2Promotion.NONE
    oob_fill: TmaOobFill = TmaOobFill.NONE

    def __post_init__(self) -> None:
        if self.element_strides is None:
            object.__setattr__(self, "element_strides", (1,) * len(self.global_dims))
        self._validate()

    @property
    def rank(self) -> int:
        """Number of tensor dimensions (1..5)."""
        return len(self.global_dims)

    @property
    def box_elements(self) -> int:
        """Elements one TMA moves: prod(ceil(box_dims[i] / element_strides[i]))."""
        n = 1
        assert self.element_strides is not None
        for box, step in zip(self.box_dims, self.element_strides, strict=True):
            n *= _ceil_div(box, step)
        return n

    @property
    def box_bytes(self) -> int:
        """Shared-memory bytes one TMA writes: the mbarrier ``expect_tx`` count."""
        return self.box_elements * self.dtype.nbytes

    @property
    def box_bits(self) -> int:
        """CuTe's ``NumBitsPerTMA``: the value-mode size of the TMA copy atom."""
        return self.box_bytes * 8

    def check_global_address(self, address: int) -> None:
        """Raise unless `address` has the alignment the driver demands (16 B; 32 B interleaved)."""
        align = 32 if self.interleave == TmaInterleave.B32 else 16
        if address % align:
            raise TmaDescriptorError(
                f"TMA global address 0x{address:x} must be {align}-byte aligned"
            )

    def _validate(self) -> None:
        if not isinstance(self.dtype, TmaDataType):
            raise TmaDescriptorError(
                f"TMA dtype must be a TmaDataType, one of {[t.name for t in TmaDataType]}"
            )
        assert self.element_strides is not None
        check_global(self.global_dims, self.global_strides, self.interleave)
        if len(self.box_dims) != self.rank:
            raise TmaDescriptorError(
                f"TMA box_dims needs {self.rank} values (one per dim), got {len(self.box_dims)}"
            )
        check_box(
            self.dtype, self.box_dims, self.element_strides, self.interleave, self.swizzle,
            self.oob_fill,
        )  # fmt: skip


def check_box(
    dtype: TmaDataType,
    box_dims: tuple[int, ...],
    element_strides: tuple[int, ...],
    interleave: TmaInterleave = TmaInterleave.NONE,
    swizzle: TmaSwizzle = TmaSwizzle.NONE,
    oob_fill: TmaOobFill = TmaOobFill.NONE,
) -> None:
    """The driver's rules on what one TMA moves, which hold whatever the tensor's extents:
    the rank (that of `box_dims`), the box, the element strides, the inner box bytes
    against the swizzle, interleave and fill; else `TmaDescriptorError`."""
    rank = len(box_dims)
    fail = TmaDescriptorError
    if not 1 <= rank <= MAX_RANK:
        raise fail(f"TMA rank must be 1..{MAX_RANK}, got {rank}")
    if interleave != TmaInterleave.NONE and rank < 3:
        raise fail(f"interleaved TMA needs rank >= 3, got {rank}")
    if len(element_strides) != rank:
        raise fail(
            f"TMA element_strides needs {rank} values (one per dim), got {len(element_strides)}"
        )
    for i, b in enumerate(box_dims):
        if not 0 < b <= MAX_BOX_DIM:
            raise fail(f"TMA box_dims[{i}] = {b} must be in 1..{MAX_BOX_DIM}")
    for i, e in enumerate(element_strides):
        if not 0 < e <= MAX_ELEMENT_STRIDE:
            raise fail(f"TMA element_strides[{i}] = {e} must be in 1..{MAX_ELEMENT_STRIDE}")
    inner_bytes = box_dims[0] * dtype.nbytes
    if inner_bytes % 16:
        raise fail(
            f"TMA inner box dimension is {inner_bytes} bytes "
            f"(box_dims[0] = {box_dims[0]} x {dtype.nbytes} B); it must be a multiple of 16 bytes"
        )
    if interleave == TmaInterleave.NONE:
        span = swizzle.span_bytes
        if span and inner_bytes > span:
            raise fail(
                f"TMA swizzle {swizzle.name} spans {span} bytes but the inner box "
                f"dimension is {inner_bytes} bytes; it must be <= the swizzle span"
            )
    if oob_fill == TmaOobFill.NAN_REQUEST_ZERO_FMA and not dtype.is_float:
        raise fail(f"TMA NaN out-of-bounds fill needs a float dtype, got {dtype.name}")


def check_global(
    global_dims: tuple[int, ...],
    global_strides: tuple[int, ...],
    interleave: TmaInterleave = TmaInterleave.NONE,
) -> None:
    """The driver's rules on the tensor in global memory: as many extents as the box has
    dims (`check_box` bounds the rank), each in 1..2^32, and the byte strides of dims
    1..rank-1, multiples of 16 (32 interleaved) below 2^40, 0 included (the driver takes a
    broadcast dimension; measured on an H200)."""
    rank = len(global_dims)
    fail = TmaDescriptorError
    if not 1 <= rank <= MAX_RANK:
        raise fail(f"TMA rank must be 1..{MAX_RANK}, got {rank}")
    if len(global_strides) != rank - 1:
        raise fail(
            f"TMA global_strides gives the byte strides of dims 1..{rank - 1}: "
            f"expected {rank - 1} values, got {len(global_strides)}"
        )
    for i, d in enumerate(global_dims):
        if not 0 < d <= MAX_GLOBAL_DIM:
            raise fail(f"TMA global_dims[{i}] = {d} must be in 1..2^32")
    stride_align = 32 if interleave == TmaInterleave.B32 else 16
    for i, s in enumerate(global_strides):
        if s < 0 or s % stride_align or s >= MAX_GLOBAL_STRIDE:
            raise fail(
                f"TMA global_strides[{i}] = {s} bytes must be a multiple of "
                f"{stride_align} below 2^40"
            )
