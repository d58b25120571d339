"""The PTX of thread-level IR as the driver's PTX stage makes it, for the emitter tests."""

from __future__ import annotations

from cutec.ir.dialects.builtin import ModuleOp
from cutec.ptx import emit_ptx, legalize


def ptx_of(module: ModuleOp, target: str) -> str:
    """`module` legalised (the legalize-ptx pass, in place), then emitted for `target`."""
    legalize(module)
    return emit_ptx(module, target)
