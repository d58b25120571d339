"""Syntax errors in human words: lark's exceptions → one located `Diagnostic`.

lark reports an unexpected token with the set of terminal names the LALR
state accepts (``RPAR``, ``COMMA``, ``PLUS`` ...). A user wants to read
``expected ',' or ')' after argument, found 'b'``, so this module

* names terminals by their text (``')'``) or in words (``a name``);
* folds the many tokens that may start an expression into "an expression",
  and leaves out the operators that could continue a complete expression
  (listing ``'+'``, ``'*'``, ``'<<'`` ... helps nobody);
* says what the parser was inside of, from the innermost bracket still open
  on the LALR value stack ("after argument", "after parameter");
* points at the opening bracket (a note) when the file ends too early.
"""

from __future__ import annotations

import re
from typing import Any

from lark import Token
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from lark.parsers.lalr_analysis import Shift

from cutec.diagnostics import Diagnostic, Location, Note
from cutec.frontend import ast

MAX_SOURCE_BYTES = 1 << 20  # 1 MiB: the largest kernel file is a few KiB
MAX_ERRORS = 20
# The largest example has ~1500 tokens; LALR costs ~30 us a token, so this
# bounds a parse to about a second.
MAX_TOKENS = 30_000

_PUNCT = {
    "LPAR": "(", "RPAR": ")", "LSQB": "[", "RSQB": "]", "LBRACE": "{", "RBRACE": "}",
    "COMMA": ",", "COLON": ":", "DOT": ".", "EQ": "=", "PLUSEQ": "+=", "MINUSEQ": "-=",
    "STAREQ": "*=", "SLASHEQ": "/=", "PERCENTEQ": "%=", "EQEQ": "==", "NE": "!=",
    "LE": "<=", "GE": ">=", "LT": "<", "GT": ">", "SHL": "<<", "SHR": ">>", "PLUS": "+",
    "MINUS": "-", "STAR": "*", "SLASH": "/", "PERCENT": "%", "AMP": "&", "BAR": "|",
    "CARET": "^", "TILDE": "~", "UNDERSCORE": "_", "X": "X",
}  # fmt: skip
_WORDS = {
    "NAME": "a name",
    "INT": "an integer",
    "FLOAT": "a number",
    "STRING": "a string",
    "$END": "the end of the file",
}
# Tokens that can start an expression; when most of them are expected the
# message says "an expression" instead of listing them.
_EXPR_START = frozenset(
    [
        "NAME",
        "INT",
        "FLOAT",
        "STRING",
        "TRUE",
        "FALSE",
        "UNDERSCORE",
        "X",
        "AUTO",
        "LPAR",
        "MINUS",
        "PLUS",
        "TILDE",
        "NOT",
        "SMEM",
        "RMEM",
    ]
)
# Tokens that continue a complete expression (binary operators, call, index,
# member, layout colon, conditional): left out of "expected ..." lists.
_CONTINUE = frozenset(
    [
        "OR",
        "AND",
        "EQEQ",
        "NE",
        "LT",
        "LE",
        "GT",
        "GE",
        "BAR",
        "CARET",
        "AMP",
        "SHL",
        "SHR",
        "PLUS",
        "MINUS",
        "STAR",
        "SLASH",
        "PERCENT",
        "LPAR",
        "LSQB",
        "DOT",
        "IF",
        "COLON",
        "EQ",
        "PLUSEQ",
        "MINUSEQ",
        "STAREQ",
        "SLASHEQ",
        "PERCENTEQ",
    ]
)
# Order in which alternatives are listed: closers and separators first.
_ORDER = ["RPAR", "RSQB", "RBRACE", "COMMA", "_SEP", "LBRACE", "EQ", "COLON"]
_COMPARE = frozenset(["EQEQ", "NE", "LT", "LE", "GT", "GE"])
_CLOSE_OF = {"RPAR": "LPAR", "RSQB": "LSQB", "RBRACE": "LBRACE"}
_COMPLETE_TOKENS = frozenset(
    [
        "NAME",
        "RPAR",
        "RSQB",
        "INT",
        "FLOAT",
        "STRING",
        "UNDERSCORE",
        "X",
        "AUTO",
        "TRUE",
        "FALSE",
        "RBRACE",
    ]
)
_ITEM_START = re.compile(r"(kernel|func|import|const)\b")
_ANGLE_ARGS = re.compile(r"\b[A-Za-z_]\w*<[^<>=\n]{0,80}>")


