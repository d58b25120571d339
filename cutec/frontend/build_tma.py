"""TMA in the language, in CuTe's words (docs/language.md, *TMA*)::

    tma_a = make_tma_atom(SM90_TMA_LOAD, A, sA_layout[_, _, 0], (BM, BK))
    mA = tma_a.get_tma_tensor(shape(A))                       // (M,K) TMA coordinates
    gA = local_tile(mA, cta_tiler, cta_coord, step = (1, X, 1))
    tAgA, tAsA = tma_partition(tma_a, 0, make_layout(1),
                               group_modes(sA, 0, 2), group_modes(gA, 0, 2))
    copy(tma_a.with(bars[pipe]), tAgA[_, k_tile], tAsA[_, pipe])

`make_tma_atom` reads the box off the shared tile (cutec/atoms/tma_box.py) and
declares a map parameter of the kernel over the tensor (the runtime builds it at
launch); the atom's TMA tensor is a coordinate tensor whose elements are map
coordinates, so CuTe's views of it (local_tile, slices) work unchanged;
`tma_partition` orders a tile pair by boxes; `copy` issues one TMA per box.

Plain functions ``(ctx, args, kwargs, node)`` of the build context `ctx`, registered
in builtins.py; `tma_method` serves ``.get_tma_tensor`` and ``.with``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cutec.atoms.tma import TMA_DTYPE_OF, TmaDescriptorError, TmaSwizzle, check_box
from cutec.atoms.tma_box import TmaBoxError, tma_box
from cutec.frontend import ast
from cutec.frontend import scope as S
from cutec.frontend.build_barriers import mbarrier_operand
from cutec.frontend.build_scalars import materialize
from cutec.frontend.build_tensors import build_view, check_same_size, tensor_arg
from cutec.frontend.static_eval import (
    algebra_errors,
    arity,
    bits_of,
    describe,
    error,
    is_layout,
    is_static_tuple,
    to_int_tuple,
)
from cutec.ir import types as T
from cutec.ir.attributes import IntegerAttr
from cutec.ir.dialects import cute as C
from cutec.ir.dialects import thread
from cutec.ir.dialects.cute_attrs import LayoutAttr
from cutec.ir.dialects.cute_infer import spec_of
from cutec.ir.dialects.cute_tma import tma_coord_strides
from cutec.ir.rewrite import constant_value
from cutec.ir.types import index
from cutec.layout import (
    ComposedLayout,
    Layout,
    Swizzle,
    flatten,
    logical_divide,
    make_layout,
    right_inverse,
    size,
    tile_to_shape,
)
from cutec.layout.inttuple import format_tuple, leaves
from cutec.layout.swizzle import downcast_swizzle
from cutec.layout.symbolic import is_static
from cutec.target import AddressSpace, Feature

if TYPE_CHECKING:
    from cutec.frontend.context import BuildContext

TMA_OPS = {"SM90_TMA_LOAD": "load", "SM90_TMA_STORE": "store"}


def b_make_tma_atom(
    ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> S.TmaAtom:
    """make_tma_atom(SM90_TMA_LOAD, tensor, smem_layout, tile): CuTe's TMA atom."""
    if kwargs:
        raise error("make_tma_atom takes no keyword arguments", node)
    arity("make_tma_atom", args, 4, 4, node)
    op, tensor, smem, tile = args
    kind = TMA_OPS.get(op.name) if isinstance(op, S.AtomRef) and op.kind == "tma" else None
    if kind is None:
        raise error(
            f"make_tma_atom's first argument is SM90_TMA_LOAD, not {describe(op)}", node.args[0]
        )
    if not ctx.target.has(Feature.TMA):
        raise error(f"TMA copies need sm_90 (the target is {ctx.target})", node)
    t = tensor_arg(tensor, node.args[1], "the tensor a TMA atom maps")
    if t.space is not AddressSpace.GLOBAL or tensor_parameter(t.value) is None:
        raise error(
            "a TMA atom maps a tensor parameter of the kernel, or make_tensor(parameter, "
            "layout) (its map is built from that layout's extents and strides at launch), "
            f"not {describe(t)}",
            node.args[1],
        )
    if T.dtype_name(t.element) not in TMA_DTYPE_OF:
        raise error(f"TMA moves no {t.element} elements", node.args[1])
    if not is_layout(smem) or not _static_layout(smem):
        raise error(f"the shared tile's layout must be a static layout, not {describe(smem)}",
                    node.args[2])  # fmt: skip
    tile_shape = to_int_tuple(tile, node.args[3], "the TMA tile")
    if not is_static_tuple(tile_shape) or any(isinstance(m, tuple) for m in _modes(tile_shape)):
        raise error(f"the TMA tile is a flat static shape, not {format_tuple(tile_shape)}",
                    node.args[3])  # fmt: skip
    nbytes = bits_of(t.element) // 8
    swizzle, inner = _swizzle(smem, nbytes, node.args[2])
    flat = flatten(t.layout)
    shape, stride = _modes(flat.shape), _modes(flat.stride)
    try:
        box = tma_box(inner, _modes(tile_shape), shape, stride)
        check_box(TMA_DTYPE_OF[T.dtype_name(t.element)], box.dims, (1,) * box.rank,
                  swizzle=swizzle)  # fmt: skip
    except (TmaBoxError, TmaDescriptorError) as e:
        raise error(f"no TMA writes this shared tile: {e}", node.args[2]) from None
    if stride[box.modes[0]] != 1:
        raise error(
            f"the box's innermost dimension walks mode {box.modes[0]} of the tensor, whose "
            f"stride is {stride[box.modes[0]]}: a TMA map's innermost dimension is the "
            "tensor's contiguous mode (give the shared tile the tensor's major-ness)",
            node.args[2],
        )
    atom_type = C.TmaAtomType(kind, t.element, box.dims, box.modes, swizzle)
    name = _map_name(ctx, t)
    made = ctx.emit(C.MakeTmaAtomOp(t.value, name, atom_type), node)
    return S.TmaAtom(made.result, atom_type, t)


