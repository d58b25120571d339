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
from cutec.frontend.build_fragments import is_fragment
from cutec.frontend.static_eval import (
    DTYPES,
    algebra_errors,
    c_div,
    c_rem,
    check_layout_size,
    describe,
    error,
    is_int_tuple,
    is_layout,
    lang_type,
)
from cutec.ir import types as T
from cutec.ir.dialects import arith
from cutec.layout import Layout, X
from cutec.layout.inttuple import congruent, format_tuple, leaves
from cutec.layout.symbolic import SymInt, is_static

if TYPE_CHECKING:
    from cutec.frontend.builder import BuildContext

    _Base = BuildContext
else:
    _Base = object


class Poisoned(Exception):
    """A name whose defining statement already failed: stop without a second message."""


POISON = object()

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


def _static_binop(op: str, a: Any, b: Any, node: ast.Node) -> Any:
    """op on two compile-time numbers (ints are C's, SymInts the algebra's)."""
    if op in ("/", "%") and is_static(b) and b == 0:
        raise error(f"division by zero in {a} {op} {b}", node)
    both_int = is_static(a) and is_static(b)
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        if both_int:
            return c_div(a, b)
        if isinstance(a, float) or isinstance(b, float):
            return a / b
        return a // b  # SymInt: extents are non-negative, where C and floor agree
    if op == "%":
        return c_rem(a, b) if both_int else a % b
    if not both_int:
        if op in ("==", "!=", "<", "<=", ">", ">=") and not (
            isinstance(a, SymInt) or isinstance(b, SymInt)
        ):
            return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[
                op
            ]
        raise error(
            f"'{op}' needs compile-time integers, got {describe(a)} and {describe(b)}", node
        )
    if op in ("<<", ">>") and (b < 0 or b > 63):
        raise error(f"shift by {b} is out of range (0..63)", node)
    ops = {
        "&": lambda: a & b,
        "|": lambda: a | b,
        "^": lambda: a ^ b,
        "<<": lambda: a << b,
        ">>": lambda: a >> b,
        "==": lambda: a == b,
        "!=": lambda: a != b,
        "<": lambda: a < b,
        "<=": lambda: a <= b,
        ">": lambda: a > b,
        ">=": lambda: a >= b,
    }
    return ops[op]()


