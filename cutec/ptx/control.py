"""Structured control flow → labels and branches.

Values that cross a region boundary live in registers shared by both sides:
a loop's carried values in the registers of its body's arguments (written
before the loop and at the back edge), an ``scf.if``'s results in registers
both branches write. Writing several registers at once from registers that may
be among them (``scf.yield %b, %a``) is a parallel copy (`parallel_move`). A
pair of 16-bit elements crosses packed, in one b32 register (emitter.py,
*packed pairs*), and is unpacked where the region starts if a use there reads
its elements.

``scf.for %i = %lb to %ub step %s``::

        mov %i, %lb;  mov %acc, %init
        setp.ge.s64 %p, %i, %ub;  @%p bra $L_for_end_1;
    $L_for_0:
        <body>;  mov %acc, <yielded>;  add.s64 %i, %i, %s;
        setp.lt.s64 %q, %i, %ub;  @%q bra $L_for_0;
    $L_for_end_1:                       // results: the %acc registers

The test sits at the bottom (a guard before the loop covers a loop that runs
no iteration): ptxas then compares ``%i + %s < %ub`` once, where a loop whose
body computes the same comparison (CuTe's ``k_tile + 1 < K_TILE_MAX``) shares
it; with the test at the top it compared twice (two ISETP pairs per k-tile of
sgemm_2, whose index math is 64-bit).

``scf.if %c`` branches over the then block to the else block (``@!%c bra``);
``scf.while`` runs `before`, moves the values ``scf.condition`` forwards into
the result registers (which the `after` block's arguments are), leaves when the
condition is false, else runs `after` and moves its yield into `before`'s
arguments.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from cutec.ir.core import Operation, Value
from cutec.ir.dialects import scf
from cutec.ir.dialects.gpu import TokenType
from cutec.ptx.regalloc import packs

if TYPE_CHECKING:
    from cutec.ptx.emitter import KernelEmitter
    from cutec.ptx.rules import Rule


def parallel_move(
    ctx: KernelEmitter, op: Operation, dsts: Sequence[Value], srcs: Sequence[Value]
) -> None:
    """``dsts[i] = srcs[i]`` for every i at once (through scratch registers if they overlap).

    A pair of 16-bit elements moves packed, any other vector element by element; a
    token has no register and moves nothing.
    """
    moves = []
    for dst, v in zip(dsts, srcs, strict=True):
        if isinstance(v.type, TokenType):
            continue
        if packs(dst):
            d, s = ctx.packed(dst), ctx.packed(v)
            if d != s:
                moves.append((d, s, "b32"))
            continue
        c = ctx.element_ptype(v, op).reg
        for d, s in zip(ctx.elements(dst), ctx.elements(v), strict=True):
            if d != s:
                moves.append((d, s, c))
    if {s for _, s, _ in moves} & {d for d, _, _ in moves}:
        staged = []
        for d, s, c in moves:
            t = ctx.temp(c)
            ctx.emit(f"mov.{c} {t}, {s};")
            staged.append((d, t, c))
        moves = staged
    for d, s, c in moves:
        ctx.emit(f"mov.{c} {d}, {s};")


def _for(ctx: KernelEmitter, op: Operation) -> None:
    assert isinstance(op, scf.ForOp)
    t = ctx.ptype(op.lb, op)
    if t.s is None:
        raise ctx.error(op, "the induction variable must be an integer or index")
    iv = ctx.define(op.induction_var, op)
    carried = op.body.args[1:]
    for a in carried:
        ctx.define_carried(a, op)
    ctx.emit(f"mov.{t.reg} {iv}, {ctx.reg(op.lb)};")
    parallel_move(ctx, op, carried, op.inits)
    head, end = ctx.label("for"), ctx.label("for_end")
    done = ctx.temp("pred")
    ctx.emit(f"setp.ge.{t.s} {done}, {iv}, {ctx.reg(op.ub)};")
    ctx.emit(f"@{done} bra {end};")
    ctx.place(head)
    for a in carried:
        ctx.complete(a)
    ctx.emit_block(op.body)
    parallel_move(ctx, op, carried, op.body.terminator.operands)
    ctx.emit(f"add.{t.s} {iv}, {iv}, {ctx.reg(op.step)};")
    more = ctx.temp("pred")
    ctx.emit(f"setp.lt.{t.s} {more}, {iv}, {ctx.reg(op.ub)};")
    ctx.emit(f"@{more} bra {head};")
    ctx.place(end)
    for r, a in zip(op.results, carried, strict=True):
        ctx.share(r, a)


def _if(ctx: KernelEmitter, op: Operation) -> None:
    assert isinstance(op, scf.IfOp)
    if ctx.ptype(op.cond, op).reg != "pred":
        raise ctx.error(op, "the condition must be a scalar i1")
    results = op.results
    for r in results:
        ctx.define_carried(r, op)
    else_block = op.else_block
    end = ctx.label("if_end")
    otherwise = ctx.label("else") if else_block is not None else end
    ctx.emit(f"@!{ctx.reg(op.cond)} bra {otherwise};")
    ctx.emit_block(op.then_block)
    parallel_move(ctx, op, results, op.then_block.terminator.operands)
    if else_block is not None:
        ctx.emit(f"bra {end};")
        ctx.place(otherwise)
        ctx.emit_block(else_block)
        parallel_move(ctx, op, results, else_block.terminator.operands)
    ctx.place(end)


def _while(ctx: KernelEmitter, op: Operation) -> None:
    assert isinstance(op, scf.WhileOp)
    carried = op.before.args
    for a in carried:
        ctx.define_carried(a, op)
    parallel_move(ctx, op, carried, op.inits)
    head, end = ctx.label("while"), ctx.label("while_end")
    ctx.place(head)
    for a in carried:
        ctx.complete(a)
    ctx.emit_block(op.before)
    condition = op.before.terminator
    assert isinstance(condition, scf.ConditionOp)
    results = op.results
    for r in results:
        ctx.define_carried(r, op)
    parallel_move(ctx, op, results, condition.values)
    ctx.emit(f"@!{ctx.reg(condition.cond)} bra {end};")
    for a, r in zip(op.after.args, results, strict=True):
        ctx.share(a, r)
        ctx.complete(a)
    ctx.emit_block(op.after)
    parallel_move(ctx, op, carried, op.after.terminator.operands)
    ctx.emit(f"bra {head};")
    ctx.place(end)


CONTROL_RULES: dict[type[Operation], Rule] = {
    scf.ForOp: _for,
    scf.IfOp: _if,
    scf.WhileOp: _while,
}
