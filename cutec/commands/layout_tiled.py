"""``cutec layout --tiled-mma ATOM`` and ``--tiled-copy ATOM``: a user's TiledMMA or
TiledCopy, printed as CuTe prints it with a table of its TV layouts, or drawn as SVG.

    cutec layout --tiled-mma SM80_16x8x16_F32F16F16F32_TN --atoms "(2,2,1)" --svg mma.svg
    cutec layout --tiled-copy "UniversalCopy<uint128_t>" --thr "(32,8)" --val "(4,1)"

A TiledMMA shows its A (MxK), B (NxK) and C (MxN) tiles and a TiledCopy its tile as the
source (S) and destination (D) sides split it: every cell labelled with the thread T and
value V that hold it (CuTe's print_latex). Where several (thread, value) pairs hold one
cell (an operand broadcast across threads), the table and the picture show the first
in CuTe's TV order (thread fastest), as print_latex does. A wgmma operand read from
shared memory (one descriptor every thread passes) has no TV picture and is left out.
Mistakes (an unknown atom, a layout
that does not parse, a tiling CuTe rejects) are one ``error: ...`` line and exit code 1.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from typing import Any

from cutec.atoms.copy import CopyAtom, copy_atom, copy_atoms, copy_family
from cutec.atoms.mma import MmaAtom, mma_atoms
from cutec.atoms.tiled import (
    TiledCopy,
    TiledMMA,
    make_copy_atom,
    make_tiled_copy,
    make_tiled_mma,
    side_by_side,
)
from cutec.commands.common import write_output
from cutec.dtypes import dtype
from cutec.layout import Layout, LayoutError, size
from cutec.layout import inttuple as it
from cutec.layout.text import format_int_tuple, parse_value
from cutec.layout.visual import _PALETTE, MAX_CELLS, _svg

# The flags of this mode, as argparse names them; each needs --tiled-mma or --tiled-copy.
FLAGS = ("atoms", "permutation", "thr", "val", "element")
_MMA_FLAGS = ("atoms", "permutation")
_COPY_FLAGS = ("thr", "val", "element")

# Tiles larger than this have no text table (the atoms command's bound) ...
MAX_TABLE_CELLS = 4096
# ... and no picture (the layout algebra's bound for one panel); nor TV layouts of more
# (thread, value) pairs than that (each pair is evaluated to find its cell).
MAX_PICTURE_CELLS = MAX_CELLS

Panel = tuple[str, Layout, tuple[int, int]]


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _unknown(name: str, names: list[str], other: list[str], kind: str, other_flag: str) -> str:
    if name in other:
        return (
            f"{name} is not {'an' if kind == 'MMA' else 'a'} {kind} atom: draw it with {other_flag}"
        )
    close = difflib.get_close_matches(name, names, n=4, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else "; `cutec atoms` lists them"
    return f"no {kind} atom named {name!r}{hint}"


def _copy_names() -> list[str]:
    return [a.name for a in copy_atoms()]


def _mma_atom(name: str) -> MmaAtom:
    atoms = mma_atoms()
    if name not in atoms:
        raise LayoutError(_unknown(name, list(atoms), _copy_names(), "MMA", "--tiled-copy"))
    return atoms[name]


def _copy_atom(name: str) -> CopyAtom:
    names = _copy_names()
    family = copy_family(name)
    if family is not None and family.traits.per_box:
        raise LayoutError(f"{name} copies a whole box from one thread: it has no thread tiling")
    if name not in names:
        raise LayoutError(_unknown(name, names, list(mma_atoms()), "copy", "--tiled-mma"))
    return copy_atom(name)


def _parse(flag: str, text: str) -> Any:
    try:
        return parse_value(text)
    except LayoutError as exc:
        raise LayoutError(f"{flag} {text}: {exc}") from None


def _is_int_tuple(value: Any) -> bool:
    if isinstance(value, tuple):
        return all(_is_int_tuple(v) for v in value)
    return isinstance(value, int) and not isinstance(value, bool)


def _layout_arg(flag: str, text: str | None) -> Layout | None:
    """A static layout, or a shape (made a compact column-major layout), or None."""
    if text is None:
        return None
    value = _parse(flag, text)
    if not isinstance(value, Layout):
        if not _is_int_tuple(value):
            raise LayoutError(f"{flag} {text}: expected a shape or a layout")
        try:
            value = Layout(value)
        except LayoutError as exc:
            raise LayoutError(f"{flag} {text}: {exc}") from None
    if not it.is_static(value.shape) or not it.is_static(value.stride):
        raise LayoutError(f"{flag} {text}: the layout must be static (integers only)")
    return value


def _permutation(text: str | None) -> tuple[Any, ...] | None:
    if text is None:
        return None
    value = _parse("--permutation", text)
    modes = value if isinstance(value, tuple) else (value,)
    for mode in modes:
        if not (mode is None or isinstance(mode, Layout) or _is_int_tuple(mode)):
            raise LayoutError(f"--permutation {text}: each mode is an int, a shape, a layout or _")
    return tuple(Layout(m) if isinstance(m, tuple) else m for m in modes)


def build_tiled_mma(args: argparse.Namespace) -> TiledMMA:
    """make_tiled_mma(--tiled-mma, --atoms, --permutation)."""
    atom = _mma_atom(args.tiled_mma)
    layout = _layout_arg("--atoms", args.atoms)
    return make_tiled_mma(atom, layout, _permutation(args.permutation))


def build_tiled_copy(args: argparse.Namespace) -> TiledCopy:
    """make_tiled_copy(Copy_Atom<--tiled-copy, --element>, --thr, --val)."""
    atom = _copy_atom(args.tiled_copy)
    if args.thr is None:
        raise LayoutError("--tiled-copy needs --thr, the thread layout, e.g. --thr (32,8)")
    thr = _layout_arg("--thr", args.thr)
    val = _layout_arg("--val", args.val)
    bits = dtype(args.element or "f32").bits
    return make_tiled_copy(make_copy_atom(atom, bits), thr, val)


def _static_tile(tile: Any, what: str) -> tuple[int, int]:
    if not isinstance(tile, tuple) or len(tile) != 2:
        raise LayoutError(f"the {what} tile {format_int_tuple(tile)} is not rank 2")
    if not all(isinstance(t, int) for t in tile):
        raise LayoutError(f"the {what} tile {format_int_tuple(tile)} is not static")
    return int(tile[0]), int(tile[1])


def mma_panels(mma: TiledMMA) -> list[Panel]:
    """(label, TV layout, (rows, cols)) of A, B and C; smem wgmma operands left out."""
    m, n, k = (int(s) for s in mma.tile_size_mnk)
    panels: list[Panel] = []
    if not mma.atom.a_in_smem:
        panels.append(("A", mma.get_layoutA_TV(), (m, k)))
    if not mma.atom.b_in_smem:
        panels.append(("B", mma.get_layoutB_TV(), (n, k)))
    return [*panels, ("C", mma.get_layoutC_TV(), (m, n))]


def copy_panels(tiled_copy: TiledCopy) -> list[Panel]:
    """(label, TV layout, (rows, cols)) of the source (S) and destination (D) sides."""
    tile = _static_tile(it.product_each(tiled_copy.tiler_mn), "copy")
    return [("S", tiled_copy.get_layoutS_TV(), tile), ("D", tiled_copy.get_layoutD_TV(), tile)]


def _owners(tv: Layout, tile: tuple[int, int]) -> tuple[list[list[tuple[int, int] | None]], int]:
    """Each cell's (thread, value): the first pair holding it in CuTe's TV order
    (thread fastest, as print_latex shows it); and the most pairs holding one cell."""
    rows, cols = tile
    cells: list[list[tuple[int, int] | None]] = [[None] * cols for _ in range(rows)]
    counts = [[0] * cols for _ in range(rows)]
    nthr, nval = int(size(tv, 0)), int(size(tv, 1))
    for v in range(nval):
        for t in range(nthr):
            idx = int(tv(t, v))
            m, n = idx % rows, idx // rows
            if n >= cols:
                raise LayoutError(f"TV layout {tv} maps (T{t},V{v}) outside the tile {tile}")
            if cells[m][n] is None:
                cells[m][n] = (t, v)
            counts[m][n] += 1
    return cells, max(max(r) for r in counts)


def _label(owner: tuple[int, int] | None) -> str:
    return "." if owner is None else f"T{owner[0]}V{owner[1]}"


def tv_table(label: str, tv: Layout, tile: tuple[int, int]) -> str:
    """The tile as a table of T<thr>V<val> cells, in the style of CuTe's print_layout."""
    rows, cols = tile
    head = f"{label}: {tv} on tile {format_int_tuple(tile)}\n"
    if rows * cols > MAX_TABLE_CELLS:
        return head + f"  (table omitted: {rows * cols} cells)\n"
    if size(tv) > MAX_PICTURE_CELLS:
        return head + f"  (table omitted: {size(tv)} (thread, value) pairs)\n"
    owners, most = _owners(tv, tile)
    cells = [[_label(o) for o in row] for row in owners]
    width = max(len(c) for row in cells for c in row) + 2
    bar = "    " + ("+" + "-" * width) * cols + "+\n"
    out = [head, "    " + "".join(f" {n:>{width - 1}}" for n in range(cols)) + "\n"]
    for m in range(rows):
        out.append(bar)
        out.append(f"{m:>2}  " + "".join(f"|{c:>{width - 1}} " for c in cells[m]) + "|\n")
    out.append(bar)
    if most > 1:
        out.append(f"  (up to {most} (thread, value) pairs hold a cell; the first is shown)\n")
    return "".join(out)


