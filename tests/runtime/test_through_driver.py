"""The JIT compiles through the driver's stages (docs/runtime.md, *Compile and load*):
specialisation facts are driver options, ptxas is run by the cubin stage, and what
the driver measures and prints covers the runtime's compiles."""

from __future__ import annotations

import io
import sys
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import cutec.driver as driver
import cutec.runtime as rt
from cutec.passes.manager import Instrumentation
from cutec.ptx.ptxas import find_ptxas
from cutec.ptx.sass import disassemble
from tests.ptx import ptxas_cases as cases
from tests.ptx.sass_check import needs_disassembler

EXAMPLES = Path(__file__).parents[2] / "examples"
JIT = sys.modules["cutec.runtime.jit"]


@pytest.fixture(autouse=True)
def _no_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every compile done here, none loaded from the disk cache."""
    monkeypatch.setenv("CUTEC_CACHE", "0")
    monkeypatch.setattr(JIT, "_KERNELS", {})


def _spy_compiles(monkeypatch: pytest.MonkeyPatch) -> list[tuple[driver.Stage, Any]]:
    """The runtime's calls of driver.compile, with their stage and options."""
    calls: list[tuple[driver.Stage, Any]] = []

    def spy(source: driver.Source, emit: driver.Stage, options: driver.Options) -> Any:
        calls.append((emit, options))
        return driver.compile(source, emit, options)

    monkeypatch.setattr(JIT, "compile", spy)
    return calls


def test_the_runtime_has_no_ptxas_and_no_pipeline_text_of_its_own() -> None:
    assert not hasattr(JIT, "assemble") and not hasattr(JIT, "DEFAULT_PIPELINE")


@pytest.mark.skipif(find_ptxas() is None, reason="needs ptxas")
def test_ptxas_is_run_by_the_drivers_cubin_stage(monkeypatch: pytest.MonkeyPatch) -> None:
    """An sm_80 kernel built for a Hopper GPU: the cubin stage assembles it for sm_90a."""
    assembled: list[str] = []
    real = driver.assemble

    def spy(ptx: str, arch: str, options: tuple[str, ...] = ()) -> Any:
        assembled.append(arch)
        return real(ptx, arch, options=options)

    monkeypatch.setattr(driver, "assemble", spy)
    calls = _spy_compiles(monkeypatch)
    k = rt.jit(EXAMPLES / "transpose.cute", arch="sm_80")
    compiled = k._build(0, "sm_90a")
    assert assembled == ["sm_90a"]
    built = [(o.target, o.assemble_for) for stage, o in calls if stage is driver.Stage.CUBIN]
    assert built == [("sm_80", "sm_90a")]
    assert sorted(stage for stage, _ in calls) == [driver.Stage.CUTE, driver.Stage.CUBIN]
    assert compiled.cubin is not None and compiled.cubin.startswith(b"\x7fELF")
    assert compiled.resources["transpose"]["arch"] == "sm_90a"
    assert ".target sm_80" in compiled.ptx


