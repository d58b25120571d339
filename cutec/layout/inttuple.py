"""IntTuples: CuTe's hierarchical integers, as Python ints, SymInts and tuples.

A leaf is *static* (CuTe's ``Int<N>``, printed ``_N``) when it is a Python
``int`` and *dynamic* (a run-time ``int``) when it is a ``SymInt``. Every
function here follows the static/dynamic rules of CuTe's ``int_tuple.hpp``,
``stride.hpp`` and ``tuple_algorithms.hpp``: a result leaf is static exactly
when CuTe's would be, so later passes can read the representation.

``None`` stands for CuTe's ``_`` (Underscore) in coordinates and tilers, and
:data:`X` for the step marker that drops a mode in ``local_tile``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeAlias

from cutec.layout.divisors import note_divisor
from cutec.layout.errors import LayoutError
from cutec.layout.symbolic import SymInt, opaque, smax, smin
from cutec.layout.symbolic import ceil_div as sym_ceil_div

Integer: TypeAlias = "int | SymInt"
IntTuple: TypeAlias = "Integer | tuple[IntTuple, ...]"
Coord: TypeAlias = "Integer | tuple[Coord, ...] | None"

#: CuTe's Underscore: keep this mode when slicing.
_ = None


class _XMarker:
    """CuTe's ``X`` step marker: the mode is projected out in local_tile/partition."""

    _instance: _XMarker | None = None

    def __new__(cls) -> _XMarker:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "X"


X = _XMarker()


# --------------------------------------------------------------------------- leaves


def is_tuple(t: Any) -> bool:
    """True for a tuple node of an IntTuple."""
    return isinstance(t, tuple)


def is_int(t: Any) -> bool:
    """True for an integer leaf, static or dynamic."""
    return isinstance(t, int | SymInt) and not isinstance(t, bool)


def is_static(t: Any) -> bool:
    """True when every leaf is a static (compile-time) integer."""
    if isinstance(t, tuple):
        return all(is_static(x) for x in t)
    return isinstance(t, int)


def is_constant(value: int, t: Any) -> bool:
    """CuTe's is_constant<value, T>: a static leaf equal to value."""
    return isinstance(t, int) and not isinstance(t, bool) and t == value


def _both_static(a: Integer, b: Integer) -> bool:
    return isinstance(a, int) and isinstance(b, int)


def _dynamic(result: Integer, kind: str, a: Integer, b: Integer) -> Integer:
    """Keep a result computed from a dynamic operand dynamic, as CuTe's run-time int is.

    The symbolic engine folds e.g. ceil_div(1, M) to the constant 1 from M's
    facts; CuTe computes that at run time and prints ``1``, not ``_1``, and its
    later static branches (coalesce merges, is_constant checks) must not fire.
    """
    if not isinstance(result, int):
        return result
    return opaque(kind, a, b)


def _guard(fn: Callable[[], Integer], a: Integer, b: Integer) -> Integer:
    note_divisor(b)  # CuTe divides by b at run time
    try:
        return fn()
    except ZeroDivisionError:
        raise LayoutError(f"division by zero: {a} / {b}") from None


