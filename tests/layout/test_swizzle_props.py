"""Properties of swizzled (composed) layouts: slicing and Layout o ComposedLayout.

The exact results (shape, stride, static-ness, MixedBits decay) are checked against CuTe
in test_cute_reference.py; here the defining laws over many random layouts:

- slicing ``C = Sw o off o L`` at a coordinate gives ``(sliced, ptr)`` with
  ``C(c) == ptr + sliced(rest)`` for every completion ``c`` of the coordinate, whether
  the swizzle stays or decays to a plain layout, for static and dynamic coordinates
  (L's modes and the offset on disjoint bits: the precondition of CuTe's refinement);
- ``R = composition(A, C)`` is ``R(i) == A(C(i))`` where CuTe's swizzle transfer is
  exact (A moves the swizzle's Y and Z bits as two ordered runs of bits).
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from layout_strategies import compact_layouts

from cutec.layout import ComposedLayout, Layout, LayoutError, Swizzle, composition
from cutec.layout import coords as co
from cutec.layout import inttuple as it
from cutec.layout.layout import slice_and_offset
from cutec.layout.symbolic import evaluate, sym

SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much]
)


@st.composite
def swizzles(draw: st.DrawFn) -> Swizzle:
    b = draw(st.integers(1, 3))
    return Swizzle(b, draw(st.integers(0, 3)), draw(st.integers(b, b + 2)))


@st.composite
def swizzled_layouts(draw: st.DrawFn, offset: bool = True) -> ComposedLayout:
    """Sw o off o L, L a compact power-of-two layout (a permutation of the bits of its
    indices) and off on bits above L's codomain.

    CuTe's slice combines the offset and the modes of L with XOR (to_mixed_bits), which is
    their sum exactly when they occupy disjoint bits, as in a tiled shared-memory buffer.
    """
    sw = draw(swizzles())
    base = draw(compact_layouts(pow2=True))
    top = 1 << (it.size(base.shape) - 1).bit_length()
    off = top * draw(st.integers(0, 3)) if offset else 0
    return ComposedLayout(sw, off, base)


@st.composite
def slice_coords(draw: st.DrawFn, shape: Any) -> Any:
    """A coordinate of shape with '_' (None) in some modes, integers in the others."""

    def mode(s: Any) -> Any:
        if isinstance(s, tuple) and draw(st.booleans()):
            return tuple(mode(x) for x in s)
        return None if draw(st.booleans()) else draw(st.integers(0, it.size(s) - 1))

    if not isinstance(shape, tuple):
        return mode(shape)
    return tuple(mode(s) for s in shape)


def _fill(coord: Any, rest: list[Any]) -> Any:
    """coord with its '_' replaced, in order, by the values of rest."""
    if isinstance(coord, tuple):
        return tuple(_fill(c, rest) for c in coord)
    return rest.pop(0) if coord is None else coord


def _eval(x: Any, env: dict[str, int]) -> Any:
    """x with every dynamic leaf evaluated."""
    if isinstance(x, Layout):
        return Layout(_eval(x.shape, env), _eval(x.stride, env))
    if isinstance(x, ComposedLayout):
        return ComposedLayout(x.layout_a, _eval(x.offset, env), _eval(x.layout_b, env))
    if isinstance(x, tuple):
        return tuple(_eval(y, env) for y in x)
    return evaluate(x, env)


def _leaves_static(x: Any) -> bool:
    if isinstance(x, Layout):
        return it.is_static(x.shape) and it.is_static(x.stride)
    return _leaves_static(x.layout_b) and isinstance(x.offset, int)


def _check_slice(layout: ComposedLayout, coord: Any, sliced: Any, ptr: int) -> None:
    rest_shape = co.slice_(coord, layout.layout_b.shape)
    assert sliced.size() == it.size(rest_shape)
    for i in range(it.size(rest_shape)):
        rest = co.idx2crd(i, rest_shape)
        full = _fill(coord, list(it.wrap(rest)) if isinstance(rest_shape, tuple) else [rest])
        assert layout(full) == ptr + sliced(i), (str(layout), coord, i)


@SETTINGS
@given(st.data())
def test_static_slice_is_the_function_restricted(data: st.DataObject) -> None:
    layout = data.draw(swizzled_layouts())
    coord = data.draw(slice_coords(layout.layout_b.shape))
    assume(co.has_none(coord))
    sliced, ptr = slice_and_offset(coord, layout)
    # Static inputs give static results, as CuTe's are types.
    assert isinstance(ptr, int) and _leaves_static(sliced)
    _check_slice(layout, coord, sliced, ptr)
    # The swizzle is kept only when the sliced layout needs it.
    assert isinstance(sliced, Layout | ComposedLayout)


@SETTINGS
@given(st.data())
def test_dynamic_slice_is_the_function_restricted(data: st.DataObject) -> None:
    layout = data.draw(swizzled_layouts())
    coord = data.draw(slice_coords(layout.layout_b.shape))
    assume(co.has_none(coord))
    env: dict[str, int] = {}

    def symbolic(c: Any) -> Any:
        if isinstance(c, tuple):
            return tuple(symbolic(x) for x in c)
        if c is None:
            return None
        name = f"c{len(env)}"
        env[name] = c
        return sym(name, min_value=0)

    sliced, ptr = slice_and_offset(symbolic(coord), layout)
    _check_slice(layout, coord, _eval(sliced, env), evaluate(ptr, env))


@SETTINGS
@given(st.data())
def test_dynamic_offset_slice(data: st.DataObject) -> None:
    layout = data.draw(swizzled_layouts())
    coord = data.draw(slice_coords(layout.layout_b.shape))
    assume(co.has_none(coord))
    env = {"off": layout.offset}
    dyn = ComposedLayout(layout.layout_a, sym("off", min_value=0), layout.layout_b)
    sliced, ptr = slice_and_offset(coord, dyn)
    _check_slice(layout, coord, _eval(sliced, env), evaluate(ptr, env))


def _moves_bits_in_order(a: Layout, sw: Swizzle) -> bool:
    """A maps the Y bits and the Z bits of sw to two runs of consecutive bits, in order."""
    for lo in (sw.base + max(0, sw.shift), sw.base - min(0, sw.shift)):
        images = [a(1 << (lo + i)) for i in range(sw.bits)]
        if any(v <= 0 or v & (v - 1) for v in images):
            return False
        if any(images[i] != images[0] << i for i in range(sw.bits)):
            return False
    return True


# Most draws are assumed away (a bit permutation that moves the swizzle's bits in
# order is rare): 60 examples are about 10 s, 150 took 24 s of the CI suite.
@settings(SETTINGS, max_examples=60)
@given(st.data())
def test_layout_o_composed_is_the_composite(data: st.DataObject) -> None:
    sw = data.draw(swizzles())
    base = data.draw(compact_layouts(pow2=True))
    assume(it.size(base.shape) >= sw.size())
    outer = data.draw(compact_layouts(pow2=True))
    scale = data.draw(st.integers(0, 2))
    # A a bit permutation of the codomain of C, scaled by 2^scale.
    assume(it.size(outer.shape) == it.size(base.shape))
    a = Layout(outer.shape, it.transform_leaf(outer.stride, lambda d: d << scale))
    assume(_moves_bits_in_order(a, sw))
    c = ComposedLayout(sw, 0, base)
    try:
        r = composition(a, c)
    except LayoutError:  # CuTe's make_swizzle rejects the masks as well
        return
    assert r.size() == c.size()
    for i in range(it.size(base.shape)):
        assert r(i) == a(c(i)), (str(a), str(c), str(r), i)


def test_layout_o_composed_examples() -> None:
    c = ComposedLayout(Swizzle(3, 3, 3), 0, Layout((8, 64), (64, 1)))
    for a in (Layout(512, 1), Layout(1024, 2), Layout((64, 8), (1, 64))):
        r = composition(a, c)
        assert all(r(i) == a(c(i)) for i in range(512))


def test_composed_needs_zero_offset() -> None:
    c = ComposedLayout(Swizzle(3, 3, 3), 8, Layout((8, 8), (8, 1)))
    try:
        composition(Layout(64, 1), c)
    except LayoutError:
        return
    raise AssertionError("composition with a nonzero composed offset must fail, as in CuTe")
