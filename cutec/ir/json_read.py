"""Checked reading of JSON records read back from disk (the runtime's cache entries).

What is read back is data: each reader returns a value of the one type and range the
writer wrote, or raises `RecordError` naming the field. Code generated from a record
(the launch function, cutec.runtime.launcher) then pastes only ints, identifiers and
expressions the symbolic parser has read (docs/runtime.md, *The cache's threat model*).
"""

from __future__ import annotations

import re
from typing import Any

from cutec.layout.symbolic import parse_expr

# A name that code may use: an ASCII identifier (a kernel, a parameter, a run-time value).
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CALLS = frozenset({"ceil_div", "min", "max"})  # the symbolic parser's functions
_MAX_EXPR = 8192  # characters: a stream-K tail's grid is about 600
_MAX_ITEMS = 4096  # elements of one list
_MAX_DEPTH = 16  # nesting of a shape or stride pattern
_INT64 = 1 << 63


class RecordError(ValueError):
    """A record that cutec did not write so: a missing field, a wrong type, a value out of
    range, a name that is no identifier, an expression that does not parse."""


def field(data: Any, key: str, where: str) -> Any:
    """`data[key]` of a JSON object."""
    if not isinstance(data, dict):
        raise RecordError(f"{where}: expected an object, got {type(data).__name__}")
    if key not in data:
        raise RecordError(f"{where}: no {key!r}")
    return data[key]


def items(value: Any, where: str, length: int | None = None) -> list[Any] | tuple[Any, ...]:
    """A JSON list (of exactly `length` elements when given; a tuple, as `to_json` makes
    them, is one too)."""
    if not isinstance(value, list | tuple):
        raise RecordError(f"{where}: expected a list, got {type(value).__name__}")
    if len(value) > _MAX_ITEMS:
        raise RecordError(f"{where}: {len(value)} elements, more than {_MAX_ITEMS}")
    if length is not None and len(value) != length:
        raise RecordError(f"{where}: expected {length} elements, got {len(value)}")
    return value


def integer(value: Any, where: str, lo: int, hi: int) -> int:
    """An int in [lo, hi] (not a bool, a float or a string of digits)."""
    if type(value) is not int or not lo <= value <= hi:
        raise RecordError(f"{where}: expected an integer in [{lo}, {hi}], got {value!r:.80}")
    return value


def text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise RecordError(f"{where}: expected a string, got {type(value).__name__}")
    return value


def name(value: Any, where: str) -> str:
    """An identifier (`NAME`)."""
    if not isinstance(value, str) or not NAME.fullmatch(value):
        raise RecordError(f"{where}: expected a name, got {value!r:.80}")
    return value


def expression(value: Any, where: str) -> str:
    """`symbolic.parse_expr` text (ints, names, + - * // %, ceil_div/min/max): re-parsed."""
    if not isinstance(value, str) or len(value) > _MAX_EXPR:
        raise RecordError(f"{where}: expected an expression, got {value!r:.80}")
    try:
        parse_expr(value)
    except (ValueError, ArithmeticError, RecursionError) as e:
        raise RecordError(f"{where}: {e}") from None
    return value


def expression_names(expr: str) -> set[str]:
    """The run-time names an `expression` reads."""
    return set(NAME.findall(expr)) - _CALLS


def pattern(value: Any, where: str, depth: int = 0) -> Any:
    """A shape or stride (signature.Pattern): nested lists of 64-bit ints, names and
    expressions, as nested tuples."""
    if isinstance(value, list | tuple):
        if depth == _MAX_DEPTH:
            raise RecordError(f"{where}: nested deeper than {_MAX_DEPTH}")
        return tuple(pattern(v, where, depth + 1) for v in items(value, where))
    if isinstance(value, str):
        return value if NAME.fullmatch(value) else expression(value, where)
    return integer(value, where, -_INT64, _INT64 - 1)


def profile(p: Any) -> Any:
    """A pattern's nesting without its leaves: shape and stride must have the same."""
    return tuple(profile(e) for e in p) if isinstance(p, tuple) else None
