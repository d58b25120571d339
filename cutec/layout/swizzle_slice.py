"""Slicing a swizzled ComposedLayout (CuTe's slice_and_offset for ComposedLayout<Swizzle,...>).

CuTe splits ``Sw o off o L`` sliced at a coordinate into a pointer offset and a
layout (swizzle_layout.hpp). The diced part of L is projected onto the swizzle's
Y and Z bits (``only_zy``) and onto the other bits (``anti_zy``): the anti part
becomes the pointer offset, the Z/Y part is XORed into the composed offset. When
the remaining (sliced) layout touches both a Y bit and the Z bit it is XORed
into, the result stays ``Sw o off' o slice(L)``; otherwise the swizzle decays to
a plain layout whose strides depend on the offset bits (static where those bits
are static, run-time ints where they are not).

CuTe tracks the offset as ``MixedBits``: a 32-bit value whose bits are each known
statically or at run time. ``Mixed`` models it, with one 0/1-valued expression
per dynamic bit, so every result keeps CuTe's static/dynamic split and its value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cutec.layout import coords as co
from cutec.layout import inttuple as it
from cutec.layout.algebra import composition
from cutec.layout.errors import LayoutError
from cutec.layout.inttuple import Coord, Integer
from cutec.layout.layout import Layout, dice_layout, slice_layout
from cutec.layout.swizzle import ComposedLayout
from cutec.layout.symbolic import opaque

_BITS = 32


def _dyn(x: Integer) -> Integer:
    """x as a run-time value: a static x is wrapped so that it stays dynamic."""
    return opaque("floordiv", x, 1) if isinstance(x, int) else x


def _bit(x: Integer, k: int) -> Integer:
    """Bit k of the run-time value x, as a 0/1 expression."""
    return opaque("mod", opaque("floordiv", x, 1 << k), 2)


def _xor1(a: Integer, b: Integer) -> Integer:
    if isinstance(a, int) and isinstance(b, int):
        return a ^ b
    return a + b - 2 * a * b


@dataclass
class Mixed:
    """MixedBits<static, flags>: static bits, plus one 0/1 expression per dynamic bit.

    ``plain`` marks a run-time int (all bits dynamic), which CuTe keeps as an int
    rather than a MixedBits."""

    static: int
    dyn: dict[int, Integer] = field(default_factory=dict)
    plain: bool = False

    @classmethod
    def of_dynamic(cls, x: Integer, flags: int, plain: bool = False) -> Mixed:
        return cls(0, {k: _bit(x, k) for k in range(_BITS) if flags >> k & 1}, plain)

    def bit(self, k: int) -> Integer:
        return self.dyn[k] if k in self.dyn else (self.static >> k) & 1

    def value(self) -> Integer:
        """The run-time value (CuTe converts a MixedBits to uint32_t)."""
        total: Integer = self.static
        for k, b in self.dyn.items():
            total = total + (1 << k) * b
        return _dyn(total)


Val = int | Mixed


def _as_val(x: Integer) -> Val:
    return x if isinstance(x, int) else Mixed.of_dynamic(x, (1 << _BITS) - 1, plain=True)


def _norm(m: Mixed) -> Val:
    # make_mixed_bits: no dynamic bit left -> a static int (a run-time int stays one).
    if not m.dyn and not m.plain:
        return m.static
    return m


def band(a: Val, mask: int) -> Val:
    """a & C<mask>."""
    if isinstance(a, int):
        return a & mask
    if mask == 0:  # x & _0 is _0
        return 0
    return _norm(Mixed(a.static & mask, {k: v for k, v in a.dyn.items() if mask >> k & 1}, a.plain))


def bxor(a: Val, b: Val) -> Val:
    """a ^ b: static where both bits are static."""
    if isinstance(a, int) and isinstance(b, int):
        return a ^ b
    ma = a if isinstance(a, Mixed) else Mixed(a)
    mb = b if isinstance(b, Mixed) else Mixed(b)
    flags = set(ma.dyn) | set(mb.dyn)
    static = (ma.static ^ mb.static) & ~sum(1 << k for k in flags)
    dyn = {k: _xor1(ma.bit(k), mb.bit(k)) for k in sorted(flags)}
    return _norm(Mixed(static, dyn, ma.plain or mb.plain))


def shiftr(a: Val, s: int) -> Val:
    """a >> s (a << -s for negative s)."""
    if isinstance(a, int):
        return a >> s if s >= 0 else a << -s
    static = a.static >> s if s >= 0 else (a.static << -s) & ((1 << _BITS) - 1)
    dyn = {k - s: v for k, v in a.dyn.items() if 0 <= k - s < _BITS}
    return _norm(Mixed(static, dyn, a.plain))


def apply_swizzle(sw: Any, a: Val) -> Val:
    """Swizzle::apply on a MixedBits: a ^ shiftr(a & yyy_msk, S)."""
    return bxor(a, shiftr(band(a, sw.yyy_msk), sw.shift))


def _is_zero_bit(a: Val, mask: int) -> bool | Integer:
    """(a & C<mask>) == _0 for a one-bit mask: a static bool or a run-time 0/1 expression."""
    x = band(a, mask)
    if isinstance(x, int):
        return x == 0
    return 1 - x.bit(mask.bit_length() - 1)


def _conditional(cond: bool | Integer, a: int, b: int) -> Integer:
    if isinstance(cond, bool):
        return a if cond else b
    return _dyn(b + cond * (a - b))


def to_value(a: Val) -> Integer:
    return a if isinstance(a, int) else a.value()


def to_mixed_bits(shape: Any, stride: Any, coord: Coord) -> Val:
    """CuTe's to_mixed_bits over a pow2 layout: the bits of crd2idx, static per mode."""
    if isinstance(shape, tuple):
        acc: Val = 0
        for s, d, c in zip(shape, stride, it.wrap(coord), strict=True):
            acc = bxor(acc, to_mixed_bits(s, d, c))
        return acc
    if not (isinstance(shape, int) and isinstance(stride, int)):
        raise LayoutError(f"to_mixed_bits: {shape}:{stride} is not static")
    span = shape * stride
    if span != 0 and span & (span - 1):
        raise LayoutError(f"to_mixed_bits: {shape}:{stride} requires a pow2 shape*stride")
    flags = (shape - 1) * stride
    if isinstance(coord, int):
        return (coord * stride) & flags
    if flags == 0:
        return 0
    return Mixed.of_dynamic(coord * stride, flags)


