"""Swizzles and composed layouts (CuTe's swizzle.hpp, layout_composed.hpp).

``Swizzle(B, M, S)`` is the bijection on offsets that XORs the B bits at
position M + max(0,S) into the B bits at position M - min(0,S) (``ZZZ ^= YYY``).
``ComposedLayout(A, offset, B)`` is the function ``c -> A(offset + B(c))``,
printed ``Sw<3,4,3> o _0 o (_8,_64):(_64,_1)``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from cutec.layout import coords as co
from cutec.layout import inttuple as it
from cutec.layout.errors import DynamicValueError, LayoutError
from cutec.layout.inttuple import Coord, Integer
from cutec.layout.layout import Layout, slice_and_offset


@dataclass(frozen=True)
class Swizzle:
    """Swizzle<B,M,S>: offset -> offset ^ ((offset & yyy_msk) >> S)."""

    bits: int
    base: int
    shift: int

    def __post_init__(self) -> None:
        if self.bits < 0 or self.base < 0:
            raise LayoutError(f"Sw<{self.bits},{self.base},{self.shift}>: B and M must be >= 0")
        if abs(self.shift) < self.bits:
            raise LayoutError(f"Sw<{self.bits},{self.base},{self.shift}>: |S| must be at least B")
        if self.bits + self.base + abs(self.shift) > 31:
            # CuTe's masks are `int` constants: wider ones overflow and do not compile
            # (and Python would build gigabit integers for them).
            raise LayoutError(
                f"Sw<{self.bits},{self.base},{self.shift}>: B + M + |S| must be at most 31"
            )

    @property
    def bit_msk(self) -> int:
        """(1 << B) - 1."""
        return (1 << self.bits) - 1

    @property
    def yyy_msk(self) -> int:
        """The source bits: bit_msk << (M + max(0, S))."""
        return self.bit_msk << (self.base + max(0, self.shift))

    @property
    def zzz_msk(self) -> int:
        """The target bits: bit_msk << (M - min(0, S))."""
        return self.bit_msk << (self.base - min(0, self.shift))

    def __call__(self, offset: Integer) -> int:
        """offset ^ shiftr(offset & yyy_msk, S)."""
        if not isinstance(offset, int):
            raise DynamicValueError(f"{self} of a dynamic offset {offset}")
        return offset ^ _shiftr(offset & self.yyy_msk, self.shift)

    def size(self) -> int:
        """Size of the domain the swizzle acts on: 2^(M + B + |S|)."""
        return 1 << (self.base + self.bits + abs(self.shift))

    def __str__(self) -> str:
        return f"Sw<{self.bits},{self.base},{self.shift}>"


def _shiftr(x: int, s: int) -> int:
    return x >> s if s >= 0 else x << -s


def _popcount(x: int) -> int:
    return bin(x).count("1")


def _ctz(x: int) -> int:
    return (x & -x).bit_length() - 1 if x else 32


def make_swizzle(y: int, z: int) -> Swizzle:
    """The swizzle whose source bit mask is y and target bit mask is z."""
    by, bz = _popcount(z), _popcount(y)
    if by != bz:
        raise LayoutError(f"make_swizzle: masks {y:#b} and {z:#b} differ in bit count")
    tz_y, tz_z = _ctz(y), _ctz(z)
    sw = Swizzle(bz, min(tz_y, tz_z) % 32, tz_y - tz_z)
    if (y | z) != (sw.yyy_msk | sw.zzz_msk) and bz:
        raise LayoutError(f"make_swizzle: masks {y:#b} and {z:#b} are not a swizzle")
    return sw


@dataclass(frozen=True)
class ComposedLayout:
    """A o offset o B: the function c -> A(offset + B(c)); the shape is B's."""

    layout_a: Any
    offset: Integer
    layout_b: Layout

    def __post_init__(self) -> None:
        for part, x in (("A", self.layout_a), ("B", self.layout_b)):
            if not isinstance(x, Layout | Swizzle | ComposedLayout):
                raise LayoutError(f"A o O o B: {part} must be a layout or a swizzle, got {x!r}")
        if not it.is_int(self.offset):
            raise LayoutError(f"A o O o B: the offset O must be an integer, got {self.offset!r}")

    @property
    def shape(self) -> Any:
        """The domain shape (that of layout_b)."""
        return self.layout_b.shape

    @property
    def rank(self) -> int:
        """Rank of the domain."""
        return self.layout_b.rank

    def size(self) -> Integer:
        """Size of the domain."""
        return self.layout_b.size()

    def __call__(self, *coord: Coord) -> Any:
        """A(offset + B(c)); with '_' in c the sliced ComposedLayout."""
        c: Coord = coord[0] if len(coord) == 1 else tuple(coord)
        if co.has_none(c):
            return composed_slice_and_offset(c, self)[0]
        return self.layout_a(self.offset + self.layout_b(c))

    def __str__(self) -> str:
        # Imported here to break a cycle: text parses into Swizzle.
        from cutec.layout.text import format_int_tuple

        return f"{self.layout_a} o {format_int_tuple(self.offset)} o {self.layout_b}"

    def to_text(self, static_marks: bool = True) -> str:
        """Print form, optionally without static marks."""
        # Imported here to break a cycle: text parses into Swizzle.
        from cutec.layout.text import format_int_tuple

        a = self.layout_a
        a_text = a.to_text(static_marks) if isinstance(a, Layout) else str(a)
        off = format_int_tuple(self.offset, static_marks)
        return f"{a_text} o {off} o {self.layout_b.to_text(static_marks)}"

    def __repr__(self) -> str:
        return f"ComposedLayout({str(self)!r})"

    def compose(self, other: Any) -> Any:
        """composition(self, other)."""
        return compose_special(self, other)


