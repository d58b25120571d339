"""Bounds of global accesses: which modes of a tensor a view may run past.

An access reads or writes the elements of a view, reached from a *bounds root*
through a chain of view ops. The root is a kernel parameter's tensor
(`cute.make_tensor`) or an explicit view of one (`make_tensor(t, layout)`,
`cute.view`), whose shape the user declared. Element i of the view has a
coordinate in the root; it is in bounds when, in every mode k, that coordinate
is below the root's extent E_k.

A chain moves coordinates past an extent only where it *cuts* a mode into
tiles: a cut by T of a mode of extent E leaves a partial last tile unless T
divides E (the `div` facts and `assume`s; `known_divisible`). Everything else a
chain does selects elements of its source (a slice at a coordinate, a thread's
partition of a tile the threads divide, a slice of a tile) or regroups them. So the analysis
follows each mode of each view back to the root mode it runs along (its
*origin*), and a cut that may not divide marks that root mode *partial*:

    view op             cuts                           result modes' origins
    slice               a root mode, at its coordinate  the kept (`_`) modes'
    local_tile          mode j by tiler_j (after step)  tiles: mode j's; rests: none
    divide (integers)   mode j by tiler_j              by kind (logical keeps j)
    local_partition     mode j by thr_layout_j         mode j's
    partition           mode j by the tiled's tile_j   values: none; rests: mode j's
    retile              nothing                        none
    compose             see below                      none

A cut of a mode with no origin (a tile count, a partition's value mode) makes
every mode of the root partial: the guard then tests each coordinate, which is
always sound. A composition whose image may leave its source and a layout tiler
that may not divide it take elements in their own order: `layout_cut` names
them, and the predicate pass refuses them. The coordinates of a tile
(`block.x` in `local_tile(A, tiler, (block.x, _))`) are the launch's to keep
below the number of tiles, as in CuTe: a grid of more CTAs than tiles reads past
a tensor whose tiles are all whole (the CPU backend's bounds check reports it).

`Bounds.partial` is what the `predicate` pass guards; with `Bounds.proven` it
is what `--remarks` says. TMA tensor maps will take their
extents from the same roots. A guard is a register fragment of i1, one per
element of the view it guards (`mask_type`: predicate's and pipeline's).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from cutec.ir.attributes import IntegerAttr
from cutec.ir.core import Operation, OpResult, Value
from cutec.ir.dialects.cute_atom_types import TiledCopyType, TiledMmaType
from cutec.ir.dialects.cute_attrs import UNDERSCORE, LayoutAttr, TupleAttr
from cutec.ir.dialects.cute_tensor import (
    ComposeOp,
    DivideOp,
    LocalPartitionOp,
    LocalTileOp,
    MakeTensorOp,
    PartitionOp,
    RecastOp,
    RetileOp,
    SliceOp,
    ViewOp,
)
from cutec.ir.dialects.cute_types import LayoutSpec, TensorType
from cutec.ir.layout_of import LayoutAnalysis
from cutec.ir.rewrite import constant_value
from cutec.ir.types import IntegerType
from cutec.layout import ComposedLayout, Layout, X, cosize, make_layout, size
from cutec.layout.inttuple import product
from cutec.layout.symbolic import Integer, is_static, known_divisible
from cutec.target import AddressSpace

# The root ops whose shape bounds the accesses of the views made from them.
ROOT_OPS = (MakeTensorOp, ViewOp)


@dataclass(frozen=True)
class Cut:
    """A cut of root mode `mode` (extent `extent`) by `tile` at `op`."""

    mode: int
    extent: Integer
    tile: Integer
    op: Operation


@dataclass
class Bounds:
    """What is known of the coordinates of a view's elements in its root."""

    root: Value  # a make_tensor or view result (or a recast, see `refused`)
    # Top-level modes of the view: the root mode each runs along, or None.
    origins: tuple[int | None, ...]
    # Root modes a cut may take past their extent, with the first such cut.
    partial: dict[int, Cut] = field(default_factory=dict)
    # Root modes cut only by tiles proven to divide them.
    proven: dict[int, Cut] = field(default_factory=dict)
    # A cut of a mode with no origin: every root mode is partial (or None).
    all_partial: Operation | None = None
    # A layout tiler or composition that may take elements past its source, in an
    # order identity-tensor predicates do not follow (or None).
    layout_cut: Operation | None = None


