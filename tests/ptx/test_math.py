"""The math dialect's PTX: sqrt.rn (IEEE), rsqrt/ex2/lg2 .approx (f32 only, no .ftz),
exp and log through ex2 and lg2 as CUDA's __expf and __logf. ptxas assembles
tests/ptx/cases/math.mlir for every target (test_emit.py)."""

from __future__ import annotations

import math
import struct
from collections.abc import Callable

import pytest

from cutec.diagnostics import CompileError
from cutec.ir.dialects.builtin import ModuleOp
from cutec.ir.parser import parse_module
from cutec.ptx.ptxas import assemble, find_ptxas
from cutec.ptx.tables import LN_2_F32, LOG2_E_F32
from cutec.target import COMPILE_TARGETS
from tests.ptx.legal import ptx_of


def _body(ptx: str) -> str:
    return "\n".join(line for line in ptx.splitlines() if not line.lstrip().startswith(".loc"))


@pytest.mark.parametrize("target", COMPILE_TARGETS)
def test_each_function_is_its_instruction(
    target: str, load_case: Callable[[str], ModuleOp]
) -> None:
    body = _body(ptx_of(load_case("math"), target))
    assert "\tmul.rn.f32 %f2, %f0, 0f3FB8AA3B;\n\tex2.approx.f32 %f1, %f2;" in body
    assert "\tex2.approx.f32 %f3, %f0;" in body
    assert "\tlg2.approx.f32 %f5, %f0;\n\tmul.rn.f32 %f4, %f5, 0f3F317218;" in body
    assert "\tlg2.approx.f32 %f6, %f0;" in body
    assert "\tsqrt.rn.f32 %f7, %f0;" in body
    assert "\trsqrt.approx.f32 %f8, %f0;" in body
    assert "\tsqrt.rn.f64 %fd1, %fd0;" in body
    assert ".ftz" not in body  # subnormals kept: flush-to-zero is off


def test_the_constants_are_log2_e_and_ln_2_rounded_to_f32() -> None:
    def f32_hex(x: float) -> str:
        return "0f" + struct.pack(">f", x).hex().upper()

    assert f32_hex(math.log2(math.e)) == LOG2_E_F32
    assert f32_hex(math.log(2.0)) == LN_2_F32


def _kernel(op: str, t: str) -> ModuleOp:
    text = f"kernel @k(%a: {t}) {{\n  %c = {op} %a : {t}\n  return\n}}\n"
    return parse_module(text, "m.mlir")


@pytest.mark.parametrize("op", ["math.exp", "math.exp2", "math.log", "math.log2", "math.rsqrt"])
@pytest.mark.parametrize("t", ["f64"])
def test_approximate_functions_are_f32_only(op: str, t: str) -> None:
    with pytest.raises(CompileError) as err:
        ptx_of(_kernel(op, t), "sm_90a")
    assert str(err.value.location) == "m.mlir:2:8"  # the op
    message = err.value.diagnostics[0].message
    assert message.startswith(f"cannot emit '{op}' with operand types ({t})")
    assert message.endswith(f"{op} is emitted for f32 only")


def test_sqrt_is_f32_and_f64() -> None:
    assert "sqrt.rn.f64" in ptx_of(_kernel("math.sqrt", "f64"), "sm_80")


@pytest.mark.parametrize(
    "op", ["math.exp", "math.exp2", "math.log", "math.log2", "math.rsqrt", "math.sqrt"]
)
@pytest.mark.parametrize("t", ["f16", "bf16"])
def test_half_precision_is_computed_in_f32_and_rounded_back(op: str, t: str) -> None:
    """As the other half-precision arithmetic: widen, the f32 instruction, round back."""
    ptx = ptx_of(_kernel(op, t), "sm_90a")
    assert f"cvt.f32.{t}" in ptx and f"cvt.rn.{t}.f32" in ptx
    if find_ptxas() is not None:
        assert assemble(ptx, "sm_90a").ok
