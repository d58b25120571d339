"""Divides, products and tiling of layouts (CuTe's layout.hpp and tensor_impl.hpp).

Tilers are CuTe tilers: a Layout, an integer n (meaning n:_1), ``None`` ('_'),
or a tuple of tilers applied by mode. Results keep CuTe's rank-2 structure:
``logical_divide`` gives ((tile),(rest)) per mode, ``zipped_*`` gathers the tile
modes into mode 0, ``tiled_*`` unpacks the rest modes, ``flat_*`` unpacks both.
"""

from __future__ import annotations

from typing import Any

from cutec.layout import coords as co
from cutec.layout import inttuple as it
from cutec.layout.algebra import coalesce, complement, composition
from cutec.layout.errors import LayoutError
from cutec.layout.inttuple import Coord, Integer, IntTuple
from cutec.layout.layout import (
    Layout,
    LayoutLeft,
    append,
    as_layout,
    by_tiler,
    cosize,
    dice_layout,
    get,
    make_layout,
    make_ordered_layout,
    slice_and_offset,
    zip_layout,
)
from cutec.layout.swizzle import lifts_composed

# --------------------------------------------------------------------------- divide


def _logical_divide_layout(layout: Layout, tiler: Layout) -> Layout:
    return composition(layout, make_layout(tiler, complement(tiler, coalesce(layout).shape)))


@lifts_composed
def logical_divide(layout: Layout, tiler: Any) -> Layout:
    """layout o (tiler, tiler*): per tiled mode ((tile),(rest)) with the tile first."""
    return by_tiler(layout, tiler, _logical_divide_layout)


@lifts_composed
def tile_unzip(layout: Layout, tiler: Any) -> Layout:
    """Gather the rank-2 modes at the terminals of the tiler: ((tiles...),(rests..., others))."""
    return Layout(it.zip2_by(layout.shape, _guide(tiler)), it.zip2_by(layout.stride, _guide(tiler)))


def _guide(tiler: Any) -> Any:
    return tuple(_guide(t) for t in tiler) if isinstance(tiler, tuple | list) else 0


@lifts_composed
def zipped_divide(layout: Layout, tiler: Any) -> Layout:
    """logical_divide gathered into ((TILE_A,TILE_B,...),(a,b,...,x,y))."""
    return tile_unzip(logical_divide(layout, tiler), tiler)


def _unpack(result: Layout, unpack0: bool) -> Layout:
    r0, r1 = it.rank(it.get(result.shape, 0)), it.rank(it.get(result.shape, 1))
    c0 = _repeat_none(r0) if unpack0 else None
    return result(c0, _repeat_none(r1))


def _repeat_none(n: int) -> Any:
    # CuTe's repeat<N>(_) is a bare _ for N == 1.
    return None if n == 1 else (None,) * n


@lifts_composed
def tiled_divide(layout: Layout, tiler: Any) -> Layout:
    """zipped_divide with the rest mode unpacked: ((TILE_A,TILE_B,...),a,b,...,x,y)."""
    return _unpack(zipped_divide(layout, tiler), unpack0=False)


@lifts_composed
def flat_divide(layout: Layout, tiler: Any) -> Layout:
    """zipped_divide with both modes unpacked: (TILE_A,TILE_B,...,a,b,...,x,y)."""
    return _unpack(zipped_divide(layout, tiler), unpack0=True)


def ceil_div_layout(target: IntTuple, tiler: Layout) -> IntTuple:
    """The rest shape of dividing a shape by a tiler layout: shape(complement(tiler, target))."""
    return complement(tiler, target).shape


# --------------------------------------------------------------------------- product


def _logical_product_layout(block: Layout, tiler: Layout) -> Layout:
    rest = complement(block, it.imul(block.size(), cosize(tiler)))
    return make_layout(block, composition(rest, tiler))


@lifts_composed
def logical_product(block: Layout, tiler: Any) -> Layout:
    """(block, block* o tiler): the block repeated as the tiler prescribes, by mode for tuples."""
    return by_tiler(block, tiler, _logical_product_layout)


@lifts_composed
def zipped_product(block: Layout, tiler: Any) -> Layout:
    """logical_product gathered into ((BLK_A,BLK_B,...),(a,b,...,x,y))."""
    return tile_unzip(logical_product(block, tiler), tiler)


@lifts_composed
def tiled_product(block: Layout, tiler: Any) -> Layout:
    """zipped_product with the rest mode unpacked: ((BLK_A,BLK_B,...),a,b,...)."""
    return _unpack(zipped_product(block, tiler), unpack0=False)


@lifts_composed
def flat_product(block: Layout, tiler: Any) -> Layout:
    """zipped_product with both modes unpacked: (BLK_A,BLK_B,...,a,b,...)."""
    return _unpack(zipped_product(block, tiler), unpack0=True)


def _rank_padded_product(block: Any, tiler: Any) -> tuple[Layout, Layout]:
    block, tiler = as_layout(block), as_layout(tiler)
    r = max(block.rank, tiler.rank)
    result = logical_product(append(block, n=r), append(tiler, n=r))
    return get(result, 0), get(result, 1)


