"""Atomics and fences for the IR builder: atomic_add / max / min / exch, atomic_load,
atomic_store (cute ops on one element of a global tensor, cutec/ir/dialects/cute_atomic.py)
and fence (``gpu.fence``).

An element is named as ``t[i]`` names one: a linear index, or a tuple with one
coordinate per mode of the tensor. The value is converted as ``t[i] = v`` converts
it. The memory orders and the element types each op takes are
cutec/ir/dialects/memory_order.py's; every misuse is one located error.

Plain functions ``(ctx, args, kwargs, node)`` of the build context `ctx`, registered
in builtins.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cutec.frontend import ast
from cutec.frontend import scope as S
from cutec.frontend.build_scalars import as_runtime
from cutec.frontend.build_tensors import tensor_arg
from cutec.frontend.static_eval import arg_node, arity, describe, error
from cutec.ir import types as T
from cutec.ir.dialects import cute as C
from cutec.ir.dialects import gpu
from cutec.ir.dialects.memory_order import (
    ALL_SEMANTICS,
    FENCE_SEMANTICS,
    LOAD_SEMANTICS,
    RMW_SEMANTICS,
    SCOPES,
    STORE_SEMANTICS,
    atomic_elements,
    takes_element,
    words,
)
from cutec.ir.types import dtype_name
from cutec.layout.inttuple import rank
from cutec.target import AddressSpace

if TYPE_CHECKING:
    from cutec.frontend.context import BuildContext

Build = Callable[["BuildContext", list[Any], dict[str, Any], ast.Call], Any]


def _options(
    name: str,
    args: list[Any],
    kwargs: dict[str, Any],
    node: ast.Call,
    params: tuple[str, ...],
    defaults: dict[str, str],
) -> list[Any]:
    """The arguments of `name(params...)` in order: positional, then by keyword, then the
    defaults of the trailing ones (sem and scope)."""
    arity(name, args, 0, len(params), node)
    values = list(args)
    for k in kwargs:
        if k not in params:
            raise error(f"{name} has no argument '{k}' (it takes {', '.join(params)})", node)
        if params.index(k) < len(args):
            raise error(f"{name}'s argument '{k}' is given twice", arg_node(node, k, len(args)))
    for p in params[len(args) :]:
        if p in kwargs:
            values.append(kwargs[p])
        elif p in defaults:
            values.append(defaults[p])
        else:
            raise error(f"{name} is missing its argument '{p}'", node)
    return values


def _word(
    name: str, what: str, v: Any, allowed: tuple[str, ...], known: tuple[str, ...], at: ast.Node
) -> str:
    """`v` as one of the words `allowed` for `what` (sem or scope) of `name`."""
    if not isinstance(v, str):
        raise error(f"{name}'s {what} is a string ({words(allowed)}), not {describe(v)}", at)
    if v not in known:
        raise error(f'unknown {what} "{v}" for {name}; it takes {words(allowed)}', at)
    if v not in allowed:
        raise error(f'{name} takes {what} {words(allowed)}, not "{v}"', at)
    return v


def _target(ctx: BuildContext, name: str, v: Any, node: ast.Call, kind: str | None) -> S.Tensor:
    """The tensor an atomic acts on: global, of an element type the op takes."""
    at = arg_node(node, "t", 0)
    t = tensor_arg(v, at, f"{name}'s first argument")
    if t.space in (AddressSpace.SHARED, AddressSpace.SHARED_CLUSTER):
        raise error(
            f"atomics on shared memory are not supported yet ({name} of "
            f"{'an' if t.space is AddressSpace.SHARED else 'a'} {t.space.memory} tensor)",
            at,
        )
    if t.space is not AddressSpace.GLOBAL:
        raise error(
            f"{name} needs a global tensor; a register tensor is the thread's own, which "
            "no other thread sees (read and write it with t[i])",
            at,
        )
    if not takes_element(kind, t.element):
        allowed = ", ".join(dtype_name(e) for e in atomic_elements(kind))
        raise error(f"{name} takes {allowed} elements, not {dtype_name(t.element)}", at)
    return t


def _indices(ctx: BuildContext, name: str, t: S.Tensor, i: Any, node: ast.Call) -> list[Any]:
    """The element's index operands: one linear index, or one per mode of `t`."""
    at = arg_node(node, "i", 1)
    if not isinstance(i, tuple):
        return [as_runtime(ctx, i, at, T.index).value]
    modes = rank(t.layout.shape)
    if len(i) != modes:
        raise error(
            f"{name}'s coordinate has {len(i)} components but the tensor has {modes} modes "
            "(or give one linear index)",
            at,
        )
    out = []
    for c in i:
        if isinstance(c, tuple):
            raise error(f"{name} takes one integer per mode of the tensor, not a tuple", at)
        out.append(as_runtime(ctx, c, at, T.index).value)
    return out