def test_specialisation_facts_are_driver_options(monkeypatch: pytest.MonkeyPatch) -> None:
    """A specialisation's facts reach the driver as Options; for .cute input the frontend
    records them on the kernel's tensors as its own `assume`s and `align`s (no
    specialize-args pass runs), for IR input the specialize-args pass adds them first."""
    k = rt.jit(EXAMPLES / "sgemm_2.cute", kernel="sgemm_nt", device="cpu")
    options = k._options("sm_80", (("K", 16), ("ldC", 8), ("@C", 16)))
    assert (dict(options.divisors), dict(options.alignments)) == ({"K": 16, "ldC": 8}, {"C": 16})
    assert options.pipeline is None  # the default pipeline, no text spliced into it
    made = "cute.make_tensor %C, %M, %N, %ldC {div = array<i64: 4, 4, 8>, align = 16"
    source = driver.Source.from_file(EXAMPLES / "sgemm_2.cute")
    frontend = driver.compile(source, driver.Stage.CUTE, replace(options, pipeline=""))
    assert made in frontend.text
    assert dict(frontend.signatures["sgemm_nt"].facts)["K"] == 16
    assert [name for name, _ in frontend.timings] == ["frontend"]
    # Without the facts, the frontend's IR has the kernel's own only.
    plain = driver.compile(source, driver.Stage.CUTE, replace(options, pipeline="", divisors={},
                                                             alignments={}))  # fmt: skip
    assert made not in plain.text
    # IR input: the specialize-args pass, first, adds them (once: not again after the frontend).
    out = io.StringIO()
    seen = Instrumentation(verify_each=False, print_after={"specialize-args"}, stream=out)
    ir = driver.Source(plain.text, "sgemm_2.mlir", "mlir")
    ir_options = replace(options, kernel=None, defines={}, instrumentation=seen)
    result = driver.compile(ir, driver.Stage.CUTE, ir_options)
    assert "IR Dump After specialize-args" in out.getvalue()
    assert made in out.getvalue()
    assert [name for name, _ in result.timings[:1]] == ["specialize-args"]
    with pytest.raises(driver.CompileError, match="not a positive power of two"):
        driver.compile(source, driver.Stage.CUTE, replace(options, alignments={"C": 12}))


def test_the_cpu_path_stops_at_the_thread_stage(monkeypatch: pytest.MonkeyPatch) -> None:
    """device="cpu" runs the thread stage's IR: no PTX legalisation, no ptxas."""
    calls = _spy_compiles(monkeypatch)
    k = rt.jit(EXAMPLES / "transpose.cute", device="cpu")
    k._variant(0, None)
    assert sorted(stage for stage, _ in calls) == [driver.Stage.CUTE, driver.Stage.THREAD]


@pytest.mark.skipif(find_ptxas() is None, reason="needs ptxas")
def test_ptxas_performance_warnings_are_python_warnings(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """ptxas's performance warnings about a specialisation are `PerformanceWarning`s that
    carry the source location, once per specialisation a process builds: compiled, or
    read from the disk cache. cutec emits no wgmma yet: PTX that ptxas serialises stands
    in for the emitter's (tests/ptx/ptxas_cases.py)."""
    source = EXAMPLES / "transpose.cute"
    ptx = cases.module(str(source), cases.serialised("transpose"))
    monkeypatch.setattr(driver, "emit_ptx", lambda module, target: ptx)
    monkeypatch.setenv("CUTEC_CACHE", "1")
    monkeypatch.setenv("CUTEC_CACHE_DIR", str(tmp_path / "cache"))
    decl = f"{source}:{cases.DECLARED[0]}:{cases.DECLARED[1]}"
    expected = (
        f"{decl}: warning: kernel 'transpose': ptxas (C7511) Potential Performance Loss: "
        "wgmma.mma_async instructions are serialized"
    )
    with pytest.warns(rt.PerformanceWarning) as seen:
        rt.jit(source)._build(0, "sm_90a")
    (said,) = [str(w.message) for w in seen]
    assert said.startswith(expected) and "note: ptxas (C7519) warpgroup.arrive" in said
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        rt.jit(source)._build(0, "sm_90a")  # built in this process already
    assert again == []
    monkeypatch.setattr(JIT, "_KERNELS", {})  # a new process: the disk cache has it
    calls = _spy_compiles(monkeypatch)
    with pytest.warns(rt.PerformanceWarning) as cached:
        rt.jit(source)._build(0, "sm_90a")
    assert [str(w.message) for w in cached] == [said] and calls == []


@pytest.mark.skipif(find_ptxas() is None, reason="needs ptxas")
@needs_disassembler
def test_sass_is_the_cubins_listing() -> None:
    k = rt.jit(EXAMPLES / "transpose.cute", arch="sm_80")
    compiled = k._build(0, "sm_80")  # what a launch on an sm_80 GPU builds
    assert k.sass == disassemble(compiled.cubin)
    assert ".text.transpose" in k.sass and "LDS" in k.sass and "STG.E" in k.sass
