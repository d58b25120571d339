"""Seeing layouts: CuTe's print_layout table and SVG pictures of layouts and TV layouts."""

from __future__ import annotations

import sys
from typing import Any, TextIO

from cutec.layout import inttuple as it
from cutec.layout.errors import DynamicValueError, LayoutError
from cutec.layout.layout import Layout, cosize, size
from cutec.layout.swizzle import ComposedLayout


def escape(text: str) -> str:
    """Text for SVG character data (what xml.sax.saxutils.escape does, without importing
    xml.sax, which pulls in urllib: 30 ms of every `cutec` command's start)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_DELIM = "+-----------------------"

# Eight light colours, as CuTe's print_latex uses, cycled by value or thread.
_PALETTE = (
    "#afafff",
    "#afffaf",
    "#ffafaf",
    "#ffffaf",
    "#afffff",
    "#ffafff",
    "#d7d7d7",
    "#ffd7af",
)


def _as_2d(layout: Any) -> Any:
    if not isinstance(layout, Layout | ComposedLayout):
        raise LayoutError(f"print_layout needs a layout, got {layout!r}")
    if layout.rank == 1:  # a vector is shown as one column
        if isinstance(layout, ComposedLayout):
            return ComposedLayout(layout.layout_a, layout.offset, _as_2d(layout.layout_b))
        return Layout((layout.shape, 1), (layout.stride, 0))
    if layout.rank != 2:
        raise LayoutError(f"print_layout needs a rank-2 layout, got {layout}")
    return layout


def _static_int(x: Any, what: str) -> int:
    if not isinstance(x, int):
        raise DynamicValueError(f"cannot draw a layout with dynamic {what} {x}")
    return x


# The most cells a table or picture shows: a larger one is unreadable, and would take
# practically forever to compute (a layout of 10^8 cells).
MAX_CELLS = 1 << 14


def check_cells(cells: int, layout: Any) -> None:
    """Refuse to show `cells` cells of `layout` beyond MAX_CELLS."""
    if cells > MAX_CELLS:
        raise LayoutError(
            f"a layout's table or picture shows at most {MAX_CELLS} cells; {layout} has {cells}"
        )


def _grid(layout: Any) -> tuple[Any, int, int]:
    """The rank-2 form of `layout` and its static (rows, cols), within MAX_CELLS."""
    layout = _as_2d(layout)
    rows = _static_int(size(layout, 0), "size")
    cols = _static_int(size(layout, 1), "size")
    check_cells(rows * cols, layout)
    return layout, rows, cols


def layout_table(layout: Any) -> str:
    """The (m,n) -> index table exactly as CuTe's print_layout prints it."""
    layout, rows, cols = _grid(layout)
    width = len(str(_static_int(_cosize(layout), "cosize"))) + 2
    bar = "    " + _DELIM[: width + 1] * cols + "+\n"
    out = [f"{layout}\n", "    " + "".join(f"  {n:>{width - 2}} " for n in range(cols)) + "\n"]
    for m in range(rows):
        out.append(bar)
        cells = "".join(f"| {int(layout(m, n)):>{width - 2}} " for n in range(cols))
        out.append(f"{m:>2}  {cells}|\n")
    out.append(bar)
    return "".join(out)


def _cosize(layout: Any) -> Any:
    return cosize(layout) if isinstance(layout, Layout) else cosize(layout.layout_b)


def print_layout(layout: Any, file: TextIO | None = None) -> str:
    """Print CuTe's print_layout table of a rank-2 layout and return it."""
    text = layout_table(layout)
    (file or sys.stdout).write(text)
    return text


def _svg(cells: list[tuple[int, int, str, str]], rows: int, cols: int, title: str) -> str:
    cw, ch, margin = 48, 28, 24
    w, h = margin + cols * cw + 8, margin + rows * ch + 28
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
        f'font-family="monospace" font-size="11">',
        f'<text x="4" y="{h - 8}">{escape(title)}</text>',
    ]
    for n in range(cols):
        out.append(f'<text x="{margin + n * cw + cw // 2}" y="14" text-anchor="middle">{n}</text>')
    for m in range(rows):
        y = margin + m * ch + ch // 2 + 4
        out.append(f'<text x="{margin - 4}" y="{y}" text-anchor="end">{m}</text>')
    for m, n, label, colour in cells:
        x, y = margin + n * cw, margin + m * ch
        out.append(
            f'<rect x="{x}" y="{y}" width="{cw}" height="{ch}" fill="{colour}" stroke="black"/>'
        )
        out.append(
            f'<text x="{x + cw // 2}" y="{y + ch // 2 + 4}" text-anchor="middle">'
            f"{escape(label)}</text>"
        )
    out.append("</svg>\n")
    return "\n".join(out)


def layout_svg(layout: Any) -> str:
    """An SVG grid of a rank-2 layout: the index of each (m,n), coloured by index."""
    layout, rows, cols = _grid(layout)
    cells = []
    for m in range(rows):
        for n in range(cols):
            idx = int(layout(m, n))
            cells.append((m, n, str(idx), _PALETTE[idx % len(_PALETTE)]))
    return _svg(cells, rows, cols, str(layout))


def tv_layout_svg(tv: Layout, tile_shape: Any) -> str:
    """An SVG of the (M,N) tile showing which thread T and value V own each cell."""
    tile = it.product_each(tile_shape)
    if len(tile) != 2:
        raise LayoutError(
            f"tv_layout_svg needs a rank-2 tile shape, got {it.format_tuple(tile_shape)}"
        )
    rows, cols = (_static_int(t, "tile extent") for t in tile)
    nthr = _static_int(size(tv, 0), "thread count")
    nval = _static_int(size(tv, 1), "value count")
    check_cells(max(rows * cols, nthr * nval), tv)
    cells = []
    for t in range(nthr):
        for v in range(nval):
            idx = int(tv(t, v))
            m, n = idx % rows, idx // rows
            if n >= cols:
                raise LayoutError(f"TV layout {tv} maps (T{t},V{v}) outside the tile {tile}")
            cells.append((m, n, f"T{t}V{v}", _PALETTE[t % len(_PALETTE)]))
    return _svg(cells, rows, cols, f"TV {tv} on tile {it.format_tuple(tile)}")
