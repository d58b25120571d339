"""Warp code of structured control flow under lane masks, and of barriers (CTA, named,
cluster).

* ``scf.if``: the then-region runs under ``mask & cond``, the else-region under
  ``mask & !cond``, each only when some lane is live; results merge by a select.
* ``scf.for``: one induction value per lane; an iteration runs the lanes with
  ``iv < ub`` (signed, as the reference's Python ints) while any is live, and a
  lane's carried values stop changing once it leaves.
* ``scf.while``: the before-region runs under the loop's mask; lanes whose
  condition is false leave with the condition's values as results.
* ``gpu.barrier``: all the warp's threads must be live (else a divergent
  barrier); the warp stores its resume state and returns 1 (4 at a named or
  cluster barrier, which `cutec.cpu.warp_barriers` releases). Yields copy values
  in parallel (all loads before any store), as a block's arguments are
  assigned at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cutec.cpu.lanes import ERR_BARRIER, components, scalar_type, splat, vec
from cutec.ir.core import Operation, Value
from cutec.ir.dialects import scf

if TYPE_CHECKING:
    from cutec.cpu.codegen import _Gen

CONTROL_HANDLERS: dict[str, object] = {}


def _parts(v: Value) -> list[tuple[Value, int, str]]:
    elem, n = components(v.type)
    return [(v, i, scalar_type(elem)) for i in range(n)]


def _assign(g: _Gen, targets: list[Value], sources: list[Value], keep: str | None) -> None:
    """targets := sources at once; with `keep` (a mask), only in its lanes."""
    pairs = [(t, s) for t, s in zip(targets, sources, strict=True)]
    loaded = [[g.get(s, i) for s, i, _ in _parts(s)] for _, s in pairs]
    olds = [[g.get(t, i) for t, i, _ in _parts(t)] if keep else [] for t, _ in pairs]
    for (t, _), values, old in zip(pairs, loaded, olds, strict=True):
        for (tv, i, ty), value in zip(_parts(t), values, strict=True):
            if keep is not None:
                value = g.op(f"select {vec('i1')} {keep}, {vec(ty)} {value}, {vec(ty)} {old[i]}")
            g.define(tv, i, value)


def _with_mask(g: _Gen, slot: int, body: object) -> None:
    outer, g.mask = g.mask, slot
    try:
        body()  # type: ignore[operator]
    finally:
        g.mask = outer


def _if(g: _Gen, op: scf.IfOp) -> None:
    for r in op.results:
        g.slots_for(r)
    cond, mask = g.get(op.cond), g.mask_now()
    then_mask = g.op(f"and {vec('i1')} {mask}, {cond}")
    t_slot = g.new_slot("i1")
    g.store_slot(t_slot, "i1", then_mask)
    e_slot = None
    if op.else_block is not None:
        inverse = g.op(f"xor {vec('i1')} {cond}, {splat(1, 'i1')}")
        e_slot = g.new_slot("i1")
        g.store_slot(e_slot, "i1", g.op(f"and {vec('i1')} {mask}, {inverse}"))
    then, other, done = g.fresh("then"), g.fresh("else"), g.fresh("endif")
    g.branch(f"br i1 {g.any_lane(then_mask)}, label %{then}, label %{other}")
    g.label(then)

    def run_then() -> None:
        term = g.block(op.then_block)
        if op.results:
            assert term is not None
            _assign(g, list(op.results), list(term.operands), None)

    _with_mask(g, t_slot, run_then)
    g.branch(f"br label %{other}")
    g.label(other)
    if op.else_block is not None and e_slot is not None:
        body = g.fresh("elsebody")
        g.branch(f"br i1 {g.any_lane(g.load_slot(e_slot, 'i1'))}, label %{body}, label %{done}")
        g.label(body)

        def run_else() -> None:
            term = g.block(op.else_block)  # type: ignore[arg-type]
            if op.results:
                assert term is not None
                _assign(g, list(op.results), list(term.operands), g.mask_now())

        _with_mask(g, e_slot, run_else)
    g.branch(f"br label %{done}")
    g.label(done)


def _for(g: _Gen, op: scf.ForOp) -> None:
    body = op.body
    for arg in body.args:
        g.slots_for(arg)
    iv = body.args[0]
    for r, arg in zip(op.results, body.args[1:], strict=True):
        for i in range(components(arg.type)[1]):
            g.alias(r, i, g.loc(arg, i))
    _assign(g, list(body.args[1:]), list(op.inits), None)
    g.define(iv, 0, g.get(op.lb))
    ty = g.ty(iv)
    loop_slot = g.new_slot("i1")
    outer = g.mask
    head, run, done = g.fresh("for"), g.fresh("body"), g.fresh("endfor")
    g.branch(f"br label %{head}")
    g.label(head)
    more = g.op(f"icmp slt {vec(ty)} {g.get(iv)}, {g.get(op.ub)}")
    live = g.op(f"and {vec('i1')} {g.load_slot(outer, 'i1')}, {more}")
    g.store_slot(loop_slot, "i1", live)
    g.branch(f"br i1 {g.any_lane(live)}, label %{run}, label %{done}")
    g.label(run)

    def run_body() -> None:
        term = g.block(body)
        assert term is not None
        keep = g.mask_now()
        _assign(g, list(body.args[1:]), list(term.operands), keep)
        step = g.op(f"add {vec(ty)} {g.get(iv)}, {g.get(op.step)}")
        g.define(iv, 0, g.op(f"select {vec('i1')} {keep}, {vec(ty)} {step}, {vec(ty)} "
                             f"{g.get(iv)}"))  # fmt: skip

    _with_mask(g, loop_slot, run_body)
    g.branch(f"br label %{head}")
    g.label(done)


def _while(g: _Gen, op: scf.WhileOp) -> None:
    before, after = op.before, op.after
    for v in (*before.args, *after.args, *op.results):
        g.slots_for(v)
    _assign(g, list(before.args), list(op.inits), None)
    loop_slot = g.new_slot("i1")
    g.store_slot(loop_slot, "i1", g.mask_now())
    head, run, done = g.fresh("while"), g.fresh("do"), g.fresh("endwhile")
    g.branch(f"br label %{head}")
    g.label(head)

    def run_loop() -> None:
        term = g.block(before)
        assert isinstance(term, scf.ConditionOp)
        live = g.mask_now()
        cond = g.get(term.cond)
        inverse = g.op(f"xor {vec('i1')} {cond}, {splat(1, 'i1')}")
        leaving = g.op(f"and {vec('i1')} {live}, {inverse}")
        _assign(g, list(op.results), list(term.values), leaving)
        _assign(g, list(after.args), list(term.values), None)
        staying = g.op(f"and {vec('i1')} {live}, {cond}")
        g.store_slot(loop_slot, "i1", staying)
        g.branch(f"br i1 {g.any_lane(staying)}, label %{run}, label %{done}")
        g.label(run)
        term = g.block(after)
        assert term is not None
        _assign(g, list(before.args), list(term.operands), None)
        g.branch(f"br label %{head}")

    _with_mask(g, loop_slot, run_loop)
    g.label(done)


AT_WARP_BARRIER = 4  # the warp's return code at a named or cluster barrier


def _barrier(g: _Gen, op: Operation, code: int = 1) -> None:
    """Every thread of the warp must arrive: the mask equals the warp's first mask. The
    warp returns `code`: 1 at ``gpu.barrier``, `AT_WARP_BARRIER` at a named or cluster
    barrier (the runner's `cutec.cpu.warp_barriers` decides when it goes on)."""
    diverged = g.op(f"icmp ne {vec('i1')} {g.mask_now()}, {g.load_slot(g.full_mask, 'i1')}")
    g.fail_if(diverged, g.op_index(op), ERR_BARRIER)
    g.barriers.append(op)
    state = len(g.barriers)
    g.flush()
    g.emit(f"store i32 {state}, ptr %frame, align 64")
    g.emit(f"ret i32 {code}")
    g.label(f"resume{state}")


def _warp_barrier(g: _Gen, op: Operation) -> None:
    _barrier(g, op, AT_WARP_BARRIER)


CONTROL_HANDLERS.update({
    "scf.if": _if, "scf.for": _for, "scf.while": _while, "gpu.barrier": _barrier,
    "thread.named_barrier_sync": _warp_barrier, "thread.named_barrier_arrive": _warp_barrier,
    "thread.cluster_arrive": _warp_barrier, "thread.cluster_wait": _warp_barrier,
})  # fmt: skip
