"""Builtins on IntTuples and layouts that CuTe writes with template arguments
(``get<i>``, ``select<i,j>``, ``take<b,e>``) or as free functions (``append``,
``product``, ``depth``, ``flatten``, ``filter``, ``upcast``, ``round_up``), and the
launch-geometry builtins (``block_dim.x``, ``warp_idx()`` ...).

Each is a plain function ``(ctx, args, kwargs, node) -> value`` over the build
context. A layout argument is worked on with the layout algebra's function, a
tuple (or an int) with the IntTuple one: both are CuTe's overloads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cutec.frontend import ast
from cutec.frontend import scope as S
from cutec.frontend.build_scalars import runtime_binop
from cutec.frontend.static_eval import (
    algebra_errors,
    arity,
    describe,
    error,
    is_layout,
    require_int,
    to_int_tuple,
)
from cutec.ir.dialects import gpu
from cutec.layout import ComposedLayout, Layout
from cutec.layout import algebra as LA
from cutec.layout import inttuple as IT
from cutec.layout import layout as LL
from cutec.layout.symbolic import is_static

if TYPE_CHECKING:
    from cutec.frontend.context import BuildContext

Build = Any  # (ctx, args, kwargs, node) -> value


def _no_kwargs(name: str, kwargs: dict[str, Any], node: ast.Call) -> None:
    if kwargs:
        raise error(f"'{name}' takes no keyword arguments", node)


def _tuple_or_layout(ctx: BuildContext, v: Any, node: ast.Node, name: str) -> Any:
    if is_layout(v):
        if isinstance(v, ComposedLayout):
            raise error(f"'{name}' of a swizzled layout: apply it to the layout inside", node)
        return v
    return to_int_tuple(v, node, f"{name}'s argument")


def _indices(ctx: BuildContext, args: list[Any], nodes: list[ast.Expr], name: str) -> list[int]:
    return [require_int(a, n, f"{name}'s mode index") for a, n in zip(args, nodes, strict=True)]


def _modes(name: str, layout_fn: Any, tuple_fn: Any, at_least: int) -> Build:
    """get / select / take: a layout or tuple, then mode indices."""

    def build(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        _no_kwargs(name, kwargs, node)
        arity(name, args, at_least, None, node)
        x = _tuple_or_layout(ctx, args[0], node.args[0], name)
        idx = _indices(ctx, args[1:], list(node.args[1:]), name)
        fn = layout_fn if isinstance(x, Layout) else tuple_fn
        with algebra_errors(node, name):
            try:
                return fn(x, *idx)
            except (IndexError, TypeError) as e:
                raise error(f"{name}: no such mode in {describe(args[0])} ({e})", node) from None

    return build


def _adjoin(name: str, layout_fn: Any, tuple_fn: Any) -> Build:
    """append / prepend: a layout or tuple and the element to add."""

    def build(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        _no_kwargs(name, kwargs, node)
        arity(name, args, 2, 2, node)
        x = _tuple_or_layout(ctx, args[0], node.args[0], name)
        y = _tuple_or_layout(ctx, args[1], node.args[1], name)
        with algebra_errors(node, name):
            if isinstance(x, Layout):
                if not isinstance(y, Layout):
                    raise error(f"{name} to a layout takes a layout, got {describe(args[1])}", node)
                return layout_fn(x, y)
            if isinstance(y, Layout):
                raise error(f"{name} to a tuple takes a tuple or an int, not a layout", node)
            return tuple_fn(x, y)

    return build


def b_product(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    """product(t): the product of a tuple's leaves (CuTe's product; a layout's size)."""
    _no_kwargs("product", kwargs, node)
    arity("product", args, 1, 1, node)
    x = _tuple_or_layout(ctx, args[0], node.args[0], "product")
    return IT.product(x.shape if isinstance(x, Layout) else x)


