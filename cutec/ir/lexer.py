"""Tokens of the textual IR (MLIR's lexical structure, the parts cutec uses)."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from cutec.diagnostics import CompileError, Location


class Tok(enum.Enum):
    VALUE_ID = "value id"  # %name, %0
    BLOCK_ID = "block id"  # ^bb0
    SYMBOL = "symbol"  # @name or @"name"
    TYPE_ALIAS = "dialect type"  # !dialect.name
    ATTR_ALIAS = "dialect attribute"  # #dialect.name
    BARE_ID = "identifier"
    INTEGER = "integer"
    FLOAT = "float"
    STRING = "string"
    PUNCT = "punctuation"
    EOF = "end of input"


@dataclass(frozen=True)
class Token:
    kind: Tok
    text: str
    loc: Location
    offset: int  # into the source text, for raw-body parsing

    def describe(self) -> str:
        return "end of input" if self.kind is Tok.EOF else f"'{self.text}'"


_ID = r"[A-Za-z_][A-Za-z0-9_$.]*"
_SUFFIX_ID = r"(?:[0-9]+|[A-Za-z_$.\-][A-Za-z0-9_$.\-]*)"
_TOKEN_RE = re.compile(
    rf"""
    (?P<ws>[ \t\r\n]+|//[^\n]*)
  | (?P<value>%{_SUFFIX_ID})
  | (?P<block>\^{_SUFFIX_ID})
  | (?P<symbol>@(?:{_ID}|"(?:[^"\\\n]|\\.)*"))
  | (?P<type_alias>!{_ID})
  | (?P<attr_alias>\#{_ID})
  | (?P<float>[-+]?[0-9]+(?:\.[0-9]*(?:[eE][-+]?[0-9]+)?|[eE][-+]?[0-9]+))
  | (?P<integer>0x[0-9A-Fa-f]+|[0-9]+)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<bare>{_ID})
  | (?P<punct>->|::|[(){{}}\[\]<>,:=*?+\-/|#])
    """,
    re.VERBOSE,
)

_KINDS = {
    "value": Tok.VALUE_ID,
    "block": Tok.BLOCK_ID,
    "symbol": Tok.SYMBOL,
    "type_alias": Tok.TYPE_ALIAS,
    "attr_alias": Tok.ATTR_ALIAS,
    "float": Tok.FLOAT,
    "integer": Tok.INTEGER,
    "string": Tok.STRING,
    "bare": Tok.BARE_ID,
    "punct": Tok.PUNCT,
}


class LineIndex:
    """Offset → (line, column), 1-based."""

    def __init__(self, text: str) -> None:
        self.starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]

    def position(self, offset: int) -> tuple[int, int]:
        lo, hi = 0, len(self.starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1, offset - self.starts[lo] + 1


# Brackets ( [ { < nested deeper than this are a located error: the parser, the printer,
# the verifier and the passes recurse once per region, type or attribute level (the .cute
# frontend stops at 64 levels of statements; lowering adds a few regions to those).
MAX_NESTING = 128
_OPENERS = frozenset("([{<")
_CLOSERS = frozenset(")]}>")


def tokenize(text: str, file: str) -> list[Token]:
    """Split IR text into tokens; an unknown character or a bracket nested more than
    MAX_NESTING deep is a located error."""
    index = LineIndex(text)
    tokens: list[Token] = []
    pos = 0
    depth = 0
    while pos < len(text):
        m = _TOKEN_RE.match(text, pos)
        if m is None:
            line, col = index.position(pos)
            ch = text[pos]
            what = "unterminated string" if ch == '"' else f"unexpected character {ch!r}"
            raise CompileError(what, Location(file, line, col))
        kind = m.lastgroup
        assert kind is not None
        if kind != "ws":
            line, col = index.position(pos)
            tokens.append(Token(_KINDS[kind], m.group(), Location(file, line, col), pos))
            if kind == "punct":
                depth = max(0, depth + (m.group() in _OPENERS) - (m.group() in _CLOSERS))
                if depth > MAX_NESTING:
                    raise CompileError(
                        f"brackets nested more than {MAX_NESTING} deep", Location(file, line, col)
                    )
        pos = m.end()
    line, col = index.position(len(text))
    tokens.append(Token(Tok.EOF, "", Location(file, line, col), len(text)))
    return tokens


def unescape_string(literal: str) -> str:
    """The value of a quoted string token (``\\n``, ``\\t``, ``\\"``, ``\\\\``, ``\\XX`` hex)."""
    body = literal[1:-1]
    out = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in '"\\':
            out.append(nxt)
            i += 2
        elif nxt == "n":
            out.append("\n")
            i += 2
        elif nxt == "t":
            out.append("\t")
            i += 2
        else:
            out.append(chr(int(body[i + 1 : i + 3], 16)))
            i += 3
    return "".join(out)
