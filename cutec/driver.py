"""The compiler driver: one entry point through the ordered stages.

As MLIR's Toy driver does with ``-emit=``, a compile names the last stage it
wants and runs everything up to it:

    ast     the .cute syntax tree (frontend parser)
    cute    verified cute-dialect IR, after the cute-level pass pipeline
    thread  one thread's program (the lowering pipeline)
    ptx     PTX text (PTX legalisation, a pass, then the PTX emitter)
    cubin   an assembled cubin (ptxas), with its resource report and its
            performance warnings, located in the source (Result.warnings)

The CLI (`cutec compile`, `cutec opt`), the JIT API (`cutec.jit`) and the tests
all call `compile`, so every stage is reached the same way and shows the same
diagnostics. Textual IR input (``.mlir``) enters at the cute stage and runs the
same pipelines: cute-level IR is lowered, thread-level IR (which the lowering
leaves unchanged) goes straight on to PTX and a cubin.

    from cutec.driver import Source, Stage, compile
    result = compile(Source.from_file("examples/sgemm_2.cute"), Stage.CUTE)
    print(result.text)
"""

from __future__ import annotations

import enum
import gc
import time
from collections import ChainMap
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from cutec.diagnostics import CompileError, Diagnostic, InternalCompilerError
from cutec.ir.dialects.builtin import KernelOp, ModuleOp
from cutec.ir.parser import parse_module
from cutec.ir.printer import print_op
from cutec.ir.signature import KernelSignature, LaunchInfo, launch_of, signature_of
from cutec.ir.verifier import verify
from cutec.passes import PASSES, PassManager, parse_pipeline
from cutec.passes.manager import Instrumentation, Pass
from cutec.passes.specialize_args import SpecializeArgs
from cutec.ptx import emit_ptx
from cutec.ptx.legalize import LegalizePtx
from cutec.ptx.ptxas import ResourceUsage, assemble
from cutec.ptx.ptxas_warnings import SETMAXNREG_IGNORED, ptxas_warnings
from cutec.target import DEFAULT_TARGET, Target, UnknownTargetError, target


class Stage(enum.IntEnum):
    """The stages in pipeline order; a compile stops after the one it names."""

    AST = 0
    CUTE = 1
    THREAD = 2
    PTX = 3
    CUBIN = 4

    @classmethod
    def named(cls, name: str) -> Stage:
        try:
            return cls[name.upper()]
        except KeyError:
            known = ", ".join(s.name.lower() for s in cls)
            raise CompileError(f"unknown stage '{name}'; the stages are {known}") from None


# The cute-level pipeline a compile runs unless it is given another.
DEFAULT_PIPELINE = "tile,predicate,canonicalize,cse,vectorize,pipeline,select-atoms"
# The lowering to one thread's program and its clean-up (docs/passes.md), run for
# --emit=thread and beyond.
# simplify is canonicalize, strength reduction, licm and cse in one pass.
LOWERING_PIPELINE = (
    "partition,lower-to-thread,promote-registers,carry-vectors,simplify,sink-barriers,"
    "order-shared-loads"
)
# Analyses that change nothing and only report (--remarks): run after the lowering
# when remarks are asked for, so a compile without them does not pay for them.
REMARKS_PIPELINE = "bank-conflicts"
# Run for --emit=ptx and beyond, after the others: what PTX has no instruction for,
# rewritten (cutec/ptx/legalize.py). The CPU backend runs the thread stage's IR.
PTX_PIPELINE = "legalize-ptx"
# Every pass a pipeline may name: the IR-to-IR passes and the back end's, which the
# passes package cannot know (ptx/ is a layer above it). A view of PASSES, not a
# copy: a pass registered there later (a test's) is known here too.
ALL_PASSES: Mapping[str, type[Pass]] = ChainMap({LegalizePtx.name: LegalizePtx}, PASSES)


@dataclass(frozen=True)
class Source:
    """What to compile: text, the file it came from, and its language (cute or mlir)."""

    text: str
    file: str
    lang: str = "cute"

    def __post_init__(self) -> None:
        if self.lang not in ("cute", "mlir"):
            raise ValueError(f"unknown source language '{self.lang}' (cute or mlir)")

    @classmethod
    def from_file(cls, path: str | Path, text: str | None = None) -> Source:
        """A source named by its path; the language is the suffix's (.cute, else IR)."""
        path = str(path)
        lang = "cute" if path.endswith(".cute") else "mlir"
        return cls(Path(path).read_text() if text is None else text, path, lang)


