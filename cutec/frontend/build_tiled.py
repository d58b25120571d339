"""TiledCopy and TiledMMA in the IR builder: construction, thread slices, partitions.

The layouts are CuTe's (TiledCopy::tidfrg_S/D through `cutec.ir.layout.tv`,
TiledMMA::thrfrg_A/B/C below); the atom records come from `cutec.atoms`. A
tiled object becomes a `cute.make_tiled_copy` / `cute.make_tiled_mma` value,
and each partition a `cute.partition` op whose result type is computed here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cutec.frontend import ast
from cutec.frontend import scope as S
from cutec.frontend.static_eval import algebra_errors, bits_of, describe, error
from cutec.ir import types as T
from cutec.ir.dialects import cute as C
from cutec.ir.dialects.cute_atom_types import AUTO, TiledCopyType, TiledMmaType
from cutec.ir.dialects.cute_compute import dtype_name
from cutec.ir.dialects.cute_infer import spec_of
from cutec.ir.layout import (
    ComposedLayout,
    Layout,
    compact_col_major,
    make_layout_tv,
    size,
    slice_layout,
    tiled_product,
    tv_partition,
    zipped_divide,
)
from cutec.ir.layout.algebra import composition, recast_layout
from cutec.ir.layout.divide import logical_divide
from cutec.ir.layout.inttuple import filter_zeros
from cutec.ir.layout.layout import make_ordered_layout, take
from cutec.ir.layout.symbolic import is_static

if TYPE_CHECKING:
    from cutec.frontend.builder import KernelBuilder

_MMA_TYPES = {"f16": T.f16, "bf16": T.bf16, "f32": T.f32, "f64": T.f64, "tf32": T.tf32,
              "s8": T.i8, "s32": T.i32, "e4m3": T.e4m3, "e5m2": T.e5m2}


def num_threads(obj: S.TiledCopy | S.TiledMma) -> int:
    if isinstance(obj, S.TiledCopy):
        return int(size(obj.type.layout_tv.with_values(()), 0))
    return int(size(_thr_vmnk(obj)))


# --------------------------------------------------------------------------- construction


def _layout(kb: KernelBuilder, v: Any, node: ast.Node, what: str) -> Layout:
    if isinstance(v, tuple) or is_static(v):
        v = Layout(kb.to_int_tuple(v, node, what))
    if not isinstance(v, Layout) or spec_of(v).dynamic_count:
        raise error(f"{what} must be a compile-time layout, got {describe(v)}", node)
    return v


def _kw_node(node: ast.Call, name: str, index: int) -> ast.Node:
    for k in node.kwargs:
        if k.name == name:
            return k.value
    return node.args[index] if index < len(node.args) else node


def b_tiled_copy(kb: KernelBuilder, args: list[Any], kwargs: dict[str, Any],
                 node: ast.Call) -> S.TiledCopy:
    """tiled_copy(atom, thr=layout, val=layout[, dtype]): CuTe's make_tiled_copy."""
    atom = args[0] if args else kwargs.pop("atom", None)
    thr = kwargs.pop("thr", args[1] if len(args) > 1 else None)
    val = kwargs.pop("val", args[2] if len(args) > 2 else Layout(1))
    element = kwargs.pop("dtype", args[3] if len(args) > 3 else None)
    if kwargs:
        raise error(f"tiled_copy has no argument '{next(iter(kwargs))}'", node)
    if not isinstance(atom, S.AtomRef) or atom.kind not in ("copy", "auto"):
        raise error(f"tiled_copy needs a copy atom, got {describe(atom)}",
                    node.args[0] if node.args else node)
    if thr is None:
        raise error("tiled_copy needs a thread layout (thr=...)", node)
    thr_l = _layout(kb, thr, _kw_node(node, "thr", 1), "the thread layout")
    val_l = _layout(kb, val, _kw_node(node, "val", 2), "the value layout")
    with algebra_errors(node, "tiled_copy"):
        tiler, layout_tv = make_layout_tv(thr_l, val_l)
    element = element if isinstance(element, T.Type) else atom.element
    proto = S.TiledCopy(None, TiledCopyType(  # type: ignore[arg-type]
        atom.name if atom.kind == "copy" else AUTO, element or T.f32, spec_of(layout_tv),
        tuple(tiler)), atom.record)
    if element is None:
        return proto  # typed (and emitted) at its first use, by the tensors' element type
    return typed_copy(kb, proto, element, node)


