"""Thread-value (TV) layouts: the layout half of CuTe's TiledCopy / TiledMMA.

``make_layout_tv`` builds ``(tiler_mn, layout_tv)`` from a thread layout and a
value layout as ``make_tiled_copy`` does (raked_product, right_inverse,
with_shape). ``tv_partition`` is the layout algebra of
``ThrCopy::partition_S/D``: zipped_divide by the tiler, compose the tile mode
with the (thread, value) -> coordinate map, and slice one thread.
The TiledCopy objects themselves live in the atom library and call these.
"""

from __future__ import annotations

from typing import Any

from cutec.layout import inttuple as it
from cutec.layout.algebra import coalesce, composition, right_inverse
from cutec.layout.divide import _repeat_none, raked_product, zipped_divide
from cutec.layout.inttuple import Integer
from cutec.layout.layout import Layout, as_layout, size, slice_and_offset, zip_layout


def make_layout_tv(thr_layout: Any, val_layout: Any) -> tuple[tuple[Integer, ...], Layout]:
    """(tiler_mn, layout_tv): layout_tv = right_inverse(raked_product(thr, val)) as (T, V)."""
    thr_layout, val_layout = as_layout(thr_layout), as_layout(val_layout)
    layout_mn = raked_product(thr_layout, val_layout)  # (m,n) -> (thr_idx, val_idx)
    layout_tv = right_inverse(layout_mn).with_shape((size(thr_layout), size(val_layout)))
    tiler_mn = it.product_each(layout_mn.shape)
    return tiler_mn, layout_tv


def default_atom_layout(num_val: Integer = 1) -> Layout:
    """The (thr, val) -> offset layout of a one-thread copy atom moving num_val values."""
    return Layout((1, num_val), (0, 1))


def tile2thrfrg(tiled: Layout, layout_tv: Layout, atom_ref: Layout, ref2trg: Layout) -> Layout:
    """((TileM,TileN,..),(RestM,..)) -> (Thr,(FrgV,FrgX),(RestM,RestN,..)) through layout_tv."""
    atom_shape = (size(atom_ref, 0), size(atom_ref, 1))
    atom_layout_tv = zipped_divide(layout_tv, atom_shape)  # ((atom_t,atom_v),(rest_t,rest_v))
    trg_layout_tv = composition(atom_layout_tv, (ref2trg, None))
    thrval2mn = coalesce(zip_layout(trg_layout_tv), (1, (1, 1)))  # ((t,rest_t),(v,rest_v))
    tv_tensor = composition(tiled, (thrval2mn, None))  # ((thr,val),(RestM,RestN,..))
    return tv_tensor((None, None), None)


def tidfrg(
    layout: Layout,
    tiler_mn: Any,
    layout_tv: Layout,
    atom_trg: Layout | None = None,
    atom_ref: Layout | None = None,
) -> Layout:
    """TiledCopy::tidfrg_S/D on a layout: (Thr,(FrgV,FrgX),(RestM,RestN,..))."""
    atom_ref = default_atom_layout() if atom_ref is None else atom_ref
    atom_trg = atom_ref if atom_trg is None else atom_trg
    ref2trg = composition(right_inverse(atom_ref), atom_trg)
    return tile2thrfrg(zipped_divide(layout, tiler_mn), layout_tv, atom_ref, ref2trg)


def tv_partition_and_offset(
    layout: Layout,
    tiler_mn: Any,
    layout_tv: Layout,
    thr_idx: Integer,
    atom_trg: Layout | None = None,
    atom_ref: Layout | None = None,
) -> tuple[Layout, Integer]:
    """ThrCopy::partition_S/D on a layout: (thread thr_idx's fragment layout, its offset)."""
    frg = tidfrg(layout, tiler_mn, layout_tv, atom_trg, atom_ref)
    coord = (thr_idx, None, _repeat_none(layout.rank))
    return slice_and_offset(coord, frg)


def tv_partition(
    layout: Layout,
    tiler_mn: Any,
    layout_tv: Layout,
    thr_idx: Integer,
    atom_trg: Layout | None = None,
    atom_ref: Layout | None = None,
) -> Layout:
    """The fragment (CPY,CPY_M,CPY_N,..) of thread thr_idx: CuTe's partition_S/D layout."""
    return tv_partition_and_offset(layout, tiler_mn, layout_tv, thr_idx, atom_trg, atom_ref)[0]
