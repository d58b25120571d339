"""TiledCopy and TiledMMA in the IR builder: construction, thread slices, partitions.

Every layout comes from the atom library (`cutec.atoms.tiled_copy` /
`tiled_mma`: CuTe's make_tiled_copy*, make_tiled_mma, partition_S/D/A/B/C,
retile, make_fragment_*). A tiled object is a `cute.make_tiled_copy` /
`cute.make_tiled_mma` value emitted at the kernel entry, whose type rebuilds
the library object (`TiledCopyType.library()`); each partition is a
`cute.partition` op, each retile a `cute.retile` op, whose result layout the
op's own `infer_layout` computes (the same method the verifier and the passes
use).

Element types. A copy atom named without one (``UniversalCopy[u128]``) takes
it from the tensors it is first used with (CuTe fixes it in ``Copy_Atom<Op,
T>``); the typed instance is made once per element type. An ``auto`` MMA
takes its types at its first use: ``gemm(mma, A, B, C)`` gives all four; a
first partition of A or B (element T) gives (D, A, B, C) = (acc(T), T, T,
acc(T)) with acc = f32 for floats, s32 for s8, f64 for f64 (or the
``tiled_mma(auto, ..., acc_dtype = f16)`` given); a first C
partition gives T for all four. A later use with other types is an error
naming the first.

Auto atoms. An ``auto`` MMA is typed at its first use with the atom
`cutec.heuristics.select.select_mma` chooses for its element types, the target and
the block size; ``tiled_copy_A/B(auto, mma)`` at its first ``partition_S``
with the one `select_operand_copy` chooses for the tensor it reads (ldmatrix,
or ``auto``: plain loads). Fragments and partitions depend on these atoms, so
they are right from the start; the make ops carry ``{auto}`` and the choice's
reasons, which select-atoms reports (docs/passes.md, select-atoms). An auto copy made by
``tiled_copy(auto, ...)`` stays ``auto`` (typed as one that moves all of a
thread's values at once): select-atoms picks cp.async or a UniversalCopy width
per copy, which its partitions do not depend on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cutec.atoms.tiled_copy import (
    make_copy_atom,
    make_tiled_copy_A,
    make_tiled_copy_B,
    make_tiled_copy_C,
)
from cutec.atoms.tiled_mma import make_fragment_like
from cutec.dtypes import dtype
from cutec.frontend import ast
from cutec.frontend import scope as S
from cutec.frontend.build_auto_atoms import (
    check_threads,
    num_threads,
    operand_copy,
    select_auto_mma,
)
from cutec.frontend.build_scalars import as_runtime
from cutec.frontend.build_tensors import allocate, build_view, tensor_arg
from cutec.frontend.build_tma import tma_method
from cutec.frontend.static_eval import (
    algebra_errors,
    arg_node,
    bits_of,
    check_divides,
    describe,
    error,
    to_int_tuple,
)
from cutec.ir import types as T
from cutec.ir.attributes import StringAttr
from cutec.ir.dialects import cute as C
from cutec.ir.dialects.cute_atom_types import AUTO, TiledCopyType, TiledMmaType, auto_copy_record
from cutec.ir.dialects.cute_compute import dtype_name
from cutec.ir.dialects.cute_infer import spec_of
from cutec.layout import ComposedLayout, Layout, make_layout_tv, size
from cutec.layout import inttuple as it
from cutec.layout.symbolic import is_static
from cutec.target import AddressSpace

if TYPE_CHECKING:
    from cutec.frontend.context import BuildContext

_ACCUMULATOR = {"f64": T.f64, "s8": T.i32, "s32": T.i32}  # every other float: f32


# --------------------------------------------------------------------------- library objects


# --------------------------------------------------------------------------- construction


def _layout(ctx: BuildContext, v: Any, node: ast.Node, what: str) -> Layout:
    if isinstance(v, tuple) or is_static(v):
        v = Layout(to_int_tuple(v, node, what))
    if not isinstance(v, Layout) or spec_of(v).dynamic_count:
        raise error(f"{what} must be a compile-time layout, got {describe(v)}", node)
    if int(size(v)) < 1:
        raise error(f"{what} {v} has no elements; its extents must be positive", node)
    return v


def b_tiled_copy(
    ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> S.TiledCopy:
    """tiled_copy(atom, thr=layout, val=layout[, dtype]): CuTe's make_tiled_copy."""
    atom = args[0] if args else kwargs.pop("atom", None)
    thr = kwargs.pop("thr", args[1] if len(args) > 1 else None)
    val = kwargs.pop("val", args[2] if len(args) > 2 else Layout(1))
    element = kwargs.pop("dtype", args[3] if len(args) > 3 else None)
    if kwargs:
        raise error(f"tiled_copy has no argument '{next(iter(kwargs))}'", node)
    if not isinstance(atom, S.AtomRef) or atom.kind not in ("copy", "auto"):
        raise error(
            f"tiled_copy needs a copy atom, got {describe(atom)}",
            node.args[0] if node.args else node,
        )
    if thr is None:
        raise error("tiled_copy needs a thread layout (thr=...)", node)
    thr_l = _layout(ctx, thr, arg_node(node, "thr", 1), "the thread layout")
    val_l = _layout(ctx, val, arg_node(node, "val", 2), "the value layout")
    with algebra_errors(node, "tiled_copy"):
        tiler, layout_tv = make_layout_tv(thr_l, val_l)
    element = element if isinstance(element, T.Type) else atom.element
    proto = S.TiledCopy(
        None,
        TiledCopyType(  # type: ignore[arg-type]
            atom.name if atom.kind == "copy" else AUTO,
            element or T.f32,
            spec_of(layout_tv),
            tuple(tiler),
        ),
        atom.record,
    )
    check_threads(ctx, proto, "TiledCopy", node)
    if element is None:
        return proto  # typed (and emitted) at its first use, by the tensors' element type
    return typed_copy(ctx, proto, element, node)


