"""Control flow for the IR builder: for, if, while.

A compile-time condition selects a branch while building (nothing is
emitted for the other one). Run-time control flow becomes scf ops; a scalar
variable (a number or a bool) assigned inside a loop or branch and defined
before it becomes a loop-carried value or an ``scf.if`` result, so the IR
stays in SSA form. A tensor or tiled object may not be rebound there.

``while c { body }`` becomes ``scf.while``: its `before` region evaluates `c`
on the carried values and forwards them with ``scf.condition``; its `after`
region runs the body and yields the next values::

    %n = scf.while (%n_1 = %0) : (index) -> (index) {
      %c = arith.cmpi slt, %n_1, %M : index
      scf.condition(%c) %n_1 : index
    } do {
    ^bb0(%n_2: index):
      ...
      scf.yield %next : index
    }

A condition false at compile time on entry builds no loop; one true at
compile time that the body cannot change is an error (the loop would never end).

Plain functions of the build context `ctx`, dispatched from build_stmts.py; a
region's statements are built through ``ctx.build_block``, the one way back
into build_stmts (which imports this module).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from cutec.frontend import ast
from cutec.frontend import scope as S
from cutec.frontend.build_scalars import as_runtime, static_int
from cutec.frontend.scope import POISON, Poisoned
from cutec.frontend.static_eval import UNROLL_LIMIT, describe, error, is_int
from cutec.ir import types as T
from cutec.ir.attributes import IntegerAttr
from cutec.ir.dialects import cute as C
from cutec.ir.dialects import scf
from cutec.layout.symbolic import is_static
from cutec.target import AddressSpace

if TYPE_CHECKING:
    from cutec.frontend.context import BuildContext
    from cutec.ir.core import Value


def assigned_names(block: ast.Block) -> list[str]:
    """Names assigned anywhere in `block` (nested blocks included), in order."""
    out: list[str] = []

    def visit(stmts: tuple[ast.Stmt, ...]) -> None:
        for s in stmts:
            if isinstance(s, ast.Assign | ast.AugAssign):
                for n in target_names(s.target):
                    if n not in out:
                        out.append(n)
            elif isinstance(s, ast.If):
                visit(s.then.stmts)
                if s.orelse is not None:
                    visit(s.orelse.stmts)
            elif isinstance(s, ast.For | ast.While):
                visit(s.body.stmts)

    visit(block.stmts)
    return out


def target_names(t: ast.Expr) -> Iterator[str]:
    """The names an assignment target binds (a name, or the names of a tuple)."""
    if isinstance(t, ast.Name):
        yield t.id
    elif isinstance(t, ast.Tuple):
        for e in t.elts:
            yield from target_names(e)


def carried_values(
    ctx: BuildContext, blocks: list[ast.Block], node: ast.Node
) -> list[tuple[str, S.Runtime]]:
    """Outer variables the blocks assign: (name, value before the statement).

    Numbers become run-time values carried through the region; any other
    compile-time value is listed too, so that changing it there is an error
    (its value after a run-time loop or branch would not be known).
    """
    out: list[tuple[str, S.Runtime]] = []
    for b in blocks:
        for name in assigned_names(b):
            if any(n == name for n, _ in out):
                continue
            binding = ctx.scope.lookup(name)
            if binding is None or binding.const:
                continue
            v = binding.value
            if isinstance(v, S.Runtime):
                out.append((name, v))
            elif isinstance(v, bool) or is_int(v) or isinstance(v, float):
                # A compile-time number changed at run time becomes a run-time value.
                out.append((name, as_runtime(ctx, v, node)))
            else:
                # Tensors, atoms, tuples, layouts: compile-time objects that cannot
                # change at run time; yield_values checks they are left alone.
                out.append((name, v))  # type: ignore[arg-type]
    return out


def yield_values(ctx: BuildContext, carried: list[tuple[str, Any]], node: ast.Node) -> list[Any]:
    """The carried scalars' values at the end of a region, for its scf.yield; a
    compile-time object rebound in the region is an error."""
    values = []
    for name, before in carried:
        now = ctx.scope.lookup(name)
        v = now.value if now is not None else before
        if v is POISON:
            raise Poisoned()  # its assignment failed and was reported
        if not isinstance(before, S.Runtime):
            same = (
                v is before
                if isinstance(before, S.Tensor | S.TiledCopy | S.TiledMma)
                else (type(v) is type(before) and v == before)
            )
            if not same:
                raise error(
                    f"'{name}' is rebound inside a loop or branch that runs at run "
                    f"time; only scalars may change there ({describe(before)})",
                    node,
                )
            continue
        r = as_runtime(ctx, v, node, before.type)
        values.append(r.value)
    return values


def build_carried_body(
    ctx: BuildContext,
    stmt: ast.For | ast.While,
    scalars: list,
    args: Sequence[Value],
    carried_all: list,
) -> None:
    """Bind the carried scalars to the body's block arguments, build the body and
    end it with scf.yield of their new values (inside a pushed scope)."""
    for (name, _), arg in zip(scalars, args, strict=True):
        arg.name_hint = name
        ctx.scope.bind(name, S.Runtime(arg))
    ctx.build_block(stmt.body, new_scope=True)
    values = yield_values(ctx, carried_all, stmt)
    ctx.ir.insert(_located(scf.YieldOp(values), stmt))


def rebind_results(ctx: BuildContext, scalars: list, results: Sequence[Value]) -> None:
    """After the loop, each carried name means the loop's final value."""
    for (name, _), r in zip(scalars, results, strict=True):
        r.name_hint = name
        ctx.scope.assign(name, S.Runtime(r))