class BoundsAnalysis:
    """`bounds_of(view)` for the global views of one IR (memoised; the IR must not
    change meanwhile)."""

    def __init__(self, la: LayoutAnalysis) -> None:
        self.la = la
        self._found: dict[Value, Bounds] = {}

    def bounds_of(self, view: Value) -> Bounds | None:
        """The bounds of `view`'s elements; None where the chain does not start at a
        root this analysis knows (a register or shared tensor, a block argument)."""
        if view in self._found:
            return self._found[view]
        found = self._compute(view)
        if found is not None:
            self._found[view] = found
        return found

    def root_extents(self, root: Value) -> tuple[Integer, ...]:
        shape = self.la.layout_of(root).shape
        return shape if isinstance(shape, tuple) else (shape,)

    # ------------------------------------------------------------------ the walk
    def _compute(self, view: Value) -> Bounds | None:
        if not isinstance(view, OpResult):
            return None
        op = view.op
        if isinstance(op, (*ROOT_OPS, RecastOp)):
            rank = len(self.root_extents(view))
            return Bounds(view, tuple(range(rank)))
        source = getattr(op, "source", None)
        if not isinstance(source, Value):
            return None
        parent = self.bounds_of(source)
        if parent is None:
            return None
        b = replace(parent, partial=dict(parent.partial), proven=dict(parent.proven))
        extents = self._mode_extents(source)
        if isinstance(op, SliceOp):
            self._slice(op, b, extents)
        elif isinstance(op, LocalTileOp | DivideOp):
            self._tile(op, b, extents)
        elif isinstance(op, LocalPartitionOp):
            thr = op.thr_layout.layout.shape
            tiles = _project(_as_tuple(thr), op.proj)
            self._cut(op, b, extents, tiles)
            b.origins = b.origins[: len(extents)]
        elif isinstance(op, PartitionOp):
            self._cut(op, b, extents, _partition_tile(op))
            b.origins = (None, *b.origins)
        elif isinstance(op, RetileOp):
            b.origins = (None,) * len(self._mode_extents(view))
        elif isinstance(op, ComposeOp):
            image = cosize(op.layout.layout)
            whole = size(Layout(tuple(extents)))
            if not (is_static(whole) and int(image) <= int(whole)):
                b.layout_cut = b.layout_cut or op
            b.origins = (None,) * len(self._mode_extents(view))
        else:
            return None
        return b

    def reordered(self, op: ViewOp) -> tuple[int, ...] | None:
        """The source modes an explicit view takes in its own order, where it is its
        source's elements with the top-level modes reordered (``make_tensor(C,
        select(layout(C), 1, 0))``): a view inside its source. None otherwise."""
        offset = constant_value(op.offset)
        if not (isinstance(offset, IntegerAttr) and offset.value == 0):
            return None
        src, got = self.la.layout_of(op.source), self.la.layout_of(op.result)
        if not (isinstance(src, Layout) and isinstance(got, Layout)):
            return None
        if not (isinstance(src.shape, tuple) and isinstance(got.shape, tuple)):
            return None
        modes = [src[j] for j in range(len(src.shape))]
        order: list[int] = []
        for i in range(len(got.shape)):
            mode = got[i]
            match = [j for j, m in enumerate(modes) if j not in order and m == mode]
            if not match:
                return None
            order.append(match[0])
        return tuple(order) if len(order) == len(modes) else None

    def _mode_extents(self, v: Value) -> list[Integer]:
        shape = self.la.layout_of(v).shape
        return list(shape) if isinstance(shape, tuple) else [shape]

    def _slice(self, op: SliceOp, b: Bounds, extents: list[Integer]) -> None:
        coord = op.coord.value
        coords = _as_tuple(coord)
        kept: list[int | None] = []
        for j, c in enumerate(coords):
            origin = b.origins[j] if j < len(b.origins) else None
            if c is UNDERSCORE or (isinstance(c, tuple) and _has_underscore(c)):
                kept.append(origin)
            elif origin is not None and _is_whole(b, origin):
                # A coordinate of a whole root mode: in bounds only below its extent.
                extent = product(extents[j])
                inside = isinstance(c, int) and is_static(extent) and 0 <= c < int(extent)
                if not inside:
                    b.partial.setdefault(origin, Cut(origin, extent, 1, op))
        b.origins = tuple(kept)

    def _tile(self, op: LocalTileOp | DivideOp, b: Bounds, extents: list[Integer]) -> None:
        tiler = op.tiler
        if isinstance(tiler, LayoutAttr):
            # A layout tiler cuts the elements in its own order: whole only when the
            # source is static and the tiler's size divides it.
            n, per = size(Layout(tuple(extents))), size(tiler.layout)
            if not (is_static(n) and int(n) % int(per) == 0):
                b.layout_cut = b.layout_cut or op
            b.origins = (None,) * len(self._mode_extents(op.results[0]))
            return
        tiles = list(_as_tuple(tiler.value))
        if isinstance(op, LocalTileOp):
            tiles = _project(tiles, op.proj)
        origins = b.origins
        self._cut(op, b, extents, tiles)
        cut = [origins[j] if j < len(origins) else None for j in range(len(tiles))]
        rest = [None] * (len(self._mode_extents(op.results[0])) - len(tiles))
        if isinstance(op, LocalTileOp):
            b.origins = (*cut, *rest)
        elif op.kind.value == "logical":
            b.origins = tuple(cut) + tuple(origins[len(tiles) :])
        elif op.kind.value == "flat":
            b.origins = (*cut, *([None] * (len(self._mode_extents(op.results[0])) - len(cut))))
        else:  # zipped, tiled: the tiles of every mode in one
            b.origins = (None,) * len(self._mode_extents(op.results[0]))

    def _cut(self, op: Operation, b: Bounds, extents: list[Integer], tiles: list) -> None:
        for j, tile in enumerate(tiles):
            if tile is None or tile is X or j >= len(extents):
                continue
            if isinstance(tile, Layout):
                tile = size(tile)
            tile, extent = product(tile), product(extents[j])  # a nested mode: its size
            origin = b.origins[j] if j < len(b.origins) else None
            if known_divisible(extent, tile):
                if origin is not None:
                    b.proven.setdefault(origin, Cut(origin, extent, tile, op))
            elif origin is None:
                b.all_partial = b.all_partial or op
            else:
                b.partial.setdefault(origin, Cut(origin, extent, tile, op))


