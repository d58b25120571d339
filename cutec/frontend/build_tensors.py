"""Tensors in the IR builder: views, indexing and allocation.

Every view (local_tile, local_partition, the divides, slices) is one cute op
whose result type the layout algebra computes here; allocations are
`cute.alloc_smem` / `cute.make_fragment` with static layouts; copy, gemm,
clear, fill and axpby check shapes and element types before emitting their
op. Coordinate tensors (`make_identity_tensor`, see `cute_coord`) take the
same views as data tensors and are read one coordinate at a time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cutec.atoms.copy import copy_family
from cutec.frontend import ast
from cutec.frontend import scope as S
from cutec.frontend.build_scalars import as_runtime, runtime_binop
from cutec.frontend.static_eval import (
    algebra_errors,
    arity,
    bits_of,
    checked_layout,
    describe,
    error,
    is_layout,
    is_static_tuple,
    to_int_tuple,
)
from cutec.ir import types as T
from cutec.ir.attributes import StringAttr
from cutec.ir.dialects import cute as C
from cutec.ir.dialects.cute_attrs import LayoutAttr, TupleAttr
from cutec.ir.dialects.cute_infer import spec_of
from cutec.ir.dialects.cute_types import DYN
from cutec.layout import ComposedLayout, Layout, X, cosize, size
from cutec.layout.inttuple import format_tuple, leaves
from cutec.layout.inttuple import rank as _rank
from cutec.layout.symbolic import is_static
from cutec.target import KIB, AddressSpace

if TYPE_CHECKING:
    from cutec.frontend.context import BuildContext

DIVIDES = ("logical_divide", "zipped_divide", "tiled_divide", "flat_divide")


def instruction_partition(value: Any) -> str | None:
    """The copy atom whose thread partition `value` is a view of, when that atom is one
    instruction's fixed register layout (ldmatrix, stmatrix, TMA), else None."""
    op = getattr(value, "op", None)
    while op is not None:
        if isinstance(op, C.PartitionOp | C.RetileOp):
            atom_type = op.atom.type
            if isinstance(atom_type, C.TiledCopyType):
                name = atom_type.atom
                family = copy_family(name)  # None for auto
                plain = family is None or family.traits.elementwise
                return None if plain else name
            return None
        source = getattr(op, "source", None)
        op = getattr(source, "op", None) if source is not None else None
    return None


def tensor_type(t: S.Tensor, layout: Any) -> Any:
    """The type of a view of `t` with `layout` (a coordinate tensor stays one)."""
    if t.coord_rank:
        return C.CoordTensorType(t.coord_rank, spec_of(layout))
    return C.TensorType(t.element, t.space, spec_of(layout))


def view(ctx: BuildContext, op: Any, src: S.Tensor, layout: Any, node: ast.Node) -> S.Tensor:
    checked_layout(layout, node)
    ctx.emit(op, node)
    return S.Tensor(op.result, layout, src.element, src.space, src.coord_rank)


def build_view(
    ctx: BuildContext,
    op_class: Any,
    src: S.Tensor,
    operands: list[Any],
    attributes: dict[str, Any],
    node: ast.Node,
    what: str = "",
    atom: Any = None,
) -> S.Tensor:
    """Emit a view op of `src`; its layout comes from the op's own `infer_layout`.

    `operands` follow the source tensor (and the tiled `atom` value, for
    partition and retile), as the op's IR form lists them.
    """
    atom_type = atom.type if atom is not None else None
    with algebra_errors(node, what):
        layout = op_class.inferred_layout(src.layout, attributes, atom_type)
    head = [src.value] if atom is None else [src.value, atom]
    op = op_class.create(
        operands=[*head, *operands],
        result_types=[tensor_type(src, layout)],
        attributes=attributes,
    )
    return view(ctx, op, src, layout, node)


def coord_attr(ctx: BuildContext, c: Any, nodes: Any) -> tuple[TupleAttr, list[Any]]:
    """A coordinate as ``#cute.tuple`` (run-time leaves '?') and its index operands."""
    operands: list[Any] = []

    def walk(x: Any, n: ast.Node) -> Any:
        if isinstance(x, list | tuple):
            ns = n.elts if isinstance(n, ast.Tuple) else [n] * len(x)
            return tuple(walk(e, m) for e, m in zip(x, ns, strict=True))
        if x is None or x is X:
            return x
        if isinstance(x, S.Runtime):
            operands.append(as_runtime(ctx, x, n, T.index).value)
            return DYN
        if isinstance(x, bool) or not is_static(x):
            raise error(
                f"a coordinate must be an integer, '_' or a run-time index, got {describe(x)}",
                n,
            )
        if x < 0:
            raise error(f"a coordinate must not be negative, got {x}", n)
        return x

    nodes_t = nodes if isinstance(nodes, list | tuple) else [nodes]
    value = (
        walk(tuple(c), ast.Tuple(tuple(nodes_t), nodes_t[0].span))
        if isinstance(c, list)
        else walk(c, nodes)
    )
    return TupleAttr(value), operands