def tensor_parameter(value: Any) -> C.MakeTensorOp | None:
    """The kernel parameter's tensor whose memory `value` is from its first element on:
    the parameter itself, or make_tensor of it (a view at offset 0); None otherwise."""
    owner = value.owner
    if isinstance(owner, C.ViewOp) and constant_value(owner.offset) == IntegerAttr(0, index):
        owner = owner.source.owner
    return owner if isinstance(owner, C.MakeTensorOp) else None


def _modes(x: Any) -> tuple[Any, ...]:
    return x if isinstance(x, tuple) else (x,)


def _same(a: Any, b: Any) -> bool:
    """Whether two extents are the same integer (run-time ones by their symbols)."""
    a, b = (x.sym if isinstance(x, S.Runtime) else x for x in (a, b))
    return bool(a == b)


def _static_layout(layout: Any) -> bool:
    inner = layout.layout_b if isinstance(layout, ComposedLayout) else layout
    return all(is_static(v) for v in (*leaves(inner.shape), *leaves(inner.stride)))


def _swizzle(smem: Any, nbytes: int, node: ast.Node) -> tuple[TmaSwizzle, Layout]:
    """The map's swizzle mode for the shared tile's element swizzle, and the tile's
    layout without it."""
    if not isinstance(smem, ComposedLayout):
        return TmaSwizzle.NONE, smem
    if not isinstance(smem.layout_a, Swizzle) or smem.offset != 0:
        raise error(f"a TMA writes a swizzled or a plain shared tile, not {smem}", node)
    b = downcast_swizzle(smem.layout_a, nbytes)  # the swizzle on byte offsets
    try:
        return TmaSwizzle.from_cute(b.bits, b.base, b.shift), smem.layout_b
    except TmaDescriptorError as e:
        raise error(f"the shared tile's swizzle: {e}", node) from None


def _map_name(ctx: BuildContext, t: S.Tensor) -> str:
    """`tma_<tensor>`, numbered past the first (never a kernel argument's name)."""
    root = tensor_parameter(t.value)
    assert root is not None
    ptr = root.ptr
    base = f"tma_{ptr.name_hint or 'tensor'}"
    taken = {a.name_hint for a in ctx.body_block.args} if ctx.body_block else set()
    name, n = base, 1
    while name in taken or name in ctx.tma_maps:
        n += 1
        name = f"{base}_{n}"
    ctx.tma_maps.append(name)
    return name


