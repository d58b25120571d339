"""The PTX emitter: hand-written thread-level kernels, emitted for each target,
assembled by ptxas, and checked line by line where a line matters."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from cutec.diagnostics import CompileError
from cutec.ir.dialects.builtin import ModuleOp
from cutec.ir.parser import parse_module
from cutec.ir.verifier import verify
from cutec.ptx import emit_ptx, legalize
from cutec.ptx.ptxas import assemble, find_ptxas
from cutec.target import COMPILE_TARGETS
from tests.ptx.legal import ptx_of

needs_ptxas = pytest.mark.skipif(find_ptxas() is None, reason="no ptxas (install the test extra)")

CASES = ("vadd", "control", "arith", "smem", "atom", "vector", "packed", "local", "special", "math")


def _emit(case: str, target: str, request: pytest.FixtureRequest) -> str:
    return ptx_of(request.getfixturevalue("load_case")(case), target)


@needs_ptxas
@pytest.mark.parametrize("target", COMPILE_TARGETS)
@pytest.mark.parametrize("case", CASES)
def test_ptxas_accepts_every_case(case: str, target: str, request: pytest.FixtureRequest) -> None:
    result = assemble(_emit(case, target, request), target, options=("-v",))
    assert result.ok, result.stderr
    usage = result.resources
    assert list(usage) == [{"arith": "arith_ops"}.get(case, case)]
    (kernel,) = usage.values()
    assert kernel.arch == target and kernel.registers > 0
    # A kernel's own .local array (case local) is no stack frame in ptxas -v's report.
    assert not kernel.spills and kernel.stack_frame == 0
    if case == "smem":
        assert kernel.shared_bytes == 1024 and kernel.barriers == 1


@pytest.mark.parametrize("case", CASES)
def test_registers_are_declared(case: str, request: pytest.FixtureRequest) -> None:
    """Every register used is below the count its class declares, and each class is used."""
    ptx = _emit(case, "sm_90a", request)
    declared = dict(re.findall(r"\.reg \.\w+ (%[a-z]+)<(\d+)>;", ptx))
    used: dict[str, int] = {}
    for prefix, n in re.findall(r"(%[a-z]+)(\d+)\b", ptx):
        used[prefix] = max(used.get(prefix, 0), int(n) + 1)
    assert {p: int(n) for p, n in declared.items()} == used


@pytest.mark.parametrize(
    ("target", "version"), [("sm_80", ".version 7.4"), ("sm_90a", ".version 8.0")]
)
def test_header(target: str, version: str, load_case: Callable[[str], ModuleOp]) -> None:
    lines = ptx_of(load_case("vadd"), target).splitlines()
    start = lines.index(version)
    assert lines[start : start + 3] == [version, f".target {target}", ".address_size 64"]


def test_parameters_and_their_loads(load_case: Callable[[str], ModuleOp]) -> None:
    ptx = ptx_of(load_case("vadd"), "sm_90a")
    assert (
        ".visible .entry vadd(\n"
        "\t.param .u64 vadd_param_0,\n"
        "\t.param .u64 vadd_param_1,\n"
        "\t.param .u64 vadd_param_2,\n"
        "\t.param .s64 vadd_param_3\n"
        ")\n"
        ".reqntid 128, 1, 1\n{"
    ) in ptx
    assert "\tld.param.u64 %rd0, [vadd_param_0];\n\tcvta.to.global.u64 %rd1, %rd0;\n" in ptx
    assert "\tld.param.s64 %rd6, [vadd_param_3];\n" in ptx


def test_loc_lines_point_at_the_ops(load_case: Callable[[str], ModuleOp]) -> None:
    ptx = ptx_of(load_case("vadd"), "sm_90a")
    assert '.file 1 "tests/ptx/cases/vadd.mlir"' in ptx
    # Line 15 of vadd.mlir, column 14: `%sum = arith.addf %x, %y : f32`.
    assert "\t.loc 1 15 14\n\tadd.rn.f32 %f4, %f2, %f3;\n" in ptx


def test_kernel_directives(load_case: Callable[[str], ModuleOp]) -> None:
    ptx = ptx_of(load_case("control"), "sm_80")
    assert ")\n.maxntid 256, 1, 1\n.minnctapersm 2\n.maxnreg 64\n{" in ptx
    assert ".reqntid" not in ptx


def test_grid_stride_loop(load_case: Callable[[str], ModuleOp]) -> None:
    """The guard before the loop, the body's carried-value move, the step and the test
    at the bottom, which branches back."""
    ptx = ptx_of(load_case("vadd"), "sm_90a")
    body = re.sub(r"\t\.loc .*\n", "", ptx)
    assert (
        "\tmov.b64 %rd13, %rd11;\n"
        "\tmov.f32 %f1, %f0;\n"
        "\tsetp.ge.s64 %p0, %rd13, %rd6;\n"
        "\t@%p0 bra $L_for_end_1;\n"
        "$L_for_0:\n"
    ) in body
    assert (
        "\tmov.f32 %f1, %f5;\n"
        "\tadd.s64 %rd13, %rd13, %rd12;\n"
        "\tsetp.lt.s64 %p1, %rd13, %rd6;\n"
        "\t@%p1 bra $L_for_0;\n"
        "$L_for_end_1:\n"
    ) in body


SWAP = """
kernel @swap(%out: !gpu.ptr<i32, global>, %a: i32, %b: i32, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%x = %a, %y = %b) -> (i32, i32) : i32 {
    scf.yield %y, %x : i32, i32
  }
  thread.store %r#0, %out : i32, !gpu.ptr<i32, global>
  return
}
"""


def test_a_swapping_yield_is_a_parallel_copy() -> None:
    ptx = ptx_of(parse_module(SWAP, "swap.mlir"), "sm_90a")
    body = re.sub(r"\t\.loc .*\n", "", ptx)
    # %r6/%r7 carry x and y: both are read before either is written.
    assert (
        "\t@%p0 bra $L_for_end_1;\n"
        "$L_for_0:\n"
        "\tmov.b32 %r8, %r7;\n"
        "\tmov.b32 %r9, %r6;\n"
        "\tmov.b32 %r6, %r8;\n"
        "\tmov.b32 %r7, %r9;\n"
        "\tadd.s32 %r5, %r5, %r4;\n"
    ) in body
    assert "$L_for_end_1:\n\tst.global.s32 [%rd1], %r6;\n" in body


def test_if_with_results_and_while(load_case: Callable[[str], ModuleOp]) -> None:
    body = re.sub(r"\t\.loc .*\n", "", ptx_of(load_case("control"), "sm_80"))
    assert (
        "\t@!%p1 bra $L_else_1;\n"
        "\tmul.lo.s32 %r8, %r2, %r5;\n"
        "\tmov.b32 %r7, %r8;\n"
        "\tbra $L_if_end_0;\n"
        "$L_else_1:\n"
        "\tshr.s32 %r9, %r2, %r4;\n"
        "\tmov.b32 %r7, %r9;\n"
        "$L_if_end_0:\n"
    ) in body
    # scf.condition forwards into the result registers, then leaves when false.
    assert (
        "\tand.pred %p4, %p2, %p3;\n"
        "\tmov.b32 %r12, %r10;\n"
        "\tmov.b32 %r13, %r11;\n"
        "\t@!%p4 bra $L_while_end_3;\n"
    ) in body
    assert "\tmov.b32 %r10, %r18;\n\tmov.b32 %r11, %r19;\n\tbra $L_while_2;\n" in body


def test_atom_instructions_render_their_template(load_case: Callable[[str], ModuleOp]) -> None:
    ptx = ptx_of(load_case("atom"), "sm_80")
    assert (
        "\tmma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f1, %f2, %f3, %f4}, "
        "{%r2, %r2, %r2, %r2}, {%r2, %r2}, {%f0, %f0, %f0, %f0};\n"
    ) in ptx
    assert "\tld.global.b32 %r2, [%rd8];\n" in ptx  # tf32 values: bits in b32 registers


def test_shared_memory_and_cp_async(load_case: Callable[[str], ModuleOp]) -> None:
    ptx = ptx_of(load_case("smem"), "sm_80")
    assert ".extern .shared .align 16 .b8 smem_dynamic_smem[];" in ptx
    assert "\t.shared .align 16 .b8 smem_smem_0[1024];" in ptx
    assert "\tmov.u64 %rd5, smem_smem_0;" in ptx
    assert "\tcp.async.ca.shared.global [%rd10], [%rd9], 16;" in ptx
    assert "\tcp.async.commit_group;\n" in ptx and "\tcp.async.wait_group 0;\n" in ptx
    assert ptx.count("\tbar.sync 0;\n") == 2
    assert "\tld.shared.f32 %f0, [%rd17];" in ptx


UNSUPPORTED = """kernel @k(%a: i8, %b: i8) {
  %c = arith.addi %a, %b : i8
  return
}
"""


def test_an_op_without_instruction_is_one_located_error() -> None:
    module = parse_module(UNSUPPORTED, "bad.mlir")
    verify(module)
    with pytest.raises(CompileError) as err:
        ptx_of(module, "sm_90a")
    assert len(err.value.diagnostics) == 1
    assert str(err.value.location) == "bad.mlir:2:8"  # the op name
    assert err.value.diagnostics[0].message == (
        "cannot emit 'arith.addi' with operand types (i8, i8) and result types (i8) for sm_90a"
    )


def test_f64_maximumf_has_no_instruction() -> None:
    module = parse_module(
        "kernel @k(%a: f64) {\n  %c = arith.maximumf %a, %a : f64\n  return\n}\n", "m.mlir"
    )
    with pytest.raises(CompileError, match=r"cannot emit 'arith.maximumf' .*\(f64\)"):
        ptx_of(module, "sm_80")


def test_cluster_dims_need_sm_90() -> None:
    text = "kernel @k() attributes {cluster_dim = array<i32: 2, 1, 1>} {\n  return\n}\n"
    assert ".reqnctapercluster 2, 1, 1" in ptx_of(parse_module(text, "c.mlir"), "sm_90a")
    with pytest.raises(CompileError, match="'cluster_dim' needs thread-block clusters"):
        ptx_of(parse_module(text, "c.mlir"), "sm_80")


def test_shared_pointer_arguments_are_refused() -> None:
    text = "kernel @k(%p: !gpu.ptr<f32, shared>) {\n  return\n}\n"
    with pytest.raises(CompileError, match=r"kernel argument 0 of type !gpu\.ptr<f32, shared>"):
        ptx_of(parse_module(text, "s.mlir"), "sm_90a")


def test_the_callers_module_is_left_unchanged(load_case: Callable[[str], ModuleOp]) -> None:
    module = load_case("arith")
    legalize(module)
    before = str(module)
    emit_ptx(module, "sm_80")
    assert str(module) == before


def test_ir_not_legalised_is_refused(load_case: Callable[[str], ModuleOp]) -> None:
    """The emitter prints what legalize-ptx left; it never guesses at a floordivsi."""
    with pytest.raises(CompileError, match=r"cannot emit 'arith\.floordivsi'"):
        emit_ptx(load_case("arith"), "sm_80")


def test_parameter_layout_aligns_each_parameter_naturally() -> None:
    from cutec.ir import types as T
    from cutec.ir.dialects.gpu import PointerType
    from cutec.ptx.tables import Param, param_layout
    from cutec.target import AddressSpace

    ptr = PointerType(T.f32, AddressSpace.GLOBAL)
    layout = param_layout((T.i1, ptr, T.i32, T.f16, T.index, T.f32, T.bf16, T.f64))
    assert layout == [
        Param("u8", 1, 0),
        Param("u64", 8, 8),
        Param("s32", 4, 16),
        Param("b16", 2, 20),
        Param("s64", 8, 24),
        Param("f32", 4, 32),
        Param("b16", 2, 36),
        Param("f64", 8, 40),
    ]
    assert param_layout((PointerType(T.f32, AddressSpace.SHARED),)) is None


LOCATED = """kernel @k(%out: !gpu.ptr<f32, global>, %x: f32) {
  %y = arith.mulf %x, %x : f32 loc("kernels/k.cute":12:9)
  %z = arith.addf %y, %x : f32 loc("lib/math.cute":3:5)
  thread.store %z, %out : f32, !gpu.ptr<f32, global> loc("kernels/k.cute":13:3)
  return
}
"""


def test_loc_lines_name_each_source_file_once() -> None:
    ptx = ptx_of(parse_module(LOCATED, "k.mlir"), "sm_90a")
    # The kernel has no source location of its own: it points into the .mlir file.
    files = [line for line in ptx.splitlines() if line.startswith(".file")]
    assert files == ['.file 1 "k.mlir"', '.file 2 "kernels/k.cute"', '.file 3 "lib/math.cute"']
    assert "\t.loc 2 12 9\n\tmul.rn.f32 %f1, %f0, %f0;\n" in ptx
    assert "\t.loc 3 5 5\n" not in ptx and "\t.loc 3 3 5\n\tadd.rn.f32 %f2, %f1, %f0;\n" in ptx
    assert "\t.loc 2 13 3\n\tst.global.f32 [%rd1], %f2;\n" in ptx


def test_ops_of_other_levels_are_located_errors() -> None:
    text = """kernel @k() {
  %s = cute.alloc_smem : !cute.tensor<f32, smem, (4):(1)>
  return
}
func @f() {
  return
}
"""
    module = parse_module(text, "o.mlir")
    verify(module)
    with pytest.raises(CompileError) as err:
        ptx_of(module, "sm_80")
    assert str(err.value.location) == "o.mlir:2:8"
    assert err.value.diagnostics[0].message == (
        "cannot emit 'cute.alloc_smem' with operand types () and result types "
        "(!cute.tensor<f32, smem, (4):(1)>) for sm_80"
    )
    module.body.first_op.erase()
    with pytest.raises(CompileError, match=r"'builtin\.func' .*inlined before emission"):
        ptx_of(module, "sm_80")


@needs_ptxas
def test_a_kernel_without_parameters_assembles() -> None:
    ptx = ptx_of(parse_module("kernel @empty() {\n  return\n}\n", "e.mlir"), "sm_80")
    assert ".visible .entry empty(\n)\n{" in ptx
    result = assemble(ptx, "sm_80")
    assert result.ok, result.stderr