def tensor_arg(
    v: Any, node: ast.Node, what: str = "this argument", coords_ok: bool = False
) -> S.Tensor:
    """`v` as a tensor; a coordinate tensor only where `coords_ok` (views of it)."""
    if not isinstance(v, S.Tensor):
        raise error(f"{what} must be a tensor, got {describe(v)}", node)
    if v.coord_rank and not coords_ok:
        raise error(
            f"{what} must be a tensor of data, not a coordinate tensor (its "
            "elements are computed; read them with t[i])",
            node,
        )
    return v


def layout_arg(v: Any, node: ast.Node, what: str = "this argument") -> Any:
    if is_layout(v):
        return v
    if isinstance(v, tuple | int) and is_static_tuple(v):
        return Layout(v)
    raise error(f"{what} must be a layout, got {describe(v)}", node)


def alloc(ctx: BuildContext, node: ast.Alloc) -> S.Tensor:
    element = ctx.eval(node.dtype)
    if not isinstance(element, T.Type):
        raise error(f"'{node.dtype.id}' is not an element type", node.dtype)
    layout = ctx.eval(node.layout)
    if isinstance(layout, tuple | int) and is_static_tuple(layout):  # a shape: compact
        layout = Layout(layout)
    if isinstance(layout, tuple) and any(isinstance(x, S.Runtime) for x in leaves(layout)):
        raise error(
            f"{node.space} needs a compile-time layout, but its shape holds a run-time value",
            node.layout,
        )
    if not is_layout(layout):
        raise error(
            f"{node.space} {element}[...] needs a layout, got {describe(layout)}", node.layout
        )
    return allocate(ctx, AddressSpace.from_memory(node.space), element, layout, node)


def allocate(
    ctx: BuildContext, space: AddressSpace, element: T.Type, layout: Any, node: ast.Node
) -> S.Tensor:
    spec = spec_of(layout)
    if spec.dynamic_count:
        raise error(
            f"{space.memory} needs a compile-time layout, but {layout} has run-time leaves",
            node,
        )
    checked_layout(layout, node)
    with algebra_errors(node):
        n = int(cosize(layout.layout_b if isinstance(layout, ComposedLayout) else layout))
    nbytes = n * bits_of(element) // 8
    t = C.TensorType(element, space, spec)
    if space is AddressSpace.SHARED:
        ctx.smem_bytes += nbytes
        limit = ctx.target.smem_per_cta
        if ctx.smem_bytes > limit:
            raise error(
                f"shared memory use reaches {ctx.smem_bytes} bytes with this "
                f"{nbytes}-byte buffer; the limit on {ctx.target} is {limit} "
                f"({limit // KIB} KiB per CTA)",
                node,
            )
        op = ctx.emit(C.AllocSmemOp(t), node)
    else:
        if n > 4096:
            raise error(
                f"a register tensor of {n} elements is too large (at most 4096 per thread)",
                node,
            )
        op = ctx.emit(C.MakeFragmentOp(t), node)
    return S.Tensor(op.result, layout, element, space)


# -- arguments of the tensor builtins ---------------------------------------------------


