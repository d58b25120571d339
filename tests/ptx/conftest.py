"""Shared pieces of the PTX emitter tests.

`test.mma` stands for the coming generic atom-instruction op: it names an MMA
atom and carries its registers (d results, then a, b, c operands); its rule
renders the atom's `PtxTemplate` (`atom_op` fixture).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cutec.atoms.mma import mma_atoms
from cutec.ir.attributes import StringAttr
from cutec.ir.core import Operation
from cutec.ir.dialect import Dialect, registry
from cutec.ir.dialects.builtin import ModuleOp
from cutec.ir.opdef import attr_def, var_operand_def, var_result_def
from cutec.ir.parser import parse_module
from cutec.ir.verifier import verify
from cutec.ptx import emitter
from cutec.ptx.emitter import KernelEmitter
from cutec.ptx.rules import render_template

CASES = Path(__file__).parent / "cases"


class MmaOp(Operation):
    """``%d:4 = "test.mma"(%a0, ..., %c3) {atom = "SM80_..."} : (...) -> (f32, ...)``."""

    name = "test.mma"
    atom = attr_def(StringAttr)
    values = var_operand_def()
    d = var_result_def()


def _emit_mma(ctx: KernelEmitter, op: Operation) -> None:
    assert isinstance(op, MmaOp)
    template = mma_atoms()[op.atom.value].ptx
    counts = {o.name: o.count for o in template.operands}
    for r in op.results:
        ctx.define(r, op)
    values = list(op.operands)
    a, values = values[: counts["a"]], values[counts["a"] :]
    b, c = values[: counts["b"]], values[counts["b"] :]
    render_template(ctx, template, {"d": op.results, "a": a, "b": b, "c": c})


@pytest.fixture
def atom_op() -> Iterator[None]:
    reg = registry()
    reg.add(Dialect("test", ops=(MmaOp,)))
    emitter.register_rule(MmaOp, _emit_mma)
    try:
        yield
    finally:
        del reg.ops[MmaOp.name]
        del reg.dialects["test"]
        del emitter.RULES[MmaOp]


def _load_case(name: str) -> ModuleOp:
    path = CASES / f"{name}.mlir"
    module = parse_module(path.read_text(), str(path.relative_to(CASES.parent.parent.parent)))
    verify(module)
    return module


@pytest.fixture
def load_case() -> Callable[[str], ModuleOp]:
    """Parses and verifies tests/ptx/cases/NAME.mlir (the file named relative to the repo)."""
    return _load_case