def tma_method(
    ctx: BuildContext, atom: S.TmaAtom, name: str, args: list[Any], node: ast.Call, where: ast.Node
) -> Any:
    """``atom.get_tma_tensor(shape)`` and ``atom.with(bars[i])``."""
    if name == "get_tma_tensor":
        arity("get_tma_tensor", args, 1, 1, node)
        return _get_tma_tensor(ctx, atom, args[0], node)
    if name == "with":
        arity("with", args, 1, 1, node)
        if atom.type.kind == "store":
            raise error("a TMA store completes in the issuing thread's bulk groups "
                        "(tma_store_arrive, tma_store_wait), not on an mbarrier: "
                        "copy(tma, smem, coords)", where)  # fmt: skip
        bar = args[0]
        if not isinstance(bar, S.ElementRef):
            raise error(f"'with' takes the mbarrier bars[i] its copies complete on, not "
                        f"{describe(bar)}", node.args[0])  # fmt: skip
        return S.TmaCopy(atom, bar)
    raise error(f"a TMA atom has the methods get_tma_tensor and with, not '{name}'", where)


def _get_tma_tensor(ctx: BuildContext, atom: S.TmaAtom, shape: Any, node: ast.Call) -> S.Tensor:
    at = node.args[0]
    shape = to_int_tuple(shape, at, "a TMA tensor's shape")
    modes = _modes(shape)
    rank = len(_modes(flatten(atom.tensor.layout).shape))
    if any(isinstance(m, tuple) for m in modes) or len(modes) != rank:
        raise error(f"the TMA tensor of a rank-{rank} tensor has a flat shape of {rank} modes, "
                    f"not {format_tuple(shape)}", at)  # fmt: skip
    mapped = _modes(flatten(atom.tensor.layout).shape)
    if any(not _same(a, b) for a, b in zip(modes, mapped, strict=True)):
        raise error(f"the TMA tensor's shape is the mapped tensor's, {format_tuple(mapped)}, "
                    f"whose extents the map holds; not {format_tuple(shape)}", at)  # fmt: skip
    layout = Layout(shape, tma_coord_strides(atom.type, rank))
    extents = [materialize(ctx, x, at).value for x in leaves(shape) if not is_static(x)]
    t = C.CoordTensorType(atom.type.rank, spec_of(layout))
    made = ctx.emit(C.GetTmaTensorOp(atom.value, extents, t), node)
    return S.Tensor(made.result, layout, T.index, "coord", atom.type.rank)


