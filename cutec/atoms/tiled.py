"""TiledMMA and TiledCopy, CuTe's tilings of atoms over threads, and pictures of them.

The objects live in `tiled_mma` (make_tiled_mma, TiledMMA, ThrMMA) and `tiled_copy`
(make_copy_atom, make_tiled_copy*, TiledCopy, ThrCopy); this module gathers them and
draws their TV layouts as SVG: every cell of the tile labelled with the thread T and
value V that own it, one panel per operand (A, B, C) or side (S, D).
"""

from __future__ import annotations

import re

from cutec.atoms.tiled_copy import (
    ThrCopy,
    TiledCopy,
    TypedCopyAtom,
    make_copy_atom,
    make_tiled_copy,
    make_tiled_copy_A,
    make_tiled_copy_B,
    make_tiled_copy_C,
    make_tiled_copy_D,
    make_tiled_copy_S,
    make_tiled_copy_tv,
)
from cutec.atoms.tiled_mma import ThrMMA, TiledMMA, make_fragment_like, make_tiled_mma
from cutec.layout import Layout, LayoutError, tv_layout_svg
from cutec.layout.inttuple import is_static

__all__ = [
    "ThrCopy",
    "ThrMMA",
    "TiledCopy",
    "TiledMMA",
    "TypedCopyAtom",
    "make_copy_atom",
    "make_fragment_like",
    "make_tiled_copy",
    "make_tiled_copy_A",
    "make_tiled_copy_B",
    "make_tiled_copy_C",
    "make_tiled_copy_D",
    "make_tiled_copy_S",
    "make_tiled_copy_tv",
    "make_tiled_mma",
    "svg_panels",
    "tiled_copy_svg",
    "tiled_mma_svg",
]

_SIZE = re.compile(r'<svg [^>]*width="(\d+)" height="(\d+)"')
_GAP, _LABEL = 24, 20


def svg_panels(panels: list[tuple[str, Layout, tuple[int, int]]]) -> str:
    """One SVG of labelled TV-layout panels side by side: (label, tv, (rows, cols)) each.

    Each panel is `tv_layout_svg`'s picture, nested as an ``<svg>`` at its offset.
    """
    pictures = []
    for label, tv, tile in panels:
        if not all(is_static(t) for t in tile):
            raise LayoutError(f"cannot draw panel {label}: the tile {tile} is not static")
        pictures.append((label, tv_layout_svg(tv, tile)))
    return side_by_side(pictures)


def side_by_side(pictures: list[tuple[str, str]]) -> str:
    """(label, svg) pictures in one SVG, left to right, each label above its picture."""
    parts, x, height = [], 0, 0
    for label, inner in pictures:
        m = _SIZE.search(inner)
        assert m is not None, "a picture's <svg> gives its width and height"
        w, h = int(m.group(1)), int(m.group(2))
        inner = inner.replace("<svg ", f'<svg x="{x}" y="{_LABEL}" ', 1)
        parts.append(f'<text x="{x + 4}" y="14" font-weight="bold">{label}</text>\n{inner}')
        x, height = x + w + _GAP, max(height, h + _LABEL)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{max(x - _GAP, 0)}" '
        f'height="{height}" font-family="monospace" font-size="11">\n'
        + "\n".join(parts)
        + "</svg>\n"
    )


def tiled_mma_svg(mma: TiledMMA) -> str:
    """The A (MxK), B (NxK) and C (MxN) tiles of `mma`, each cell labelled T<thr>V<val>."""
    m, n, k = (int(s) for s in mma.tile_size_mnk)
    return svg_panels(
        [
            ("A", mma.get_layoutA_TV(), (m, k)),
            ("B", mma.get_layoutB_TV(), (n, k)),
            ("C", mma.get_layoutC_TV(), (m, n)),
        ]
    )


def tiled_copy_svg(tiled_copy: TiledCopy) -> str:
    """The tile as the source (S) and destination (D) side of `tiled_copy` partition it."""
    tiler = tiled_copy.tiler_mn
    if not isinstance(tiler, tuple) or len(tiler) != 2 or not all(is_static(t) for t in tiler):
        raise LayoutError("tiled_copy_svg draws a static rank-2 tile (a shape Tiler_MN)")
    tile = (int(tiler[0]), int(tiler[1]))
    return svg_panels(
        [("S", tiled_copy.get_layoutS_TV(), tile), ("D", tiled_copy.get_layoutD_TV(), tile)]
    )
