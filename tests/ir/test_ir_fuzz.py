"""Fuzzing the IR parser and verifier with mutated round-trip files.

`cutec opt` on any text either succeeds or reports located diagnostics: parse
and verify raise nothing but `CompileError`, whose diagnostics all carry a
location, and never take long.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cutec.diagnostics import CompileError
from cutec.ir.parser import parse_module
from cutec.ir.verifier import verify

CORPUS = [p.read_text() for p in sorted((Path(__file__).parent / "roundtrip").glob("*.mlir"))]
_TOKEN = re.compile(r"\s+|//[^\n]*|%[\w#:]+|\w+|.", re.S)
TOKENS = [_TOKEN.findall(t) for t in CORPUS]
VOCAB = sorted({t for ts in TOKENS for t in ts if not t.isspace()})


@st.composite
def mutated_ir(draw: st.DrawFn) -> str:
    toks = list(draw(st.sampled_from(TOKENS)))
    for _ in range(draw(st.integers(1, 4))):
        if not toks:
            break
        i = draw(st.integers(0, len(toks) - 1))
        kind = draw(st.sampled_from(["delete", "duplicate", "swap", "insert", "truncate"]))
        if kind == "delete":
            del toks[i]
        elif kind == "duplicate":
            toks.insert(i, toks[i])
        elif kind == "swap":
            j = draw(st.integers(0, len(toks) - 1))
            toks[i], toks[j] = toks[j], toks[i]
        elif kind == "insert":
            toks.insert(i, draw(st.sampled_from([*VOCAB, "\x00", '"', "<", "?", "9" * 40])))
        else:
            toks = toks[:i]
    return "".join(toks)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_ir())
def test_mutated_ir_parses_or_fails_with_located_diagnostics(text: str) -> None:
    start = time.process_time()
    try:
        verify(parse_module(text, "fuzz.mlir"))
    except CompileError as err:
        for d in err.diagnostics:
            assert d.location is not None, d.message
    assert time.process_time() - start < 2.0
