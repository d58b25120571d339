"""Shared pieces of the PTX emitter tests: the kernels of tests/ptx/cases."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from cutec.ir.dialects.builtin import ModuleOp
from cutec.ir.parser import parse_module
from cutec.ir.verifier import verify

CASES = Path(__file__).parent / "cases"


def _load_case(name: str) -> ModuleOp:
    path = CASES / f"{name}.mlir"
    module = parse_module(path.read_text(), str(path.relative_to(CASES.parent.parent.parent)))
    verify(module)
    return module


@pytest.fixture
def load_case() -> Callable[[str], ModuleOp]:
    """Parses and verifies tests/ptx/cases/NAME.mlir (the file named relative to the repo)."""
    return _load_case
