"""Declarative op fields and assembly formats (cutec/ir/opdef.py, cutec/ir/opformat.py)."""

from __future__ import annotations

import pytest

from cutec.diagnostics import CompileError
from cutec.ir import types as T
from cutec.ir.attributes import IntegerAttr, StringAttr
from cutec.ir.core import Block, Operation, VerifyError
from cutec.ir.dialect import Registry
from cutec.ir.dialects import arith, builtin, gpu, thread
from cutec.ir.opdef import (
    AnyType,
    OpDefError,
    attr_def,
    operand_def,
    opt_attr_def,
    opt_operand_def,
    result_def,
    var_operand_def,
)
from cutec.ir.opformat import Format
from cutec.ir.parser import Parser
from cutec.ir.printer import Printer
from cutec.ir.traits import AddressSpace
from cutec.ir.verifier import verify

F32 = T.FloatType("f32")
PTR = gpu.PointerType(F32, AddressSpace.GLOBAL)


class MixOp(Operation):
    """A test op: a pointer, optional ints, a trailing index; an attribute."""

    name = "test.mix"
    ptr = operand_def(gpu.PointerType)
    extra = opt_operand_def(T.IntegerType)
    last = operand_def(T.IndexType)
    width = attr_def(IntegerAttr, check=(lambda a: a.value > 0, "must be positive"))
    mode = opt_attr_def(StringAttr, one_of=("a", "b"))
    out = result_def(T.IndexType())
    assembly_format = "$mode $ptr `,` $last (`to` $extra^)? attr-dict `:` type($ptr)"


class PackOp(Operation):
    """A test op: variadic operands between two single ones."""

    name = "test.pack"
    first = operand_def(AnyType)
    middle = var_operand_def(T.IndexType)
    final = operand_def(AnyType)
    assembly_format = "$first `,` $middle `,` $final attr-dict"


def _func(*arg_types: T.Type) -> tuple[builtin.FuncOp, Block]:
    f = builtin.FuncOp("f", list(arg_types), [])
    return f, f.body


def _registry() -> Registry:
    from cutec.ir.dialect import Dialect, registry

    reg = Registry()
    for d in registry().dialects.values():
        reg.add(d)
    reg.add(Dialect("test", ops=(MixOp, PackOp)))
    return reg


def _round_trip(text: str) -> str:
    module = Parser(text, "t.mlir", _registry()).parse_module()
    printer = Printer(print_locations=False)
    printer.print_op(module)
    return printer.stream.getvalue()  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- accessors


def test_accessors_return_values_and_attributes() -> None:
    _, body = _func(PTR, T.IntegerType(32), T.IndexType())
    p, i, x = body.args
    op = MixOp.build(ptr=p, extra=i, last=x, width=IntegerAttr(4, T.IntegerType(32)))
    assert op.ptr is p and op.extra is i and op.last is x
    assert op.width == IntegerAttr(4, T.IntegerType(32))
    assert op.mode is None
    assert op.out is op.results[0] and op.out.type == T.IndexType()
    without = MixOp.build(ptr=p, last=x, width=IntegerAttr(1, T.IntegerType(32)))
    assert without.extra is None and without.last is x


def test_variadic_field_between_single_fields() -> None:
    _, body = _func(F32, T.IndexType(), T.IndexType(), F32)
    a, i, j, b = body.args
    op = PackOp.build(first=a, middle=[i, j], final=b)
    assert op.first is a and op.middle == (i, j) and op.final is b
    empty = PackOp.build(first=a, final=b)
    assert empty.middle == () and empty.final is b


def test_declared_arity_and_generated_accessors_of_converted_ops() -> None:
    _, body = _func(PTR, T.IndexType())
    p, i = body.args
    add = thread.PtrAddOp(p, i)
    assert (add.ptr, add.offset) == (p, i)
    assert thread.PtrAddOp.num_operands == 2 and thread.PtrAddOp.num_results == 1
    assert thread.CpAsyncWaitOp.num_operands is None
    tid = gpu.ThreadIdOp("y")
    assert tid.dim == StringAttr("y")
    assert arith.CmpIOp("slt", i, i).predicate.value == "slt"


def test_build_infers_or_fixes_result_types() -> None:
    _, body = _func(PTR, T.IndexType())
    p, i = body.args
    assert thread.PtrAddOp.build(ptr=p, offset=i).result.type == PTR
    assert arith.ConstantOp.build(value=IntegerAttr(3, T.i32)).result.type == T.i32
    with pytest.raises(TypeError, match="no field named 'nope'"):
        thread.PtrAddOp.build(ptr=p, offset=i, nope=1)


# --------------------------------------------------------------------------- verifier


def test_verifier_names_the_operand_and_its_constraint() -> None:
    f = builtin.FuncOp("f", [T.i32], [])
    (x,) = f.body.args
    load = thread.LoadOp.create(operands=[x], result_types=[F32])
    f.body.append(load)
    f.body.append(builtin.ReturnOp())
    with pytest.raises(
        VerifyError, match=r"'thread.load' op operand 'ptr' must be !gpu.ptr, got i32"
    ):
        verify(builtin.ModuleOp([f]))