def typed_copy(kb: KernelBuilder, tc: S.TiledCopy, element: T.Type,
               node: ast.Node) -> S.TiledCopy:
    """The tiled copy for `element`, its make op emitted once at the kernel entry."""
    key = (tc.type.atom, tc.type.layout_tv, tc.type.tiler, element)
    cache = kb.__dict__.setdefault("_tiled_copies", {})
    if key in cache:
        return cache[key]
    if tc.record is not None:
        bits = tc.record.value_bits
        vals = int(size(tc.type.layout_tv.with_values(()), 1))
        if vals * bits_of(element) % bits:
            raise error(f"each thread copies {vals} x {element} = {vals * bits_of(element)} "
                        f"bits, not a multiple of the {bits} bits {tc.type.atom} moves", node)
    t = TiledCopyType(tc.type.atom, element, tc.type.layout_tv, tc.type.tiler)
    op = kb.emit_at_entry(C.MakeTiledCopyOp(t), node)
    cache[key] = S.TiledCopy(op.result, t, tc.record)
    return cache[key]


def atom_element(atom: S.AtomRef) -> T.Type:
    """The element type an atom was instantiated for (f32 when only bits are known)."""
    return atom.element or T.f32


def b_tiled_mma(kb: KernelBuilder, args: list[Any], kwargs: dict[str, Any],
                node: ast.Call) -> S.TiledMma:
    """tiled_mma(atom, atoms=(M,N[,K]), tile=(M,N,K)): CuTe's make_tiled_mma."""
    atom = args[0] if args else None
    atoms = kwargs.pop("atoms", args[1] if len(args) > 1 else (1, 1, 1))
    perm = kwargs.pop("tile", kwargs.pop("permutation", args[2] if len(args) > 2 else None))
    if kwargs:
        raise error(f"tiled_mma has no argument '{next(iter(kwargs))}'", node)
    if not isinstance(atom, S.AtomRef) or atom.kind not in ("mma", "auto"):
        raise error(f"tiled_mma needs an MMA atom, got {describe(atom)}",
                    node.args[0] if node.args else node)
    if atom.kind == "auto":
        raise error("tiled_mma(auto, ...) needs the element types; name the atom "
                    "(e.g. UniversalFMA[f32]) until select-atoms lands", node)
    atom_l = _layout(kb, atoms, _kw_node(node, "atoms", 1), "the atom layout")
    if atom_l.rank > 3:
        raise error(f"the atom layout {atom_l} has more than three (M,N,K) modes", node)
    if atom_l.rank < 3:
        shape = tuple(atom_l.shape) if isinstance(atom_l.shape, tuple) else (atom_l.shape,)
        stride = tuple(atom_l.stride) if isinstance(atom_l.stride, tuple) else (atom_l.stride,)
        pad = 3 - len(shape)
        atom_l = Layout(shape + (1,) * pad, stride + (0,) * pad)
    if perm is not None:
        perm = kb.to_int_tuple(perm, _kw_node(node, "tile", 2), "the MMA tile")
        if not isinstance(perm, tuple) or len(perm) != 3:
            raise error(f"the MMA tile must be (M, N, K), got {perm}", node)
    rec = atom.record
    d, a, b, c = (_MMA_TYPES[x] for x in (rec.d_type, rec.a_type, rec.b_type, rec.c_type))
    t = TiledMmaType(atom.name, d, a, b, c, spec_of(atom_l), perm)
    op = kb.emit(C.MakeTiledMmaOp(t), node)
    return S.TiledMma(op.result, t, rec)


def b_copy_atom(kb: KernelBuilder, args: list[Any], kwargs: dict[str, Any],
                node: ast.Call) -> S.AtomRef:
    """copy_atom(ATOM, dtype): CuTe's Copy_Atom<ATOM, T>."""
    if len(args) != 2 or not isinstance(args[0], S.AtomRef) or not isinstance(args[1], T.Type):
        raise error("copy_atom takes a copy atom and an element type", node)
    return S.AtomRef(args[0].kind, args[0].name, args[0].record, args[1])


