"""Compile-time helpers of the builder: dtypes, C integer arithmetic, limits, errors,
and the checks that a compile-time value is what a builtin takes (none emits IR).

Everything static in a kernel is evaluated here or in the layout algebra; the
IR only ever sees the results.
"""

from __future__ import annotations

import math
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from cutec.atoms.copy import CopyAtomError
from cutec.atoms.mma import UnsupportedMmaError
from cutec.diagnostics import CompileError, Diagnostic, Location, Note
from cutec.dtypes import DTYPES as ELEMENT_TYPES
from cutec.frontend import ast
from cutec.frontend import scope as S
from cutec.ir import types as T
from cutec.ir.dialects.cute_coord import CoordTensorType
from cutec.ir.dialects.cute_infer import spec_of
from cutec.layout import (
    ComposedLayout,
    DynamicValueError,
    Layout,
    LayoutError,
    LayoutWarning,
    Swizzle,
    X,
    size,
)
from cutec.layout.inttuple import format_tuple, leaves
from cutec.layout.symbolic import SymInt, is_static

# Limits that keep every input fast to build (the hardware's are the target's: cutec.target).
LAYOUT_SIZE_LIMIT = 2**31  # elements of one static layout or tensor
UNROLL_LIMIT = 1024  # iterations of one fully unrolled loop

# Element types by the names a kernel writes: every row of cutec/dtypes.py with an IR type.
DTYPES: dict[str, T.Type] = {
    name: T.ir_type(d) for d in ELEMENT_TYPES.values() if d.ir for name in (d.name, *d.aliases)
}

# Unsigned-integer widths an atom can be instantiated with: UniversalCopy[u128].
UINT_BITS: dict[str, int] = {
    name: d.bits
    for d in ELEMENT_TYPES.values()
    if d.name.startswith("u")
    for name in (d.name, *d.aliases)
}


def bits_of(t: T.Type) -> int:
    """CuTe's sizeof_bits of an element type (a bool is stored in a byte)."""
    return T.dtype_of(t).bits


def c_div(a: int, b: int) -> int:
    """C's truncating division (the language's ``/`` on integers)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def c_rem(a: int, b: int) -> int:
    """C's remainder: the sign of the dividend."""
    return a - b * c_div(a, b)


def is_int(x: Any) -> bool:
    return is_static(x)


def is_int_tuple(x: Any) -> bool:
    """An IntTuple whose leaves are ints (static) or SymInts."""
    if isinstance(x, tuple):
        return all(is_int_tuple(e) for e in x)
    return is_static(x) or isinstance(x, SymInt)


def is_layout(x: Any) -> bool:
    return isinstance(x, Layout | ComposedLayout)


def describe(x: Any) -> str:
    """What a value is, for 'expected a tensor, got ...' messages."""
    if isinstance(x, bool):
        return "a bool"
    if is_static(x):
        return f"the integer {x}"
    if isinstance(x, float):
        return f"the float {x}"
    if isinstance(x, SymInt):
        return f"the run-time integer {x}"
    if isinstance(x, tuple):
        return "a tuple"
    if isinstance(x, Layout | ComposedLayout):
        return f"the layout {x}"
    if isinstance(x, Swizzle):
        return f"the swizzle {x}"
    if isinstance(x, T.Type):
        return f"the type {x}"
    if x is None:
        return "'_'"
    if isinstance(x, S.Tensor):
        if x.coord_rank:
            body = CoordTensorType(x.coord_rank, spec_of(x.layout)).print_body()
            return f"a coordinate tensor ({body.split(', ', 1)[1]})"
        return f"a {x.space.memory} tensor {x.layout}"
    if isinstance(x, S.Runtime):
        return f"a run-time {lang_type(x.type)}"
    if isinstance(x, S.AtomRef):
        return f"the atom {x.name}"
    if isinstance(x, S.TiledCopy):
        return "a tiled copy"
    if isinstance(x, S.TiledMma):
        return "a tiled MMA"
    if isinstance(x, S.ThrSlice):
        return "a thread slice"
    if isinstance(x, S.Builtin):
        return f"the builtin '{x.name}'"
    if isinstance(x, S.FuncRef):
        return f"the function '{x.node.name}'"
    if isinstance(x, S.Namespace):
        return f"the imported file '{x.alias}'"
    return type(x).__name__


