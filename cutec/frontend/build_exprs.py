"""Expression evaluation for the IR builder.

An expression evaluates to a compile-time Python value or a run-time value
(`scope.Runtime`, `scope.Tensor`, ...). Arithmetic on compile-time values is
done here; arithmetic involving a run-time value emits `arith` ops and keeps
the symbolic value alongside, so the algebra can still use it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cutec.diagnostics import CompileError, Note
from cutec.frontend import ast
from cutec.frontend import build_fragments as fragments
from cutec.frontend import scope as S
from cutec.frontend.build_calls import attribute, call, index
from cutec.frontend.build_fragments import is_fragment
from cutec.frontend.build_scalars import as_runtime, runtime_binop
from cutec.frontend.build_tensors import alloc
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
    from cutec.frontend.builder import BuildContext

    _Base = BuildContext
else:
    _Base = object


class ExprMixin(_Base):
    """Evaluates expressions; mixed into the BuildContext."""

    # ------------------------------------------------------------------ entry points
    def eval(self, node: ast.Expr) -> Any:
        method = getattr(self, "eval_" + type(node).__name__, None)
        if method is None:
            raise error(f"{type(node).__name__.lower()} expressions are not supported here", node)
        return method(node)

    # ------------------------------------------------------------------ leaves
    def eval_Name(self, node: ast.Name) -> Any:
        binding = self.scope.lookup(node.id)
        if binding is not None:
            if binding.value is POISON:
                raise Poisoned()
            return binding.value
        if node.id in DTYPES:
            return DTYPES[node.id]
        found = self.lookup_global(node.id)
        if found is not None:
            return found
        notes = []
        close = self.similar_names(node.id)
        if close:
            notes.append(Note(f"did you mean '{close}'?"))
        raise CompileError(f"undefined name '{node.id}'", node.span.location, notes)

    def eval_IntLit(self, node: ast.IntLit) -> int:
        return node.value

    def eval_FloatLit(self, node: ast.FloatLit) -> float:
        return node.value

    def eval_BoolLit(self, node: ast.BoolLit) -> bool:
        return node.value

    def eval_StrLit(self, node: ast.StrLit) -> str:
        return node.value

    def eval_Underscore(self, node: ast.Underscore) -> None:
        return None

    def eval_Skip(self, node: ast.Skip) -> Any:
        return X

    def eval_Auto(self, node: ast.Auto) -> S.AtomRef:
        return S.AtomRef("auto", "auto")

    def eval_Tuple(self, node: ast.Tuple) -> tuple:
        return tuple(self.eval(e) for e in node.elts)

    def eval_Layout(self, node: ast.Layout) -> Any:
        shape = self.int_tuple(node.shape, "a layout's shape")
        stride = self.int_tuple(node.stride, "a layout's stride")
        if not congruent(shape, stride):
            raise error(
                f"shape {format_tuple(shape)} and stride {format_tuple(stride)} are not congruent "
                "(they must have the same nesting)",
                node,
            )
        with algebra_errors(node):
            return checked_layout(Layout(shape, stride), node)

    def int_tuple(self, node: ast.Expr, what: str) -> Any:
        """An IntTuple (static ints, or symbolic extents of run-time values)."""
        v = self.eval(node)
        return to_int_tuple(v, node, what)

    # ------------------------------------------------------------------ operators
    def eval_BinOp(self, node: ast.BinOp) -> Any:
        if node.op in ("and", "or"):
            return self._logical(node)
        a, b = self.eval(node.lhs), self.eval(node.rhs)
        if is_fragment(a) or is_fragment(b):
            return fragments.binop(self, node.op, a, b, node)
        if isinstance(a, S.Runtime) or isinstance(b, S.Runtime):
            return runtime_binop(self, node.op, a, b, node)
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

    def _logical(self, node: ast.BinOp) -> Any:
        a = self.eval(node.lhs)
        if isinstance(a, bool):
            if (node.op == "and" and not a) or (node.op == "or" and a):
                return a
            b = self.eval(node.rhs)
            if isinstance(b, bool):
                return b
            return as_runtime(self, b, node.rhs, T.i1)
        b = self.eval(node.rhs)
        av = as_runtime(self, a, node.lhs, T.i1).value
        bv = as_runtime(self, b, node.rhs, T.i1).value
        cls = arith.AndIOp if node.op == "and" else arith.OrIOp
        return S.Runtime(self.emit(cls(av, bv), node).result)

    def eval_UnaryOp(self, node: ast.UnaryOp) -> Any:
        v = self.eval(node.operand)
        if node.op == "not":
            if isinstance(v, bool):
                return not v
            r = as_runtime(self, v, node, T.i1)
            one = self.emit(arith.constant(1, T.i1), node).result
            return S.Runtime(self.emit(arith.XOrIOp(r.value, one), node).result)
        if node.op == "+":
            return v
        if node.op == "-" and is_fragment(v):
            return fragments.negate(self, v, node)
        if isinstance(v, S.Runtime):
            if node.op == "-":
                if isinstance(v.type, T.FloatType):
                    return S.Runtime(self.emit(arith.NegFOp(v.value), node).result)
                return runtime_binop(self, "-", 0, v, node)
            if node.op == "~":
                return runtime_binop(self, "^", v, -1, node)
        if _number(v):
            if node.op == "-":
                return -v
            if node.op == "~" and is_static(v):
                return ~v
        raise error(f"'{node.op}' does not apply to {describe(v)}", node)

    def eval_IfExp(self, node: ast.IfExp) -> Any:
        cond = self.eval(node.cond)
        if isinstance(cond, bool):
            return self.eval(node.then if cond else node.orelse)
        c = as_runtime(self, cond, node.cond, T.i1)
        a, b = self.eval(node.then), self.eval(node.orelse)
        t = a.type if isinstance(a, S.Runtime) else b.type if isinstance(b, S.Runtime) else None
        av, bv = as_runtime(self, a, node.then, t), as_runtime(self, b, node.orelse, t)
        if av.type != bv.type:
            raise error(
                f"the branches have different types: {lang_type(av.type)} and {lang_type(bv.type)}",
                node,
            )
        return S.Runtime(self.emit(arith.SelectOp(c.value, av.value, bv.value), node).result)

    def eval_Attribute(self, node: ast.Attribute) -> Any:
        return attribute(self, self.eval(node.value), node)

    def eval_Index(self, node: ast.Index) -> Any:
        return index(self, self.eval(node.value), node)

    def eval_Call(self, node: ast.Call) -> Any:
        return call(self, node)

    def eval_Alloc(self, node: ast.Alloc) -> Any:
        return alloc(self, node)


def _number(v: Any) -> bool:
    return not isinstance(v, bool) and (is_static(v) or isinstance(v, float | SymInt))
