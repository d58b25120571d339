"""Fuzzing the command line, in-process: `cutec layout` (every --op, --svg, tiled MMAs and
copies), `compile` of mutated .cute source, `opt` of mutated IR, `run --device cpu` with
bad flags.

Whatever the arguments, `cutec` exits 0 or 1 (never 2, an internal compiler error),
prints no traceback, says something on stderr when it exits 1, and answers each input
within a wall-clock limit (an alarm turns a hang into a failure) and a CPU-time limit.
CI runs a fixed, derandomized set of a few hundred inputs (well under 20 s on one core);
``pytest -m slow tests/cli/test_cli_fuzz.py -s`` runs ``CUTEC_FUZZ_COUNT`` (default 2000)
fresh random inputs and prints how many exited 0, 1 and 2.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import cutec.layout as algebra
from cutec.atoms.copy import copy_atoms
from cutec.atoms.mma import mma_atoms
from cutec.cli import main
from cutec.passes import PASSES
from tests.frontend.test_compile_fuzz import value_mutated
from tests.frontend.test_frontend_fuzz import mutated
from tests.ir.test_ir_fuzz import mutated_ir

ROOT = Path(__file__).parents[2]
# Per input: past WALL_LIMIT seconds of wall-clock time, a hang; past CPU_LIMIT seconds of
# CPU time, too slow (a busy machine stretches wall time, not CPU time). The slowest legal
# inputs, the whole-tensor gemm examples lowered to the cute level, take about 4 s.
WALL_LIMIT = 60.0
CPU_LIMIT = 10.0

# Exit codes (and "hang") of every input checked in this process: the slow run prints them.
COUNTS: Counter[str] = Counter()


class Hang(BaseException):
    """Raised by the alarm; a BaseException so that the CLI's `except Exception` (which
    reports internal compiler errors) lets it through."""


@contextlib.contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    def ring(signum: int, frame: object) -> None:
        raise Hang

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _check(argv: list[str], stdin: str = "") -> None:
    """`cutec ARGV` (standard input `stdin`) exits 0 or 1, cleanly and quickly."""
    out, err = io.TextIOWrapper(io.BytesIO()), io.StringIO()
    start = time.process_time()
    try:
        with (
            _alarm(WALL_LIMIT),
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
            _stdin(stdin),
        ):
            rc = main(argv)
    except Hang:
        COUNTS["hang"] += 1
        pytest.fail(f"cutec {argv!r} ran past {WALL_LIMIT} s")
    spent = time.process_time() - start
    COUNTS[str(rc)] += 1
    text = err.getvalue()
    assert rc in (0, 1), f"cutec {argv!r} exited {rc}:\n{text}"
    assert "Traceback" not in text and "internal compiler error" not in text, text
    assert rc == 0 or text.strip(), f"cutec {argv!r} exited 1 without a message"
    assert spent < CPU_LIMIT, f"cutec {argv!r} took {spent:.1f} s of CPU time"


@contextlib.contextmanager
def _stdin(text: str) -> Iterator[None]:
    saved = sys.stdin
    sys.stdin = io.StringIO(text)
    try:
        yield
    finally:
        sys.stdin = saved


@pytest.fixture(scope="module", autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Kernels `cutec run` compiles go to a cache of this module's own."""
    saved = os.environ.get("CUTEC_CACHE_DIR")
    os.environ["CUTEC_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    yield
    if saved is None:
        del os.environ["CUTEC_CACHE_DIR"]
    else:
        os.environ["CUTEC_CACHE_DIR"] = saved


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where --svg, -o and --dump-dir may write."""
    return tmp_path_factory.mktemp("out")


# --------------------------------------------------------------------------- cutec layout

OPS = sorted(
    n
    for n in algebra.__all__
    if callable(getattr(algebra, n)) and not isinstance(getattr(algebra, n), type)
)
# Arguments good and bad: integers (0, negative, huge), tuples, layouts, swizzled layouts,
# `_`, `X`, run-time names, text that does not parse, deep nesting.
LAYOUT_TEXTS = [
    *("0", "1", "-1", "2", "4", "7", "8", "-5", "16", "1000000", str(2**70), "M"),
    *("(4,8)", "(2,2)", "(-2,2)", "(0,7)", "(1,2)", "(1,1,1)", "((2,2),(2,2))", "()"),
    *("(4,8):(1,4)", "(4,-8):(1,4)", "(3,5):(5,1)", "(8,8):(8,1)", "16:2", "2:0", "(0,8):(1,0)"),
    *("(4,(2,2)):(2,(1,8))", "(M,8):(1,M)", "(10000,10000):(1,10000)", "(32,8):(-1,32)"),
    *("_", "X", "(_,1)", "(X,1)", "(1,_,_)", "Sw<3,4,3>", "Sw<1,1,1>", "Sw<9,9,9>"),
    *("Sw<3,4,3> o 0 o (8,64):(64,1)", "1 o 2 o 3", "(4,8):(1,4) o 1 o (2,2)"),
    *("ceil_div(M,4)", "(M*N,4)", "(4,8", "4,8)", ":", "(4;8)", "", "((((((((1))))))))"),
    "(" * 200 + "1" + ")" * 200,
    "-" * 200 + "M",
    "(" + ",".join(["2"] * 40) + ")",
]
_LAYOUT_CHARS = "0123456789(),:_-XMSw<> o"


@st.composite
def layout_text(draw: st.DrawFn) -> str:
    """A text from LAYOUT_TEXTS, sometimes with a few characters changed."""
    text = draw(st.sampled_from(LAYOUT_TEXTS))
    for _ in range(draw(st.integers(0, 2))):
        i = draw(st.integers(0, len(text)))
        c = draw(st.sampled_from(_LAYOUT_CHARS))
        text = text[:i] + c + text[i + 1 :] if draw(st.booleans()) else text[:i] + c + text[i:]
    return text


MMA_ATOMS = sorted(mma_atoms())
COPY_ATOMS = sorted({a.name for a in copy_atoms()})


@st.composite
def layout_argv(draw: st.DrawFn) -> list[str]:
    """`cutec layout ...` in one of its forms."""
    form = draw(st.sampled_from(["text", "op", "op", "op", "svg", "mma", "copy"]))
    if form == "text":
        return ["layout", draw(layout_text())]
    if form == "op":
        args = draw(st.lists(layout_text(), max_size=4))
        return ["layout", "--op", draw(st.sampled_from([*OPS, "nope", "Layout"])), "--", *args]
    if form == "svg":
        return ["layout", draw(layout_text()), "--svg", "{out}/l.svg"]
    flags: list[str] = []
    if form == "mma":
        flags = ["--tiled-mma", draw(st.sampled_from([*MMA_ATOMS, "SM80_nope", COPY_ATOMS[0]]))]
        for flag in ("--atoms", "--permutation"):
            if draw(st.booleans()):
                flags += [flag, draw(layout_text())]
    else:
        flags = ["--tiled-copy", draw(st.sampled_from([*COPY_ATOMS, "nope", MMA_ATOMS[0]]))]
        for flag in ("--thr", "--val"):
            if draw(st.booleans()):
                flags += [flag, draw(layout_text())]
        if draw(st.booleans()):
            flags += ["--element", draw(st.sampled_from(["f16", "f32", "s8", "nope"]))]
    if draw(st.integers(0, 4)) == 0:
        flags += ["--svg", "{out}/t.svg"]
    return ["layout", *flags]


# --------------------------------------------------------------------------- compile, opt

IR_TEXTS = [p.read_text() for p in sorted((ROOT / "tests" / "ir" / "roundtrip").glob("*.mlir"))]
_NUMBER = re.compile(r"(?<![\w%#.])-?[0-9]+(?:\.[0-9]+)?(?:e[-+]?[0-9]+)?(?![\w.])")
NUMBERS = ["0", "-1", "1e5", "1.0e39", str(2**31), str(2**64), str(2**200), "65536", "3.5"]


@st.composite
def ir_value_mutated(draw: st.DrawFn) -> str:
    """An IR file with a few numbers replaced: constants that overflow, odd counts."""
    text = draw(st.sampled_from([*IR_TEXTS, (ROOT / "examples" / "ir" / "saxpy.mlir").read_text()]))
    spots = list(_NUMBER.finditer(text))
    for _ in range(draw(st.integers(1, 3))):
        if not spots:
            break
        m = draw(st.sampled_from(spots))
        text = text[: m.start()] + draw(st.sampled_from(NUMBERS)) + text[m.end() :]
        spots = list(_NUMBER.finditer(text))
    return text


def _nested_ifs(depth: int) -> str:
    body = "scf.if %p {\n" * depth + "scf.yield\n}\n" * depth
    return f"func @f(%p: i1) {{\n{body}return\n}}\n"


@st.composite
def opt_input(draw: st.DrawFn) -> tuple[list[str], str]:
    """`cutec opt -` with passes and flags, and the (mutated) IR on standard input."""
    text = draw(
        st.one_of(
            mutated_ir(),
            ir_value_mutated(),
            st.sampled_from([_nested_ifs(100), _nested_ifs(330), "[" * 3000]),
        )
    )
    passes = draw(st.lists(st.sampled_from([*PASSES, "nope", "cse{x=1}"]), max_size=3))
    argv = ["opt", "-", "--passes", ",".join(passes)]
    for flag in ("--generic", "--no-loc", "--no-verify", "--print-ir-after-all"):
        if draw(st.integers(0, 3)) == 0:
            argv.append(flag)
    if draw(st.integers(0, 5)) == 0:
        argv += ["--dump-dir", draw(st.sampled_from(["{out}/dump", "{out}/l.svg/x"]))]
    if draw(st.integers(0, 5)) == 0:
        argv += ["-o", draw(st.sampled_from(["{out}", "{out}/o.mlir", "{out}/none/o.mlir"]))]
    return argv, text


@st.composite
def compile_input(draw: st.DrawFn) -> tuple[list[str], str]:
    """`cutec compile -` of mutated .cute source (or IR) to one of its stages."""
    lang = draw(st.sampled_from(["cute", "cute", "cute", "mlir"]))
    text = draw(st.one_of(value_mutated(), mutated())) if lang == "cute" else draw(mutated_ir())
    emit = draw(st.sampled_from(["ast", "cute", "cute", "thread", "ptx"]))
    if "gemm(A, B, C" in text:  # gemm_auto, gemm_stream_k: 5-10 s to lower, 1-4 s to cute
        emit = draw(st.sampled_from(["ast", "cute"]))
    argv = ["compile", "-", "--lang", lang, "--emit", emit]
    if draw(st.integers(0, 3)) == 0:
        argv += ["-D", draw(st.sampled_from(["BM=0", "BM=-64", "BM=7", "T=f16", "X=1", "BM"]))]
    if draw(st.integers(0, 3)) == 0:
        argv += ["--arch", draw(st.sampled_from(["sm_80", "sm_90a"]))]
    if draw(st.integers(0, 5)) == 0:
        argv += ["--passes", draw(st.sampled_from(["", "cse", "nope", "tile,tile"]))]
    if draw(st.integers(0, 4)) == 0:  # a launch's promises: good, absent names, malformed
        flag = draw(st.sampled_from(["--divisible", "--aligned"]))
        fact = ["ldA=8", "M=16", "A=16", "nope=4", "ldA=0", "A=3", "ldA", "=8", "M=2**4"]
        argv += [flag, draw(st.sampled_from(fact))]
    return argv, text


# --------------------------------------------------------------------------- cutec run

EXTENTS = ["-64", "0", "1", "3", "64", "128", "65536,65536", str(2**40), "2**40", "x", "", "64,64"]


@st.composite
def run_argv(draw: st.DrawFn) -> list[str]:
    """`cutec run --device cpu` of a small kernel with good and bad shapes and values."""
    example, tensors, names = draw(
        st.sampled_from(
            [
                ("elementwise.cute", ["x", "y", "z"], ["M", "alpha", "N"]),
                ("transpose.cute", ["S", "D"], ["M", "N", "ld"]),
                ("nope.cute", ["x"], ["M"]),
                ("ir/saxpy.mlir", ["x"], ["n"]),
            ]
        )
    )
    argv = ["run", str(ROOT / "examples" / example), "--device", "cpu"]
    for _ in range(draw(st.integers(0, 2))):
        argv += ["--shape", f"{draw(st.sampled_from(tensors))}={draw(st.sampled_from(EXTENTS))}"]
    for _ in range(draw(st.integers(0, 2))):
        value = draw(st.sampled_from([*EXTENTS, "1.5", "nan", "-3"]))
        argv += ["--set", f"{draw(st.sampled_from(names))}={value}"]
    if draw(st.integers(0, 4)) == 0:
        argv += [draw(st.sampled_from(["--seed", "--repeat"])), draw(st.sampled_from(EXTENTS))]
    if draw(st.integers(0, 5)) == 0:
        argv += ["--kernel", draw(st.sampled_from(["nope", "axpy", "transpose"]))]
    return argv


# --------------------------------------------------------------------------- the tests


def _fill(argv: list[str], out: Path) -> list[str]:
    return [a.replace("{out}", str(out)) for a in argv]


_CI = {
    "deadline": None,
    "derandomize": True,  # CI's inputs are the same every run
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}


@settings(max_examples=200, **_CI)
@given(layout_argv())
def test_layout_exits_cleanly(out_dir: Path, argv: list[str]) -> None:
    _check(_fill(argv, out_dir))


@settings(max_examples=60, **_CI)
@given(opt_input())
def test_opt_of_mutated_ir_exits_cleanly(out_dir: Path, case: tuple[list[str], str]) -> None:
    argv, text = case
    _check(_fill(argv, out_dir), text)


@settings(max_examples=40, **_CI)
@given(compile_input())
def test_compile_of_mutated_source_exits_cleanly(
    out_dir: Path, case: tuple[list[str], str]
) -> None:
    argv, text = case
    _check(_fill(argv, out_dir), text)


@settings(max_examples=40, **_CI)
@given(run_argv())
def test_run_with_bad_flags_exits_cleanly(out_dir: Path, argv: list[str]) -> None:
    _check(_fill(argv, out_dir))


@st.composite
def any_input(draw: st.DrawFn) -> tuple[list[str], str]:
    kind = draw(st.sampled_from(["layout", "layout", "opt", "compile", "run"]))
    if kind == "layout":
        return draw(layout_argv()), ""
    if kind == "run":
        return draw(run_argv()), ""
    return draw(opt_input() if kind == "opt" else compile_input())


LONG_RUN = int(os.environ.get("CUTEC_FUZZ_COUNT", "2000"))


@pytest.mark.slow
@settings(
    max_examples=LONG_RUN,
    deadline=None,
    derandomize=False,
    database=None,
    phases=[Phase.generate],  # report the first failure as it is: shrinking a hang takes long
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(any_input())
def test_many_random_cli_inputs(out_dir: Path, case: tuple[list[str], str]) -> None:
    argv, text = case
    _check(_fill(argv, out_dir), text)


def teardown_module() -> None:
    if COUNTS:
        print(f"\ncutec CLI fuzz: {sum(COUNTS.values())} inputs, exit codes {dict(COUNTS)}")
