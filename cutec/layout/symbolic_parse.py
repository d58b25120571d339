"""Text → SymInt: the reader of `str(SymInt)` (see `symbolic.parse_expr`)."""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping
from typing import NoReturn

from cutec.layout.errors import LayoutError, quoted
from cutec.layout.symbolic import _APPLY, _CALLS, Integer, sym

_TOKEN = re.compile(
    r"\s*(?:(?P<int>\d+)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<op>//|[-+*%(),])|(?P<bad>\S))"
)
_LEVELS = (("+", "-"), ("*", "//", "%"))  # binary operators, loosest first
_BINARY: dict[str, Callable[[Integer, Integer], Integer]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "//": operator.floordiv,
    "%": operator.mod,
}


# Parentheses and unary signs nested deeper than this are refused, not recursed into.
MAX_NESTING = 64


class ExprParser:
    """Recursive descent with Python's precedence: + - < * // % < unary - < atom."""

    def __init__(self, text: str, symbols: Mapping[str, Integer]) -> None:
        self.text, self.symbols, self.i = text, symbols, 0
        self.depth = 0
        self.tokens = [  # (kind, text, 1-based column)
            (m.lastgroup or "", m[m.lastgroup or 0], m.start(m.lastgroup or 0) + 1)
            for m in _TOKEN.finditer(text)
        ] + [("end", "", len(text) + 1)]
        for kind, _, col in self.tokens:
            if kind == "bad":
                self.fail("unexpected character", col)

    def fail(self, what: str, col: int) -> NoReturn:
        raise LayoutError(f"bad expression {quoted(self.text)}: {what} at column {col}")

    def peek(self) -> str:
        return self.tokens[self.i][1]

    def take(self, expected: str | None = None) -> tuple[str, str, int]:
        tok = self.tokens[self.i]
        if expected is not None and tok[1] != expected:
            self.fail(f"expected {expected!r}", tok[2])
        self.i += 1
        return tok

    def parse(self) -> Integer:
        value = self.binary(0)
        kind, _, col = self.tokens[self.i]
        if kind != "end":
            self.fail("unexpected token", col)
        return value

    def binary(self, level: int) -> Integer:
        """Left-associative operators of _LEVELS[level] and tighter."""
        if level == len(_LEVELS):
            return self.unary()
        value = self.binary(level + 1)
        while self.peek() in _LEVELS[level]:
            op = self.take()[1]
            value = _BINARY[op](value, self.binary(level + 1))
        return value

    def unary(self) -> Integer:
        self.depth += 1
        if self.depth > MAX_NESTING:
            self.fail(f"nested more than {MAX_NESTING} levels deep", self.tokens[self.i][2])
        try:
            if self.peek() in ("-", "+"):
                sign = self.take()[1]
                value = self.unary()
                return -value if sign == "-" else value
            return self.primary()
        finally:
            self.depth -= 1

    def primary(self) -> Integer:
        kind, text, col = self.take()
        if kind == "int":
            return int(text)
        if text == "(":
            value = self.binary(0)
            self.take(")")
            return value
        if kind == "name" and text in _CALLS:
            self.take("(")
            lhs = self.binary(0)
            self.take(",")
            rhs = self.binary(0)
            self.take(")")
            return _APPLY[text](lhs, rhs)
        if kind == "name":
            return self.symbols[text] if text in self.symbols else sym(text)
        self.fail("expected a name, an integer or '('", col)
