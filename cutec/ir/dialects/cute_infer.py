"""Result layouts of the cute view ops, from the layout algebra.

One function per op computes the view's layout from the source layout (static
or symbolic) and the op's static parameters; the frontend builder calls them
with SymInt leaves and the kernel's facts, the verifier calls `infer_view`
to recompute a result type whose source is fully static. Run-time coordinates
only move a view's base, so they enter the algebra as 0 where the layout alone
is wanted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cutec.ir.dialects.cute_types import DYN, LayoutSpec
from cutec.layout import ComposedLayout, Layout, LayoutError
from cutec.layout import local_partition as _local_partition
from cutec.layout import local_tile as _local_tile
from cutec.layout.layout import slice_layout as _slice_layout
from cutec.layout.swizzle import composed_slice_and_offset
from cutec.layout.symbolic import is_static

if TYPE_CHECKING:
    from cutec.ir.dialects.cute_base import CuteOp

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
    from cutec.layout import divide as LD

    fn = {
        "logical": LD.logical_divide,
        "zipped": LD.zipped_divide,
        "tiled": LD.tiled_divide,
        "flat": LD.flat_divide,
    }[kind]
    if isinstance(layout, ComposedLayout):
        return ComposedLayout(layout.layout_a, layout.offset, fn(layout.layout_b, tiler))
    return fn(layout, tiler)


def _zero_dynamic(t: Any) -> Any:
    if isinstance(t, tuple):
        return tuple(_zero_dynamic(x) for x in t)
    return 0 if t is DYN else t


def infer_view(op: CuteOp) -> LayoutSpec | None:
    """The result layout a view op must have, when its source layout is static.

    None when the source has dynamic leaves (their facts are the builder's) or
    when the op's inference needs the atom library (partition, retile).
    """
    from cutec.ir.dialects.cute_coord import CoordTensorType
    from cutec.ir.dialects.cute_tensor import DivideOp, LocalPartitionOp, LocalTileOp, SliceOp
    from cutec.ir.dialects.cute_types import TensorType

    src = op.operands[0].type
    if not isinstance(src, TensorType | CoordTensorType) or src.spec.dynamic_count:
        return None
    layout = src.spec.with_values(())
    try:
        if isinstance(op, LocalTileOp):
            tiler, coord = op.attributes["tiler"], op.attributes["coord"]
            proj = op.attributes.get("proj")
            result = local_tile(
                layout,
                tiler.value,
                _zero_dynamic(coord.value),  # type: ignore[attr-defined]
                proj.value if proj is not None else None,
            )  # type: ignore[attr-defined]
        elif isinstance(op, LocalPartitionOp):
            proj = op.attributes.get("proj")
            thr = op.attributes["thr_layout"].layout  # type: ignore[attr-defined]
            result = local_partition(layout, thr, 0, proj.value if proj is not None else None)  # type: ignore[attr-defined]
        elif isinstance(op, DivideOp):
            result = divide(
                layout,
                op.attributes["kind"].value,  # type: ignore[attr-defined]
                op.attributes["tiler"].value,
            )  # type: ignore[attr-defined]
        elif isinstance(op, SliceOp):
            result = slice_view(layout, _zero_dynamic(op.attributes["coord"].value))  # type: ignore[attr-defined]
        else:
            return None
    except (LayoutError, ValueError) as e:
        raise op.error(f"cannot compute the result layout: {e}") from None
    return spec_of(result)