def loc_of(node: ast.Node) -> Location:
    return node.span.location


def error(message: str, node: ast.Node, notes: list[Note] | None = None) -> CompileError:
    return CompileError(message, loc_of(node), notes)


@contextmanager
def algebra_errors(node: ast.Node, what: str = "") -> Iterator[None]:
    """Re-raise the layout algebra's and the atom library's errors at `node`.

    A LayoutWarning of the algebra (CuTe's result is kept but is not what the operation
    means) becomes one located warning at `node`, printed to stderr; the compile goes on.
    """
    prefix = f"{what}: " if what else ""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", LayoutWarning)
            yield
    except DynamicValueError as e:
        raise error(f"{prefix}needs a compile-time value: {e}", node) from None
    except (LayoutError, UnsupportedMmaError, CopyAtomError) as e:
        # The algebra's messages often name their function already ("composition: ...").
        text = str(e)
        raise error(text if text.startswith(prefix) else f"{prefix}{text}", node) from None
    except RecursionError:
        raise error(f"{prefix}the layout is nested too deeply", node) from None
    _report_layout_warnings(caught, node, prefix)


def _report_layout_warnings(caught: list, node: ast.Node, prefix: str) -> None:
    ours = [w for w in caught if issubclass(w.category, LayoutWarning)]
    for w in caught:  # other warnings go on as if never caught
        if w not in ours:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if ours:
        message = str(ours[0].message)
        if prefix and not message.startswith(prefix[:-2] + "("):  # not "composition: composition("
            message = prefix + message
        diag = Diagnostic(message, loc_of(node), severity="warning")
        print(diag.render(), file=sys.stderr)


def check_layout_size(layout: Any, node: ast.Node) -> None:
    """A static layout of more than LAYOUT_SIZE_LIMIT elements is an error (not a hang)."""
    inner = layout.layout_b if isinstance(layout, ComposedLayout) else layout
    n = 1
    stack = [inner.shape]
    while stack:
        t = stack.pop()
        if isinstance(t, tuple):
            stack.extend(t)
        elif is_static(t):
            n *= max(t, 1)
    if n > LAYOUT_SIZE_LIMIT:
        raise error(f"layout {layout} has {n} elements; at most 2**31 are supported", node)


def lcm(a: int, b: int) -> int:
    return a * b // math.gcd(a, b)


def check_divides(layout: Any, tile: Any, step: Any, what: str, node: ast.Node) -> None:
    """Each static extent of `layout` a multiple of the matching extent of `tile` (the
    modes `step` keeps): a partition by a tile that does not divide the tensor gives
    threads elements past its end (CuTe pads the division)."""
    inner = layout.layout_b if isinstance(layout, ComposedLayout) else layout
    modes = inner.shape if isinstance(inner.shape, tuple) else (inner.shape,)
    tiles = tile if isinstance(tile, tuple) else (tile,)
    if step is not None:
        keep = step if isinstance(step, tuple) else (step,)
        tiles = tuple(t for t, k in zip(tiles, keep, strict=False) if k is not X)
    for i, (m, t) in enumerate(zip(modes, tiles, strict=False)):
        extent, per = size(Layout(m)), size(Layout(t))
        if is_static(extent) and is_static(per) and int(per) > 0 and int(extent) % int(per):
            raise error(
                f"the {what} {format_tuple(tile)} does not divide the tensor {inner}: mode {i} "
                f"has {int(extent)} elements, not a multiple of {int(per)}, so some threads' "
                "elements would lie past its end",
                node,
            )


