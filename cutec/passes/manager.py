"""The pass manager: pipelines from text, verification and instrumentation.

A pass is a small dataclass with a CLI `name`; its options are its fields
(``canonicalize{max-iterations=4}`` sets ``max_iterations``). The manager runs
passes in order, verifies after each (unless told not to), prints IR before or
after chosen passes, dumps one numbered file per pass and times them.

Passes share analyses through the manager's `AnalysisManager`
(`cutec.analysis.manager`): a pass asks ``self.analyses.get(kind, kernel)``, and
after it the manager keeps only the analyses the pass declares in `preserves`.
A pass that runs other passes as its steps does so through `run_nested`, a
manager of its own over the same analyses.

Failures keep their kind: a `CompileError` from a pass is the user's (exit 1);
anything else — including IR that fails verification after a pass — is an
`InternalCompilerError` naming the pass and the op being rewritten (exit 2).
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, TextIO

from cutec.analysis.manager import AnalysisManager
from cutec.diagnostics import CompileError, Diagnostic, InternalCompilerError, Location, unique
from cutec.ir.printer import print_op
from cutec.ir.verifier import verify

if TYPE_CHECKING:
    from cutec.ir.core import Operation
    from cutec.ir.dialects.builtin import ModuleOp


@contextmanager
def working_on(op: Operation) -> Iterator[None]:
    """Mark `op` as the one being transformed: a crash inside names it."""
    try:
        yield
    except Exception as e:
        # The innermost op wins: record it only if no nested block did.
        if not hasattr(e, "cutec_op"):
            e.cutec_op = op  # type: ignore[attr-defined]
        raise


class PipelineError(CompileError):
    """A malformed pipeline string or an unknown pass or option."""


@dataclass
class Pass:
    """Base of all passes. Subclasses set `name` and `summary` and implement `run`."""

    name: ClassVar[str]
    summary: ClassVar[str]
    # The analyses whose answers this pass leaves valid (cutec.analysis.manager says
    # when that is); the manager drops every other cached analysis after the pass.
    preserves: ClassVar[tuple[type, ...]] = ()

    def run(self, module: ModuleOp) -> None:
        raise NotImplementedError

    @property
    def analyses(self) -> AnalysisManager:
        """The analyses of the manager running this pass. A pass run by itself (a
        test's ``Pass().run(module)``) gets a new, empty manager at each request, so
        it asks once per kernel and hands the analysis to its helpers."""
        bound = self.__dict__.get("_analyses")
        return bound if bound is not None else AnalysisManager()

    def run_nested(self, passes: list[Pass], module: ModuleOp) -> None:
        """Run `passes` on `module` as steps of this pass (MLIR's dynamic pass
        pipeline): through a manager sharing this pass's analyses, with no
        instrumentation of its own; their remarks become this pass's."""
        nested = PassManager(passes, Instrumentation(verify=False), analyses=self.analyses)
        nested.run(module)
        self.__dict__.setdefault("_remarks", []).extend(nested.remarks)

    def remark(self, message: str, location: Location | None) -> None:
        """Say what the pass decided and why, at the user's line (``--remarks``)."""
        remarks = self.__dict__.setdefault("_remarks", [])
        remarks.append(Diagnostic(message, location, severity="remark"))

    def take_remarks(self) -> list[Diagnostic]:
        """The remarks made since the last call."""
        return self.__dict__.pop("_remarks", [])

    def describe(self) -> str:
        """``name{opt=value}`` for the options that differ from their defaults."""
        opts = []
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value != f.default:
                opts.append(f"{f.name.replace('_', '-')}={value}")
        return self.name + ("{" + ",".join(opts) + "}" if opts else "")


def parse_pipeline(text: str, registry: Mapping[str, type[Pass]]) -> list[Pass]:
    """``'canonicalize{max-iterations=4},cse'`` → pass instances."""
    passes: list[Pass] = []
    for name, options in _split_pipeline(text):
        cls = registry.get(name)
        if cls is None:
            raise PipelineError(f"unknown pass '{name}'; known passes: {', '.join(registry)}")
        passes.append(cls(**_convert_options(cls, options)))
    return passes


def _split_pipeline(text: str) -> list[tuple[str, dict[str, str]]]:
    items: list[tuple[str, dict[str, str]]] = []
    i, n = 0, len(text)
    while i < n:
        j = i
        while j < n and text[j] not in ",{":
            j += 1
        name = text[i:j].strip()
        options: dict[str, str] = {}
        if j < n and text[j] == "{":
            end = text.find("}", j)
            if end < 0:
                raise PipelineError(f"unclosed '{{' in pipeline '{text}'")
            for item in filter(None, (s.strip() for s in text[j + 1 : end].split(","))):
                key, eq, value = item.partition("=")
                if not eq:
                    raise PipelineError(f"option '{item}' of pass '{name}' needs '=value'")
                options[key.strip()] = value.strip()
            j = end + 1
            while j < n and text[j] == " ":
                j += 1
        if not name:
            raise PipelineError(f"empty pass name in pipeline '{text}'")
        items.append((name, options))
        if j < n and text[j] != ",":
            raise PipelineError(f"expected ',' after pass '{name}' in pipeline '{text}'")
        i = j + 1
    return items


def _convert_options(cls: type[Pass], options: dict[str, str]) -> dict[str, object]:
    fields = {f.name: f for f in dataclasses.fields(cls)}
    out: dict[str, object] = {}
    for key, raw in options.items():
        attr = key.replace("-", "_")
        f = fields.get(attr)
        if f is None:
            known = ", ".join(k.replace("_", "-") for k in fields) or "none"
            raise PipelineError(f"pass '{cls.name}' has no option '{key}' (options: {known})")
        kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", "str")
        try:
            if kind == "bool":
                if raw not in ("true", "false", "1", "0"):
                    raise ValueError(raw)
                out[attr] = raw in ("true", "1")
            elif kind == "int":
                out[attr] = int(raw)
            else:
                out[attr] = raw
        except ValueError:
            raise PipelineError(
                f"option '{key}' of pass '{cls.name}' expects {kind}, got '{raw}'"
            ) from None
    return out


@dataclass
class Instrumentation:
    """What to print, dump and time around the passes."""

    # Verify the IR after every pass (a broken pass is named at once), else only
    # after the last one (the compile driver's default: verification is not free).
    verify_each: bool = True
    verify: bool = True  # False: no verification at all (--no-verify)
    print_before: set[str] = field(default_factory=set)
    print_after: set[str] = field(default_factory=set)
    print_before_all: bool = False
    print_after_all: bool = False
    dump_dir: str | None = None
    timing: bool = False
    stream: TextIO = field(default_factory=lambda: sys.stderr)


@dataclass
class PassManager:
    """Runs a list of passes over a module with the chosen instrumentation."""

    passes: list[Pass]
    options: Instrumentation = field(default_factory=Instrumentation)
    timings: list[tuple[str, float]] = field(default_factory=list)
    remarks: list[Diagnostic] = field(default_factory=list)
    analyses: AnalysisManager = field(default_factory=AnalysisManager)

    def run(self, module: ModuleOp) -> None:
        opts = self.options
        if opts.dump_dir is not None:
            os.makedirs(opts.dump_dir, exist_ok=True)
            self._dump(0, "input", module)
        for index, p in enumerate(self.passes, start=1):
            if opts.print_before_all or p.name in opts.print_before:
                self._print(f"IR Dump Before {p.describe()}", module)
            start = time.perf_counter()
            self._run_one(p, module)
            self.timings.append((p.name, time.perf_counter() - start))
            self.remarks = unique([*self.remarks, *p.take_remarks()])  # once per line
            if opts.verify and (opts.verify_each or index == len(self.passes)):
                self._verify(p, module, opts.verify_each)
            if opts.print_after_all or p.name in opts.print_after:
                self._print(f"IR Dump After {p.describe()}", module)
            if opts.dump_dir is not None:
                self._dump(index, p.name, module)
        if opts.timing:
            self.print_timing()

    @staticmethod
    def _verify(p: Pass, module: ModuleOp, each: bool) -> None:
        try:
            verify(module)
        except CompileError as e:
            # Verified at the end only, the broken pass may be any of them.
            stage = (
                p.name
                if each
                else f"the pipeline ending in {p.name} (--verify-each names the pass)"
            )
            raise InternalCompilerError(
                AssertionError(f"pass produced invalid IR: {e.render()}"), stage=stage
            ) from e

    def _run_one(self, p: Pass, module: ModuleOp) -> None:
        p.__dict__["_analyses"] = self.analyses
        try:
            p.run(module)
        except CompileError:
            raise
        except InternalCompilerError:
            raise
        except Exception as e:  # a bug in the pass: report where it happened
            op = getattr(e, "cutec_op", None)
            where = None
            if op is not None:
                where = op.name + (f" at {op.location}" if op.location else "")
            raise InternalCompilerError(e, stage=p.name, op=where) from e
        finally:
            del p.__dict__["_analyses"]
            self.analyses.keep_only(p.preserves)

    def _print(self, title: str, module: ModuleOp) -> None:
        print(f"// -----// {title} //----- //", file=self.options.stream)
        print(print_op(module), end="", file=self.options.stream)

    def _dump(self, index: int, name: str, module: ModuleOp) -> None:
        assert self.options.dump_dir is not None
        path = os.path.join(self.options.dump_dir, f"{index:02d}_{name}.mlir")
        tmp = path + ".tmp"
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(print_op(module))
            os.replace(tmp, path)  # never leave a half-written dump
        except OSError as e:  # a full disk, a directory gone: the user's to fix, not a bug
            with suppress(OSError):
                os.unlink(tmp)
            raise CompileError(f"cannot write the IR dump '{path}': {e.strerror}") from None

    def print_timing(self) -> None:
        total = sum(t for _, t in self.timings) or 1e-12
        out = self.options.stream
        print("===-------------------------------------------===", file=out)
        print("  pass                      wall (ms)      %", file=out)
        for name, t in self.timings:
            print(f"  {name:<24}{t * 1e3:>10.3f}{100 * t / total:>8.1f}", file=out)
        print(f"  {'total':<24}{total * 1e3:>10.3f}{100.0:>8.1f}", file=out)