@dataclass(frozen=True)
class Options:
    """How to compile: compile-time parameters, kernel choice, pipeline, target."""

    # -D NAME=VALUE: values, or text parsed as an expression of the language.
    defines: Mapping[str, Any] = field(default_factory=dict)
    # Build only this kernel of a .cute file.
    kernel: str | None = None
    # The cute-level pass pipeline; None means DEFAULT_PIPELINE, "" none.
    pipeline: str | None = None
    # Printing, dumping and timing around passes (--print-ir-after-all ...).
    instrumentation: Instrumentation | None = None
    # The GPU target (--arch): its limits bound a kernel; the module records it.
    target: str = DEFAULT_TARGET
    # Run REMARKS_PIPELINE after the lowering (--remarks): the bank-conflict report.
    remarks: bool = False
    # What the JIT saw of a launch's arguments (docs/runtime.md, *Specialisation*):
    # divisors of run-time extents and strides, and base pointers' alignments in
    # bytes, by name. The frontend records them as the kernel's own `assume`s and
    # `align` clauses (so a whole-tensor gemm's plan sees them); IR input gets them
    # from the specialize-args pass, run before the pipeline.
    divisors: Mapping[str, int] = field(default_factory=dict)
    alignments: Mapping[str, int] = field(default_factory=dict)
    # The GPU architecture ptxas assembles for at the cubin stage; None: the target's.
    # An sm_80 kernel runs on a Hopper GPU assembled for sm_90a.
    assemble_for: str | None = None


@dataclass
class Result:
    """What a compile produced, at the stage it stopped after."""

    stage: Stage
    ast: Any = None
    module: ModuleOp | None = None
    ptx: str | None = None
    cubin: bytes | None = None
    # What ptxas -v said about each kernel (the cubin stage).
    resources: dict[str, ResourceUsage] = field(default_factory=dict)
    # Per-stage and per-pass wall times in seconds, in the order they ran.
    timings: list[tuple[str, float]] = field(default_factory=list)
    # What the passes decided and why, at the user's lines (--remarks).
    remarks: list[Diagnostic] = field(default_factory=list)
    # ptxas's performance warnings (wgmma serialised ...) at the user's lines (cubin stage).
    warnings: list[Diagnostic] = field(default_factory=list)
    # Each kernel's launch signature, read before the lowering erases it (the runtime's).
    signatures: dict[str, KernelSignature] = field(default_factory=dict)
    # Each kernel's launch facts, read from the IR the passes left (thread stage on).
    launches: dict[str, LaunchInfo] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The stage's output as text: the AST listing or the IR."""
        if self.stage is Stage.AST:
            from cutec.frontend.emit_ast import format_ast  # only the ast stage needs it

            return format_ast(self.ast)
        if self.stage is Stage.PTX:
            assert self.ptx is not None
            return self.ptx
        if self.stage is Stage.CUBIN:
            raise ValueError("a cubin is binary: write Result.cubin")
        assert self.module is not None
        return print_op(self.module)


def compile(source: Source, emit: Stage = Stage.CUTE, options: Options | None = None) -> Result:
    """Run `source` through the stages up to `emit`.

    User mistakes raise `CompileError` (located diagnostics); a stage the
    compiler does not reach yet is one such error, naming the stage.
    """
    options = options or Options()
    # The IR is a graph of reference cycles (ops <-> values <-> uses): the cyclic
    # collector would rescan it again and again as a compile allocates (a quarter
    # of sgemm_2's compile time). Garbage made meanwhile is collected afterwards.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _compile(source, emit, options)
    finally:
        if collecting:
            gc.enable()


def _compile(source: Source, emit: Stage, options: Options) -> Result:
    try:
        chosen = target(options.target)
    except UnknownTargetError as e:
        raise CompileError(f"--arch: {e}") from None
    if source.lang == "mlir" and (emit is Stage.AST or options.defines or options.kernel):
        raise CompileError(f"{source.file}: --emit=ast, -D and --kernel apply to .cute input only")
    if source.lang == "mlir":
        return _from_ir(source, emit, options, chosen)
    return _from_cute(source, emit, options, chosen)


def _manager(options: Options, emit: Stage, ir_input: bool) -> PassManager:
    """The cute-level pipeline (for IR input, after specialize-args with the launch's
    facts, when given: .cute input has them from the frontend), then the lowering's when
    `emit` is past the cute stage, and PTX legalisation when it is past the thread's."""
    _check_launch_facts(options)
    pipeline = DEFAULT_PIPELINE if options.pipeline is None else options.pipeline
    passes: list[Pass] = []
    if ir_input and (options.divisors or options.alignments):
        passes.append(SpecializeArgs.of(options.divisors, options.alignments))
    passes += parse_pipeline(pipeline, ALL_PASSES) if pipeline else []
    if emit >= Stage.THREAD:
        passes += parse_pipeline(LOWERING_PIPELINE, ALL_PASSES)
        if options.remarks:
            passes += parse_pipeline(REMARKS_PIPELINE, ALL_PASSES)
    if emit >= Stage.PTX:
        passes += parse_pipeline(PTX_PIPELINE, ALL_PASSES)
    # Without instrumentation, the IR is verified after the last pass only.
    return PassManager(passes, options.instrumentation or Instrumentation(verify_each=False))