def typed_copy(ctx: BuildContext, tc: S.TiledCopy, element: T.Type, node: ast.Node) -> S.TiledCopy:
    """The tiled copy for `element`, its make op emitted once at the kernel entry."""
    if tc.value is not None and tc.type.element == element:
        return tc
    key = (tc.type.atom, tc.type.layout_tv, tc.type.tiler, element)
    cache = ctx.tiled_copies
    if tc.value is None:  # remember which types an untyped copy was given
        ctx.copy_typings.setdefault((tc.type.atom, tc.type.layout_tv, tc.type.tiler), set()).add(
            element
        )
    if key in cache:
        return cache[key]
    t = TiledCopyType(tc.type.atom, element, tc.type.layout_tv, tc.type.tiler)
    typed = S.TiledCopy(None, t, tc.record)  # type: ignore[arg-type]
    with algebra_errors(node, "tiled_copy"):
        typed.type.library()  # CuTe's checks: the atom's value width, thread and value counts
    op = ctx.emit_at_entry(C.MakeTiledCopyOp(t), node)
    cache[key] = S.TiledCopy(op.result, t, tc.record)
    return cache[key]


def copy_for_coords(ctx: BuildContext, tc: S.TiledCopy, node: ast.Node) -> S.TiledCopy:
    """The typed copy that partitions a coordinate tensor like the data it guards."""
    if tc.value is not None:
        return tc
    seen = ctx.copy_typings.get((tc.type.atom, tc.type.layout_tv, tc.type.tiler), set())
    if len(seen) != 1:
        raise error(
            "a coordinate tensor is partitioned like the data of the copy's element "
            "type, which is not known here; name it (copy_atom(ATOM, f32)) or "
            "partition a data tensor first",
            node,
        )
    return typed_copy(ctx, tc, next(iter(seen)), node)


