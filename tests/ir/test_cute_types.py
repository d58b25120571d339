"""The cute dialect's layout and tensor types against the layout algebra."""

from __future__ import annotations

import pytest

from cutec.ir.dialects.cute_types import DYN, LayoutSpec, LayoutType, TensorType
from cutec.ir.types import f32
from cutec.layout import ComposedLayout, Layout, Swizzle, zipped_divide
from cutec.layout.symbolic import sym
from cutec.target import AddressSpace


def test_spec_of_a_dynamic_layout_marks_its_symbolic_leaves() -> None:
    M, K, ldA = sym("M"), sym("K"), sym("ldA")
    tiled = zipped_divide(Layout((M, K), (1, ldA)), (128, 8))
    spec = LayoutSpec.of(tiled)
    assert str(spec) == "((128,8),(?,?)):((1,?),(128,?))"
    assert spec.dynamic_count == 4
    # Filling the dynamic leaves back in order (shape first) gives the layout again.
    values = [*_dynamic_leaves(tiled.shape), *_dynamic_leaves(tiled.stride)]
    assert spec.with_values(values) == tiled


def _dynamic_leaves(t):
    if isinstance(t, tuple):
        for x in t:
            yield from _dynamic_leaves(x)
    elif not isinstance(t, int):
        yield t


def test_static_spec_round_trips_through_text_and_the_algebra() -> None:
    layout = Layout(((2, 2), 3), ((1, 4), 2))
    spec = LayoutSpec.of(layout)
    assert str(spec) == "((2,2),3):((1,4),2)"
    assert LayoutSpec.parse(str(spec)) == spec
    assert spec.with_values([]) == layout
    assert str(LayoutType(spec)) == "!cute.layout<((2,2),3):((1,4),2)>"


def test_swizzled_spec() -> None:
    composed = ComposedLayout(Swizzle(3, 4, 3), 0, Layout((8, 64), (64, 1)))
    spec = LayoutSpec.of(composed)
    assert str(spec) == "Sw<3,4,3> o 0 o (8,64):(64,1)"
    assert LayoutSpec.parse(str(spec)) == spec
    assert spec.with_values([]) == composed


def test_tensor_type_text() -> None:
    t = TensorType(f32, AddressSpace.SHARED, LayoutSpec((8, DYN), (1, 8)))
    assert str(t) == "!cute.tensor<f32, smem, (8,?):(1,8)>"
    # The memory is the address-space enum: a string, or a space no tensor names, is refused.
    for space in ("smem", AddressSpace.PARAM):
        with pytest.raises(ValueError, match="a tensor lives in gmem, smem, dsmem, rmem memory"):
            TensorType(f32, space, LayoutSpec(1, 1))  # type: ignore[arg-type]


def test_with_values_checks_the_count() -> None:
    spec = LayoutSpec.parse("(?,4):(1,?)")
    with pytest.raises(ValueError, match="has 2 dynamic leaves, got 1 values"):
        spec.with_values([sym("M")])
