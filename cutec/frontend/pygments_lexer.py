"""A Pygments lexer for `.cute`, for docs and terminals (``pygmentize -l
cutec/frontend/pygments_lexer.py:CuteLexer -x file.cute``).

The keyword list must match the grammar's reserved words; a test checks it.
Builtins come from the builtin registry (cutec/frontend/builtins.py), so a new
builtin needs no change here; atom names are highlighted by pattern.
"""

from __future__ import annotations

from typing import ClassVar

from pygments.lexer import RegexLexer, bygroups, words
from pygments.token import (
    Comment,
    Keyword,
    Name,
    Number,
    Operator,
    Punctuation,
    String,
    Text,
    Whitespace,
)

from cutec.frontend.builtins import REGISTRY

KEYWORDS = (
    "kernel", "func", "import", "as", "const", "if", "else", "for", "in", "range",
    "unroll", "pipeline", "while", "return", "grid", "threads", "cluster", "blocks_per_sm",
    "assume", "align",
    "smem", "rmem", "and", "or", "not",
)  # fmt: skip
CONSTANTS = ("true", "false", "auto", "X", "_")
TYPES = (
    "f16", "bf16", "tf32", "f32", "f64", "e4m3", "e5m2", "s8", "s16", "s32", "s64",
    "u8", "u16", "u32", "u64", "u128", "bool", "int", "dtype", "layout", "tuple",
    "copy_atom", "mma_atom", "mbarrier",
)  # fmt: skip


class CuteLexer(RegexLexer):
    name = "cute"
    aliases: ClassVar[list[str]] = ["cute"]
    filenames: ClassVar[list[str]] = ["*.cute"]

    tokens: ClassVar[dict[str, list]] = {
        "root": [
            (r"\s+", Whitespace),
            (r"//.*?$", Comment.Single),
            (r"/\*[\s\S]*?\*/", Comment.Multiline),
            (r"(kernel|func)(\s+)([A-Za-z_]\w*)", bygroups(Keyword, Whitespace, Name.Function)),
            (words(KEYWORDS, suffix=r"\b"), Keyword),
            (words(CONSTANTS, suffix=r"\b"), Keyword.Constant),
            (words(TYPES, suffix=r"\b"), Keyword.Type),
            # CuTe atoms: SM80_16x8x16_F32F16F16F32_TN, UniversalCopy, GMMA ...
            (r"(SM\d+_\w+|Universal\w+|GMMA|Layout(Left|Right))\b", Name.Class),
            (words(tuple(sorted(REGISTRY, key=len, reverse=True)), suffix=r"\b"), Name.Builtin),
            (r"[A-Za-z_]\w*(?=\s*\()", Name.Function),
            (r"[A-Za-z_]\w*", Name),
            (r"\d+\.\d+([eE][+-]?\d+)?|\d+[eE][+-]?\d+", Number.Float),
            (r"0[xX][0-9a-fA-F_]+", Number.Hex),
            (r"\d[\d_]*", Number.Integer),
            (r'"(\\.|[^"\\\n])*"', String),
            (r"(==|!=|<=|>=|<<|>>|\+=|-=|\*=|/=|%=|[-+*/%<>=&|^~:])", Operator),
            (r"[()\[\]{},.;]", Punctuation),
            (r".", Text),
        ]
    }
