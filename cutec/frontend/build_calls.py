"""Calls, members, indexing and allocation for the IR builder: the language's builtins.

Layout functions run in the algebra at compile time; tensor functions emit
cute ops whose result types the algebra computes; atoms and tiled objects are
looked up in the atom library (its error texts become the diagnostics).
"""

from __future__ import annotations

import inspect
import re
from typing import TYPE_CHECKING, Any

from cutec.atoms.copy import copy_atom
from cutec.atoms.mma import mma_atom_named
from cutec.frontend import ast
from cutec.frontend import scope as S
from cutec.frontend.build_fragments import convert
from cutec.frontend.build_header import bind_ct_params
from cutec.frontend.build_imports import namespace_member
from cutec.frontend.build_stmts import build_stmt
from cutec.frontend.build_tensors import (
    DIVIDES,
    tensor_compose,
    tensor_divide,
    tensor_index,
)
from cutec.frontend.build_tiled import call_method
from cutec.frontend.build_tuples import dims
from cutec.frontend.builtins import REGISTRY
from cutec.frontend.static_eval import (
    UINT_BITS,
    algebra_errors,
    arity,
    bits_of,
    checked_layout,
    describe,
    error,
    is_layout,
    require_int,
    to_int_tuple,
)
from cutec.ir import types as T
from cutec.ir.dialects import gpu
from cutec.ir.dialects.cute_compute import dtype_name
from cutec.layout import (
    ComposedLayout,
    Layout,
    Swizzle,
)
from cutec.layout import algebra as LA
from cutec.layout import divide as LD
from cutec.layout.inttuple import format_tuple
from cutec.layout.swizzle import upcast_swizzle

if TYPE_CHECKING:
    from cutec.frontend.builder import BuildContext

    _Base = BuildContext
else:
    _Base = object


# Layout functions of the algebra callable from a kernel, by CuTe's names.
MAX_INLINE_DEPTH = 16

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


# CuTe's GMMA shared-memory layout atoms in bits (mma_traits_sm90_gmma.hpp): for each
# major-ness and swizzle, the swizzle's B and the (MN,K) extents of the atom.
_GMMA_ATOMS = {"INTER": 0, "SW32": 1, "SW64": 2, "SW128": 3}