def _unsupported(name: str) -> Any:
    def fn(kb: KernelBuilder, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        raise error(f"'{name}' is not supported by the builder yet (it needs the TiledMMA "
                    "TV layouts of cutec.atoms.tiled)", node)
    return fn


TILED_BUILTINS = {
    "tiled_copy": b_tiled_copy,
    "make_tiled_copy": b_tiled_copy,
    "tiled_mma": b_tiled_mma,
    "make_tiled_mma": b_tiled_mma,
    "copy_atom": b_copy_atom,
    **{n: _unsupported(n) for n in ("tiled_copy_A", "tiled_copy_B", "tiled_copy_C",
                                    "make_tiled_copy_A", "make_tiled_copy_B",
                                    "make_tiled_copy_C")},
}


# --------------------------------------------------------------------------- layouts


def copy_atom_layouts(t: TiledCopyType, record: Any) -> tuple[Layout, Layout, Layout] | None:
    """(src, dst, ref) of the atom in elements (CuTe's recast from bits); None for auto."""
    if record is None:
        return None
    bits = bits_of(t.element)
    return tuple(recast_layout(x, 1, bits) for x in  # type: ignore[return-value]
                 (record.src_layout, record.dst_layout, record.ref_layout))


def _lift(fn: Any) -> Any:
    """Apply a partition to B of a swizzled layout Sw o off o B (as CuTe's composition does)."""
    def wrapper(obj: Any, layout: Any, *args: Any) -> Any:
        if isinstance(layout, ComposedLayout):
            return ComposedLayout(layout.layout_a, layout.offset, fn(obj, layout.layout_b, *args))
        return fn(obj, layout, *args)
    return wrapper


def copy_partition(t: TiledCopyType, layout: Any, which: str, record: Any) -> Any:
    """ThrCopy::partition_S/D: (CPY, CPY_M, CPY_N, rest...)."""
    layout_tv = t.layout_tv.with_values(())
    atoms = copy_atom_layouts(t, record)
    if atoms is None:  # auto: one atom moves all of a thread's values (vectorize splits it)
        ref = Layout((1, size(layout_tv, 1)), (0, 1))
        return tv_partition(layout, t.tiler, layout_tv, 0, ref, ref)
    src, dst, ref = atoms
    return tv_partition(layout, t.tiler, layout_tv, 0, src if which == "S" else dst, ref)


def _thr_vmnk(m: S.TiledMma) -> Layout:
    return tiled_product(m.record.thr_id, m.type.atom_layout.with_values(()))


def mma_partition(m: S.TiledMma, layout: Layout, which: str) -> Any:
    """ThrMMA::partition_A/B/C (thread 0's layout; others differ only in offset)."""
    rec = m.record
    modes = {"A": (0, 2), "B": (1, 2), "C": (0, 1)}[which]
    tv = {"A": rec.a_layout, "B": rec.b_layout, "C": rec.c_layout}[which]
    perm = m.type.permutation
    if perm is not None:
        layout = logical_divide(layout, (perm[modes[0]], perm[modes[1]]))
    atom_tile = (Layout(rec.shape_mnk[modes[0]]), Layout(rec.shape_mnk[modes[1]]))
    tiled = zipped_divide(layout, atom_tile)  # ((AtomM,AtomK),(RestM,RestK,...))
    tv_tensor = composition(tiled, (tv, None))  # ((ThrV,FrgV),(RestM,RestK,...))
    vmnk = _thr_vmnk(m)
    thr_tile = (None, (Layout(size(vmnk, 1 + modes[0])), Layout(size(vmnk, 1 + modes[1]))))
    thr = zipped_divide(tv_tensor, thr_tile)  # ((ThrV,(ThrM,ThrK)),(FrgV,(RestM,RestK)))
    rest = thr.shape[1][1]
    rest_rank = len(rest) if isinstance(rest, tuple) else 1
    return slice_layout((0, (None, (None,) * rest_rank)), thr)


def fragment_layout(layout: Any) -> Layout:
    """CuTe's make_fragment_like(layout): registers in the layout's mode order."""
    if isinstance(layout, ComposedLayout):
        layout = layout.layout_b  # registers are never swizzled
    shape = layout.shape
    if isinstance(shape, tuple) and len(shape) > 1 and all(
        is_static(x) for x in _leaves(shape)
    ):
        first = Layout(shape[0], compact_col_major(filter_zeros(layout.stride[0], shape[0])))
        rest = make_ordered_layout(take(layout, 1, len(shape)).shape,
                                   take(layout, 1, len(shape)).stride)
        return tiled_product(first, rest)
    return Layout(shape)


def _leaves(t: Any) -> Any:
    if isinstance(t, tuple):
        for x in t:
            yield from _leaves(x)
    else:
        yield t


# --------------------------------------------------------------------------- methods


def call_method(kb: KernelBuilder, obj: Any, name: str, args: list[Any],
                kwargs: dict[str, Any], node: ast.Call, attr_node: ast.Attribute) -> Any:
    where = ast.Name(name, attr_node.attr_span)
    if kwargs:
        raise error(f"'{name}' takes no keyword arguments", node)
    if isinstance(obj, S.TiledCopy | S.TiledMma):
        if name in ("slice", "get_slice", "get_thread_slice"):
            if len(args) != 1:
                raise error(f"'{name}' takes one thread index", node)
            tid = args[0]
            if not isinstance(tid, S.Runtime) and not is_static(tid):
                raise error(f"the thread index must be an integer, got {describe(tid)}",
                            node.args[0])
            return S.ThrSlice(obj, tid)
        raise error(f"{describe(obj)} has no method '{name}' (slice it first: "
                    f"{attr_node.value.span and 'obj'}.slice(thread.x))", where)
    assert isinstance(obj, S.ThrSlice)
    tiled = obj.tiled
    copy_ops = ("partition_S", "partition_D", "retile_S", "retile_D")
    mma_ops = ("partition_A", "partition_B", "partition_C", "make_fragment_A",
               "make_fragment_B", "make_fragment_C", "partition_fragment_A",
               "partition_fragment_B", "partition_fragment_C")
    allowed = copy_ops if isinstance(tiled, S.TiledCopy) else mma_ops
    if name not in allowed:
        kind = "a tiled copy" if isinstance(tiled, S.TiledCopy) else "a tiled MMA"
        raise error(f"a thread slice of {kind} has no method '{name}' "
                    f"(it has {', '.join(allowed)})", where)
    if len(args) != 1:
        raise error(f"'{name}' takes one tensor", node)
    t = kb.tensor_arg(args[0], node.args[0], f"{name}'s argument")
    which = name[-1]
    if name.startswith("retile"):
        raise error(f"'{name}' is not supported by the builder yet", node)
    if name.startswith("make_fragment"):
        element = _operand_type(tiled, which)  # type: ignore[arg-type]
        with algebra_errors(node, name):
            layout = Layout(t.layout.shape)
        return kb.allocate("rmem", element, layout, node)
    with algebra_errors(node, name):
        if isinstance(tiled, S.TiledCopy):
            tiled = typed_copy(kb, tiled, t.element, node)
            if t.element != tiled.type.element:
                raise error(f"{name}: the tiled copy moves {tiled.type.element} but the tensor "
                            f"holds {t.element}", node)
            layout = _lift(copy_partition)(tiled.type, t.layout, which, tiled.record)
        else:
            want = _operand_type(tiled, which)
            if t.element != want and not (want == T.tf32 and t.element == T.f32):
                raise error(f"{name}: the MMA takes {want} for {which} but the tensor holds "
                            f"{t.element}", node)
            layout = _lift(mma_partition)(tiled, t.layout, which)
    if name.startswith("partition_fragment"):
        with algebra_errors(node, name):
            frag = fragment_layout(layout)
        return kb.allocate("rmem", _operand_type(tiled, which), frag, node)
    tid = kb.as_runtime(obj.tid, node, T.index).value
    op = C.PartitionOp(tiled.value, t.value, tid, kb.tensor_type(t, layout), which)
    return kb.view(op, t, layout, node)


def _operand_type(m: S.TiledMma, which: str) -> T.Type:
    return {"A": m.type.a_type, "B": m.type.b_type, "C": m.type.c_type}[which]


def emit_copy(kb: KernelBuilder, atom: Any, src: S.Tensor, dst: S.Tensor,
              node: ast.Call) -> None:
    """copy(tiled_copy, src, dst): synchronous, or cute.copy_async for cp.async atoms."""
    if isinstance(atom, S.TiledCopy):
        atom = typed_copy(kb, atom, src.element, node)
        if atom.type.element != src.element:
            raise error(f"the tiled copy moves {atom.type.element} but the tensors hold "
                        f"{src.element}", node)
        rec = atom.record
        if rec is not None:
            spaces = {"gmem": "global", "smem": "shared", "rmem": "reg"}
            if spaces[src.space] not in rec.src_spaces or spaces[dst.space] not in rec.dst_spaces:
                raise error(f"copy atom {rec.name} copies {'/'.join(rec.src_spaces)} to "
                            f"{'/'.join(rec.dst_spaces)}, not {src.space} to {dst.space}", node)
        if rec is not None and rec.async_completion == "cp.async.group":
            op = kb.emit(C.CopyAsyncOp(atom.value, src.value, dst.value), node)
            kb.pending_tokens.append(op.result)
            return
        kb.emit(C.CopyOp(src.value, dst.value, atom.value), node)
        return
    if isinstance(atom, S.AtomRef) and atom.kind == "copy":
        op = C.CopyOp(src.value, dst.value)
        from cutec.ir.attributes import StringAttr

        op.attributes["atom"] = StringAttr(atom.name)
        kb.emit(op, node)
        return
    raise error(f"copy's first argument must be a tiled copy or a copy atom, got "
                f"{describe(atom)}", node.args[0])


__all__ = ["TILED_BUILTINS", "call_method", "dtype_name", "emit_copy", "fragment_layout"]
