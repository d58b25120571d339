"""The driver: one entry point through the ordered stages, as the CLI uses it."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutec.diagnostics import CompileError
from cutec.driver import DEFAULT_PIPELINE, Options, Source, Stage, compile
from cutec.ir.dialects.builtin import KernelOp
from cutec.ptx.ptxas import find_ptxas

EXAMPLES = Path(__file__).parents[1] / "examples"


def test_stages_are_ordered_and_named() -> None:
    assert [s.name.lower() for s in sorted(Stage)] == ["ast", "cute", "thread", "ptx", "cubin"]
    assert Stage.named("PTX") is Stage.PTX
    with pytest.raises(CompileError, match="unknown stage 'llvm'; the stages are ast, cute"):
        Stage.named("llvm")


def test_ast_then_cute() -> None:
    source = Source.from_file(EXAMPLES / "sgemm_1.cute")
    ast = compile(source, Stage.AST)
    assert ast.module is None and "Kernel" in ast.text
    cute = compile(source, Stage.CUTE)
    assert {k.sym_name for k in cute.module.walk_type(KernelOp)} == {"sgemm_nt", "sgemm_tn"}
    passes = ["frontend", *DEFAULT_PIPELINE.split(",")]
    assert [name for name, _ in cute.timings] == passes


def test_options_reach_the_frontend_and_the_pipeline() -> None:
    source = Source.from_file(EXAMPLES / "sgemm_1.cute")
    result = compile(source, options=Options(defines={"BM": 64}, kernel="sgemm_nt", pipeline=""))
    assert [k.sym_name for k in result.module.walk_type(KernelOp)] == ["sgemm_nt"]
    assert "(64,8,?)" in result.text
    assert [name for name, _ in result.timings] == ["frontend"]


def test_textual_ir_enters_at_the_cute_stage() -> None:
    text = compile(Source.from_file(EXAMPLES / "sgemm_2.cute"), Stage.CUTE).text
    again = compile(Source(text, "x.mlir", "mlir"), Stage.CUTE)
    assert again.text == text
    with pytest.raises(CompileError, match=r"apply to \.cute input only"):
        compile(Source(text, "x.mlir", "mlir"), Stage.AST)


@pytest.mark.parametrize("stage", list(Stage))
def test_every_stage_is_reached_from_cute_source(stage: Stage) -> None:
    result = compile(Source.from_file(EXAMPLES / "tiled_copy.cute"), stage)
    assert result.stage is stage


VADD = Path(__file__).parent / "ptx" / "cases" / "vadd.mlir"


def test_thread_level_ir_goes_on_to_ptx() -> None:
    result = compile(Source.from_file(VADD), Stage.PTX, Options(target="sm_80"))
    assert result.stage is Stage.PTX and result.text is result.ptx
    assert ".target sm_80" in result.ptx and ".entry vadd(" in result.ptx
    assert [name for name, _ in result.timings][-1] == "ptx"


@pytest.mark.skipif(find_ptxas() is None, reason="no ptxas (install the test extra)")
def test_the_cubin_stage_assembles_and_reports_resources() -> None:
    result = compile(Source.from_file(VADD), Stage.CUBIN)
    assert result.cubin is not None and result.cubin[:4] == b"\x7fELF"
    usage = result.resources["vadd"]
    assert usage.registers > 0 and not usage.spills and usage.stack_frame == 0


def test_cute_level_ir_is_lowered_like_cute_source() -> None:
    """Printed cute IR, read back, lowers to the same thread program as the source."""
    source = Source.from_file(EXAMPLES / "sgemm_2.cute")
    text = compile(source, Stage.CUTE).text
    from_ir = compile(Source(text, "x.mlir", "mlir"), Stage.THREAD)
    assert from_ir.stage is Stage.THREAD
    assert not [op for op in from_ir.module.walk() if op.name.startswith("cute.")]
    assert from_ir.text == compile(source, Stage.THREAD).text


def test_a_user_mistake_is_a_located_diagnostic() -> None:
    with pytest.raises(CompileError) as e:
        compile(Source("kernel k() {\n  x = \n}\n", "bad.cute"))
    assert "bad.cute:" in e.value.render()