class CallMixin(_Base):
    """Builtins; mixed into the BuildContext."""

    # ------------------------------------------------------------------ members
    def attribute(self, v: Any, node: ast.Attribute) -> Any:
        if isinstance(v, S.Namespace):
            return namespace_member(v, node)
        if isinstance(v, S.Builtin) and v.name in ("thread", "block", "threadIdx", "blockIdx"):
            if node.attr not in ("x", "y", "z"):
                raise error(
                    f"'{v.name}' has members x, y and z, not '{node.attr}'",
                    ast.Name(node.attr, node.attr_span),
                )
            return self.special_register(v.name, node.attr, node)
        if isinstance(v, S.Builtin) and v.name in ("block_dim", "grid_dim"):
            if node.attr not in ("x", "y", "z"):
                raise error(
                    f"'{v.name}' has members x, y and z, not '{node.attr}'",
                    ast.Name(node.attr, node.attr_span),
                )
            return dims(self, v.name, node.attr, node)
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
        if isinstance(v, S.Builtin) and v.name == "GMMA":
            m = _GMMA_NAME.fullmatch(node.attr)
            if m is None:
                raise error(
                    f"GMMA has no member '{node.attr}' (it has the smem layout atoms "
                    "Layout_{MN,K}_{INTER,SW32,SW64,SW128}_Atom)",
                    ast.Name(node.attr, node.attr_span),
                )
            return S.Builtin("GMMA." + node.attr)
        raise error(
            f"{describe(v)} has no member '{node.attr}'", ast.Name(node.attr, node.attr_span)
        )

    def special_register(self, ns: str, dim: str, node: ast.Node) -> S.Runtime:
        key = f"{ns[:5]}.{dim}"
        if key not in self.special:
            cls = gpu.ThreadIdOp if ns.startswith("thread") else gpu.BlockIdOp
            op = self.emit_at_entry(cls(dim), node)
            op.result.name_hint = ("tid_" if cls is gpu.ThreadIdOp else "bid_") + dim
            self.special[key] = S.Runtime(op.result)
        return self.special[key]

    # ------------------------------------------------------------------ indexing
    def index(self, v: Any, node: ast.Index) -> Any:
        family = (isinstance(v, S.Builtin) and v.name in ("UniversalCopy", "UniversalFMA")) or (
            isinstance(v, S.AtomRef) and v.kind == "family"
        )
        if (
            family
            and len(node.indices) == 1
            and isinstance(node.indices[0], ast.Name)
            and node.indices[0].id in UINT_BITS
            and self.scope.lookup(node.indices[0].id) is None
        ):
            idx: list[Any] = [node.indices[0].id]
        else:
            idx = [self.eval(i) for i in node.indices]
        if isinstance(v, S.Builtin) and v.name in ("UniversalCopy", "UniversalFMA"):
            return self.atom_family(v.name, idx, node)
        if isinstance(v, S.AtomRef) and v.kind == "family":
            return self.atom_family(v.name, idx, node)
        if isinstance(v, S.Builtin) and v.name.startswith("GMMA."):
            return self.gmma_layout_atom(v.name.removeprefix("GMMA."), idx, node)
        if isinstance(v, S.FuncRef | S.Builtin):
            return ("ct_args", v, idx, node)
        if isinstance(v, S.Tensor):
            return tensor_index(self, v, idx, node)
        if isinstance(v, tuple):
            i = require_int(idx[0], node.indices[0], "a tuple index")
            if len(idx) != 1 or not 0 <= i < len(v):
                raise error(f"index {i} is out of range for a tuple of {len(v)}", node)
            return v[i]
        if is_layout(v):
            with algebra_errors(node):
                try:
                    return v(*idx)
                except (ValueError, TypeError):  # a coordinate the shape does not take
                    raise error(
                        f"the coordinate {format_tuple(tuple(idx))} does not match the layout {v}",
                        node,
                    ) from None
        raise error(f"{describe(v)} cannot be indexed", node)

    def atom_family(self, family: str, idx: list[Any], node: ast.Index) -> S.AtomRef:
        if len(idx) != 1:
            raise error(f"{family}[...] takes one type", node)
        arg = idx[0]
        arg_node = node.indices[0]
        if family == "UniversalFMA":
            if not isinstance(arg, T.Type):
                raise error(
                    f"UniversalFMA[...] takes an element type, got {describe(arg)}", arg_node
                )
            name = "UniversalFMA_" + dtype_name(arg).upper() * 4
            atom = mma_atom_named(name)
            if atom is None:
                raise error(f"no UniversalFMA for {arg} (f32, f64, f16, s32)", arg_node)
            return S.AtomRef("mma", name, atom)
        if isinstance(arg_node, ast.Name) and arg_node.id in UINT_BITS:
            bits = UINT_BITS[arg_node.id]
        elif isinstance(arg, T.Type):
            bits = bits_of(arg)
        else:
            raise error(
                f"{family}[...] takes u8..u128 or an element type, got {describe(arg)}", arg_node
            )
        name = f"{family}<uint{bits}_t>"
        with algebra_errors(node):
            return S.AtomRef("copy", name, copy_atom(name))

    def gmma_layout_atom(self, name: str, idx: list[Any], node: ast.Index) -> Any:
        """GMMA.Layout_{MN,K}_{SW..}_Atom[T]: CuTe's upcast<sizeof_bits<T>>(..._Atom_Bits).

        CuTe's swizzle acts on byte addresses of the smem pointer; cutec's smem tensors
        swizzle element offsets from a swizzle-aligned base, so the swizzle is recast to
        T's units (as_position_independent_swizzle_layout does): Sw<3,4,3> is Sw<3,3,3>
        for 16-bit T. INTER has no swizzle and is a plain layout.
        """
        if len(idx) != 1 or not isinstance(idx[0], T.Type):
            raise error(f"GMMA.{name}[...] takes one element type", node)
        m = _GMMA_NAME.fullmatch(name)
        assert m is not None
        bits = bits_of(idx[0])
        b = _GMMA_ATOMS[m["swizzle"]]
        width = 128 << b  # bits along the contiguous mode
        atom_bits = (
            Layout((width, 8), (1, width)) if m["major"] == "MN" else Layout((8, width), (width, 1))
        )
        with algebra_errors(node, f"GMMA.{name}"):
            layout = LA.upcast(atom_bits, bits)
            if b == 0:
                return layout
            return ComposedLayout(upcast_swizzle(Swizzle(b, 4, 3), bits // 8), 0, layout)

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
            return call_method(self, obj, name, args, kwargs, node, attr_node)
        if isinstance(f, S.FuncRef):
            return self.call_func(f, ct_args, args, kwargs, node)
        if isinstance(f, S.Builtin):
            if ct_args:
                args = ct_args + args
            entry = REGISTRY.get(f.name)
            if entry is None or entry.build is None:
                raise error(f"'{f.name}' cannot be called", node)
            return entry.build(self, args, kwargs, node)
        if isinstance(f, T.Type) and not ct_args and not kwargs:
            return convert(self, f, args, node)  # f32(x): a conversion
        raise error(f"{describe(f)} is not callable", node.func)

    def call_func(
        self,
        f: S.FuncRef,
        ct_args: list[Any],
        args: list[Any],
        kwargs: dict[str, Any],
        node: ast.Call,
    ) -> Any:
        params = f.node.ct_params
        if len(ct_args) > len(params):
            raise error(
                f"'{f.node.name}' takes {len(params)} compile-time arguments, got {len(ct_args)}",
                node,
            )
        ct = dict(zip((p.name for p in params), ct_args, strict=False))
        return self.inline_call(f, node, args, kwargs, ct)

    def inline_call(
        self,
        ref: S.FuncRef,
        node: ast.Call,
        args: list[Any],
        kwargs: dict[str, Any],
        ct: dict[str, Any],
    ) -> Any:
        """A func is inlined: its body is built with the parameters bound to the arguments."""
        f: ast.Func = ref.node
        if self.inline_depth >= MAX_INLINE_DEPTH:
            raise error(
                f"calls nest deeper than {MAX_INLINE_DEPTH} (is '{f.name}' recursive?)", node
            )
        params = list(f.params)
        if len(args) > len(params):
            raise error(f"'{f.name}' takes {len(params)} arguments, got {len(args)}", node)
        bound: dict[str, Any] = {}
        for p, a in zip(params, args, strict=False):
            bound[p.name] = a
        for k, v in kwargs.items():
            if k not in {p.name for p in params}:
                raise error(f"'{f.name}' has no parameter '{k}'", node)
            bound[k] = v
        missing = [p.name for p in params if p.name not in bound]
        if missing:
            raise error(f"'{f.name}' is missing argument(s) {', '.join(missing)}", node)
        saved_frames, saved_ret, saved_globals = self.scope.frames, self.returned, self.globals
        self.scope = S.Scope([dict(self.scope.frames[0]), {}])  # kernel params stay visible
        if ref.globals is not None:
            self.globals = ref.globals  # the names of the file defining the func
        self.inline_depth += 1
        try:
            bind_ct_params(self, f.ct_params, ct, f)
            for name, v in bound.items():
                self.scope.bind(name, v)
            self.returned = None
            for s in f.body.stmts:
                build_stmt(self, s)  # an error inside a func is reported at its statement
                if isinstance(s, ast.Return):
                    break
            return self.returned
        finally:
            self.inline_depth -= 1
            self.scope = S.Scope(saved_frames)
            self.returned = saved_ret
            self.globals = saved_globals

    def algebra_call(
        self, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.Call
    ) -> Any:
        if name in DIVIDES and args and isinstance(args[0], S.Tensor):
            return tensor_divide(self, name, args[0], args, kwargs, node)
        if name == "composition" and args and isinstance(args[0], S.Tensor) and not kwargs:
            return tensor_compose(self, args[0], args, node)
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
        conv = [self.layout_or_tuple(a, n) for a, n in zip(args, node.args, strict=False)]
        with algebra_errors(node, name):
            return checked_layout(_ALGEBRA[name](*conv), node)

    def layout_or_tuple(self, v: Any, node: ast.Node) -> Any:
        if is_layout(v) or isinstance(v, Swizzle):
            return v
        if isinstance(v, tuple) and all(is_layout(x) or x is None for x in v):
            return v
        return to_int_tuple(v, node, "an argument of a layout function")


_GMMA_NAME = re.compile(r"Layout_(?P<major>MN|K)_(?P<swizzle>INTER|SW32|SW64|SW128)_Atom")
