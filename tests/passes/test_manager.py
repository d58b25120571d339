"""The pass manager: pipelines, instrumentation, and the two kinds of failure."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import pytest

from cutec.cli import main
from cutec.diagnostics import CompileError, InternalCompilerError
from cutec.ir.dialects.builtin import ModuleOp
from cutec.ir.parser import parse_module
from cutec.passes import PASSES, Instrumentation, Pass, PassManager, parse_pipeline
from cutec.passes.canonicalize import Canonicalize
from cutec.passes.cse import CSE
from cutec.passes.manager import working_on

SAXPY = Path(__file__).parents[2] / "examples" / "ir" / "saxpy.mlir"


def test_pipeline_from_text_with_options() -> None:
    passes = parse_pipeline("canonicalize{max-iterations=3}, cse", PASSES)
    assert [type(p) for p in passes] == [Canonicalize, CSE]
    assert passes[0].max_iterations == 3
    assert passes[0].describe() == "canonicalize{max-iterations=3}"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "canon",
            "unknown pass 'canon'; known passes: " + ", ".join(PASSES),
        ),
        ("cse{x=1}", "pass 'cse' has no option 'x' (options: none)"),
        (
            "canonicalize{max-iterations=many}",
            "option 'max-iterations' of pass 'canonicalize' expects int, got 'many'",
        ),
        (
            "canonicalize{max-iterations}",
            "option 'max-iterations' of pass 'canonicalize' needs '=value'",
        ),
        ("cse,,cse", "empty pass name in pipeline 'cse,,cse'"),
        ("cse{", "unclosed '{' in pipeline 'cse{'"),
    ],
)
def test_bad_pipelines_are_user_errors(text: str, message: str) -> None:
    with pytest.raises(CompileError) as info:
        parse_pipeline(text, PASSES)
    assert str(info.value) == message


def test_dump_dir_has_one_parseable_file_per_pass_in_order(tmp_path: Path) -> None:
    module = parse_module(SAXPY.read_text(), str(SAXPY))
    opts = Instrumentation(dump_dir=str(tmp_path / "dumps"), stream=io.StringIO())
    PassManager(parse_pipeline("canonicalize,cse,canonicalize", PASSES), opts).run(module)
    files = sorted(p.name for p in (tmp_path / "dumps").iterdir())
    assert files == ["00_input.mlir", "01_canonicalize.mlir", "02_cse.mlir", "03_canonicalize.mlir"]
    for name in files:
        parse_module((tmp_path / "dumps" / name).read_text(), name)
    assert "%c64" in (tmp_path / "dumps" / "00_input.mlir").read_text()
    assert "%c64" not in (tmp_path / "dumps" / "01_canonicalize.mlir").read_text()


def test_print_before_and_after_named_pass() -> None:
    module = parse_module(SAXPY.read_text(), str(SAXPY))
    out = io.StringIO()
    opts = Instrumentation(print_before={"cse"}, print_after={"canonicalize"}, stream=out)
    PassManager(parse_pipeline("canonicalize,cse", PASSES), opts).run(module)
    titles = [line for line in out.getvalue().splitlines() if line.startswith("// -----//")]
    assert titles == [
        "// -----// IR Dump After canonicalize //----- //",
        "// -----// IR Dump Before cse //----- //",
    ]


def test_timing_table_lists_each_pass() -> None:
    module = parse_module(SAXPY.read_text(), str(SAXPY))
    out = io.StringIO()
    PassManager(
        parse_pipeline("canonicalize,cse", PASSES), Instrumentation(timing=True, stream=out)
    ).run(module)
    rows = [line.split()[0] for line in out.getvalue().splitlines()[2:]]
    assert rows == ["canonicalize", "cse", "total"]


@dataclass
class _CrashingPass(Pass):
    name = "crash"
    summary = "raises inside a rewrite, like a buggy pass"

    def run(self, module: ModuleOp) -> None:
        for op in module.walk():
            if op.name == "arith.muli":
                with working_on(op):
                    raise KeyError("boom")


@dataclass
class _BreakingPass(Pass):
    name = "break"
    summary = "leaves invalid IR behind"

    def run(self, module: ModuleOp) -> None:
        kernel = module.body.first_op
        kernel.body.last_op.detach()  # drop the terminator


def test_crash_in_a_pass_is_an_internal_error_naming_pass_and_op() -> None:
    module = parse_module(SAXPY.read_text(), str(SAXPY))
    with pytest.raises(InternalCompilerError) as info:
        PassManager([_CrashingPass()]).run(module)
    assert info.value.stage == "crash"
    assert info.value.op is not None and info.value.op.startswith("arith.muli")


def test_invalid_ir_after_a_pass_is_an_internal_error() -> None:
    module = parse_module(SAXPY.read_text(), str(SAXPY))
    with pytest.raises(InternalCompilerError, match="pass produced invalid IR"):
        PassManager([_BreakingPass()]).run(module)
    # With verification off the broken IR passes through silently.
    module = parse_module(SAXPY.read_text(), str(SAXPY))
    PassManager([_BreakingPass()], Instrumentation(verify=False)).run(module)


def test_verifying_at_the_end_still_catches_a_broken_pass() -> None:
    """The compile driver verifies after the last pass only: the breakage surfaces there."""
    from cutec.passes.cse import CSE

    module = parse_module(SAXPY.read_text(), str(SAXPY))
    manager = PassManager([_BreakingPass(), CSE()], Instrumentation(verify_each=False))
    with pytest.raises(InternalCompilerError, match="pass produced invalid IR"):
        manager.run(module)


def test_cli_reports_internal_error_with_exit_2(monkeypatch, capsys) -> None:
    monkeypatch.setitem(PASSES, "crash", _CrashingPass)
    monkeypatch.delenv("CUTEC_TRACEBACK", raising=False)
    assert main(["opt", str(SAXPY), "--passes", "crash"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "internal compiler error: KeyError: 'boom' (in pass 'crash', at op arith.muli"
    )
    assert "Traceback" not in err