def describe_terminal(name: str) -> str:
    """``RPAR`` → ``')'``, ``NAME`` → ``a name``, ``KERNEL`` → ``'kernel'``."""
    if name in _PUNCT:
        return f"'{_PUNCT[name]}'"
    if name in _WORDS:
        return _WORDS[name]
    if name == "_SEP":
        return "a newline or ';'"
    return f"'{name.lower()}'"


def describe_found(tok: Token) -> str:
    """How the offending token is quoted: ``'foo'``, ``end of line``."""
    if tok.type == "$END":
        return "the end of the file"
    if tok.type == "_SEP":
        return "';'" if tok.value == ";" else "the end of the line"
    text = tok.value
    if len(text) > 24:
        text = text[:20] + "..."
    return f"'{text}'"


def _join(words: list[str]) -> str:
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " or " + words[-1]


def _context(value_stack: list[Any]) -> tuple[str | None, Token | None, bool]:
    """(what the innermost open bracket holds, that bracket, whether the stack
    ends with a complete element) — read off the LALR value stack, where the
    brackets of unfinished constructs are still tokens."""
    last = value_stack[-1] if value_stack else None
    complete = last is not None and (not isinstance(last, Token) or last.type in _COMPLETE_TOKENS)
    pending = {"LPAR": 0, "LSQB": 0, "LBRACE": 0}
    for i in range(len(value_stack) - 1, -1, -1):
        v = value_stack[i]
        if not isinstance(v, Token):
            continue
        if v.type in _CLOSE_OF:
            pending[_CLOSE_OF[v.type]] += 1
            continue
        if v.type not in pending:
            continue
        if pending[v.type]:
            pending[v.type] -= 1
            continue
        return _bracket_noun(value_stack, i), v, complete
    return None, None, complete


def _bracket_noun(value_stack: list[Any], i: int) -> str:
    """What the open bracket at `value_stack[i]` holds, from what precedes it."""
    v = value_stack[i]
    before = value_stack[i - 1] if i > 0 else None
    btype = before.type if isinstance(before, Token) else None
    if v.type == "LBRACE":
        return "statement"
    if v.type == "LPAR":
        if btype == "NAME" or isinstance(before, list):
            return "parameter"  # kernel f(...), kernel f[...](...)
        if btype == "RANGE":
            return "range bound"
        if btype == "UNROLL":
            return "unroll factor"
        if btype == "PIPELINE":
            return "pipeline parameter"
        if isinstance(before, ast.Node):
            return "argument"
        return "tuple element"
    if btype == "NAME":
        kw = value_stack[i - 2] if i > 1 else None
        if isinstance(kw, Token) and kw.type in ("KERNEL", "FUNC"):
            return "compile-time parameter"
        if isinstance(kw, Token) and kw.type in ("SMEM", "RMEM"):
            return "layout"
        return "dimension"
    return "index"


def exact_expected(e: UnexpectedToken) -> set[str]:
    """The terminals the parser really accepts at the error.

    lark's ``expected`` is the LALR state's lookahead set, which merges
    lookaheads of every context sharing the state (so after `f(a` it would
    offer ']'). Replaying each candidate's reductions on a copy of the state
    stack (without running the AST callbacks) keeps only the true ones."""
    state = getattr(e, "state", None)
    if state is None or not hasattr(state, "state_stack"):
        return set(e.expected or ())
    conf = state.parse_conf
    return {t for t in (e.expected or ()) if _accepts(conf, list(state.state_stack), t)}


def _accepts(conf: Any, stack: list[Any], term: str) -> bool:
    for _ in range(10_000):  # reductions are finite; the bound is a guard only
        action = conf.states[stack[-1]].get(term)
        if action is None:
            return False
        kind, arg = action
        if kind is Shift:
            return True
        size = len(arg.expansion)
        if size:
            del stack[-size:]
        goto = conf.states[stack[-1]].get(arg.origin.name)
        if goto is None:
            return False
        stack.append(goto[1])
        if term == "$END" and stack[-1] == conf.end_state:
            return True
    return False