def idiv(a: Integer, b: Integer) -> Integer:
    """C++ integer division a / b (truncating toward zero) on leaves."""
    if _both_static(a, b):
        if b == 0:
            raise LayoutError(f"division by zero: {a} / {b}")
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b > 0) else -q
    if is_constant(0, a):
        return 0
    return _dynamic(_guard(lambda: a // b, a, b), "floordiv", a, b)


def imod(a: Integer, b: Integer) -> Integer:
    """C++ remainder a % b on leaves (sign follows a); x % _1 and _0 % x are _0."""
    if _both_static(a, b):
        if b == 0:
            raise LayoutError(f"modulo by zero: {a} % {b}")
        return a - idiv(a, b) * b
    if is_constant(0, a) or is_constant(1, b) or is_constant(-1, b):
        return 0
    return _dynamic(_guard(lambda: a % b, a, b), "mod", a, b)


def imul(a: Integer, b: Integer) -> Integer:
    """a * b on leaves; _0 times anything is the static _0 (CuTe's special case)."""
    if is_constant(0, a) or is_constant(0, b):
        return 0
    return a * b


def iabs(a: Integer) -> Integer:
    """|a|; a dynamic leaf must be provably of one sign."""
    if isinstance(a, int):
        return abs(a)
    # The comparisons raise DynamicValueError when the facts cannot decide the sign.
    return a if a >= 0 else -a


def signum(a: Integer) -> int:
    """-1, 0 or 1 by the sign of a (dynamic leaves must have a provable sign)."""
    if isinstance(a, int):
        return (a > 0) - (a < 0)
    return 1 if a > 0 else (-1 if a < 0 else 0)


def imin(a: Integer, b: Integer) -> Integer:
    """min(a, b): static when both are static, else CuTe's run-time min."""
    if _both_static(a, b):
        return a if a <= b else b
    return _dynamic(smin(a, b), "min", a, b)


def imax(a: Integer, b: Integer) -> Integer:
    """max(a, b): static when both are static, else CuTe's run-time max."""
    if _both_static(a, b):
        return b if a < b else a
    return _dynamic(smax(a, b), "max", a, b)


def ceil_div_leaf(a: Integer, b: Integer) -> Integer:
    """(a + b - 1) / b on leaves, as CuTe computes ceil_div."""
    if _both_static(a, b):
        return idiv(a + b - 1, b)
    if is_constant(1, b):
        return a
    return _dynamic(_guard(lambda: sym_ceil_div(a, b), a, b), "ceil_div", a, b)


def gcd_leaf(a: int, b: int) -> int:
    """Greatest common divisor of two static leaves."""
    while b:
        a, b = b, a % b
    return abs(a)


def proven_lt(a: Integer, b: Integer) -> bool:
    """a < b, raising DynamicValueError when a dynamic comparison cannot be decided."""
    return bool(a < b)


# --------------------------------------------------------------------------- structure


def rank(t: IntTuple) -> int:
    """Number of top-level modes (1 for a leaf)."""
    return len(t) if isinstance(t, tuple) else 1


def depth(t: IntTuple) -> int:
    """Nesting depth: 0 for a leaf, 1 + max depth of the modes for a tuple."""
    if isinstance(t, tuple):
        return 1 + max((depth(x) for x in t), default=0)
    return 0


def product(t: IntTuple) -> Integer:
    """Product of all leaves (left fold; _1 for an empty tuple)."""
    if isinstance(t, tuple):
        result: Integer = 1
        first = True
        for x in t:
            p = product(x)
            result = p if first else imul(result, p)
            first = False
        return result
    return t


def size(t: IntTuple) -> Integer:
    """Number of coordinates of a shape: the product of its leaves."""
    return product(t)


def product_each(t: IntTuple) -> tuple[Integer, ...]:
    """(product(t_0), product(t_1), ...) for the modes of wrap(t)."""
    return tuple(product(x) for x in wrap(t))


def tuple_sum(t: IntTuple) -> Integer:
    """Sum of all leaves (_0 for an empty tuple)."""
    if isinstance(t, tuple):
        result: Integer = 0
        for x in t:
            result = result + tuple_sum(x)
        return result
    return t


def wrap(t: Any) -> tuple:
    """A tuple as is; a leaf as the rank-1 tuple (t,)."""
    return t if isinstance(t, tuple) else (t,)


def zip_modes(what: str, *ts: tuple) -> Iterator[tuple]:
    """The modes of tuples of one rank, side by side; a LayoutError naming `what` if the
    ranks differ (the operands do not match: the caller's mistake, not cutec's)."""
    if not all(isinstance(t, tuple) for t in ts) or len({len(t) for t in ts}) > 1:
        raise LayoutError(f"{what}: {' and '.join(format_tuple(t) for t in ts)} differ in rank")
    return zip(*ts, strict=True)


def unwrap(t: Any) -> Any:
    """Remove rank-1 tuple wrappers until a leaf or a tuple of rank > 1 remains."""
    while isinstance(t, tuple) and len(t) == 1:
        t = t[0]
    return t


def flatten(t: Any) -> Any:
    """The leaves of t as a flat tuple; a leaf stays a leaf."""
    if not isinstance(t, tuple):
        return t
    return flatten_to_tuple(t)


def leaves(t: Any) -> Iterator[Any]:
    """The leaves of a nested tuple, left to right (a leaf is its own only leaf)."""
    if isinstance(t, tuple):
        for x in t:
            yield from leaves(x)
    else:
        yield t


def flatten_to_tuple(t: Any) -> tuple:
    """The leaves of t as a flat tuple; a leaf becomes (t,)."""
    if not isinstance(t, tuple):
        return (t,)
    out: list = []
    for x in t:
        out.extend(flatten_to_tuple(x))
    return tuple(out)


def unflatten(flat: Any, profile: Any) -> Any:
    """Refold the flat tuple ``flat`` into the nesting of ``profile``."""
    flat_t = wrap(flat)

    def go(pos: int, prof: Any) -> tuple[Any, int]:
        if isinstance(prof, tuple):
            out = []
            for p in prof:
                sub, pos = go(pos, p)
                out.append(sub)
            return tuple(out), pos
        if pos >= len(flat_t):
            raise LayoutError(f"unflatten: {flat} has too few elements for profile {profile}")
        return flat_t[pos], pos + 1

    result, used = go(0, profile)
    if used != len(flat_t):
        raise LayoutError(f"unflatten: {flat} has too many elements for profile {profile}")
    return result


def repeat_like(t: Any, x: Any) -> Any:
    """A tuple congruent to t with every leaf replaced by x."""
    if isinstance(t, tuple):
        return tuple(repeat_like(a, x) for a in t)
    return x


def transform_leaf(t: Any, f: Callable[[Any], Any]) -> Any:
    """Apply f to every leaf of t, keeping the nesting."""
    if isinstance(t, tuple):
        return tuple(transform_leaf(a, f) for a in t)
    return f(t)


def append(t: Any, x: Any, n: int | None = None) -> tuple:
    """t with x appended (CuTe append); with n, pad t with x up to rank n."""
    tt = wrap(t)
    if n is None:
        return (*tt, x)
    if n < len(tt):
        raise LayoutError(f"append: rank of {t} exceeds {n}")
    if not isinstance(t, tuple) and n == 1:
        return t
    return tt + (x,) * (n - len(tt))


def prepend(t: Any, x: Any, n: int | None = None) -> tuple:
    """t with x prepended (CuTe prepend); with n, pad t in front with x up to rank n."""
    tt = wrap(t)
    if n is None:
        return (x, *tt)
    if n < len(tt):
        raise LayoutError(f"prepend: rank of {t} exceeds {n}")
    if not isinstance(t, tuple) and n == 1:
        return t
    return (x,) * (n - len(tt)) + tt


def get(t: Any, *idx: int) -> Any:
    """get<I0,I1,...>(t): nested element access (get<0> of a leaf is the leaf)."""
    for i in idx:
        if isinstance(t, tuple):
            if not 0 <= i < len(t):
                raise LayoutError(f"get<{i}>: index out of range for {format_tuple(t)}")
            t = t[i]
        elif i != 0:
            raise LayoutError(f"get<{i}>: a leaf {t} has only mode 0")
    return t


def take(t: Any, begin: int, end: int) -> tuple:
    """The modes [begin, end) of t as a tuple."""
    return wrap(t)[begin:end]


def select(t: Any, *idx: int) -> tuple:
    """The modes idx of t, in that order, as a tuple."""
    tt = wrap(t)
    for i in idx:
        if not 0 <= i < len(tt):
            raise LayoutError(f"select<{i}>: no mode {i} in {format_tuple(t)}")
    return tuple(tt[i] for i in idx)


def group(t: Any, begin: int, end: int) -> tuple:
    """t with the modes [begin, end) grouped into one mode."""
    tt = wrap(t)
    end = len(tt) if end == -1 else end
    if not (0 <= begin <= len(tt) and 0 <= end <= len(tt)):
        raise LayoutError(f"group<{begin},{end}>: out of range for {format_tuple(t)}")
    return (*tt[:begin], tt[begin:end], *tt[end:]) if begin < end else tt


def zip_tuples(t: Any) -> Any:
    """Transpose ((a,b,..),(x,y,..)) into ((a,x),(b,y),..) (CuTe zip)."""
    if not isinstance(t, tuple):
        return t
    if not t or not isinstance(t[0], tuple):
        return (t,)
    n = len(t[0])
    if any(not isinstance(x, tuple) or len(x) != n for x in t):
        raise LayoutError(f"zip: mismatched ranks in {t}")
    return tuple(tuple(x[j] for x in t) for j in range(n))


def zip2_by(t: Any, guide: Any) -> tuple:
    """Gather the rank-2 modes at the leaves of guide: ((A,a),((B,b),c)) -> ((A,B),(a,b,c))."""
    if isinstance(guide, tuple):
        tt = wrap(t)
        if len(tt) < len(guide):
            raise LayoutError(f"zip2_by: {t} has fewer modes than the tiler {guide}")
        split = [zip2_by(tt[i], g) for i, g in enumerate(guide)]
        return (
            tuple(s[0] for s in split),
            tuple(s[1] for s in split) + tuple(tt[len(guide) :]),
        )
    if not isinstance(t, tuple) or len(t) != 2:
        raise LayoutError(f"zip2_by: expected a rank-2 mode, got {t}")
    return t


# --------------------------------------------------------------------------- profiles


def congruent(a: IntTuple, b: IntTuple) -> bool:
    """Same profile (nesting of tuples) for a and b."""
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(congruent(x, y) for x, y in zip(a, b, strict=True))
    return not isinstance(a, tuple) and not isinstance(b, tuple)


def weakly_congruent(a: IntTuple, b: IntTuple) -> bool:
    """Profile of a is a coarsening of the profile of b (a <= b)."""
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(weakly_congruent(x, y) for x, y in zip(a, b, strict=True))
    return not isinstance(a, tuple)


def compatible(a: IntTuple, b: IntTuple) -> bool:
    """Shape a is compatible with b: equal sizes at every leaf of a (a <= b)."""
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(compatible(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, tuple):
        return False
    return bool(a == size(b))


# --------------------------------------------------------------------------- arithmetic


def inner_product(a: IntTuple, b: IntTuple) -> Integer:
    """sum_i a_i * b_i over congruent leaves."""
    if isinstance(a, tuple) and isinstance(b, tuple):
        if len(a) != len(b):
            raise LayoutError(f"inner_product: mismatched ranks {a} and {b}")
        result: Integer = 0
        for x, y in zip(a, b, strict=True):
            result = result + inner_product(x, y)
        return result
    return imul(a, b)


def ceil_div(a: IntTuple, b: IntTuple) -> IntTuple:
    """Ceiling division of shapes; a tuple a by an integer b folds b across a's modes."""
    if isinstance(a, tuple):
        if isinstance(b, tuple):
            if len(a) < len(b):
                raise LayoutError(f"ceil_div: {b} has more modes than {a}")
            bb = b + (1,) * (len(a) - len(b))
            return tuple(ceil_div(x, y) for x, y in zip(a, bb, strict=True))
        out = []
        rest: IntTuple = b
        for ai in a:
            out.append(ceil_div(ai, rest))
            rest = ceil_div(rest, ai)
        return tuple(out)
    if isinstance(b, tuple):
        return ceil_div(a, product(b))
    return ceil_div_leaf(a, b)


def shape_div(a: IntTuple, b: IntTuple) -> IntTuple:
    """Shape division: ceil_div that requires a % b == 0 or b % a == 0 where static."""
    if isinstance(a, tuple):
        if isinstance(b, tuple):
            if len(a) != len(b):
                raise LayoutError(f"shape_div: mismatched ranks {a} and {b}")
            return tuple(shape_div(x, y) for x, y in zip(a, b, strict=True))
        out = []
        rest: IntTuple = b
        for ai in a:
            out.append(shape_div(ai, rest))
            rest = shape_div(rest, ai)
        return tuple(out)
    if isinstance(b, tuple):
        return shape_div(a, product(b))
    if is_constant(0, b):
        raise LayoutError(f"shape_div: division by zero: {a} / {b}")
    if _both_static(a, b) and a % b != 0 and b % a != 0:
        raise LayoutError(f"shape_div: neither of {a} and {b} divides the other")
    return ceil_div_leaf(a, b)


def elem_scale(a: IntTuple, b: IntTuple) -> IntTuple:
    """a scaled leafwise by the products of the corresponding modes of b."""
    if isinstance(a, tuple):
        return tuple(elem_scale(x, y) for x, y in zip_modes("elem_scale", a, wrap(b)))
    return imul(a, product(b))


def evenly_divides(a: IntTuple, b: IntTuple) -> bool:
    """Shape a is evenly divided by tiler shape b, mode by mode."""
    if isinstance(b, tuple):
        aa = wrap(a)
        return len(b) <= len(aa) and all(evenly_divides(x, y) for x, y in zip(aa, b, strict=False))
    return bool(size(a) == imul(size(b), size(ceil_div(a, b))))


def filter_zeros(a: IntTuple, b: IntTuple | None = None) -> IntTuple:
    """b with every part paired with a static 0 of a replaced by 1s (b defaults to a)."""
    b = a if b is None else b
    if isinstance(a, tuple):
        return tuple(filter_zeros(x, y) for x, y in zip_modes("filter_zeros", a, b))
    if is_constant(0, a):
        return repeat_like(b, 1)
    return b


def prefix_product(a: IntTuple, init: Integer = 1) -> IntTuple:
    """Exclusive prefix product of the leaves, congruent to a (compact column-major)."""
    return compact_col_major(a, init)


def _compact(shape: IntTuple, current: Integer, right: bool) -> tuple[IntTuple, Integer]:
    if isinstance(shape, tuple):
        out: list = [None] * len(shape)
        order = range(len(shape) - 1, -1, -1) if right else range(len(shape))
        for i in order:
            out[i], current = _compact(shape[i], current, right)
        return tuple(out), current
    if is_constant(1, shape):
        return 0, current  # a size-1 mode never moves: stride _0
    return current, imul(current, shape)


def compact_col_major(shape: IntTuple, current: IntTuple = 1) -> IntTuple:
    """LayoutLeft strides: d_i = current * prod(s_0..s_{i-1}); size-1 modes get _0."""
    if isinstance(current, tuple):
        return tuple(compact_col_major(s, c) for s, c in zip_modes("compact", wrap(shape), current))
    return _compact(shape, current, right=False)[0]


def compact_row_major(shape: IntTuple, current: IntTuple = 1) -> IntTuple:
    """LayoutRight strides: the last mode is fastest; size-1 modes get _0."""
    if isinstance(current, tuple):
        return tuple(compact_row_major(s, c) for s, c in zip_modes("compact", wrap(shape), current))
    return _compact(shape, current, right=True)[0]


def compact_order(shape: IntTuple, order: IntTuple) -> IntTuple:
    """Compact strides visiting the modes in increasing ``order`` (dynamic orders last)."""
    if not weakly_congruent(order, shape):
        raise LayoutError(
            f"compact_order: the order {format_tuple(order)} does not match "
            f"the shape {format_tuple(shape)}"
        )
    flat_order = flatten_to_tuple(order)
    ref_shape = flatten_to_tuple(product_like(shape, order))
    max_order = 0
    for o in flat_order:
        if isinstance(o, int) and max_order < o:
            max_order = o
    ref_order = tuple(
        o if isinstance(o, int) else max_order + 1 + i for i, o in enumerate(flat_order)
    )
    new_order = unflatten(ref_order, order)

    def go(s: IntTuple, o: IntTuple) -> IntTuple:
        if isinstance(o, tuple):
            return tuple(go(x, y) for x, y in zip(wrap(s), o, strict=True))
        start: Integer = 1
        for rs, ro in zip(ref_shape, ref_order, strict=True):
            if ro < o:
                start = imul(start, rs)
        return compact_col_major(s, start)

    return go(shape, new_order)


def product_like(t: IntTuple, guide: IntTuple) -> IntTuple:
    """Products of the parts of t located at the leaves of guide."""
    if isinstance(guide, tuple):
        return tuple(product_like(x, g) for x, g in zip_modes("product_like", wrap(t), guide))
    return product(t)


def format_tuple(t: Any) -> str:
    """A nested tuple as written in IR and in the language: ``(4,(2,_),?)``.

    Leaves print with `str`; None (the ``_`` of a coordinate) prints ``_``. The
    layout printer's CuTe style (``_4`` for a static leaf) is text.format_int_tuple.
    """
    if isinstance(t, tuple):
        return "(" + ",".join(format_tuple(x) for x in t) + ")"
    return "_" if t is None else str(t)


def as_tuple_of(seq: Sequence[Any]) -> tuple:
    """Helper: a tuple from any sequence (lists from users become tuples)."""
    return tuple(as_tuple_of(x) if isinstance(x, list | tuple) else x for x in seq)
