"""The analysis manager: one analysis per kernel, kept through the passes that preserve it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from cutec import driver
from cutec.analysis.manager import AnalysisManager, scope_of
from cutec.ir.dialects.builtin import KernelOp, ModuleOp
from cutec.ir.layout_of import LayoutAnalysis
from cutec.ir.parser import parse_module
from cutec.passes import PASSES, Pass, PassManager, parse_pipeline

EXAMPLES = Path(__file__).parents[2] / "examples"
SAXPY = EXAMPLES / "ir" / "saxpy.mlir"


def _kernels(module: ModuleOp) -> list[KernelOp]:
    return list(module.walk_type(KernelOp))


@dataclass
class _Ask(Pass):
    """Asks for every kernel's layouts and records what it got."""

    name = "ask"
    summary = "test pass"
    seen: list[LayoutAnalysis] | None = None

    def run(self, module: ModuleOp) -> None:
        assert self.seen is not None
        self.seen += [self.analyses.get(LayoutAnalysis, k) for k in _kernels(module)]


@dataclass
class _AskAndKeep(_Ask):
    preserves = (LayoutAnalysis,)


def _run(passes: list[Pass]) -> tuple[AnalysisManager, ModuleOp]:
    module = parse_module(SAXPY.read_text(), str(SAXPY))
    manager = PassManager(passes)
    manager.run(module)
    return manager.analyses, module


def test_an_analysis_is_kept_through_a_pass_that_preserves_it() -> None:
    seen: list[LayoutAnalysis] = []
    analyses, module = _run([_AskAndKeep(seen), _AskAndKeep(seen), _Ask(seen)])
    (kernel,) = _kernels(module)
    assert len(seen) == 3
    assert seen[0] is seen[1] is seen[2]
    assert analyses.built[LayoutAnalysis] == 1
    assert not analyses.cached(LayoutAnalysis, kernel)  # the last pass kept nothing


def test_an_analysis_is_dropped_after_a_pass_that_does_not_preserve_it() -> None:
    seen: list[LayoutAnalysis] = []
    analyses, _ = _run([_Ask(seen), _Ask(seen)])
    assert len(seen) == 2
    assert seen[0] is not seen[1]
    assert analyses.built[LayoutAnalysis] == 2


def test_a_real_pass_that_changes_the_ir_drops_the_layouts() -> None:
    seen: list[LayoutAnalysis] = []
    _, _ = _run([_AskAndKeep(seen), *parse_pipeline("canonicalize", PASSES), _Ask(seen)])
    assert seen[0] is not seen[1]


def test_analyses_are_per_kernel_and_found_from_any_op_inside() -> None:
    module = parse_module(SAXPY.read_text(), str(SAXPY))
    (kernel,) = _kernels(module)
    analyses = AnalysisManager()
    la = analyses.get(LayoutAnalysis, kernel)
    inner = next(op for op in kernel.walk() if op is not kernel)
    assert scope_of(inner) is kernel
    assert analyses.get(LayoutAnalysis, inner) is la
    assert analyses.get(LayoutAnalysis, module) is not la  # the module is a scope of its own
    analyses.invalidate(inner)
    assert not analyses.cached(LayoutAnalysis, kernel)
    assert analyses.get(LayoutAnalysis, kernel) is not la


def test_nested_passes_share_the_analyses_of_the_pass_running_them() -> None:
    seen: list[LayoutAnalysis] = []

    @dataclass
    class Outer(_AskAndKeep):
        name = "outer"

        def run(self, module: ModuleOp) -> None:
            super().run(module)
            self.run_nested([_AskAndKeep(seen)], module)

    _run([Outer(seen)])
    assert len(seen) == 2 and seen[0] is seen[1]


# Which passes of a compile build the layouts: one per kernel for each pass that
# reads them, except pipeline, which reads the ones vectorize kept.
BUILT_BY = {
    "predicate": 1,
    "vectorize": 1,
    "pipeline": 0,
    "select-atoms": 1,
    "partition": 1,
    "lower-to-thread": 1,
}


@pytest.mark.parametrize(
    ("example", "kernel", "target"),
    [("gemm_auto.cute", "gemm_tn", "sm_90a"), ("sgemm_2.cute", None, "sm_80")],
)
def test_a_compile_builds_the_layouts_once_per_kernel_per_pass_that_changes_them(
    example: str, kernel: str | None, target: str
) -> None:
    source = driver.Source.from_file(EXAMPLES / example)
    options = driver.Options(kernel=kernel, target=target, pipeline="")
    module = driver.compile(source, driver.Stage.CUTE, options).module
    assert module is not None
    kernels = len(_kernels(module))
    pipeline = f"{driver.DEFAULT_PIPELINE},{driver.LOWERING_PIPELINE}"
    analyses = AnalysisManager()
    built: dict[str, int] = {}
    for p in parse_pipeline(pipeline, PASSES):
        before = analyses.built[LayoutAnalysis]
        PassManager([p], analyses=analyses).run(module)
        built[p.name] = analyses.built[LayoutAnalysis] - before
    assert {name: n for name, n in built.items() if n} == {
        name: n * kernels for name, n in BUILT_BY.items() if n
    }
    # Before the cache, gemm_tn's compile built eight (predicate and pipeline two each).
    assert analyses.built[LayoutAnalysis] == 5 * kernels
