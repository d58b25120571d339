"""The layout algebra as the cute view ops use it, swizzled layouts included.

CuTe's views of a tensor whose layout is ``Sw o off o B`` act on B and keep the
swizzle outside; these functions do that for local_tile, local_partition,
slices and divides. The view ops' `infer_layout` methods (cute_tensor.py) call
them; run-time coordinates enter as 0, since they move a view's base only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cutec.ir.dialects.cute_types import DYN, LayoutSpec
from cutec.layout import ComposedLayout, Layout
from cutec.layout import divide as LD
from cutec.layout import local_partition as _local_partition
from cutec.layout import local_tile as _local_tile
from cutec.layout.inttuple import transform_leaf
from cutec.layout.layout import slice_layout as _slice_layout
from cutec.layout.swizzle import composed_slice_and_offset
from cutec.layout.symbolic import Integer, is_static

AnyLayout = Layout | ComposedLayout


def spec_of(layout: AnyLayout) -> LayoutSpec:
    """The type-level view of a layout: SymInt leaves become ``?``.

    A swizzled view sliced at a run-time coordinate has a dynamic offset inside
    its composition; the type keeps offset 0 there (the lowering recomputes the
    offset from the same algebra, as it does every dynamic leaf).
    """
    if isinstance(layout, ComposedLayout) and not is_static(layout.offset):
        layout = ComposedLayout(layout.layout_a, 0, layout.layout_b)
    return LayoutSpec.of(layout)


def local_tile(layout: AnyLayout, tiler: Any, coord: Any, proj: Any = None) -> AnyLayout:
    """CuTe local_tile: zipped_divide by tiler, index the rest mode with coord."""
    if isinstance(layout, ComposedLayout):
        inner = _local_tile(layout.layout_b, tiler, coord, proj)
        return ComposedLayout(layout.layout_a, layout.offset, inner)
    return _local_tile(layout, tiler, coord, proj)


def local_partition(layout: AnyLayout, thr: Layout, index: Any, proj: Any = None) -> AnyLayout:
    """CuTe local_partition: the elements thread `index` of `thr` owns."""
    if isinstance(layout, ComposedLayout):
        inner = _local_partition(layout.layout_b, thr, index, proj)
        return ComposedLayout(layout.layout_a, layout.offset, inner)
    return _local_partition(layout, thr, index, proj)


def slice_view(layout: AnyLayout, coord: Any) -> AnyLayout:
    """t(coord) with '_' modes kept."""
    if isinstance(layout, ComposedLayout):
        return composed_slice_and_offset(coord, layout)[0]
    return _slice_layout(coord, layout)


def divide(layout: AnyLayout, kind: str, tiler: Any) -> AnyLayout:
    """CuTe's {logical,zipped,tiled,flat}_divide(layout, tiler); a swizzle stays outside."""
    fn = {
        "logical": LD.logical_divide,
        "zipped": LD.zipped_divide,
        "tiled": LD.tiled_divide,
        "flat": LD.flat_divide,
    }[kind]
    if isinstance(layout, ComposedLayout):
        return ComposedLayout(layout.layout_a, layout.offset, fn(layout.layout_b, tiler))
    return fn(layout, tiler)


def zero_dynamic(t: Any) -> Any:
    """A coordinate for the algebra: its run-time (``?``) leaves are 0."""
    return transform_leaf(t, lambda x: 0 if x is DYN else x)


def lift_view_and_offset(
    fn: Callable[[Layout], tuple[AnyLayout, Integer]], layout: AnyLayout
) -> tuple[AnyLayout, Integer]:
    """A view with its offset, lifted through Sw o off o B like `lift_view`.

    The view acts on B; its offset joins the composition's, inside the swizzle:
    element i is Sw(off + o + B'(i)), so the returned outer offset is 0.
    """
    if isinstance(layout, ComposedLayout):
        inner, offset = fn(layout.layout_b)
        return ComposedLayout(layout.layout_a, layout.offset + offset, inner), 0
    return fn(layout)


def lift_view(fn: Callable[[Layout], AnyLayout], layout: AnyLayout) -> AnyLayout:
    """Apply a view to B of a swizzled layout Sw o off o B (as CuTe's composition does)."""
    if isinstance(layout, ComposedLayout):
        return ComposedLayout(layout.layout_a, layout.offset, fn(layout.layout_b))
    return fn(layout)
