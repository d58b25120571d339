"""Fuzzing the parser with mutated examples.

Whatever the input, `parse_source` returns a Program or raises CompileError
whose every diagnostic has a location and renders; it never raises anything
else and never takes long. 300 examples run in CI; the 3000-example run is
marked `slow`.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cutec.diagnostics import CompileError, SourceManager
from cutec.frontend import ast
from cutec.frontend.parser import parse_source

EXAMPLES = sorted((Path(__file__).parents[2] / "examples").glob("*.cute"))
TEXTS = [p.read_text() for p in EXAMPLES]
_TOKEN = re.compile(r"\s+|//[^\n]*|\w+|.", re.S)
TOKENS = [_TOKEN.findall(t) for t in TEXTS]
# Raw material for insertions: every distinct token of the examples, and
# some that the examples never contain.
VOCAB = sorted({tok for toks in TOKENS for tok in toks if not tok.isspace()})
EXTRA = ['"', "'", "/*", "*/", "<", ">", "@", "\\", "\x00", "\t", "\r", "é", "\u2028", "{", "}"]
HUGE = ["99999999999999999999999", "9223372036854775808", "0x" + "f" * 40, "1" * 5000, "1e999"]


@st.composite
def mutated(draw: st.DrawFn) -> str:
    toks = list(draw(st.sampled_from(TOKENS)))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(
            st.sampled_from(["delete", "duplicate", "swap", "insert", "huge", "bytes", "truncate"])
        )
        if not toks:
            break
        i = draw(st.integers(0, len(toks) - 1))
        if kind == "delete":
            del toks[i]
        elif kind == "duplicate":
            toks.insert(i, toks[i])
        elif kind == "swap":
            j = draw(st.integers(0, len(toks) - 1))
            toks[i], toks[j] = toks[j], toks[i]
        elif kind == "insert":
            toks.insert(i, draw(st.sampled_from(VOCAB + EXTRA)))
        elif kind == "huge":
            toks.insert(i, " " + draw(st.sampled_from(HUGE)) + " ")
        elif kind == "bytes":
            toks.insert(i, draw(st.text(min_size=1, max_size=8)))
        else:
            toks = toks[:i]
    return "".join(toks)


def _check(text: str) -> None:
    start = time.process_time()  # CPU time: robust to a busy machine
    try:
        prog = parse_source(text, "fuzz.cute")
    except CompileError as err:
        sources = SourceManager()
        sources.add("fuzz.cute", text)
        assert err.diagnostics
        for d in err.diagnostics:
            assert d.location is not None, d.message
            assert d.location.file == "fuzz.cute"
            assert d.location.line >= 1 and d.location.col >= 1
            assert d.message
            rendered = d.render(sources)
            assert rendered.startswith(f"fuzz.cute:{d.location.line}:{d.location.col}: error: ")
    else:
        assert isinstance(prog, ast.Program)
        for node in ast.walk(prog):  # a tree that parsed is walkable and spanned
            assert node.span.line >= 1
    assert time.process_time() - start < 2.0


_SETTINGS = {
    "deadline": None,  # `_check` bounds the time itself; the first call loads lark
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}


@settings(max_examples=300, **_SETTINGS)
@given(mutated())
def test_mutated_examples(text: str) -> None:
    _check(text)


@pytest.mark.slow
@settings(max_examples=3000, **_SETTINGS)
@given(mutated())
def test_mutated_examples_long(text: str) -> None:
    _check(text)


@settings(max_examples=100, **_SETTINGS)
@given(st.text(max_size=200))
def test_random_text(text: str) -> None:
    _check(text)


@pytest.mark.parametrize(
    "text",
    [
        "kernel k() { x = " + "(" * 5000 + " }",
        "kernel k() { x = " + "[" * 5000 + " }",
        "kernel k() { x = " + "a." * 5000 + "b }",
        "kernel k() { x = " + "f(" * 3000 + ")" * 3000 + " }",
        "kernel k() { x = " + " + ".join(["a"] * 20000) + " }",
        "kernel k() { " + "if a { " * 3000 + "} " * 3000 + "}",
        "kernel k() { x = " + "not " * 5000 + "a }",
        "kernel k() { " + "x = 1\n" * 8000 + "}",
        "kernel k() { " + "x = 1\n" * 20000 + "}",
        "kernel k() { x = " + "9" * 100_000 + " }",
        "/*" + "x" * 100_000,
        "\x00" * 1000,
        "kernel" * 10000,
    ],
    ids=lambda t: t[:30],
)
def test_absurd_inputs_are_fast(text: str) -> None:
    _check(text)
