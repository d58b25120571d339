"""Expressions in the IR builder: names, literals, tuples, layouts, operators.

An expression evaluates to a compile-time Python value or a run-time value
(`scope.Runtime`, `scope.Tensor`, ...; scope.py lists them). Arithmetic on
compile-time values is done here; arithmetic involving a run-time value emits
`arith` ops (build_scalars.py) and keeps the symbolic value alongside, so the
algebra can still use it; on a fragment it is element-wise (build_fragments.py).
Members, indexing and calls are build_calls.py's, ``smem``/``rmem`` allocations
build_tensors.py's.

`EXPRESSIONS` maps each expression of the AST to the function that evaluates
it; ``ctx.eval(node)`` dispatches through it, and is how every feature module
evaluates a sub-expression.

Plain functions of the build context `ctx`.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cutec.diagnostics import CompileError, Note
from cutec.frontend import ast
from cutec.frontend import build_fragments as fragments
from cutec.frontend import scope as S
from cutec.frontend.build_calls import attribute, call, index
from cutec.frontend.build_fragments import is_fragment
from cutec.frontend.build_scalars import as_runtime, runtime_binop
from cutec.frontend.build_tensors import alloc
from cutec.frontend.builtins import REGISTRY as BUILTIN_REGISTRY
from cutec.frontend.builtins import lookup as lookup_builtin
from cutec.frontend.scope import POISON, Poisoned
from cutec.frontend.static_eval import (
    DTYPES,
    algebra_errors,
    checked_layout,
    describe,
    error,
    is_layout,
    lang_type,
    static_binop,
    to_int_tuple,
)
from cutec.ir import types as T
from cutec.ir.dialects import arith
from cutec.layout import Layout, X
from cutec.layout.inttuple import congruent, format_tuple
from cutec.layout.symbolic import SymInt, is_static

if TYPE_CHECKING:
    from cutec.frontend.context import BuildContext


# --------------------------------------------------------------------------- names


def eval_name(ctx: BuildContext, node: ast.Name) -> Any:
    binding = ctx.scope.lookup(node.id)
    if binding is not None:
        if binding.value is POISON:
            raise Poisoned()
        return binding.value
    if node.id in DTYPES:
        return DTYPES[node.id]
    found = lookup_global(ctx, node.id)
    if found is not None:
        return found
    notes = []
    close = similar_names(ctx, node.id)
    if close:
        notes.append(Note(f"did you mean '{close}'?"))
    raise CompileError(f"undefined name '{node.id}'", node.span.location, notes)


def lookup_global(ctx: BuildContext, name: str) -> Any:
    """A top-level name of the file (or of the func's file while inlining it), else a
    builtin's; None if neither."""
    if name in ctx.globals:
        value = ctx.globals[name]
        if value is POISON:
            raise Poisoned()
        return value
    return lookup_builtin(name)


def similar_names(ctx: BuildContext, name: str) -> str | None:
    """A known name close to `name`, for "did you mean" notes."""
    known = [n for frame in ctx.scope.frames for n in frame] + list(ctx.globals)
    known += list(BUILTIN_REGISTRY)
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
    return close[0] if close else None


# --------------------------------------------------------------------------- leaves


def eval_literal(
    ctx: BuildContext, node: ast.IntLit | ast.FloatLit | ast.BoolLit | ast.StrLit
) -> Any:
    return node.value


def eval_underscore(ctx: BuildContext, node: ast.Underscore) -> None:
    return None


def eval_skip(ctx: BuildContext, node: ast.Skip) -> Any:
    return X


def eval_auto(ctx: BuildContext, node: ast.Auto) -> S.AtomRef:
    return S.AtomRef("auto", "auto")


def eval_tuple(ctx: BuildContext, node: ast.Tuple) -> tuple:
    return tuple(ctx.eval(e) for e in node.elts)


def eval_layout(ctx: BuildContext, node: ast.Layout) -> Any:
    shape = int_tuple(ctx, node.shape, "a layout's shape")
    stride = int_tuple(ctx, node.stride, "a layout's stride")
    if not congruent(shape, stride):
        raise error(
            f"shape {format_tuple(shape)} and stride {format_tuple(stride)} are not congruent "
            "(they must have the same nesting)",
            node,
        )
    with algebra_errors(node):
        return checked_layout(Layout(shape, stride), node)


def int_tuple(ctx: BuildContext, node: ast.Expr, what: str) -> Any:
    """An IntTuple (static ints, or symbolic extents of run-time values)."""
    v = ctx.eval(node)
    return to_int_tuple(v, node, what)


# --------------------------------------------------------------------------- operators


def eval_binop(ctx: BuildContext, node: ast.BinOp) -> Any:
    if node.op in ("and", "or"):
        return eval_logical(ctx, node)
    a, b = ctx.eval(node.lhs), ctx.eval(node.rhs)
    if is_fragment(a) or is_fragment(b):
        return fragments.binop(ctx, node.op, a, b, node)
    if isinstance(a, S.Runtime) or isinstance(b, S.Runtime):
        return runtime_binop(ctx, node.op, a, b, node)
    if _number(a) and _number(b):
        return static_binop(node.op, a, b, node)
    structured = (is_layout(a), is_layout(b), isinstance(a, tuple), isinstance(b, tuple))
    if node.op in ("==", "!=") and any(structured):
        # CuTe's == on IntTuples and layouts: the same nesting and the same leaves.
        same = type(a) is type(b) and a == b
        return same if node.op == "==" else not same
    if any(structured):
        raise error(
            f"'{node.op}' does not apply to {describe(a)} and {describe(b)}; "
            "use the layout functions (composition, logical_divide, ...)",
            node,
        )
    raise error(f"'{node.op}' does not apply to {describe(a)} and {describe(b)}", node)


def eval_logical(ctx: BuildContext, node: ast.BinOp) -> Any:
    a = ctx.eval(node.lhs)
    if isinstance(a, bool):
        if (node.op == "and" and not a) or (node.op == "or" and a):
            return a
        b = ctx.eval(node.rhs)
        if isinstance(b, bool):
            return b
        return as_runtime(ctx, b, node.rhs, T.i1)
    b = ctx.eval(node.rhs)
    av = as_runtime(ctx, a, node.lhs, T.i1).value
    bv = as_runtime(ctx, b, node.rhs, T.i1).value
    cls = arith.AndIOp if node.op == "and" else arith.OrIOp
    return S.Runtime(ctx.emit(cls(av, bv), node).result)


def eval_unary(ctx: BuildContext, node: ast.UnaryOp) -> Any:
    v = ctx.eval(node.operand)
    if node.op == "not":
        if isinstance(v, bool):
            return not v
        r = as_runtime(ctx, v, node, T.i1)
        one = ctx.emit(arith.constant(1, T.i1), node).result
        return S.Runtime(ctx.emit(arith.XOrIOp(r.value, one), node).result)
    if node.op == "+":
        return v
    if node.op == "-" and is_fragment(v):
        return fragments.negate(ctx, v, node)
    if isinstance(v, S.Runtime):
        if node.op == "-":
            if isinstance(v.type, T.FloatType):
                return S.Runtime(ctx.emit(arith.NegFOp(v.value), node).result)
            return runtime_binop(ctx, "-", 0, v, node)
        if node.op == "~":
            return runtime_binop(ctx, "^", v, -1, node)
    if _number(v):
        if node.op == "-":
            return -v
        if node.op == "~" and is_static(v):
            return ~v
    raise error(f"'{node.op}' does not apply to {describe(v)}", node)


def eval_ifexp(ctx: BuildContext, node: ast.IfExp) -> Any:
    cond = ctx.eval(node.cond)
    if isinstance(cond, bool):
        return ctx.eval(node.then if cond else node.orelse)
    c = as_runtime(ctx, cond, node.cond, T.i1)
    a, b = ctx.eval(node.then), ctx.eval(node.orelse)
    t = a.type if isinstance(a, S.Runtime) else b.type if isinstance(b, S.Runtime) else None
    av, bv = as_runtime(ctx, a, node.then, t), as_runtime(ctx, b, node.orelse, t)
    if av.type != bv.type:
        raise error(
            f"the branches have different types: {lang_type(av.type)} and {lang_type(bv.type)}",
            node,
        )
    return S.Runtime(ctx.emit(arith.SelectOp(c.value, av.value, bv.value), node).result)


def eval_attribute(ctx: BuildContext, node: ast.Attribute) -> Any:
    return attribute(ctx, ctx.eval(node.value), node)


def eval_index(ctx: BuildContext, node: ast.Index) -> Any:
    return index(ctx, ctx.eval(node.value), node)


def _number(v: Any) -> bool:
    return not isinstance(v, bool) and (is_static(v) or isinstance(v, float | SymInt))


EXPRESSIONS: dict[type, Callable[[BuildContext, Any], Any]] = {
    ast.Name: eval_name,
    ast.IntLit: eval_literal,
    ast.FloatLit: eval_literal,
    ast.BoolLit: eval_literal,
    ast.StrLit: eval_literal,
    ast.Underscore: eval_underscore,
    ast.Skip: eval_skip,
    ast.Auto: eval_auto,
    ast.Tuple: eval_tuple,
    ast.Layout: eval_layout,
    ast.BinOp: eval_binop,
    ast.UnaryOp: eval_unary,
    ast.IfExp: eval_ifexp,
    ast.Attribute: eval_attribute,
    ast.Index: eval_index,
    ast.Call: call,
    ast.Alloc: alloc,
}
