"""Printing and parsing layouts in CuTe's text form.

Printing follows CuTe's ``print`` without spaces: a static leaf is ``_8``, a
dynamic leaf its expression (``M``, ``ceil_div(M,128)``), a tuple
``(a,b)`` and a rank-1 tuple ``(a)``; a layout is ``shape:stride``; a swizzled
layout ``Sw<3,4,3> o _0 o (_8,_64):(_64,_1)``. Parsing reads that form and
pycute's unmarked form (``(4,8):(1,4)``), where plain integers are static.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from cutec.layout import inttuple as it
from cutec.layout.errors import LayoutError, quoted
from cutec.layout.inttuple import Integer, IntTuple
from cutec.layout.layout import Layout
from cutec.layout.swizzle import ComposedLayout, Swizzle
from cutec.layout.symbolic import evaluate, parse_expr

LeafFn = Callable[[str], Integer]


# --------------------------------------------------------------------------- printing


def format_leaf(x: Any, static_marks: bool = True, env: Mapping[str, int] | None = None) -> str:
    """One leaf: ``_8`` for a static 8, the expression (or its value under env) if dynamic."""
    if x is None:
        return "_"
    if isinstance(x, int):
        return f"_{x}" if static_marks else str(x)
    if env is not None:
        try:
            return str(evaluate(x, env))
        except ZeroDivisionError:  # CuTe would divide by zero at run time
            raise LayoutError(f"{x} divides by zero with {dict(env)}") from None
    return str(x).replace(" ", "")


def format_int_tuple(
    t: Any, static_marks: bool = True, env: Mapping[str, int] | None = None
) -> str:
    """An IntTuple in CuTe's print form: ``(_4,(M,_2))``."""
    if isinstance(t, tuple):
        return "(" + ",".join(format_int_tuple(x, static_marks, env) for x in t) + ")"
    return format_leaf(t, static_marks, env)


def format_layout(
    layout: Layout, static_marks: bool = True, env: Mapping[str, int] | None = None
) -> str:
    """A layout as ``shape:stride``."""
    return (
        format_int_tuple(layout.shape, static_marks, env)
        + ":"
        + format_int_tuple(layout.stride, static_marks, env)
    )


# --------------------------------------------------------------------------- parsing


# Deeper tuples are refused rather than read by recursion (the .cute frontend's limit too).
MAX_NESTING = 64


class _Parser:
    """Recursive-descent reader of IntTuples; a leaf is any balanced text up to ',' or ')'."""

    def __init__(self, text: str, leaf: LeafFn) -> None:
        self.text = text
        self.pos = 0
        self.leaf = leaf
        self.depth = 0

    def open_tuple(self) -> None:
        """Step over '(' into one more level of nesting."""
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.error(f"nested more than {MAX_NESTING} levels deep")
        self.pos += 1

    def error(self, what: str) -> LayoutError:
        return LayoutError(
            f"malformed layout text {quoted(self.text)} at column {self.pos}: {what}"
        )

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def int_tuple(self) -> IntTuple:
        if self.peek() == "(":
            self.open_tuple()
            items: list[IntTuple] = []
            if self.peek() == ")":
                self.pos += 1
                self.depth -= 1
                return ()
            while True:
                items.append(self.int_tuple())
                c = self.peek()
                self.pos += 1
                if c == ")":
                    self.depth -= 1
                    return tuple(items)
                if c != ",":
                    self.pos -= 1
                    raise self.error("expected ',' or ')'")
        return self.leaf_token()

    def leaf_token(self) -> Integer:
        start, level = self.pos, 0
        while self.pos < len(self.text):
            c = self.text[self.pos]
            if c == "(":
                level += 1
            elif c == ")":
                if level == 0:
                    break
                level -= 1
            elif c in ",:" and level == 0:
                break
            self.pos += 1
        token = self.text[start : self.pos]
        if not token:
            raise self.error("expected an integer")
        try:
            return self.leaf(token)
        except LayoutError:
            raise
        except (ValueError, TypeError, KeyError) as exc:  # a leaf reader's rejection
            raise self.error(f"bad leaf {token!r} ({exc})") from None


_STATIC = re.compile(r"_(-?\d+)")
_PLAIN = re.compile(r"-?\d+")


def make_leaf_fn(symbols: Mapping[str, Any] | None = None) -> LeafFn:
    """The default leaf reader: ``_N`` and ``N`` are static, anything else a SymInt."""

    def leaf(token: str) -> Integer:
        m = _STATIC.fullmatch(token) or _PLAIN.fullmatch(token)
        if m:
            return int(m.group(1) if m.re is _STATIC else m.group(0))
        return parse_symbolic(token, symbols)

    return leaf


