"""Hypothesis strategies for random layouts, shared by the layout tests."""

from __future__ import annotations

from typing import Any

from hypothesis import settings
from hypothesis import strategies as st

from cutec.layout import Layout, make_ordered_layout

settings.register_profile("layout", max_examples=60, deadline=None)
settings.load_profile("layout")


@st.composite
def shapes(draw: st.DrawFn, max_depth: int = 2, max_rank: int = 3, lo: int = 1, hi: int = 5) -> Any:
    """A random shape: a leaf or a tuple of shapes of rank 1..max_rank."""
    if max_depth == 0 or draw(st.booleans()):
        return draw(st.integers(lo, hi))
    rank = draw(st.integers(1, max_rank))
    return tuple(draw(shapes(max_depth - 1, max_rank, lo, hi)) for _ in range(rank))


def _strides_like(draw: st.DrawFn, shape: Any, hi: int) -> Any:
    if isinstance(shape, tuple):
        return tuple(_strides_like(draw, s, hi) for s in shape)
    return draw(st.integers(0, hi))


@st.composite
def layouts(draw: st.DrawFn, max_depth: int = 2, max_stride: int = 24) -> Layout:
    """A random layout with arbitrary (possibly overlapping) strides."""
    shape = draw(shapes(max_depth))
    return Layout(shape, _strides_like(draw, shape, max_stride))


@st.composite
def injective_layouts(draw: st.DrawFn, max_depth: int = 2) -> Layout:
    """A compact layout in a random mode order, optionally spread by a factor."""
    shape = draw(shapes(max_depth, lo=1, hi=4))
    flat_rank = len(_leaves(shape))
    order = draw(st.permutations(list(range(flat_rank))))
    base = make_ordered_layout(shape, _unflatten_like(shape, list(order)))
    scale = draw(st.sampled_from([1, 1, 2, 3]))
    from cutec.layout.inttuple import transform_leaf

    return Layout(base.shape, transform_leaf(base.stride, lambda d: d * scale))


def _leaves(t: Any) -> list:
    return [y for x in t for y in _leaves(x)] if isinstance(t, tuple) else [t]


def _unflatten_like(shape: Any, values: list) -> Any:
    if isinstance(shape, tuple):
        return tuple(_unflatten_like(s, values) for s in shape)
    return values.pop(0)


@st.composite
def compact_layouts(draw: st.DrawFn, max_depth: int = 2, pow2: bool = False) -> Layout:
    """A compact (bijective onto [0,size)) layout in a random mode order."""
    shape = draw(shapes(max_depth, lo=1, hi=4))
    if pow2:
        from cutec.layout.inttuple import transform_leaf

        shape = transform_leaf(shape, lambda e: 1 << (e - 1))
    order = draw(st.permutations(list(range(len(_leaves(shape))))))
    return make_ordered_layout(shape, _unflatten_like(shape, list(order)))


@st.composite
def pow2_layouts(draw: st.DrawFn, max_depth: int = 2) -> Layout:
    """A layout with power-of-two shapes and strides: composition is always admissible."""
    shape = draw(shapes(max_depth, lo=0, hi=2))
    from cutec.layout.inttuple import transform_leaf

    shape = transform_leaf(shape, lambda e: 1 << e)
    stride = transform_leaf(shape, lambda _: 0)
    stride = _pow2_strides(draw, shape)
    return Layout(shape, stride)


def _pow2_strides(draw: st.DrawFn, shape: Any) -> Any:
    if isinstance(shape, tuple):
        return tuple(_pow2_strides(draw, s) for s in shape)
    e = draw(st.integers(-1, 5))
    return 0 if e < 0 else 1 << e