class ExprMixin(_Base):
    """Evaluates expressions; mixed into the BuildContext."""

    # ------------------------------------------------------------------ entry points
    def eval(self, node: ast.Expr) -> Any:
        method = getattr(self, "eval_" + type(node).__name__, None)
        if method is None:
            raise error(f"{type(node).__name__.lower()} expressions are not supported here", node)
        return method(node)

    def static_int(self, node: ast.Expr, what: str = "this value") -> int:
        v = self.eval(node)
        return self.require_int(v, node, what)

    def require_int(self, v: Any, node: ast.Node, what: str = "this value") -> int:
        if isinstance(v, bool) or not is_static(v):
            if isinstance(v, S.Runtime | SymInt):
                raise error(
                    f"{what} must be known at compile time, but it is a run-time value", node
                )
            raise error(f"{what} must be a compile-time integer, got {describe(v)}", node)
        return v

    def as_runtime(self, v: Any, node: ast.Node, t: T.Type | None = None) -> S.Runtime:
        """A run-time value of type `t` (default: index for ints, f32 for floats)."""
        if isinstance(v, S.Runtime):
            if t is not None and v.type != t:
                raise error(
                    f"expected a {lang_type(t)} value, got a {lang_type(v.type)} value", node
                )
            return v
        if isinstance(v, bool):
            c = self.emit(arith.constant(int(v), T.i1), node)
            return S.Runtime(c.result)
        if is_static(v):
            t = t or T.index
            if isinstance(t, T.FloatType):
                return S.Runtime(self.emit(arith.constant(float(v), t), node).result)
            if not isinstance(t, T.IndexType | T.IntegerType):
                raise error(f"expected a {lang_type(t)} value, got the integer {v}", node)
            return self.const_index(v, node, t)
        if isinstance(v, float):
            t = t or T.f32
            if not isinstance(t, T.FloatType):
                raise error(f"expected a {lang_type(t)} value, got the float {v}", node)
            return S.Runtime(self.emit(arith.constant(v, t), node).result)
        raise error(f"expected a scalar, got {describe(v)}", node)

    def const_index(self, v: int, node: ast.Node, t: T.Type = T.index) -> S.Runtime:
        c = self.emit(arith.constant(v, t), node)
        return S.Runtime(c.result, v if isinstance(t, T.IndexType) else None)

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
            return self.checked_layout(Layout(shape, stride), node)

    def int_tuple(self, node: ast.Expr, what: str) -> Any:
        """An IntTuple (static ints, or symbolic extents of run-time values)."""
        v = self.eval(node)
        return self.to_int_tuple(v, node, what)

    def to_int_tuple(self, v: Any, node: ast.Node, what: str) -> Any:
        if isinstance(v, tuple):
            elts = node.elts if isinstance(node, ast.Tuple) else [node] * len(v)
            return tuple(self.to_int_tuple(x, n, what) for x, n in zip(v, elts, strict=True))
        if isinstance(v, S.Runtime) and v.sym is not None:
            return v.sym
        if isinstance(v, bool) or not (is_static(v) or isinstance(v, SymInt)):
            if isinstance(v, S.Runtime):
                raise error(
                    f"{what} must be an integer known to the compiler; this run-time "
                    "value has no symbolic form (only tensor extents and strides do)",
                    node,
                )
            raise error(f"{what} must be integers, got {describe(v)}", node)
        if is_static(v) and v < 0:
            raise error(f"{what} must not be negative, got {v}", node)
        return v

    # ------------------------------------------------------------------ operators
    def eval_BinOp(self, node: ast.BinOp) -> Any:
        if node.op in ("and", "or"):
            return self._logical(node)
        a, b = self.eval(node.lhs), self.eval(node.rhs)
        if is_fragment(a) or is_fragment(b):
            return fragments.binop(self, node.op, a, b, node)
        if isinstance(a, S.Runtime) or isinstance(b, S.Runtime):
            return self.runtime_binop(node.op, a, b, node)
        if _number(a) and _number(b):
            return _static_binop(node.op, a, b, node)
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
            return self.as_runtime(b, node.rhs, T.i1)
        b = self.eval(node.rhs)
        av = self.as_runtime(a, node.lhs, T.i1).value
        bv = self.as_runtime(b, node.rhs, T.i1).value
        cls = arith.AndIOp if node.op == "and" else arith.OrIOp
        return S.Runtime(self.emit(cls(av, bv), node).result)

    def runtime_binop(self, op: str, a: Any, b: Any, node: ast.Node) -> S.Runtime:
        t = (a if isinstance(a, S.Runtime) else b).type
        if isinstance(t, T.FloatType):
            av, bv = self.as_runtime(a, node, t).value, self.as_runtime(b, node, t).value
            if op in _FLOAT_OPS:
                return S.Runtime(self.emit(_FLOAT_OPS[op](av, bv), node).result)
            if op in _CMP_FLOAT:
                return S.Runtime(self.emit(arith.CmpFOp(_CMP_FLOAT[op], av, bv), node).result)
            raise error(f"'{op}' does not apply to {lang_type(t)}", node)
        if isinstance(a, float) or isinstance(b, float):
            raise error(
                f"'{op}' mixes a float with a run-time {lang_type(t)}; convert one of them", node
            )
        ra, rb = self.as_runtime(a, node, t), self.as_runtime(b, node, t)
        if op in _CMP_INT:
            return S.Runtime(self.emit(arith.CmpIOp(_CMP_INT[op], ra.value, rb.value), node).result)
        if op not in _INT_OPS:
            raise error(f"'{op}' does not apply to {lang_type(t)}", node)
        sym = None
        if ra.sym is not None and rb.sym is not None and op in "+-*/%":
            try:
                sym = _static_binop(op, ra.sym, rb.sym, node)
            except (CompileError, ArithmeticError, ValueError):
                sym = None
        return S.Runtime(self.emit(_INT_OPS[op](ra.value, rb.value), node).result, sym)

    def eval_UnaryOp(self, node: ast.UnaryOp) -> Any:
        v = self.eval(node.operand)
        if node.op == "not":
            if isinstance(v, bool):
                return not v
            r = self.as_runtime(v, node, T.i1)
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
                return self.runtime_binop("-", 0, v, node)
            if node.op == "~":
                return self.runtime_binop("^", v, -1, node)
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
        c = self.as_runtime(cond, node.cond, T.i1)
        a, b = self.eval(node.then), self.eval(node.orelse)
        t = a.type if isinstance(a, S.Runtime) else b.type if isinstance(b, S.Runtime) else None
        av, bv = self.as_runtime(a, node.then, t), self.as_runtime(b, node.orelse, t)
        if av.type != bv.type:
            raise error(
                f"the branches have different types: {lang_type(av.type)} and {lang_type(bv.type)}",
                node,
            )
        return S.Runtime(self.emit(arith.SelectOp(c.value, av.value, bv.value), node).result)

    def eval_Attribute(self, node: ast.Attribute) -> Any:
        return self.attribute(self.eval(node.value), node)

    def eval_Index(self, node: ast.Index) -> Any:
        return self.index(self.eval(node.value), node)

    def eval_Call(self, node: ast.Call) -> Any:
        return self.call(node)

    def eval_Alloc(self, node: ast.Alloc) -> Any:
        return self.alloc(node)

    def checked_layout(self, layout: Any, node: ast.Node) -> Any:
        check_layout_size(layout, node)
        return layout


def _number(v: Any) -> bool:
    return not isinstance(v, bool) and (is_static(v) or isinstance(v, float | SymInt))


def is_static_tuple(v: Any) -> bool:
    return is_int_tuple(v) and all(is_static(x) for x in leaves(v))
