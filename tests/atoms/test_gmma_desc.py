"""GMMA shared-memory descriptors: bit fields, and which smem layouts they describe."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cutec.atoms.gmma_desc import (
    GmmaDescriptor,
    GmmaLayoutError,
    canonical_gmma_layout,
    make_gmma_desc,
    swizzle_byte_offset,
)
from cutec.layout import Layout

SWIZZLES = ["none", "32B", "64B", "128B"]


@given(
    st.integers(0, (1 << 14) - 1),
    st.integers(0, (1 << 14) - 1),
    st.integers(0, (1 << 14) - 1),
    st.sampled_from(SWIZZLES),
    st.integers(0, 7),
)
def test_encode_decode_round_trip(start: int, lbo: int, sbo: int, swz: str, base: int) -> None:
    desc = GmmaDescriptor(start << 4, lbo << 4, sbo << 4, swz, base)
    assert GmmaDescriptor.decode(desc.encode()) == desc


def test_bit_positions() -> None:
    desc = GmmaDescriptor(start_address=0x400, lbo=1024, sbo=128, swizzle="128B")
    assert desc.encode() == (0x40 | 64 << 16 | 8 << 32 | 1 << 62)
    assert GmmaDescriptor(0, 0, 0, "32B").encode() == 3 << 62
    assert GmmaDescriptor(0, 0, 0, "64B").encode() == 2 << 62


def test_rejects_unaligned_fields() -> None:
    with pytest.raises(ValueError, match="lbo 8 is not a multiple of 16"):
        GmmaDescriptor(0, 8, 0)


def test_cute_k_major_interleave_tile() -> None:
    # tile_to_shape(Layout_K_INTER_Atom<half_t>{}, Shape<_64,_16>): the (8,8):(8,1) atom,
    # tiled down M then K.
    layout = Layout(((8, 8), (8, 2)), ((8, 64), (1, 512)))
    desc = make_gmma_desc(layout, major="K", bits=16)
    assert (desc.lbo, desc.sbo, desc.swizzle) == (1024, 128, "none")


def test_cute_k_major_sw128_tile() -> None:
    # K slice of tile_to_shape(Layout_K_SW128_Atom<half_t>{}, Shape<_64,_64>).
    layout = Layout(((8, 8), (8, 2)), ((64, 512), (1, 8)))
    desc = make_gmma_desc(layout, major="K", bits=16, swizzle="128B")
    assert (desc.lbo, desc.sbo) == (0, 1024)
    with pytest.raises(GmmaLayoutError, match="not a canonical K-major GMMA layout"):
        make_gmma_desc(layout, major="K", bits=16, swizzle="none")


def test_cute_mn_major_sw128_tile() -> None:
    layout = Layout((64, (8, 2)), (1, (64, 512)))
    desc = make_gmma_desc(layout, major="MN", bits=16, swizzle="128B")
    assert (desc.lbo, desc.sbo) == (0, 1024)


def test_mn_major_interleave_tile() -> None:
    # Core matrices of 8 (M) x 8 (K) f16; M blocks 128 bytes apart, K blocks 1024.
    layout = canonical_gmma_layout("MN", "none", 16, 64, lbo=1024, sbo=128)
    assert str(layout) == "((_8,_1,_8),(_8,_2)):((_1,_8,_64),(_8,_512))"
    desc = make_gmma_desc(layout, major="MN", bits=16)
    assert (desc.lbo, desc.sbo) == (1024, 128)


@pytest.mark.parametrize(("bits", "k"), [(32, 8), (16, 16), (8, 32)])
def test_k_major_interleave_for_each_width(bits: int, k: int) -> None:
    layout = canonical_gmma_layout("K", "none", bits, 64, lbo=256, sbo=512)
    assert int(layout.size()) == 64 * k
    assert make_gmma_desc(layout, major="K", bits=bits) == GmmaDescriptor(0, 256, 512)


def test_row_major_tile_is_not_canonical() -> None:
    with pytest.raises(GmmaLayoutError, match="expected the form"):
        make_gmma_desc(Layout((64, 16), (16, 1)), major="K", bits=16)
    with pytest.raises(GmmaLayoutError, match="K = 16"):
        make_gmma_desc(Layout((64, 32), (32, 1)), major="K", bits=16)


def test_swizzle_byte_offset() -> None:
    assert swizzle_byte_offset(0x80, "128B") == 0x90
    assert swizzle_byte_offset(0x80 * 7 + 0x10, "128B") == 0x80 * 7 + (0x10 ^ 0x70)
    assert swizzle_byte_offset(0x80 * 3, "32B") == 0x80 * 3 + 0x10
    assert swizzle_byte_offset(0x1234, "none") == 0x1234