@pytest.mark.parametrize(
    ("attrs", "message"),
    [
        ({}, "'test.mix' op needs attribute 'width'"),
        ({"width": StringAttr("w")}, "attribute 'width' must be IntegerAttr, got \"w\""),
        ({"width": IntegerAttr(0, T.i32)}, "attribute 'width' must be positive"),
        (
            {"width": IntegerAttr(1, T.i32), "mode": StringAttr("c")},
            "attribute 'mode' must be one of a, b",
        ),
    ],
)
def test_verifier_checks_attribute_presence_kind_and_value(attrs: dict, message: str) -> None:
    f = builtin.FuncOp("f", [PTR, T.IndexType()], [])
    p, x = f.body.args
    f.body.append(MixOp.create(operands=[p, x], result_types=[T.IndexType()], attributes=attrs))
    f.body.append(builtin.ReturnOp())
    with pytest.raises(VerifyError, match=message):
        verify(builtin.ModuleOp([f]))


def test_verifier_checks_arity_and_fixed_result_type() -> None:
    f = builtin.FuncOp("f", [PTR, T.IndexType()], [])
    p, x = f.body.args
    width = {"width": IntegerAttr(1, T.i32)}
    f.body.append(MixOp.create(operands=[p], result_types=[T.IndexType()], attributes=width))
    f.body.append(builtin.ReturnOp())
    with pytest.raises(VerifyError, match="expects at least 2 operands, got 1"):
        verify(builtin.ModuleOp([f]))
    g = builtin.FuncOp("g", [PTR, T.IndexType()], [])
    p, x = g.body.args
    g.body.append(MixOp.create(operands=[p, x], result_types=[T.i32], attributes=width))
    g.body.append(builtin.ReturnOp())
    with pytest.raises(VerifyError, match="result 'out' must be index, got i32"):
        verify(builtin.ModuleOp([g]))


# --------------------------------------------------------------------------- formats


@pytest.mark.parametrize(
    "line",
    [
        "%r = test.mix %p, %x {width = 4 : i32} : !gpu.ptr<f32, global>",
        "%r = test.mix b %p, %x to %i {width = 4 : i32} : !gpu.ptr<f32, global>",
        "test.pack %a, %x",
        "test.pack %a, %x, %x, %a {k}",
    ],
)
def test_format_round_trips(line: str) -> None:
    text = (
        "func @f(%p: !gpu.ptr<f32, global>, %i: i32, %x: index, %a: f32) {\n"
        f"  {line}\n  return\n}}\n"
    )
    first = _round_trip(text)
    assert _round_trip(first) == first


def test_format_prints_the_declared_form() -> None:
    text = (
        "func @f(%p: !gpu.ptr<f32, global>, %i: i32, %x: index) {\n"
        "  %r = test.mix a %p, %x to %i {width = 4 : i32} : !gpu.ptr<f32, global>\n"
        "  %s = test.mix %p, %x {width = 2 : i32} : !gpu.ptr<f32, global>\n"
        "  return\n}\n"
    )
    out = _round_trip(text)
    assert "%r = test.mix a %p, %x to %i {width = 4 : i32} : !gpu.ptr<f32, global>" in out
    assert "%s = test.mix %p, %x {width = 2 : i32} : !gpu.ptr<f32, global>\n" in out


def test_format_checks_written_operand_types() -> None:
    text = "func @f(%p: !gpu.ptr<f32, global>, %x: index) {\n  thread.load %p : i32 -> f32\n}\n"
    with pytest.raises(CompileError, match=r"operand #0 has type !gpu.ptr<f32, global>, but i32"):
        Parser(text, "t.mlir").parse_module()


# --------------------------------------------------------------------------- declaration errors


@pytest.mark.parametrize(
    ("fmt", "message"),
    [
        ("$a attr-dict `:` type($a)", "no field named 'a'"),
        ("attr-dict", "operand 'x' must appear once, not 0"),
        ("$x $x attr-dict", "operand 'x' must appear once, not 2"),
        ("$x", "needs exactly one attr-dict directive"),
        ("$x attr-dict", "the type of result 'r' is neither written"),
        ("$x attr-dict type($r) )?", "without '"),
        ("$x attr-dict (`:` type($r))?", "optional group without an anchor"),
        ("$x attr-dict `:` $r", "result 'r' is written as type\\(\\$r\\)"),
        ("$x attr-dict `:` type($r) %", "unexpected '%'"),
    ],
)
def test_bad_format_is_caught_at_class_creation(fmt: str, message: str) -> None:
    with pytest.raises(OpDefError, match=message):

        class BadOp(Operation):
            name = "test.bad"
            x = operand_def()
            r = result_def()
            assembly_format = fmt


def test_two_variadic_groups_are_refused() -> None:
    with pytest.raises(OpDefError, match="more than one variadic or optional operand field"):

        class TwoGroupsOp(Operation):
            name = "test.two"
            a = var_operand_def()
            b = opt_operand_def()


def test_bad_constraint_is_refused() -> None:
    with pytest.raises(OpDefError, match="not a type constraint"):

        class BadConstraintOp(Operation):
            name = "test.badc"
            a = operand_def(42)  # type: ignore[arg-type]


def test_compiled_format_is_shared_by_subclasses() -> None:
    assert isinstance(arith.AddIOp.op_def.format, Format)  # type: ignore[union-attr]
    assert arith.AddIOp.op_def.field("lhs").constraint.text == "integer-like"  # type: ignore[union-attr]
    assert arith.AddFOp.op_def.field("lhs").constraint.text == "float-like"  # type: ignore[union-attr]