# --------------------------------------------------------------------------- for


def build_for(ctx: BuildContext, stmt: ast.For) -> None:
    start, stop, step = (ctx.eval(e) for e in (stmt.start, stmt.stop, stmt.step))
    if is_static(step) and step <= 0:
        raise error(f"the step of a loop must be positive, got {step}", stmt.step)
    unroll = unroll_factor(ctx, stmt, start, stop, step)
    stages = pipeline_stages(ctx, stmt, unroll)
    if unroll == 0:
        # A full unroll is a compile-time loop (CuTe's CUTE_UNROLL over static
        # bounds): the index is a compile-time integer in each copy of the body.
        for i in range(start, stop, step):
            ctx.scope.push()
            try:
                ctx.scope.bind(stmt.var.id, i, stmt.var.span.location, const=True)
                ctx.build_block(stmt.body, new_scope=True)
            finally:
                ctx.scope.pop()
        return
    carried_all = carried_values(ctx, [stmt.body], stmt)
    scalars = [(n, v) for n, v in carried_all if isinstance(v, S.Runtime)]
    lb, ub, st = (
        as_runtime(ctx, v, e, T.index).value
        for v, e in ((start, stmt.start), (stop, stmt.stop), (step, stmt.step))
    )
    attrs = {"unroll": IntegerAttr(unroll, T.i32)} if unroll is not None else {}
    if stages is not None:
        attrs[scf.PIPELINE_STAGES] = IntegerAttr(stages, T.i32)
    loop = ctx.emit(scf.ForOp(lb, ub, st, [v.value for _, v in scalars], attrs or None), stmt)
    loop.induction_var.name_hint = stmt.var.id
    saved = ctx.ir.point
    ctx.ir = type(ctx.ir).at_end(loop.body)
    ctx.scope.push()
    try:
        ctx.scope.bind(stmt.var.id, S.Runtime(loop.induction_var), stmt.var.span.location)
        build_carried_body(ctx, stmt, scalars, loop.body.args[1:], carried_all)
    finally:
        ctx.scope.pop()
        ctx.ir = type(ctx.ir)(saved)
    rebind_results(ctx, scalars, loop.results)
    if stmt.pipeline is not None and not _copies_async_to_shared(loop):
        raise error(
            "'pipeline' software-pipelines the cp.async copies into shared memory of "
            "its loop, and this loop's body has none",
            stmt.pipeline,
        )


def pipeline_stages(ctx: BuildContext, stmt: ast.For, unroll: int | None) -> int | None:
    """The number of stages of a ``pipeline(stages = N)`` clause: static, at least 2."""
    clause = stmt.pipeline
    if clause is None:
        return None
    if clause.name.id != "stages":
        raise error(
            f"'pipeline' takes one parameter, 'stages', not '{clause.name.id}'", clause.name
        )
    if unroll == 0:
        raise error(
            "a fully unrolled loop runs at compile time and cannot be pipelined; "
            "drop 'unroll' or give a factor",
            clause,
        )
    n = static_int(ctx, clause.stages, "the number of pipeline stages")
    if n < 2:
        raise error(f"a pipeline needs at least 2 stages, got {n}", clause.stages)
    return n


def _copies_async_to_shared(loop: scf.ForOp) -> bool:
    """Whether the loop's body (nested regions included) has a cp.async copy into smem."""
    for op in loop.walk():
        if isinstance(op, C.CopyAsyncOp):
            dst = op.dst.type
            if isinstance(dst, C.TensorType) and dst.space is AddressSpace.SHARED:
                return True
    return False


