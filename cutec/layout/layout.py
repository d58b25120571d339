"""The Layout type and CuTe's structural operations on it (layout.hpp, first half).

A Layout is a pair (shape, stride) of congruent IntTuples and the function
``L(c) = sum_i c_i * d_i`` from coordinates to indices. Functions here are
named as in CuTe and return exactly CuTe's shape and stride.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cutec.layout import coords as co
from cutec.layout import inttuple as it
from cutec.layout.errors import LayoutError
from cutec.layout.inttuple import Coord, Integer, IntTuple
from cutec.layout.symbolic import SymInt

if TYPE_CHECKING:
    from cutec.layout.swizzle import ComposedLayout


def _normalise(t: Any) -> IntTuple:
    if isinstance(t, list | tuple):
        return tuple(_normalise(x) for x in t)
    if isinstance(t, bool) or not it.is_int(t):
        raise LayoutError(f"not an integer tuple: {t!r}")
    return t


def _check_extents(shape: IntTuple) -> None:
    # A mode holds size >= 0 coordinates: CuTe's shapes are non-negative (strides may not be).
    for x in it.leaves(shape):
        if isinstance(x, int) and x < 0:
            raise LayoutError(f"shape {it.format_tuple(shape)} has a negative extent {x}")


@dataclass(frozen=True, init=False)
class Layout:
    """A CuTe layout ``shape:stride``, the map ``c -> sum_i c_i * d_i``; frozen and hashable."""

    shape: IntTuple
    stride: IntTuple

    def __init__(self, shape: Any, stride: Any = None) -> None:
        shape = _normalise(shape)
        _check_extents(shape)
        stride = it.compact_col_major(shape) if stride is None else _normalise(stride)
        if not it.congruent(shape, stride):
            raise LayoutError(
                f"shape {it.format_tuple(shape)} and stride {it.format_tuple(stride)} "
                "are not congruent"
            )
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "stride", stride)

    # -- the function ----------------------------------------------------------------
    def __call__(self, *coord: Coord) -> Any:
        """L(c) = crd2idx(c, shape, stride); with a '_' (None) in c, the sliced sub-layout."""
        c: Coord = coord[0] if len(coord) == 1 else tuple(coord)
        if co.has_none(c):
            return slice_layout(c, self)
        return co.crd2idx(c, self.shape, self.stride)

    def __str__(self) -> str:
        # Imported here to break a cycle: text parses into Layout.
        from cutec.layout.text import format_layout

        return format_layout(self)

    def __repr__(self) -> str:
        return f"Layout({str(self)!r})"

    def to_text(self, static_marks: bool = True) -> str:
        """CuTe's print form ``(_4,_8):(_1,_4)``, or pycute's ``(4,8):(1,4)`` without marks."""
        # Imported here to break a cycle: text parses into Layout.
        from cutec.layout.text import format_layout

        return format_layout(self, static_marks=static_marks)

    # -- CuTe member functions ---------------------------------------------------------
    @property
    def rank(self) -> int:
        """Number of top-level modes."""
        return it.rank(self.shape)

    def size(self) -> Integer:
        """Size of the domain."""
        return it.size(self.shape)

    def cosize(self) -> Integer:
        """Size of the codomain: L(size - 1) + 1 over the absolute strides."""
        return cosize(self)

    def __len__(self) -> int:
        return self.rank

    def __getitem__(self, i: int) -> Layout:
        return get(self, i)

    def compose(self, *other: Any) -> Any:
        """composition(self, other) (several arguments form a by-mode tiler)."""
        # Imported here to break a cycle: algebra is built on Layout.
        from cutec.layout.algebra import composition

        return composition(self, other[0] if len(other) == 1 else tuple(other))

    def with_shape(self, *shape: Any) -> Any:
        """composition(self, make_layout(shape)): reshape the domain."""
        # Imported here to break a cycle: algebra is built on Layout.
        from cutec.layout.algebra import composition

        if len(shape) == 1 and isinstance(shape[0], SymInt):
            # CuTe's one-shape with_shape calls make_layout(shape) unqualified, which a plain
            # run-time int does not find (no argument-dependent lookup): it does not compile.
            raise LayoutError(
                f"with_shape of {self} by the run-time integer {shape[0]}: CuTe takes a tuple "
                f"here, e.g. with_shape(({shape[0]},))"
            )
        return composition(self, Layout(shape[0] if len(shape) == 1 else tuple(shape)))

    def tile(self, *tiler: Any) -> Layout:
        """tiled_divide(self, tiler)."""
        # Imported here to break a cycle: divide is built on Layout.
        from cutec.layout.divide import tiled_divide

        return tiled_divide(self, tiler[0] if len(tiler) == 1 else tuple(tiler))


# ------------------------------------------------------------------------- construction

LayoutLeft = "LayoutLeft"
LayoutRight = "LayoutRight"


def make_layout(*args: Any) -> Layout:
    """make_layout(shape[, stride | LayoutLeft | LayoutRight]) or the concatenation of layouts."""
    if args and all(isinstance(a, Layout) for a in args):
        return Layout(tuple(a.shape for a in args), tuple(a.stride for a in args))
    if len(args) == 1:
        return Layout(args[0])
    if len(args) == 2:
        shape, stride = args
        if stride == LayoutLeft:
            return Layout(shape, it.compact_col_major(_normalise(shape)))
        if stride == LayoutRight:
            return Layout(shape, it.compact_row_major(_normalise(shape)))
        return Layout(shape, stride)
    raise LayoutError(f"make_layout: expected a shape, a shape and a stride, or layouts: {args}")


def make_ordered_layout(shape: Any, order: Any) -> Layout:
    """Compact layout of ``shape`` whose strides grow in the order given by ``order``."""
    shape = _normalise(shape)
    return Layout(shape, it.compact_order(shape, _normalise(order)))


def make_layout_like(layout: Layout) -> Layout:
    """Compact layout with the stride order of ``layout``, keeping its static-0 strides."""
    zeroed = it.filter_zeros(layout.stride, layout.shape)
    return Layout(layout.shape, it.compact_order(zeroed, layout.stride))


def make_identity_layout(shape: Any) -> Layout:
    """The compact column-major layout of shape (integer stand-in for CuTe's basis strides)."""
    return Layout(shape)


# ------------------------------------------------------------------------- accessors


def as_layout(x: Any) -> Layout:
    """A Layout from a Layout, a shape, or an integer."""
    return x if isinstance(x, Layout) else Layout(x)


def shape(x: Layout | ComposedLayout | IntTuple, *idx: int) -> IntTuple:
    """shape<I...>(x) of a layout or an IntTuple."""
    s = x.shape if hasattr(x, "shape") else x
    return it.get(s, *idx)


def stride(layout: Layout, *idx: int) -> IntTuple:
    """stride<I...>(layout)."""
    return it.get(layout.stride, *idx)


def size(x: Layout | ComposedLayout | IntTuple, *idx: int) -> Integer:
    """size<I...>: the product of the (sub)shape."""
    return it.size(shape(x, *idx))


def rank(x: Layout | ComposedLayout | IntTuple, *idx: int) -> int:
    """rank<I...>: number of modes of the (sub)shape."""
    return it.rank(shape(x, *idx))


def depth(x: Layout | ComposedLayout | IntTuple, *idx: int) -> int:
    """depth<I...>: nesting depth of the (sub)shape."""
    return it.depth(shape(x, *idx))


def coshape(layout: Layout) -> Integer:
    """(sum_i (s_i - 1) * |d_i|) + 1: the extent of the codomain."""
    m1 = it.transform_leaf(layout.shape, lambda s: s - 1)
    ad = it.transform_leaf(layout.stride, it.iabs)
    return it.inner_product(m1, ad) + 1


def cosize(layout: Any, *idx: int) -> Integer:
    """Size of the codomain of the (sub)layout: coshape (a swizzled layout: that of B)."""
    layout = getattr(layout, "layout_b", layout)  # a swizzle permutes within cosize(B)
    return coshape(get(as_layout(layout), *idx))


def get(layout: Layout, *idx: int) -> Layout:
    """get<I...>(layout): the sub-layout of a mode."""
    return Layout(it.get(layout.shape, *idx), it.get(layout.stride, *idx))


def select(layout: Layout, *idx: int) -> Layout:
    """The layout of the modes idx, in that order."""
    return Layout(it.select(layout.shape, *idx), it.select(layout.stride, *idx))


def take(layout: Layout, begin: int, end: int) -> Layout:
    """The layout of the modes [begin, end)."""
    if not 0 <= begin < end <= layout.rank:
        raise LayoutError(f"take<{begin},{end}>: out of range for {layout}")
    return Layout(it.take(layout.shape, begin, end), it.take(layout.stride, begin, end))


def group_modes(layout: Layout, begin: int, end: int = -1) -> Layout:
    """layout with the modes [begin, end) grouped into one mode."""
    return Layout(it.group(layout.shape, begin, end), it.group(layout.stride, begin, end))


def flatten(layout: Layout) -> Layout:
    """Layout of depth <= 1 with the same leaves."""
    return Layout(it.flatten(layout.shape), it.flatten(layout.stride))


def unflatten(layout: Layout, profile: Any) -> Layout:
    """A flat layout refolded into the nesting of ``profile``."""
    return Layout(it.unflatten(layout.shape, profile), it.unflatten(layout.stride, profile))


def append(layout: Layout, x: Layout | None = None, n: int | None = None) -> Layout:
    """layout with mode x (default _1:_0) appended; with n, padded up to rank n."""
    x = Layout(1, 0) if x is None else x
    return Layout(it.append(layout.shape, x.shape, n), it.append(layout.stride, x.stride, n))


def prepend(layout: Layout, x: Layout | None = None, n: int | None = None) -> Layout:
    """layout with mode x (default _1:_0) prepended; with n, padded up to rank n."""
    x = Layout(1, 0) if x is None else x
    return Layout(it.prepend(layout.shape, x.shape, n), it.prepend(layout.stride, x.stride, n))


def replace(layout: Layout, n: int, x: Layout) -> Layout:
    """layout with mode n replaced by x."""
    if not isinstance(layout.shape, tuple):
        if n != 0:
            raise LayoutError(f"replace<{n}>: {layout} has one mode")
        return x
    s, d = list(layout.shape), list(layout.stride)
    s[n], d[n] = x.shape, x.stride
    return Layout(tuple(s), tuple(d))


def zip_layout(layout: Layout, *others: Layout) -> Layout:
    """zip: transpose the modes of a rank-2-of-rank-k layout (or zip several layouts)."""
    if others:
        layouts = (layout, *others)
        return Layout(
            it.zip_tuples(tuple(x.shape for x in layouts)),
            it.zip_tuples(tuple(x.stride for x in layouts)),
        )
    return Layout(it.zip_tuples(layout.shape), it.zip_tuples(layout.stride))


def slice_layout(coord: Coord, layout: Layout) -> Layout:
    """The sub-layout of the modes where coord has '_' (CuTe slice)."""
    return Layout(co.slice_(coord, layout.shape), co.slice_(coord, layout.stride))


def dice_layout(coord: Coord, layout: Layout) -> Layout:
    """The sub-layout of the modes where coord has integers (CuTe dice)."""
    return Layout(co.dice(coord, layout.shape), co.dice(coord, layout.stride))


def slice_and_offset(
    coord: Coord, layout: Layout | ComposedLayout
) -> tuple[Layout | ComposedLayout, Integer]:
    """(slice(coord, layout), crd2idx(coord with '_' as 0, layout))."""
    if not isinstance(layout, Layout):  # a ComposedLayout: CuTe's overloads (swizzle.py)
        # Imported here to break a cycle: swizzle is built on Layout.
        from cutec.layout.swizzle import composed_slice_and_offset

        return composed_slice_and_offset(coord, layout)
    offset = _crd2idx_partial(coord, layout.shape, layout.stride)
    return slice_layout(coord, layout), offset


def _crd2idx_partial(coord: Coord, shape: IntTuple, stride: IntTuple) -> Integer:
    # '_' contributes nothing to the offset (CuTe's crd2idx treats _ * d as _0).
    if coord is None:
        return 0
    if it.is_tuple(coord):
        total: Integer = 0
        for c, s, d in it.zip_modes("slice_and_offset", coord, it.wrap(shape), it.wrap(stride)):
            total = total + _crd2idx_partial(c, s, d)
        return total
    return co.crd2idx(coord, shape, stride)


def transform_layout(
    layout: Layout, tiler: tuple, fn: Callable[[Layout, Any], Layout], keep_rest: bool = True
) -> Layout:
    """Apply fn to (mode_i, tiler_i) for each mode of the tiler and concatenate the results.

    The modes of ``layout`` beyond the tiler are kept unchanged (dropped when
    ``keep_rest`` is False, as composition does). This is the one by-mode helper
    every tiler-accepting operation uses.
    """
    if not isinstance(layout, Layout):
        raise LayoutError(f"tiler {it.format_tuple(tiler)} applies to a layout, not {layout!r}")
    if len(tiler) > layout.rank:
        raise LayoutError(f"tiler {it.format_tuple(tiler)} has more modes than layout {layout}")
    modes: list[Layout] = [fn(get(layout, i), t) for i, t in enumerate(tiler)]
    if keep_rest:
        modes += [get(layout, i) for i in range(len(tiler), layout.rank)]
    return make_layout(*modes) if modes else Layout((), ())


def by_tiler(
    layout: Any,
    tiler: Any,
    on_layout: Callable[[Any, Layout], Any],
    keep_rest: bool = True,
    int_layout: Callable[[Any], Layout] | None = None,
) -> Any:
    """Dispatch on CuTe's tiler kinds: a tuple applies by mode, '_' keeps the layout,
    an integer n acts as a layout, and a layout is handed to on_layout.

    An integer n becomes ``make_layout(n)`` (divides and products; ``_1`` is ``_1:_0``), or
    ``int_layout(n)`` where given: composition takes n as ``n:_1`` even for n == 1."""

    def rec(mode: Layout, t: Any) -> Any:
        return by_tiler(mode, t, on_layout, keep_rest, int_layout)

    if isinstance(tiler, tuple | list):
        return transform_layout(layout, tuple(tiler), rec, keep_rest)
    if tiler is None:
        return layout
    if it.is_int(tiler):
        return on_layout(layout, Layout(tiler) if int_layout is None else int_layout(tiler))
    return on_layout(layout, tiler)
