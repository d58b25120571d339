"""``cutec run FILE``: launch a kernel once on random inputs and time it.

    cutec run examples/sgemm_2.cute --kernel sgemm_nt --shape A=4096,4096 \\
        --shape B=4096,4096 --set alpha=1 --set beta=0 --repeat 20

Every tensor gets random data (never zeros: normal floats, small non-zero
integers), laid out as its declaration says: static strides as written, a
run-time stride compact after the modes of smaller stride (``(1, ldA)`` gives
``ldA = M``). Extents come from ``--shape NAME=E0,E1,...`` (flattened modes) or
from names already bound (``K`` of A binds K of B); scalars and run-time names
from ``--set NAME=VALUE`` (floats default to 1). It prints a checksum of each
tensor after the launch (sum and sum of absolute values, in float64) and the
median time of ``--repeat`` launches measured with CUDA events (``--device
cpu`` runs once on the CPU backend, untimed, with its checks: a failed one is
reported with the op's location, the thread and the block, exit code 1;
``--no-bounds-check`` and ``--no-shared-checks`` turn them off for speed).
Every flag is checked before anything is allocated (extents at least 1 and as
declared, strides at least 0, names the kernel's, the inputs within half the
machine's memory): a mistake is one ``error:`` line naming the flag, exit code 1.
"""

from __future__ import annotations

import argparse
import re
from typing import Any

from cutec.diagnostics import CompileError
from cutec.ir.signature import TensorParam
from cutec.layout.errors import LayoutError
from cutec.layout.symbolic import parse_expr


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("run", help="launch a kernel on random inputs and time it",
                              description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("file", help="a .cute file")
    p.add_argument("--kernel", help="the kernel to run (when the file has several)")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME=VALUE",
                   help="set a compile-time parameter")  # fmt: skip
    p.add_argument("--shape", action="append", default=[], metavar="T=E0,E1,...",
                   help="the extents of tensor T (its flattened modes)")  # fmt: skip
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="a scalar argument or a run-time extent/stride")  # fmt: skip
    p.add_argument("--repeat", type=_count, default=10, help="timed launches (default 10)")
    p.add_argument("--device", default="0", help="a GPU ordinal, or cpu")
    p.add_argument("--arch", help="the target (default: the GPU's)")
    p.add_argument("--seed", type=_count, default=0, help="the inputs' random seed (default 0)")
    p.add_argument(
        "--no-bounds-check",
        action="store_true",
        help="--device cpu: do not check accesses against their buffers' bounds",
    )
    p.add_argument("--no-shared-checks", action="store_true",
                   help="--device cpu: do not check shared memory for races, uninitialised "
                        "loads and cp.async destinations read before their wait")  # fmt: skip
    p.set_defaults(run=run)


def _count(text: str) -> int:
    """An integer >= 0 (--repeat, --seed); argparse reports anything else as exit 1."""
    if not re.fullmatch(r"[0-9]+", text.strip()):
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got '{text}'")
    return int(text)


def _pairs(items: list[str], flag: str) -> dict[str, str]:
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


def _number(text: str, kind: type, what: str) -> Any:
    """`text` as an int or a float; a CompileError (exit 1) naming the flag if it is not."""
    try:
        return kind(text)
    except ValueError:
        noun = "an integer" if kind is int else "a number"
        raise CompileError(f"{what}: expected {noun}, got '{text}'") from None


def run(args: argparse.Namespace) -> int:
    # The CLI imports every verb to build its parser; numpy and the runtime load only
    # when a kernel is run (cutec.commands.run_launch).
    from cutec.commands.run_launch import launch

    return launch(args)