def unroll_factor(ctx: BuildContext, stmt: ast.For, start: Any, stop: Any, step: Any) -> int | None:
    if stmt.unroll is None:
        return None
    if stmt.unroll.factor is None:
        if not all(is_static(x) for x in (start, stop, step)):
            raise error(
                "a fully unrolled loop needs compile-time bounds; give a factor "
                "(unroll(4)) or drop 'unroll'",
                stmt.unroll,
            )
        trips = max(0, -(-(stop - start) // step))
        if trips > UNROLL_LIMIT:
            raise error(f"unrolling {trips} iterations fully; at most {UNROLL_LIMIT}", stmt.unroll)
        return 0
    f = static_int(ctx, stmt.unroll.factor, "the unroll factor")
    if not 1 <= f <= UNROLL_LIMIT:
        raise error(
            f"the unroll factor must be between 1 and {UNROLL_LIMIT}, got {f}",
            stmt.unroll.factor,
        )
    return f


# --------------------------------------------------------------------------- if


def build_if(ctx: BuildContext, stmt: ast.If) -> None:
    c = condition(ctx, ctx.eval(stmt.cond), stmt.cond, "if")
    if isinstance(c, bool):
        block = stmt.then if c else stmt.orelse
        if block is not None:
            ctx.build_block(block, new_scope=True)
        return
    blocks = [stmt.then] + ([stmt.orelse] if stmt.orelse is not None else [])
    carried = carried_values(ctx, blocks, stmt)
    scalars = [(n, v) for n, v in carried if isinstance(v, S.Runtime)]
    op = ctx.emit(
        scf.IfOp(
            c.value,
            [v.type for _, v in scalars],
            with_else=stmt.orelse is not None or bool(scalars),
        ),
        stmt,
    )
    saved = ctx.ir.point
    try:
        for region_block, body in zip(
            (op.then_block, op.else_block), (stmt.then, stmt.orelse), strict=True
        ):
            if region_block is None:
                continue
            ctx.ir = type(ctx.ir).at_end(region_block)
            ctx.scope.push()
            for name, before in carried:  # assignments in the branch land here
                ctx.scope.bind(name, before)
            try:
                if body is not None:
                    ctx.build_block(body, new_scope=True)
                ctx.ir.insert(_located(scf.YieldOp(yield_values(ctx, carried, stmt)), stmt))
            finally:
                ctx.scope.pop()
    finally:
        ctx.ir = type(ctx.ir)(saved)
    for (name, _), r in zip(scalars, op.results, strict=True):
        r.name_hint = name
        ctx.scope.assign(name, S.Runtime(r))


# --------------------------------------------------------------------------- while


def build_while(ctx: BuildContext, stmt: ast.While) -> None:
    """``while cond { body }`` is ``scf.while``: `before` evaluates the condition on
    the carried values and forwards them, `after` runs the body and yields the new
    ones. A condition false at compile time on entry builds nothing."""
    with ctx.scratch():  # a first look, on the values before the loop
        first = condition(ctx, ctx.eval(stmt.cond), stmt.cond, "while")
    if first is False:
        return
    if first is True:
        names = {n.id for n in ast.walk(stmt.cond) if isinstance(n, ast.Name)}
        if not names & set(assigned_names(stmt.body)):
            raise error(
                "this 'while' condition is true at compile time and the loop does "
                "not change it: the loop would never end",
                stmt.cond,
            )
    carried_all = carried_values(ctx, [stmt.body], stmt)
    scalars = [(n, v) for n, v in carried_all if isinstance(v, S.Runtime)]
    loop = ctx.emit(scf.WhileOp([v.value for _, v in scalars], [v.type for _, v in scalars]), stmt)
    saved = ctx.ir.point
    try:
        ctx.ir = type(ctx.ir).at_end(loop.before)
        ctx.scope.push()
        try:
            for (name, _), arg in zip(scalars, loop.before.args, strict=True):
                arg.name_hint = name
                ctx.scope.bind(name, S.Runtime(arg))
            cond = condition(ctx, ctx.eval(stmt.cond), stmt.cond, "while")
            if isinstance(cond, bool):
                raise error(
                    "this 'while' condition is known at compile time although the loop "
                    "assigns to its names; only scalars (numbers, bools) defined "
                    "before the loop change from one iteration to the next",
                    stmt.cond,
                )
            forwarded = list(loop.before.args)
            ctx.ir.insert(_located(scf.ConditionOp(cond.value, forwarded), stmt))
        finally:
            ctx.scope.pop()
        ctx.ir = type(ctx.ir).at_end(loop.after)
        ctx.scope.push()
        try:
            build_carried_body(ctx, stmt, scalars, loop.after.args, carried_all)
        finally:
            ctx.scope.pop()
    finally:
        ctx.ir = type(ctx.ir)(saved)
    rebind_results(ctx, scalars, loop.results)


def condition(ctx: BuildContext, v: Any, node: ast.Node, what: str) -> bool | S.Runtime:
    """A branch or loop condition: a compile-time bool or a run-time i1."""
    if isinstance(v, bool):
        return v
    if isinstance(v, S.Runtime) and v.type == T.i1:
        return v
    raise error(
        f"the condition of '{what}' must be a bool (a comparison, 'and', 'or', 'not'), "
        f"got {describe(v)}",
        node,
    )


def _located(op: Any, node: ast.Node) -> Any:
    op.location = node.span.location
    return op
