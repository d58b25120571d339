"""`while` loops: scf.while with the loop's scalars carried, compile-time conditions."""

from __future__ import annotations

from cutec.driver import Options, Source, Stage, compile
from cutec.frontend import compile_source
from cutec.ir.dialects import arith, scf
from cutec.ir.dialects.builtin import KernelOp, ModuleOp
from cutec.ir.parser import parse_module
from cutec.ir.printer import print_op
from cutec.ir.verifier import verify

HEAD = "kernel k[BM: int = 128](A: f32[M] : (1), alpha: f32) threads 32 {\n"


def build(body: str) -> tuple[ModuleOp, KernelOp]:
    module = compile_source(HEAD + body + "}\n", "w.cute")
    k = module.lookup("k")
    assert isinstance(k, KernelOp)
    return module, k


def round_trips(module: ModuleOp) -> str:
    verify(module)
    first = print_op(module)
    again = parse_module(first, "printed")
    verify(again)
    assert print_op(again) == first
    return print_op(module, print_locations=False)


def test_while_carries_the_scalars_it_assigns() -> None:
    body = (
        "  n = 0\n"
        "  acc = alpha\n"
        "  while n < M {\n"
        "    acc = acc * alpha\n"
        "    n += 4\n"
        "  }\n"
        "  r = rmem f32[(4,)]\n"
        "  r[0] = acc\n"
    )
    module, k = build(body)
    text = round_trips(module)
    (loop,) = [op for op in k.walk() if isinstance(op, scf.WhileOp)]
    # carried in the order the body assigns them: acc (f32, from alpha), n (index, from 0)
    assert [str(t) for t in loop.result_types] == ["f32", "index"]
    assert loop.operands[0] is k.body.args[2]  # alpha
    init_n = loop.operands[1].owner
    assert isinstance(init_n, arith.ConstantOp) and init_n.attributes["value"].value == 0
    # before: n < M on the carried n, forwarding every carried value unchanged
    cond = loop.before.terminator
    assert isinstance(cond, scf.ConditionOp)
    assert list(cond.operands[1:]) == list(loop.before.args)
    cmp = cond.operands[0].owner
    assert isinstance(cmp, arith.CmpIOp) and str(cmp.attributes["predicate"]) == '"slt"'
    assert cmp.operands[0] is loop.before.args[1] and cmp.operands[1] is k.body.args[1]
    # after: acc * alpha and n + 4 on the forwarded values, yielded in the same order
    acc_next, n_next = loop.after.terminator.operands
    assert isinstance(acc_next.owner, arith.MulFOp)
    assert acc_next.owner.operands[0] is loop.after.args[0]
    assert isinstance(n_next.owner, arith.AddIOp) and n_next.owner.operands[0] is loop.after.args[1]
    # the store after the loop uses the loop's final acc
    assert "%acc:2 = scf.while (%acc_1 = %alpha, %n = %0) : (f32, index) -> (f32, index) {" in text
    assert "scf.condition(%1) %acc_1, %n : f32, index" in text
    assert "scf.yield %acc_3, %n_2 : f32, index" in text
    assert "cute.store %acc#0, %r" in text


def test_a_bool_flag_is_carried_as_i1() -> None:
    body = (
        "  done = false\n"
        "  i = 0\n"
        "  while not done {\n"
        "    i += 1\n"
        "    done = i >= M\n"
        "  }\n"
        "  r = rmem f32[(4,)]\n"
        "  r[i] = 1.0\n"
    )
    module, k = build(body)
    round_trips(module)
    (loop,) = [op for op in k.walk() if isinstance(op, scf.WhileOp)]
    assert [str(t) for t in loop.result_types] == ["index", "i1"]
    false = loop.operands[1].owner
    assert isinstance(false, arith.ConstantOp) and false.attributes["value"].value == 0
    # not done = done xor true, on the carried flag
    cond = loop.before.terminator.operands[0].owner
    assert isinstance(cond, arith.XOrIOp) and cond.operands[0] is loop.before.args[1]


def test_compile_time_false_condition_builds_no_loop() -> None:
    # the body is never built: its undefined name is not an error, as in 'if false'
    _, k = build("  while BM < 64 { x = nope }\n  sync()\n")
    assert [op.name for op in k.body.ops] == [
        "cute.make_tensor",
        "gpu.barrier",
        "builtin.return",
    ]


def test_while_inside_a_run_time_for_carries_through_both() -> None:
    body = (
        "  n = 0\n"
        "  for j in range(M) {\n"
        "    while n < j { n += 2 }\n"
        "  }\n"
        "  r = rmem f32[(4,)]\n"
        "  r[n] = 1.0\n"
    )
    module, k = build(body)
    text = round_trips(module)
    (outer,) = [op for op in k.walk() if isinstance(op, scf.ForOp)]
    (inner,) = [op for op in k.walk() if isinstance(op, scf.WhileOp)]
    assert inner.parent_op is outer
    assert inner.operands[0] is outer.body.args[1]  # the for's carried n
    assert outer.body.terminator.operands[0] is inner.results[0]
    assert "scf.yield %n_2 : index" in text


def test_the_first_look_at_the_condition_leaves_no_uses_behind() -> None:
    """The builder evaluates a condition once in a block it throws away (is the loop
    needed?); those ops' uses of the kernel's values are dropped, so the lowering can
    erase the tensor the condition reads (it failed: 'cannot erase cute.make_tensor')."""
    body = "  n = 0\n  while A[n] > 0.0 {\n    n += 1\n  }\n  A[n] = 0.0\n"
    _, k = build(body)
    (tensor,) = [op for op in k.walk() if op.name == "cute.make_tensor"]
    users = sorted(use.owner.name for use in tensor.result.uses)
    assert users == ["cute.load", "cute.store"]  # in the loop and after it, none stray
    source = Source(HEAD + body + "}\n", "w.cute")
    lowered = print_op(compile(source, Stage.THREAD, Options()).module)
    assert "thread.load" in lowered and "scf.while" in lowered