def parse_symbolic(token: str, symbols: Mapping[str, Any] | None = None) -> Integer:
    """A dynamic leaf: parse_expr(token) with its names bound to ``symbols`` (keeps facts)."""
    return parse_expr(token, symbols)


def parse_int_tuple(
    text: str, symbols: Mapping[str, Any] | None = None, leaf: LeafFn | None = None
) -> IntTuple:
    """Read an IntTuple such as ``(_4,(M,2))``."""
    p = _Parser(_squash(text), leaf or make_leaf_fn(symbols))
    t = p.int_tuple()
    if p.pos != len(p.text):
        raise p.error("unexpected trailing text")
    return t


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def parse_layout(
    text: str, symbols: Mapping[str, Any] | None = None, leaf: LeafFn | None = None
) -> Layout | ComposedLayout:
    """Read ``shape:stride`` (or a bare shape, compact column-major) or a swizzled layout."""
    text = text.strip()
    if not text:
        raise LayoutError("malformed layout text '': empty")
    parts = re.split(r"\s+o\s+", text)
    if len(parts) == 3:
        return _parse_composed(parts, text, symbols, leaf)
    if len(parts) != 1:
        raise LayoutError(f"malformed layout text {quoted(text)}: expected 'A o offset o B'")
    p = _Parser(_squash(text), leaf or make_leaf_fn(symbols))
    shape = p.int_tuple()
    if p.peek() == ":":
        p.pos += 1
        stride = p.int_tuple()
    else:
        stride = None
    if p.pos != len(p.text):
        raise p.error("unexpected trailing text")
    try:
        return Layout(shape, stride)
    except LayoutError as exc:
        raise LayoutError(f"malformed layout text {quoted(text)}: {exc}") from None


def _parse_composed(
    parts: list[str], text: str, symbols: Mapping[str, Any] | None, leaf: LeafFn | None
) -> ComposedLayout:
    outer: Any
    m = re.fullmatch(r"Sw<\s*(-?\d+)\s*,\s*(-?\d+)\s*,\s*(-?\d+)\s*>", parts[0].strip())
    if m:
        outer = Swizzle(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    else:
        outer = parse_layout(parts[0], symbols, leaf)
    offset = parse_int_tuple(parts[1], symbols, leaf)
    inner = parse_layout(parts[2], symbols, leaf)
    if not it.is_int(offset):
        raise LayoutError(f"malformed layout text {quoted(text)}: offset must be an integer")
    return ComposedLayout(outer, offset, inner)


class _ValueParser(_Parser):
    """Reader of any algebra argument: leaves, '_', X, tuples, ``S:D`` layouts, ``Sw<B,M,S>``."""

    def value(self) -> Any:
        a = self.atom()
        if self.peek() == ":":
            self.pos += 1
            d = self.atom()
            try:
                return Layout(a, d)
            except LayoutError as exc:
                raise self.error(str(exc)) from None
        return a

    def atom(self) -> Any:
        if self.peek() == "(":
            self.open_tuple()
            items = [self.value()]
            while self.peek() == ",":
                self.pos += 1
                items.append(self.value())
            if self.peek() != ")":
                raise self.error("expected ',' or ')'")
            self.pos += 1
            self.depth -= 1
            return tuple(items)
        m = re.compile(r"Sw<(-?\d+),(-?\d+),(-?\d+)>").match(self.text, self.pos)
        if m:
            self.pos = m.end()
            return Swizzle(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        for word, value in (("_", None), ("X", it.X)):
            end = self.pos + len(word)
            if self.text.startswith(word, self.pos) and self.text[end : end + 1] in ("", ",", ")"):
                self.pos = end
                return value
        return self.leaf_token()


def parse_value(
    text: str, symbols: Mapping[str, Any] | None = None, leaf: LeafFn | None = None
) -> Any:
    """Read any argument of the algebra: an IntTuple, a tiler of layouts, a layout, a swizzle,
    ``_``/``X``, or a composed layout ``A o O o B``."""
    parts = re.split(r"\s+o\s+", text.strip())
    if len(parts) == 3:
        a, off, b = (parse_value(p, symbols, leaf) for p in parts)
        return ComposedLayout(a, off, b)
    p = _ValueParser(_squash(text), leaf or make_leaf_fn(symbols))
    if not p.text:
        raise LayoutError("malformed layout text '': empty")
    v = p.value()
    if p.pos != len(p.text):
        raise p.error("unexpected trailing text")
    return v
