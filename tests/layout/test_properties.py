"""Defining properties of every operation, checked over many random layouts."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from layout_strategies import compact_layouts, injective_layouts, layouts, pow2_layouts, shapes

from cutec.layout import (
    Layout,
    LayoutError,
    LayoutWarning,
    blocked_product,
    coalesce,
    compatible,
    complement,
    composition,
    cosize,
    crd2idx,
    depth,
    filter,
    flat_divide,
    idx2crd,
    left_inverse,
    logical_divide,
    logical_product,
    make_layout,
    max_common_vector,
    nullspace,
    raked_product,
    right_inverse,
    size,
    tiled_divide,
    zipped_divide,
)


def images(layout: Layout) -> list[int]:
    return [layout(i) for i in range(size(layout))]


@given(layouts())
def test_coalesce_keeps_the_function(a: Layout) -> None:
    c = coalesce(a)
    assert size(c) == size(a)
    assert depth(c) <= 1
    assert images(c) == images(a)


@given(layouts())
def test_filter_keeps_the_image_set(a: Layout) -> None:
    f = filter(a)
    assert set(images(f)) == set(images(a))
    assert all(d != 0 for d in _leaves(f.stride)) or size(f) == 1


@given(pow2_layouts(), pow2_layouts())
def test_composition_is_function_composition(a: Layout, b: Layout) -> None:
    # CuTe promises R(c) == A(B(c)) for admissible operands: an injective B
    # whose image lies in the domain of A.
    assume(all(x < size(a) for x in images(b)) and len(set(images(b))) == size(b))
    r = composition(a, b)
    assert compatible(b.shape, r.shape)
    assert [r(i) for i in range(size(b))] == [a(b(i)) for i in range(size(b))]


def test_composition_admits_what_cute_admits() -> None:
    # CuTe's weak divisibility condition lets (rest_stride < shape) through, so
    # (4,3):(0,1) o 4:3 is (_2,_2):(_0,_1) although A(B(3)) = 2: CuTe's answer, with a
    # LayoutWarning saying so.
    with pytest.warns(LayoutWarning, match="at index 3 CuTe's result gives 1, A"):
        assert str(composition(Layout((4, 3), (0, 1)), Layout(4, 3))) == "(_2,_2):(_0,_1)"
    with pytest.raises(LayoutError, match="composition of"):
        composition(Layout((4, 3), (1, 5)), Layout(2, 6))


@given(injective_layouts(), st.integers(1, 4))
def test_complement_is_disjoint_ordered_and_covering(a: Layout, k: int) -> None:
    cotarget = cosize(a) * k
    c = complement(a, cotarget)
    ci = images(c)
    assert ci == sorted(ci)
    assert not set(ci[1:]) & set(images(a))
    assert size(c) * size(filter(a)) >= cotarget
    assert cosize(make_layout(a, c)) >= cotarget


@given(compact_layouts(), st.integers(1, 3))
def test_complement_of_compact_layout_completes_a_bijection(a: Layout, k: int) -> None:
    full = make_layout(a, complement(a, size(a) * k))
    assert sorted(images(full)) == list(range(size(a) * k))


def test_complement_of_overlapping_strides_raises() -> None:
    with pytest.raises(LayoutError, match=r"complement of \(_2,_2\):\(_1,_1\)"):
        complement(Layout((2, 2), (1, 1)))


@given(layouts())
def test_right_inverse(a: Layout) -> None:
    r = right_inverse(a)
    assert all(a(r(i)) == i for i in range(size(r)))


@given(injective_layouts())
def test_left_inverse(a: Layout) -> None:
    r = left_inverse(a)
    assert all(r(a(i)) == i for i in range(size(a)))


@given(compact_layouts(pow2=True), st.sampled_from([1, 2, 4]))
def test_logical_divide_is_composition_with_tiler_and_complement(a: Layout, t: int) -> None:
    assume(size(a) % t == 0)
    tiler = Layout(t, 1)
    d = logical_divide(a, tiler)
    full = make_layout(tiler, complement(tiler, coalesce(a).shape))
    assert size(d) == size(a)
    assert images(d) == [a(full(i)) for i in range(size(d))]
    z = zipped_divide(a, tiler)
    assert images(z) == images(d)
    assert images(tiled_divide(a, tiler)) == images(d)
    assert images(flat_divide(a, tiler)) == images(d)


@given(compact_layouts(max_depth=1), compact_layouts(max_depth=1))
def test_logical_product_size_and_modes(a: Layout, b: Layout) -> None:
    a, b = _as_tuple_layout(a), _as_tuple_layout(b)
    p = logical_product(a, b)
    assert size(p) == size(a) * size(b)
    assert images(p[0]) == images(a)
    assert sorted(images(p)) == list(range(size(a) * size(b)))


@given(compact_layouts(max_depth=1), compact_layouts(max_depth=1))
def test_blocked_and_raked_products_are_bijections(a: Layout, b: Layout) -> None:
    a, b = _as_tuple_layout(a), _as_tuple_layout(b)
    n = size(a) * size(b)
    assert sorted(images(blocked_product(a, b))) == list(range(n))
    assert sorted(images(raked_product(a, b))) == list(range(n))


@given(layouts())
def test_nullspace_maps_to_zero(a: Layout) -> None:
    k = nullspace(a)
    assert all(a(k(i)) == 0 for i in range(size(k)))


@given(compact_layouts())
def test_max_common_vector_of_a_layout_with_itself_is_its_contiguous_run(a: Layout) -> None:
    n = max_common_vector(a, a)
    assert n >= 1
    assert all(a(right_inverse(a)(i)) == i for i in range(n))


@given(shapes())
def test_idx2crd_inverts_crd2idx(s: object) -> None:
    for i in range(size(Layout(s))):
        assert crd2idx(idx2crd(i, s), s) == i


def _leaves(t: object) -> list:
    return [y for x in t for y in _leaves(x)] if isinstance(t, tuple) else [t]


def _as_tuple_layout(a: Layout) -> Layout:
    # Products zip modes: both operands need tuple shapes (CuTe rejects a mix).
    return a if isinstance(a.shape, tuple) else Layout((a.shape,), (a.stride,))
