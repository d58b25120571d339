"""Symbolic integers: the dynamic leaves of CuTe layouts.

A layout leaf is a plain ``int`` (static, CuTe's ``Int<N>``) or a ``SymInt``
(dynamic, CuTe's run-time ``int``). A ``SymInt`` is kept in one canonical form,

    c0 + k1*m1 + k2*m2 + ...        (integer coefficients, no zero terms)

where each monomial ``m`` is a product of atoms raised to positive powers. An
atom is a symbol (``sym('M')``) or an irreducible ``a//b``, ``a%b``,
``ceil_div(a,b)``, ``min(a,b)`` or ``max(a,b)``. Terms and factors are sorted by
a structural key, so equal forms print and hash alike. A result with no terms
is returned as a plain ``int``.

Simplification uses the facts the user gave each symbol (a divisor and an
interval, extents and strides default to ``>= 1``) and never guesses: a
question the facts cannot answer raises ``DynamicValueError``. Integer
semantics are Python's (floor division, ``%`` with the divisor's sign) and
``ceil_div`` is the exact ceiling, which is ``(a+b-1)//b`` for ``b > 0``.
Divisors are assumed non-zero: ``(M*N)//N`` is ``M``, and a divisor known to be
``>= 0`` (such as ``4//M``) is taken to be ``>= 1`` when bounding a quotient, as
CuTe divides by it at run time (``cutec.layout.divisors`` notes such divisors).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TypeAlias

from cutec.layout.errors import DynamicValueError, LayoutError

# An interval endpoint: an int, or -inf/+inf where the facts give no bound.
Bound: TypeAlias = int | float
_INF = math.inf
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CALLS = ("ceil_div", "min", "max")
_DIVISIONS = ("floordiv", "mod")


class _Keyed:
    """Equality and hashing by a structural ``key`` tuple (also the sort key)."""

    key: tuple

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.key == other.key  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return self._hash

    @cached_property
    def _hash(self) -> int:
        return hash(self.key)


@dataclass(frozen=True, eq=False)
class _Symbol(_Keyed):
    """A named run-time integer and the facts promised about it."""

    name: str
    divisibility: int
    min_value: int
    max_value: int | None

    @cached_property
    def key(self) -> tuple:
        hi = (self.max_value is None, self.max_value or 0)
        return (0, self.name, self.divisibility, self.min_value, hi)

    @cached_property
    def bounds(self) -> tuple[Bound, Bound]:
        # The interval shrinks to the multiples of the divisor inside it.
        d = self.divisibility
        lo = -(-self.min_value // d) * d
        return lo, (_INF if self.max_value is None else self.max_value // d * d)

    def div(self) -> int:
        return self.divisibility

    def subs(self, env: Mapping[str, Integer]) -> Integer:
        if self.name not in env:
            return _atom(self)
        value = env[self.name]
        if isinstance(value, int) and (
            value % self.divisibility
            or value < self.min_value
            or (self.max_value is not None and value > self.max_value)
        ):
            raise LayoutError(f"{self.name}={value} breaks its facts {self.facts()}")
        return value

    def facts(self) -> str:
        hi = "" if self.max_value is None else f", max_value={self.max_value}"
        return f"(divisibility={self.divisibility}, min_value={self.min_value}{hi})"

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, eq=False)
class _Apply(_Keyed):
    """An irreducible ``kind(lhs, rhs)`` for kind in floordiv, mod, ceil_div, min, max."""

    kind: str
    lhs: Integer
    rhs: Integer

    @cached_property
    def key(self) -> tuple:
        return (1, self.kind, _ikey(self.lhs), _ikey(self.rhs))

    @cached_property
    def bounds(self) -> tuple[Bound, Bound]:
        (alo, ahi), (blo, bhi) = _bounds(self.lhs), _bounds(self.rhs)
        if self.kind == "min":
            return min(alo, blo), min(ahi, bhi)
        if self.kind == "max":
            return max(alo, blo), max(ahi, bhi)
        if blo == 0 and bhi >= 1:  # divisors are assumed non-zero: a divisor >= 0 is >= 1
            blo = 1
        if blo < 1:  # divisor of unknown sign: no claim
            return -_INF, _INF
        if self.kind == "mod":  # 0 <= a % b <= b-1, and <= a when a >= 0
            return 0, (bhi - 1 if alo < 0 else min(bhi - 1, ahi))
        if alo < 0:
            return -_INF, _INF
        if self.kind == "floordiv":
            return _fdiv(alo, bhi), _fdiv(ahi, blo)
        return _cdiv(alo, bhi), _cdiv(ahi, blo)

    def div(self) -> int:
        a, b = _div(self.lhs), _div(self.rhs)
        if self.kind in ("floordiv", "ceil_div"):
            # a//b and ceil_div(a,b) are a/b exactly when b | a.
            return a // b if isinstance(self.rhs, int) and a % b == 0 else 1
        # a % b = a - b*(a//b); min and max are one of a, b.
        return math.gcd(a, b)

    def subs(self, env: Mapping[str, Integer]) -> Integer:
        return _APPLY[self.kind](_subs(self.lhs, env), _subs(self.rhs, env))

    def __str__(self) -> str:
        if self.kind in _CALLS:
            return f"{self.kind}({self.lhs},{self.rhs})"
        op = "//" if self.kind == "floordiv" else "%"
        return f"{_operand(self.lhs)}{op}{_operand(self.rhs)}"


_Atom: TypeAlias = _Symbol | _Apply
# A monomial: (atom, power >= 1) pairs sorted by atom key.
_Monomial: TypeAlias = tuple[tuple[_Atom, int], ...]


def _operator(fn: Callable[[Integer, Integer], Integer]) -> tuple[Callable, Callable]:
    """The (method, reflected method) pair computing fn(self, other) and fn(other, self).

    The functions are looked up when called, since they are defined further down."""

    def method(self: SymInt, other: object) -> Integer:
        return fn(self, other) if _is_integer(other) else NotImplemented  # type: ignore[arg-type]

    def reflected(self: SymInt, other: object) -> Integer:
        return fn(other, self) if _is_integer(other) else NotImplemented  # type: ignore[arg-type]

    return method, reflected


@dataclass(frozen=True, eq=False, repr=False)
class SymInt(_Keyed):
    """A dynamic integer in canonical form ``const + sum(coeff * monomial)``.

    Build one with ``sym`` and the ordinary operators, never directly. ``==``
    is structural equality of canonical forms: ``False`` means "not the same
    expression", not "different at run time". Ordering comparisons return a
    ``bool`` only when the facts prove the answer.
    """

    terms: tuple[tuple[_Monomial, int], ...]
    const: int = 0

    @cached_property
    def key(self) -> tuple:
        return tuple((_mkey(m), k) for m, k in self.terms), self.const

    @cached_property
    def bounds(self) -> tuple[Bound, Bound]:
        lo: Bound = self.const
        hi: Bound = self.const
        for m, k in self.terms:
            tlo, thi = k, k
            for atom, p in m:
                for _ in range(p):
                    tlo, thi = _imul((tlo, thi), atom.bounds)
            lo, hi = lo + tlo, hi + thi
        return lo, hi

    def divisibility(self) -> int:
        """Largest known d with d | self: gcd over terms of |coeff| * prod(div(atom)^power)."""
        g = abs(self.const)
        for m, k in self.terms:
            g = math.gcd(g, abs(k) * math.prod(atom.div() ** p for atom, p in m))
        return g

    def free_symbols(self) -> frozenset[str]:
        """Names of all symbols in the expression, including inside atoms."""
        out: set[str] = set()
        for m, _ in self.terms:
            for atom, _ in m:
                if isinstance(atom, _Symbol):
                    out.add(atom.name)
                else:
                    out |= _free(atom.lhs) | _free(atom.rhs)
        return frozenset(out)

    def subs(self, env: Mapping[str, Integer]) -> Integer:
        """Replace symbols named in env and re-simplify; an int when none is left.

        An int value must satisfy the symbol's facts (else LayoutError), since the
        canonical form may already rely on them."""
        total: Integer = self.const
        for m, k in self.terms:
            term: Integer = k
            for atom, p in m:
                value = atom.subs(env)
                for _ in range(p):
                    term = term * value
            total = total + term
        return total

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"SymInt({self._text!r})"

    @cached_property
    def _text(self) -> str:
        out = ""
        for m, k in self.terms:
            alone = len(m) == 1 and m[0][1] == 1 and k == 1
            factors = []
            for atom, p in m:
                s = str(atom)
                if not alone and isinstance(atom, _Apply) and atom.kind in _DIVISIONS:
                    s = f"({s})"  # 2*(M//4), not 2*M//4 which reads as (2*M)//4
                factors += [s] * p
            body = "*".join(factors)
            term = body if k == 1 else "-" + body if k == -1 else f"{k}*{body}"
            out += term if not out or term.startswith("-") else "+" + term
        if self.const:
            out += f"{self.const:+d}"
        return out

    # Arithmetic with an int (not bool) or SymInt on either side.
    __add__, __radd__ = _operator(lambda a, b: _add(a, b))
    __sub__, __rsub__ = _operator(lambda a, b: _add(a, _mul(b, -1)))
    __mul__, __rmul__ = _operator(lambda a, b: _mul(a, b))
    __floordiv__, __rfloordiv__ = _operator(lambda a, b: _floordiv(a, b))
    __mod__, __rmod__ = _operator(lambda a, b: _mod(a, b))

    def __neg__(self) -> Integer:
        return _mul(self, -1)

    def __pos__(self) -> SymInt:
        return self

    # Comparisons over the integers: a < b is a+1 <= b.
    def __le__(self, other: Integer) -> bool:
        return _decide(self, other, "<=") if _is_integer(other) else NotImplemented

    def __lt__(self, other: Integer) -> bool:
        return _decide(self + 1, other, "<") if _is_integer(other) else NotImplemented

    def __ge__(self, other: Integer) -> bool:
        return _decide(other, self, ">=") if _is_integer(other) else NotImplemented

    def __gt__(self, other: Integer) -> bool:
        return _decide(other + 1, self, ">") if _is_integer(other) else NotImplemented

    def __bool__(self) -> bool:
        raise DynamicValueError(f"truth value of dynamic integer {self} is not known")

    def __int__(self) -> int:
        raise DynamicValueError(f"dynamic integer {self} has no compile-time value")

    __index__ = __int__


Integer: TypeAlias = int | SymInt


# -- public functions ---------------------------------------------------------


def sym(
    name: str, *, divisibility: int = 1, min_value: int = 1, max_value: int | None = None
) -> SymInt:
    """A dynamic integer ``name`` with divisibility | name and min_value <= name <= max_value."""
    if not _NAME.fullmatch(name) or name in _CALLS:
        raise LayoutError(f"bad symbol name {name!r}")
    if divisibility < 1:
        raise LayoutError(f"divisibility of {name} must be >= 1, not {divisibility}")
    s = _Symbol(name, divisibility, min_value, max_value)
    lo, hi = s.bounds
    if lo > hi:
        raise LayoutError(f"no value of {name} satisfies {s.facts()}")
    return _atom(s)


def is_static(x: object) -> bool:
    """True for a plain int leaf (CuTe's Int<N>); bool is not an int leaf."""
    return isinstance(x, int) and not isinstance(x, bool)


def static_value(x: object) -> int | None:
    """x when it is a static int leaf, else None."""
    return x if is_static(x) else None  # type: ignore[return-value]


def ceil_div(a: Integer, b: Integer) -> Integer:
    """ceil(a / b), which is (a + b - 1) // b for b > 0; folds when b | a provably."""
    if isinstance(a, int) and isinstance(b, int):
        return -(-a // b)
    b = _nonzero(b)
    if _leading_negative(b):
        return ceil_div(-a, -b)
    q, a = _split(a, b)  # ceil((b*q + r)/b) = q + ceil(r/b)
    if isinstance(a, int) and isinstance(b, int):
        return q + -(-a // b)
    if known_divisible(a, b):
        return q + _floordiv(a, b)
    if _bounds(a)[0] >= 1 and _le(a, b):  # 0 < a <= b
        return q + 1
    inner = _as_atom(a)
    # ceil(ceil(x/c)/b) = ceil(x/(c*b)) for positive c, b.
    if isinstance(inner, _Apply) and inner.kind == "ceil_div" and _positive(inner.rhs, b):
        return q + ceil_div(inner.lhs, inner.rhs * b)
    return q + _atom(_Apply("ceil_div", a, b))


def smin(a: Integer, b: Integer) -> Integer:
    """min(a, b); folds to an argument provably <= the other."""
    return _minmax(a, b, "min")


def smax(a: Integer, b: Integer) -> Integer:
    """max(a, b); folds to an argument provably >= the other."""
    return _minmax(a, b, "max")


def known_divisible(x: Integer, d: Integer) -> bool:
    """True only if d | x is provable (x = d*q for an integer q); 0 | x only for x = 0."""
    if isinstance(d, int):
        if d == 0:
            return isinstance(x, int) and x == 0
        return _div(x) % d == 0
    return _exact_quotient(x, d) is not None


def split_multiple(x: Integer, d: int) -> tuple[Integer, Integer]:
    """x as ``(rest, multiple)`` with ``x == rest + multiple`` and d | multiple provably:
    `multiple` the terms of x's canonical form that are known multiples of d and the
    multiple of d in its constant (``const - const % d``), `rest` the other terms and
    ``const % d``. (d >= 1.)"""
    if d < 1:
        raise ValueError(f"split_multiple by {d}")
    terms, const = _poly(x)
    high = {m: k for m, k in terms.items() if _div(_make({m: k}, 0)) % d == 0}
    multiple = _make(high, const - const % d)
    return _make({m: k for m, k in terms.items() if m not in high}, const % d), multiple


def known_residue(x: Integer, m: int) -> int | None:
    """x mod m (m >= 1) when the facts decide it, else None.

    Sums and products of known residues; a symbol is 0 mod m when its divisor is
    a multiple of m; ``mod(a, b)`` for a static b > 0 is exactly ``a mod b`` when
    that is known, else a mod m when m divides b;
    ``floordiv(a, d)`` for a static d > 0 is ``(a mod d*m) // d`` (a = q*d*m + r,
    0 <= r < d*m, gives floor(a/d) = q*m + r//d). This decides the bits of the
    MixedBits offsets a swizzled slice leaves (``((x // 2**k) % 2)``), which
    known_divisible sees as opaque.
    """
    if m < 1:
        raise ValueError(f"known_residue: the modulus must be >= 1, got {m}")
    if isinstance(x, int):
        return x % m
    if m == 1 or _div(x) % m == 0:
        return 0
    total = x.const % m
    for monomial, coefficient in x.terms:
        if coefficient % m == 0:
            continue
        r = coefficient % m
        for a, power in monomial:
            ra = _atom_residue(a, m)
            if ra is None:
                return None
            r = r * pow(ra, power, m) % m
        total = (total + r) % m
    return total


def _atom_residue(a: _Atom, m: int) -> int | None:
    if isinstance(a, _Symbol):
        return 0 if a.divisibility % m == 0 else None
    if not isinstance(a, _Apply) or not isinstance(a.rhs, int):
        return None
    if a.kind == "mod" and a.rhs > 0:
        exact = known_residue(a.lhs, a.rhs)  # then the atom's value is exactly this
        if exact is not None:
            return exact % m
        return known_residue(a.lhs, m) if a.rhs % m == 0 else None
    if a.kind == "floordiv" and a.rhs > 0:
        r = known_residue(a.lhs, a.rhs * m)
        return None if r is None else r // a.rhs
    return None


def evaluate(x: Integer, env: Mapping[str, int]) -> int:
    """The value of x with every symbol bound by env; DynamicValueError names any missing."""
    if isinstance(x, int):
        return x
    missing = x.free_symbols() - env.keys()
    if missing:
        raise DynamicValueError(f"no value for {', '.join(sorted(missing))} in {x}")
    value = x.subs(env)
    assert isinstance(value, int), f"{x} did not fold to an int under {env}"
    return value


def parse_expr(text: str, symbols: Mapping[str, Integer] | None = None) -> Integer:
    """Parse ``str(SymInt)`` text: names, ints, ( ), + - * // %, ceil_div/min/max(a,b).

    A name found in ``symbols`` takes that value (use it to restore a symbol's
    facts); any other name becomes ``sym(name)``. Precedence is Python's.
    Bad text raises LayoutError naming the 1-based column."""
    # Imported here to break a cycle: the parser builds SymInts.
    from cutec.layout.symbolic_parse import ExprParser

    return ExprParser(text, symbols or {}).parse()


def evaluated(x: Integer) -> Integer:
    """`x` with every application re-applied through the folding rules, opaque ones
    included: the same value, in the simplest form the facts allow (``opaque`` terms keep
    CuTe's static/dynamic split in results; a question about the value, such as a
    known alignment, may look through them)."""
    if isinstance(x, int):
        return x
    out: Integer = x.const
    for monomial, coeff in x.terms:
        term: Integer = coeff
        for atom, power in monomial:
            if isinstance(atom, _Apply):
                value = _APPLY[atom.kind](evaluated(atom.lhs), evaluated(atom.rhs))
            else:
                value = SymInt(((((atom, 1),), 1),))
            for _ in range(power):
                term = term * value
        out = out + term
    return out


def opaque(kind: str, a: Integer, b: Integer) -> SymInt:
    """The unevaluated application ``kind(a, b)`` (kind: floordiv, mod, ceil_div, min, max).

    It stays dynamic even when its operands would fold it to a constant: the
    algebra uses it where CuTe computes a value at run time from a run-time
    operand, so that results keep CuTe's static/dynamic split.
    """
    if kind not in _APPLY:
        raise ValueError(f"unknown operation {kind!r}; expected one of {', '.join(_APPLY)}")
    return _atom(_Apply(kind, a, b))


# -- structure, for code generators -------------------------------------------

# Code that turns a SymInt into instructions (cutec.ir.materialize) walks its
# canonical form: ``x.terms`` is a tuple of (monomial, coefficient), a monomial
# a tuple of (atom, power), and an atom a Symbol (``name``, ``divisibility``,
# ``bounds``) or an Apply (``kind``, ``lhs``, ``rhs``, ``bounds``).
Symbol = _Symbol
Apply = _Apply
Atom: TypeAlias = _Atom
Monomial: TypeAlias = _Monomial


def bounds(x: Integer) -> tuple[Bound, Bound]:
    """The interval [lo, hi] the facts place x in (-inf/+inf where they give no bound)."""
    return _bounds(x)


# -- arithmetic on canonical forms --------------------------------------------


def _is_integer(x: object) -> bool:
    return is_static(x) or isinstance(x, SymInt)


def _atom(a: _Atom) -> SymInt:
    return SymInt(((((a, 1),), 1),))


def _as_atom(x: Integer) -> _Atom | None:
    """The atom when x is exactly one atom (coefficient 1, power 1, no constant)."""
    if isinstance(x, SymInt) and len(x.terms) == 1 and not x.const:
        ((m, k),) = x.terms
        if k == 1 and len(m) == 1 and m[0][1] == 1:
            return m[0][0]
    return None


def _ikey(x: Integer) -> tuple:
    return (0, x) if isinstance(x, int) else (1, x.key)


def _mkey(m: _Monomial) -> tuple:
    return tuple((atom.key, p) for atom, p in m)


def _poly(x: Integer) -> tuple[dict[_Monomial, int], int]:
    return ({}, x) if isinstance(x, int) else (dict(x.terms), x.const)


def _make(terms: Mapping[_Monomial, int], const: int) -> Integer:
    kept = sorted(((m, k) for m, k in terms.items() if k), key=lambda t: _mkey(t[0]))
    return SymInt(tuple(kept), const) if kept else const


def _mono_mul(m1: _Monomial, m2: _Monomial) -> _Monomial:
    powers = dict(m1)
    for atom, p in m2:
        powers[atom] = powers.get(atom, 0) + p
    return tuple(sorted(powers.items(), key=lambda t: t[0].key))


def _add(a: Integer, b: Integer) -> Integer:
    terms, const = _poly(a)
    other, c = _poly(b)
    for m, k in other.items():
        terms[m] = terms.get(m, 0) + k
    return _make(terms, const + c)


def _mul(a: Integer, b: Integer) -> Integer:
    """(sum ka*ma + ca)(sum kb*mb + cb), expanded."""
    (ta, ca), (tb, cb) = _poly(a), _poly(b)
    out: dict[_Monomial, int] = {}
    for ma, ka in ta.items():
        for mb, kb in tb.items():
            m = _mono_mul(ma, mb)
            out[m] = out.get(m, 0) + ka * kb
        out[ma] = out.get(ma, 0) + ka * cb
    for mb, kb in tb.items():
        out[mb] = out.get(mb, 0) + kb * ca
    return _make(out, ca * cb)


def _split(a: Integer, b: Integer) -> tuple[Integer, Integer]:
    """(q, r) with a == b*q + r, moving into q every multiple of b that a visibly holds.

    For b = c*m, a monomial with c > 0, a term k*m*t of a splits as
    (c*m)*(k//c)*t + (k%c)*m*t. So r is 0 when b | a term-wise, and re-splitting r
    changes nothing. A b of several terms is not split: (0, a)."""
    if isinstance(b, int):
        mb, c = (), b
    elif len(b.terms) == 1 and not b.const:
        ((mb, c),) = b.terms
    else:
        return 0, a
    terms, const = _poly(a)
    q: dict[_Monomial, int] = {}
    r: dict[_Monomial, int] = {}
    q_const, r_const = (const // c, const % c) if not mb else (0, const)
    for m, k in terms.items():
        t = _mono_div(m, mb)
        if t is None:
            r[m] = k
        elif t:
            q[t], r[m] = k // c, k % c
        else:
            q_const, r[m] = q_const + k // c, k % c
    return _make(q, q_const), _make(r, r_const)


def _mono_div(m: _Monomial, d: _Monomial) -> _Monomial | None:
    """m / d as a monomial when d | m, else None."""
    powers = dict(m)
    for atom, p in d:
        if powers.get(atom, 0) < p:
            return None
        powers[atom] -= p
    return tuple((atom, powers[atom]) for atom, _ in m if powers[atom])


def _exact_quotient(a: Integer, b: SymInt) -> Integer | None:
    """q with a == b*q, or None if none is found.

    A monomial b divides term-wise (_split); for a sum b, q is tried as each
    term of a over the first term of b, which finds k*b and t*b for a monomial t."""
    q, r = _split(a, b)
    if r == 0:
        return q
    (mb, kb), *_ = b.terms
    for ma, ka in _poly(a)[0].items():
        t = _mono_div(ma, mb)
        if t is not None and ka % kb == 0:
            q = _make({t: ka // kb}, 0) if t else ka // kb
            if b * q == a:
                return q
    return None


def _nonzero(b: Integer) -> Integer:
    if isinstance(b, int) and b == 0:
        raise ZeroDivisionError("symbolic integer division by zero")
    return b


def _leading_negative(b: Integer) -> bool:
    """Divisors are normalised to a positive leading coefficient (or positive int)."""
    return b < 0 if isinstance(b, int) else b.terms[0][1] < 0


def _positive(*xs: Integer) -> bool:
    return all(_bounds(x)[0] >= 1 for x in xs)


def _floordiv(a: Integer, b: Integer) -> Integer:
    """floor(a / b); folds exact quotients, whole multiples of b and 0 <= r < b."""
    if isinstance(a, int) and isinstance(b, int):
        return a // b
    b = _nonzero(b)
    if _leading_negative(b):
        return _floordiv(-a, -b)  # floor(a/b) = floor(-a/-b)
    q, a = _split(a, b)  # floor((b*q + r)/b) = q + floor(r/b)
    if isinstance(a, int) and isinstance(b, int):
        return q + a // b
    if isinstance(b, SymInt) and (exact := _exact_quotient(a, b)) is not None:
        return q + exact
    if _bounds(a)[0] >= 0 and _le(a + 1, b):  # 0 <= r < b
        return q
    inner = _as_atom(a)
    # floor(floor(x/c)/b) = floor(x/(c*b)) for positive c, b.
    if isinstance(inner, _Apply) and inner.kind == "floordiv" and _positive(inner.rhs, b):
        return q + _floordiv(inner.lhs, inner.rhs * b)
    return q + _atom(_Apply("floordiv", a, b))


def _mod(a: Integer, b: Integer) -> Integer:
    """a % b with Python's sign rule; 0 when b | a provably, a when 0 <= a < b."""
    if isinstance(a, int) and isinstance(b, int):
        return a % b
    b = _nonzero(b)
    if _leading_negative(b):
        return -_mod(-a, -b)  # a % -b == -((-a) % b)
    _, a = _split(a, b)  # (b*q + r) % b = r % b
    if isinstance(a, int) and isinstance(b, int):
        return a % b
    if known_divisible(a, b):
        return 0
    if _bounds(a)[0] >= 0 and _le(a + 1, b):  # 0 <= r < b
        return a
    inner = _as_atom(a)
    # (x % c) % b = x % b when b | c: x % c differs from x by a multiple of b.
    if isinstance(inner, _Apply) and inner.kind == "mod" and known_divisible(inner.rhs, b):
        return _mod(inner.lhs, b)
    return _atom(_Apply("mod", a, b))


def _minmax(a: Integer, b: Integer, kind: str) -> Integer:
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b) if kind == "min" else max(a, b)
    if _le(a, b):
        return a if kind == "min" else b
    if _le(b, a):
        return b if kind == "min" else a
    a, b = sorted((a, b), key=_ikey)  # min and max commute
    return _atom(_Apply(kind, a, b))


_APPLY: dict[str, Callable[[Integer, Integer], Integer]] = {
    "floordiv": _floordiv,
    "mod": _mod,
    "ceil_div": ceil_div,
    "min": smin,
    "max": smax,
}


# -- facts: bounds, divisibility, proofs --------------------------------------


def _bounds(x: Integer) -> tuple[Bound, Bound]:
    return (x, x) if isinstance(x, int) else x.bounds


def _imul(a: tuple[Bound, Bound], b: tuple[Bound, Bound]) -> tuple[Bound, Bound]:
    # 0 * inf is 0 here: an unbounded factor times zero is zero.
    products = [0 if x == 0 or y == 0 else x * y for x in a for y in b]
    return min(products), max(products)


def _fdiv(x: Bound, y: Bound) -> Bound:
    """floor(x/y) for x >= 0, y >= 1, either possibly +inf."""
    return _INF if x == _INF else 0 if y == _INF else x // y


def _cdiv(x: Bound, y: Bound) -> Bound:
    """ceil(x/y) for x >= 0, y >= 1, either possibly +inf."""
    return _INF if x == _INF else int(x > 0) if y == _INF else -(-x // y)


def _div(x: Integer) -> int:
    """Known divisor of x; 0 for the int 0, which every d divides."""
    return abs(x) if isinstance(x, int) else x.divisibility()


def _free(x: Integer) -> frozenset[str]:
    return frozenset() if isinstance(x, int) else x.free_symbols()


def _subs(x: Integer, env: Mapping[str, Integer]) -> Integer:
    return x if isinstance(x, int) else x.subs(env)


def _le(a: Integer, b: Integer) -> bool:
    """True when a <= b is provable from bounds, or through min/max arguments."""
    if _bounds(b - a)[0] >= 0:
        return True
    x, y = _as_atom(a), _as_atom(b)
    if isinstance(x, _Apply) and x.kind in ("min", "max"):
        proofs = (_le(x.lhs, b), _le(x.rhs, b))
        if any(proofs) if x.kind == "min" else all(proofs):
            return True
    if isinstance(y, _Apply) and y.kind in ("min", "max"):
        proofs = (_le(a, y.lhs), _le(a, y.rhs))
        return all(proofs) if y.kind == "min" else any(proofs)
    return False


def _decide(a: Integer, b: Integer, op: str) -> bool:
    """a <= b as a bool, or DynamicValueError when the facts decide neither way."""
    if _le(a, b):
        return True
    if _le(b + 1, a):
        return False
    raise DynamicValueError(f"cannot decide {a}<={b} (for '{op}') from the known facts")


# -- parsing ------------------------------------------------------------------


def _operand(x: Integer) -> str:
    """x as an operand of // or %: bare when a name, a call or an int >= 0."""
    atom = _as_atom(x)
    bare = isinstance(x, int) and x >= 0
    if bare or isinstance(atom, _Symbol) or (isinstance(atom, _Apply) and atom.kind in _CALLS):
        return str(x)
    return f"({x})"
