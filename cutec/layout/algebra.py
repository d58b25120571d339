"""CuTe's core layout algebra: coalesce, filter, composition, complement, inverses.

Each function reproduces CuTe's (layout.hpp) result representation, including
its static/dynamic distinctions: a mode is merged, a stride compared or a
shape divided only where CuTe can prove it at compile time.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

from cutec.layout import inttuple as it
from cutec.layout.errors import DynamicValueError, LayoutError, LayoutWarning
from cutec.layout.inttuple import Integer, IntTuple
from cutec.layout.layout import (
    Layout,
    as_layout,
    by_tiler,
    cosize,
    get,
    make_layout,
    transform_layout,
)
from cutec.layout.swizzle import (
    ComposedLayout,
    Swizzle,
    compose_special,
    lifts_composed,
    make_composed,
    recast_composed,
)

# --------------------------------------------------------------------------- coalesce


def _bw_coalesce(flat_shape: tuple, flat_stride: tuple, new_shape: Any, new_stride: Any) -> Layout:
    # Walk the modes right to left, merging s:d into the front n:e of the result
    # when s*d == e is provable at compile time (both sides static).
    for i in range(len(flat_shape) - 2, -1, -1):
        s, d = flat_shape[i], flat_stride[i]
        if it.is_constant(1, s):
            continue
        if it.is_constant(1, new_shape):
            new_shape, new_stride = s, d
            continue
        front_shape = it.get(new_shape, 0)
        front_stride = it.get(new_stride, 0)
        sd = it.imul(s, d)
        static = it.is_static(front_shape) and it.is_static(sd) and it.is_static(front_stride)
        if static and sd == front_stride:
            new_shape = _replace_front(new_shape, it.imul(s, front_shape))
            new_stride = _replace_front(new_stride, d)
            continue
        new_shape = it.prepend(new_shape, s)
        new_stride = it.prepend(new_stride, d)
    if it.is_constant(1, new_shape):
        return Layout(1, 0)
    return Layout(new_shape, new_stride)


def _replace_front(t: Any, x: Any) -> Any:
    return (x, *t[1:]) if isinstance(t, tuple) else x


def _flat(layout: Layout) -> tuple[tuple, tuple]:
    fs = it.flatten_to_tuple(layout.shape)
    fd = it.flatten_to_tuple(layout.stride)
    if not fs:
        raise LayoutError(f"cannot coalesce the empty layout {layout}")
    return fs, fd


@lifts_composed
def coalesce(layout: Layout, profile: IntTuple | None = None) -> Layout:
    """Merge modes with s_i * d_i == d_{i+1}; same function on [0, size), depth <= 1.

    With a tuple ``profile``, coalesce each mode separately (by-mode).
    """
    if isinstance(profile, tuple):
        return transform_layout(layout, profile, coalesce)
    fs, fd = _flat(layout)
    return _bw_coalesce(fs, fd, fs[-1], fd[-1])


def coalesce_x(layout: Layout, profile: IntTuple | None = None) -> Layout:
    """coalesce that also keeps the function outside the domain (a trailing _1 becomes _2)."""
    if isinstance(profile, tuple):
        return transform_layout(layout, profile, coalesce_x)
    fs, fd = _flat(layout)
    last = 2 if it.is_constant(1, fs[-1]) else fs[-1]
    return _bw_coalesce(fs, fd, last, fd[-1])


def coalesce_shape(shape: IntTuple) -> IntTuple:
    """Multiply neighbouring leaves of equal static-ness: (_2,_4,M,N,_2) -> (_8,M*N,_2)."""
    flat = it.flatten(shape)
    if not isinstance(flat, tuple):
        return flat
    init: Any = flat[0]
    for a in flat[1:]:
        back = init[-1] if isinstance(init, tuple) else init
        if it.is_static(back) == it.is_static(a):
            merged = it.imul(back, a)
            init = (*init[:-1], merged) if isinstance(init, tuple) else merged
        else:
            init = it.append(init, a)
    return init


def filter_zeros(layout: Layout, profile: IntTuple | None = None) -> Layout:
    """Replace the shape of every static stride-0 mode (or 0 in profile) by 1."""
    guide = layout.stride if profile is None else profile
    return Layout(it.filter_zeros(guide, layout.shape), layout.stride)


@lifts_composed
def filter(layout: Layout, profile: IntTuple | None = None) -> Layout:
    """coalesce(filter_zeros(layout)): drop stride-0 and size-1 modes (by-mode with profile)."""
    if isinstance(profile, tuple):
        return transform_layout(layout, profile, filter)
    return coalesce(filter_zeros(layout))


# --------------------------------------------------------------------------- composition


def _composition_impl(l_shape: Any, l_stride: Any, r_shape: Any, r_stride: Any) -> Layout:
    if isinstance(r_shape, tuple):  # right-distributivity over the modes of rhs
        modes = [
            _composition_impl(l_shape, l_stride, s, d)
            for s, d in zip(r_shape, r_stride, strict=True)
        ]
        return make_layout(*modes) if modes else Layout((), ())
    if it.is_constant(0, r_stride):
        return Layout(r_shape, r_stride)
    if not isinstance(l_shape, tuple):
        return Layout(r_shape, it.imul(r_stride, l_stride))

    result_shape: tuple = ()
    result_stride: tuple = ()
    rest_shape: Integer = r_shape
    rest_stride: Integer = r_stride
    for curr_shape, curr_stride in zip(l_shape[:-1], l_stride[:-1], strict=True):
        static = it.is_static(curr_shape) and it.is_static(rest_stride)
        if static and it.imod(rest_stride, curr_shape) != 0 and not rest_stride < curr_shape:
            raise LayoutError(
                f"stride divisibility condition fails: stride {rest_stride} vs shape {curr_shape}"
            )
        abs_stride = it.iabs(rest_stride)
        next_shape = it.ceil_div_leaf(curr_shape, abs_stride)
        next_stride = it.imul(it.ceil_div_leaf(abs_stride, curr_shape), it.signum(rest_stride))
        if it.is_constant(1, next_shape) or it.is_constant(1, rest_shape):
            rest_stride = next_stride
            continue
        new_shape = it.imin(next_shape, rest_shape)
        if it.is_constant(0, new_shape):
            # A zero extent (rest_shape is 0): CuTe's static divisibility check divides
            # by it and does not compile; here it is the user's located error.
            raise LayoutError(f"composition with a zero-extent mode: shape {r_shape}")
        if it.is_static(new_shape) and it.is_static(rest_shape) and rest_shape % new_shape:
            raise LayoutError(
                f"shape divisibility condition fails: shape {rest_shape} vs {new_shape}"
            )
        result_shape += (new_shape,)
        result_stride += (it.imul(rest_stride, curr_stride),)
        rest_shape = it.idiv(rest_shape, new_shape)
        rest_stride = next_stride

    last_stride = it.imul(rest_stride, l_stride[-1])
    if not result_shape:
        return Layout(rest_shape, last_stride)
    if it.is_constant(1, rest_shape):
        return Layout(it.unwrap(result_shape), it.unwrap(result_stride))
    return Layout((*result_shape, rest_shape), (*result_stride, last_stride))


def _int_tiler(n: Integer) -> Layout:
    # CuTe composes with an integer n as n:_1 (composition_impl(lhs, n, Int<1>{})), also for
    # n == 1, where make_layout(_1) would be _1:_0; divides and products use make_layout(n).
    return Layout(n, 1)


def composition(lhs: Any, rhs: Any) -> Any:
    """R = lhs o rhs: R(c) = lhs(rhs(c)), compatible with rhs; a tuple rhs composes by mode.

    The result is CuTe's even where CuTe's weak divisibility condition lets through a result
    that is not the function composition; then a :class:`LayoutWarning` says so (static
    layouts of at most CHECK_LIMIT elements are checked).
    """
    if isinstance(lhs, ComposedLayout | Swizzle) or isinstance(rhs, ComposedLayout | Swizzle):
        return compose_special(lhs, rhs)
    if isinstance(rhs, tuple | list) or rhs is None:
        return by_tiler(lhs, rhs, composition, keep_rest=False, int_layout=_int_tiler)
    if it.is_int(rhs):
        rhs = _int_tiler(rhs)
    if not isinstance(rhs, Layout) or not isinstance(lhs, Layout):
        raise LayoutError(f"composition: cannot compose {lhs!r} with {rhs!r}")
    try:
        flat = coalesce_x(lhs)
        result = _composition_impl(flat.shape, flat.stride, rhs.shape, rhs.stride)
    except DynamicValueError:
        raise
    except LayoutError as exc:
        raise LayoutError(f"composition of {lhs} with {_show(rhs)}: {exc}") from None
    _check_function_composition(lhs, rhs, result)
    return result


CHECK_LIMIT = 4096


def _index_table(shape: tuple, stride: tuple) -> list[int]:
    """[L(0), L(1), ...] of the static flat layout shape:stride, colexicographic."""
    table = [0]
    for s, d in zip(shape, stride, strict=True):
        table = [v + j * d for j in range(s) for v in table]
    return table


def offsets(layout: Layout) -> list[int] | None:
    """[L(0), L(1), ..., L(size - 1)] of a static layout (its function as a table, in
    colexicographic order), or None when a shape or stride is dynamic."""
    flat = _static_flat(layout)
    return None if flat is None else _index_table(*flat)


def _static_flat(layout: Layout) -> tuple[tuple, tuple] | None:
    fs = it.flatten_to_tuple(layout.shape)
    fd = it.flatten_to_tuple(layout.stride)
    if not fs or not all(type(x) is int for x in (*fs, *fd)):
        return None
    return fs, fd


def _check_function_composition(lhs: Layout, rhs: Layout, result: Layout) -> None:
    """Warn (never raise) when CuTe's result differs from c -> lhs(rhs(c)) on rhs's domain."""
    message = _composition_mismatch(lhs, rhs, result)
    if message is not None:
        warnings.warn(message, LayoutWarning, stacklevel=3)


@functools.lru_cache(maxsize=4096)
def _composition_mismatch(lhs: Layout, rhs: Layout, result: Layout) -> str | None:
    """The warning's text when CuTe's result is not lhs o rhs, else None (memoised: the
    builder composes the same layouts again and again; the warning is raised each time)."""
    try:
        flats = [_static_flat(x) for x in (lhs, rhs, result)]
        if any(f is None for f in flats):
            return None
        (ls, ld), (rs, rd), (os_, od) = flats  # type: ignore[misc]
        n = it.product(rs)
        if n > CHECK_LIMIT or it.product(os_) != n or it.product(ls) > CHECK_LIMIT:
            return None
        b = _index_table(rs, rd)
        if min(b) < 0:
            return None
        # lhs(x) for any x >= 0: the last flat mode takes what the others leave (as CuTe's
        # idx2crd does), so lhs is defined beyond its size.
        base = _index_table(ls[:-1], ld[:-1])
        p = len(base)
        got = _index_table(os_, od)
        for i, x in enumerate(b):
            want = base[x % p] + (x // p) * ld[-1]
            if got[i] != want:
                return (
                    f"composition({lhs.to_text(static_marks=False)}, "
                    f"{rhs.to_text(static_marks=False)}) is not the function composition: "
                    f"at index {i} CuTe's result gives {got[i]}, A(B({i})) = {want} "
                    "(CuTe's weak divisibility condition)"
                )
        return None
    except Exception:
        return None


def clear_caches() -> None:
    """Forget the memoised composition checks (benchmarks time a cold compile)."""
    _composition_mismatch.cache_clear()


def _show(x: Any) -> str:
    return it.format_tuple(x) if not isinstance(x, Layout) else str(x)


# --------------------------------------------------------------------------- complement


def _complement(shape: Any, stride: Any, cotarget: Any) -> Layout:
    if it.is_constant(0, stride):  # the irreducible _1:_0
        return Layout(coalesce_shape(cotarget))
    r = it.rank(shape)
    if r > 1 and not it.is_static(stride):
        raise DynamicValueError(
            "complement with dynamic strides is defined only for rank-1 layouts"
        )
    shp, std = list(it.wrap(shape)), list(it.wrap(stride))
    result_shape: list = []
    result_stride: list = [1]
    for i in range(r - 1):
        min_stride = min(std)
        idx = std.index(min_stride)
        new_shape = it.idiv(min_stride, result_stride[i])
        if it.is_constant(0, new_shape):
            raise LayoutError("non-injective layout (overlapping strides)")
        result_shape.append(new_shape)
        result_stride.append(it.imul(min_stride, shp[idx]))
        del shp[idx], std[idx]
    new_shape = it.idiv(std[0], result_stride[r - 1])
    if it.is_constant(0, new_shape):
        raise LayoutError("non-injective layout (overlapping strides)")
    result_shape.append(new_shape)
    new_stride = it.imul(std[0], shp[0])
    rest_shape = coalesce_shape(it.ceil_div(cotarget, new_stride))
    rest_stride = it.compact_col_major(rest_shape, new_stride)
    return coalesce(Layout((tuple(result_shape), rest_shape), (tuple(result_stride), rest_stride)))


def complement(layout: Any, cotarget: IntTuple | Layout | None = None) -> Layout:
    """The layout L* of the codomain [0, cotarget) not reached by layout, ordered, disjoint."""
    if isinstance(layout, ComposedLayout):
        layout = layout.layout_b  # CuTe: the complement of B
    layout = as_layout(layout)
    filtered = filter(layout)
    target = cosize_of(filtered) if cotarget is None else _shape_of(cotarget)
    try:
        return _complement(filtered.shape, filtered.stride, target)
    except DynamicValueError:
        raise
    except LayoutError as exc:
        raise LayoutError(
            f"complement of {layout} (cotarget {_show(target)}): {exc}; "
            "stride-0 modes are dropped first"
        ) from None


def cosize_of(layout: Layout) -> Integer:
    """cosize, imported lazily to avoid a cycle."""
    return cosize(layout)


def _shape_of(x: Any) -> IntTuple:
    return x.shape if isinstance(x, Layout) else x


# --------------------------------------------------------------------------- inverses


def _exchange_sort(keys: list, vals: list) -> list:
    # CuTe's compile-time exchange sort; equal keys keep CuTe's (unstable) order.
    pairs = list(zip(keys, vals, strict=True))
    n = len(pairs)
    for i in range(n):
        for j in range(i + 1, n):
            if pairs[j][0] < pairs[i][0]:
                pairs[i], pairs[j] = pairs[j], pairs[i]
    return [v for _, v in pairs]


def _prefix(shape: tuple) -> list:
    pre: list = [1]
    for s in shape:
        pre.append(it.imul(s, pre[-1]))
    return pre


def _inverse_composed(layout: Any, inverse: Any) -> Any:
    # A swizzle is its own inverse; with offset _0 it is passed back to the left.
    if isinstance(layout, Swizzle):
        return layout
    if not isinstance(layout, ComposedLayout):
        raise LayoutError(f"the inverse of {layout!r}: not a layout")
    if isinstance(layout.layout_a, Swizzle) and it.is_constant(0, layout.offset):
        return composition(inverse(layout.layout_b), layout.layout_a)
    return make_composed(inverse(layout.layout_b), -layout.offset, inverse(layout.layout_a))


def right_inverse(layout: Any) -> Any:
    """R with layout(R(i)) == i for all i < size(R), R as large as possible."""
    if layout is None:
        return None
    if not isinstance(layout, Layout) and not it.is_int(layout) and not isinstance(layout, tuple):
        return _inverse_composed(layout, right_inverse)
    c = coalesce(as_layout(layout))
    lstride, lshape = it.wrap(c.stride), it.wrap(c.shape)
    pre = _prefix(lshape)
    static_idx = [i for i, d in enumerate(lstride) if it.is_static(d)]
    order = _exchange_sort([lstride[i] for i in static_idx], static_idx)
    result_shape: tuple = (1,)
    result_stride: tuple = (0,)
    curr: Integer = 1
    for i in order:
        if it.is_static(curr) and lstride[i] == curr:
            result_shape += (lshape[i],)
            result_stride += (pre[i],)
            curr = it.imul(lshape[i], lstride[i])
    return coalesce(Layout(result_shape, result_stride))


def left_inverse(layout: Any) -> Any:
    """R with R(layout(i)) == i for all i < size(layout) when layout is injective."""
    if layout is None:
        return None
    if not isinstance(layout, Layout) and not it.is_int(layout) and not isinstance(layout, tuple):
        return _inverse_composed(layout, left_inverse)
    layout = as_layout(layout)
    c = coalesce(layout)
    lstride, lshape = it.wrap(c.stride), it.wrap(c.shape)
    if not it.is_static(lstride):
        raise DynamicValueError(f"left_inverse of {layout} requires static strides")
    pre = _prefix(lshape)
    order = _exchange_sort(list(lstride), list(range(len(lstride))))
    result_shape: tuple = ()
    result_stride: tuple = (0,)
    for i in order:
        d = lstride[i]
        if d == 0:
            continue
        sz = it.product(result_shape)
        if not it.is_static(sz):
            raise DynamicValueError(f"left_inverse of {layout} requires static shapes")
        if d % sz != 0:
            raise LayoutError(f"left_inverse of {layout}: stride {d} is not a multiple of {sz}")
        result_shape += (d // sz,)
        result_stride += (pre[i],)
    return coalesce(Layout((*result_shape, lshape[order[-1]]), result_stride))


# --------------------------------------------------------------------------- common vectors


def max_common_layout(a: Layout, b: Layout) -> Layout:
    """Layout R of the largest contiguous run with a(R(i)) == i and b(R(i)) == i."""
    inv_b = right_inverse(b)
    common = coalesce(composition(a, inv_b))
    s0, d0 = it.get(common.shape, 0), it.get(common.stride, 0)
    if it.is_static(s0) and it.is_constant(1, d0):
        return composition(inv_b, get(common, 0) if isinstance(common.shape, tuple) else common)
    return Layout(1, 0)


def max_common_vector(a: Layout, b: Layout) -> Integer:
    """Largest N such that a and b agree and are contiguous on their first N elements."""
    common = coalesce(composition(a, right_inverse(b)))
    s0, d0 = it.get(common.shape, 0), it.get(common.stride, 0)
    if it.is_static(s0) and it.is_constant(1, d0):
        return s0
    return 1


def nullspace(layout: Layout) -> Layout:
    """Layout K of the coordinates with layout(K(i)) == 0 (the static stride-0 modes)."""
    fs = it.flatten_to_tuple(layout.shape)
    fd = it.flatten_to_tuple(layout.stride)
    idx = [i for i, d in enumerate(fd) if it.is_constant(0, d)]
    if not idx:
        return Layout(1, 0)
    rstride = it.compact_col_major(fs)
    return Layout(it.unwrap(tuple(fs[i] for i in idx)), it.unwrap(tuple(rstride[i] for i in idx)))


# --------------------------------------------------------------------------- recast


def _upcast_mode(s: Any, d: Any, n: int) -> Layout:
    if isinstance(s, tuple):
        modes = [_upcast_mode(x, y, n) for x, y in zip(s, d, strict=True)]
        return make_layout(*modes) if modes else Layout((), ())
    if it.is_constant(0, d):
        return Layout(s, d)
    if it.is_static(d):
        if d % n != 0 and n % d != 0:
            raise LayoutError(f"upcast<{n}>: stride {d} and {n} do not divide each other")
        return Layout(
            it.ceil_div(s, it.ceil_div_leaf(n, abs(d))),
            it.signum(d) * it.ceil_div_leaf(abs(d), n),
        )
    # Dynamic strides are assumed to be multiples of n; the quotient is a run-time int (a
    # run-time 0 stays the dynamic 0, not the static _0).
    return Layout(s, it.idiv(d, n))


def _recast_args(what: str, layout: Any, *factors: Any) -> None:
    # CuTe's recasts take a layout (or swizzle) and static positive factors: a factor of
    # 0 divides by zero, a negative one has no meaning.
    if not isinstance(layout, Layout | Swizzle | ComposedLayout):
        raise LayoutError(f"{what} needs a layout or a swizzle, got {layout!r}")
    for n in factors:
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise LayoutError(f"{what}: the factor {n!r} must be a positive static integer")


def upcast(layout: Any, n: int) -> Any:
    """Layout in units of n elements: stride-1 modes shrink by n, other strides divide by n."""
    _recast_args(f"upcast<{n}>", layout, n)
    if not isinstance(layout, Layout):
        return recast_composed(layout, n, True, upcast)
    return _upcast_mode(layout.shape, layout.stride, n)


def _downcast_mode(s: Any, d: Any, n: int) -> Layout:
    if isinstance(s, tuple):
        modes = [_downcast_mode(x, y, n) for x, y in zip(s, d, strict=True)]
        return make_layout(*modes) if modes else Layout((), ())
    if it.is_constant(1, d) or it.is_constant(-1, d):
        return Layout(it.imul(s, n), d)
    return Layout(s, it.imul(d, n))


def downcast(layout: Any, n: int) -> Any:
    """Layout in units of 1/n elements: stride-1 modes grow by n, other strides scale by n."""
    _recast_args(f"downcast<{n}>", layout, n)
    if not isinstance(layout, Layout):
        return recast_composed(layout, n, False, downcast)
    if not any(it.is_constant(1, d) for d in it.flatten_to_tuple(layout.stride)):
        raise LayoutError(f"downcast<{n}> of {layout} requires a stride-1 mode")
    return _downcast_mode(layout.shape, layout.stride, n)


def recast_layout(layout: Any, old_bits: int, new_bits: int) -> Any:
    """Reinterpret a layout of old_bits-wide elements as one of new_bits-wide elements."""
    _recast_args(f"recast_layout<{old_bits},{new_bits}>", layout, old_bits, new_bits)
    g = it.gcd_leaf(old_bits, new_bits)
    num, den = new_bits // g, old_bits // g
    if num == 1 and den == 1:
        return layout
    if num == 1:
        return downcast(layout, den)
    if den == 1:
        return upcast(layout, num)
    return downcast(upcast(layout, num), den)


def max_alignment(layout: Layout) -> Integer:
    """Largest N for which upcast<N>(layout) passes CuTe's static divisibility checks."""
    # Imported here to break a cycle: divide is built on composition and complement.
    from cutec.layout.divide import logical_divide

    flat = coalesce(layout)
    ss = it.transform_leaf(it.wrap(flat.shape), lambda s: s if it.is_static(s) else 1)
    sd = it.transform_leaf(it.wrap(flat.stride), lambda d: d if it.is_static(d) else 0)
    filt = Layout(ss, sd)
    permuted = logical_divide(filt, right_inverse(filt))
    return it.gcd_leaf(it.size(it.get(permuted.shape, 0)), it.get(permuted.stride, 1))
