"""``cutec layout LAYOUT``: print a layout and its table, draw it, or evaluate an algebra op;
or build a TiledMMA / TiledCopy and print or draw its TV layouts.

cutec layout "(4,8):(1,4)"
cutec layout "(4,8):(1,4)" --svg out.svg
cutec layout --op composition "(4,8):(1,4)" "8:2"
cutec layout --tiled-mma SM80_16x8x16_F32F16F16F32_TN --atoms "(2,2,1)" --svg mma.svg
cutec layout --tiled-mma UniversalFMA_F32 --atoms "(16,16,1)" --permutation "(32,32,_)"
cutec layout --tiled-copy "UniversalCopy<uint128_t>" --thr "(32,8)" --val "(4,1)" --svg c.svg

--tiled-mma ATOM is CuTe's make_tiled_mma(ATOM, --atoms, --permutation): --atoms the
(M,N,K) atom layout (a shape or a layout, default (1,1,1)), --permutation up to three
tilers (an int, a layout or _ per mode). It prints the TiledMMA as CuTe's print does and
each of the A (MxK), B (NxK) and C (MxN) tiles with the thread T and value V owning
every cell; --svg draws the three tiles (as CuTe's print_latex). --tiled-copy ATOM is
make_tiled_copy(Copy_Atom<ATOM, --element>, --thr, --val): it prints the TiledCopy and
the tile as its source (S) and destination (D) sides split it; --svg draws both.
`cutec atoms` lists the atoms.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Any

from cutec.commands import layout_ops
from cutec.commands import layout_tiled as tiled
from cutec.commands.common import write_output
from cutec.layout import ComposedLayout, Layout, LayoutError, size
from cutec.layout.symbolic import is_static
from cutec.layout.text import format_int_tuple, parse_value
from cutec.layout.visual import MAX_CELLS, layout_svg, layout_table


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``layout`` verb."""
    p = subparsers.add_parser(
        "layout",
        help="print, draw or compute CuTe layouts",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("args", nargs="*", metavar="ARG", help="a layout, or the op's arguments")
    p.add_argument("--op", metavar="NAME", help="evaluate this algebra operation on the ARGs")
    p.add_argument(
        "--svg", metavar="FILE", help="write a picture of the layout (or tiled MMA / copy) to FILE"
    )
    g = p.add_argument_group("tiled MMA and tiled copy")
    g.add_argument("--tiled-mma", metavar="ATOM", help="make_tiled_mma of this MMA atom")
    g.add_argument(
        "--atoms", metavar="LAYOUT", help="--tiled-mma's (M,N,K) atom layout (default (1,1,1))"
    )
    g.add_argument(
        "--permutation",
        metavar="TILERS",
        help="--tiled-mma's permutation: up to three tilers, e.g. (32,32,_)",
    )
    g.add_argument("--tiled-copy", metavar="ATOM", help="make_tiled_copy of this copy atom")
    g.add_argument("--thr", metavar="LAYOUT", help="--tiled-copy's thread layout (m,n) -> thr")
    g.add_argument(
        "--val", metavar="LAYOUT", help="--tiled-copy's value layout (m,n) -> val (default 1)"
    )
    g.add_argument(
        "--element",
        metavar="TYPE",
        help="--tiled-copy's element type, e.g. f16 (default f32)",
    )
    p.set_defaults(run=run)


def _show(value: Any) -> str:
    if isinstance(value, Layout | ComposedLayout):
        return str(value)
    if isinstance(value, tuple):
        return "(" + ",".join(_show(v) for v in value) + ")"
    if isinstance(value, bool):
        return str(value).lower()
    return format_int_tuple(value)


def run(args: argparse.Namespace) -> int:
    """Run the verb; a LayoutError is reported as ``error: ...`` with exit code 1."""
    if args.tiled_mma is not None or args.tiled_copy is not None:
        return tiled.run(args)
    try:
        misplaced = [f for f in tiled.FLAGS if getattr(args, f) is not None]
        if misplaced:
            flag = "--" + misplaced[0].replace("_", "-")
            raise LayoutError(f"{flag} applies to --tiled-mma or --tiled-copy only")
        if not args.args:
            raise LayoutError("give a layout, --op NAME with its arguments, or --tiled-mma/-copy")
        if args.op:
            result = layout_ops.apply(args.op, args.args)
        elif len(args.args) == 1:
            result = parse_value(args.args[0])
        else:
            raise LayoutError("give one layout, or --op NAME with its arguments")
        # Text (a table, an SVG, a formatted layout) is printed as it is.
        text = result if isinstance(result, str) else _show(result)
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        if isinstance(result, Layout | ComposedLayout) and result.rank <= 2:
            _print_table(result)
        if args.svg:
            if not isinstance(result, Layout | ComposedLayout):
                raise LayoutError(f"--svg needs a layout, got {_show(result)}")
            if not _small(result):
                raise LayoutError(
                    f"--svg draws layouts of at most {MAX_CELLS} cells; "
                    f"{_show(result)} has {size(result)}"
                )
            write_output(args.svg, layout_svg(result))
    except LayoutError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0  # a CompileError (an unwritable --svg file) is reported by the CLI


def _small(layout: Any) -> bool:
    # Larger layouts get their text form only (the algebra's visual limit).
    n = size(layout)
    return is_static(n) and n <= MAX_CELLS


def _print_table(layout: Any) -> None:
    # A dynamic or huge layout has no table; its text form was printed already.
    if not _small(layout):
        return
    with contextlib.suppress(LayoutError):
        sys.stdout.write(layout_table(layout).split("\n", 1)[1])