def lang_type(t: Any) -> str:
    """A type as the language spells it: the IR's index is `int`, i1 is `bool`."""
    if isinstance(t, T.IndexType):
        return "int"
    if isinstance(t, T.IntegerType) and t.width == 1:
        return "bool"
    return str(t)


def is_static_tuple(v: Any) -> bool:
    return is_int_tuple(v) and all(is_static(x) for x in leaves(v))


def require_int(v: Any, node: ast.Node, what: str = "this value") -> int:
    if isinstance(v, bool) or not is_static(v):
        if isinstance(v, S.Runtime | SymInt):
            raise error(f"{what} must be known at compile time, but it is a run-time value", node)
        raise error(f"{what} must be a compile-time integer, got {describe(v)}", node)
    return v


def to_int_tuple(v: Any, node: ast.Node, what: str) -> Any:
    """`v` as an IntTuple: static ints, or the SymInts of run-time extents and strides."""
    if isinstance(v, tuple):
        elts = node.elts if isinstance(node, ast.Tuple) else [node] * len(v)
        return tuple(to_int_tuple(x, n, what) for x, n in zip(v, elts, strict=True))
    if isinstance(v, S.Runtime) and v.sym is not None:
        return v.sym
    if isinstance(v, bool) or not (is_static(v) or isinstance(v, SymInt)):
        if isinstance(v, S.Runtime):
            raise error(
                f"{what} must be an integer known to the compiler; this run-time "
                "value has no symbolic form (only tensor extents and strides do)",
                node,
            )
        raise error(f"{what} must be integers, got {describe(v)}", node)
    if is_static(v) and v < 0:
        raise error(f"{what} must not be negative, got {v}", node)
    return v


def checked_layout(layout: Any, node: ast.Node) -> Any:
    check_layout_size(layout, node)
    return layout


def arg_node(node: ast.Call, name: str, position: int) -> ast.Node:
    """Where a call's argument `name` is written: its keyword's value, else the
    `position`-th positional argument, else the call (to locate a diagnostic)."""
    for k in node.kwargs:
        if k.name == name:
            return k.value
    return node.args[position] if position < len(node.args) else node


def arity(name: str, args: list[Any], lo: int, hi: int | None, node: ast.Node) -> None:
    """`lo` to `hi` arguments (`hi` None: any number from `lo`)."""
    if len(args) < lo or (hi is not None and len(args) > hi):
        want = str(lo) if lo == hi else f"at least {lo}" if hi is None else f"{lo} to {hi}"
        raise error(f"'{name}' takes {want} arguments, got {len(args)}", node)


def static_binop(op: str, a: Any, b: Any, node: ast.Node) -> Any:
    """op on two compile-time numbers (ints are C's, SymInts the algebra's)."""
    if op in ("/", "%") and is_static(b) and b == 0:
        raise error(f"division by zero in {a} {op} {b}", node)
    both_int = is_static(a) and is_static(b)
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        if both_int:
            return c_div(a, b)
        if isinstance(a, float) or isinstance(b, float):
            return a / b
        return a // b  # SymInt: extents are non-negative, where C and floor agree
    if op == "%":
        return c_rem(a, b) if both_int else a % b
    if not both_int:
        if op in ("==", "!=", "<", "<=", ">", ">=") and not (
            isinstance(a, SymInt) or isinstance(b, SymInt)
        ):
            return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[
                op
            ]
        raise error(
            f"'{op}' needs compile-time integers, got {describe(a)} and {describe(b)}", node
        )
    if op in ("<<", ">>") and (b < 0 or b > 63):
        raise error(f"shift by {b} is out of range (0..63)", node)
    ops = {
        "&": lambda: a & b,
        "|": lambda: a | b,
        "^": lambda: a ^ b,
        "<<": lambda: a << b,
        ">>": lambda: a >> b,
        "==": lambda: a == b,
        "!=": lambda: a != b,
        "<": lambda: a < b,
        "<=": lambda: a <= b,
        ">": lambda: a > b,
        ">=": lambda: a >= b,
    }
    return ops[op]()
