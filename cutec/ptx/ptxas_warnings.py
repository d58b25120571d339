"""ptxas's performance warnings as cutec's located warnings.

ptxas says, without failing, when it gives up speed the PTX asked for: wgmma
serialised (C7509-C7516, C7520: a call in the pipeline, too few registers, an
accumulator written by another instruction between ``wgmma.fence`` and the
wait ...), ``setmaxnreg`` ignored (C7504, C7508). Each message with "Potential
Performance Loss" becomes one warning naming the kernel, at the source line of
the PTX line ptxas names, else at the first instruction the message quotes
(``'setmaxnreg'``), else at the kernel's declaration. The warpgroup syncs ptxas
adds (C7517 ``warpgroup.wait``, C7519 ``warpgroup.arrive is injected in around
line N``) say where the pipeline broke: they are notes of the kernel's warning,
or a warning of their own where the kernel has none.

The driver's cubin stage collects them (`Result.warnings`); ``cutec compile``
prints them, and the JIT issues each as a `PerformanceWarning`. An ignored setmaxnreg is
an error instead (`SETMAXNREG_IGNORED`): the kernel's warpgroup roles depend on it.
"""

from __future__ import annotations

import re

from cutec.diagnostics import Diagnostic, Location, Note, unique
from cutec.ptx.ptxas import AROUND_LINE, PtxasMessage, parse_messages
from cutec.ptx.sourcemap import PtxSourceMap


class PerformanceWarning(UserWarning):
    """ptxas made a kernel slower than its PTX asked for (wgmma serialised, setmaxnreg
    ignored ...): the message is the located warning ``cutec compile`` prints."""


# What ptxas says when it ignores a setmaxnreg (C7504, C7508): the driver makes it an error.
SETMAXNREG_IGNORED = "'setmaxnreg' ignored"

# An instruction a message quotes: 'setmaxnreg'.
_QUOTED = re.compile(r"'([a-z][\w.]*)'")


def ptxas_warnings(ptxas_output: str, ptx: str) -> list[Diagnostic]:
    """The located warnings of ptxas's messages in `ptxas_output` about module `ptx`."""
    return located_warnings(parse_messages(ptxas_output), PtxSourceMap(ptx))


def located_warnings(messages: list[PtxasMessage], ptx: PtxSourceMap) -> list[Diagnostic]:
    """One warning per performance message and kernel; injected syncs as its notes."""
    warnings: list[Diagnostic] = []
    by_kernel: dict[str | None, Diagnostic] = {}
    for message in messages:
        if message.performance:
            for kernel, location in _places(message, ptx):
                warning = Diagnostic(_text(message, kernel), location, severity="warning")
                warnings.append(warning)
                by_kernel.setdefault(kernel, warning)
    orphans = []
    for message in messages:
        if not message.injected:
            continue
        location = _at_line(message, ptx)
        owner = by_kernel.get(message.function)
        if owner is not None:
            note = Note(f"ptxas ({message.code}) {_text_at(message)}", location)
            if note not in owner.notes:
                owner.notes.append(note)
        else:
            text = _text(message, message.function)
            orphans.append(Diagnostic(text, location, severity="warning"))
    return unique(warnings + orphans)


def _places(message: PtxasMessage, ptx: PtxSourceMap) -> list[tuple[str | None, Location | None]]:
    """The kernels a message is about, each with where to report it."""
    if message.function is not None:
        return [(message.function, _at_line(message, ptx))]
    # No function named (C7508): the functions using an instruction it quotes, at that
    # instruction; else the module's only function; else nowhere in particular.
    for opcode in _QUOTED.findall(message.text):
        users = ptx.uses(opcode)
        if users:
            return [(f, ptx.at(line) or ptx.declaration(f)) for f, line in users.items()]
    if len(ptx.functions) == 1:
        (only,) = ptx.functions
        return [(only, ptx.declaration(only))]
    return [(None, None)]


def _at_line(message: PtxasMessage, ptx: PtxSourceMap) -> Location | None:
    """The source of the PTX line `message` names, else its function's declaration."""
    if message.ptx_line is not None and (found := ptx.at(message.ptx_line)) is not None:
        return found
    return ptx.declaration(message.function) if message.function else None


def _text_at(message: PtxasMessage) -> str:
    """ptxas's text, its PTX line said as one ("around line 29" reads as a .cute line)."""
    return AROUND_LINE.sub(r"near PTX line \1", message.text)


def _text(message: PtxasMessage, kernel: str | None) -> str:
    who = f"kernel '{kernel}'" if kernel else "a kernel (ptxas does not say which)"
    return f"{who}: ptxas ({message.code}) {_text_at(message)}"
