"""The 64-bit GMMA shared-memory descriptor of wgmma, and the smem layouts it can describe.

Bit fields (CuTe's arch/mma_sm90_desc.hpp, PTX ISA "matrix descriptor"), byte
quantities stored without their 4 low bits:

    [0,14)  start address >> 4     [16,30) leading byte offset (LBO) >> 4
    [32,46) stride byte offset (SBO) >> 4     [49,52) base offset
    [62,64) swizzle: none = 0, 128B = 1, 64B = 2, 32B = 3

A descriptor names a "canonical" layout of one operand tile (MN x K, where one
instruction reads K = 256 bits' worth of elements). With T = 128 / bits elements
per 16 bytes and W = 1, 2, 4, 8 for none / 32B / 64B / 128B swizzle, in elements
(mma_traits_sm90_gmma.hpp, make_gmma_desc):

    K-major,  none:     ((8,m),(T,2)) : ((T,SBO),(1,LBO))
    K-major,  swizzled: ((8,m),(T,2)) : ((W*T,SBO),(1,T))
    MN-major, none:     ((T,1,m),(8,k)) : ((1,T,SBO),(T,LBO))
    MN-major, swizzled: ((T,W,m),(8,k)) : ((1,T,LBO),(W*T,SBO))

composed with Swizzle<log2 W, 4, 3> on byte addresses. So LBO is the K step
between core matrices (unused when K-major swizzled) and SBO the MN step, except
MN-major swizzled, where LBO steps MN between swizzle atoms and SBO steps K.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from cutec.layout import Layout
from cutec.layout.algebra import offsets

Swizzle = Literal["none", "32B", "64B", "128B"]
Major = Literal["K", "MN"]

SWIZZLE_CODE: dict[str, int] = {"none": 0, "128B": 1, "64B": 2, "32B": 3}
SWIZZLE_WIDTH: dict[str, int] = {"none": 1, "32B": 2, "64B": 4, "128B": 8}  # W, 16-byte units
_FIELD = (1 << 14) - 1


class GmmaLayoutError(ValueError):
    """A shared-memory layout that no GMMA descriptor describes."""


@dataclass(frozen=True)
class GmmaDescriptor:
    """A wgmma smem descriptor; addresses and offsets in bytes, multiples of 16."""

    start_address: int
    lbo: int
    sbo: int
    swizzle: Swizzle = "none"
    base_offset: int = 0

    def __post_init__(self) -> None:
        for field in ("start_address", "lbo", "sbo"):
            value = getattr(self, field)
            if value % 16 or not 0 <= value >> 4 <= _FIELD:
                raise ValueError(f"{field} {value} is not a multiple of 16 below {16 << 14}")
        if self.swizzle not in SWIZZLE_CODE:
            raise ValueError(f"swizzle {self.swizzle!r} is not one of {list(SWIZZLE_CODE)}")
        if not 0 <= self.base_offset < 8:
            raise ValueError(f"base_offset {self.base_offset} is not in [0, 8)")

    def encode(self) -> int:
        """The 64-bit descriptor value."""
        return (
            (self.start_address >> 4)
            | (self.lbo >> 4) << 16
            | (self.sbo >> 4) << 32
            | self.base_offset << 49
            | SWIZZLE_CODE[self.swizzle] << 62
        )

    @staticmethod
    def decode(value: int) -> GmmaDescriptor:
        """The descriptor whose encode() is `value`."""
        if not 0 <= value < 1 << 64:
            raise ValueError(f"descriptor {value:#x} is not a 64-bit value")
        swizzle = {code: name for name, code in SWIZZLE_CODE.items()}[value >> 62]
        return GmmaDescriptor(
            start_address=(value & _FIELD) << 4,
            lbo=(value >> 16 & _FIELD) << 4,
            sbo=(value >> 32 & _FIELD) << 4,
            swizzle=swizzle,
            base_offset=value >> 49 & 7,
        )


def canonical_gmma_layout(
    major: Major, swizzle: Swizzle, bits: int, mn: int, lbo: int, sbo: int
) -> Layout:
    """The (MN, K) -> element offset layout, before the swizzle, that a descriptor names.

    K is one instruction's 256 bits; `lbo` and `sbo` are in bytes.
    """
    t, w = 128 // bits, SWIZZLE_WIDTH[swizzle]
    lbo_e, sbo_e = lbo * 8 // bits, sbo * 8 // bits
    if major == "K":
        if mn % 8:
            raise GmmaLayoutError(f"K-major GMMA tiles have MN a multiple of 8, got {mn}")
        k_stride = lbo_e if swizzle == "none" else t
        return Layout(((8, mn // 8), (t, 2)), ((w * t, sbo_e), (1, k_stride)))
    if mn % (t * w):
        raise GmmaLayoutError(
            f"MN-major GMMA tiles with {swizzle} swizzle have MN a multiple "
            f"of {t * w} elements, got {mn}"
        )
    k = 2 * t // 8
    if swizzle == "none":
        return Layout(((t, 1, mn // t), (8, k)), ((1, t, sbo_e), (t, lbo_e)))
    return Layout(((t, w, mn // (t * w)), (8, k)), ((1, t, lbo_e), (w * t, sbo_e)))


def swizzle_byte_offset(offset: int, swizzle: Swizzle) -> int:
    """Swizzle<log2 W, 4, 3> on a byte offset: bits [4, 4+log2 W) ^= bits [7, 7+log2 W)."""
    mask = SWIZZLE_WIDTH[swizzle] - 1
    return offset ^ ((offset >> 7) & mask) << 4


def make_gmma_desc(
    layout: Layout, *, major: Major, bits: int, swizzle: Swizzle = "none", start_address: int = 0
) -> GmmaDescriptor:
    """The descriptor of the (MN, K) smem `layout` (in elements, before the swizzle).

    Raises GmmaLayoutError, naming the canonical form, when no LBO/SBO makes the
    canonical layout the same function as `layout`.
    """
    t, w = 128 // bits, SWIZZLE_WIDTH[swizzle]
    mn = int(Layout(layout.shape[0]).size())
    k = int(Layout(layout.shape[1]).size())
    if k != 256 // bits:
        raise GmmaLayoutError(f"a GMMA tile has K = {256 // bits} for {bits}-bit types, got {k}")
    if layout(0, 0) != 0:
        raise GmmaLayoutError("the tile must start at offset 0 (move start_address instead)")
    to_bytes = bits // 8 if bits >= 8 else None
    assert to_bytes, "sub-byte GMMA operands are not supported"
    # Read LBO and SBO off the layout where the canonical form puts them, then check
    # the whole function: a layout is describable iff that canonical layout equals it.
    if major == "K":
        sbo = layout(8, 0) if mn > 8 else 0
        lbo = layout(0, t) if swizzle == "none" else 0
    elif swizzle == "none":
        sbo = layout(t, 0) if mn > t else 0
        lbo = layout(0, 8) if k > 8 else 0
    else:
        lbo = layout(t * w, 0) if mn > t * w else 0
        sbo = layout(0, 8) if k > 8 else 0
    expected = canonical_gmma_layout(major, swizzle, bits, mn, lbo * to_bytes, sbo * to_bytes)
    # The tables first (fast); point by point where the layout has a dynamic stride.
    table = offsets(layout)
    if (table is None or table != offsets(expected)) and any(
        layout(i, j) != expected(i, j) for i in range(mn) for j in range(k)
    ):
        raise GmmaLayoutError(
            f"{layout} is not a canonical {major}-major GMMA layout with {swizzle} swizzle "
            f"for {bits}-bit elements (expected the form {expected})"
        )
    try:
        return GmmaDescriptor(start_address, lbo * to_bytes, sbo * to_bytes, swizzle)
    except ValueError as e:
        raise GmmaLayoutError(f"{layout}: {e}") from e