def composed_slice_and_offset(coord: Coord, layout: ComposedLayout) -> tuple[Any, Integer]:
    """CuTe's slice_and_offset of a ComposedLayout: (the sliced layout, the pointer offset).

    With a Swizzle as layout_a, CuTe's refinement (swizzle_slice.py): the offset is split
    between the pointer and the swizzle, and the result may decay to a plain layout.
    Otherwise slice B and fold its offset into the composed offset (the pointer stays)."""
    if isinstance(layout.layout_a, Swizzle):
        # Imported here to break a cycle: swizzle_slice builds ComposedLayouts.
        from cutec.layout.swizzle_slice import swizzle_slice_and_offset

        return swizzle_slice_and_offset(coord, layout)
    sliced, offset = slice_and_offset(coord, layout.layout_b)
    return ComposedLayout(layout.layout_a, layout.offset + offset, sliced), 0


def compose_special(lhs: Any, rhs: Any) -> Any:
    """Composition where either side is a Swizzle or ComposedLayout, as CuTe defines it."""
    # Imported here to break a cycle: algebra imports this module.
    from cutec.layout.algebra import composition

    if isinstance(lhs, ComposedLayout):
        return ComposedLayout(lhs.layout_a, lhs.offset, composition(lhs.layout_b, rhs))
    if isinstance(lhs, Swizzle) and isinstance(rhs, Layout):
        if lhs.bits == 0:  # the identity swizzle
            return rhs
        return ComposedLayout(lhs, 0, rhs)
    if isinstance(lhs, Layout) and isinstance(rhs, ComposedLayout):
        if not it.is_constant(0, rhs.offset):
            raise LayoutError(f"composition of {lhs} with {rhs}: requires offset _0")
        return composition(composition(lhs, rhs.layout_a), rhs.layout_b)
    if isinstance(lhs, Layout) and isinstance(rhs, Swizzle):
        active_y = lhs(rhs.yyy_msk)
        active_z = lhs(rhs.zzz_msk)
        return composition(make_swizzle(active_y, active_z), lhs)
    raise LayoutError(f"composition: cannot compose {lhs} with {rhs}")


F = TypeVar("F", bound=Callable[..., Any])


def lifts_composed(fn: F) -> F:
    """Apply fn to layout_b of a ComposedLayout first argument: A o O o fn(B, ...)."""

    @functools.wraps(fn)
    def wrapper(layout: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(layout, ComposedLayout):
            inner = fn(layout.layout_b, *args, **kwargs)
            return ComposedLayout(layout.layout_a, layout.offset, inner)
        return fn(layout, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


def make_composed(layout_a: Any, offset: Integer, layout_b: Layout) -> Any:
    """composition(A, offset, B); the identity swizzle Sw<0,M,S> with offset _0 leaves B."""
    if isinstance(layout_a, Swizzle) and layout_a.bits == 0 and it.is_constant(0, offset):
        return layout_b
    return ComposedLayout(layout_a, offset, layout_b)


def _log2(n: int) -> int:
    if n <= 0 or n & (n - 1):
        raise LayoutError(f"swizzle recast by {n}: not a power of two")
    return n.bit_length() - 1


def upcast_swizzle(sw: Swizzle, n: int) -> Swizzle:
    """The swizzle on offsets counted in units of n elements."""
    new_m = sw.base - _log2(n)
    if new_m >= 0:
        return Swizzle(sw.bits, new_m, sw.shift)
    return Swizzle(max(sw.bits + new_m, 0), 0, sw.shift)


def downcast_swizzle(sw: Swizzle, n: int) -> Swizzle:
    """The swizzle on offsets counted in units of 1/n elements."""
    return Swizzle(sw.bits, sw.base + _log2(n), sw.shift)


def recast_composed(layout: Any, n: int, up: bool, recast_layout: Callable[..., Any]) -> Any:
    """upcast/downcast<n> of a Swizzle or ComposedLayout, part by part as CuTe does."""
    if isinstance(layout, Swizzle):
        return upcast_swizzle(layout, n) if up else downcast_swizzle(layout, n)
    off = it.idiv(layout.offset, n) if up else it.imul(layout.offset, n)
    # Not make_composed: CuTe's recast offset is an unsigned constant (its safe_div by C<N>
    # with N unsigned), which its rule "Sw<0,M,S> o Int<0> o B is B" does not match, so an
    # upcast that leaves no swizzle bits still prints Sw<0,M,S> o _0 o B.
    return ComposedLayout(
        recast_composed(layout.layout_a, n, up, recast_layout)
        if isinstance(layout.layout_a, Swizzle | ComposedLayout)
        else recast_layout(layout.layout_a, n),
        off,
        recast_layout(layout.layout_b, n),
    )