def b_depth(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> int:
    """depth(x): the nesting depth of a tuple or of a layout's shape (an int: 0)."""
    _no_kwargs("depth", kwargs, node)
    arity("depth", args, 1, 1, node)
    x = _tuple_or_layout(ctx, args[0], node.args[0], "depth")
    return IT.depth(x.shape if isinstance(x, Layout) else x)


def b_flatten(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    """flatten(x): a tuple's leaves, or a layout with one mode per leaf."""
    _no_kwargs("flatten", kwargs, node)
    arity("flatten", args, 1, 1, node)
    x = _tuple_or_layout(ctx, args[0], node.args[0], "flatten")
    return LL.flatten(x) if isinstance(x, Layout) else IT.flatten(x)


def b_filter(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    """filter(layout): without its stride-0 and size-1 modes, coalesced (CuTe's filter)."""
    _no_kwargs("filter", kwargs, node)
    arity("filter", args, 1, 1, node)
    x = _tuple_or_layout(ctx, args[0], node.args[0], "filter")
    if not isinstance(x, Layout):
        raise error(f"filter takes a layout, got {describe(args[0])}", node.args[0])
    with algebra_errors(node, "filter"):
        return LA.filter(x)


def _cast(name: str, fn: Any) -> Build:
    """upcast / downcast(layout, n): the layout of n-element units, or of 1/n of one."""

    def build(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        _no_kwargs(name, kwargs, node)
        arity(name, args, 2, 2, node)
        if not is_layout(args[0]):
            raise error(f"{name} takes a layout, got {describe(args[0])}", node.args[0])
        n = require_int(args[1], node.args[1], f"{name}'s factor")
        if n < 1:
            raise error(f"{name}'s factor must be positive, got {n}", node.args[1])
        with algebra_errors(node, name):
            return fn(args[0], n)

    return build


def b_round_up(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    """round_up(a, b): the least multiple of b at least a (compile-time or extents)."""
    _no_kwargs("round_up", kwargs, node)
    arity("round_up", args, 2, 2, node)
    a = to_int_tuple(args[0], node.args[0], "round_up's value")
    b = to_int_tuple(args[1], node.args[1], "round_up's multiple")
    if isinstance(a, tuple) or isinstance(b, tuple):
        raise error("round_up takes two integers", node)
    if is_static(b) and b <= 0:
        raise error(f"round_up's multiple must be positive, got {b}", node.args[1])
    return IT.ceil_div_leaf(a, b) * b


TUPLE_BUILTINS: dict[str, Build] = {
    "get": _modes("get", LL.get, IT.get, 2),
    "select": _modes("select", LL.select, IT.select, 1),
    "take": _modes("take", LL.take, IT.take, 3),
    "append": _adjoin("append", LL.append, IT.append),
    "prepend": _adjoin("prepend", LL.prepend, IT.prepend),
    "product": b_product,
    "depth": b_depth,
    "flatten": b_flatten,
    "filter": b_filter,
    "upcast": _cast("upcast", LA.upcast),
    "downcast": _cast("downcast", LA.downcast),
    "round_up": b_round_up,
}


# --------------------------------------------------------------------------- launch geometry


def _register(ctx: BuildContext, key: str, op: Any, node: ast.Node, hint: str) -> S.Runtime:
    """A special register, read once at the kernel's entry."""
    if key not in ctx.special:
        made = ctx.emit_at_entry(op, node)
        made.result.name_hint = hint
        ctx.special[key] = S.Runtime(made.result)
    return ctx.special[key]


def dims(ctx: BuildContext, ns: str, dim: str, node: ast.Node) -> S.Runtime:
    """block_dim.x (threads per CTA) and grid_dim.x (CTAs per grid)."""
    cls = gpu.BlockDimOp if ns == "block_dim" else gpu.GridDimOp
    return _register(ctx, f"{ns}.{dim}", cls(dim), node, f"{ns}_{dim}")


def _no_args(name: str) -> Any:
    def check(args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> None:
        if args or kwargs:
            raise error(f"{name}() takes no arguments", node)

    return check


def b_warp_idx(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    """warp_idx(): thread.x / 32, warp-uniform (CuTe's canonical_warp_idx_sync)."""
    _no_args("warp_idx")(args, kwargs, node)
    return _register(ctx, "warp_idx", gpu.WarpIdxOp(), node, "warp_idx")


def b_lane_idx(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    """lane_idx(): the thread's lane in its warp, 0..31 (%laneid)."""
    _no_args("lane_idx")(args, kwargs, node)
    return _register(ctx, "lane_idx", gpu.LaneIdOp(), node, "lane")


def b_warpgroup_idx(
    ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> Any:
    """warpgroup_idx(): warp_idx() / 4 (CuTe's canonical_warp_group_idx)."""
    _no_args("warpgroup_idx")(args, kwargs, node)
    warp = b_warp_idx(ctx, [], {}, node)
    return runtime_binop(ctx, "/", warp, 4, node)


def b_block_rank_in_cluster(
    ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> Any:
    """block_rank_in_cluster(): the CTA's rank in its cluster (%cluster_ctarank, sm_90)."""
    _no_args("block_rank_in_cluster")(args, kwargs, node)
    return _register(ctx, "cluster_rank", gpu.ClusterBlockRankOp(), node, "cta_rank")


GEOMETRY_BUILTINS: dict[str, Build] = {
    "warp_idx": b_warp_idx,
    "lane_idx": b_lane_idx,
    "warpgroup_idx": b_warpgroup_idx,
    "block_rank_in_cluster": b_block_rank_in_cluster,
}
