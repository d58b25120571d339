"""IR that parses but breaks an invariant: each case names its diagnostic."""

from __future__ import annotations

import pytest

from cutec.diagnostics import CompileError
from cutec.ir import types as T
from cutec.ir.builder import Builder
from cutec.ir.core import VerifyError
from cutec.ir.dialects import arith, builtin, scf
from cutec.ir.parser import parse_module
from cutec.ir.verifier import verify


def _func(body: str, sig: str = "(%a: i32, %b: f32)") -> str:
    return f"module {{\n  func @f{sig} {{\n{body}\n  }}\n}}\n"


CASES = [
    # (text, line:col of the op, message)
    (
        _func('    %x = "arith.addi"(%a, %b) : (i32, f32) -> i32\n    return'),
        "3:10",
        "'arith.addi' op operands (i32, f32) and result i32 must have one type",
    ),
    (
        _func('    %x = "arith.addf"(%a, %a) : (i32, i32) -> i32\n    return'),
        "3:10",
        "'arith.addf' op operand 'lhs' must be float-like, got i32",
    ),
    (
        _func('    %x = "arith.addi"(%a) : (i32) -> i32\n    return'),
        "3:10",
        "'arith.addi' op expects 2 operands, got 1",
    ),
    (
        _func('    %x = "arith.constant"() {value = 300 : i8} : () -> i8\n    return'),
        "3:10",
        "'arith.constant' op value 300 does not fit in i8",
    ),
    (
        _func('    %x = "arith.constant"() {value = 3 : i32} : () -> i64\n    return'),
        "3:10",
        "'arith.constant' op value of type i32 but result of type i64",
    ),
    (
        _func('    %x = "arith.cmpi"(%a, %a) {predicate = "olt"} : (i32, i32) -> i1\n    return'),
        "3:10",
        "'arith.cmpi' op attribute 'predicate' must be one of eq, ne, slt, sle, sgt, sge, ult, "
        "ule, ugt, uge",
    ),
    (
        _func('    %x = "arith.extsi"(%a) : (i32) -> i16\n    return'),
        "3:10",
        "'arith.extsi' op result i16 must be wider than operand i32",
    ),
    (
        _func('    %x = "arith.bitcast"(%a) : (i32) -> f16\n    return'),
        "3:10",
        "'arith.bitcast' op i32 and f16 differ in width",
    ),
    (
        _func("    %x = arith.addi %a, %a : i32"),
        "2:3",
        "'builtin.func' op region block must end with a terminator",
    ),
    (
        _func("    return\n    %x = arith.addi %a, %a : i32\n    return"),
        "3:5",
        "'builtin.return' op must be the last op of its block",
    ),
    (_func("    return %a : i32"), "3:5", "'builtin.return' op returns (i32) but '@f' returns ()"),
    (
        _func("    scf.yield\n"),
        "3:5",
        "'scf.yield' op must be directly inside 'scf.for' or 'scf.if' or 'scf.while'",
    ),
    (
        _func('    "scf.if"(%a) ({\n      scf.yield\n    }) : (i32) -> ()\n    return'),
        "3:5",
        "'scf.if' op operand 'cond' must be i1, got i32",
    ),
    (
        _func(
            "    %c0 = arith.constant 0 : index\n    %r = scf.for %i = %c0 to %c0 step %c0 "
            "iter_args(%x = %b) -> (f32) {\n      scf.yield\n    }\n    return"
        ),
        "4:10",
        "'scf.for' op body yields (nothing) but (f32) is expected",
    ),
    (
        _func(
            "    %c0 = arith.constant 0 : index\n    scf.for %i = %c0 to %c0 step %c0 {\n"
            "      scf.yield\n    }\n    return"
        ),
        "4:5",
        "'scf.for' op step must be positive, got 0",
    ),
    (
        _func(
            '    %p = arith.constant true\n    %r = "scf.if"(%p) ({\n      scf.yield %a : i32\n'
            "    }) : (i1) -> i32\n    return"
        ),
        "4:10",
        "'scf.if' op with results needs an else region",
    ),
    (
        "module {\n  kernel @k() attributes {reqntid = array<i32: 128, 1>} {\n    return\n  }\n}",
        "2:3",
        "'builtin.kernel' op 'reqntid' must be an array of 3 integers",
    ),
    (
        "module {\n  kernel @k() attributes {maxnreg = 0 : i32} {\n    return\n  }\n}",
        "2:3",
        "'builtin.kernel' op 'maxnreg' must be >= 1, got [0]",
    ),
    (
        "module {\n  kernel @k() attributes {reqntid = array<i32: 1, 1, 1>, maxntid = "
        "array<i32: 1, 1, 1>} {\n    return\n  }\n}",
        "2:3",
        "'builtin.kernel' op 'reqntid' and 'maxntid' are exclusive",
    ),
    (
        "module {\n  func @k() {\n    return\n  }\n  func @k() {\n    return\n  }\n}",
        "5:3",
        "'builtin.func' op redefines symbol '@k'",
    ),
    (
        '"builtin.module"() ({\n  %x = "arith.constant"() {value = 1 : i32} : () -> i32\n'
        '  "builtin.return"(%x) : (i32) -> ()\n}) : () -> ()',
        "3:3",
        "'builtin.return' op must be directly inside 'builtin.func' or 'builtin.kernel'",
    ),
    (
        _func('    %t = "gpu.thread_id"() : () -> index\n    return'),
        "3:10",
        "'gpu.thread_id' op needs attribute 'dim'",
    ),
    (
        _func(
            "    %v = thread.load %p : !gpu.ptr<f32, global> -> f16\n    return",
            "(%p: !gpu.ptr<f32, global>)",
        ),
        "3:10",
        "'thread.load' op accesses f16 through a pointer to f32",
    ),
    (
        _func(
            "    %t = thread.cp_async %p, %p {bytes = 16 : i32} : !gpu.ptr<f32, global>, "
            "!gpu.ptr<f32, global>\n    return",
            "(%p: !gpu.ptr<f32, global>)",
        ),
        "3:10",
        "'thread.cp_async' op copies from a global pointer to a shared pointer",
    ),
    (
        _func(
            "    %t = thread.cp_async %s, %p {bytes = 12 : i32} : !gpu.ptr<f32, shared>, "
            "!gpu.ptr<f32, global>\n    return",
            "(%p: !gpu.ptr<f32, global>, %s: !gpu.ptr<f32, shared>)",
        ),
        "3:10",
        "'thread.cp_async' op attribute 'bytes' must be 4, 8 or 16",
    ),
    (
        _func(
            "    %t = cute.make_tensor %p {align = 12} : !gpu.ptr<f32, global> -> "
            "!cute.tensor<f32, gmem, (8):(1)>\n    return",
            "(%p: !gpu.ptr<f32, global>)",
        ),
        "3:10",
        "'cute.make_tensor' op attribute 'align' must be a power of two",
    ),
    (
        _func(
            "    %t = cute.make_tensor %p {align = 2} : !gpu.ptr<f32, global> -> "
            "!cute.tensor<f32, gmem, (8):(1)>\n    return",
            "(%p: !gpu.ptr<f32, global>)",
        ),
        "3:10",
        "'cute.make_tensor' op align 2 is not a multiple of the 4-byte f32 element",
    ),
    # atomics (cutec/ir/dialects/thread_atomic.py, cute_atomic.py) and the fence
    (
        _func(
            "    %x = thread.atomic_rmw add relaxed gpu %s, %a : !gpu.ptr<i32, shared>, i32\n"
            "    return",
            "(%a: i32, %s: !gpu.ptr<i32, shared>)",
        ),
        "3:10",
        "'thread.atomic_rmw' op is an atomic of global memory, not shared",
    ),
    (
        _func(
            "    %x = thread.atomic_rmw max relaxed gpu %p, %b : !gpu.ptr<f32, global>, f32\n"
            "    return",
            "(%b: f32, %p: !gpu.ptr<f32, global>)",
        ),
        "3:10",
        "'thread.atomic_rmw' op atomic max takes i32, i64, not f32",
    ),
    (
        _func(
            "    %x = thread.atomic_rmw add relaxed gpu %p, %a : !gpu.ptr<f32, global>, i32\n"
            "    return",
            "(%a: i32, %p: !gpu.ptr<f32, global>)",
        ),
        "3:10",
        "'thread.atomic_rmw' op accesses i32 through a pointer to f32",
    ),
    (
        _func(
            '    %x = "thread.atomic_load"(%p) {sem = "release", scope = "gpu"} : '
            "(!gpu.ptr<i32, global>) -> i32\n    return",
            "(%p: !gpu.ptr<i32, global>)",
        ),
        "3:10",
        "'thread.atomic_load' op attribute 'sem' must be one of relaxed, acquire",
    ),
    (
        _func(
            "    thread.atomic_store relaxed gpu %a, %p : i16, !gpu.ptr<i16, global>\n    return",
            "(%a: i16, %p: !gpu.ptr<i16, global>)",
        ),
        "3:5",
        "'thread.atomic_store' op an atomic load or store takes i32, i64, f32, f64, not i16",
    ),
    (
        _func('    "gpu.fence"() {sem = "acquire", scope = "gpu"} : () -> ()\n    return', "()"),
        "3:5",
        "'gpu.fence' op attribute 'sem' must be one of acq_rel, sc",
    ),
    (
        _func(
            "    %t = cute.make_tensor %p : !gpu.ptr<f32, global> -> !cute.tensor<f32, gmem, "
            "(8,4):(1,8)>\n"
            '    %x = cute.atomic_rmw %b, %t, %i, %i, %i {kind = "add", sem = "relaxed", '
            'scope = "gpu"} : f32, !cute.tensor<f32, gmem, (8,4):(1,8)> -> f32\n    return',
            "(%b: f32, %i: index, %p: !gpu.ptr<f32, global>)",
        ),
        "4:10",
        "'cute.atomic_rmw' op names its element by a linear index or 2 coordinates, not 3 indices",
    ),
    (
        _func(
            "    %t = cute.make_tensor %p : !gpu.ptr<f32, global> -> !cute.tensor<f32, gmem, 8:1>\n"
            '    %x = cute.atomic_rmw %b, %t, %i {kind = "min", sem = "relaxed", '
            'scope = "gpu"} : f32, !cute.tensor<f32, gmem, 8:1> -> f32\n    return',
            "(%b: f32, %i: index, %p: !gpu.ptr<f32, global>)",
        ),
        "4:10",
        "'cute.atomic_rmw' op atomic min takes s32, s64 elements, not f32",
    ),
    (
        _func(
            "    %t = cute.alloc_smem : !cute.tensor<i32, smem, 8:1>\n"
            '    %x = cute.atomic_load %t, %i {sem = "acquire", scope = "gpu"} : '
            "!cute.tensor<i32, smem, 8:1> -> i32\n    return",
            "(%i: index)",
        ),
        "4:10",
        "'cute.atomic_load' op is an atomic of a gmem tensor, not of an smem one",
    ),
]


