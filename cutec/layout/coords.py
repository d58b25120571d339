"""Coordinates: crd2idx, idx2crd, crd2crd, and slicing with '_' (None) and X.

Split from inttuple.py; the static/dynamic rules are CuTe's stride.hpp and
underscore.hpp.
"""

from __future__ import annotations

from typing import Any

from cutec.layout.errors import LayoutError
from cutec.layout.inttuple import (
    Coord,
    Integer,
    IntTuple,
    X,
    compact_col_major,
    format_tuple,
    idiv,
    imod,
    imul,
    is_constant,
    is_int,
    product,
    product_like,
    repeat_like,
    wrap,
)


def crd2idx(coord: Coord, shape: IntTuple, stride: IntTuple | None = None) -> Integer:
    """Index of a coordinate: sum c_i * d_i, an integer coordinate split colexicographically."""
    if stride is None:
        if not isinstance(coord, tuple):  # an integer is already the colexicographic index
            return coord
        stride = compact_col_major(product_like(shape, coord))
        shape = product_like(shape, coord)
    if isinstance(coord, tuple):
        if not isinstance(shape, tuple) or len(coord) != len(shape):
            raise LayoutError(f"crd2idx: coordinate {coord} does not match shape {shape}")
        if not isinstance(stride, tuple) or len(stride) != len(shape):
            raise LayoutError(f"crd2idx: shape {shape} and stride {stride} differ in rank")
        result: Integer = 0
        for c, s, d in zip(coord, shape, stride, strict=True):
            result = result + crd2idx(c, s, d)
        return result
    if coord is None:
        raise LayoutError("crd2idx: '_' is not a coordinate (slice the layout instead)")
    if not is_int(coord):
        raise LayoutError(f"crd2idx: {coord} is not a coordinate (an integer or a tuple)")
    if isinstance(shape, tuple):
        if not isinstance(stride, tuple) or len(shape) != len(stride):
            raise LayoutError(f"crd2idx: shape {shape} and stride {stride} differ in rank")
        result = 0
        for i, (s, d) in enumerate(zip(shape, stride, strict=True)):
            if i == len(shape) - 1:
                result = result + crd2idx(coord, s, d)
            else:
                ps = product(s)
                result = result + crd2idx(imod(coord, ps), s, d)
                coord = idiv(coord, ps)
        return result
    return imul(coord, stride)


def idx2crd(idx: Coord, shape: IntTuple, stride: IntTuple | None = None) -> Coord:
    """Coordinate of an index: colexicographic in shape (the last mode is not wrapped),
    or (idx / d_i) % s_i per mode for an explicit compact stride."""
    if isinstance(idx, tuple):
        strides = wrap(stride) if stride is not None else (None,) * len(idx)
        if len(idx) != len(wrap(shape)) or len(strides) != len(idx):
            raise LayoutError(f"idx2crd: index {format_tuple(idx)} does not match shape {shape}")
        return tuple(idx2crd(i, s, d) for i, s, d in zip(idx, wrap(shape), strides, strict=True))
    if isinstance(idx, int) and idx < 0:
        raise LayoutError(f"idx2crd: the index {idx} is negative")
    if stride is None:
        return _idx2crd_colex(idx, shape)
    if isinstance(shape, tuple):
        if not isinstance(stride, tuple):
            stride = compact_col_major(shape, stride)
        if len(stride) != len(shape):
            raise LayoutError(f"idx2crd: shape {shape} and stride {stride} differ in rank")
        return tuple(idx2crd(idx, s, d) for s, d in zip(shape, stride, strict=True))
    if isinstance(stride, tuple):
        raise LayoutError(
            f"idx2crd: shape {shape} and stride {format_tuple(stride)} differ in rank"
        )
    if is_constant(1, shape):
        return 0
    return imod(idiv(idx, stride), shape)


def _idx2crd_colex(idx: Integer, shape: IntTuple) -> Coord:
    # CuTe splits idx with divmod by each mode's size; the last mode keeps the quotient.
    if not isinstance(shape, tuple):
        return idx
    if is_constant(0, idx):
        return repeat_like(shape, 0)
    out = []
    for i, s in enumerate(shape):
        if i == len(shape) - 1:
            out.append(_idx2crd_colex(idx, s))
        else:
            ps = product(s)
            out.append(_idx2crd_colex(imod(idx, ps), s))
            idx = idiv(idx, ps)
    return tuple(out)


def crd2crd(coord: Coord, src_shape: IntTuple, dst_shape: IntTuple) -> Coord:
    """Re-express a coordinate of src_shape as a coordinate of dst_shape (same size)."""
    if isinstance(coord, tuple) and isinstance(src_shape, tuple) and isinstance(dst_shape, tuple):
        return tuple(crd2crd(c, s, d) for c, s, d in zip(coord, src_shape, dst_shape, strict=True))
    return idx2crd(crd2idx(coord, src_shape), dst_shape)


def has_none(c: Any) -> bool:
    """True when the coordinate contains an underscore (None)."""
    if isinstance(c, tuple):
        return any(has_none(x) for x in c)
    return c is None


def slice_(coord: Coord, t: Any) -> Any:
    """Keep the parts of t paired with '_' in coord (CuTe slice)."""

    def lift(a: Coord, b: Any) -> tuple:
        if isinstance(a, tuple):
            bb = _match_rank(a, b)
            return tuple(x for ai, bi in zip(a, bb, strict=True) for x in lift(ai, bi))
        return (b,) if a is None else ()

    if isinstance(coord, tuple):
        return lift(coord, t)
    return t if coord is None else ()


def _is_underscore(c: Any) -> bool:
    # CuTe's X step marker is an alias of the Underscore.
    return c is None or c is X


def dice(coord: Coord, t: Any) -> Any:
    """Keep the parts of t paired with integers in coord (CuTe dice)."""

    def lift(a: Coord, b: Any) -> tuple:
        if isinstance(a, tuple):
            bb = _match_rank(a, b)
            return tuple(x for ai, bi in zip(a, bb, strict=True) for x in lift(ai, bi))
        return () if _is_underscore(a) else (b,)

    if isinstance(coord, tuple):
        return lift(coord, t)
    return () if _is_underscore(coord) else t


def _match_rank(a: tuple, b: Any) -> tuple:
    if not isinstance(b, tuple) or len(a) != len(b):
        raise LayoutError(f"coordinate {format_tuple(a)} does not match {format_tuple(b)}")
    return b