def _is_whole(b: Bounds, origin: int) -> bool:
    """Whether a mode with this origin still spans its root mode (no cut of it yet)."""
    return origin not in b.partial and origin not in b.proven


def _partition_tile(op: PartitionOp) -> list:
    """The tile a tiled copy or MMA cuts each mode of its operand by."""
    atom = op.atom.type
    if isinstance(atom, TiledCopyType):
        shape = atom.library().tiler_shape()
        return list(_as_tuple(shape))
    assert isinstance(atom, TiledMmaType)
    m, n, k = atom.library().tile_size_mnk
    which = op.operand.value
    return {"A": [m, k], "B": [n, k], "C": [m, n]}[which]


def _project(tiles: list | tuple, proj: TupleAttr | None) -> list:
    if proj is None:
        return list(tiles)
    keep = _as_tuple(proj.value)
    return [t for t, p in zip(tiles, keep, strict=True) if p is not X]


def _has_underscore(t: tuple) -> bool:
    return any(x is UNDERSCORE or (isinstance(x, tuple) and _has_underscore(x)) for x in t)


def _as_tuple(value: object) -> tuple:
    return value if isinstance(value, tuple) else (value,)


def root_name(root: Value) -> str:
    """The name a user knows a bounds root by: its parameter's, or the view's."""
    op = root.op if isinstance(root, OpResult) else None
    if isinstance(op, MakeTensorOp) and op.ptr.name_hint:
        return op.ptr.name_hint
    return root.name_hint or "the tensor"


def mask_type(layout: Layout | ComposedLayout) -> TensorType:
    """The i1 register fragment that predicates a copy of a tensor laid out as `layout`:
    its shape, compact (a swizzled layout's inner shape)."""
    shape = layout.shape if isinstance(layout, Layout) else layout.layout_b.shape
    return TensorType(IntegerType(1), AddressSpace.REGISTER, LayoutSpec.of(make_layout(shape)))