def _expected_words(
    expected: set[str], complete: bool, noun: str | None, at_end: bool
) -> list[str]:
    names = set(expected)
    words: list[str] = []
    if len(names & _EXPR_START) >= 10:
        names -= _EXPR_START
        words.append("an expression")
    if complete and names - _CONTINUE:
        names -= _CONTINUE
    if "_SEP" in names and noun == "statement":
        # inside a block: the end of the statement, or '}' when the file ended
        names.discard("_SEP" if at_end else "RBRACE")
    names.discard("$END")
    ordered = sorted(names, key=lambda n: (_ORDER.index(n) if n in _ORDER else 99, n))
    out = []
    for n in ordered:
        if n == "_SEP":
            out.append("the end of the statement" if noun == "statement" else "a newline")
        else:
            out.append(describe_terminal(n))
    return out + words


def syntax_diagnostic(e: UnexpectedInput, text: str, file: str) -> Diagnostic:
    """The one diagnostic for a lark parse error."""
    if isinstance(e, UnexpectedCharacters):
        return _bad_character(e, text, file)
    if isinstance(e, UnexpectedToken | UnexpectedEOF):
        return _bad_token(e, text, file)
    return Diagnostic("syntax error", Location(file, e.line or 1, e.column or 1))


def _bad_character(e: UnexpectedCharacters, text: str, file: str) -> Diagnostic:
    loc = Location(file, e.line, e.column)
    ch = text[e.pos_in_stream] if 0 <= e.pos_in_stream < len(text) else ""
    if ch == '"':
        return Diagnostic("unterminated string: '\"' without a closing '\"' on its line", loc)
    if ch == "'":
        return Diagnostic('strings are written with double quotes ("...")', loc)
    if ch.isprintable() and not ch.isspace():
        return Diagnostic(f"unexpected character '{ch}'", loc)
    return Diagnostic(f"unexpected character U+{ord(ch):04X}" if ch else "unexpected input", loc)


def _bad_token(e: UnexpectedToken | UnexpectedEOF, text: str, file: str) -> Diagnostic:
    tok: Token = e.token
    value_stack = list(getattr(e.state, "value_stack", []) or [])
    noun, opener, complete = _context(value_stack)
    expected = exact_expected(e) if isinstance(e, UnexpectedToken) else set(e.expected or ())
    words = _expected_words(expected, complete, noun, tok.type == "$END")
    found = describe_found(tok)
    notes: list[Note] = []
    if tok.type == "$END":
        line, col = _last_token_end(value_stack, tok)
        loc = Location(file, line, col)
        if opener is not None:
            closer = _PUNCT[{"LPAR": "RPAR", "LSQB": "RSQB", "LBRACE": "RBRACE"}[opener.type]]
            notes.append(
                Note(
                    f"unclosed '{opener.value}' here; add '{closer}'",
                    Location(file, opener.line, opener.column),
                )
            )
    else:
        loc = Location(file, tok.line or 1, tok.column or 1)
    alternatives = _join(words) if words else "something else"
    if complete and noun is not None and noun != "statement":
        msg = f"expected {alternatives} after {noun}, found {found}"
    else:
        msg = f"expected {alternatives}, found {found}"
    lines = text.splitlines()
    line_text = lines[loc.line - 1] if 0 < loc.line <= len(lines) else ""
    if tok.type != "$END" and _ANGLE_ARGS.search(line_text[:1000]):
        notes.append(
            Note(
                "compile-time arguments are written in brackets or as arguments: "
                "'UniversalCopy[u128]', 'swizzle(3, 4, 3)', not '<...>'"
            )
        )
    elif tok.type in _COMPARE and complete and noun == "statement":
        notes.append(Note("comparisons do not chain: write 'a < b and b < c'"))
    elif tok.type == "X" and "NAME" in expected:
        notes.append(Note(_STEP_MARKER))
    return Diagnostic(msg, loc, notes=notes)


# Why `X` cannot be a name: the language keeps it for CuTe's step marker.
_STEP_MARKER = "'X' is CuTe's step marker (step = (1, X, 1)), not a name: choose another name"


def _last_token_end(value_stack: list[Any], end: Token) -> tuple[int, int]:
    """Where the input ran out: the end of the last token the parser saw."""
    if getattr(end, "end_line", None):
        return end.end_line, end.end_column
    for v in reversed(value_stack):
        if isinstance(v, Token) and v.end_line:
            return v.end_line, v.end_column
        if isinstance(v, ast.Node):
            return v.span.end_line, v.span.end_col
    return 1, 1


def next_item_offset(text: str, after_line: int) -> int | None:
    """Offset of the first line after `after_line` that starts a top-level
    item (``kernel``/``func``/``import``/``const`` in column 1), for recovery."""
    offset = 0
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        if number > after_line and _ITEM_START.match(line):
            return offset
        offset += len(line)
    return None
