"""Builtins on layouts, integers and scalars: the layout algebra's functions (composition,
the divides and products ...), make_layout, swizzle, size, rank, cosize, shape, stride,
layout, ceil_div, min, max, the element-wise functions' scalar entry points and
static_assert.

Plain functions ``(ctx, args, kwargs, node)`` of the build context `ctx`, registered
in builtins.py.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

from cutec.diagnostics import SOURCES
from cutec.frontend import ast
from cutec.frontend import scope as S
from cutec.frontend.build_fragments import fragment_function, is_fragment
from cutec.frontend.build_scalars import as_runtime
from cutec.frontend.build_tensors import (
    DIVIDES,
    layout_arg,
    tensor_arg,
    tensor_compose,
    tensor_divide,
)
from cutec.frontend.build_tiled import num_threads
from cutec.frontend.static_eval import (
    algebra_errors,
    arity,
    checked_layout,
    describe,
    error,
    is_int,
    is_layout,
    require_int,
    to_int_tuple,
)
from cutec.ir import types as T
from cutec.ir.dialects import arith
from cutec.ir.dialects import cute as C
from cutec.ir.dialects.cute_attrs import TupleAttr
from cutec.layout import (
    Layout,
    LayoutLeft,
    LayoutRight,
    Swizzle,
    cosize,
    make_layout,
    size,
)
from cutec.layout import algebra as LA
from cutec.layout import divide as LD
from cutec.layout.symbolic import SymInt, ceil_div, is_static, smax, smin

if TYPE_CHECKING:
    from cutec.frontend.context import BuildContext

# Layout functions of the algebra callable from a kernel, by CuTe's names.
_ALGEBRA = {
    "composition": LA.composition,
    "complement": LA.complement,
    "coalesce": LA.coalesce,
    "right_inverse": LA.right_inverse,
    "left_inverse": LA.left_inverse,
    "logical_divide": LD.logical_divide,
    "zipped_divide": LD.zipped_divide,
    "tiled_divide": LD.tiled_divide,
    "flat_divide": LD.flat_divide,
    "logical_product": LD.logical_product,
    "zipped_product": LD.zipped_product,
    "tiled_product": LD.tiled_product,
    "blocked_product": LD.blocked_product,
    "raked_product": LD.raked_product,
    "tile_to_shape": LD.tile_to_shape,
}


def algebra_call(
    ctx: BuildContext, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> Any:
    """`name` of the layout algebra on compile-time layouts and tuples; the divides and
    composition of a tensor are views of it (build_tensors.py)."""
    if name in DIVIDES and args and isinstance(args[0], S.Tensor):
        return tensor_divide(ctx, name, args[0], args, kwargs, node)
    if name == "composition" and args and isinstance(args[0], S.Tensor) and not kwargs:
        return tensor_compose(ctx, args[0], args, node)
    if kwargs:
        raise error(f"'{name}' takes no keyword arguments", node)
    fn = _ALGEBRA[name]
    try:
        inspect.signature(fn).bind(*args)
    except TypeError:
        params = inspect.signature(fn).parameters.values()
        lo = sum(1 for p in params if p.default is inspect.Parameter.empty)
        arity(name, args, lo, len(params), node)
    # Only composition takes a bare swizzle first (Sw o layout is a ComposedLayout).
    swizzle_ok = name == "composition" and args and isinstance(args[0], Swizzle)
    if args and not (is_layout(args[0]) or swizzle_ok):
        raise error(
            f"the first argument of '{name}' must be a layout, got {describe(args[0])}",
            node.args[0] if node.args else node,
        )
    conv = [layout_or_tuple(a, n) for a, n in zip(args, node.args, strict=False)]
    with algebra_errors(node, name):
        return checked_layout(_ALGEBRA[name](*conv), node)


def layout_or_tuple(v: Any, node: ast.Node) -> Any:
    if is_layout(v) or isinstance(v, Swizzle):
        return v
    if isinstance(v, tuple) and all(is_layout(x) or x is None for x in v):
        return v
    return to_int_tuple(v, node, "an argument of a layout function")


def b_make_layout(
    ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> Any:
    arity("make_layout", args, 1, 2, node)
    if all(is_layout(a) for a in args):
        with algebra_errors(node):
            return make_layout(*args)
    shape = to_int_tuple(args[0], node.args[0], "a layout's shape")
    with algebra_errors(node, "make_layout"):
        if len(args) == 1:
            return checked_layout(Layout(shape), node)
        stride = args[1]
        if stride not in (LayoutLeft, LayoutRight):
            stride = to_int_tuple(stride, node.args[1], "a layout's stride")
        return checked_layout(make_layout(shape, stride), node)


def b_make_shape(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    return tuple(args)


def b_swizzle(
    ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> Swizzle:
    arity("swizzle", args, 3, 3, node)
    b, m, s = (
        require_int(a, n, "a swizzle parameter") for a, n in zip(args, node.args, strict=True)
    )
    with algebra_errors(node, "swizzle"):
        return Swizzle(b, m, s)


def b_size(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    arity("size", args, 1, 4, node)
    v = args[0]
    modes = [
        require_int(a, n, "a mode index") for a, n in zip(args[1:], node.args[1:], strict=True)
    ]
    if isinstance(v, S.TiledCopy | S.TiledMma):
        return num_threads(v)
    if isinstance(v, S.Tensor):
        layout = v.layout
    elif is_layout(v) or isinstance(v, tuple | int):
        layout = v
    else:
        raise error(f"size() of {describe(v)}", node.args[0])
    with algebra_errors(node, "size"):
        n = size(layout, *modes)
    if is_static(n):
        return n
    if isinstance(v, S.Tensor):
        op = C.SizeOp(
            v.value, TupleAttr(tuple(modes) if len(modes) > 1 else modes[0]) if modes else None
        )
        return S.Runtime(ctx.emit(op, node).result, n)
    raise error(f"size of {describe(v)} is only known at run time", node)


def b_layout(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    """layout(t): a tensor's layout (CuTe's t.layout())."""
    arity("layout", args, 1, 1, node)
    t = tensor_arg(args[0], node.args[0], "layout's argument", coords_ok=True)
    return t.layout


def b_rank(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> int:
    arity("rank", args, 1, 1, node)
    v = args[0]
    layout = v.layout if isinstance(v, S.Tensor) else v
    return layout.rank if is_layout(layout) else len(layout) if isinstance(layout, tuple) else 1


def b_cosize(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    arity("cosize", args, 1, 1, node)
    v = args[0]
    layout = layout_arg(v.layout if isinstance(v, S.Tensor) else v, node.args[0])
    with algebra_errors(node, "cosize"):
        return cosize(layout)


def b_shape(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    arity("shape", args, 1, 1, node)  # a second argument was once ignored: get(x, i) selects
    v = args[0]
    layout = v.layout if isinstance(v, S.Tensor) else layout_arg(v, node)
    return layout.shape


def b_stride(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    arity("stride", args, 1, 1, node)  # a second argument was once ignored: get(x, i) selects
    v = args[0]
    layout = v.layout if isinstance(v, S.Tensor) else layout_arg(v, node)
    return layout.stride


def b_ceil_div(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    arity("ceil_div", args, 2, 2, node)
    a, b = args
    if isinstance(b, int) and not isinstance(b, bool) and b == 0:
        raise error("ceil_div by zero", node)
    if isinstance(a, S.Runtime) or isinstance(b, S.Runtime):
        ra, rb = as_runtime(ctx, a, node, T.index), as_runtime(ctx, b, node, T.index)
        s = ceil_div(ra.sym, rb.sym) if ra.sym is not None and rb.sym is not None else None
        return S.Runtime(ctx.emit(arith.CeilDivSIOp(ra.value, rb.value), node).result, s)
    x = require_int(a, node.args[0])
    y = require_int(b, node.args[1])
    if y == 0:
        raise error("ceil_div by zero", node)
    return -(-x // y)


def b_min(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    return _minmax(ctx, args, node, min)


def b_max(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    return _minmax(ctx, args, node, max)


def b_fma(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    return fragment_function(ctx, "fma", args, node)


def b_abs(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    if len(args) == 1 and isinstance(args[0], int | float) and not isinstance(args[0], bool):
        return abs(args[0])
    return fragment_function(ctx, "abs", args, node)


def b_exp(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    return fragment_function(ctx, "exp", args, node)


def b_exp2(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    return fragment_function(ctx, "exp2", args, node)


def b_log(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    return fragment_function(ctx, "log", args, node)


def b_log2(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    return fragment_function(ctx, "log2", args, node)


def b_sqrt(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    return fragment_function(ctx, "sqrt", args, node)


def b_rsqrt(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    return fragment_function(ctx, "rsqrt", args, node)


def _minmax(ctx: BuildContext, args: list[Any], node: ast.Call, fn: Any) -> Any:
    arity(fn.__name__, args, 2, 2, node)
    if any(is_fragment(v) for v in args):
        return fragment_function(ctx, fn.__name__, args, node)
    a, b = args
    if isinstance(a, S.Runtime) or isinstance(b, S.Runtime):
        t = (a if isinstance(a, S.Runtime) else b).type
        ra, rb = as_runtime(ctx, a, node, t), as_runtime(ctx, b, node, t)
        if isinstance(t, T.FloatType):
            cls = arith.MinimumFOp if fn is min else arith.MaximumFOp
        else:
            cls = arith.MinSIOp if fn is min else arith.MaxSIOp
        # Integers keep their symbolic value where both sides have one (a grid size).
        sa, sb = (v.sym if isinstance(v, S.Runtime) else v for v in (a, b))
        known = not isinstance(t, T.FloatType) and all(
            x is not None and (is_int(x) or isinstance(x, SymInt)) for x in (sa, sb)
        )
        value = ctx.emit(cls(ra.value, rb.value), node).result
        return S.Runtime(value, (smin if fn is min else smax)(sa, sb) if known else None)
    return fn(require_int(a, node.args[0]), require_int(b, node.args[1]))


def b_static_assert(
    ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> None:
    arity("static_assert", args, 1, 2, node)
    cond = args[0]
    if not isinstance(cond, bool):
        raise error(
            f"static_assert needs a compile-time condition, got {describe(cond)}", node.args[0]
        )
    if not cond:
        msg = args[1] if len(args) > 1 and isinstance(args[1], str) else None
        text = _source_of(node.args[0])
        raise error(
            f"static assertion failed: {msg}" if msg else f"static assertion failed: {text}",
            node,
        )


def _source_of(node: ast.Node) -> str:
    sp = node.span
    line = SOURCES.line(sp.file, sp.line)
    if line is None or sp.end_line != sp.line:
        return "the condition is false"
    return line[sp.col - 1 : sp.end_col - 1]
