"""Fuzzing the whole front end (parse + build) with mutated examples.

`cutec compile` must never crash on bad input: whatever the text, building
it either succeeds (verified IR) or raises `CompileError` whose diagnostics
are located; never an internal compiler error, never anything else, and
never more than 2 s. Besides the token-level mutations of the parser fuzz
test, these mutate *values* (numbers, names) so that most inputs still parse
and reach the builder's checks: shapes that do not divide, thread counts that
disagree, atoms with the wrong dtypes, names that mean something else.
"""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cutec.diagnostics import CompileError, SourceManager
from cutec.frontend import compile_source
from cutec.ir.dialects.builtin import ModuleOp
from tests.frontend.test_frontend_fuzz import TEXTS, mutated

_PIECE = re.compile(r"\s+|//[^\n]*|\d+|\w+|.", re.S)
PIECES = [_PIECE.findall(t) for t in TEXTS]
NAMES = sorted({p for ps in PIECES for p in ps if re.fullmatch(r"[A-Za-z_]\w*", p)})
NUMBERS = ["0", "1", "2", "3", "7", "16", "33", "64", "100", "4096", "65536", "1000000007"]


@st.composite
def value_mutated(draw: st.DrawFn) -> str:
    """An example with a few numbers or names replaced: usually still parses."""
    pieces = list(draw(st.sampled_from(PIECES)))
    numbers = [i for i, p in enumerate(pieces) if p.isdigit()]
    names = [i for i, p in enumerate(pieces) if re.fullmatch(r"[A-Za-z_]\w*", p)]
    for _ in range(draw(st.integers(1, 3))):
        if numbers and draw(st.booleans()):
            pieces[draw(st.sampled_from(numbers))] = draw(st.sampled_from(NUMBERS))
        elif names:
            pieces[draw(st.sampled_from(names))] = draw(st.sampled_from(NAMES))
    return "".join(pieces)


def _check(text: str) -> None:
    start = time.process_time()
    try:
        module = compile_source(text, "fuzz.cute")
    except CompileError as err:
        sources = SourceManager()
        sources.add("fuzz.cute", text)
        for d in err.diagnostics:
            assert d.location is not None, f"unlocated diagnostic: {d.message}"
            assert d.render(sources).startswith(f"fuzz.cute:{d.location.line}:")
    else:
        assert isinstance(module, ModuleOp)
    assert time.process_time() - start < 2.0


_SETTINGS = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}


@settings(max_examples=100, **_SETTINGS)  # (the slow case below runs 2000)
@given(value_mutated())
def test_value_mutated_examples_build_or_fail_cleanly(text: str) -> None:
    _check(text)


@settings(max_examples=100, **_SETTINGS)
@given(mutated())
def test_token_mutated_examples_build_or_fail_cleanly(text: str) -> None:
    _check(text)


@pytest.mark.slow
@settings(max_examples=2000, **_SETTINGS)
@given(st.one_of(value_mutated(), mutated()))
def test_many_mutated_examples(text: str) -> None:
    _check(text)


def _check_to_ptx(text: str) -> None:
    """The whole pipeline, both targets: PTX or one located CompileError, never another
    exception (an internal compiler error is a bug in a pass, not the user's)."""
    from cutec.driver import Options, Source, Stage, compile

    for target in ("sm_90a", "sm_80"):
        try:
            compile(Source(text, "fuzz.cute"), Stage.PTX, Options(target=target))
        except CompileError as err:
            assert all(d.location is not None for d in err.diagnostics), err.diagnostics
            return


@pytest.mark.slow
@settings(max_examples=300, **_SETTINGS)
@given(value_mutated())
def test_value_mutated_examples_reach_ptx_or_fail_cleanly(text: str) -> None:
    """Mutated numbers and names that pass the front end reach the passes, the lowering
    and the emitter (a pipeline depth of 0 once crashed the layout algebra)."""
    _check_to_ptx(text)
