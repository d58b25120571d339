"""``cutec layout --op NAME ARG...``: one operation of the layout algebra on command-line text.

Each ARG is read as the operation's signature says: a parameter annotated ``str`` (the
``parse_*`` operations) gets the text itself, any other the value it spells (an integer,
a tuple, a layout, ``_``, ``X``, a swizzle). The value must then be of the kind the
annotation names (a layout where a ``Layout`` is taken, a static integer for ``int``,
...): a wrong kind is the user's mistake, reported as a `LayoutError` naming the
operation and the parameter, never a Python error from deep inside the algebra.
Parameters that text cannot give (a file, a leaf-reader function, a symbol table) are
not taken from the command line.
"""

from __future__ import annotations

import inspect
import io
from collections.abc import Callable
from typing import Any

import cutec.layout as algebra
from cutec.layout import ComposedLayout, Layout, LayoutError, Swizzle
from cutec.layout import inttuple as it
from cutec.layout.text import parse_value


def _is_layout(v: Any) -> bool:
    return isinstance(v, Layout)


def _is_composed(v: Any) -> bool:
    return isinstance(v, ComposedLayout)


def _is_int(v: Any) -> bool:
    return it.is_int(v)


def _is_static_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_int_tuple(v: Any) -> bool:
    if isinstance(v, tuple):
        return all(_is_int_tuple(x) for x in v)
    return it.is_int(v)


def _is_coord(v: Any) -> bool:
    if isinstance(v, tuple):
        return all(_is_coord(x) for x in v)
    return v is None or it.is_int(v)


# What each annotation of the algebra's signatures accepts from the command line, and how
# an error names it. An annotation `A | B` accepts either; `None` is the text `_`.
_KINDS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "Layout": ("a layout", _is_layout),
    "ComposedLayout": ("a swizzled layout", _is_composed),
    "IntTuple": ("an integer or a tuple of integers", _is_int_tuple),
    "Integer": ("an integer", _is_int),
    "int": ("a static integer", _is_static_int),
    "Coord": ("a coordinate (integers and _)", _is_coord),
    "None": ("_", lambda v: v is None),
    "Any": ("anything", lambda v: True),
}


def operation(name: str) -> Callable[..., Any]:
    """The algebra's function `name` (one of cutec.layout's exported functions)."""
    if name not in algebra.__all__ or not callable(getattr(algebra, name)):
        raise LayoutError(f"unknown layout operation {name!r}")
    fn = getattr(algebra, name)
    if isinstance(fn, type):
        raise LayoutError(f"{name!r} is a type, not an operation")
    return fn


def _annotation(p: inspect.Parameter) -> str:
    a = p.annotation
    return "Any" if a is inspect.Parameter.empty else str(a)


def _argument(op: str, p: inspect.Parameter, text: str, lifted: bool) -> Any:
    """ARG `text` for parameter `p` of `op`: the text or its value, of the declared kind
    (a `lifted` parameter, the first of a function CuTe applies to B of A o O o B, takes
    a swizzled layout too)."""
    kinds = [k.strip() for k in _annotation(p).split("|")]
    if lifted and "Layout" in kinds:
        kinds.append("ComposedLayout")
    if "str" in kinds:
        return text
    unknown = [k for k in kinds if k not in _KINDS]
    if unknown:
        raise LayoutError(f"{op}: its parameter '{p.name}' cannot be given on the command line")
    value = parse_value(text)
    if isinstance(value, Swizzle) and "Any" not in kinds:
        raise LayoutError(f"{op}: '{p.name}' takes {_describe(kinds)}, not the swizzle {text}")
    if not any(_KINDS[k][1](value) for k in kinds):
        raise LayoutError(f"{op}: '{p.name}' takes {_describe(kinds)}, got {text}")
    return value


def _describe(kinds: list[str]) -> str:
    return " or ".join(_KINDS[k][0] for k in kinds)


def _parameters(op: str, sig: inspect.Signature, n: int) -> list[inspect.Parameter]:
    """The parameter each of `n` positional arguments binds to (a *args one repeats)."""
    params = list(sig.parameters.values())
    out: list[inspect.Parameter] = []
    for p in params:
        if p.kind is p.VAR_POSITIONAL:
            out += [p] * (n - len(out))
            break
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and len(out) < n:
            out.append(p)
    if len(out) < n:
        raise LayoutError(f"{op}: takes at most {len(out)} arguments, got {n}")
    return out


def apply(op: str, texts: list[str]) -> Any:
    """Evaluate the algebra operation `op` on the argument texts."""
    fn = operation(op)
    sig = inspect.signature(fn)
    params = _parameters(op, sig, len(texts))
    lifted = hasattr(fn, "__wrapped__")  # swizzle.lifts_composed
    values = [
        _argument(op, p, t, lifted and i == 0)
        for i, (p, t) in enumerate(zip(params, texts, strict=True))
    ]
    try:
        bound = sig.bind(*values)
    except TypeError as e:  # a required argument is missing
        raise LayoutError(f"{op}: {e}") from None
    if "file" in sig.parameters:  # print_layout writes its text; the command prints it once
        bound.arguments["file"] = io.StringIO()
    try:
        return fn(*bound.args, **bound.kwargs)
    except LayoutError as e:  # say which operation failed, once
        if str(e).startswith(op):
            raise
        raise LayoutError(f"{op}: {e}") from None
