"""Tensor builtins: views (local_tile, local_partition, make_tensor, recast),
fragments (make_fragment_like ...), coordinates (make_identity_tensor, elem_less)
and the algorithms (copy, gemm, clear, fill, axpby).

Plain functions ``(ctx, args, kwargs, node)`` of the build context `ctx`, registered
in builtins.py; the tensor machinery they share (build_view, tensor_arg, allocate
...) is in build_tensors.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cutec.frontend import ast
from cutec.frontend import scope as S
from cutec.frontend.build_auto_atoms import operand_copy
from cutec.frontend.build_scalars import as_runtime, const_index, logical_and, materialize
from cutec.frontend.build_tensors import (
    allocate,
    build_view,
    check_gemm_shapes,
    check_same_size,
    coord_attr,
    instruction_partition,
    layout_arg,
    like_args,
    local_tile_by_layout,
    tensor_arg,
    tensor_type,
    view,
)
from cutec.frontend.build_tiled import emit_copy, fragment_layout, resolve_gemm_mma
from cutec.frontend.build_tma import emit_tma_copy, emit_tma_store
from cutec.frontend.static_eval import (
    algebra_errors,
    arity,
    check_divides,
    describe,
    error,
    is_layout,
    is_static_tuple,
    to_int_tuple,
)
from cutec.ir import types as T
from cutec.ir.attributes import IntegerAttr
from cutec.ir.dialects import arith
from cutec.ir.dialects import cute as C
from cutec.ir.dialects.cute_attrs import LayoutAttr, TupleAttr
from cutec.ir.dialects.cute_coord import identity_layout
from cutec.ir.dialects.cute_infer import spec_of
from cutec.layout import ComposedLayout, X, cosize, make_layout_like
from cutec.layout import inttuple as IT
from cutec.layout import layout as LL
from cutec.layout.inttuple import format_tuple, leaves
from cutec.layout.symbolic import is_static
from cutec.target import AddressSpace

if TYPE_CHECKING:
    from cutec.frontend.context import BuildContext


def b_local_tile(
    ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> S.Tensor:
    arity("local_tile", args, 3, 4, node)
    t = tensor_arg(args[0], node.args[0], "local_tile's first argument", coords_ok=True)
    if is_layout(args[1]):
        return local_tile_by_layout(ctx, t, args, kwargs, node)
    tiler = to_int_tuple(args[1], node.args[1], "a tiler")
    if not is_static_tuple(tiler):
        raise error(f"the tiler {tiler} must be known at compile time", node.args[1])
    coord = args[2]
    step = kwargs.pop("step", kwargs.pop("proj", args[3] if len(args) > 3 else None))
    if kwargs:
        raise error(f"local_tile has no argument '{next(iter(kwargs))}'", node)
    tiler_t = tiler if isinstance(tiler, tuple) else (tiler,)
    coord_t = coord if isinstance(coord, tuple) else (coord,)
    if len(tiler_t) != len(coord_t):
        raise error(
            f"the tiler {format_tuple(tiler)} has {len(tiler_t)} modes but the coordinate "
            f"has {len(coord_t)}",
            node,
        )
    if step is not None:
        step_t = step if isinstance(step, tuple) else (step,)
        if len(step_t) != len(tiler_t):
            raise error(
                f"step {format_tuple(step)} has {len(step_t)} modes but the tiler "
                f"{format_tuple(tiler)} has {len(tiler_t)}",
                node,
            )
    kept = [m for i, m in enumerate(tiler_t) if step is None or step_t[i] is not X]
    if len(kept) > t.layout.rank:
        raise error(
            f"a tiler of {len(kept)} modes cannot tile a rank-{t.layout.rank} tensor {t.layout}",
            node,
        )
    coord_tuple, operands = coord_attr(ctx, coord, node.args[2])  # checks its leaves
    attrs = {"tiler": TupleAttr(tiler), "coord": coord_tuple}
    if step is not None:
        attrs["proj"] = TupleAttr(step)
    return build_view(ctx, C.LocalTileOp, t, operands, attrs, node, "local_tile")


def b_local_partition(
    ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> S.Tensor:
    arity("local_partition", args, 3, 4, node)
    t = tensor_arg(args[0], node.args[0], "local_partition's first argument", coords_ok=True)
    thr = layout_arg(args[1], node.args[1], "the thread layout")
    if spec_of(thr).dynamic_count or isinstance(thr, ComposedLayout):
        raise error(f"the thread layout {thr} must be a compile-time layout", node.args[1])
    step = kwargs.pop("step", kwargs.pop("proj", args[3] if len(args) > 3 else None))
    tid = args[2]
    if not isinstance(tid, S.Runtime) and not is_static(tid):
        raise error(f"the thread index must be an integer, got {describe(tid)}", node.args[2])
    kept = (
        thr.rank
        if step is None
        else sum(1 for s in (step if isinstance(step, tuple) else (step,)) if s is not X)
    )
    if kept > t.layout.rank:
        raise error(
            f"a rank-{kept} thread layout {thr} cannot partition a "
            f"rank-{t.layout.rank} tensor {t.layout}",
            node,
        )
    check_divides(t.layout, thr.shape, step, "thread layout", node)
    tid_v = as_runtime(ctx, tid, node.args[2], T.index).value
    attrs: dict[str, Any] = {"thr_layout": LayoutAttr.of(thr)}
    if step is not None:
        attrs["proj"] = TupleAttr(step)
    return build_view(ctx, C.LocalPartitionOp, t, [tid_v], attrs, node, "local_partition")


def b_make_tensor_like(
    ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> S.Tensor:
    """make_tensor_like(t[, dtype]): registers with t's shape, compact in its mode order."""
    t, element = like_args("make_tensor_like", args, kwargs, node)
    with algebra_errors(node):
        inner = t.layout.layout_b if isinstance(t.layout, ComposedLayout) else t.layout
        layout = make_layout_like(inner)
    return allocate(ctx, AddressSpace.REGISTER, element, layout, node)


