"""The box one TMA writes into a shared tile (cutec/atoms/tma_box.py), against CuTe's
construct_tma_gbasis worked by hand for the tutorials' tiles: the MN-major 128-byte
swizzled f16 tile (128, 64) takes boxes of (64, 8) over (m, k), the K-major one a
single box of (64, 128) over (k, m); a batched tensor's third mode is a box extent of 1."""

from __future__ import annotations

import pytest

from cutec.atoms.tma_box import TmaBox, TmaBoxError, tma_box
from cutec.layout import Layout, tile_to_shape
from cutec.layout.symbolic import sym

M, K, L, LD = sym("M"), sym("K"), sym("L"), sym("ld")


def _sw128(major: str) -> Layout:
    """GMMA's 128-byte swizzle atom for f16, without its swizzle: 64 elements x 8 rows."""
    return Layout((64, 8), (1, 64)) if major == "MN" else Layout((8, 64), (64, 1))


@pytest.mark.parametrize(
    ("major", "tile", "stride", "box"),
    [
        ("MN", (128, 64), (1, LD), TmaBox((64, 8), (0, 1))),
        ("MN", (64, 64), (1, LD), TmaBox((64, 64), (0, 1))),
        ("MN", (256, 32), (1, LD), TmaBox((64, 8), (0, 1))),
        ("K", (128, 64), (LD, 1), TmaBox((64, 128), (1, 0))),
        ("K", (256, 64), (LD, 1), TmaBox((64, 256), (1, 0))),
    ],
)
def test_the_tutorials_tiles_take_cutes_boxes(
    major: str, tile: tuple[int, int], stride: tuple, box: TmaBox
) -> None:
    smem = tile_to_shape(_sw128(major), tile)
    assert tma_box(smem, tile, (M, K), stride) == box


def test_a_batched_tensor_keeps_its_batch_mode_as_a_box_extent_of_one() -> None:
    smem = tile_to_shape(_sw128("K"), (128, 64))
    box = tma_box(smem, (128, 64), (M, K, L), (LD, 1, M * LD))
    assert box == TmaBox((64, 128, 1), (1, 0, 2))
    assert box.values == 64 * 128


def test_modes_of_extent_one_or_stride_zero_need_no_coordinate() -> None:
    smem = Layout((32, 16))
    assert tma_box(smem, (32, 16), (M, K, 1), (1, LD, 7)) == TmaBox((32, 16), (0, 1))
    assert tma_box(smem, (32, 16), (M, K, L), (1, LD, 0)) == TmaBox((32, 16), (0, 1))


def test_a_box_longer_than_256_elements_is_refused() -> None:
    with pytest.raises(TmaBoxError, match="at most 256"):
        tma_box(Layout((512, 4)), (512, 4), (M, K), (1, LD))


def test_a_tile_whose_smem_starts_with_no_unit_step_is_refused() -> None:
    # shared offset 1 holds tile coordinate (0, 2): no mode advances by one
    with pytest.raises(TmaBoxError, match="no unit step"):
        tma_box(Layout((4, (2, 4)), (8, (4, 1))), (4, 8), (M, K), (1, LD))


def test_a_shared_layout_of_another_size_is_refused() -> None:
    with pytest.raises(TmaBoxError, match="holds 64 elements"):
        tma_box(Layout((8, 8)), (16, 8), (M, K), (1, LD))
