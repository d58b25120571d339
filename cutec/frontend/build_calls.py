"""Calls, members, indexing and allocation for the IR builder: the language's builtins.

Layout functions run in the algebra at compile time; tensor functions emit
cute ops whose result types the algebra computes; atoms and tiled objects are
looked up in the atom library (its error texts become the diagnostics).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cutec.frontend import ast
from cutec.frontend import scope as S
from cutec.frontend.build_exprs import is_static_tuple
from cutec.frontend.static_eval import (
    SMEM_LIMIT_BYTES,
    UINT_BITS,
    algebra_errors,
    bits_of,
    describe,
    error,
    is_layout,
)
from cutec.ir import types as T
from cutec.ir.attributes import IntegerAttr
from cutec.ir.dialects import arith, thread
from cutec.ir.dialects import cute as C
from cutec.ir.dialects.cute_attrs import LayoutAttr, TupleAttr
from cutec.ir.dialects.cute_infer import local_partition, local_tile, slice_view, spec_of
from cutec.ir.dialects.cute_types import DYN
from cutec.ir.layout import (
    ComposedLayout,
    Layout,
    LayoutLeft,
    LayoutRight,
    Swizzle,
    X,
    cosize,
    make_layout,
    size,
)
from cutec.ir.layout import algebra as LA
from cutec.ir.layout import divide as LD
from cutec.ir.layout.symbolic import SymInt, is_static

if TYPE_CHECKING:
    from cutec.frontend.builder import KernelBuilder

    _Base = KernelBuilder
else:
    _Base = object

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

_BUILTINS = (
    "thread", "block", "threadIdx", "blockIdx", "make_layout", "make_shape", "make_stride",
    "make_coord", "make_tile", "swizzle", "size", "rank", "cosize", "shape", "stride",
    "ceil_div", "min", "max", "static_assert", "local_tile", "local_partition",
    "make_tensor_like", "make_fragment_like", "copy", "gemm", "clear", "fill", "axpby",
    "sync", "syncthreads", "__syncthreads", "cp_async_fence", "cp_async_wait",
    "tiled_copy", "make_tiled_copy", "tiled_mma", "make_tiled_mma", "copy_atom",
    "tiled_copy_A", "tiled_copy_B", "tiled_copy_C", "make_tiled_copy_A",
    "make_tiled_copy_B", "make_tiled_copy_C", "UniversalCopy", "UniversalFMA",
    "LayoutLeft", "LayoutRight", *_ALGEBRA,
)


class CallMixin(_Base):
    """Builtins; mixed into the KernelBuilder."""

    def builtin_names(self) -> list[str]:
        return list(_BUILTINS)

    def builtin(self, name: str) -> Any:
        if name in ("LayoutLeft", "LayoutRight"):
            return LayoutLeft if name == "LayoutLeft" else LayoutRight
        if name in _BUILTINS:
            return S.Builtin(name)
        return self.named_atom(name)

    def named_atom(self, name: str) -> S.AtomRef | None:
        """A bare atom name: an MMA atom (SM80_16x8x16_...) or a fixed copy atom."""
        from cutec.atoms.copy import copy_atoms
        from cutec.atoms.mma import mma_atoms

        if name in mma_atoms():
            return S.AtomRef("mma", name, mma_atoms()[name])
        for a in copy_atoms():
            if a.name == name:
                return S.AtomRef("copy", name, a)
        if any(a.name.startswith(name + "<") for a in copy_atoms()):
            return S.AtomRef("family", name)
        return None

    # ------------------------------------------------------------------ members
    def attribute(self, v: Any, node: ast.Attribute) -> Any:
        if isinstance(v, S.Builtin) and v.name in ("thread", "block", "threadIdx", "blockIdx"):
            if node.attr not in ("x", "y", "z"):
                raise error(f"'{v.name}' has members x, y and z, not '{node.attr}'",
                            ast.Name(node.attr, node.attr_span))
            return self.special_register(v.name, node.attr, node)
        if isinstance(v, S.Tensor):
            if node.attr == "layout":
                return v.layout
            if node.attr == "shape":
                return v.layout.shape
        if is_layout(v) and node.attr in ("shape", "stride"):
            inner = v.layout_b if isinstance(v, ComposedLayout) else v
            return getattr(inner, node.attr)
        if isinstance(v, S.TiledCopy | S.TiledMma | S.ThrSlice):
            return ("method", v, node.attr, node)
        raise error(f"{describe(v)} has no member '{node.attr}'",
                    ast.Name(node.attr, node.attr_span))

    def special_register(self, ns: str, dim: str, node: ast.Node) -> S.Runtime:
        key = f"{ns[:5]}.{dim}"
        if key not in self.special:
            cls = thread.ThreadIdOp if ns.startswith("thread") else thread.BlockIdOp
            op = self.emit_at_entry(cls(dim), node)
            op.result.name_hint = ("tid_" if cls is thread.ThreadIdOp else "bid_") + dim
            self.special[key] = S.Runtime(op.result)
        return self.special[key]

    # ------------------------------------------------------------------ indexing
    def index(self, v: Any, node: ast.Index) -> Any:
        family = (isinstance(v, S.Builtin) and v.name in ("UniversalCopy", "UniversalFMA")) or (
            isinstance(v, S.AtomRef) and v.kind == "family")
        if family and len(node.indices) == 1 and isinstance(node.indices[0], ast.Name) \
                and node.indices[0].id in UINT_BITS \
                and self.scope.lookup(node.indices[0].id) is None:
            idx: list[Any] = [node.indices[0].id]
        else:
            idx = [self.eval(i) for i in node.indices]
        if isinstance(v, S.Builtin) and v.name in ("UniversalCopy", "UniversalFMA"):
            return self.atom_family(v.name, idx, node)
        if isinstance(v, S.AtomRef) and v.kind == "family":
            return self.atom_family(v.name, idx, node)
        if isinstance(v, S.FuncRef | S.Builtin):
            return ("ct_args", v, idx, node)
        if isinstance(v, S.Tensor):
            return self.tensor_index(v, idx, node)
        if isinstance(v, tuple):
            i = self.require_int(idx[0], node.indices[0], "a tuple index")
            if len(idx) != 1 or not 0 <= i < len(v):
                raise error(f"index {i} is out of range for a tuple of {len(v)}", node)
            return v[i]
        if is_layout(v):
            with algebra_errors(node):
                return v(*[None if i is None else i for i in idx]) if any(i is None for i in idx) \
                    else v(*idx)
        raise error(f"{describe(v)} cannot be indexed", node)

    def atom_family(self, family: str, idx: list[Any], node: ast.Index) -> S.AtomRef:
        from cutec.atoms.copy import copy_atom
        from cutec.atoms.mma import mma_atoms

        if len(idx) != 1:
            raise error(f"{family}[...] takes one type", node)
        arg = idx[0]
        arg_node = node.indices[0]
        if family == "UniversalFMA":
            if not isinstance(arg, T.Type):
                raise error(f"UniversalFMA[...] takes an element type, got {describe(arg)}",
                            arg_node)
            from cutec.ir.dialects.cute_compute import dtype_name

            name = "UniversalFMA_" + dtype_name(arg).upper() * 4
            if name not in mma_atoms():
                raise error(f"no UniversalFMA for {arg} (f32, f64, f16, s32)", arg_node)
            return S.AtomRef("mma", name, mma_atoms()[name])
        if isinstance(arg_node, ast.Name) and arg_node.id in UINT_BITS:
            bits = UINT_BITS[arg_node.id]
        elif isinstance(arg, T.Type):
            bits = bits_of(arg)
        else:
            raise error(f"{family}[...] takes u8..u128 or an element type, got {describe(arg)}",
                        arg_node)
        name = f"{family}<uint{bits}_t>"
        with algebra_errors(node):
            return S.AtomRef("copy", name, copy_atom(name))

    def tensor_index(self, t: S.Tensor, idx: list[Any], node: ast.Index) -> Any:
        rank = t.layout.rank
        if any(i is None for i in idx):
            if len(idx) != rank:
                raise error(f"slicing a rank-{rank} tensor needs {rank} coordinates, got "
                            f"{len(idx)}", node)
            coord, operands = self.coord_attr(idx, node.indices)
            with algebra_errors(node):
                layout = slice_view(t.layout, self.zero_coord(idx))
            return self.view(C.SliceOp(t.value, operands, self.tensor_type(t, layout), coord),
                             t, layout, node)
        if len(idx) == 1:
            i = self.as_runtime(idx[0], node.indices[0], T.index)
            return S.Runtime(self.emit(C.LoadOp(t.value, i.value), node).result)
        raise error(f"an element is read with one linear index or a slice with '_'; got "
                    f"{len(idx)} coordinates", node)

    def store_element(self, target: ast.Index, value: Any, stmt: ast.Node) -> None:
        t = self.eval(target.value)
        if not isinstance(t, S.Tensor):
            raise error(f"only tensor elements can be assigned, not {describe(t)}", target)
        if len(target.indices) != 1:
            raise error("an element is written with one linear index", target)
        i = self.as_runtime(self.eval(target.indices[0]), target.indices[0], T.index)
        v = self.as_runtime(value, stmt, t.element)
        self.emit(C.StoreOp(v.value, t.value, i.value), stmt)

    # ------------------------------------------------------------------ tensors
    def tensor_type(self, t: S.Tensor, layout: Any) -> C.TensorType:
        return C.TensorType(t.element, t.space, spec_of(layout))

    def view(self, op: Any, src: S.Tensor, layout: Any, node: ast.Node) -> S.Tensor:
        self.checked_layout(layout, node)
        self.emit(op, node)
        return S.Tensor(op.result, layout, src.element, src.space)

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
                raise error(f"a coordinate must be an integer, '_' or a run-time index, got "
                            f"{describe(x)}", n)
            return x

        nodes_t = nodes if isinstance(nodes, list | tuple) else [nodes]
        value = walk(tuple(c), ast.Tuple(tuple(nodes_t), nodes_t[0].span)) \
            if isinstance(c, list) else walk(c, nodes)
        return TupleAttr(value), operands

    def tensor_arg(self, v: Any, node: ast.Node, what: str = "this argument") -> S.Tensor:
        if not isinstance(v, S.Tensor):
            raise error(f"{what} must be a tensor, got {describe(v)}", node)
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
        if isinstance(layout, tuple) and any(isinstance(x, S.Runtime) for x in _flat(layout)):
            raise error(f"{node.space} needs a compile-time layout, but its shape holds a "
                        "run-time value", node.layout)
        if not is_layout(layout):
            raise error(f"{node.space} {element}[...] needs a layout, got {describe(layout)}",
                        node.layout)
        return self.allocate(node.space, element, layout, node)

    def allocate(self, space: str, element: T.Type, layout: Any, node: ast.Node) -> S.Tensor:
        spec = spec_of(layout)
        if spec.dynamic_count:
            raise error(f"{space} needs a compile-time layout, but {layout} has run-time "
                        "leaves", node)
        self.checked_layout(layout, node)
        with algebra_errors(node):
            n = int(cosize(layout.layout_b if isinstance(layout, ComposedLayout) else layout))
        nbytes = n * bits_of(element) // 8
        t = C.TensorType(element, space, spec)
        if space == "smem":
            self.smem_bytes += nbytes
            if self.smem_bytes > SMEM_LIMIT_BYTES:
                raise error(f"shared memory use reaches {self.smem_bytes} bytes with this "
                            f"{nbytes}-byte buffer; the limit is {SMEM_LIMIT_BYTES} (228 KiB)",
                            node)
            op = self.emit(C.AllocSmemOp(t), node)
        else:
            if n > 4096:
                raise error(f"a register tensor of {n} elements is too large "
                            "(at most 4096 per thread)", node)
            op = self.emit(C.MakeFragmentOp(t), node)
        return S.Tensor(op.result, layout, element, space)

    # ------------------------------------------------------------------ calls
    def call(self, node: ast.Call) -> Any:
        f = self.eval(node.func)
        ct_args: list[Any] = []
        if isinstance(f, tuple) and f and f[0] == "ct_args":
            _, f, ct_args, _ = f
        args = [self.eval(a) for a in node.args]
        kwargs = {k.name: self.eval(k.value) for k in node.kwargs}
        if isinstance(f, tuple) and f and f[0] == "method":
            _, obj, name, attr_node = f
            from cutec.frontend.build_tiled import call_method

            return call_method(self, obj, name, args, kwargs, node, attr_node)
        if isinstance(f, S.FuncRef):
            return self.call_func(f, ct_args, args, kwargs, node)
        if isinstance(f, S.Builtin):
            if ct_args:
                args = ct_args + args
            method = getattr(self, "b_" + f.name.lstrip("_"), None)
            if method is None and f.name in _ALGEBRA:
                return self.algebra_call(f.name, args, kwargs, node)
            if method is None:
                from cutec.frontend.build_tiled import TILED_BUILTINS

                if f.name in TILED_BUILTINS:
                    return TILED_BUILTINS[f.name](self, args, kwargs, node)
                raise error(f"'{f.name}' cannot be called", node)
            return method(args, kwargs, node)
        raise error(f"{describe(f)} is not callable", node.func)

    def call_func(self, f: S.FuncRef, ct_args: list[Any], args: list[Any],
                  kwargs: dict[str, Any], node: ast.Call) -> Any:
        params = f.node.ct_params
        if len(ct_args) > len(params):
            raise error(f"'{f.node.name}' takes {len(params)} compile-time arguments, got "
                        f"{len(ct_args)}", node)
        ct = dict(zip((p.name for p in params), ct_args, strict=False))
        return self.inline_call(f, node, args, kwargs, ct)

    def algebra_call(self, name: str, args: list[Any], kwargs: dict[str, Any],
                     node: ast.Call) -> Any:
        if kwargs:
            raise error(f"'{name}' takes no keyword arguments", node)
        conv = [self.layout_or_tuple(a, n) for a, n in zip(args, node.args, strict=False)]
        with algebra_errors(node, name):
            return self.checked_layout(_ALGEBRA[name](*conv), node)

    def layout_or_tuple(self, v: Any, node: ast.Node) -> Any:
        if is_layout(v) or isinstance(v, Swizzle):
            return v
        if isinstance(v, tuple) and all(is_layout(x) or x is None for x in v):
            return v
        return self.to_int_tuple(v, node, "an argument of a layout function")

    def arity(self, name: str, args: list[Any], lo: int, hi: int, node: ast.Call) -> None:
        if not lo <= len(args) <= hi:
            want = str(lo) if lo == hi else f"{lo} to {hi}"
            raise error(f"'{name}' takes {want} arguments, got {len(args)}", node)

    # -- layouts -----------------------------------------------------------------------
    def b_make_layout(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        self.arity("make_layout", args, 1, 2, node)
        if all(is_layout(a) for a in args):
            with algebra_errors(node):
                return make_layout(*args)
        shape = self.to_int_tuple(args[0], node.args[0], "a layout's shape")
        with algebra_errors(node, "make_layout"):
            if len(args) == 1:
                return self.checked_layout(Layout(shape), node)
            stride = args[1]
            if stride not in (LayoutLeft, LayoutRight):
                stride = self.to_int_tuple(stride, node.args[1], "a layout's stride")
            return self.checked_layout(make_layout(shape, stride), node)

    def b_make_shape(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        return tuple(args)

    b_make_stride = b_make_coord = b_make_tile = b_make_shape

    def b_swizzle(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Swizzle:
        self.arity("swizzle", args, 3, 3, node)
        b, m, s = (self.require_int(a, n, "a swizzle parameter")
                   for a, n in zip(args, node.args, strict=True))
        with algebra_errors(node, "swizzle"):
            return Swizzle(b, m, s)

    def b_size(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        self.arity("size", args, 1, 4, node)
        v = args[0]
        modes = [self.require_int(a, n, "a mode index")
                 for a, n in zip(args[1:], node.args[1:], strict=True)]
        if isinstance(v, S.TiledCopy | S.TiledMma):
            from cutec.frontend.build_tiled import num_threads

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
            op = C.SizeOp(v.value, TupleAttr(tuple(modes) if len(modes) > 1 else modes[0])
                          if modes else None)
            return S.Runtime(self.emit(op, node).result, n)
        raise error(f"size of {describe(v)} is only known at run time", node)

    def b_rank(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> int:
        self.arity("rank", args, 1, 1, node)
        v = args[0]
        layout = v.layout if isinstance(v, S.Tensor) else v
        return layout.rank if is_layout(layout) else len(layout) if isinstance(layout, tuple) \
            else 1

    def b_cosize(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        self.arity("cosize", args, 1, 1, node)
        v = args[0]
        layout = self.layout_arg(v.layout if isinstance(v, S.Tensor) else v, node.args[0])
        with algebra_errors(node, "cosize"):
            return cosize(layout)

    def b_shape(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        v = args[0] if args else None
        layout = v.layout if isinstance(v, S.Tensor) else self.layout_arg(v, node)
        return layout.shape

    def b_stride(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        v = args[0] if args else None
        layout = v.layout if isinstance(v, S.Tensor) else self.layout_arg(v, node)
        return layout.stride

    def b_ceil_div(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        self.arity("ceil_div", args, 2, 2, node)
        a, b = args
        if isinstance(a, S.Runtime) or isinstance(b, S.Runtime):
            ra, rb = self.as_runtime(a, node, T.index), self.as_runtime(b, node, T.index)
            from cutec.ir.layout.symbolic import ceil_div

            s = ceil_div(ra.sym, rb.sym) if ra.sym is not None and rb.sym is not None else None
            return S.Runtime(self.emit(arith.CeilDivSIOp(ra.value, rb.value), node).result, s)
        x = self.require_int(a, node.args[0])
        y = self.require_int(b, node.args[1])
        if y == 0:
            raise error("ceil_div by zero", node)
        return -(-x // y)

    def b_min(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        return self._minmax(args, node, min)

    def b_max(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        return self._minmax(args, node, max)

    def _minmax(self, args: list[Any], node: ast.Call, fn: Any) -> Any:
        self.arity(fn.__name__, args, 2, 2, node)
        a, b = args
        if isinstance(a, S.Runtime) or isinstance(b, S.Runtime):
            t = (a if isinstance(a, S.Runtime) else b).type
            ra, rb = self.as_runtime(a, node, t), self.as_runtime(b, node, t)
            if isinstance(t, T.FloatType):
                cls = arith.MinimumFOp if fn is min else arith.MaximumFOp
            else:
                cls = arith.MinSIOp if fn is min else arith.MaxSIOp
            return S.Runtime(self.emit(cls(ra.value, rb.value), node).result)
        return fn(self.require_int(a, node.args[0]), self.require_int(b, node.args[1]))

    def b_static_assert(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> None:
        self.arity("static_assert", args, 1, 2, node)
        cond = args[0]
        if not isinstance(cond, bool):
            raise error("static_assert needs a compile-time condition, got "
                        f"{describe(cond)}", node.args[0])
        if not cond:
            msg = args[1] if len(args) > 1 and isinstance(args[1], str) else None
            text = _source_of(node.args[0])
            raise error(f"static assertion failed: {msg}" if msg else
                        f"static assertion failed: {text}", node)

    # -- tensors --------------------------------------------------------------------------
    def b_local_tile(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> S.Tensor:
        self.arity("local_tile", args, 3, 4, node)
        t = self.tensor_arg(args[0], node.args[0], "local_tile's first argument")
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
            raise error(f"the tiler {_fmt(tiler)} has {len(tiler_t)} modes but the coordinate "
                        f"has {len(coord_t)}", node)
        if step is not None:
            step_t = step if isinstance(step, tuple) else (step,)
            if len(step_t) != len(tiler_t):
                raise error(f"step {_fmt(step)} has {len(step_t)} modes but the tiler "
                            f"{_fmt(tiler)} has {len(tiler_t)}", node)
        kept = [m for i, m in enumerate(tiler_t) if step is None or step_t[i] is not X]
        if len(kept) > t.layout.rank:
            raise error(f"a tiler of {len(kept)} modes cannot tile a rank-{t.layout.rank} "
                        f"tensor {t.layout}", node)
        with algebra_errors(node, "local_tile"):
            layout = local_tile(t.layout, tiler, self.zero_coord(coord), step)
        coord_attr, operands = self.coord_attr(coord, node.args[2])
        op = C.LocalTileOp(t.value, operands, self.tensor_type(t, layout), TupleAttr(tiler),
                           coord_attr, TupleAttr(step) if step is not None else None)
        return self.view(op, t, layout, node)

    def b_local_partition(self, args: list[Any], kwargs: dict[str, Any],
                          node: ast.Call) -> S.Tensor:
        self.arity("local_partition", args, 3, 4, node)
        t = self.tensor_arg(args[0], node.args[0], "local_partition's first argument")
        thr = self.layout_arg(args[1], node.args[1], "the thread layout")
        if spec_of(thr).dynamic_count or isinstance(thr, ComposedLayout):
            raise error(f"the thread layout {thr} must be a compile-time layout", node.args[1])
        step = kwargs.pop("step", kwargs.pop("proj", args[3] if len(args) > 3 else None))
        tid = args[2]
        if not isinstance(tid, S.Runtime) and not is_static(tid):
            raise error(f"the thread index must be an integer, got {describe(tid)}", node.args[2])
        kept = thr.rank if step is None else sum(
            1 for s in (step if isinstance(step, tuple) else (step,)) if s is not X)
        if kept > t.layout.rank:
            raise error(f"a rank-{kept} thread layout {thr} cannot partition a "
                        f"rank-{t.layout.rank} tensor {t.layout}", node)
        with algebra_errors(node, "local_partition"):
            layout = local_partition(t.layout, thr, 0, step)
        tid_v = self.as_runtime(tid, node.args[2], T.index).value
        op = C.LocalPartitionOp(t.value, tid_v, self.tensor_type(t, layout), LayoutAttr.of(thr),
                                TupleAttr(step) if step is not None else None)
        return self.view(op, t, layout, node)

    def b_make_tensor_like(self, args: list[Any], kwargs: dict[str, Any],
                           node: ast.Call) -> S.Tensor:
        self.arity("make_tensor_like", args, 1, 2, node)
        t = self.tensor_arg(args[0], node.args[0])
        element = args[1] if len(args) > 1 else t.element
        from cutec.ir.layout import make_layout_like

        with algebra_errors(node):
            layout = make_layout_like(t.layout)
        return self.allocate("rmem", element, layout, node)

    def b_make_fragment_like(self, args: list[Any], kwargs: dict[str, Any],
                             node: ast.Call) -> S.Tensor:
        self.arity("make_fragment_like", args, 1, 2, node)
        t = self.tensor_arg(args[0], node.args[0])
        element = args[1] if len(args) > 1 else t.element
        from cutec.frontend.build_tiled import fragment_layout

        with algebra_errors(node):
            layout = fragment_layout(t.layout)
        return self.allocate("rmem", element, layout, node)

    # -- memory ---------------------------------------------------------------------------
    def b_copy(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> None:
        self.arity("copy", args, 2, 3, node)
        atom = args[0] if len(args) == 3 else None
        src = self.tensor_arg(args[-2], node.args[-2], "the copy's source")
        dst = self.tensor_arg(args[-1], node.args[-1], "the copy's destination")
        self.check_same_size(src, dst, node, "copy")
        if src.element != dst.element:
            raise error(f"copy from {src.element} to {dst.element}: the element types differ",
                        node)
        if dst.space == "gmem" and src.space == "gmem":
            raise error("copy from global memory to global memory: stage it through "
                        "registers or shared memory", node)
        if atom is None:
            self.emit(C.CopyOp(src.value, dst.value), node)
            return
        from cutec.frontend.build_tiled import emit_copy

        emit_copy(self, atom, src, dst, node)

    def check_same_size(self, a: S.Tensor, b: S.Tensor, node: ast.Node, what: str,
                        names: tuple[str, str] = ("the source", "the destination")) -> None:
        sa, sb = size(a.layout), size(b.layout)
        if is_static(sa) and is_static(sb) and sa != sb:
            raise error(f"{what}: {names[0]} has {sa} elements {_shape(a)} but {names[1]} "
                        f"has {sb} {_shape(b)}", node)

    def b_gemm(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> None:
        self.arity("gemm", args, 3, 4, node)
        mma = args[0] if len(args) == 4 else None
        a, b, c = (self.tensor_arg(v, n, f"gemm's {w}") for v, n, w in
                   zip(args[-3:], node.args[-3:], ("A", "B", "C"), strict=True))
        if c.space == "gmem":
            raise error("gemm accumulates into registers (or shared memory), not a gmem "
                        "tensor; make a fragment with make_tensor_like", node.args[-1])
        if mma is None:
            self.check_gemm_shapes(a, b, c, node)
            self.emit(C.GemmOp(a.value, b.value, c.value), node)
            return
        if not isinstance(mma, S.TiledMma):
            raise error(f"gemm's first argument must be a tiled MMA, got {describe(mma)}",
                        node.args[0])
        for name, t, want in (("A", a, mma.type.a_type), ("B", b, mma.type.b_type),
                              ("C", c, mma.type.c_type)):
            if t.element != want and not (str(want) == "tf32" and t.element == T.f32):
                raise error(f"gemm's {name} holds {t.element} but the MMA atom takes {want}",
                            node)
        self.emit(C.GemmOp(a.value, b.value, c.value, mma.value), node)

    def check_gemm_shapes(self, a: S.Tensor, b: S.Tensor, c: S.Tensor, node: ast.Node) -> None:
        """CuTe's gemm(A, B, C) checks: (M,K) x (N,K) -> (M,N)."""
        def modes(t: S.Tensor) -> tuple:
            return tuple(size(t.layout, i) for i in range(t.layout.rank))

        ma, mb, mc = modes(a), modes(b), modes(c)
        if len(ma) != 2 or len(mb) != 2 or len(mc) != 2:
            raise error(f"gemm without a tiled MMA takes rank-2 A (M,K), B (N,K) and C (M,N); "
                        f"got ranks {len(ma)}, {len(mb)}, {len(mc)}", node)
        checks = ((ma[0], mc[0], "M of A", "M of C"), (mb[0], mc[1], "N of B", "N of C"),
                  (ma[1], mb[1], "K of A", "K of B"))
        for x, y, xn, yn in checks:
            if is_static(x) and is_static(y) and x != y:
                raise error(f"gemm: {xn} is {x} but {yn} is {y} (A {_shape(a)}, B {_shape(b)}, "
                            f"C {_shape(c)})", node)

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
        alpha = self.as_runtime(args[0], node.args[0], y.element)
        beta = self.as_runtime(args[2], node.args[2], y.element)
        self.emit(C.AxpbyOp(alpha.value, x.value, beta.value, y.value), node)

    # -- synchronisation ------------------------------------------------------------------
    def b_sync(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> None:
        self.arity("sync", args, 0, 0, node)
        self.emit(thread.BarrierOp(), node)

    b_syncthreads = b_sync

    def b_cp_async_fence(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> None:
        self.arity("cp_async_fence", args, 0, 0, node)
        here = self.ir.point.block if self.ir.point is not None else None
        tokens = [t for t in self.pending_tokens if t.owner.parent is here]
        self.pending_tokens = [t for t in self.pending_tokens if t not in tokens]
        self.emit(thread.CpAsyncCommitOp(tokens), node)

    def b_cp_async_wait(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> None:
        self.arity("cp_async_wait", args, 1, 1, node)
        n = self.require_int(args[0], node.args[0], "the number of pending cp.async groups")
        if n < 0:
            raise error(f"cp_async_wait needs a non-negative count, got {n}", node.args[0])
        op = thread.CpAsyncWaitOp([], n)
        op.attributes["pending"] = IntegerAttr(n, T.i32)
        self.emit(op, node)


def _fmt(t: Any) -> str:
    if isinstance(t, tuple):
        return "(" + ",".join(_fmt(x) for x in t) + ")"
    return "_" if t is None else str(t)


def _flat(t: Any) -> Any:
    if isinstance(t, tuple):
        for x in t:
            yield from _flat(x)
    else:
        yield t


def _shape(t: S.Tensor) -> str:
    return _fmt(t.layout.shape)


def _source_of(node: ast.Node) -> str:
    from cutec.diagnostics import SOURCES

    sp = node.span
    line = SOURCES.line(sp.file, sp.line)
    if line is None or sp.end_line != sp.line:
        return "the condition is false"
    return line[sp.col - 1: sp.end_col - 1]