@lifts_composed
def blocked_product(block: Any, tiler: Any) -> Layout:
    """Mode-wise (block_i, tiler_i): the block repeated over the tiler, blocks contiguous."""
    b, t = _rank_padded_product(block, tiler)
    return zip_layout(b, t)


@lifts_composed
def raked_product(block: Any, tiler: Any) -> Layout:
    """Mode-wise (tiler_i, block_i): the block repeated over the tiler, interleaved."""
    b, t = _rank_padded_product(block, tiler)
    return zip_layout(t, b)


@lifts_composed
def tile_to_shape(block: Any, trg_shape: IntTuple, ord_shape: Any = LayoutLeft) -> Layout:
    """blocked_product of block with the ordered layout that makes its shape trg_shape."""
    block = as_layout(block)
    r = it.rank(trg_shape)
    if block.rank > r:
        raise LayoutError(
            f"tile_to_shape: rank of {block} exceeds rank of {it.format_tuple(trg_shape)}"
        )
    padded = append(block, n=r)
    block_shape = it.product_each(padded.shape)
    target_shape = it.product_each(trg_shape)
    if it.is_static(target_shape) and not it.is_static(block_shape):
        # CuTe asserts the division at compile time whenever the target is static, which a
        # run-time block extent cannot answer: its static_assert fails to compile.
        raise LayoutError(
            f"tile_to_shape: a static target shape {it.format_tuple(trg_shape)} needs a static "
            f"block shape, and {block} has run-time extents"
        )
    static = it.is_static(target_shape) and it.is_static(block_shape)
    if static and 0 in it.flatten_to_tuple(target_shape):
        raise LayoutError(
            f"tile_to_shape: the target shape {it.format_tuple(trg_shape)} has a zero extent"
        )
    if static and not it.evenly_divides(target_shape, block_shape):
        raise LayoutError(
            f"tile_to_shape: block {block} does not divide the target shape "
            f"{it.format_tuple(trg_shape)}"
        )
    product_shape = it.ceil_div(target_shape, block_shape)
    if ord_shape == LayoutLeft:
        order_layout = Layout(product_shape)
    else:
        order_layout = make_ordered_layout(product_shape, ord_shape)
    return blocked_product(padded, order_layout)


# --------------------------------------------------------------------------- partitioning


def _pad_coord(coord: Coord, r: int) -> Coord:
    if isinstance(coord, tuple):
        if len(coord) > r:
            raise LayoutError(f"coordinate {it.format_tuple(coord)} has more than {r} modes")
        return coord + (None,) * (r - len(coord))
    return coord


def inner_partition(layout: Layout, tiler: Any, coord: Coord) -> tuple[Layout, Integer]:
    """Tile by tiler and index the rest mode with coord: (the tile layout, its offset)."""
    tiled = zipped_divide(layout, tiler)
    r0, r1 = it.rank(it.get(tiled.shape, 0)), it.rank(it.get(tiled.shape, 1))
    return slice_and_offset((_repeat_none(r0), _pad_coord(coord, r1)), tiled)


def outer_partition(layout: Layout, tiler: Any, coord: Coord) -> tuple[Layout, Integer]:
    """Tile by tiler and index the tile mode with coord: (the rest layout, its offset)."""
    tiled = zipped_divide(layout, tiler)
    r0, r1 = it.rank(it.get(tiled.shape, 0)), it.rank(it.get(tiled.shape, 1))
    return slice_and_offset((_pad_coord(coord, r0), _repeat_none(r1)), tiled)


def local_tile_and_offset(
    layout: Layout, tiler: Any, coord: Coord, proj: Any = None
) -> tuple[Layout, Integer]:
    """local_tile returning (layout, offset); proj (a step with X) drops tiler/coord modes."""
    if proj is not None:
        tiler, coord = co.dice(proj, tiler), co.dice(proj, coord)
    return inner_partition(layout, tiler, coord)


def local_tile(layout: Layout, tiler: Any, coord: Coord, proj: Any = None) -> Layout:
    """The tile of ``layout`` at ``coord`` in the grid of tiler-sized tiles (CuTe local_tile)."""
    return local_tile_and_offset(layout, tiler, coord, proj)[0]


def get_flat_coord(layout: Layout, index: Integer) -> Coord:
    """The per-mode coordinate of index in a compact layout (Layout::get_flat_coord)."""
    hier = co.idx2crd(index, layout.shape, layout.stride)
    if isinstance(layout.shape, tuple):
        return tuple(co.crd2idx(c, s) for c, s in zip(hier, layout.shape, strict=True))
    return co.crd2idx(hier, layout.shape)


def local_partition_and_offset(
    layout: Layout, tile: Layout, index: Integer, proj: Any = None
) -> tuple[Layout, Integer]:
    """local_partition returning (layout, offset); proj (a step with X) drops tile modes."""
    if proj is not None:
        tile = dice_layout(proj, tile)
    return outer_partition(layout, it.product_each(tile.shape), get_flat_coord(tile, index))


def local_partition(layout: Layout, tile: Layout, index: Integer, proj: Any = None) -> Layout:
    """The elements of ``layout`` owned by thread ``index`` of the thread layout ``tile``."""
    return local_partition_and_offset(layout, tile, index, proj)[0]
