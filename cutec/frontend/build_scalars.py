"""Run-time scalars in the IR builder: constants, arithmetic, kernel extents as values.

A compile-time number becomes an ``arith.constant`` where a run-time value is
needed (`as_runtime`); arithmetic with a run-time operand emits one `arith` op
and keeps the symbolic value alongside when both operands have one, so the
algebra can still use it (``M * 2`` of an extent ``M`` stays the SymInt
``2*M``). The same `runtime_binop` types scalar expressions and each element of
fragment arithmetic (build_fragments.py).

Plain functions of the build context `ctx`: they emit at ``ctx.ir``'s point.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cutec.diagnostics import CompileError
from cutec.frontend import ast
from cutec.frontend import scope as S
from cutec.frontend.static_eval import describe, error, lang_type, require_int, static_binop
from cutec.ir import types as T
from cutec.ir.dialects import arith
from cutec.layout.symbolic import SymInt, is_static

if TYPE_CHECKING:
    from cutec.frontend.context import BuildContext

_INT_OPS = {
    "+": arith.AddIOp,
    "-": arith.SubIOp,
    "*": arith.MulIOp,
    "/": arith.DivSIOp,
    "%": arith.RemSIOp,
    "&": arith.AndIOp,
    "|": arith.OrIOp,
    "^": arith.XOrIOp,
    "<<": arith.ShLIOp,
    ">>": arith.ShRSIOp,
}
_FLOAT_OPS = {"+": arith.AddFOp, "-": arith.SubFOp, "*": arith.MulFOp, "/": arith.DivFOp}
_CMP_INT = {"==": "eq", "!=": "ne", "<": "slt", "<=": "sle", ">": "sgt", ">=": "sge"}
_CMP_FLOAT = {"==": "oeq", "!=": "une", "<": "olt", "<=": "ole", ">": "ogt", ">=": "oge"}


def static_int(ctx: BuildContext, node: ast.Expr, what: str = "this value") -> int:
    """The value of `node`, which must be a compile-time integer."""
    return require_int(ctx.eval(node), node, what)


def as_runtime(ctx: BuildContext, v: Any, node: ast.Node, t: T.Type | None = None) -> S.Runtime:
    """A run-time value of type `t` (default: index for ints, f32 for floats)."""
    if isinstance(v, S.Runtime):
        if t is not None and v.type != t:
            raise error(f"expected a {lang_type(t)} value, got a {lang_type(v.type)} value", node)
        return v
    if isinstance(v, bool):
        c = ctx.emit(arith.constant(int(v), T.i1), node)
        return S.Runtime(c.result)
    if is_static(v):
        t = t or T.index
        if isinstance(t, T.FloatType):
            return S.Runtime(ctx.emit(arith.constant(float(v), t), node).result)
        if not isinstance(t, T.IndexType | T.IntegerType):
            raise error(f"expected a {lang_type(t)} value, got the integer {v}", node)
        return const_index(ctx, v, node, t)
    if isinstance(v, float):
        t = t or T.f32
        if not isinstance(t, T.FloatType):
            raise error(f"expected a {lang_type(t)} value, got the float {v}", node)
        return S.Runtime(ctx.emit(arith.constant(v, t), node).result)
    raise error(f"expected a scalar, got {describe(v)}", node)


def const_index(ctx: BuildContext, v: int, node: ast.Node, t: T.Type = T.index) -> S.Runtime:
    c = ctx.emit(arith.constant(v, t), node)
    return S.Runtime(c.result, v if isinstance(t, T.IndexType) else None)


def runtime_binop(ctx: BuildContext, op: str, a: Any, b: Any, node: ast.Node) -> S.Runtime:
    """``a op b`` where one operand is a run-time value: one `arith` op."""
    t = (a if isinstance(a, S.Runtime) else b).type
    if isinstance(t, T.FloatType):
        av, bv = as_runtime(ctx, a, node, t).value, as_runtime(ctx, b, node, t).value
        if op in _FLOAT_OPS:
            return S.Runtime(ctx.emit(_FLOAT_OPS[op](av, bv), node).result)
        if op in _CMP_FLOAT:
            return S.Runtime(ctx.emit(arith.CmpFOp(_CMP_FLOAT[op], av, bv), node).result)
        raise error(f"'{op}' does not apply to {lang_type(t)}", node)
    if isinstance(a, float) or isinstance(b, float):
        raise error(
            f"'{op}' mixes a float with a run-time {lang_type(t)}; convert one of them", node
        )
    ra, rb = as_runtime(ctx, a, node, t), as_runtime(ctx, b, node, t)
    if op in _CMP_INT:
        return S.Runtime(ctx.emit(arith.CmpIOp(_CMP_INT[op], ra.value, rb.value), node).result)
    if op not in _INT_OPS:
        raise error(f"'{op}' does not apply to {lang_type(t)}", node)
    sym = None
    if ra.sym is not None and rb.sym is not None and op in "+-*/%":
        try:
            sym = static_binop(op, ra.sym, rb.sym, node)
        except (CompileError, ArithmeticError, ValueError):
            sym = None
    return S.Runtime(ctx.emit(_INT_OPS[op](ra.value, rb.value), node).result, sym)


def materialize(ctx: BuildContext, x: Any, node: ast.Node) -> S.Runtime:
    """A run-time value for a static int or a kernel extent / stride (a SymInt)."""
    if isinstance(x, S.Runtime):
        return x
    if isinstance(x, SymInt):
        found = ctx.sym_values.get(x)
        if found is None:
            raise error(
                f"the run-time value {x} is not an extent, stride or int parameter of the kernel",
                node,
            )
        return found
    return as_runtime(ctx, x, node, T.index)


def logical_and(ctx: BuildContext, a: Any, b: Any, node: ast.Node) -> Any:
    """``a and b`` of two conditions, each a compile-time bool or a run-time i1."""
    if isinstance(a, bool):
        return b if a else False
    if isinstance(b, bool):
        return a if b else False
    return S.Runtime(ctx.emit(arith.AndIOp(a.value, b.value), node).result)
