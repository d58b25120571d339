"""Errors raised by the layout algebra.

The algebra is a library: it raises these plain exceptions and knows nothing of
source files. The frontend catches them and turns them into located diagnostics
at the user's line.
"""

from __future__ import annotations


class LayoutError(ValueError):
    """An operation of the algebra that cannot be carried out for these operands
    (CuTe would fail a static assert): malformed text, incompatible shapes,
    a complement of overlapping strides, a divide whose divisibility fails."""


class DynamicValueError(LayoutError):
    """The answer depends on the value of a dynamic (run-time) integer that is
    not known at compile time, so the algebra refuses to guess."""


class LayoutWarning(UserWarning):
    """The algebra returns CuTe's result, but CuTe's result is not what the operation means:
    e.g. a composition that CuTe accepts under its weak divisibility condition whose result
    is not the function composition A o B. Issued with :func:`warnings.warn`, never raised."""


def quoted(text: str, limit: int = 80) -> str:
    """`text` quoted for a message, its middle elided past `limit` characters (an error
    about a 10,000-character layout need not repeat it)."""
    if len(text) > limit:
        text = text[: limit // 2] + " ... " + text[-limit // 2 :]
    return repr(text)