def b_tiled_mma(
    ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> S.TiledMma:
    """tiled_mma(atom, atoms=(M,N[,K]), tile=(M,N,K)): CuTe's make_tiled_mma."""
    atom = args[0] if args else None
    atoms = kwargs.pop("atoms", args[1] if len(args) > 1 else (1, 1, 1))
    perm = kwargs.pop("tile", kwargs.pop("permutation", args[2] if len(args) > 2 else None))
    acc = kwargs.pop("acc_dtype", None)
    if kwargs:
        raise error(f"tiled_mma has no argument '{next(iter(kwargs))}'", node)
    if not isinstance(atom, S.AtomRef) or atom.kind not in ("mma", "auto"):
        raise error(
            f"tiled_mma needs an MMA atom, got {describe(atom)}",
            node.args[0] if node.args else node,
        )
    atom_l = _layout(ctx, atoms, arg_node(node, "atoms", 1), "the atom layout")
    if atom_l.rank > 3:
        raise error(f"the atom layout {atom_l} has more than three (M,N,K) modes", node)
    if atom_l.rank < 3:
        shape = tuple(atom_l.shape) if isinstance(atom_l.shape, tuple) else (atom_l.shape,)
        stride = tuple(atom_l.stride) if isinstance(atom_l.stride, tuple) else (atom_l.stride,)
        pad = 3 - len(shape)
        atom_l = Layout(shape + (1,) * pad, stride + (0,) * pad)
    if perm is not None:
        perm = _mma_tile(perm, arg_node(node, "tile", 2))
    if acc is not None and (
        atom.kind != "auto" or not isinstance(acc, T.FloatType | T.IntegerType)
    ):
        what = "a named atom fixes its own" if atom.kind != "auto" else f"got {describe(acc)}"
        raise error(f"acc_dtype is an auto MMA's accumulator element type; {what}", node)
    if atom.kind == "auto":
        t = TiledMmaType(AUTO, T.f32, T.f32, T.f32, T.f32, spec_of(atom_l), perm)
        return S.TiledMma(None, t, None, node, acc)  # typed at its first use
    rec = atom.record
    d, a, b, c = (T.ir_type(dtype(x)) for x in (rec.d_type, rec.a_type, rec.b_type, rec.c_type))
    t = TiledMmaType(atom.name, d, a, b, c, spec_of(atom_l), perm)
    mma = S.TiledMma(None, t, rec, node)  # type: ignore[arg-type]
    with algebra_errors(node, "tiled_mma"):
        mma.type.library()
    check_threads(ctx, mma, "TiledMMA", node)
    op = ctx.emit(C.MakeTiledMmaOp(t), node)
    return S.TiledMma(op.result, t, rec, node)


def _mma_tile(perm: Any, node: ast.Node) -> tuple[Any, ...]:
    """A TiledMMA's `tile =` (CuTe's PermutationMNK): three modes, each a static extent
    or a static layout that also reorders the mode, e.g. ``(16, 4, 2) : (4, 1, 64)``."""
    modes = perm if isinstance(perm, tuple) else (perm,)
    elts = node.elts if isinstance(node, ast.Tuple) and len(node.elts) == len(modes) else None
    out: list[Any] = []
    for i, p in enumerate(modes):
        where = elts[i] if elts is not None else node
        if isinstance(p, ComposedLayout):
            raise error(f"an MMA tile mode is a plain layout, got the swizzled {p}", where)
        if isinstance(p, Layout):
            if not it.is_static(p.shape) or not it.is_static(p.stride):
                raise error(f"the MMA tile's layouts must be static, got {p}", where)
            out.append(p)
        else:
            out.append(to_int_tuple(p, where, "the MMA tile"))
    if len(out) != 3 or not all(isinstance(p, int | Layout) for p in out):
        shown = "(" + ", ".join(str(p) for p in out) + ")"
        raise error(
            f"the MMA tile must be three (M, N, K) modes, each a static size or layout; "
            f"got {shown}",
            node,
        )
    return tuple(out)


def typed_mma(ctx: BuildContext, m: S.TiledMma, node: ast.Node, **given: T.Type) -> S.TiledMma:
    """An auto MMA with its element types (see the module docstring); named ones as they are.

    `given` holds the element types of the operands this use sees (a, b, c).
    """
    cache = ctx.typed_mmas
    key = m.origin.span if m.origin is not None else id(m)
    if m.value is None and key not in cache:
        if not given:
            raise error(
                "this auto MMA has no element types yet: use it with a tensor first "
                "(partition_A, gemm, ...) or name its atom",
                node,
            )
        first = given.get("a") or given.get("b")
        if m.acc is not None:
            acc = m.acc
        elif first is not None:
            acc = _ACCUMULATOR.get(dtype_name(first), T.f32)
        else:
            acc = given["c"]
        a = given.get("a") or first or acc
        b = given.get("b") or first or acc
        c = given.get("c") or acc
        cache[key] = (select_auto_mma(ctx, m, c, a, b, c, node), node)
    if m.value is None:
        m, first_use = cache[key]
        for which, want in given.items():
            have = _operand_type(m, which.upper())
            if want != have and not (have == T.tf32 and want == T.f32):
                raise error(
                    f"this auto MMA was given {have} for {which.upper()} at its first "
                    f"use (line {first_use.span.line}); here {which.upper()} holds "
                    f"{want}",
                    node,
                )
    return m


def b_copy_atom(
    ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> S.AtomRef:
    """copy_atom(ATOM, dtype): CuTe's Copy_Atom<ATOM, T>."""
    if (
        len(args) != 2
        or not isinstance(args[0], S.AtomRef)
        or args[0].kind != "copy"
        or not isinstance(args[1], T.Type)
    ):
        raise error("copy_atom takes a copy atom and an element type", node)
    with algebra_errors(node, "copy_atom"):
        make_copy_atom(args[0].record, bits_of(args[1]))
    return S.AtomRef(args[0].kind, args[0].name, args[0].record, args[1])


def _tiled_copy_of_mma(which: str) -> Any:
    """make_tiled_copy_A/B/C(copy_atom, tiled_mma): the MMA's TV layout of one operand."""
    make = {"A": make_tiled_copy_A, "B": make_tiled_copy_B, "C": make_tiled_copy_C}[which]

    def fn(
        ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
    ) -> S.TiledCopy:
        name = f"tiled_copy_{which}"
        if kwargs or len(args) != 2:
            raise error(f"{name} takes a copy atom and a tiled MMA", node)
        atom, mma = args
        if not isinstance(atom, S.AtomRef) or atom.kind not in ("copy", "auto"):
            raise error(f"{name} needs a copy atom, got {describe(atom)}", node.args[0])
        if not isinstance(mma, S.TiledMma):
            raise error(f"{name} needs a tiled MMA, got {describe(mma)}", node.args[1])
        mma = typed_mma(ctx, mma, node)
        element = _operand_type(mma, which)
        if atom.element is not None and atom.element != element:
            raise error(
                f"{name}: the copy atom is for {atom.element} but the MMA's {which} "
                f"holds {element}",
                node,
            )
        lib = mma.type.library()
        bits = bits_of(element)
        with algebra_errors(node, name):
            values = int(size(lib.get_layout_TV(which), 1))  # type: ignore[arg-type]
            record = atom.record if atom.kind == "copy" else auto_copy_record(values, bits)
            tiled = make(make_copy_atom(record, bits), lib)
        t = TiledCopyType(
            atom.name if atom.kind == "copy" else AUTO,
            element,
            spec_of(tiled.layout_tv),
            tuple(int(x) for x in tiled.tiler_mn),
        )
        if atom.kind == "auto":  # typed at its first partition_S (operand_copy)
            return S.TiledCopy(None, t, None, mma, which, node)  # type: ignore[arg-type]
        return typed_copy(
            ctx,
            S.TiledCopy(
                None,
                t,
                atom.record
                if atom.kind == "copy"  # type: ignore[arg-type]
                else None,
            ),
            element,
            node,
        )

    return fn


TILED_BUILTINS = {
    "tiled_copy": b_tiled_copy,
    "make_tiled_copy": b_tiled_copy,
    "tiled_mma": b_tiled_mma,
    "make_tiled_mma": b_tiled_mma,
    "copy_atom": b_copy_atom,
    **{f"{prefix}tiled_copy_{w}": _tiled_copy_of_mma(w) for prefix in ("", "make_") for w in "ABC"},
}


# --------------------------------------------------------------------------- methods


_COPY_METHODS = ("partition_S", "partition_D", "retile_S", "retile_D")
_MMA_METHODS = (
    "partition_A",
    "partition_B",
    "partition_C",
    "make_fragment_A",
    "make_fragment_B",
    "make_fragment_C",
    "partition_fragment_A",
    "partition_fragment_B",
    "partition_fragment_C",
)


def call_method(
    ctx: BuildContext,
    obj: Any,
    name: str,
    args: list[Any],
    kwargs: dict[str, Any],
    node: ast.Call,
    attr_node: ast.Attribute,
) -> Any:
    # Errors about the method itself point at its name, not at the start of the chain.
    where = ast.Name(name, attr_node.attr_span)
    if kwargs:
        raise error(f"'{name}' takes no keyword arguments", where)
    if isinstance(obj, S.TmaAtom):
        return tma_method(ctx, obj, name, args, node, where)
    if isinstance(obj, S.TiledCopy | S.TiledMma):
        if name in ("slice", "get_slice", "get_thread_slice"):
            if len(args) != 1:
                raise error(f"'{name}' takes one thread index, got {len(args)}", where)
            tid = args[0]
            if not isinstance(tid, S.Runtime) and not is_static(tid):
                raise error(
                    f"the thread index must be an integer, got {describe(tid)}", node.args[0]
                )
            return S.ThrSlice(obj, tid)
        raise error(
            f"{describe(obj)} has no method '{name}' (slice it first: .slice(thread.x))", where
        )
    assert isinstance(obj, S.ThrSlice)
    tiled = obj.tiled
    allowed = _COPY_METHODS if isinstance(tiled, S.TiledCopy) else _MMA_METHODS
    if name not in allowed:
        kind = "a tiled copy" if isinstance(tiled, S.TiledCopy) else "a tiled MMA"
        raise error(
            f"a thread slice of {kind} has no method '{name}' (it has {', '.join(allowed)})", where
        )
    if len(args) != 1:
        raise error(f"'{name}' takes one tensor, got {len(args)} arguments", where)
    coords_ok = name.startswith("partition_") and isinstance(tiled, S.TiledCopy)
    t = tensor_arg(args[0], node.args[0], f"{name}'s argument", coords_ok=coords_ok)
    if isinstance(tiled, S.TiledCopy):
        return _copy_method(ctx, obj, tiled, name, t, node)
    return _mma_method(ctx, obj, tiled, name, t, node)


def _copy_method(
    ctx: BuildContext, obj: S.ThrSlice, tiled: S.TiledCopy, name: str, t: S.Tensor, node: ast.Call
) -> S.Tensor:
    if tiled.operand is not None:
        tiled = operand_copy(ctx, tiled, None if t.coord_rank else name, t, node)
    if t.coord_rank:
        tiled = copy_for_coords(ctx, tiled, node)
    else:
        tiled = typed_copy(ctx, tiled, t.element, node)
        if t.element != tiled.type.element:
            raise error(
                f"{name}: the tiled copy moves {tiled.type.element} but the tensor "
                f"holds {t.element}",
                node,
            )
    which = name[-1]
    attrs = {"operand": StringAttr(which)}
    if name.startswith("retile"):
        return build_view(ctx, C.RetileOp, t, [], attrs, node, name, atom=tiled.value)
    check_divides(t.layout, tuple(tiled.type.tiler), None, "TiledCopy's tile", node)
    tid = as_runtime(ctx, obj.tid, node, T.index).value
    return build_view(ctx, C.PartitionOp, t, [tid], attrs, node, name, atom=tiled.value)


# The (M, N, K) modes of the MMA tile each operand spans.
_MMA_MODES = {"A": (0, 2), "B": (1, 2), "C": (0, 1)}


def _mma_method(
    ctx: BuildContext, obj: S.ThrSlice, mma: S.TiledMma, name: str, t: S.Tensor, node: ast.Call
) -> S.Tensor:
    which = name[-1]
    # partition_C of global memory is the epilogue's view: axpby converts the
    # accumulators to C's type (f32 into f16 / bf16), so once the MMA is typed the
    # tensor's element type need not be the MMA's C type (CuTe's partition_C is a
    # layout operation on any tensor).
    key = mma.origin.span if mma.origin is not None else id(mma)
    typed = mma.value is not None or key in ctx.typed_mmas
    epilogue = name == "partition_C" and t.space is AddressSpace.GLOBAL and typed
    mma = typed_mma(ctx, mma, node, **({} if epilogue else {which.lower(): t.element}))
    want = _operand_type(mma, which)
    if not epilogue and t.element != want and not (want == T.tf32 and t.element == T.f32):
        raise error(
            f"{name}: the MMA takes {want} for {which} but the tensor holds {t.element}", node
        )
    if name.startswith("make_fragment"):
        return make_fragment(ctx, mma, which, t, node)
    if mma.type.atom != AUTO:  # an auto atom's tile is known once select-atoms chose it
        lib = mma.type.library()
        i, j = _MMA_MODES[which]
        tile = (lib.tile_size(i), lib.tile_size(j))
        check_divides(t.layout, tile, None, "TiledMMA's tile", node)
    tid = as_runtime(ctx, obj.tid, node, T.index).value
    attrs = {"operand": StringAttr(which)}
    part = build_view(ctx, C.PartitionOp, t, [tid], attrs, node, name, atom=mma.value)
    if name.startswith("partition_fragment"):
        return make_fragment(ctx, mma, which, part, node)
    return part


def make_fragment(
    ctx: BuildContext, mma: S.TiledMma, which: str, t: S.Tensor, node: ast.Node
) -> S.Tensor:
    """ThrMMA::make_fragment_A/B/C of a partitioned (V, M|N, K|N, ...) tensor."""
    lib = mma.type.library()
    want = size(lib.atom_layout_tv(which), 1)  # type: ignore[arg-type]
    if t.layout.rank < 3 or size(t.layout, 0) != want:
        raise error(
            f"make_fragment_{which} takes a partitioned tensor (MMA, MMA_M, MMA_K, ...) "
            f"whose first mode has the atom's {want} values; got {t.layout} "
            f"(partition it with partition_{which} first)",
            node,
        )
    element = _operand_type(mma, which)
    in_smem = {"A": lib.atom.a_in_smem, "B": lib.atom.b_in_smem, "C": False}[which]
    if in_smem:
        # A GMMA operand in shared memory is passed by descriptor: the fragment is the
        # partition itself (the lowering builds the descriptors from its layout).
        if t.space is not AddressSpace.SHARED:
            raise error(
                f"{mma.type.atom} reads {which} from shared memory through "
                f"descriptors; make_fragment_{which} needs an smem partition, not "
                f"{t.space.memory}",
                node,
            )
        return t
    with algebra_errors(node, f"make_fragment_{which}"):
        inner = t.layout.layout_b if isinstance(t.layout, ComposedLayout) else t.layout
        layout = Layout(inner.shape) if which == "C" else make_fragment_like(inner)
    return allocate(ctx, AddressSpace.REGISTER, element, layout, node)


def _operand_type(m: S.TiledMma, which: str) -> T.Type:
    return {"A": m.type.a_type, "B": m.type.b_type, "C": m.type.c_type}[which]


def resolve_gemm_mma(
    ctx: BuildContext, mma: S.TiledMma, a: S.Tensor, b: S.Tensor, c: S.Tensor, node: ast.Node
) -> S.TiledMma:
    """The typed MMA of gemm(mma, A, B, C); an auto MMA is typed here if not before."""
    mma = typed_mma(ctx, mma, node, a=a.element, b=b.element, c=c.element)
    rec = mma.record
    for name, t, in_smem in (
        ("A", a, rec is not None and rec.a_in_smem),
        ("B", b, rec is not None and rec.b_in_smem),
    ):
        if in_smem and t.space is not AddressSpace.SHARED:
            raise error(
                f"gemm: {mma.type.atom} reads {name} from shared memory (a GMMA "
                f"descriptor), but {name} is a {t.space.memory} tensor",
                node,
            )
    return mma


def emit_copy(
    ctx: BuildContext,
    atom: Any,
    src: S.Tensor,
    dst: S.Tensor,
    node: ast.Call,
    pred: S.Tensor | None = None,
) -> None:
    """copy(tiled_copy, src, dst[, pred]): synchronous, cp.async, or predicated."""
    if isinstance(atom, S.TiledCopy):
        if atom.operand is not None:
            atom = operand_copy(ctx, atom, None, None, node)
        atom = typed_copy(ctx, atom, src.element, node)
        if atom.type.element != src.element:
            raise error(
                f"the tiled copy moves {atom.type.element} but the tensors hold {src.element}", node
            )
        _check_spaces(atom.record, src, dst, node)
        rec = atom.record
        asynchronous = rec is not None and rec.async_completion == "cp.async.group"
        if asynchronous:
            # CuTe's copy_if with a cp.async atom: a predicated cute.copy_async (a _ZFILL
            # atom zero-fills the masked-off elements, any other skips them)
            p = pred.value if pred is not None else None
            op = ctx.emit(C.CopyAsyncOp(atom.value, src.value, dst.value, p), node)
            ctx.pending_tokens.append(op.result)
        elif pred is not None:
            ctx.emit(C.CopyIfOp(pred.value, src.value, dst.value, atom.value), node)
        else:
            ctx.emit(C.CopyOp(src.value, dst.value, atom.value), node)
        return
    if isinstance(atom, S.AtomRef) and atom.kind == "copy":
        if atom.element is not None and atom.element != src.element:
            raise error(
                f"the copy atom is for {atom.element} but the tensors hold {src.element}", node
            )
        _check_spaces(atom.record, src, dst, node)
        if pred is not None:
            raise error(
                "a predicated copy takes a tiled copy (or none): "
                "copy(tiled_copy, src, dst, pred = p)",
                node,
            )
        if atom.record is not None and atom.record.async_completion is not None:
            raise error(f"{atom.name} is asynchronous; copy with a tiled copy made from it", node)
        op = C.CopyOp(src.value, dst.value)
        op.attributes["atom"] = StringAttr(atom.name)
        ctx.emit(op, node)
        return
    raise error(
        f"copy's first argument must be a tiled copy or a copy atom, got {describe(atom)}",
        node.args[0],
    )


def _check_spaces(rec: Any, src: S.Tensor, dst: S.Tensor, node: ast.Node) -> None:
    if rec is None:
        return
    if src.space not in rec.src_spaces or dst.space not in rec.dst_spaces:

        def names(spaces: Any) -> str:
            return "/".join(s.memory_or_none or s.value for s in spaces)

        raise error(
            f"copy atom {rec.name} copies {names(rec.src_spaces)} to "
            f"{names(rec.dst_spaces)}, not {src.space.memory} to {dst.space.memory}",
            node,
        )


def fragment_layout(layout: Any) -> Layout:
    """CuTe's make_fragment_like(layout): registers in the layout's mode order."""
    if isinstance(layout, ComposedLayout):
        layout = layout.layout_b  # registers are never swizzled
    return make_fragment_like(layout)


__all__ = [
    "TILED_BUILTINS",
    "call_method",
    "emit_copy",
    "fragment_layout",
    "num_threads",
    "resolve_gemm_mma",
]
