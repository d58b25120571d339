"""Shared pieces of the PTX emitter tests.

`test.smem_alloc` stands for a thread-level shared-memory allocation, which
the thread dialect does not have yet: ``%p = test.smem_alloc {bytes = 1024 :
i64} : !gpu.ptr<f32, shared>``. The `smem_op` fixture registers it with the
IR parser and the PTX emitter for one test and removes it afterwards (the
round-trip test requires a case for every registered op).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cutec.ir.attributes import IntegerAttr
from cutec.ir.core import Operation
from cutec.ir.dialect import Dialect, registry
from cutec.ir.dialects.builtin import ModuleOp
from cutec.ir.dialects.gpu import PointerType
from cutec.ir.opdef import attr_def, result_def
from cutec.ir.parser import parse_module
from cutec.ir.verifier import verify
from cutec.ptx import emitter
from cutec.ptx.emitter import KernelEmitter
from cutec.ptx.rules import shared_buffer

CASES = Path(__file__).parent / "cases"


class SmemAllocOp(Operation):
    """``%p = test.smem_alloc {bytes = 1024 : i64} : !gpu.ptr<f32, shared>``."""

    name = "test.smem_alloc"
    bytes = attr_def(IntegerAttr)
    result = result_def(PointerType)
    assembly_format = "attr-dict `:` type($result)"


def _emit_smem_alloc(ctx: KernelEmitter, op: Operation) -> None:
    assert isinstance(op, SmemAllocOp)
    shared_buffer(ctx, op, op.bytes.value)


@pytest.fixture
def smem_op() -> Iterator[None]:
    reg = registry()
    reg.add(Dialect("test", ops=(SmemAllocOp,)))
    emitter.register_rule(SmemAllocOp, _emit_smem_alloc)
    try:
        yield
    finally:
        del reg.ops[SmemAllocOp.name]
        del reg.dialects["test"]
        del emitter.RULES[SmemAllocOp]


def _load_case(name: str) -> ModuleOp:
    path = CASES / f"{name}.mlir"
    module = parse_module(path.read_text(), str(path.relative_to(CASES.parent.parent.parent)))
    verify(module)
    return module


@pytest.fixture
def load_case() -> Callable[[str], ModuleOp]:
    """Parses and verifies tests/ptx/cases/NAME.mlir (the file named relative to the repo)."""
    return _load_case
