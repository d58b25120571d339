"""Diagnostics: located user errors and internal compiler errors.

Two kinds of failure, kept apart everywhere (principle 4 of DESIGN.md):

* `CompileError` — the user's input is wrong. It carries a `Location` and is
  shown as ``file:line:col: error: message``, the source line and a caret;
  the CLI exits with code 1.
* anything else escaping a stage is a bug in cutec; the CLI wraps it in
  `InternalCompilerError` (with the pass and op it happened in) and exits 2.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TextIO


@dataclass(frozen=True)
class Location:
    """A point in a source file: 1-based line and column."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


class SourceManager:
    """Source text by file name, so a diagnostic can quote the offending line.

    Text registered with `add` (an in-memory buffer, a string under test) wins
    over reading the file from disk.
    """

    def __init__(self) -> None:
        self._texts: dict[str, str] = {}

    def add(self, file: str, text: str) -> None:
        self._texts[file] = text

    def line(self, file: str, line: int) -> str | None:
        text = self._texts.get(file)
        if text is None:
            try:
                with open(file, encoding="utf-8", errors="replace") as f:
                    text = f.read()
            except OSError:
                return None
            self._texts[file] = text
        lines = text.splitlines()
        if 1 <= line <= len(lines):
            return lines[line - 1]
        return None


SOURCES = SourceManager()


@dataclass(frozen=True)
class Note:
    """A related location attached to a diagnostic (``note: declared here``)."""

    message: str
    location: Location | None = None


@dataclass
class Diagnostic:
    """One message about the user's input."""

    message: str
    location: Location | None = None
    # By keyword only: a list of notes passed where the severity goes printed as one.
    severity: str = field(default="error", kw_only=True)
    notes: list[Note] = field(default_factory=list, kw_only=True)

    def render(self, sources: SourceManager = SOURCES) -> str:
        out = [_render_one(self.severity, self.message, self.location, sources)]
        out += [_render_one("note", n.message, n.location, sources) for n in self.notes]
        return "\n".join(out)


def unique(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Each (message, location) once, in order: a statement in an unrolled loop, a func
    inlined twice or a stream-K gemm's two kernels built from one source say the same
    thing at the same place once per copy."""
    seen: set[tuple[str, Location | None]] = set()
    out = []
    for d in diagnostics:
        if (d.message, d.location) not in seen:
            seen.add((d.message, d.location))
            out.append(d)
    return out


def _render_one(severity: str, message: str, loc: Location | None, sources: SourceManager) -> str:
    if loc is None:
        return f"{severity}: {message}"
    head = f"{loc}: {severity}: {message}"
    text = sources.line(loc.file, loc.line)
    if text is None:
        return head
    text = text.expandtabs(1)
    caret = " " * max(loc.col - 1, 0) + "^"
    return f"{head}\n{text}\n{caret}"


class CompileError(Exception):
    """A mistake in the user's input; carries one or more located diagnostics."""

    def __init__(
        self,
        message: str,
        location: Location | None = None,
        notes: list[Note] | None = None,
        *,
        diagnostics: list[Diagnostic] | None = None,
    ) -> None:
        if diagnostics is None:
            diagnostics = [Diagnostic(message, location, notes=list(notes or []))]
        self.diagnostics = diagnostics
        super().__init__(diagnostics[0].message)

    @property
    def location(self) -> Location | None:
        return self.diagnostics[0].location

    def render(self, sources: SourceManager = SOURCES) -> str:
        return "\n".join(d.render(sources) for d in self.diagnostics)


class InternalCompilerError(Exception):
    """A bug in cutec, reported with where in the pipeline it happened."""

    def __init__(self, cause: BaseException, *, stage: str | None = None, op: str | None = None):
        self.cause = cause
        self.stage = stage
        self.op = op
        where = []
        if stage:
            where.append(f"in pass '{stage}'")
        if op:
            where.append(f"at op {op}")
        suffix = f" ({', '.join(where)})" if where else ""
        super().__init__(f"{type(cause).__name__}: {cause}{suffix}")


def report_internal_error(err: BaseException, stream: TextIO) -> None:
    """Print an internal compiler error: one line, and the traceback on request."""
    import traceback

    ice = err if isinstance(err, InternalCompilerError) else InternalCompilerError(err)
    print(f"internal compiler error: {ice}", file=stream)
    if os.environ.get("CUTEC_TRACEBACK"):
        cause = ice.cause
        traceback.print_exception(type(cause), cause, cause.__traceback__, file=stream)
    else:
        print("note: this is a bug in cutec; set CUTEC_TRACEBACK=1 to see where", file=stream)