def _finish(result: Result, emit: Stage, options: Options, chosen: Target) -> Result:
    """Go on from the IR the passes left to PTX and a cubin, as far as `emit`."""
    if emit >= Stage.THREAD:
        result.stage = Stage.THREAD
        assert result.module is not None
        result.launches = {k.sym_name: launch_of(k) for k in result.module.walk_type(KernelOp)}
    if emit >= Stage.PTX:
        _to_ptx(result, chosen)
    if emit >= Stage.CUBIN:
        _to_cubin(result, options.assemble_for or chosen.name)
    return result


def _from_cute(source: Source, emit: Stage, options: Options, chosen: Target) -> Result:
    # The frontend pulls in lark; import it only for .cute input.
    from cutec.frontend.builder import build_module
    from cutec.frontend.parser import parse_source  # start-up time, as above

    manager = _manager(options, emit, False)  # a bad pipeline is reported before any work
    start = time.perf_counter()
    program = parse_source(source.text, source.file)
    if emit is Stage.AST:
        return Result(Stage.AST, ast=program, timings=[("parse", time.perf_counter() - start)])
    module = build_module(
        program, options.defines, options.kernel, chosen, options.divisors, options.alignments
    )
    # The frontend's time appears in --timing's table beside the passes'.
    manager.timings.append(("frontend", time.perf_counter() - start))
    signatures = _signatures(module)
    manager.run(module)
    result = Result(Stage.CUTE, module=module, timings=manager.timings, remarks=manager.remarks)
    result.signatures = signatures
    return _finish(result, emit, options, chosen)


def _from_ir(source: Source, emit: Stage, options: Options, chosen: Target) -> Result:
    manager = _manager(options, emit, True)
    module = parse_module(source.text, source.file)
    verify(module)
    signatures = _signatures(module)
    manager.run(module)
    result = Result(Stage.CUTE, module=module, timings=manager.timings, remarks=manager.remarks)
    result.signatures = signatures
    return _finish(result, emit, options, chosen)


def _check_launch_facts(options: Options) -> None:
    """`Options.divisors` positive ints, `Options.alignments` powers of two."""
    for what, facts in (("divisor", options.divisors), ("alignment", options.alignments)):
        for name, n in facts.items():
            bad = type(n) is not int or n < 1 or (what == "alignment" and n & (n - 1))
            if not isinstance(name, str) or not name.isidentifier() or bad:
                kind = "power of two" if what == "alignment" else "integer"
                raise CompileError(f"launch facts: {what} {name!r}: {n!r} is not a positive {kind}")


def _signatures(module: ModuleOp) -> dict[str, KernelSignature]:
    """Each kernel's launch signature, while its cute.make_tensor ops still say it."""
    return {k.sym_name: signature_of(k) for k in module.walk_type(KernelOp)}


def _to_ptx(result: Result, chosen: Target) -> None:
    assert result.module is not None
    start = time.perf_counter()
    result.ptx = emit_ptx(result.module, chosen)
    result.stage = Stage.PTX
    result.timings.append(("ptx", time.perf_counter() - start))


def _to_cubin(result: Result, arch: str) -> None:
    assert result.ptx is not None
    start = time.perf_counter()
    try:
        assembled = assemble(result.ptx, arch, options=("-v",))
    except FileNotFoundError as e:
        raise CompileError(f"--emit=cubin: {e}") from None
    if not assembled.ok:
        # cutec wrote PTX that ptxas refuses: a bug in cutec, never the user's.
        raise InternalCompilerError(
            AssertionError(f"ptxas rejected the emitted PTX:\n{assembled.stderr}"), stage="ptxas"
        )
    result.cubin, result.resources = assembled.cubin, assembled.resources
    result.warnings = ptxas_warnings(assembled.stderr, result.ptx)
    # An ignored setmaxnreg leaves the kernel's roles starved or oversubscribed: an error.
    ignored = [w for w in result.warnings if SETMAXNREG_IGNORED in w.message]
    if ignored:
        raise CompileError(
            ignored[0].message, diagnostics=[replace(w, severity="error") for w in ignored]
        )
    result.stage = Stage.CUBIN
    result.timings.append(("ptxas", time.perf_counter() - start))
