"""Statements in the IR builder: blocks, assignments, expression statements, return.

A block is built one statement at a time; a user mistake in one is recorded
in ``ctx.errors`` and the next statement is built, so one run reports every
independent error. Names a failed statement would have bound are poisoned
(`scope.POISON`): using them stops quietly instead of cascading into more
messages. Anything else escaping is a bug and is reported as an internal
compiler error at the statement.

`STATEMENTS` maps each statement of the AST to the function that builds it;
the statements with regions (for, if, while) are build_control.py's.

Plain functions of the build context `ctx`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cutec.diagnostics import CompileError, Diagnostic, InternalCompilerError, Note
from cutec.frontend import ast
from cutec.frontend import scope as S
from cutec.frontend.build_control import build_for, build_if, build_while, target_names
from cutec.frontend.build_scalars import as_runtime
from cutec.frontend.build_tensors import element_index
from cutec.frontend.scope import POISON, Poisoned
from cutec.frontend.static_eval import describe, error, loc_of
from cutec.ir.dialects import cute as C

if TYPE_CHECKING:
    from cutec.frontend.context import BuildContext


def build_block(ctx: BuildContext, block: ast.Block, new_scope: bool = True) -> None:
    """Each statement of `block`, in a scope of its own unless `new_scope` is False."""
    if new_scope:
        ctx.scope.push()
    try:
        for stmt in block.stmts:
            build_stmt_safely(ctx, stmt)
    finally:
        if new_scope:
            ctx.scope.pop()


def build_stmt_safely(ctx: BuildContext, stmt: ast.Stmt) -> None:
    """`stmt`, its user mistakes recorded in ``ctx.errors`` (and the names it binds
    poisoned) so that the next statement is built."""
    try:
        build_stmt(ctx, stmt)
    except CompileError as e:
        ctx.errors.extend(e.diagnostics)
        poison(ctx, stmt)
    except Poisoned:
        poison(ctx, stmt)
    except RecursionError:
        ctx.errors.append(Diagnostic("this statement is nested too deeply", loc_of(stmt)))
        poison(ctx, stmt)
    except Exception as e:  # a bug in cutec, not the user's mistake
        raise InternalCompilerError(e, stage="frontend", op=f"statement at {loc_of(stmt)}") from e


def poison(ctx: BuildContext, stmt: ast.Stmt) -> None:
    if isinstance(stmt, ast.Assign):
        for n in target_names(stmt.target):
            ctx.scope.assign(n, POISON)


def build_stmt(ctx: BuildContext, stmt: ast.Stmt) -> None:
    """`stmt`; a user mistake raises CompileError (a func's body is built this way, its
    errors reported at the statement of the func)."""
    build = STATEMENTS.get(type(stmt))
    if build is None:
        raise error(f"{type(stmt).__name__} statements are not supported", stmt)
    build(ctx, stmt)


def build_expr_stmt(ctx: BuildContext, stmt: ast.ExprStmt) -> None:
    ctx.eval(stmt.expr)


def build_assign(ctx: BuildContext, stmt: ast.Assign) -> None:
    value = ctx.eval(stmt.value)
    target = stmt.target
    if isinstance(target, ast.Name):
        assign_name(ctx, target, value, stmt.const, stmt)
    elif isinstance(target, ast.Tuple):
        if not isinstance(value, tuple) or len(value) != len(target.elts):
            n = len(value) if isinstance(value, tuple) else 1
            raise error(f"cannot unpack {n} value(s) into {len(target.elts)} names", stmt)
        for t, v in zip(target.elts, value, strict=True):
            if not isinstance(t, ast.Name):
                raise error("only names can be unpacked into", t)
            assign_name(ctx, t, v, stmt.const, stmt)
    elif isinstance(target, ast.Index):
        store_element(ctx, target, value, stmt)
    else:
        raise error("cannot assign to this expression", target)


def assign_name(
    ctx: BuildContext, target: ast.Name, value: Any, const: bool, stmt: ast.Node
) -> None:
    # 'const' makes the name immutable; a run-time value (a dynamic size) is allowed,
    # as CuTe's `auto const K_TILE_MAX = size<3>(tAgA)` is.
    if const and isinstance(value, S.Tensor):
        raise error(
            f"'const {target.id}' needs a compile-time value or a run-time scalar, not a tensor",
            stmt,
        )
    existing = ctx.scope.lookup(target.id)
    if existing is not None and existing.const:
        raise error(
            f"'{target.id}' is a compile-time constant and cannot be reassigned",
            target,
            [Note("declared here", existing.loc)] if existing.loc else None,
        )
    if (
        existing is not None
        and isinstance(value, S.Runtime)
        and isinstance(existing.value, S.Runtime)
        and existing.value.type != value.type
    ):
        raise error(
            f"'{target.id}' holds a {existing.value.type} value; cannot assign a "
            f"{value.type} value",
            stmt,
        )
    if isinstance(value, S.Tensor | S.Runtime) and value.value.name_hint is None:
        value.value.name_hint = target.id
    if existing is None or const:
        ctx.scope.bind(target.id, value, loc_of(target), const)
    else:
        ctx.scope.assign(target.id, value)


def build_aug_assign(ctx: BuildContext, stmt: ast.AugAssign) -> None:
    as_binop = ast.BinOp(stmt.op, stmt.target, stmt.value, stmt.span)
    build_assign(ctx, ast.Assign(stmt.target, as_binop, False, stmt.span))


def build_return(ctx: BuildContext, stmt: ast.Return) -> None:
    if ctx.inline_depth == 0:
        raise error("'return' is only allowed in a func", stmt)
    ctx.returned = ctx.eval(stmt.value) if stmt.value is not None else None


def store_element(ctx: BuildContext, target: ast.Index, value: Any, stmt: ast.Node) -> None:
    """``t[i] = value``: one element of a data tensor."""
    t = ctx.eval(target.value)
    if not isinstance(t, S.Tensor) or t.coord_rank:
        raise error(f"only elements of data tensors can be assigned, not {describe(t)}", target)
    idx = [ctx.eval(sub) for sub in target.indices]
    i = element_index(ctx, t, idx, target)
    v = as_runtime(ctx, value, stmt, t.element)
    ctx.emit(C.StoreOp(v.value, t.value, i.value), stmt)


STATEMENTS: dict[type, Callable[[BuildContext, Any], None]] = {
    ast.ExprStmt: build_expr_stmt,
    ast.Assign: build_assign,
    ast.AugAssign: build_aug_assign,
    ast.Return: build_return,
    ast.For: build_for,
    ast.If: build_if,
    ast.While: build_while,
}
