"""The `.cute` frontend: lark grammar → AST (`parser`) → cute-dialect IR (`builder`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cutec.frontend.builder import build_module
from cutec.frontend.parser import parse_source
from cutec.ir.dialects.builtin import ModuleOp


def compile_source(
    text: str, file: str, defines: Mapping[str, Any] | None = None, kernel: str | None = None
) -> ModuleOp:
    """Parse and build `text`: the verified cute-dialect module of its kernels.

    `defines` binds compile-time parameters (values, or text parsed as an
    expression, as ``-D NAME=VALUE`` gives); `kernel` builds only that kernel.
    Raises `CompileError` with every diagnostic of the file.
    """
    program = parse_source(text, file)
    return build_module(program, defines or {}, kernel)
