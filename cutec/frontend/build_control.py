"""Control flow for the IR builder: for, if, while, and inlined funcs.

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
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from cutec.frontend import ast
from cutec.frontend import scope as S
from cutec.frontend.build_header import bind_ct_params
from cutec.frontend.build_scalars import as_runtime, static_int
from cutec.frontend.scope import POISON, Poisoned
from cutec.frontend.static_eval import UNROLL_LIMIT, describe, error, is_int
from cutec.ir import types as T
from cutec.ir.attributes import IntegerAttr
from cutec.ir.dialects import scf
from cutec.layout.symbolic import is_static

if TYPE_CHECKING:
    from cutec.frontend.builder import BuildContext
    from cutec.ir.core import Value

    _Base = BuildContext
else:
    _Base = object

MAX_INLINE_DEPTH = 16


def assigned_names(block: ast.Block) -> list[str]:
    """Names assigned anywhere in `block` (nested blocks included), in order."""
    out: list[str] = []

    def visit(stmts: tuple[ast.Stmt, ...]) -> None:
        for s in stmts:
            if isinstance(s, ast.Assign | ast.AugAssign):
                for n in _names(s.target):
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


def _names(t: ast.Expr) -> Iterator[str]:
    if isinstance(t, ast.Name):
        yield t.id
    elif isinstance(t, ast.Tuple):
        for e in t.elts:
            yield from _names(e)


class ControlMixin(_Base):
    """Statements with regions; mixed into the BuildContext."""

    def carried(self, blocks: list[ast.Block], node: ast.Node) -> list[tuple[str, S.Runtime]]:
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
                binding = self.scope.lookup(name)
                if binding is None or binding.const:
                    continue
                v = binding.value
                if isinstance(v, S.Runtime):
                    out.append((name, v))
                elif isinstance(v, bool) or is_int(v) or isinstance(v, float):
                    # A compile-time number changed at run time becomes a run-time value.
                    out.append((name, as_runtime(self, v, node)))
                else:
                    # Tensors, atoms, tuples, layouts: compile-time objects that cannot
                    # change at run time; _yield_values checks they are left alone.
                    out.append((name, v))  # type: ignore[arg-type]
        return out

    def _yield_values(self, carried: list[tuple[str, Any]], node: ast.Node) -> list[Any]:
        values = []
        for name, before in carried:
            now = self.scope.lookup(name)
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
            r = as_runtime(self, v, node, before.type)
            values.append(r.value)
        return values

    def _build_carried_body(
        self, stmt: ast.For | ast.While, scalars: list, args: Sequence[Value], carried_all: list
    ) -> None:
        """Bind the carried scalars to the body's block arguments, build the body and
        end it with scf.yield of their new values (inside a pushed scope)."""
        for (name, _), arg in zip(scalars, args, strict=True):
            arg.name_hint = name
            self.scope.bind(name, S.Runtime(arg))
        self.build_block(stmt.body, new_scope=True)
        values = self._yield_values(carried_all, stmt)
        self.ir.insert(_located(scf.YieldOp(values), stmt))

    def _rebind_results(self, scalars: list, results: Sequence[Value]) -> None:
        """After the loop, each carried name means the loop's final value."""
        for (name, _), r in zip(scalars, results, strict=True):
            r.name_hint = name
            self.scope.assign(name, S.Runtime(r))

    # ------------------------------------------------------------------ for
    def stmt_For(self, stmt: ast.For) -> None:
        start, stop, step = (self.eval(e) for e in (stmt.start, stmt.stop, stmt.step))
        if is_static(step) and step <= 0:
            raise error(f"the step of a loop must be positive, got {step}", stmt.step)
        unroll = self.unroll_factor(stmt, start, stop, step)
        if unroll == 0:
            # A full unroll is a compile-time loop (CuTe's CUTE_UNROLL over static
            # bounds): the index is a compile-time integer in each copy of the body.
            for i in range(start, stop, step):
                self.scope.push()
                try:
                    self.scope.bind(stmt.var.id, i, stmt.var.span.location, const=True)
                    self.build_block(stmt.body, new_scope=True)
                finally:
                    self.scope.pop()
            return
        carried_all = self.carried([stmt.body], stmt)
        scalars = [(n, v) for n, v in carried_all if isinstance(v, S.Runtime)]
        lb, ub, st = (
            as_runtime(self, v, e, T.index).value
            for v, e in ((start, stmt.start), (stop, stmt.stop), (step, stmt.step))
        )
        attrs = {"unroll": IntegerAttr(unroll, T.i32)} if unroll is not None else None
        loop = self.emit(scf.ForOp(lb, ub, st, [v.value for _, v in scalars], attrs), stmt)
        loop.induction_var.name_hint = stmt.var.id
        saved = self.ir.point
        self.ir = type(self.ir).at_end(loop.body)
        self.scope.push()
        try:
            self.scope.bind(stmt.var.id, S.Runtime(loop.induction_var), stmt.var.span.location)
            self._build_carried_body(stmt, scalars, loop.body.args[1:], carried_all)
        finally:
            self.scope.pop()
            self.ir = type(self.ir)(saved)
        self._rebind_results(scalars, loop.results)

    def unroll_factor(self, stmt: ast.For, start: Any, stop: Any, step: Any) -> int | None:
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
                raise error(
                    f"unrolling {trips} iterations fully; at most {UNROLL_LIMIT}", stmt.unroll
                )
            return 0
        f = static_int(self, stmt.unroll.factor, "the unroll factor")
        if not 1 <= f <= UNROLL_LIMIT:
            raise error(
                f"the unroll factor must be between 1 and {UNROLL_LIMIT}, got {f}",
                stmt.unroll.factor,
            )
        return f

    # ------------------------------------------------------------------ if
    def stmt_If(self, stmt: ast.If) -> None:
        c = self.condition(self.eval(stmt.cond), stmt.cond, "if")
        if isinstance(c, bool):
            block = stmt.then if c else stmt.orelse
            if block is not None:
                self.build_block(block, new_scope=True)
            return
        blocks = [stmt.then] + ([stmt.orelse] if stmt.orelse is not None else [])
        carried = self.carried(blocks, stmt)
        scalars = [(n, v) for n, v in carried if isinstance(v, S.Runtime)]
        op = self.emit(
            scf.IfOp(
                c.value,
                [v.type for _, v in scalars],
                with_else=stmt.orelse is not None or bool(scalars),
            ),
            stmt,
        )
        saved = self.ir.point
        try:
            for region_block, body in zip(
                (op.then_block, op.else_block), (stmt.then, stmt.orelse), strict=True
            ):
                if region_block is None:
                    continue
                self.ir = type(self.ir).at_end(region_block)
                self.scope.push()
                for name, before in carried:  # assignments in the branch land here
                    self.scope.bind(name, before)
                try:
                    if body is not None:
                        self.build_block(body, new_scope=True)
                    self.ir.insert(_located(scf.YieldOp(self._yield_values(carried, stmt)), stmt))
                finally:
                    self.scope.pop()
        finally:
            self.ir = type(self.ir)(saved)
        for (name, _), r in zip(scalars, op.results, strict=True):
            r.name_hint = name
            self.scope.assign(name, S.Runtime(r))

    # ------------------------------------------------------------------ while
    def stmt_While(self, stmt: ast.While) -> None:
        """``while cond { body }`` is ``scf.while``: `before` evaluates the condition on
        the carried values and forwards them, `after` runs the body and yields the new
        ones. A condition false at compile time on entry builds nothing."""
        with self.ir.at(self.scratch_point()):  # a first look, on the values before the loop
            first = self.condition(self.eval(stmt.cond), stmt.cond, "while")
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
        carried_all = self.carried([stmt.body], stmt)
        scalars = [(n, v) for n, v in carried_all if isinstance(v, S.Runtime)]
        loop = self.emit(
            scf.WhileOp([v.value for _, v in scalars], [v.type for _, v in scalars]), stmt
        )
        saved = self.ir.point
        try:
            self.ir = type(self.ir).at_end(loop.before)
            self.scope.push()
            try:
                for (name, _), arg in zip(scalars, loop.before.args, strict=True):
                    arg.name_hint = name
                    self.scope.bind(name, S.Runtime(arg))
                cond = self.condition(self.eval(stmt.cond), stmt.cond, "while")
                if isinstance(cond, bool):
                    raise error(
                        "this 'while' condition is known at compile time although the loop "
                        "assigns to its names; only scalars (numbers, bools) defined "
                        "before the loop change from one iteration to the next",
                        stmt.cond,
                    )
                forwarded = list(loop.before.args)
                self.ir.insert(_located(scf.ConditionOp(cond.value, forwarded), stmt))
            finally:
                self.scope.pop()
            self.ir = type(self.ir).at_end(loop.after)
            self.scope.push()
            try:
                self._build_carried_body(stmt, scalars, loop.after.args, carried_all)
            finally:
                self.scope.pop()
        finally:
            self.ir = type(self.ir)(saved)
        self._rebind_results(scalars, loop.results)

    def condition(self, v: Any, node: ast.Node, what: str) -> bool | S.Runtime:
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

    # ------------------------------------------------------------------ funcs
    def inline_call(
        self,
        ref: S.FuncRef,
        node: ast.Call,
        args: list[Any],
        kwargs: dict[str, Any],
        ct: dict[str, Any],
    ) -> Any:
        """A func is inlined: its body is built with the parameters bound to the arguments."""
        f: ast.Func = ref.node
        if self.inline_depth >= MAX_INLINE_DEPTH:
            raise error(
                f"calls nest deeper than {MAX_INLINE_DEPTH} (is '{f.name}' recursive?)", node
            )
        params = list(f.params)
        if len(args) > len(params):
            raise error(f"'{f.name}' takes {len(params)} arguments, got {len(args)}", node)
        bound: dict[str, Any] = {}
        for p, a in zip(params, args, strict=False):
            bound[p.name] = a
        for k, v in kwargs.items():
            if k not in {p.name for p in params}:
                raise error(f"'{f.name}' has no parameter '{k}'", node)
            bound[k] = v
        missing = [p.name for p in params if p.name not in bound]
        if missing:
            raise error(f"'{f.name}' is missing argument(s) {', '.join(missing)}", node)
        saved_frames, saved_ret, saved_globals = self.scope.frames, self.returned, self.globals
        self.scope = S.Scope([dict(self.scope.frames[0]), {}])  # kernel params stay visible
        if ref.globals is not None:
            self.globals = ref.globals  # the names of the file defining the func
        self.inline_depth += 1
        try:
            bind_ct_params(self, f.ct_params, ct, f)
            for name, v in bound.items():
                self.scope.bind(name, v)
            self.returned = None
            for s in f.body.stmts:
                self.build_stmt(s)  # an error inside a func is reported at its statement
                if isinstance(s, ast.Return):
                    break
            return self.returned
        finally:
            self.inline_depth -= 1
            self.scope = S.Scope(saved_frames)
            self.returned = saved_ret
            self.globals = saved_globals


def _located(op: Any, node: ast.Node) -> Any:
    op.location = node.span.location
    return op
