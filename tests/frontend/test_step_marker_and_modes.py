""".cute mistakes that once gave an internal error or a misleading message (issue 26):
a negative mode index, and `X` (the step marker) used as a name."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutec.diagnostics import CompileError
from cutec.frontend import compile_source

EXAMPLES = Path(__file__).parents[2] / "examples"


def _rendered(text: str) -> str:
    with pytest.raises(CompileError) as info:
        compile_source(text, "k.cute")
    return info.value.render()


def test_a_negative_mode_of_a_run_time_size_is_located() -> None:
    # Found by mutating sgemm_pipelined.cute: `size(tAgA, -1)` of a tensor with a run-time
    # mode reached the verifier of cute.size, an internal compiler error.
    text = (EXAMPLES / "sgemm_pipelined.cute").read_text()
    assert "k_tile_count = size(tAgA, 3)" in text
    rendered = _rendered(text.replace("size(tAgA, 3)", "size(tAgA, -1)"))
    line = text.splitlines().index(
        next(x for x in text.splitlines() if "k_tile_count = size(tAgA, 3)" in x)
    )
    assert rendered.startswith(f"k.cute:{line + 1}:18: error: size: get<-1>: index out of range")


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("size(x, -1)", "get<-1>: index out of range for (M,4)"),
        ("get((4, 5), -1)", "get<-1>: index out of range for (4,5)"),
        ("shape(x, -1)", "'shape' takes 1 arguments, got 2"),  # the mode was ignored
        ("stride(x, 1)", "'stride' takes 1 arguments, got 2"),
    ],
)
def test_negative_modes_are_refused(expr: str, message: str) -> None:
    rendered = _rendered(f"kernel k(x: f32[M, 4]) grid 1 threads 32 {{\n  y = {expr}\n}}\n")
    assert rendered.startswith("k.cute:2:"), rendered
    assert message in rendered.splitlines()[0], rendered


STEP_NOTE = "note: 'X' is CuTe's step marker (step = (1, X, 1)), not a name: choose another name"


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("kernel k(X: f32[M]) grid 1 threads 32 {\n}\n", "1:10: error: expected ')' or a name"),
        ("kernel k[X: int = 4](x: f32[M]) grid 1 threads 32 {\n}\n", "1:10: error: expected"),
        ("func X(a) {\n  return a\n}\n", "1:6: error: expected a name, found 'X'"),
        (
            "kernel k(x: f32[M]) grid 1 threads 32 {\n  for X in range(4) {\n  }\n}\n",
            "2:7: error: expected a name, found 'X'",
        ),
    ],
)
def test_x_as_a_name_says_it_is_the_step_marker(text: str, where: str) -> None:
    rendered = _rendered(text)
    assert rendered.startswith(f"k.cute:{where}"), rendered
    assert rendered.splitlines()[-1] == STEP_NOTE


def test_assigning_to_x_says_it_is_the_step_marker() -> None:
    rendered = _rendered("kernel k(x: f32[M]) grid 1 threads 32 {\n  X = 4\n}\n")
    assert rendered.splitlines()[0] == (
        "k.cute:2:3: error: cannot assign to 'X': it is CuTe's step marker "
        "(step = (1, X, 1)), not a name"
    )
