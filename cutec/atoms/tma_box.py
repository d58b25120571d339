"""The box one TMA moves for a shared-memory tile: CuTe's TMA basis (make_tma_atom).

A TMA copy writes its box to shared memory densely, innermost box dimension
first (then the swizzle permutes 16-byte chunks). So a shared tile fixes the box:
walk the tile's shared memory in offset order (the right inverse of its layout,
without the swizzle) and read off which tile coordinate each offset holds. The
longest prefix of that walk in which every step advances one tensor mode by one
element is what one TMA can write; its modes are the box's dimensions
(CuTe's ``construct_tma_gbasis``). Take the MN-major 128-byte-swizzled f16 tile
(128, 64) = ((64,2),(8,8)):((1,512),(64,1024)): offsets 0..63 step m by 1, then
64..511 step k by 1 (8 rows), then offset 512 is m = 64, a step of 64 in m, which
ends the box: (64, 8) over (m, k), sixteen TMAs per tile. The K-major tile
((8,16),(64,1)):((64,512),(1,0)) walks k (64) and then all 128 rows of m: one TMA
with box (64, 128) over (k, m).

Tensor modes the box does not walk become box dimensions of extent 1 (a batched
tensor's batch mode: the map stays 3-D, so a tile past the end of one batch
reads zeros, never the next batch), except modes of extent 1 or stride 0, which
need no coordinate. A map has at most 5 dimensions and a box at most 256
elements per dimension (cutec/atoms/tma.py checks the rest of the driver's rules).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cutec.layout import Layout, coalesce, composition, right_inverse
from cutec.layout import inttuple as it

MAX_RANK = 5
MAX_BOX_DIM = 256
# The tile's coordinate mode k is digit k of an integer in this radix, as the IR's
# coordinate tensors encode CuTe's basis strides E<k> (cutec/ir/dialects/cute_coord.py).
_RADIX = 2**32


class TmaBoxError(ValueError):
    """A shared tile that no TMA box writes (the message says why)."""


@dataclass(frozen=True)
class TmaBox:
    """One TMA's box: extents innermost first, and the tensor mode each one walks."""

    dims: tuple[int, ...]
    modes: tuple[int, ...]

    @property
    def values(self) -> int:
        """Elements one TMA moves (CuTe's NumValSrc of the TMA atom)."""
        return it.product(self.dims)

    @property
    def rank(self) -> int:
        return len(self.dims)


def tma_box(
    smem: Layout, tile: tuple[int, ...], shape: tuple[Any, ...], stride: tuple[Any, ...]
) -> TmaBox:
    """The box one TMA writes into the shared tile `smem` (its layout without the swizzle,
    over the tile's coordinates), for the tile `tile` of a tensor with flat `shape` and
    `stride` (elements; leaves may be symbolic). `TmaBoxError` when there is none."""
    if len(tile) > len(shape):
        raise TmaBoxError(f"the tile {tile} has more modes than the tensor's {len(shape)}")
    if it.product(tile) != smem.size():
        raise TmaBoxError(
            f"the shared layout holds {smem.size()} elements but the tile {tile} has "
            f"{it.product(tile)}"
        )
    tile_coords = Layout(tile, tuple(_RADIX**k for k in range(len(tile))))
    walk = coalesce(composition(tile_coords, right_inverse(smem)))
    dims: list[int] = []
    modes: list[int] = []
    for extent, step in zip(it.wrap(walk.shape), it.wrap(walk.stride), strict=True):
        mode, scale = _digit(step)
        if scale != 1:
            break
        dims.append(extent)
        modes.append(mode)
    if not dims:
        raise TmaBoxError(
            f"the shared layout {smem} starts with no unit step of a tile mode: no TMA "
            "box writes it (does the tile's contiguous mode match the tensor's?)"
        )
    for k, (extent, step) in enumerate(zip(shape, stride, strict=True)):
        if k in modes or extent == 1 or step == 0:
            continue
        dims.append(1)
        modes.append(k)
    box = TmaBox(tuple(dims), tuple(modes))
    if box.rank > MAX_RANK:
        raise TmaBoxError(
            f"a TMA box has at most {MAX_RANK} dimensions; this tile needs {box.rank} "
            f"(box {box.dims} over tensor modes {box.modes})"
        )
    for extent in box.dims:
        if extent > MAX_BOX_DIM:
            raise TmaBoxError(
                f"a TMA box dimension is at most {MAX_BOX_DIM} elements; this tile's box is "
                f"{box.dims} (a smaller tile, or a swizzle that splits the mode)"
            )
    return box


def _digit(step: int) -> tuple[int, int]:
    """(k, a) for the encoded step ``a * E<k>``; (-1, 0) for a step of 0."""
    if step == 0:
        return -1, 0
    k = 0
    while step % _RADIX == 0:
        step //= _RADIX
        k += 1
    if step >= _RADIX:  # two modes at once: no single tensor mode advances
        return k, 0
    return k, step
