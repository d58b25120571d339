"""Token-level parsing shared by the IR parser: punctuation, keywords, literals.

Helpers come in pairs: ``parse_optional_x`` returns None when the next token
does not start an x; ``parse_x`` raises a located `CompileError`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from cutec.diagnostics import SOURCES, CompileError, Location
from cutec.ir.lexer import Tok, Token, tokenize, unescape_string

X = TypeVar("X")


class TokenParser:
    """A cursor over the token list of one source text."""

    def __init__(self, text: str, file: str = "<input>") -> None:
        SOURCES.add(file, text)
        self.text = text
        self.file = file
        self.tokens = tokenize(text, file)
        self.pos = 0

    # ------------------------------------------------------------------ tokens
    @property
    def tok(self) -> Token:
        return self.tokens[self.pos]

    def peek(self, ahead: int = 1) -> Token:
        return self.tokens[min(self.pos + ahead, len(self.tokens) - 1)]

    def advance(self) -> Token:
        tok = self.tokens[self.pos]
        if tok.kind is not Tok.EOF:
            self.pos += 1
        return tok

    def error(self, message: str, loc: Location | None = None) -> CompileError:
        return CompileError(message, loc or self.tok.loc)

    def expected(self, what: str) -> CompileError:
        return self.error(f"expected {what}, found {self.tok.describe()}")

    def parse_optional_punct(self, text: str) -> bool:
        if self.tok.kind is Tok.PUNCT and self.tok.text == text:
            self.advance()
            return True
        return False

    def parse_punct(self, text: str) -> None:
        if not self.parse_optional_punct(text):
            raise self.expected(f"'{text}'")

    def parse_optional_keyword(self, word: str) -> bool:
        if self.tok.kind is Tok.BARE_ID and self.tok.text == word:
            self.advance()
            return True
        return False

    def parse_keyword(self, word: str) -> None:
        if not self.parse_optional_keyword(word):
            raise self.expected(f"'{word}'")

    def parse_identifier(self, what: str = "an identifier") -> str:
        if self.tok.kind is not Tok.BARE_ID:
            raise self.expected(what)
        return self.advance().text

    def parse_comma_list(self, item: Callable[[], X], close: str | None = None) -> list[X]:
        """Items separated by commas, up to (not consuming) `close` if given."""
        if close is not None and self.tok.kind is Tok.PUNCT and self.tok.text == close:
            return []
        items = [item()]
        while self.parse_optional_punct(","):
            items.append(item())
        return items

    def parse_delimited(self, open_: str, item: Callable[[], X], close: str) -> list[X]:
        self.parse_punct(open_)
        items = self.parse_comma_list(item, close)
        self.parse_punct(close)
        return items

    # ------------------------------------------------------------------ literals
    def parse_optional_integer(self) -> int | None:
        neg = self.tok.kind is Tok.PUNCT and self.tok.text == "-"
        if neg and self.peek().kind is not Tok.INTEGER:
            return None
        if not neg and self.tok.kind is not Tok.INTEGER:
            return None
        if neg:
            self.advance()
        value = int(self.advance().text, 0)
        return -value if neg else value

    def parse_integer(self, what: str = "an integer") -> int:
        value = self.parse_optional_integer()
        if value is None:
            raise self.expected(what)
        return value

    def parse_string(self) -> str:
        if self.tok.kind is not Tok.STRING:
            raise self.expected("a string")
        tok = self.advance()
        try:
            return unescape_string(tok.text)
        except (ValueError, IndexError):
            raise self.error("invalid escape in string", tok.loc) from None

    def parse_symbol_name(self) -> str:
        if self.tok.kind is not Tok.SYMBOL:
            raise self.expected("a symbol name (@name)")
        text = self.advance().text[1:]
        return unescape_string(text) if text.startswith('"') else text

    def parse_balanced_body(self) -> str:
        """Raw source text up to (not including) the '>' that closes an open '<'."""
        start = self.tok.offset
        depth = 1
        while True:
            tok = self.tok
            if tok.kind is Tok.EOF:
                raise self.expected("'>'")
            if tok.kind is Tok.PUNCT and tok.text == "<":
                depth += 1
            elif tok.kind is Tok.PUNCT and tok.text == ">":
                depth -= 1
                if depth == 0:
                    return self.text[start : tok.offset].strip()
            self.advance()
