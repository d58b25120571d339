"""Members, indexing and calls in the IR builder.

``x.attr``, ``x[i]`` and ``f(args)`` on the values the expressions give:
special registers (``thread.x``), a tensor's layout and shape, a tiled
object's methods (build_tiled.py), atom families (``UniversalCopy[u128]``,
looked up in the atom library, whose error texts become the diagnostics),
GMMA's smem layout atoms, tensor slices and elements (build_tensors.py).
A call of a builtin dispatches through the registry (builtins.py); a call of
a func inlines its body (`inline_call`); ``T(x)`` of an element type converts.

Plain functions of the build context `ctx`.
"""

from __future__ import annotations

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
from cutec.frontend.build_tensors import tensor_index
from cutec.frontend.build_tiled import call_method
from cutec.frontend.build_tuples import dims
from cutec.frontend.builtins import REGISTRY
from cutec.frontend.static_eval import (
    UINT_BITS,
    algebra_errors,
    bits_of,
    describe,
    error,
    is_layout,
    require_int,
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
from cutec.layout.inttuple import format_tuple
from cutec.layout.swizzle import upcast_swizzle

if TYPE_CHECKING:
    from cutec.frontend.context import BuildContext


MAX_INLINE_DEPTH = 16  # funcs inlined into funcs: deeper is (almost surely) recursion


# CuTe's GMMA shared-memory layout atoms in bits (mma_traits_sm90_gmma.hpp): for each
# major-ness and swizzle, the swizzle's B and the (MN,K) extents of the atom.
_GMMA_ATOMS = {"INTER": 0, "SW32": 1, "SW64": 2, "SW128": 3}


# --------------------------------------------------------------------------- members


def attribute(ctx: BuildContext, v: Any, node: ast.Attribute) -> Any:
    """``v.attr`` for the value `v` of ``node.value``."""
    if isinstance(v, S.Namespace):
        return namespace_member(v, node)
    if isinstance(v, S.Builtin) and v.name in ("thread", "block", "threadIdx", "blockIdx"):
        if node.attr not in ("x", "y", "z"):
            raise error(
                f"'{v.name}' has members x, y and z, not '{node.attr}'",
                ast.Name(node.attr, node.attr_span),
            )
        return special_register(ctx, v.name, node.attr, node)
    if isinstance(v, S.Builtin) and v.name in ("block_dim", "grid_dim"):
        if node.attr not in ("x", "y", "z"):
            raise error(
                f"'{v.name}' has members x, y and z, not '{node.attr}'",
                ast.Name(node.attr, node.attr_span),
            )
        return dims(ctx, v.name, node.attr, node)
    if isinstance(v, S.Tensor):
        if node.attr == "layout":
            return v.layout
        if node.attr == "shape":
            return v.layout.shape
    if is_layout(v) and node.attr in ("shape", "stride"):
        inner = v.layout_b if isinstance(v, ComposedLayout) else v
        return getattr(inner, node.attr)
    if isinstance(v, S.TiledCopy | S.TiledMma | S.ThrSlice | S.TmaAtom):
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
    raise error(f"{describe(v)} has no member '{node.attr}'", ast.Name(node.attr, node.attr_span))


def special_register(ctx: BuildContext, ns: str, dim: str, node: ast.Node) -> S.Runtime:
    key = f"{ns[:5]}.{dim}"
    if key not in ctx.special:
        cls = gpu.ThreadIdOp if ns.startswith("thread") else gpu.BlockIdOp
        op = ctx.emit_at_entry(cls(dim), node)
        op.result.name_hint = ("tid_" if cls is gpu.ThreadIdOp else "bid_") + dim
        ctx.special[key] = S.Runtime(op.result)
    return ctx.special[key]


# --------------------------------------------------------------------------- indexing


def index(ctx: BuildContext, v: Any, node: ast.Index) -> Any:
    """``v[indices]`` for the value `v` of ``node.value``."""
    family = (isinstance(v, S.Builtin) and v.name in ("UniversalCopy", "UniversalFMA")) or (
        isinstance(v, S.AtomRef) and v.kind == "family"
    )
    if (
        family
        and len(node.indices) == 1
        and isinstance(node.indices[0], ast.Name)
        and node.indices[0].id in UINT_BITS
        and ctx.scope.lookup(node.indices[0].id) is None
    ):
        idx: list[Any] = [node.indices[0].id]
    else:
        idx = [ctx.eval(i) for i in node.indices]
    if isinstance(v, S.Builtin) and v.name in ("UniversalCopy", "UniversalFMA"):
        return atom_family(v.name, idx, node)
    if isinstance(v, S.AtomRef) and v.kind == "family":
        return atom_family(v.name, idx, node)
    if isinstance(v, S.Builtin) and v.name.startswith("GMMA."):
        return gmma_layout_atom(v.name.removeprefix("GMMA."), idx, node)
    if isinstance(v, S.FuncRef | S.Builtin):
        return ("ct_args", v, idx, node)
    if isinstance(v, S.Tensor):
        return tensor_index(ctx, v, idx, node)
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


def atom_family(family: str, idx: list[Any], node: ast.Index) -> S.AtomRef:
    if len(idx) != 1:
        raise error(f"{family}[...] takes one type", node)
    arg = idx[0]
    arg_node = node.indices[0]
    if family == "UniversalFMA":
        if not isinstance(arg, T.Type):
            raise error(f"UniversalFMA[...] takes an element type, got {describe(arg)}", arg_node)
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


def gmma_layout_atom(name: str, idx: list[Any], node: ast.Index) -> Any:
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


# --------------------------------------------------------------------------- calls


def call(ctx: BuildContext, node: ast.Call) -> Any:
    """``f[ct](args, k = v)``: a tiled object's method, a func (inlined), a builtin (by
    the registry) or a conversion ``T(x)``, ``int(x)`` among them (`int` names no value:
    it is not an element type)."""
    if _names_int(ctx, node.func):
        return convert(ctx, T.index, [ctx.eval(a) for a in node.args], node)
    f = ctx.eval(node.func)
    ct_args: list[Any] = []
    if isinstance(f, tuple) and f and f[0] == "ct_args":
        _, f, ct_args, _ = f
    entry = REGISTRY.get(f.name) if isinstance(f, S.Builtin) else None
    takes_element = entry is not None and entry.takes_element
    if isinstance(f, tuple) and f and f[0] == "method":  # tma.with(bars[i]): the element
        takes_element = isinstance(f[1], S.TmaAtom) and f[2] == "with"
    if takes_element and node.args:
        args = [element_ref(ctx, node.args[0]), *(ctx.eval(a) for a in node.args[1:])]
    else:
        args = [ctx.eval(a) for a in node.args]
    kwargs = {k.name: ctx.eval(k.value) for k in node.kwargs}
    if isinstance(f, tuple) and f and f[0] == "method":
        _, obj, name, attr_node = f
        return call_method(ctx, obj, name, args, kwargs, node, attr_node)
    if isinstance(f, S.FuncRef):
        return call_func(ctx, f, ct_args, args, kwargs, node)
    if isinstance(f, S.Builtin):
        if ct_args:
            args = ct_args + args
        entry = REGISTRY.get(f.name)
        if entry is None or entry.build is None:
            raise error(f"'{f.name}' cannot be called", node)
        return entry.build(ctx, args, kwargs, node)
    if isinstance(f, T.Type) and not ct_args and not kwargs:
        return convert(ctx, f, args, node)  # f32(x): a conversion
    raise error(f"{describe(f)} is not callable", node.func)


def element_ref(ctx: BuildContext, node: ast.Expr) -> Any:
    """A builtin's element argument: ``t[i]`` of a tensor as the element itself (nothing
    is read); any other expression as its value (the builtin says what it wants)."""
    if isinstance(node, ast.Index):
        v = ctx.eval(node.value)
        if isinstance(v, S.Tensor) and not v.coord_rank:
            return S.ElementRef(v, tuple(ctx.eval(i) for i in node.indices), node)
    return ctx.eval(node)


def _names_int(ctx: BuildContext, func: ast.Expr) -> bool:
    """Whether a call's callee is the builtin `int` (no local or global of that name)."""
    if not (isinstance(func, ast.Name) and func.id == "int"):
        return False
    return ctx.scope.lookup("int") is None and "int" not in ctx.globals


def call_func(
    ctx: BuildContext,
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
    return inline_call(ctx, f, node, args, kwargs, ct)


def inline_call(
    ctx: BuildContext,
    ref: S.FuncRef,
    node: ast.Call,
    args: list[Any],
    kwargs: dict[str, Any],
    ct: dict[str, Any],
) -> Any:
    """A func is inlined: its body is built with the parameters bound to the arguments."""
    f: ast.Func = ref.node
    if ctx.inline_depth >= MAX_INLINE_DEPTH:
        raise error(f"calls nest deeper than {MAX_INLINE_DEPTH} (is '{f.name}' recursive?)", node)
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
    saved_frames, saved_ret, saved_globals = ctx.scope.frames, ctx.returned, ctx.globals
    ctx.scope = S.Scope([dict(ctx.scope.frames[0]), {}])  # kernel params stay visible
    if ref.globals is not None:
        ctx.globals = ref.globals  # the names of the file defining the func
    ctx.inline_depth += 1
    try:
        bind_ct_params(ctx, f.ct_params, ct, f)
        for name, v in bound.items():
            ctx.scope.bind(name, v)
        ctx.returned = None
        for s in f.body.stmts:
            build_stmt(ctx, s)  # an error inside a func is reported at its statement
            if isinstance(s, ast.Return):
                break
        return ctx.returned
    finally:
        ctx.inline_depth -= 1
        ctx.scope = S.Scope(saved_frames)
        ctx.returned = saved_ret
        ctx.globals = saved_globals


_GMMA_NAME = re.compile(r"Layout_(?P<major>MN|K)_(?P<swizzle>INTER|SW32|SW64|SW128)_Atom")
