"""The emission rules of the thread and gpu dialects' ops, one group per op family:
the instruction text each prints (tests/ptx/cases hold the kernels ptxas assembles,
test_emit.py runs them), and the located error of a form PTX has no instruction for."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from cutec.diagnostics import CompileError
from cutec.ir.dialects.builtin import ModuleOp
from cutec.ir.parser import parse_module
from cutec.ir.verifier import verify
from cutec.ptx import emit_ptx


def _body(ptx: str) -> str:
    return re.sub(r"\t\.loc .*\n", "", ptx)


def _error(text: str, target: str = "sm_90a") -> CompileError:
    """The one located error emitting `text` gives (the op is on line 2 of the kernel)."""
    module = parse_module(text, "e.mlir")
    verify(module)
    with pytest.raises(CompileError) as err:
        emit_ptx(module, target)
    assert len(err.value.diagnostics) == 1
    assert err.value.location is not None and err.value.location.file == "e.mlir"
    return err.value


# --------------------------------------------------------------------------- vectors


def test_vector_loads_and_stores(load_case: Callable[[str], ModuleOp]) -> None:
    body = _body(emit_ptx(load_case("vector"), "sm_80"))
    assert "\tld.global.v4.f32 {%f0, %f1, %f2, %f3}, [%rd11];\n" in body
    # extract and from_elements are register renaming: element 0 + element 3, stored as a pair.
    assert "\tadd.rn.f32 %f4, %f0, %f3;\n\tst.global.v2.f32 [%rd11], {%f4, %f3};\n" in body
    assert "\tld.global.v4.b16 {%rs0, %rs1, %rs2, %rs3}, [%rd12];\n" in body


def test_predicated_loads_and_stores(load_case: Callable[[str], ModuleOp]) -> None:
    body = _body(emit_ptx(load_case("vector"), "sm_80"))
    assert (
        "\tmov.f32 %f6, %f5;\n\tmov.f32 %f7, %f5;\n\tmov.f32 %f8, %f5;\n\tmov.f32 %f9, %f5;\n"
        "\t@%p0 ld.global.v4.f32 {%f6, %f7, %f8, %f9}, [%rd11];\n"
        "\t@%p0 st.global.v4.f32 [%rd11], {%f6, %f7, %f8, %f9};\n"
        "\tmov.f32 %f10, %f5;\n\t@%p0 ld.global.f32 %f10, [%rd11];\n"
        "\t@%p0 st.global.f32 [%rd11], %f10;\n"
    ) in body
    assert "\t@%p0 st.global.v4.b16 [%rd12], {%rs0, %rs1, %rs2, %rs3};\n" in body
    # An i1 is a byte in memory: the load and its test are both predicated.
    assert (
        "\tmov.pred %p2, %p1;\n"
        "\t@%p0 ld.global.u8 %rs4, [%rd13];\n"
        "\t@%p0 setp.ne.u16 %p2, %rs4, 0;\n"
        "\tselp.u16 %rs5, 1, 0, %p0;\n"
        "\t@%p2 st.global.u8 [%rd13], %rs5;\n"
    ) in body


def test_a_carried_vector_moves_element_by_element(load_case: Callable[[str], ModuleOp]) -> None:
    body = _body(emit_ptx(load_case("vector"), "sm_80"))
    # The rotation reads every element before it writes one (a parallel copy).
    assert (
        "\tmov.f32 %f15, %f12;\n\tmov.f32 %f16, %f13;\n\tmov.f32 %f17, %f14;\n"
        "\tmov.f32 %f18, %f11;\n\tmov.f32 %f11, %f15;\n"
    ) in body
    assert "$L_for_end_1:\n\tst.global.v4.f32 [%rd11], {%f11, %f12, %f13, %f14};\n" in body


def test_a_vector_of_i1_has_no_access() -> None:
    err = _error(
        "kernel @k(%p: !gpu.ptr<i1, global>) {\n"
        "  %v = thread.load %p : !gpu.ptr<i1, global> -> vector<2xi1>\n"
        "  return\n}\n"
    )
    assert str(err.location) == "e.mlir:2:8"
    assert err.diagnostics[0].message == (
        "cannot emit 'thread.load' with operand types (!gpu.ptr<i1, global>) and result types "
        "(vector<2xi1>) for sm_90a: no vector access of i1 (each is a byte in memory)"
    )