def _text(obj: TiledMMA | TiledCopy, panels: list[Panel], tables: bool) -> str:
    out = [f"{obj}\n"]
    for label, tv, tile in panels:
        out.append("\n" + (tv_table(label, tv, tile) if tables else f"{label}: {tv}\n"))
    return "".join(out)


def _check_drawable(panels: list[Panel]) -> None:
    """--svg's bounds: every tile, then every TV layout, within MAX_PICTURE_CELLS."""
    for label, _, (rows, cols) in panels:
        if rows * cols > MAX_PICTURE_CELLS:
            raise LayoutError(
                f"--svg draws tiles of at most {MAX_PICTURE_CELLS} cells; {label} is {rows}x{cols}"
            )
    for label, tv, _ in panels:
        if size(tv) > MAX_PICTURE_CELLS:
            raise LayoutError(
                f"--svg draws at most {MAX_PICTURE_CELLS} (thread, value) pairs; "
                f"{label} has {size(tv)}"
            )


def tv_svg(panels: list[Panel]) -> str:
    """The panels side by side, each cell coloured by its thread and labelled T<t>V<v>
    (the first pair holding it, as the table shows), each panel's label above it."""
    _check_drawable(panels)
    pictures = []
    for label, tv, (rows, cols) in panels:
        owners, _ = _owners(tv, (rows, cols))
        cells = [
            (m, n, _label(o), _PALETTE[o[0] % len(_PALETTE)])
            for m, row in enumerate(owners)
            for n, o in enumerate(row)
            if o is not None
        ]
        pictures.append(
            (label, _svg(cells, rows, cols, f"{label}: TV {tv} on tile ({rows},{cols})"))
        )
    return side_by_side(pictures)