def _all_underscore(coord: Coord) -> bool:
    if isinstance(coord, tuple):
        return all(_all_underscore(c) for c in coord)
    return co._is_underscore(coord)


def swizzle_slice_and_offset(coord: Coord, layout: Any) -> tuple[Any, Integer]:
    """slice_and_offset(coord, Sw<B,M,S> o offset o L) exactly as CuTe computes it."""
    sw, lb = layout.layout_a, layout.layout_b
    if _all_underscore(coord):
        return ComposedLayout(sw, layout.offset, slice_layout(coord, lb)), 0

    b, m, s = sw.bits, sw.base, abs(sw.shift)
    shape = (1 << m, 1 << b, 1 << (s - b), 1 << b, 1)
    d1, d2, d3, d4 = 1 << m, 1 << (m + b), 1 << (m + s), 1 << (m + b + s)
    anti_zy = Layout(shape, (1, 0, d2, 0, d4))
    only_zy = Layout(shape, (0, d1, 0, d3, 0))

    sliced = slice_layout(coord, lb)
    diced = dice_layout(coord, lb)
    diced_coord = co.dice(coord, coord)
    diced_only = composition(only_zy, diced)
    diced_anti = composition(anti_zy, diced)

    offset_only_zy = bxor(
        _as_val(layout.offset),
        to_mixed_bits(
            diced_only.shape, diced_only.stride, co.idx2crd(diced_coord, diced_only.shape)
        ),
    )
    offset_anti_zy = diced_anti(diced_coord)

    sliced_only = composition(only_zy, sliced)
    active = sliced_only(it.size(sliced_only.shape) - 1)
    if isinstance(active, int) and active & ~sw(active):
        # The sliced layout hits a Y bit and its Z bit: the swizzle stays.
        return ComposedLayout(sw, to_value(offset_only_zy), sliced), offset_anti_zy

    # Decay to a plain layout: the swizzle's effect on each Y/Z bit, given the offset bits.
    z = sw.zzz_msk & -sw.zzz_msk
    y = sw.yyy_msk & -sw.yyy_msk

    def strides(z_first: bool) -> Any:
        if z_first:
            out = [
                _conditional(_is_zero_bit(offset_only_zy, y << i), z << i, -(z << i))
                for i in range(b)
            ]
        else:
            out = [
                _conditional(_is_zero_bit(offset_only_zy, z << i), (y + z) << i, (y - z) << i)
                for i in range(b)
            ]
        return out[0] if b == 1 else tuple(out)

    rep = 2 if b == 1 else (2,) * b
    swizzle_layout = Layout(
        (1 << m, rep, 1 << (s - b), rep, 1),
        (1, strides(z < y), 1 << (m + b), strides(z > y), d4),
    )
    offset = to_value(apply_swizzle(sw, offset_only_zy)) + offset_anti_zy
    return composition(swizzle_layout, sliced), offset