def _rmw(kind: str) -> Build:
    name = f"atomic_{kind}"

    def build(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        defaults = {"sem": "relaxed", "scope": "gpu"}
        t_, i, v, sem, scope = _options(
            name, args, kwargs, node, ("t", "i", "v", "sem", "scope"), defaults
        )
        t = _target(ctx, name, t_, node, kind)
        sem = _word(name, "sem", sem, RMW_SEMANTICS, ALL_SEMANTICS, arg_node(node, "sem", 3))
        scope = _word(name, "scope", scope, SCOPES, SCOPES, arg_node(node, "scope", 4))
        indices = _indices(ctx, name, t, i, node)
        value = as_runtime(ctx, v, arg_node(node, "v", 2), t.element)
        op = C.AtomicRmwOp(kind, value.value, t.value, indices, sem, scope)
        return S.Runtime(ctx.emit(op, node).result)

    build.__doc__ = f"{name}(t, i, v, sem, scope): the old value"
    return build


RMW_BUILTINS: dict[str, Build] = {f"atomic_{k}": _rmw(k) for k in ("add", "max", "min", "exch")}


def b_atomic_load(
    ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> S.Runtime:
    name = "atomic_load"
    defaults = {"sem": "acquire", "scope": "gpu"}
    t_, i, sem, scope = _options(name, args, kwargs, node, ("t", "i", "sem", "scope"), defaults)
    t = _target(ctx, name, t_, node, None)
    sem = _word(name, "sem", sem, LOAD_SEMANTICS, ALL_SEMANTICS, arg_node(node, "sem", 2))
    scope = _word(name, "scope", scope, SCOPES, SCOPES, arg_node(node, "scope", 3))
    op = C.AtomicLoadOp(t.value, _indices(ctx, name, t, i, node), sem, scope)
    return S.Runtime(ctx.emit(op, node).result)


def b_atomic_store(
    ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> None:
    name = "atomic_store"
    defaults = {"sem": "release", "scope": "gpu"}
    params = ("t", "i", "v", "sem", "scope")
    t_, i, v, sem, scope = _options(name, args, kwargs, node, params, defaults)
    t = _target(ctx, name, t_, node, None)
    sem = _word(name, "sem", sem, STORE_SEMANTICS, ALL_SEMANTICS, arg_node(node, "sem", 3))
    scope = _word(name, "scope", scope, SCOPES, SCOPES, arg_node(node, "scope", 4))
    indices = _indices(ctx, name, t, i, node)
    value = as_runtime(ctx, v, arg_node(node, "v", 2), t.element)
    ctx.emit(C.AtomicStoreOp(value.value, t.value, indices, sem, scope), node)


def b_fence(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> None:
    name = "fence"
    sem, scope = _options(
        name, args, kwargs, node, ("sem", "scope"), {"sem": "acq_rel", "scope": "gpu"}
    )
    sem = _word(name, "sem", sem, FENCE_SEMANTICS, ALL_SEMANTICS, arg_node(node, "sem", 0))
    scope = _word(name, "scope", scope, SCOPES, SCOPES, arg_node(node, "scope", 1))
    ctx.emit(gpu.FenceOp(sem, scope), node)
