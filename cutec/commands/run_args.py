"""Reading ``cutec run``'s arguments: ``--set`` / ``--shape`` pairs, numbers, and each
tensor's extents and strides from its declaration (docs of the verb: run_cmd.py).

Apart from the verb's parser so that the launch (run_launch.py, which imports numpy
and the runtime) and the parser share them without importing each other.
"""

from __future__ import annotations

from typing import Any

from cutec.diagnostics import CompileError
from cutec.ir.signature import TensorParam
from cutec.layout.errors import LayoutError
from cutec.layout.symbolic import parse_expr


def pairs(items: list[str], flag: str) -> dict[str, str]:
    out = {}
    for item in items:
        name, eq, value = item.partition("=")
        if not eq or not name.strip().isidentifier():
            raise CompileError(f"{flag} {item}: expected NAME=VALUE")
        out[name.strip()] = value.strip()
    return out


def layouts(params: list[Any], shapes: dict[str, list[int]], values: dict[str, int]) -> dict:
    """(shape, strides) per tensor parameter, binding run-time names into `values`.

    Every extent must be at least 1 (an empty tensor has nothing to run on) and agree with
    the declaration (a static extent, a name bound before); every stride must be >= 0 (the
    inputs are laid out from their base upwards)."""
    tensors = [p.name for p in params if isinstance(p, TensorParam) and p.shape is not None]
    for name in shapes:
        if name not in tensors:
            raise CompileError(
                f"--shape {name}: the kernel has no tensor {name} "
                f"(its tensors: {', '.join(tensors) or 'none'})"
            )
    out = {}
    for p in params:
        if not isinstance(p, TensorParam) or p.shape is None:
            continue
        flat = p.flat
        given = shapes.get(p.name)
        if given is not None and len(given) != len(flat):
            raise CompileError(f"--shape {p.name}: {len(flat)} extents expected, got {len(given)}")
        extents = [_extent(p.name, i, e, given, values) for i, (e, _) in enumerate(flat)]
        # Static strides first (in size order), then the others compact after them.
        strides: list[int | None] = [None] * len(flat)
        step = 1
        order = sorted(range(len(flat)), key=lambda i: (not isinstance(flat[i][1], int), i))
        for i in order:
            strides[i] = stride = _stride(p.name, flat[i][1], step, values)
            step = max(step, stride * max(extents[i], 1))
        out[p.name] = (tuple(extents), tuple(int(x) for x in strides))  # type: ignore[arg-type]
    return out


def _stride(tensor: str, s: Any, step: int, values: dict[str, int]) -> int:
    """A stride declared `s` (an int, a run-time name or an expression of names): its
    value, a name not set yet compact after the modes laid out so far (`step`)."""
    if isinstance(s, int):
        stride = s
    elif s in values:
        stride = values[s]
    elif not s.isidentifier():
        # An expression of run-time names (a default compact stride).
        try:
            stride = parse_expr(s, values)
        except LayoutError as e:
            raise CompileError(f"--shape {tensor}: the stride {s}: {e}") from None
        if not isinstance(stride, int):
            raise CompileError(f"--shape {tensor}: the stride {s} is not known yet")
    else:
        stride = values[s] = step
    if stride < 0:
        where = f"the stride {s} of {tensor}" if isinstance(s, int) else f"--set {s}={stride}"
        raise CompileError(
            f"{where}: cutec run lays out its inputs from their base upwards: a stride must be >= 0"
        )
    return stride


def _extent(tensor: str, i: int, e: Any, given: list[int] | None, values: dict[str, int]) -> int:
    """Extent `i` of `tensor` (declared `e`: an int or a run-time name) from its --shape or
    from what is known; a CompileError naming the flag when it is missing or wrong."""
    if given is not None:
        extent = given[i]
    elif isinstance(e, int):
        extent = e
    elif e in values:
        extent = values[e]
    else:
        raise CompileError(f"--shape {tensor}=...: the extent {e} is not known yet")
    where = f"--shape {tensor}" if given is not None else f"--set {e}"
    if extent < 1:
        raise CompileError(f"{where}: extent {i} must be at least 1, got {extent}")
    if isinstance(e, int) and extent != e:
        raise CompileError(f"{where}: extent {i} is declared {e}, got {extent}")
    named = isinstance(e, str) and e.isidentifier()
    if named and values.setdefault(e, extent) != extent:
        raise CompileError(f"{where}: extent {i} is {e} = {values[e]}, got {extent}")
    return extent


def number(text: str, kind: type, what: str) -> Any:
    """`text` as an int or a float; a CompileError (exit 1) naming the flag if it is not."""
    try:
        return kind(text)
    except ValueError:
        noun = "an integer" if kind is int else "a number"
        raise CompileError(f"{what}: expected {noun}, got '{text}'") from None
