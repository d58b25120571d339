"""The run-time divisors of the algebra: dynamic values CuTe divides by at run time.

CuTe computes with a run-time ``int`` at run time, so a division by a dynamic
value that happens to be 0 kills its program (SIGFPE on the host), even when the
quotient is not used (its composition computes every mode's next stride). cutec
computes with symbols at compile time and assumes divisors non-zero; a dynamic
divisor that its facts cannot prove non-zero is noted here, while a
:func:`watch_divisors` block is open, so that a caller who knows the run-time
values (a test against CuTe, a run-time check) can tell whether CuTe's
program would have divided by zero.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from cutec.layout.symbolic import SymInt, bounds

_WATCH: ContextVar[list[SymInt] | None] = ContextVar("cutec_layout_divisors", default=None)


def note_divisor(b: object) -> None:
    """Record b if it is a dynamic divisor that may be 0 by its facts (and a watch is open)."""
    watch = _WATCH.get()
    if watch is None or not isinstance(b, SymInt):
        return
    lo, hi = bounds(b)
    if lo <= 0 <= hi:
        watch.append(b)


@contextmanager
def watch_divisors() -> Iterator[list[SymInt]]:
    """Collect, in the yielded list, the possibly-zero dynamic divisors used inside the block."""
    watch: list[SymInt] = []
    token = _WATCH.set(watch)
    try:
        yield watch
    finally:
        _WATCH.reset(token)
