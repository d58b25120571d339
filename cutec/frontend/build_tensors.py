"""Tensors in the IR builder: views, allocations and the builtins that take tensors.

Every view (local_tile, local_partition, the divides, slices) is one cute op
whose result type the layout algebra computes here; allocations are
`cute.alloc_smem` / `cute.make_fragment` with static layouts; copy, gemm,
clear, fill and axpby check shapes and element types before emitting their
op. Coordinate tensors (`make_identity_tensor`, see `cute_coord`) take the
same views as data tensors and are read one coordinate at a time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cutec.frontend import ast
from cutec.frontend import scope as S
from cutec.frontend.build_exprs import is_static_tuple
from cutec.frontend.build_tiled import emit_copy, fragment_layout, resolve_gemm_mma
from cutec.frontend.static_eval import (
    algebra_errors,
    bits_of,
    check_divides,
    describe,
    error,
    is_layout,
)
from cutec.ir import types as T
from cutec.ir.attributes import StringAttr
from cutec.ir.dialects import arith
from cutec.ir.dialects import cute as C
from cutec.ir.dialects.cute_attrs import LayoutAttr, TupleAttr
from cutec.ir.dialects.cute_coord import identity_layout
from cutec.ir.dialects.cute_infer import spec_of
from cutec.ir.dialects.cute_types import DYN
from cutec.layout import ComposedLayout, Layout, X, cosize, make_layout_like, size
from cutec.layout.inttuple import format_tuple, leaves
from cutec.layout.inttuple import rank as _rank
from cutec.layout.symbolic import SymInt, is_static
from cutec.target import KIB, AddressSpace

if TYPE_CHECKING:
    from cutec.frontend.builder import KernelBuilder

    _Base = KernelBuilder
else:
    _Base = object

DIVIDES = ("logical_divide", "zipped_divide", "tiled_divide", "flat_divide")


def _instruction_partition(value: Any) -> str | None:
    """The copy atom whose thread partition `value` is a view of, when that atom is one
    instruction's fixed register layout (ldmatrix, stmatrix, TMA), else None."""
    op = getattr(value, "op", None)
    while op is not None:
        if isinstance(op, C.PartitionOp | C.RetileOp):
            atom_type = op.atom.type
            if isinstance(atom_type, C.TiledCopyType):
                name = atom_type.atom
                plain = name == "auto" or name.startswith(("UniversalCopy", "SM80_CP_ASYNC"))
                return None if plain else name
            return None
        source = getattr(op, "source", None)
        op = getattr(source, "op", None) if source is not None else None
    return None


