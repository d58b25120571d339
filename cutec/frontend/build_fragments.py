"""Arithmetic on register fragments: ``a * rx + ry``, ``fma``, ``min``/``max``/``abs``,
``exp``/``exp2``/``log``/``log2``/``sqrt``/``rsqrt``, and conversions ``f32(x)``, on
scalars and fragments alike.

A fragment operand makes an operator element-wise: each operator becomes one
``cute.map`` into a fresh fragment with the first fragment operand's shape
(compact, column-major), whose body is the scalar operation on one element —
the same `runtime_binop` the scalar expression uses, so scalars and fragments
follow one set of typing rules. Scalars (a compile-time number, a run-time
value such as ``alpha``) apply to every element. Fragments of one expression
must have the same size; their element types must agree (convert explicitly:
``f32(rx) * ry``). CuTe's ``transform(x, y, f)`` is this, one operator at a time.

Functions (`fragment_function`) and conversions (`convert`) work on scalars
and on fragments: ``fma(a, b, c)`` (one rounding), ``min``, ``max`` (NaN
propagating, PTX ``min.NaN``/``max.NaN``), ``abs``, the transcendental functions
(one op of the math dialect each, on floats only), and ``T(x)`` for an element
type T (``f16(x)``, ``f32(x)``, ``i32(x)``: round to nearest even between
floats, toward zero from float to integer, as C's conversions).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from cutec.frontend import ast
from cutec.frontend import scope as S
from cutec.frontend.build_scalars import as_runtime, const_index, runtime_binop
from cutec.frontend.build_tensors import allocate
from cutec.frontend.static_eval import algebra_errors, arity, describe, error, require_int
from cutec.ir import types as T
from cutec.ir.core import Value
from cutec.ir.dialects import arith
from cutec.ir.dialects import cute as C
from cutec.ir.dialects import math as math_ops
from cutec.ir.dialects.cute_map import MapOp, YieldOp
from cutec.layout import make_layout, size
from cutec.target import AddressSpace

if TYPE_CHECKING:
    from cutec.frontend.context import BuildContext


def is_fragment(v: Any) -> bool:
    """A register tensor of data (not a coordinate tensor)."""
    return isinstance(v, S.Tensor) and v.space is AddressSpace.REGISTER and not v.coord_rank


def element_wise(
    ctx: BuildContext,
    operands: Sequence[Any],
    node: ast.Node,
    scalar_op: Callable[[list[Any]], S.Runtime],
    what: str,
) -> S.Tensor:
    """One ``cute.map`` applying `scalar_op` to the elements of the fragment operands
    (and to the scalar ones as they are); returns the new fragment."""
    frags = [v for v in operands if is_fragment(v)]
    first = frags[0]
    n = size(first.layout)
    for f in frags[1:]:
        if size(f.layout) != n:
            raise error(
                f"{what}: fragments of {size(f.layout)} and {n} elements; element-wise "
                "operations take fragments of one size",
                node,
            )
    for v in operands:
        if isinstance(v, S.Tensor) and not is_fragment(v):
            raise error(
                f"{what} computes on register fragments, not {describe(v)}; copy it into "
                "one first (make_fragment_like and copy)",
                node,
            )
    # Scalars the body reads are made outside it, at the map's point, so they stay
    # visible to every element.
    scalars = [v if is_fragment(v) else _scalar_outside(ctx, v, frags, node) for v in operands]
    body_args: dict[int, Value] = {}
    op = MapOp(first.value, [f.value for f in frags])  # out set below
    for i, f in enumerate(frags):
        body_args[id(f)] = op.body.args[i]
    with ctx.ir.at_end_of(op.body):
        elems = [S.Runtime(body_args[id(v)]) if is_fragment(v) else v for v in scalars]
        result = scalar_op(elems)
        op.body.append(YieldOp(result.value))
    with algebra_errors(node):
        layout = make_layout(first.layout.shape)
    out = allocate(ctx, AddressSpace.REGISTER, result.type, layout, node)
    op.set_operands([out.value, *(f.value for f in frags)])
    ctx.emit(op, node)
    return out


def _scalar_outside(ctx: BuildContext, v: Any, frags: list[S.Tensor], node: ast.Node) -> Any:
    """A scalar operand: a compile-time number stays one (the body's operation types it);
    a run-time value is used as it is."""
    if isinstance(v, S.Runtime) or _is_number(v):
        return v
    raise error(f"an element-wise operation on {describe(v)}", node)


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def binop(ctx: BuildContext, op: str, a: Any, b: Any, node: ast.Node) -> S.Tensor:
    """``a op b`` with at least one fragment: element-wise."""
    ta, tb = _element_type(a), _element_type(b)
    if ta is not None and tb is not None and ta != tb:
        # Point at the operand that differs from the left one.
        where = node.rhs if isinstance(node, ast.BinOp) else node
        raise error(
            f"'{op}': this operand holds {tb}, the left one {ta}; convert one of them "
            f"({ta}(x) or {tb}(x))",
            where,
        )
    return element_wise(
        ctx, [a, b], node, lambda e: runtime_binop(ctx, op, e[0], e[1], node), f"'{op}'"
    )


def _element_type(v: Any) -> T.Type | None:
    if is_fragment(v):
        return v.element
    if isinstance(v, S.Runtime):
        return v.type
    return None


def negate(ctx: BuildContext, v: S.Tensor, node: ast.Node) -> S.Tensor:
    def neg(e: list[Any]) -> S.Runtime:
        x = e[0]
        if isinstance(x.type, T.FloatType):
            return S.Runtime(ctx.emit(arith.NegFOp(x.value), node).result)
        return runtime_binop(ctx, "-", 0, x, node)

    return element_wise(ctx, [v], node, neg, "'-'")


# --------------------------------------------------------------------------- functions


def _typed(ctx: BuildContext, values: list[Any], node: ast.Node) -> list[Value]:
    """Scalars of one type: that of the first run-time operand (numbers follow it)."""
    t = next((v.type for v in values if isinstance(v, S.Runtime)), None)
    out = [as_runtime(ctx, v, node, t) for v in values]
    types = {v.type for v in out}
    if len(types) > 1:
        names = ", ".join(sorted(str(x) for x in types))
        raise error(f"operands of different types ({names}); convert one of them", node)
    return [v.value for v in out]


def _fma(ctx: BuildContext, e: list[Any], node: ast.Node) -> S.Runtime:
    a, b, c = _typed(ctx, e, node)
    if not isinstance(a.type, T.FloatType):
        raise error(f"fma computes in floating point, not {a.type}", node)
    return S.Runtime(ctx.emit(arith.FmaOp(a, b, c), node).result)


def _minmax(kind: str) -> Callable[[BuildContext, list[Any], ast.Node], S.Runtime]:
    def rule(ctx: BuildContext, e: list[Any], node: ast.Node) -> S.Runtime:
        a, b = _typed(ctx, e, node)
        if isinstance(a.type, T.FloatType):
            cls = arith.MinimumFOp if kind == "min" else arith.MaximumFOp
        else:
            cls = arith.MinSIOp if kind == "min" else arith.MaxSIOp
        return S.Runtime(ctx.emit(cls(a, b), node).result)

    return rule


def _abs(ctx: BuildContext, e: list[Any], node: ast.Node) -> S.Runtime:
    (a,) = _typed(ctx, e, node)
    if isinstance(a.type, T.FloatType):  # max(a, -a): |a|, and NaN stays NaN
        neg = ctx.emit(arith.NegFOp(a), node).result
        return S.Runtime(ctx.emit(arith.MaximumFOp(a, neg), node).result)
    zero = as_runtime(ctx, 0, node, a.type).value
    neg = ctx.emit(arith.SubIOp(zero, a), node).result
    return S.Runtime(ctx.emit(arith.MaxSIOp(a, neg), node).result)


def _math(
    name: str, cls: type[math_ops.UnaryMathOp]
) -> Callable[[BuildContext, list[Any], ast.Node], S.Runtime]:
    """``exp(x)`` ...: one math op on a float; an integer is an error at the argument."""

    def rule(ctx: BuildContext, e: list[Any], node: ast.Node) -> S.Runtime:
        (a,) = _typed(ctx, e, node)
        if not isinstance(a.type, T.FloatType):
            where = node.args[0] if isinstance(node, ast.Call) and node.args else node
            raise error(
                f"{name}() computes on floats, not {a.type}; convert it first (f32(x))", where
            )
        return S.Runtime(ctx.emit(cls(a), node).result)

    return rule


# The transcendental functions: name → its math op (docs/language.md has their PTX).
MATH_FUNCTIONS: dict[str, type[math_ops.UnaryMathOp]] = {
    "exp": math_ops.ExpOp,
    "exp2": math_ops.Exp2Op,
    "log": math_ops.LogOp,
    "log2": math_ops.Log2Op,
    "sqrt": math_ops.SqrtOp,
    "rsqrt": math_ops.RsqrtOp,
}

FUNCTIONS: dict[str, tuple[int, Callable[[BuildContext, list[Any], ast.Node], S.Runtime]]] = {
    "fma": (3, _fma),
    "min": (2, _minmax("min")),
    "max": (2, _minmax("max")),
    "abs": (1, _abs),
    **{name: (1, _math(name, cls)) for name, cls in MATH_FUNCTIONS.items()},
}


def fragment_function(ctx: BuildContext, name: str, args: list[Any], node: ast.Call) -> Any:
    """``fma(a, b, c)``, ``min(a, b)``, ``max(a, b)``, ``abs(a)``, ``exp(a)`` ... on scalars
    or fragments."""
    count, rule = FUNCTIONS[name]
    arity(name, args, count, count, node)
    if any(is_fragment(v) for v in args):
        return element_wise(ctx, args, node, lambda e: rule(ctx, e, node), f"{name}()")
    for v in args:
        if isinstance(v, S.Tensor):
            raise error(
                f"{name}() computes on scalars and register fragments, not {describe(v)}", node
            )
    if all(_is_number(v) for v in args):
        raise error(f"{name}() of compile-time numbers: write the value", node)
    return rule(ctx, args, node)


# --------------------------------------------------------------------------- conversions


def _convert_scalar(ctx: BuildContext, v: Any, t: T.Type, node: ast.Node) -> S.Runtime:
    if not isinstance(v, S.Runtime):
        return as_runtime(ctx, v, node, t)
    src = v.type
    if src == T.tf32:
        # A tf32 value is an f32 lane that may hold more than tf32's 10 mantissa bits (as
        # loaded from memory; the tensor cores ignore the rest): tf32(x) rounds it, and
        # every other conversion starts from the lane's f32 (f32(x) is the lane itself).
        v = S.Runtime(ctx.emit(arith.BitcastOp(v.value, T.f32), node).result)
        src = T.f32
    if src == t:
        return v
    if isinstance(src, T.IndexType) and isinstance(t, T.FloatType):
        # index has no float conversion of its own: through its 64-bit integer.
        v = S.Runtime(ctx.emit(arith.IndexCastOp(v.value, T.i64), node).result)
        src = T.i64
    cls = _conversion(src, t)
    if cls is None:
        raise error(f"no conversion from {src} to {t}", node)
    return S.Runtime(ctx.emit(cls(v.value, t), node).result)


def _conversion(src: T.Type, dst: T.Type) -> type | None:
    f_src, f_dst = isinstance(src, T.FloatType), isinstance(dst, T.FloatType)
    if f_src and f_dst:
        return arith.ExtFOp if T.bit_width(dst) > T.bit_width(src) else arith.TruncFOp
    if f_dst and isinstance(src, T.IntegerType | T.IndexType):
        return arith.SIToFPOp
    if f_src and isinstance(dst, T.IntegerType):
        return arith.FPToSIOp
    if isinstance(src, T.IndexType) or isinstance(dst, T.IndexType):
        return arith.IndexCastOp
    if isinstance(src, T.IntegerType) and isinstance(dst, T.IntegerType):
        return arith.ExtSIOp if dst.width > src.width else arith.TruncIOp
    return None


def convert(ctx: BuildContext, t: T.Type, args: list[Any], node: ast.Call) -> Any:
    """``T(x)``: a scalar or every element of a fragment, converted to T."""
    arity(str(t), args, 1, 1, node)
    (v,) = args
    if is_fragment(v):
        return element_wise(ctx, [v], node, lambda e: _convert_scalar(ctx, e[0], t, node), f"{t}()")
    if isinstance(v, S.Tensor):
        raise error(f"{t}() converts scalars and register fragments, not {describe(v)}", node)
    return _convert_scalar(ctx, v, t, node)


# --------------------------------------------------------------------------- reductions


def _reducer(kind: str) -> Callable[[BuildContext, Any, Any, ast.Node], S.Runtime]:
    def combine(ctx: BuildContext, a: Any, b: Any, node: ast.Node) -> S.Runtime:
        if kind == "sum":
            return runtime_binop(ctx, "+", a, b, node)
        return _minmax(kind)(ctx, [a, b], node)

    return combine


def reduce(ctx: BuildContext, kind: str, args: list[Any], node: ast.Call) -> Any:
    """reduce_sum / reduce_max / reduce_min(t[, mode]): over every element of a
    register fragment (a scalar), or over one mode (a fragment of the other modes,
    compact). The elements are combined in index order, left to right: a sum
    rounds after each add, as written."""
    name = f"reduce_{kind}"
    arity(name, args, 1, 2, node)
    t = args[0]
    if not is_fragment(t):
        raise error(f"{name} reduces a register fragment, not {describe(t)}", node.args[0])
    combine = _reducer(kind)
    shape = t.layout.shape if isinstance(t.layout.shape, tuple) else (t.layout.shape,)
    extents = [int(size(make_layout(m))) for m in shape]
    # Linear (colexicographic) index of a coordinate of the modes.
    strides = [1]
    for e in extents[:-1]:
        strides.append(strides[-1] * e)

    def element(i: int) -> S.Runtime:
        index = const_index(ctx, i, node).value
        return S.Runtime(ctx.emit(C.LoadOp(t.value, index), node).result)

    def fold(indices: list[int]) -> S.Runtime:
        acc = element(indices[0])
        for i in indices[1:]:
            acc = combine(ctx, acc, element(i), node)
        return acc

    if len(args) == 1:
        return fold(list(range(int(size(t.layout)))))
    mode = require_int(args[1], node.args[1], f"{name}'s mode")
    if not 0 <= mode < len(extents):
        raise error(f"{name}: mode {mode} of a rank-{len(extents)} fragment", node.args[1])
    rest = [m for j, m in enumerate(shape) if j != mode]
    rest_extents = [e for j, e in enumerate(extents) if j != mode]
    rest_strides = [st for j, st in enumerate(strides) if j != mode]
    out_layout = make_layout(tuple(rest) if len(rest) != 1 else rest[0]) if rest else make_layout(1)
    out = None
    count = 1
    for e in rest_extents:
        count *= e
    for j in range(count):
        base, r = 0, j
        for e, st in zip(rest_extents, rest_strides, strict=True):
            base += (r % e) * st
            r //= e
        value = fold([base + k * strides[mode] for k in range(extents[mode])])
        if out is None:
            out = allocate(ctx, AddressSpace.REGISTER, value.type, out_layout, node)
        ctx.emit(C.StoreOp(value.value, out.value, const_index(ctx, j, node).value), node)
    return out