def _check_flags(args: argparse.Namespace) -> None:
    if args.tiled_mma is not None and args.tiled_copy is not None:
        raise LayoutError("give --tiled-mma or --tiled-copy, not both")
    if args.args or args.op:
        raise LayoutError("--tiled-mma and --tiled-copy take no layout arguments or --op")
    mine, other = (_MMA_FLAGS, "--tiled-copy") if args.tiled_mma else (_COPY_FLAGS, "--tiled-mma")
    for name in FLAGS:
        if name not in mine and getattr(args, name) is not None:
            raise LayoutError(f"{_flag(name)} applies to {other}")


def run(args: argparse.Namespace) -> int:
    """Build the TiledMMA or TiledCopy, print it, and draw it with --svg."""
    try:
        _check_flags(args)
        if args.tiled_mma is not None:
            obj: TiledMMA | TiledCopy = build_tiled_mma(args)
            panels = mma_panels(obj)
        else:
            obj = build_tiled_copy(args)
            panels = copy_panels(obj)
        text = _text(obj, panels, tables=not args.svg)
        svg = tv_svg(panels) if args.svg else None
        sys.stdout.write(text)
        if svg is not None:
            write_output(args.svg, svg)  # an unwritable file is a CompileError: exit 1
    except ValueError as exc:  # LayoutError, CopyAtomError, UnknownDTypeError, ...
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0