def b_make_fragment_like(
    ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> S.Tensor:
    """make_fragment_like(t[, dtype]): registers, mode 0 compact (CuTe's FrgV first)."""
    t, element = like_args("make_fragment_like", args, kwargs, node)
    with algebra_errors(node):
        layout = fragment_layout(t.layout)
    return allocate(ctx, AddressSpace.REGISTER, element, layout, node)


def b_copy(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> None:
    arity("copy", args, 2, 3, node)
    pred_v = kwargs.pop("pred", None)
    if kwargs:
        raise error(f"copy has no argument '{next(iter(kwargs))}' (it takes pred = p)", node)
    atom = args[0] if len(args) == 3 else None
    if isinstance(atom, S.TmaAtom):
        if pred_v is not None:
            raise error("a TMA copy takes no predicate: its map bounds every box", node)
        if atom.type.kind == "load":
            raise error("a TMA load completes on an mbarrier: copy(tma.with(bars[i]), "
                        "coords, smem)", node.args[0])  # fmt: skip
        src = tensor_arg(args[1], node.args[1], "the TMA store's source")
        dst = tensor_arg(args[2], node.args[2], "the TMA store's destination", coords_ok=True)
        emit_tma_store(ctx, atom, src, dst, node)
        return
    if isinstance(atom, S.TmaCopy):
        if pred_v is not None:
            raise error("a TMA copy takes no predicate: its map bounds every box", node)
        src = tensor_arg(args[1], node.args[1], "the TMA copy's source", coords_ok=True)
        dst = tensor_arg(args[2], node.args[2], "the TMA copy's destination")
        emit_tma_copy(ctx, atom, src, dst, node)
        return
    src = tensor_arg(args[-2], node.args[-2], "the copy's source")
    dst = tensor_arg(args[-1], node.args[-1], "the copy's destination")
    if isinstance(atom, S.TiledCopy) and atom.operand is not None:
        atom = operand_copy(ctx, atom, None, None, node)
    record = getattr(atom, "record", None)
    per_call = (1, 1)
    if record is not None and hasattr(record, "call_values"):
        # ldmatrix x1/x2: each lane reads a 16-byte row but receives 2 or 4 values
        per_call = record.call_values(T.dtype_of(src.element).bits)
    check_same_size(src, dst, node, "copy", per_call=per_call)
    if src.element != dst.element:
        raise error(f"copy from {src.element} to {dst.element}: the element types differ", node)
    if dst.space is AddressSpace.GLOBAL and src.space is AddressSpace.GLOBAL:
        raise error(
            "copy from global memory to global memory: stage it through registers or shared memory",
            node,
        )
    pred = None
    if pred_v is not None:
        pred_node = next(k.value for k in node.kwargs if k.name == "pred")
        pred = tensor_arg(pred_v, pred_node, "the copy's predicate")
        if pred.element != T.i1 or pred.space is not AddressSpace.REGISTER:
            raise error(
                f"the predicate must be a bool register tensor "
                f"(make_fragment_like(t, dtype = bool)), not {describe(pred)} of "
                f"{pred.element}",
                pred_node,
            )
        check_same_size(pred, src, node, "copy", ("the predicate", "the source"))
    if atom is None:
        for t, which in ((src, 0), (dst, 1)):
            owner = instruction_partition(t.value)
            if owner is not None:
                raise error(
                    f"{'the source' if which == 0 else 'the destination'} is a partition "
                    f"for the {owner} instruction: copy it with its tiled copy, "
                    "copy(tiled_copy, src, dst) (the instruction's threads exchange "
                    "elements: a plain copy would move the ones this thread addresses, "
                    "not the ones it receives)",
                    node.args[which - 2],
                )
        op = (
            C.CopyOp(src.value, dst.value)
            if pred is None
            else C.CopyIfOp(pred.value, src.value, dst.value)
        )
        ctx.emit(op, node)
        return
    emit_copy(ctx, atom, src, dst, node, pred)


def b_group_modes(
    ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> Any:
    """group_modes(x, begin, end): modes [begin, end) of a tensor, layout or tuple as one
    mode (CuTe's group_modes<B,E>); a tensor's is a view of the same elements."""
    if kwargs:
        raise error("group_modes takes no keyword arguments", node)
    arity("group_modes", args, 3, 3, node)
    x, begin, end = args
    shape = x.layout.shape if isinstance(x, S.Tensor) else x.shape if is_layout(x) else x
    rank = len(shape) if isinstance(shape, tuple) else 1
    for v, at in ((begin, node.args[1]), (end, node.args[2])):
        if isinstance(v, bool) or not isinstance(v, int):
            raise error(f"group_modes takes compile-time mode indices, not {describe(v)}", at)
    if not 0 <= begin < end <= rank:
        raise error(f"group_modes({begin}, {end}) of {rank} modes: needs 0 <= begin < end "
                    f"<= {rank}", node)  # fmt: skip
    if isinstance(x, S.Tensor):
        attrs = {"begin": IntegerAttr(begin, T.i64), "end": IntegerAttr(end, T.i64)}
        return build_view(ctx, C.GroupModesOp, x, [], attrs, node, "group_modes")
    if isinstance(x, ComposedLayout):
        return ComposedLayout(x.layout_a, x.offset, LL.group_modes(x.layout_b, begin, end))
    if is_layout(x):
        return LL.group_modes(x, begin, end)
    if isinstance(x, tuple):
        return IT.group(x, begin, end)
    raise error(f"group_modes takes a tensor, a layout or a tuple, not {describe(x)}",
                node.args[0])  # fmt: skip


def b_gemm(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> None:
    if "tile" in kwargs:  # the whole-tensor form on global tensors
        # a cycle: build_tile_gemm inlines a library func through build_calls
        from cutec.frontend.build_tile_gemm import build_tile_gemm

        build_tile_gemm(ctx, args, kwargs, node)
        return
    arity("gemm", args, 3, 4, node)
    mma = args[0] if len(args) == 4 else None
    a, b, c = (
        tensor_arg(v, n, f"gemm's {w}")
        for v, n, w in zip(args[-3:], node.args[-3:], ("A", "B", "C"), strict=True)
    )
    if c.space is AddressSpace.GLOBAL:
        raise error(
            "gemm accumulates into registers (or shared memory), not a gmem "
            "tensor; make a fragment with make_tensor_like",
            node.args[-1],
        )
    if mma is None:
        check_gemm_shapes(a, b, c, node)
        ctx.emit(C.GemmOp(a.value, b.value, c.value), node)
        return
    if not isinstance(mma, S.TiledMma):
        raise error(f"gemm's first argument must be a tiled MMA, got {describe(mma)}", node.args[0])
    mma = resolve_gemm_mma(ctx, mma, a, b, c, node)
    for name, t, want in (
        ("A", a, mma.type.a_type),
        ("B", b, mma.type.b_type),
        ("C", c, mma.type.c_type),
    ):
        if t.element != want and not (str(want) == "tf32" and t.element == T.f32):
            raise error(f"gemm's {name} holds {t.element} but the MMA atom takes {want}", node)
    ctx.emit(C.GemmOp(a.value, b.value, c.value, mma.value), node)


def b_clear(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> None:
    arity("clear", args, 1, 1, node)
    t = tensor_arg(args[0], node.args[0], "clear's argument")
    ctx.emit(C.ClearOp(t.value), node)


def b_fill(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> None:
    arity("fill", args, 2, 2, node)
    t = tensor_arg(args[0], node.args[0], "fill's tensor")
    v = as_runtime(ctx, args[1], node.args[1], t.element)
    ctx.emit(C.FillOp(t.value, v.value), node)


def b_axpby(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> None:
    arity("axpby", args, 4, 4, node)
    x = tensor_arg(args[1], node.args[1], "axpby's x")
    y = tensor_arg(args[3], node.args[3], "axpby's y")
    check_same_size(x, y, node, "axpby", ("x", "y"))
    floats = isinstance(x.element, T.FloatType) and isinstance(y.element, T.FloatType)
    if x.element != y.element and not floats:
        raise error(f"axpby: x holds {x.element} but y holds {y.element}", node)
    # The arithmetic is in x's type (the accumulator's); y is converted on the way.
    alpha = as_runtime(ctx, args[0], node.args[0], x.element)
    beta = as_runtime(ctx, args[2], node.args[2], x.element)
    ctx.emit(C.AxpbyOp(alpha.value, x.value, beta.value, y.value), node)


def b_make_tensor(
    ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> S.Tensor:
    """make_tensor(t, layout): the memory of tensor t (from its first element, as
    CuTe's ``make_tensor(t.data(), layout)``) seen through another layout."""
    arity("make_tensor", args, 2, 2, node)
    if kwargs:
        raise error(f"make_tensor has no argument '{next(iter(kwargs))}'", node)
    t = tensor_arg(args[0], node.args[0], "make_tensor's memory")
    layout = layout_arg(args[1], node.args[1], "make_tensor's layout")
    if isinstance(t.layout, ComposedLayout) or isinstance(layout, ComposedLayout):
        raise error(
            "make_tensor over a swizzled tensor or with a swizzled layout is not supported "
            "(the swizzle acts on the whole offset); use composition(t, layout), which "
            "keeps it",
            node,
        )
    if t.space is not AddressSpace.GLOBAL and is_static(cosize(layout)):
        have = cosize(t.layout)
        if is_static(have) and cosize(layout) > have:
            raise error(
                f"the layout {layout} reaches element {cosize(layout) - 1}, past the "
                f"{have} elements of the tensor's memory",
                node.args[1],
            )
    zero = const_index(ctx, 0, node).value
    dynamic = [
        materialize(ctx, x, node.args[1]).value
        for x in leaves((layout.shape, layout.stride))
        if not is_static(x)
    ]
    op = C.ViewOp(t.value, zero, dynamic, tensor_type(t, layout))
    return view(ctx, op, t, layout, node)


def b_recast(
    ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> S.Tensor:
    """recast(t, dtype): t's bytes as elements of dtype (CuTe's recast<T>(t))."""
    arity("recast", args, 2, 2, node)
    if kwargs:
        raise error(f"recast has no argument '{next(iter(kwargs))}'", node)
    t = tensor_arg(args[0], node.args[0], "recast's tensor")
    element = args[1]
    if not isinstance(element, T.Type):
        raise error(
            f"recast's second argument is an element type, got {describe(element)}",
            node.args[1],
        )
    if t.space is AddressSpace.REGISTER:
        raise error(
            "recast of a register fragment is not supported: convert its elements "
            "(f32(x)) or recast the memory it was copied from",
            node,
        )
    old = C.TensorType(t.element, t.space, spec_of(t.layout))
    new = C.TensorType(element, t.space, spec_of(t.layout))
    with algebra_errors(node, "recast"):
        layout = C.RecastOp.recast(t.layout, old, new)
    op = C.RecastOp(t.value, C.TensorType(element, t.space, spec_of(layout)))
    ctx.emit(op, node)
    return S.Tensor(op.result, layout, element, t.space)


def b_make_identity_tensor(
    ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> S.Tensor:
    """make_identity_tensor(shape): the coordinate tensor of a flat shape."""
    arity("make_identity_tensor", args, 1, 1, node)
    shape = to_int_tuple(args[0], node.args[0], "an identity tensor's shape")
    if isinstance(shape, tuple) and any(isinstance(m, tuple) for m in shape):
        raise error(
            f"make_identity_tensor takes a flat shape, got {format_tuple(shape)}", node.args[0]
        )
    layout = identity_layout(shape)
    extents = [materialize(ctx, x, node.args[0]).value for x in leaves(shape) if not is_static(x)]
    rank = len(shape) if isinstance(shape, tuple) else 1
    t = C.CoordTensorType(rank, spec_of(layout))
    op = ctx.emit(C.MakeIdentityTensorOp(extents, t), node)
    return S.Tensor(op.result, layout, T.index, "coord", rank)


def b_elem_less(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    """elem_less(a, b): every mode of coordinate a is below that of b (CuTe's elem_less)."""
    arity("elem_less", args, 2, 2, node)
    a, b = args
    a_t, b_t = (v if isinstance(v, tuple) else (v,) for v in (a, b))
    if len(a_t) > len(b_t):
        raise error(
            f"elem_less: a coordinate of {len(a_t)} modes against a shape of {len(b_t)}", node
        )
    result: Any = True
    for x, y in zip(a_t, b_t, strict=False):
        if isinstance(x, tuple) or isinstance(y, tuple):
            less = b_elem_less(ctx, [x, y], {}, node)
        elif is_static(x) and is_static(y):
            less = x < y
        else:
            xv = materialize(ctx, x, node.args[0]).value
            yv = materialize(ctx, y, node.args[1]).value
            less = S.Runtime(ctx.emit(arith.CmpIOp("slt", xv, yv), node).result)
        result = logical_and(ctx, result, less, node)
    return result


def b_as_position_independent_swizzle_tensor(
    ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> S.Tensor:
    """The tensor itself: cutec's smem swizzles already act on element offsets from the
    buffer's (swizzle-aligned) base, which is what CuTe's conversion produces."""
    arity("as_position_independent_swizzle_tensor", args, 1, 1, node)
    t = tensor_arg(args[0], node.args[0], "its argument")
    if t.space is not AddressSpace.SHARED:
        raise error(
            f"as_position_independent_swizzle_tensor takes an smem tensor, not {t.space.memory}",
            node.args[0],
        )
    return t