class TensorMixin(_Base):
    """Tensor views, allocations and tensor builtins; mixed into the KernelBuilder."""

    # ------------------------------------------------------------------ tensors
    def tensor_type(self, t: S.Tensor, layout: Any) -> Any:
        """The type of a view of `t` with `layout` (a coordinate tensor stays one)."""
        if t.coord_rank:
            return C.CoordTensorType(t.coord_rank, spec_of(layout))
        return C.TensorType(t.element, t.space, spec_of(layout))

    def view(self, op: Any, src: S.Tensor, layout: Any, node: ast.Node) -> S.Tensor:
        self.checked_layout(layout, node)
        self.emit(op, node)
        return S.Tensor(op.result, layout, src.element, src.space, src.coord_rank)

    def build_view(
        self,
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
            result_types=[self.tensor_type(src, layout)],
            attributes=attributes,
        )
        return self.view(op, src, layout, node)

    def zero_coord(self, c: Any) -> Any:
        """A coordinate for the algebra: run-time parts are 0 (they move the base only)."""
        if isinstance(c, list | tuple):
            return tuple(self.zero_coord(x) for x in c)
        if c is None or c is X:
            return c
        if isinstance(c, S.Runtime | SymInt):
            return 0
        return c

    def coord_attr(self, c: Any, nodes: Any) -> tuple[TupleAttr, list[Any]]:
        """A coordinate as ``#cute.tuple`` (run-time leaves '?') and its index operands."""
        operands: list[Any] = []

        def walk(x: Any, n: ast.Node) -> Any:
            if isinstance(x, list | tuple):
                ns = n.elts if isinstance(n, ast.Tuple) else [n] * len(x)
                return tuple(walk(e, m) for e, m in zip(x, ns, strict=True))
            if x is None or x is X:
                return x
            if isinstance(x, S.Runtime):
                operands.append(self.as_runtime(x, n, T.index).value)
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
        self, v: Any, node: ast.Node, what: str = "this argument", coords_ok: bool = False
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

    def layout_arg(self, v: Any, node: ast.Node, what: str = "this argument") -> Any:
        if is_layout(v):
            return v
        if isinstance(v, tuple | int) and is_static_tuple(v):
            return Layout(v)
        raise error(f"{what} must be a layout, got {describe(v)}", node)

    def alloc(self, node: ast.Alloc) -> S.Tensor:
        element = self.eval(node.dtype)
        if not isinstance(element, T.Type):
            raise error(f"'{node.dtype.id}' is not an element type", node.dtype)
        layout = self.eval(node.layout)
        if isinstance(layout, tuple) and is_static_tuple(layout):
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
        return self.allocate(AddressSpace.from_memory(node.space), element, layout, node)

    def allocate(
        self, space: AddressSpace, element: T.Type, layout: Any, node: ast.Node
    ) -> S.Tensor:
        spec = spec_of(layout)
        if spec.dynamic_count:
            raise error(
                f"{space.memory} needs a compile-time layout, but {layout} has run-time leaves",
                node,
            )
        self.checked_layout(layout, node)
        with algebra_errors(node):
            n = int(cosize(layout.layout_b if isinstance(layout, ComposedLayout) else layout))
        nbytes = n * bits_of(element) // 8
        t = C.TensorType(element, space, spec)
        if space is AddressSpace.SHARED:
            self.smem_bytes += nbytes
            limit = self.target.smem_per_cta
            if self.smem_bytes > limit:
                raise error(
                    f"shared memory use reaches {self.smem_bytes} bytes with this "
                    f"{nbytes}-byte buffer; the limit on {self.target} is {limit} "
                    f"({limit // KIB} KiB per CTA)",
                    node,
                )
            op = self.emit(C.AllocSmemOp(t), node)
        else:
            if n > 4096:
                raise error(
                    f"a register tensor of {n} elements is too large (at most 4096 per thread)",
                    node,
                )
            op = self.emit(C.MakeFragmentOp(t), node)
        return S.Tensor(op.result, layout, element, space)

    # -- tensors --------------------------------------------------------------------------
    def b_local_tile(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> S.Tensor:
        self.arity("local_tile", args, 3, 4, node)
        t = self.tensor_arg(args[0], node.args[0], "local_tile's first argument", coords_ok=True)
        if is_layout(args[1]):
            return self._local_tile_by_layout(t, args, kwargs, node)
        tiler = self.to_int_tuple(args[1], node.args[1], "a tiler")
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
                f"a tiler of {len(kept)} modes cannot tile a rank-{t.layout.rank} "
                f"tensor {t.layout}",
                node,
            )
        coord_attr, operands = self.coord_attr(coord, node.args[2])  # checks its leaves
        attrs = {"tiler": TupleAttr(tiler), "coord": coord_attr}
        if step is not None:
            attrs["proj"] = TupleAttr(step)
        return self.build_view(C.LocalTileOp, t, operands, attrs, node, "local_tile")

    def _local_tile_by_layout(
        self, t: S.Tensor, args: list[Any], kwargs: dict[str, Any], node: ast.Call
    ) -> S.Tensor:
        """local_tile(t, L, coord) with a layout tiler L: the tile of zipped_divide(t, L)
        at coord (CuTe's Layout tiler: L picks the tile's elements and their order)."""
        if len(args) > 3 or kwargs:
            raise error("local_tile with a layout tiler takes no step", node)
        attrs = {"tiler": self._layout_tiler(args[1], node.args[1])}
        coord_attr, operands = self.coord_attr(args[2], node.args[2])
        attrs["coord"] = coord_attr
        return self.build_view(C.LocalTileOp, t, operands, attrs, node, "local_tile")

    def _layout_tiler(self, v: Any, node: ast.Node) -> LayoutAttr:
        if isinstance(v, ComposedLayout) or not is_static_tuple((v.shape, v.stride)):
            raise error(f"a layout tiler must be a static plain layout, got {describe(v)}", node)
        return LayoutAttr.of(v)

    def b_local_partition(
        self, args: list[Any], kwargs: dict[str, Any], node: ast.Call
    ) -> S.Tensor:
        self.arity("local_partition", args, 3, 4, node)
        t = self.tensor_arg(
            args[0], node.args[0], "local_partition's first argument", coords_ok=True
        )
        thr = self.layout_arg(args[1], node.args[1], "the thread layout")
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
        tid_v = self.as_runtime(tid, node.args[2], T.index).value
        attrs: dict[str, Any] = {"thr_layout": LayoutAttr.of(thr)}
        if step is not None:
            attrs["proj"] = TupleAttr(step)
        return self.build_view(C.LocalPartitionOp, t, [tid_v], attrs, node, "local_partition")

    def b_make_tensor_like(
        self, args: list[Any], kwargs: dict[str, Any], node: ast.Call
    ) -> S.Tensor:
        """make_tensor_like(t[, dtype]): registers with t's shape, compact in its mode order."""
        t, element = self._like_args("make_tensor_like", args, kwargs, node)
        with algebra_errors(node):
            inner = t.layout.layout_b if isinstance(t.layout, ComposedLayout) else t.layout
            layout = make_layout_like(inner)
        return self.allocate(AddressSpace.REGISTER, element, layout, node)

    def b_make_fragment_like(
        self, args: list[Any], kwargs: dict[str, Any], node: ast.Call
    ) -> S.Tensor:
        """make_fragment_like(t[, dtype]): registers, mode 0 compact (CuTe's FrgV first)."""
        t, element = self._like_args("make_fragment_like", args, kwargs, node)
        with algebra_errors(node):
            layout = fragment_layout(t.layout)
        return self.allocate(AddressSpace.REGISTER, element, layout, node)

    def _like_args(
        self, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.Call
    ) -> tuple[S.Tensor, T.Type]:
        self.arity(name, args, 1, 2, node)
        element = kwargs.pop("dtype", args[1] if len(args) > 1 else None)
        if kwargs:
            raise error(f"{name} has no argument '{next(iter(kwargs))}'", node)
        t = self.tensor_arg(args[0], node.args[0], f"{name}'s argument", coords_ok=True)
        if element is None and t.coord_rank:
            raise error(
                f"{name} of a coordinate tensor needs the element type ({name}(t, dtype = bool))",
                node,
            )
        element = t.element if element is None else element
        if not isinstance(element, T.Type):
            raise error(f"{name}'s dtype must be an element type, got {describe(element)}", node)
        return t, element

    # -- memory ---------------------------------------------------------------------------
    def b_copy(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> None:
        self.arity("copy", args, 2, 3, node)
        pred_v = kwargs.pop("pred", None)
        if kwargs:
            raise error(f"copy has no argument '{next(iter(kwargs))}' (it takes pred = p)", node)
        atom = args[0] if len(args) == 3 else None
        src = self.tensor_arg(args[-2], node.args[-2], "the copy's source")
        dst = self.tensor_arg(args[-1], node.args[-1], "the copy's destination")
        self.check_same_size(src, dst, node, "copy")
        if src.element != dst.element:
            raise error(f"copy from {src.element} to {dst.element}: the element types differ", node)
        if dst.space is AddressSpace.GLOBAL and src.space is AddressSpace.GLOBAL:
            raise error(
                "copy from global memory to global memory: stage it through "
                "registers or shared memory",
                node,
            )
        pred = None
        if pred_v is not None:
            pred_node = next(k.value for k in node.kwargs if k.name == "pred")
            pred = self.tensor_arg(pred_v, pred_node, "the copy's predicate")
            if pred.element != T.i1 or pred.space is not AddressSpace.REGISTER:
                raise error(
                    f"the predicate must be a bool register tensor "
                    f"(make_fragment_like(t, dtype = bool)), not {describe(pred)} of "
                    f"{pred.element}",
                    pred_node,
                )
            self.check_same_size(pred, src, node, "copy", ("the predicate", "the source"))
        if atom is None:
            for t, which in ((src, 0), (dst, 1)):
                owner = _instruction_partition(t.value)
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
            self.emit(op, node)
            return
        emit_copy(self, atom, src, dst, node, pred)

    def check_same_size(
        self,
        a: S.Tensor,
        b: S.Tensor,
        node: ast.Node,
        what: str,
        names: tuple[str, str] = ("the source", "the destination"),
    ) -> None:
        sa, sb = size(a.layout), size(b.layout)
        if is_static(sa) and is_static(sb) and sa != sb:
            raise error(
                f"{what}: {names[0]} has {sa} elements {format_tuple(a.layout.shape)} "
                f"but {names[1]} "
                f"has {sb} {format_tuple(b.layout.shape)}",
                node,
            )

    def b_gemm(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> None:
        self.arity("gemm", args, 3, 4, node)
        mma = args[0] if len(args) == 4 else None
        a, b, c = (
            self.tensor_arg(v, n, f"gemm's {w}")
            for v, n, w in zip(args[-3:], node.args[-3:], ("A", "B", "C"), strict=True)
        )
        if c.space is AddressSpace.GLOBAL:
            raise error(
                "gemm accumulates into registers (or shared memory), not a gmem "
                "tensor; make a fragment with make_tensor_like",
                node.args[-1],
            )
        if mma is None:
            self.check_gemm_shapes(a, b, c, node)
            self.emit(C.GemmOp(a.value, b.value, c.value), node)
            return
        if not isinstance(mma, S.TiledMma):
            raise error(
                f"gemm's first argument must be a tiled MMA, got {describe(mma)}", node.args[0]
            )
        mma = resolve_gemm_mma(self, mma, a, b, c, node)
        for name, t, want in (
            ("A", a, mma.type.a_type),
            ("B", b, mma.type.b_type),
            ("C", c, mma.type.c_type),
        ):
            if t.element != want and not (str(want) == "tf32" and t.element == T.f32):
                raise error(f"gemm's {name} holds {t.element} but the MMA atom takes {want}", node)
        self.emit(C.GemmOp(a.value, b.value, c.value, mma.value), node)

    def check_gemm_shapes(self, a: S.Tensor, b: S.Tensor, c: S.Tensor, node: ast.Node) -> None:
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

    def b_clear(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> None:
        self.arity("clear", args, 1, 1, node)
        t = self.tensor_arg(args[0], node.args[0], "clear's argument")
        self.emit(C.ClearOp(t.value), node)

    def b_fill(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> None:
        self.arity("fill", args, 2, 2, node)
        t = self.tensor_arg(args[0], node.args[0], "fill's tensor")
        v = self.as_runtime(args[1], node.args[1], t.element)
        self.emit(C.FillOp(t.value, v.value), node)

    def b_axpby(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> None:
        self.arity("axpby", args, 4, 4, node)
        x = self.tensor_arg(args[1], node.args[1], "axpby's x")
        y = self.tensor_arg(args[3], node.args[3], "axpby's y")
        self.check_same_size(x, y, node, "axpby", ("x", "y"))
        if x.element != y.element:
            raise error(f"axpby: x holds {x.element} but y holds {y.element}", node)
        alpha = self.as_runtime(args[0], node.args[0], y.element)
        beta = self.as_runtime(args[2], node.args[2], y.element)
        self.emit(C.AxpbyOp(alpha.value, x.value, beta.value, y.value), node)

    # -- divides, identity tensors, predicates --------------------------------------------
    def b_make_tensor(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> S.Tensor:
        """make_tensor(t, layout): the memory of tensor t (from its first element, as
        CuTe's ``make_tensor(t.data(), layout)``) seen through another layout."""
        self.arity("make_tensor", args, 2, 2, node)
        if kwargs:
            raise error(f"make_tensor has no argument '{next(iter(kwargs))}'", node)
        t = self.tensor_arg(args[0], node.args[0], "make_tensor's memory")
        layout = self.layout_arg(args[1], node.args[1], "make_tensor's layout")
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
        zero = self.const_index(0, node).value
        dynamic = [
            self.materialize(x, node.args[1]).value
            for x in leaves((layout.shape, layout.stride))
            if not is_static(x)
        ]
        op = C.ViewOp(t.value, zero, dynamic, self.tensor_type(t, layout))
        return self.view(op, t, layout, node)

    def b_recast(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> S.Tensor:
        """recast(t, dtype): t's bytes as elements of dtype (CuTe's recast<T>(t))."""
        self.arity("recast", args, 2, 2, node)
        if kwargs:
            raise error(f"recast has no argument '{next(iter(kwargs))}'", node)
        t = self.tensor_arg(args[0], node.args[0], "recast's tensor")
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
        self.emit(op, node)
        return S.Tensor(op.result, layout, element, t.space)

    def tensor_compose(self, t: S.Tensor, args: list[Any], node: ast.Call) -> S.Tensor:
        """composition(t, layout): t's memory seen through ``t.layout ∘ layout``."""
        if len(args) != 2:
            raise error("composition of a tensor takes the tensor and a layout", node)
        layout = self.layout_arg(args[1], node.args[1], "the layout composed with a tensor")
        if not (isinstance(layout, Layout) and is_static_tuple((layout.shape, layout.stride))):
            raise error(
                f"a tensor composes with a static layout, got {describe(args[1])}", node.args[1]
            )
        attrs = {"layout": LayoutAttr.of(layout)}
        return self.build_view(C.ComposeOp, t, [], attrs, node, "composition")

    def tensor_divide(
        self, name: str, t: S.Tensor, args: list[Any], kwargs: dict[str, Any], node: ast.Call
    ) -> S.Tensor:
        """logical/zipped/tiled/flat_divide of a tensor: a `cute.divide` view."""
        if kwargs or len(args) != 2:
            raise error(f"'{name}' of a tensor takes the tensor and a tiler", node)
        if is_layout(args[1]):
            attrs = {
                "kind": StringAttr(name.removesuffix("_divide")),
                "tiler": self._layout_tiler(args[1], node.args[1]),
            }
            return self.build_view(C.DivideOp, t, [], attrs, node, name)
        tiler = self.to_int_tuple(args[1], node.args[1], "a tiler")
        if not is_static_tuple(tiler):
            raise error(
                f"the tiler {format_tuple(tiler)} must be known at compile time", node.args[1]
            )
        if _rank(tiler) > t.layout.rank:
            raise error(
                f"a tiler of {_rank(tiler)} modes cannot divide a rank-"
                f"{t.layout.rank} tensor {t.layout}",
                node,
            )
        attrs = {"kind": StringAttr(name.removesuffix("_divide")), "tiler": TupleAttr(tiler)}
        return self.build_view(C.DivideOp, t, [], attrs, node, name)

    def b_make_identity_tensor(
        self, args: list[Any], kwargs: dict[str, Any], node: ast.Call
    ) -> S.Tensor:
        """make_identity_tensor(shape): the coordinate tensor of a flat shape."""
        self.arity("make_identity_tensor", args, 1, 1, node)
        shape = self.to_int_tuple(args[0], node.args[0], "an identity tensor's shape")
        if isinstance(shape, tuple) and any(isinstance(m, tuple) for m in shape):
            raise error(
                f"make_identity_tensor takes a flat shape, got {format_tuple(shape)}", node.args[0]
            )
        layout = identity_layout(shape)
        extents = [
            self.materialize(x, node.args[0]).value for x in leaves(shape) if not is_static(x)
        ]
        rank = len(shape) if isinstance(shape, tuple) else 1
        t = C.CoordTensorType(rank, spec_of(layout))
        op = self.emit(C.MakeIdentityTensorOp(extents, t), node)
        return S.Tensor(op.result, layout, T.index, "coord", rank)

    def materialize(self, x: Any, node: ast.Node) -> S.Runtime:
        """A run-time value for a static int or a kernel extent / stride (a SymInt)."""
        if isinstance(x, S.Runtime):
            return x
        if isinstance(x, SymInt):
            found = self.sym_values.get(x)
            if found is None:
                raise error(
                    f"the run-time value {x} is not an extent, stride or int "
                    "parameter of the kernel",
                    node,
                )
            return found
        return self.as_runtime(x, node, T.index)

    def coord_element(self, t: S.Tensor, index: Any, node: ast.Node) -> tuple[S.Runtime, ...]:
        """t[i] of a coordinate tensor: its coordinate, one `cute.load_coord` per mode."""
        i = self.as_runtime(index, node, T.index).value
        return tuple(
            S.Runtime(self.emit(C.LoadCoordOp(t.value, i, k), node).result)
            for k in range(t.coord_rank)
        )

    def b_elem_less(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        """elem_less(a, b): every mode of coordinate a is below that of b (CuTe's elem_less)."""
        self.arity("elem_less", args, 2, 2, node)
        a, b = args
        a_t, b_t = (v if isinstance(v, tuple) else (v,) for v in (a, b))
        if len(a_t) > len(b_t):
            raise error(
                f"elem_less: a coordinate of {len(a_t)} modes against a shape of {len(b_t)}", node
            )
        result: Any = True
        for x, y in zip(a_t, b_t, strict=False):
            if isinstance(x, tuple) or isinstance(y, tuple):
                less = self.b_elem_less([x, y], {}, node)
            elif is_static(x) and is_static(y):
                less = x < y
            else:
                xv = self.materialize(x, node.args[0]).value
                yv = self.materialize(y, node.args[1]).value
                less = S.Runtime(self.emit(arith.CmpIOp("slt", xv, yv), node).result)
            result = self._and(result, less, node)
        return result

    def _and(self, a: Any, b: Any, node: ast.Node) -> Any:
        if isinstance(a, bool):
            return b if a else False
        if isinstance(b, bool):
            return a if b else False
        return S.Runtime(self.emit(arith.AndIOp(a.value, b.value), node).result)

    def b_as_position_independent_swizzle_tensor(
        self, args: list[Any], kwargs: dict[str, Any], node: ast.Call
    ) -> S.Tensor:
        """The tensor itself: cutec's smem swizzles already act on element offsets from the
        buffer's (swizzle-aligned) base, which is what CuTe's conversion produces."""
        self.arity("as_position_independent_swizzle_tensor", args, 1, 1, node)
        t = self.tensor_arg(args[0], node.args[0], "its argument")
        if t.space is not AddressSpace.SHARED:
            raise error(
                "as_position_independent_swizzle_tensor takes an smem tensor, not "
                f"{t.space.memory}",
                node.args[0],
            )
        return t


__all__ = ["DIVIDES", "TensorMixin"]
