"""From symbols to arithmetic: emit `arith` ops computing a symbolic integer.

The layout algebra computes with `SymInt`s (`cutec.layout.symbolic`); a
lowering needs their run-time values. `IntegerMaterializer` walks a SymInt's
canonical form

    c0 + k1*m1 + k2*m2 + ...,   each monomial m a product of atoms^p,

and inserts at a `Builder`'s point one op per distinct atom, monomial and
term (a memo per materialiser: the same monomial twice is one op), reading
each symbol as the SSA value it came from (`LayoutAnalysis.symbol_values`).
The atoms' facts pick cheap forms; each choice is exact, not a guess:

    a // 2^k        → shrui a, k     (a >= 0)      shrsi a, k  (any a: floor)
    a %  2^k        → andi a, 2^k-1  (any a: Python's % for a positive divisor)
    a // b, a % b   → divui, remui   (a >= 0, b >= 1)
    a // b          → floordivsi; a % b → a - b*(a // b)   (otherwise)
    ceil_div(a, b)  → (a + b - 1) // b, as above (a >= 0, b >= 1), else ceildivsi
    k * m           → shli m, log2(k)  (k a power of two), else muli
    min, max        → minsi, maxsi

An atom the facts fold to a constant (an `opaque` one, which the algebra
keeps dynamic to follow CuTe's static/dynamic split) is that constant.
Results are of the materialiser's integer type (index by default; the PTX
emitter legalises index later); a symbol's value of another integer type is
cast. Arithmetic wraps as the hardware's does: index math is assumed not to
overflow, as the algebra assumes.

The memo assumes later insertion points are dominated by earlier ones (one
builder moving forward, or into regions nested below): a value made at one
point is reused at the next.

`offset_of(layout, coord, m)` is CuTe's crd2idx with symbolic strides: the
algebra evaluates the layout at a coordinate of symbols (one per coordinate
value, ``>= 0``), so static parts fold at compile time, and the result is
materialised like any integer. A swizzle on top (`ComposedLayout`) is applied
to the materialised offset with xor, and and shift; the terms of the offset that
are multiples of the swizzle's domain (2^(B+M+|S|)) are added after it, since
``Sw(x + h) == Sw(x) + h`` for such h (the swizzle reads and writes only bits
below the domain, which adding h leaves alone). So the copies of one thread,
which differ by such terms (a row of a stage, the stage), share one swizzled
value and differ by a constant, which ptxas folds into the address.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from cutec.ir.attributes import IntegerAttr
from cutec.ir.builder import Builder
from cutec.ir.core import Operation, Value
from cutec.ir.dialects import arith
from cutec.ir.rewrite import constant_value
from cutec.ir.types import IndexType, IntegerType, Type
from cutec.layout import ComposedLayout, Layout
from cutec.layout.swizzle import Swizzle
from cutec.layout.symbolic import (
    Apply,
    Atom,
    Integer,
    Monomial,
    Symbol,
    SymInt,
    bounds,
    split_multiple,
    sym,
)

# A coordinate: an int, a value (a constant one counts as its int) or a tuple of them.
CoordValue = Value | int | tuple[Any, ...]


def _log2(k: int) -> int | None:
    """log2(k) when k is a power of two (k >= 1), else None."""
    return k.bit_length() - 1 if k >= 1 and k & (k - 1) == 0 else None


def _nonneg(x: Integer) -> bool:
    return bounds(x)[0] >= 0


class IntegerMaterializer:
    """Emits arith ops for symbolic integers at `builder`'s point, sharing what it made.

    `symbols` gives the value of each symbol, by name (a mapping or a function).
    """

    def __init__(
        self,
        builder: Builder,
        symbols: Mapping[str, Value] | Callable[[str], Value],
        type: Type | None = None,
    ) -> None:
        self.builder = builder
        self.type = type or IndexType()
        self._lookup = symbols if callable(symbols) else symbols.__getitem__
        self._named: Mapping[str, Value] = {} if callable(symbols) else symbols
        self._symbols: dict[str, Value] = {}
        self._memo: dict[object, Value] = {}
        # Coordinate values offset_of has named, and their symbols.
        self._coord_symbols: dict[Value, SymInt] = {}

    def nested(self, builder: Builder) -> IntegerMaterializer:
        """A materialiser inserting at `builder` (a region nested below this one's point)
        that reuses what this one made, which dominates it; what it makes stays its own."""
        child = IntegerMaterializer(builder, self._lookup, self.type)
        child._named = self._named
        child._symbols = dict(self._symbols)
        child._memo = dict(self._memo)
        child._coord_symbols = dict(self._coord_symbols)
        return child

    # ------------------------------------------------------------------ entry points
    def __call__(self, x: Integer) -> Value:
        """The value of `x`, emitted once per distinct (sub)expression."""
        if isinstance(x, int):
            return self.constant(x)
        key = ("sum", x)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = self._sum(x)
        return found

    def constant(self, value: int) -> Value:
        """An `arith.constant` of the materialiser's type (one per value)."""
        key = ("const", value)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = self._emit(arith.constant(value, self.type))
        return found

    def symbol(self, name: str) -> Value:
        """The value of symbol `name`, cast to the materialiser's type if needed."""
        found = self._symbols.get(name)
        if found is None:
            value = self._lookup(name)
            found = self._symbols[name] = self._cast(value)
        return found

    def coordinate(self, value: Value) -> SymInt:
        """A symbol (``>= 0``) standing for the coordinate `value` in the algebra."""
        found = self._coord_symbols.get(value)
        if found is None:
            n = len(self._coord_symbols)
            while (name := f"crd{n}") in self._named or name in self._symbols:
                n += 1
            found = self._coord_symbols[value] = sym(name, min_value=0)
            self._symbols[name] = self._cast(value)
        return found

    # ------------------------------------------------------------------ the canonical form
    def _sum(self, x: SymInt) -> Value:
        """c0 + sum k*m: positive terms added, negative ones subtracted, c0 last."""
        plus = [self._term(m, k) for m, k in x.terms if k > 0]
        minus = [self._term(m, -k) for m, k in x.terms if k < 0]
        if x.const > 0:
            plus.append(self.constant(x.const))
        elif x.const < 0:
            minus.append(self.constant(-x.const))
        if not plus:
            plus.append(self.constant(0))
        total = plus[0]
        for v in plus[1:]:
            total = self.binary(arith.AddIOp, total, v)
        for v in minus:
            total = self.binary(arith.SubIOp, total, v)
        return total

    def _term(self, m: Monomial, k: int) -> Value:
        """k * m for k >= 1: a shift when k is a power of two."""
        value = self._monomial(m)
        if k == 1:
            return value
        shift = _log2(k)
        if shift is not None:
            return self.binary(arith.ShLIOp, value, self.constant(shift))
        return self.binary(arith.MulIOp, value, self.constant(k))

    def _monomial(self, m: Monomial) -> Value:
        """a1^p1 * ... * an^pn, one factor at a time from the left: prefixes are shared
        (M*ldA and M*ldA*ldA cost two multiplies)."""
        key = ("mono", m)
        found = self._memo.get(key)
        if found is not None:
            return found
        (atom, p), rest = m[-1], m[:-1]
        prefix = (*rest, (atom, p - 1)) if p > 1 else rest
        value = self._atom(atom)
        if prefix:
            value = self.binary(arith.MulIOp, self._monomial(prefix), value)
        self._memo[key] = value
        return value

    def _atom(self, atom: Atom) -> Value:
        key = ("atom", atom)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = self._compute_atom(atom)
        return found

    def _compute_atom(self, atom: Atom) -> Value:
        if isinstance(atom, Symbol):
            return self.symbol(atom.name)
        assert isinstance(atom, Apply)
        folded = atom.subs({})  # an opaque atom the facts decide is a constant
        if isinstance(folded, int):
            return self.constant(folded)
        a, b = atom.lhs, atom.rhs
        if atom.kind == "floordiv":
            return self._floordiv(a, b)
        if atom.kind == "mod":
            return self._mod(a, b)
        if atom.kind == "ceil_div":
            if _nonneg(a) and bounds(b)[0] >= 1:
                return self._floordiv(a + b - 1, b)  # exact for a >= 0, b >= 1
            return self.binary(arith.CeilDivSIOp, self(a), self(b))
        op = arith.MinSIOp if atom.kind == "min" else arith.MaxSIOp
        return self.binary(op, self(a), self(b))

    def _floordiv(self, a: Integer, b: Integer) -> Value:
        shift = _log2(b) if isinstance(b, int) else None
        if shift is not None:
            # An arithmetic shift is floor division for every a; a logical one when a >= 0.
            op = arith.ShRUIOp if _nonneg(a) else arith.ShRSIOp
            return self.binary(op, self(a), self.constant(shift))
        if _nonneg(a) and bounds(b)[0] >= 1:
            return self.binary(arith.DivUIOp, self(a), self(b))
        return self.binary(arith.FloorDivSIOp, self(a), self(b))

    def _mod(self, a: Integer, b: Integer) -> Value:
        shift = _log2(b) if isinstance(b, int) else None
        if shift is not None:
            # Two's complement: a & (2^k - 1) is a mod 2^k, in [0, 2^k), for every a.
            return self.binary(arith.AndIOp, self(a), self.constant(b - 1))  # type: ignore[operator]
        if _nonneg(a) and bounds(b)[0] >= 1:
            return self.binary(arith.RemUIOp, self(a), self(b))
        # Python's a % b = a - b * floor(a / b) (remsi takes the dividend's sign).
        q = self._floordiv(a, b)
        return self.binary(arith.SubIOp, self(a), self.binary(arith.MulIOp, q, self(b)))

    # ------------------------------------------------------------------ emission
    def binary(self, cls: type[Operation], a: Value, b: Value) -> Value:
        """``cls(a, b)``'s result, emitted once per materialiser."""
        key = (cls, a, b)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = self._emit(cls(a, b))  # type: ignore[call-arg]
        return found

    def _emit(self, op: Operation) -> Value:
        return self.builder.insert(op).results[0]

    def _cast(self, value: Value) -> Value:
        t = value.type
        if t == self.type:
            return value
        if isinstance(t, IndexType) or isinstance(self.type, IndexType):
            return self._emit(arith.IndexCastOp(value, self.type))
        assert isinstance(t, IntegerType) and isinstance(self.type, IntegerType)
        cls = arith.ExtSIOp if t.width < self.type.width else arith.TruncIOp
        return self._emit(cls(value, self.type))


def materialize_integer(
    builder: Builder, x: Integer, symbols: Mapping[str, Value], type: Type | None = None
) -> Value:
    """The value of `x` at `builder`'s point (a one-off `IntegerMaterializer`)."""
    return IntegerMaterializer(builder, symbols, type)(x)


def offset_of(layout: Layout | ComposedLayout, coord: CoordValue, m: IntegerMaterializer) -> Value:
    """layout(coord) as a value: crd2idx with symbolic strides, static parts folded.

    `coord` is congruent to the layout's shape, or an integer (a value, or an
    int) for a whole mode, which CuTe splits colexicographically. Coordinates
    are read as integers ``>= 0``.
    """
    crd = _coord_integers(coord, m)
    if isinstance(layout, Layout):
        return m(layout(crd))
    inner = layout.offset + layout.layout_b(crd)
    outer = layout.layout_a
    if isinstance(outer, Layout):
        return m(outer(inner))
    if isinstance(outer, Swizzle):
        low, high = split_multiple(inner, outer.size())
        swizzled = _swizzle(outer, m(low), m)
        return swizzled if high == 0 else m.binary(arith.AddIOp, swizzled, m(high))
    raise TypeError(f"offset_of: cannot apply {outer}")


def _coord_integers(coord: CoordValue, m: IntegerMaterializer) -> Any:
    if isinstance(coord, tuple):
        return tuple(_coord_integers(c, m) for c in coord)
    if not isinstance(coord, Value):  # an int, or an integer of the scope's symbols
        return coord
    attr = constant_value(coord)
    if isinstance(attr, IntegerAttr):
        return attr.value
    return m.coordinate(coord)


def _swizzle(sw: Swizzle, offset: Value, m: IntegerMaterializer) -> Value:
    """offset ^ ((offset & yyy_msk) >> S): the masked bits are >= 0, so the shift is logical."""
    if sw.bits == 0:
        return offset
    bits = m.binary(arith.AndIOp, offset, m.constant(sw.yyy_msk))
    if sw.shift > 0:
        bits = m.binary(arith.ShRUIOp, bits, m.constant(sw.shift))
    elif sw.shift < 0:
        bits = m.binary(arith.ShLIOp, bits, m.constant(-sw.shift))
    return m.binary(arith.XOrIOp, offset, bits)