@pytest.mark.parametrize(("text", "where", "message"), CASES, ids=[m for _, _, m in CASES])
def test_verifier_names_op_location_and_problem(text: str, where: str, message: str) -> None:
    module = parse_module(text, "v.mlir")
    with pytest.raises(VerifyError) as info:
        verify(module)
    assert info.value.render().splitlines()[0] == f"v.mlir:{where}: error: {message}"


def test_use_that_is_not_dominated_is_reported() -> None:
    func = builtin.FuncOp("f", [T.i32], [T.i32])
    b = Builder.at_end(func.body)
    a = func.body.args[0]
    first = b.insert(arith.AddIOp(a, a))
    second = b.insert(arith.MulIOp(a, a))
    b.insert(builtin.ReturnOp([first.result]))
    first.set_operand(1, second.result)  # use before definition
    module = builtin.ModuleOp([func])
    with pytest.raises(
        VerifyError,
        match=r"operand #1 \(result #0 of 'arith.muli'\) does not "
        "dominate this use",
    ):
        verify(module)


def test_isolated_function_cannot_use_outer_values() -> None:
    outer = builtin.FuncOp("outer", [T.i32], [])
    inner_loop_user = builtin.FuncOp("inner", [], [T.i32])
    b = Builder.at_end(inner_loop_user.body)
    b.insert(builtin.ReturnOp([outer.body.args[0]]))
    Builder.at_end(outer.body).insert(builtin.ReturnOp())
    module = builtin.ModuleOp([outer, inner_loop_user])
    with pytest.raises(VerifyError, match="does not dominate"):
        verify(module)


def test_value_defined_in_loop_body_is_not_visible_after_it() -> None:
    func = builtin.FuncOp("f", [T.index], [T.index])
    b = Builder.at_end(func.body)
    n = func.body.args[0]
    loop = b.insert(scf.ForOp(n, n, n))
    with b.at_end_of(loop.body):
        inner = b.insert(arith.AddIOp(n, n))
        b.insert(scf.YieldOp())
    b.insert(builtin.ReturnOp([inner.result]))
    with pytest.raises(VerifyError, match="does not dominate"):
        verify(builtin.ModuleOp([func]))


def test_verify_error_is_a_compile_error() -> None:
    assert issubclass(VerifyError, CompileError)