def local_tile_by_layout(
    ctx: BuildContext, t: S.Tensor, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> S.Tensor:
    """local_tile(t, L, coord) with a layout tiler L: the tile of zipped_divide(t, L)
    at coord (CuTe's Layout tiler: L picks the tile's elements and their order)."""
    if len(args) > 3 or kwargs:
        raise error("local_tile with a layout tiler takes no step", node)
    attrs = {"tiler": layout_tiler(args[1], node.args[1])}
    attrs["coord"], operands = coord_attr(ctx, args[2], node.args[2])
    return build_view(ctx, C.LocalTileOp, t, operands, attrs, node, "local_tile")


def layout_tiler(v: Any, node: ast.Node) -> LayoutAttr:
    if isinstance(v, ComposedLayout) or not is_static_tuple((v.shape, v.stride)):
        raise error(f"a layout tiler must be a static plain layout, got {describe(v)}", node)
    return LayoutAttr.of(v)


def like_args(
    name: str, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> tuple[S.Tensor, T.Type]:
    arity(name, args, 1, 2, node)
    element = kwargs.pop("dtype", args[1] if len(args) > 1 else None)
    if kwargs:
        raise error(f"{name} has no argument '{next(iter(kwargs))}'", node)
    t = tensor_arg(args[0], node.args[0], f"{name}'s argument", coords_ok=True)
    if element is None and t.coord_rank:
        raise error(
            f"{name} of a coordinate tensor needs the element type ({name}(t, dtype = bool))",
            node,
        )
    element = t.element if element is None else element
    if not isinstance(element, T.Type):
        raise error(f"{name}'s dtype must be an element type, got {describe(element)}", node)
    return t, element


# -- shape checks of the algorithms -----------------------------------------------------


def check_same_size(
    a: S.Tensor,
    b: S.Tensor,
    node: ast.Node,
    what: str,
    names: tuple[str, str] = ("the source", "the destination"),
    per_call: tuple[int, int] = (1, 1),
) -> None:
    """Equal sizes; with `per_call` = (p, q), p elements of `a` to q of `b` (ldmatrix x1/x2)."""
    sa, sb = size(a.layout), size(b.layout)
    p, q = per_call
    if is_static(sa) and is_static(sb) and sa * q != sb * p:
        calls = f" (the atom reads {p} and writes {q} per call)" if (p, q) != (1, 1) else ""
        raise error(
            f"{what}: {names[0]} has {sa} elements {format_tuple(a.layout.shape)} "
            f"but {names[1]} "
            f"has {sb} {format_tuple(b.layout.shape)}{calls}",
            node,
        )


def check_gemm_shapes(a: S.Tensor, b: S.Tensor, c: S.Tensor, node: ast.Node) -> None:
    """CuTe's gemm(A, B, C) checks: (M,K) x (N,K) -> (M,N)."""

    def modes(t: S.Tensor) -> tuple:
        return tuple(size(t.layout, i) for i in range(t.layout.rank))

    ma, mb, mc = modes(a), modes(b), modes(c)
    if len(ma) != 2 or len(mb) != 2 or len(mc) != 2:
        raise error(
            f"gemm without a tiled MMA takes rank-2 A (M,K), B (N,K) and C (M,N); "
            f"got ranks {len(ma)}, {len(mb)}, {len(mc)}",
            node,
        )
    checks = (
        (ma[0], mc[0], "M of A", "M of C"),
        (mb[0], mc[1], "N of B", "N of C"),
        (ma[1], mb[1], "K of A", "K of B"),
    )
    for x, y, xn, yn in checks:
        if is_static(x) and is_static(y) and x != y:
            shapes = ", ".join(
                f"{n} {format_tuple(t.layout.shape)}" for n, t in (("A", a), ("B", b), ("C", c))
            )
            raise error(f"gemm: {xn} is {x} but {yn} is {y} ({shapes})", node)


# -- views by the algebra, indexing ------------------------------------------------------


def tensor_compose(ctx: BuildContext, t: S.Tensor, args: list[Any], node: ast.Call) -> S.Tensor:
    """composition(t, layout): t's memory seen through ``t.layout ∘ layout``."""
    if len(args) != 2:
        raise error("composition of a tensor takes the tensor and a layout", node)
    layout = layout_arg(args[1], node.args[1], "the layout composed with a tensor")
    if not (isinstance(layout, Layout) and is_static_tuple((layout.shape, layout.stride))):
        raise error(
            f"a tensor composes with a static layout, got {describe(args[1])}", node.args[1]
        )
    attrs = {"layout": LayoutAttr.of(layout)}
    return build_view(ctx, C.ComposeOp, t, [], attrs, node, "composition")


def tensor_divide(
    ctx: BuildContext,
    name: str,
    t: S.Tensor,
    args: list[Any],
    kwargs: dict[str, Any],
    node: ast.Call,
) -> S.Tensor:
    """logical/zipped/tiled/flat_divide of a tensor: a `cute.divide` view."""
    if kwargs or len(args) != 2:
        raise error(f"'{name}' of a tensor takes the tensor and a tiler", node)
    if is_layout(args[1]):
        attrs = {
            "kind": StringAttr(name.removesuffix("_divide")),
            "tiler": layout_tiler(args[1], node.args[1]),
        }
        return build_view(ctx, C.DivideOp, t, [], attrs, node, name)
    tiler = to_int_tuple(args[1], node.args[1], "a tiler")
    if not is_static_tuple(tiler):
        raise error(f"the tiler {format_tuple(tiler)} must be known at compile time", node.args[1])
    if _rank(tiler) > t.layout.rank:
        raise error(
            f"a tiler of {_rank(tiler)} modes cannot divide a rank-"
            f"{t.layout.rank} tensor {t.layout}",
            node,
        )
    attrs = {"kind": StringAttr(name.removesuffix("_divide")), "tiler": TupleAttr(tiler)}
    return build_view(ctx, C.DivideOp, t, [], attrs, node, name)


def coord_element(
    ctx: BuildContext, t: S.Tensor, index: Any, node: ast.Node
) -> tuple[S.Runtime, ...]:
    """t[i] of a coordinate tensor: its coordinate, one `cute.load_coord` per mode."""
    i = as_runtime(ctx, index, node, T.index).value
    return tuple(
        S.Runtime(ctx.emit(C.LoadCoordOp(t.value, i, k), node).result) for k in range(t.coord_rank)
    )


def tensor_index(ctx: BuildContext, t: S.Tensor, idx: list[Any], node: ast.Index) -> Any:
    rank = t.layout.rank
    for i, sub in zip(idx, node.indices, strict=True):
        if _has_step_marker(i):
            raise error("'X' marks a projected mode in a step; it is not a coordinate", sub)
    if any(_has_underscore(i) for i in idx):
        if len(idx) != rank:
            raise error(
                f"slicing a rank-{rank} tensor needs {rank} coordinates, got {len(idx)}", node
            )
        if not _fits(tuple(idx), t.layout.shape):
            raise error(
                f"the coordinate {format_tuple(tuple(idx))} does not match the modes of "
                f"the tensor's shape {format_tuple(t.layout.shape)}",
                node,
            )
        coord, operands = coord_attr(ctx, idx, node.indices)
        try:
            return build_view(ctx, C.SliceOp, t, operands, {"coord": coord}, node)
        except ValueError:  # a coordinate the shape's nesting does not take
            raise error(
                f"the coordinate {format_tuple(tuple(idx))} does not match the modes "
                f"of the tensor's shape {format_tuple(t.layout.shape)}",
                node,
            ) from None
    if len(idx) == 1 and t.coord_rank:
        return coord_element(ctx, t, idx[0], node.indices[0])
    i = element_index(ctx, t, idx, node)
    return S.Runtime(ctx.emit(C.LoadOp(t.value, i.value), node).result)


def element_index(ctx: BuildContext, t: S.Tensor, idx: list[Any], node: ast.Index) -> S.Runtime:
    """The linear index of ``t[i]`` or ``t[c0, c1, ...]``: one coordinate per mode, in
    CuTe's colexicographic order, ``i = c0 + c1 * size<0>(t) + c2 * size<0>(t) * size<1>(t)``
    (a mode's coordinate is its own linear index when the mode is nested)."""
    nodes = node.indices
    if len(idx) == 1:
        return as_runtime(ctx, idx[0], nodes[0], T.index)
    rank = t.layout.rank
    if len(idx) != rank:
        raise error(
            f"an element of a rank-{rank} tensor is named by one linear index or {rank} "
            f"coordinates; got {len(idx)}",
            node,
        )
    total: Any = 0
    stride: Any = 1
    for k, (c, sub) in enumerate(zip(idx, nodes, strict=True)):
        if isinstance(c, tuple):
            raise error("each coordinate of an element is one integer (a mode's index)", sub)
        extent = size(t.layout, k)
        if isinstance(c, int) and is_static(extent) and not 0 <= c < int(extent):
            raise error(f"coordinate {c} is outside mode {k} of extent {extent}", sub)
        if not is_static(extent):
            op = C.SizeOp(t.value, TupleAttr(k))
            extent = S.Runtime(ctx.emit(op, node).result, extent)
        total = _index_op(ctx, "+", total, _index_op(ctx, "*", c, stride, sub), sub)
        stride = _index_op(ctx, "*", stride, extent, sub)
    return as_runtime(ctx, total, node, T.index)


def _index_op(ctx: BuildContext, op: str, a: Any, b: Any, node: ast.Node) -> Any:
    """``a op b`` of index values: folded where both are static."""
    if isinstance(a, int) and isinstance(b, int):
        return a + b if op == "+" else a * b
    if (op == "+" and b == 0) or (op == "*" and b == 1):
        return a
    if (op == "+" and a == 0) or (op == "*" and a == 1):
        return b
    ra, rb = as_runtime(ctx, a, node, T.index), as_runtime(ctx, b, node, T.index)
    return runtime_binop(ctx, op, ra, rb, node)


def _fits(coord: Any, shape: Any) -> bool:
    """A (nested) coordinate whose tuples match the shape's modes (a leaf fits any mode)."""
    if not isinstance(coord, tuple):
        return True
    return (
        isinstance(shape, tuple)
        and len(coord) == len(shape)
        and all(_fits(c, s) for c, s in zip(coord, shape, strict=True))
    )


def _has_step_marker(c: Any) -> bool:
    if isinstance(c, tuple):
        return any(_has_step_marker(x) for x in c)
    return c is X


def _has_underscore(c: Any) -> bool:
    if isinstance(c, tuple):
        return any(_has_underscore(x) for x in c)
    return c is None
