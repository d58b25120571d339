"""ptxas's performance warnings become located cutec warnings (cutec.ptx.ptxas_warnings):
from real ptxas output on PTX that ptxas serialises (tests/ptx/ptxas_cases.py), and
from the messages as ptxas 13.0 prints them."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutec.diagnostics import CompileError, Location, Note
from cutec.driver import Options, Result, Source, Stage, _to_cubin, compile
from cutec.ptx.ptxas import PtxasMessage, assemble, find_ptxas, parse_messages
from cutec.ptx.ptxas_warnings import ptxas_warnings
from cutec.ptx.sourcemap import PtxSourceMap
from tests.ptx import ptxas_cases as cases

needs_ptxas = pytest.mark.skipif(find_ptxas() is None, reason="no ptxas (install the test extra)")

FILE = "k.cute"
SERIALISED = (
    "(C7511) Potential Performance Loss: wgmma.mma_async instructions are serialized due "
    "to insufficient register resources for the wgmma pipeline"
)
SETMAXNREG = (
    "(C7508) Potential Performance Loss: 'setmaxnreg' ignored; unable to determine register "
    "count at entry."
)
ARRIVE = (
    "(C7519) warpgroup.arrive is injected near PTX line {} by compiler to allow use of "
    "registers in GMMA"
)


def _at(line_col: tuple[int, int]) -> Location:
    return Location(FILE, *line_col)


def _warnings(ptx: str) -> list:
    result = assemble(ptx, "sm_90a")
    assert result.ok, result.stderr
    return ptxas_warnings(result.stderr, ptx)


@needs_ptxas
def test_serialised_wgmma_is_a_warning_at_the_kernel_with_ptxas_arrive_as_a_note() -> None:
    ptx = cases.module(FILE, cases.serialised("k"))
    (warning,) = _warnings(ptx)
    assert warning.severity == "warning"
    assert warning.message == f"kernel 'k': ptxas {SERIALISED}"
    assert warning.location == _at(cases.DECLARED)  # ptxas names the function only
    # ptxas puts its warpgroup.arrive at the wgmma after the mov: the mov's source line.
    arrive = cases.line_of(ptx, "mov.f32 %f1, 0f3F800000;") + 1
    assert warning.notes == [Note(f"ptxas {ARRIVE.format(arrive)}", _at(cases.MOVED))]


@needs_ptxas
def test_wgmma_behind_a_call_is_a_warning_at_the_kernel() -> None:
    (warning,) = _warnings(cases.module(FILE, cases.called("k")))
    assert warning.message == (
        "kernel 'k': ptxas (C7520) Potential Performance Loss: wgmma.mma_async instructions "
        "are serialized due to program dependence on compiler-inserted WG.AR in divergent path"
    )
    assert warning.location == _at(cases.DECLARED) and warning.notes == []


@needs_ptxas
def test_ignored_setmaxnreg_is_a_warning_at_the_instruction() -> None:
    # ptxas names no function: the kernel using the instruction it quotes is the one.
    ptx = cases.module(FILE, cases.injected("a"), cases.setmaxnreg("b"))
    warnings = {w.message.split(":")[0]: w for w in _warnings(ptx)}
    assert set(warnings) == {"kernel 'a'", "kernel 'b'"}
    assert warnings["kernel 'b'"].message == f"kernel 'b': ptxas {SETMAXNREG}"
    assert warnings["kernel 'b'"].location == _at(cases.SETMAXNREG)


@needs_ptxas
def test_an_ignored_setmaxnreg_is_an_error_at_the_cubin_stage() -> None:
    """The roles of a warp-specialised kernel depend on it: the driver refuses the cubin."""
    result = Result(Stage.PTX, ptx=cases.module(FILE, cases.setmaxnreg("b")))
    with pytest.raises(CompileError) as info:
        _to_cubin(result, "sm_90a")
    (error,) = info.value.diagnostics
    assert error.severity == "error" and error.message == f"kernel 'b': ptxas {SETMAXNREG}"
    assert error.location == _at(cases.SETMAXNREG)


@needs_ptxas
def test_an_arrive_ptxas_adds_without_serialising_is_a_warning_of_its_own() -> None:
    ptx = cases.module(FILE, cases.setmaxnreg("first"), cases.injected("k"))
    arrive = cases.line_of(ptx, "add.f32 %f4, %f4, 0f3F800000;") + 1
    (warning,) = [w for w in _warnings(ptx) if "'k'" in w.message]
    assert warning.message == f"kernel 'k': ptxas {ARRIVE.format(arrive)}"
    assert warning.location == _at(cases.MOVED) and warning.notes == []


@needs_ptxas
def test_rendered_like_cutecs_other_warnings(tmp_path: Path) -> None:
    source = tmp_path / "k.cute"
    source.write_text("\n" * 8 + "kernel k(A: f32[M])\n")
    (warning,) = _warnings(cases.module(str(source), cases.serialised("k")))
    head, line, caret, *_ = warning.render().splitlines()
    assert head == f"{source}:9:1: warning: kernel 'k': ptxas {SERIALISED}"
    assert (line, caret) == ("kernel k(A: f32[M])", "^")


@needs_ptxas
@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_an_example_has_no_performance_warning(target: str) -> None:
    examples = Path(__file__).parents[2] / "examples"
    source = Source.from_file(examples / "transpose.cute")
    result = compile(source, Stage.CUBIN, Options(target=target))
    assert result.cubin is not None and result.warnings == []


# ptxas 13.0's messages, as printed (C7510 and C7515 from CUTLASS and FlashAttention builds).
PRINTED = """ptxas info    : (C7519) warpgroup.arrive is injected in around line 31 by compiler \
to allow use of registers in GMMA in function 'k'
ptxas info    : (C7510) Potential Performance Loss: wgmma.mma_async instructions are \
serialized due to wgmma pipeline crossing function boundary at a function call in the \
function 'g'
ptxas info    : (C7515) Potential Performance Loss: wgmma.mma_async instructions are \
serialized due to non wgmma instructions defining accumulator registers of a wgmma between \
start and end of the pipeline stage in the function 'k'
ptxas info    : (C7508) Potential Performance Loss: 'setmaxnreg' ignored; unable to \
determine register count at entry.
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'k' for 'sm_90a'
ptxas info    : Used 30 registers, used 0 barriers, 4096 bytes smem
"""


def test_messages_are_parsed() -> None:
    arrive, call, accumulator, setmaxnreg = parse_messages(PRINTED)
    assert arrive == PtxasMessage(
        "C7519",
        "warpgroup.arrive is injected in around line 31 by compiler to allow use of "
        "registers in GMMA",
        "k",
        31,
    )
    assert (arrive.injected, arrive.performance) == (True, False)
    assert (call.code, call.function, call.ptx_line, call.performance) == ("C7510", "g", None, True)
    assert accumulator.text.endswith("between start and end of the pipeline stage")
    assert (setmaxnreg.code, setmaxnreg.function, setmaxnreg.performance) == ("C7508", None, True)


def test_a_message_about_a_function_without_loc_lines_is_unlocated() -> None:
    ptx = cases.module(FILE, cases.serialised("k")).replace(".loc", "// .loc")
    (warning,) = ptxas_warnings(PRINTED.splitlines()[2], ptx)
    assert warning.message.startswith("kernel 'k': ptxas (C7515) Potential Performance Loss")
    assert warning.location is None


def test_an_unattributable_message_says_so() -> None:
    ptx = cases.module(FILE, cases.serialised("a"), cases.serialised("b"))
    message = "ptxas info    : (C7504) Potential Performance Loss: something else."
    (warning,) = ptxas_warnings(message, ptx)
    assert warning.message.startswith("a kernel (ptxas does not say which): ptxas (C7504)")


def test_the_source_map_keeps_to_the_function() -> None:
    ptx = cases.module(FILE, cases.serialised("a"), cases.setmaxnreg("b"))
    source = PtxSourceMap(ptx)
    assert source.functions.keys() == {"a", "b"}
    moved = cases.line_of(ptx, "mov.f32 %f1, 0f3F800000;")
    assert source.at(moved) == _at(cases.MOVED)
    assert source.at(moved - 2) == _at(cases.DECLARED)  # the wgmma before its .loc
    # b's header and first lines come before its first .loc: not a's last one.
    b = source.functions["b"]
    assert (source.function_at(b + 1), source.at(b + 1)) == ("b", None)
    assert source.declaration("b") == _at(cases.DECLARED)
    assert source.uses("setmaxnreg") == {"b": cases.line_of(ptx, "setmaxnreg.dec")}
    assert source.uses("wgmma.fence") == {"a": cases.line_of(ptx, "wgmma.fence")}
    assert source.at(1) is None and source.declaration("nope") is None


def test_a_prototype_is_no_function() -> None:
    prototype = ".extern .func (.param .b32 r) vprintf(.param .b64 f, .param .b64 a);\n"
    ptx = cases.module(FILE, prototype + cases.serialised("k"))
    source = PtxSourceMap(ptx)
    assert list(source.functions) == ["k"]
    assert source.function_at(cases.line_of(ptx, "vprintf")) is None