def b_tma_partition(
    ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> tuple[S.Tensor, S.Tensor]:
    """tma_partition(atom, [cta_coord, cta_layout,] smem, gmem): CuTe's tma_partition."""
    if kwargs:
        raise error("tma_partition takes no keyword arguments", node)
    if len(args) not in (3, 5):
        raise error(
            "tma_partition takes (atom, smem, coords) or (atom, cta_coord, cta_layout, smem, "
            f"coords), got {len(args)} arguments",
            node,
        )
    atom = args[0]
    if not isinstance(atom, S.TmaAtom):
        raise error(f"tma_partition's first argument is a TMA atom, not {describe(atom)}",
                    node.args[0])  # fmt: skip
    if len(args) == 5:
        coord, cta = args[1], args[2]
        if coord != 0 or not is_layout(cta) or size(cta) != 1:
            raise error("multicast TMA (a CTA layout of more than one CTA) is not supported "
                        "yet: pass 0, make_layout(1)", node.args[1])  # fmt: skip
    s_node, g_node = node.args[-2], node.args[-1]
    smem = tensor_arg(args[-2], s_node, "tma_partition's shared tensor")
    coords = tensor_arg(args[-1], g_node, "tma_partition's TMA tensor", coords_ok=True)
    if smem.space is not AddressSpace.SHARED:
        raise error(f"tma_partition's shared tensor is in {smem.space.memory}", s_node)
    if coords.coord_rank != atom.type.rank:
        raise error("tma_partition's second tensor is a view of the atom's TMA tensor "
                    "(atom.get_tma_tensor(shape))", g_node)  # fmt: skip
    inner = smem.layout.layout_b if isinstance(smem.layout, ComposedLayout) else smem.layout
    first = inner[0] if isinstance(inner.shape, tuple) else inner
    n_box = atom.type.box.values
    with algebra_errors(node, "tma_partition"):
        check_same_size(_mode0(smem), _mode0(coords), node, "tma_partition")
        values = tile_to_shape(make_layout(right_inverse(first)), size(first))
        if size(values) % n_box:
            raise error(f"the shared tile's mode 0 holds {size(values)} elements, not a "
                        f"multiple of the atom's {n_box}-element box", s_node)  # fmt: skip
        tile = logical_divide(values, Layout(n_box))
    attrs = {"tile": LayoutAttr.of(tile)}
    g = build_view(ctx, C.TmaPartitionOp, coords, [], attrs, node, "tma_partition")
    s = build_view(ctx, C.TmaPartitionOp, smem, [], attrs, node, "tma_partition")
    return g, s


def _mode0(t: S.Tensor) -> S.Tensor:
    """`t` seen through its mode 0 (sizes only: for the size check)."""
    layout = t.layout.layout_b if isinstance(t.layout, ComposedLayout) else t.layout
    first = layout[0] if isinstance(layout.shape, tuple) else layout
    return S.Tensor(t.value, first, t.element, t.space, t.coord_rank)


def emit_tma_copy(
    ctx: BuildContext, tma: S.TmaCopy, src: S.Tensor, dst: S.Tensor, node: ast.Call
) -> None:
    """copy(atom.with(bars[i]), coords, smem): one TMA per box of `smem`."""
    atom = tma.atom
    if not src.coord_rank:
        raise error("a TMA load reads a view of its atom's TMA tensor (atom.get_tma_tensor), "
                    f"not {describe(src)}", node.args[1])  # fmt: skip
    if dst.space is not AddressSpace.SHARED or dst.element != atom.type.element:
        raise error(f"a TMA load writes an smem tensor of {atom.type.element}, not "
                    f"{describe(dst)}", node.args[2])  # fmt: skip
    check_same_size(src, dst, node, "copy")
    n = size(dst.layout)
    if is_static(n) and n % atom.type.box.values:
        raise error(f"the destination holds {n} elements, not whole boxes of the atom's "
                    f"{atom.type.box.values}", node.args[2])  # fmt: skip
    bars, index = mbarrier_operand(ctx, "the TMA copy", tma.bar, node)
    ctx.emit(C.TmaCopyOp(atom.value, src.value, dst.value, bars, [index]), node)


def emit_tma_store(
    ctx: BuildContext, atom: S.TmaAtom, src: S.Tensor, dst: S.Tensor, node: ast.Call
) -> None:
    """copy(tma, smem, coords) by a store atom: one TMA store per box of `smem`."""
    assert atom.type.kind == "store"
    if src.space is not AddressSpace.SHARED or src.element != atom.type.element:
        raise error(f"a TMA store reads an smem tensor of {atom.type.element}, not "
                    f"{describe(src)}", node.args[1])  # fmt: skip
    if not dst.coord_rank:
        raise error("a TMA store writes a view of its atom's TMA tensor (atom.get_tma_tensor), "
                    f"not {describe(dst)}", node.args[2])  # fmt: skip
    check_same_size(src, dst, node, "copy")
    ctx.emit(C.TmaStoreOp(atom.value, src.value, dst.value), node)


def _store_sync(name: str, op: Any) -> Any:
    def build(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> None:
        if kwargs:
            raise error(f"{name} takes no keyword arguments", node)
        if not ctx.target.has(Feature.TMA):
            raise error(f"{name} needs sm_90 (the target is {ctx.target})", node)
        if name != "tma_store_wait":
            arity(name, args, 0, 0, node)
            ctx.emit(op(), node)
            return
        arity(name, args, 1, 1, node)
        n = args[0]
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= 63:
            raise error(f"tma_store_wait takes a compile-time count of groups 0..63, not "
                        f"{describe(n)}", node.args[0])  # fmt: skip
        ctx.emit(op(n, read=True), node)

    build.__doc__ = f"{name}(): CuTe's {name}"
    return build


# CuTe's names: the writers' fence before a store reads shared memory, the issuing thread's
# bulk-group commit, and its wait until at most n groups still read their shared tiles.
b_tma_store_fence = _store_sync("tma_store_fence", C.FenceViewAsyncSharedOp)
b_tma_store_arrive = _store_sync("tma_store_arrive", thread.BulkCommitOp)
b_tma_store_wait = _store_sync("tma_store_wait", thread.BulkWaitOp)
