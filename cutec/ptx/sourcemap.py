"""From a line of PTX back to the .cute source: the ``.file`` and ``.loc`` lines.

The emitter writes a ``.loc FILE LINE COL`` line before the instructions of each
op whose source position differs from the last one, and the kernel's own
position first in its body (emitter.py, `KernelEmitter.emit_kernel`). So the
source of PTX line n is the nearest ``.loc`` at or before n in the same
function, and a function's declaration is the first ``.loc`` of its body. ptxas
names PTX lines (``around line 29``) and functions; `PtxSourceMap` answers both.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from cutec.diagnostics import Location

_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"((?:[^"\\]|\\.)*)"')
_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)")
# `.entry k(`, `.visible .func (.param .b32 r) f(`: the name before the parameters; not
# a prototype (`.extern .func`, or a declaration that ends in `;`), which has no body.
_FUNCTION = re.compile(
    r"^\s*(?!\.extern\b)(?:\.\w+\s+)*\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([\w$]+)(?!.*;\s*$)"
)
# An instruction's opcode: its first word after an optional guard (`@%p1 bra`).
_OPCODE = re.compile(r"^\s*(?:@!?%?\w+\s+)?([a-z][\w.:]*)")


@dataclass(frozen=True)
class _Loc:
    ptx_line: int
    file: int
    line: int
    col: int


class PtxSourceMap:
    """The source positions of a PTX module's lines (1-based, as ptxas counts them)."""

    def __init__(self, ptx: str) -> None:
        self.lines = ptx.splitlines()
        self.files: dict[int, str] = {}
        self.locs: list[_Loc] = []  # in line order
        self.functions: dict[str, int] = {}  # name -> the line of its header
        for n, text in enumerate(self.lines, 1):
            if m := _LOC.match(text):
                self.locs.append(_Loc(n, *map(int, m.groups())))
            elif m := _FILE.match(text):
                self.files[int(m.group(1))] = re.sub(r"\\(.)", r"\1", m.group(2))
            elif m := _FUNCTION.match(text):
                self.functions[m.group(1)] = n
        self._loc_lines = [loc.ptx_line for loc in self.locs]
        self._starts = sorted((line, name) for name, line in self.functions.items())

    def function_at(self, ptx_line: int) -> str | None:
        """The function whose text holds `ptx_line`."""
        i = bisect.bisect_right(self._starts, (ptx_line, "\uffff"))
        return self._starts[i - 1][1] if i else None

    def at(self, ptx_line: int) -> Location | None:
        """The source of `ptx_line`: the nearest ``.loc`` at or before it in its function."""
        i = bisect.bisect_right(self._loc_lines, ptx_line)
        if i == 0:
            return None
        loc = self.locs[i - 1]
        if self.function_at(loc.ptx_line) != self.function_at(ptx_line):
            return None  # the .loc is the previous function's
        return self._location(loc)

    def declaration(self, function: str) -> Location | None:
        """Where `function` is declared: the first ``.loc`` of its body."""
        start = self.functions.get(function)
        if start is None:
            return None
        i = bisect.bisect_right(self._loc_lines, start)
        if i == len(self.locs) or self.function_at(self.locs[i].ptx_line) != function:
            return None
        return self._location(self.locs[i])

    def uses(self, opcode: str) -> dict[str, int]:
        """The functions with an instruction `opcode` (``setmaxnreg``, ``wgmma.fence``
        ...), each with the line of its first such instruction."""
        found: dict[str, int] = {}
        for n, text in enumerate(self.lines, 1):
            m = _OPCODE.match(text)
            if m and (m.group(1) == opcode or m.group(1).startswith(opcode + ".")):
                function = self.function_at(n)
                if function is not None:
                    found.setdefault(function, n)
        return found

    def _location(self, loc: _Loc) -> Location | None:
        file = self.files.get(loc.file)
        return None if file is None else Location(file, loc.line, loc.col)
