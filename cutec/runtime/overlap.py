"""Whether arrays share memory: an output against the launch's other arrays, and an
output against itself (two coordinates, one element).

An array here is its base address, extents, strides in elements and element bytes.
Its strides are non-negative where its extent is above 1 (the launch refuses negative
ones), so its bytes lie in [base, base + span) with
span = (sum over modes of (extent - 1) * stride + 1) * bytes, and in none when an
extent is 0. Two arrays whose spans do not meet share nothing. Spans that meet may
still interleave without sharing (the real and imaginary parts of complex numbers,
the top and bottom rows of a column-major matrix); `overlaps` proves that in two
cases, and otherwise says they may overlap:

* every stride of both is a multiple of g bytes and, modulo g, the second base lies
  far enough past the first that the elements of one fall in the other's gaps;
* the two have one element size and their strides, sorted, each exceed the span of
  the smaller ones in both arrays (as a matrix's leading dimension exceeds the rows
  of both blocks): then an address difference is a unique sum of strides, found
  digit by digit from the largest stride.
"""

from __future__ import annotations

from math import gcd

import numpy as np

# Beyond this many elements, `injective` does not count a layout's offsets one by one.
_ENUMERATE_LIMIT = 1 << 20


def span(extents: tuple[int, ...], strides: tuple[int, ...], element_bytes: int) -> int:
    """The bytes from an array's base to the end of its last element (0 if empty)."""
    if 0 in extents:
        return 0
    largest = sum((e - 1) * s for e, s in zip(extents, strides, strict=True))
    return (largest + 1) * element_bytes


def _moving(extents: tuple[int, ...], strides: tuple[int, ...], element_bytes: int
            ) -> list[tuple[int, int]]:  # fmt: skip
    """(stride in bytes, extent) of each mode that moves (extent above 1, stride not 0)."""
    return [(s * element_bytes, e) for e, s in zip(extents, strides, strict=True) if e > 1 and s]


def overlaps(
    a: tuple[int, tuple[int, ...], tuple[int, ...], int],
    b: tuple[int, tuple[int, ...], tuple[int, ...], int],
) -> bool:
    """Whether arrays `a` and `b`, each (base, extents, strides, element bytes), may share
    a byte: False only where they provably do not."""
    pa, ea, sa, na = a
    pb, eb, sb, nb = b
    la, lb = span(ea, sa, na), span(eb, sb, nb)
    if not la or not lb or pa + la <= pb or pb + lb <= pa:
        return False
    ma, mb = _moving(ea, sa, na), _moving(eb, sb, nb)
    g = 0
    for s, _ in ma + mb:
        g = gcd(g, s)
    if g:
        # Elements of a start at pa + k g, of b at pb + l g: apart when b's start, r bytes
        # past a's modulo g, leaves room for both elements in one period.
        r = (pb - pa) % g
        if na <= r and r + nb <= g:
            return False
    if na == nb and (pb - pa) % na == 0:
        return _digits_meet(ma, mb, pb - pa)
    return True


def _digits_meet(ma: list[tuple[int, int]], mb: list[tuple[int, int]], d: int) -> bool:
    """Whether some a-offset minus some b-offset is `d`: sum over strides s of
    delta_s * s = d with delta_s in [-(b's extent - 1), a's extent - 1]. True also
    where this cannot be decided digit by digit."""
    ranges: dict[int, list[int]] = {}  # stride -> [a's largest index, b's largest index]
    for k, modes in enumerate((ma, mb)):
        for s, e in modes:
            r = ranges.setdefault(s, [0, 0])
            if r[k]:
                return True  # two modes of one array with one stride: not digits
            r[k] = e - 1
    modes = sorted(ranges.items())
    below: list[tuple[int, int]] = []  # the smaller strides' reach: (lowest, highest)
    lo = hi = 0
    for s, (up, down) in modes:
        if hi - lo >= s:
            return True  # not a unique decomposition
        below.append((lo, hi))
        lo, hi = lo - down * s, hi + up * s
    rem = d
    for (s, (up, down)), (lo, hi) in zip(reversed(modes), reversed(below), strict=True):
        digit = -(-(rem - hi) // s)  # the least digit leaving rem - digit * s <= hi
        if not -down <= digit <= up or rem - digit * s < lo:
            return False
        rem -= digit * s
    return rem == 0


def injective(extents: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Whether the layout gives each coordinate its own element. True at once when each
    stride, sorted, passes the largest offset of the smaller ones (a compact or padded
    layout); else the offsets are counted (up to 2^20 elements; beyond, False)."""
    modes = sorted((s, e) for e, s in zip(extents, strides, strict=True) if e > 1)
    reach = 0  # the largest offset of the modes so far
    for s, e in modes:
        if s <= reach:
            break
        reach += (e - 1) * s
    else:
        return True
    size = 1
    for _, e in modes:
        size *= e
    if size > _ENUMERATE_LIMIT:
        return False
    offsets = np.zeros(1, np.int64)
    for s, e in modes:
        offsets = (offsets[:, None] + np.arange(e, dtype=np.int64) * s).ravel()
    return len(np.unique(offsets)) == size
