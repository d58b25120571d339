"""Random view chains over global tensors, and what running them must give: the
property the predicate pass promises (docs/passes.md, *predicate*; issue 26).

A kernel views a global tensor A through a random chain (slices of a mode at block.z
or at a constant, local_tile with and without a step, the tensor forms of the divides,
a second tile, compositions, local_partition, a TiledCopy's partition or a tile per
thread, a k-loop over a mode of tiles), copies the view into a register fragment and
from the fragment into the same chain of a global tensor C (copy, axpby, element by
element or column by column). The root is a parameter (column- or row-major), a
make_tensor view of one (its modes permuted) or a make_tensor view of a flat buffer
(any mode order, padding, a non-unit innermost stride); extents are dynamic or static,
and `assume`s make some modes full.

The promise: every element of the view whose coordinate in the root is inside the
root's extents is read and written; an element outside is neither read nor written.
So C ends as it began (NaN, or a sentinel where axpby reads it) except that
C[p] = alpha * A[p] + beta * C[p] (a copy: A[p]) at every in-bounds root coordinate p
that some block, thread and loop iteration covers; the CPU backend's bounds check never
fires; and a compile that refuses says why in one error located in the kernel.

The oracle is the layout algebra (`cutec.layout`, pure Python) on a *coordinate
layout*: the root's shape, its dynamic extents symbolic as the kernel's are, with
strides (1, R, R^2), R a power of two above every coordinate a chain reaches, so that
each view element's value encodes its root coordinate (out-of-bounds ones too). A step
that slices at a block, thread or loop index changes only the offset of the sliced
layout, never the layout: the offsets are evaluated per launch by `_offset` (CuTe's
crd2idx on numpy arrays) over all blocks, threads and iterations at once.
tests/passes/view_chain_run.py compiles and launches the kernels.
"""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from cutec.layout import (
    Layout,
    X,
    composition,
    flat_divide,
    get_flat_coord,
    logical_divide,
    product_each,
    tiled_divide,
    zipped_divide,
)
from cutec.layout.errors import LayoutWarning
from cutec.layout.inttuple import product, rank
from cutec.layout.layout import dice_layout, slice_and_offset
from cutec.layout.symbolic import evaluate, sym
from cutec.layout.tv import make_layout_tv, tidfrg

R = 1 << 12  # the coordinate radix: every coordinate a chain reaches is below it
AXES = ("bx", "by", "bz", "t", "k")  # the broadcast axes of the offsets, in this order
EXTENT_NAMES = ("M", "N", "L")  # the root's dynamic extents, by mode
MAX_FRAGMENT = 32  # elements per thread: unrolled copies compile slowly beyond
MAX_TILE = 256  # elements per CTA tile

# --------------------------------------------------------------------------- coordinates


@dataclass(frozen=True)
class Idx:
    """A coordinate of a slice: a constant, a block index, the thread index (or its
    quotient or remainder by a constant) or the loop index k."""

    axis: str  # "const", "bx", "by", "bz", "t", "k"
    value: int = 0  # the constant; for "t" with an op, the divisor
    op: str = ""  # for "t": "", "/" or "%"

    def text(self) -> str:
        if self.axis == "const":
            return str(self.value)
        if self.axis == "t":
            return "thread.x" if not self.op else f"thread.x {self.op} {self.value}"
        if self.axis == "k":
            return "k"
        return f"block.{self.axis[1]}"

    def eval(self, axes: dict[str, np.ndarray]) -> Any:
        if self.axis == "const":
            return self.value
        v = axes[self.axis]
        if self.op == "/":
            return v // self.value
        if self.op == "%":
            return v % self.value
        return v


def _fmt(c: Any) -> str:
    """A slice coordinate as .cute text: `_` for None, tuples in parentheses."""
    if c is None:
        return "_"
    if c is X:
        return "X"
    if isinstance(c, tuple):
        return "(" + ", ".join(_fmt(x) for x in c) + ("," if len(c) == 1 else "") + ")"
    if isinstance(c, Idx):
        return c.text()
    return str(c)


def _map(c: Any, fn: Any) -> Any:
    if isinstance(c, tuple):
        return tuple(_map(x, fn) for x in c)
    return None if c is None else fn(c)


def _uses(c: Any, axis: str) -> bool:
    if isinstance(c, tuple):
        return any(_uses(x, axis) for x in c)
    return isinstance(c, Idx) and c.axis == axis


def _offset(coord: Any, shape: Any, stride: Any) -> Any:
    """CuTe's crd2idx of a coordinate whose leaves are ints, numpy arrays (broadcast
    together) or None (a kept mode: no offset); an integer into a tuple shape splits
    colexicographically, the last mode unwrapped (cutec.layout.coords.crd2idx)."""
    if coord is None:
        return 0
    if isinstance(coord, tuple):
        shapes = shape if isinstance(shape, tuple) else (shape,)
        strides = stride if isinstance(stride, tuple) else (stride,)
        return sum((_offset(c, s, d) for c, s, d in zip(coord, shapes, strides, strict=True)), 0)
    if isinstance(shape, tuple):
        total: Any = 0
        for i, (s, d) in enumerate(zip(shape, stride, strict=True)):
            if i == len(shape) - 1:
                total = total + _offset(coord, s, d)
            else:
                total = total + _offset(coord % product(s), s, d)
                coord = coord // product(s)
        return total
    return coord * stride


# --------------------------------------------------------------------------- the oracle


@dataclass(frozen=True)
class Term:
    """One slice of a view chain: its coordinate and the (symbolic) layout it slices;
    its contribution to the view's offset is crd2idx of the coordinate in that layout."""

    coord: Any  # a tree of Idx, _Table and None
    shape: Any
    stride: Any
    loop_mode: int | None = None  # the mode of tiles the loop index k runs over


@dataclass(frozen=True)
class SView:
    """A view in the oracle: the coordinate layout (symbolic extents, as the kernel's)
    and the slices that gave its offset."""

    layout: Layout
    terms: tuple[Term, ...] = ()

    def sliced(self, coord: Any, loop_mode: int | None = None) -> SView:
        """The sub-layout from the algebra (the indices set to 0: it does not depend on
        them); the offset is evaluated later, at every value of the indices at once."""
        layout, _ = slice_and_offset(_map(coord, lambda _: 0), self.layout)
        term = Term(coord, self.layout.shape, self.layout.stride, loop_mode)
        return SView(layout, (*self.terms, term))

    def evaluate(self, env: dict[str, int], axes: dict[str, np.ndarray]) -> np.ndarray:
        """The value of every element of the view (axes x elements): its encoded root
        coordinate at the extents `env`, for every block, thread and iteration."""
        offset: Any = 0
        for t in self.terms:
            shape, stride = _subs(t.shape, env), _subs(t.stride, env)
            if t.loop_mode is not None:
                n = int(product(shape[t.loop_mode]))
                axes["k"] = np.arange(n).reshape((1,) * (len(AXES) - 1) + (n,))
            offset = offset + _offset(_map(t.coord, lambda c: c.eval(axes)), shape, stride)
        shape, stride = _subs(self.layout.shape, env), _subs(self.layout.stride, env)
        values = np.asarray(_offset(np.arange(int(product(shape))), shape, stride))
        dims = [axes[a].size if a in axes else 1 for a in AXES]
        return np.broadcast_to(np.asarray(offset), dims)[..., None] + values


def _subs(t: Any, env: dict[str, int]) -> Any:
    if isinstance(t, tuple):
        return tuple(_subs(x, env) for x in t)
    return evaluate(t, env)


@dataclass(frozen=True, eq=False)
class _Table:
    """A coordinate looked up per thread: values[thread.x] (a partition's flat
    coordinate of the thread, from the algebra)."""

    values: np.ndarray

    def eval(self, axes: dict[str, np.ndarray]) -> np.ndarray:
        return self.values[axes["t"]]


def _axes(grid: tuple[int, ...], threads: int) -> dict[str, np.ndarray]:
    out = {}
    for i, (name, n) in enumerate(zip(AXES, (*grid, threads), strict=False)):
        shape = [1] * len(AXES)
        shape[i] = n
        out[name] = np.arange(n).reshape(shape)
    return out


# --------------------------------------------------------------------------- chain steps


@dataclass(frozen=True)
class Slice:
    """`dst = src[coord]`: modes fixed at a block index, a constant or the loop index."""

    coord: tuple

    def text(self, src: str, x: str) -> str:
        return f"{src}[{', '.join(_fmt(c) for c in self.coord)}]"

    def loop_mode(self) -> int | None:
        return next((i for i, c in enumerate(self.coord) if _uses(c, "k")), None)

    def apply(self, v: SView, threads: int) -> SView:
        return v.sliced(self.coord, self.loop_mode())  # the index list, as the frontend's


@dataclass(frozen=True)
class Tile:
    """One tiling statement: `local_tile` (with a step: the X-ed modes of tiler and
    coordinate dropped) or a divide (logical, zipped, tiled, flat) sliced at the
    coordinate in its rest modes (None: the rest mode is kept, to be sliced later)."""

    form: str  # "local_tile", "logical", "zipped", "tiled", "flat"
    tiler: tuple[int, ...]
    coord: tuple  # Idx or None per tiler mode
    step: tuple | None = None  # local_tile only: 1 or X per mode

    def text(self, src: str, x: str) -> str:
        tiler = _fmt(self.tiler)
        if self.form == "local_tile":
            step = "" if self.step is None else f", step = {_fmt(self.step)}"
            return f"local_tile({src}, {tiler}, {_fmt(self.coord)}{step})"
        return f"{self.form}_divide({src}, {tiler})[{', '.join(_fmt(c) for c in self._slice())}]"

    def _slice(self) -> tuple:
        """The index list of the divide's slice: the tile kept, the rest at coord."""
        keep = (None,) * len(self.tiler)
        if self.form == "logical":
            return tuple((None, c) for c in self.coord)
        if self.form == "zipped":
            return (keep, self.coord)
        if self.form == "tiled":
            return (keep, *self.coord)
        return (*keep, *self.coord)  # flat

    def apply(self, v: SView, threads: int) -> SView:
        if self.form == "local_tile":  # as cutec.layout.local_tile_and_offset
            kept = [i for i in range(len(self.tiler)) if self.step is None or self.step[i] is not X]
            coord = tuple(self.coord[i] for i in kept)
            zd = zipped_divide(v.layout, tuple(self.tiler[i] for i in kept))
            r0, r1 = rank(zd.shape[0]), rank(zd.shape[1])
            rest = coord + (None,) * (r1 - len(coord))
            return SView(zd, v.terms).sliced((_nones(r0), rest))
        divide = {"logical": logical_divide, "zipped": zipped_divide,
                  "tiled": tiled_divide, "flat": flat_divide}[self.form]  # fmt: skip
        return SView(divide(v.layout, self.tiler), v.terms).sliced(self._slice())


def _nones(n: int) -> Any:
    return None if n == 1 else (None,) * n  # CuTe's repeat<N>(_)


@dataclass(frozen=True)
class Compose:
    """`composition(src, L)`: L a static permutation of the tile's elements."""

    shape: tuple[int, ...]
    stride: tuple[int, ...]

    def text(self, src: str, x: str) -> str:
        return f"composition({src}, make_layout({_fmt(self.shape)}, {_fmt(self.stride)}))"

    def apply(self, v: SView, threads: int) -> SView:
        return SView(composition(v.layout, Layout(self.shape, self.stride)), v.terms)


@dataclass(frozen=True)
class Partition:
    """`local_partition(src, thr, thread.x[, step])`."""

    shape: tuple[int, ...]
    stride: tuple[int, ...]
    step: tuple | None = None

    def text(self, src: str, x: str) -> str:
        thr = f"make_layout({_fmt(self.shape)}, {_fmt(self.stride)})"
        step = "" if self.step is None else f", step = {_fmt(self.step)}"
        return f"local_partition({src}, {thr}, thread.x{step})"

    def apply(self, v: SView, threads: int) -> SView:
        # As cutec.layout.local_partition_and_offset: the tile mode of the zipped divide
        # by the diced thread layout, at the thread's flat coordinate.
        thr = Layout(self.shape, self.stride)
        if self.step is not None:
            thr = dice_layout(self.step, thr)
        zd = zipped_divide(v.layout, product_each(thr.shape))
        r0, r1 = rank(zd.shape[0]), rank(zd.shape[1])
        flat = np.array([get_flat_coord(thr, t) for t in range(threads)]).reshape(threads, -1)
        per_mode = tuple(_Table(flat[:, m]) for m in range(flat.shape[1]))
        coord = per_mode if r0 > 1 else per_mode[0]
        return SView(zd, v.terms).sliced((coord, _nones(r1)))


@dataclass(frozen=True)
class CopyPartition:
    """`thr_copy.partition_S(src)` (partition_D for C) of a TiledCopy of
    UniversalCopy[f32] with thread and value layouts `thr` and `val`."""

    thr: tuple[int, int]
    val: tuple[int, int]

    def text(self, src: str, x: str) -> str:
        return f"thr_copy.partition_{'S' if x == 'A' else 'D'}({src})"

    def apply(self, v: SView, threads: int) -> SView:
        # As cutec.layout.tv.tv_partition_and_offset.
        tiler, tv = make_layout_tv(Layout(self.thr), Layout(self.val))
        frg = tidfrg(v.layout, tiler, tv)  # (Thr, (FrgV, FrgX), (RestM, RestN, ..))
        return SView(frg, v.terms).sliced((Idx("t"), None, _nones(v.layout.rank)))


Step = Slice | Tile | Compose | Partition | CopyPartition

# --------------------------------------------------------------------------- roots


@dataclass(frozen=True)
class Root:
    """The root of both chains: A's and C's parameters and the view of them the chain
    starts from. Its coordinates are the view's: view mode j is parameter mode perm[j]."""

    kind: str  # "param", "view" (make_tensor of a parameter), "flat" (make_tensor of a buffer)
    extents: tuple[str | int, ...]  # per parameter mode: a dynamic name or a static extent
    perm: tuple[int, ...]
    orders: tuple[tuple[int, ...], tuple[int, ...]]  # A's and C's modes, fastest first
    unit: tuple[bool, bool] = (True, True)  # flat: the fastest stride is a static 1

    @property
    def rank(self) -> int:
        return len(self.extents)

    def view_extents(self) -> tuple[str | int, ...]:
        return tuple(self.extents[p] for p in self.perm)

    def dynamic(self) -> list[str]:
        return [e for e in self.extents if isinstance(e, str)]

    def stride_text(self, x: str, i: int) -> str:
        """The stride of parameter mode i of tensor x: `1` or a name."""
        which = "AC".index(x)
        if i == self.orders[which][0] and (self.kind != "flat" or self.unit[which]):
            return "1"
        return f"s{x}{i}"

    def params(self, x: str) -> list[str]:
        """x's run-time parameters."""
        strides = [self.stride_text(x, i) for i in range(self.rank)]
        if self.kind == "flat":
            return [f"{x}: f32[S{x}]"] + [f"{n}: int" for n in strides if n != "1"]
        shape = ", ".join(str(e) for e in self.extents)
        if self.rank == 1:
            return [f"{x}: f32[{shape}]" + ("" if strides[0] == "1" else f" : {strides[0]}")]
        return [f"{x}: f32[{shape}] : ({', '.join(strides)})"]

    def start(self, x: str) -> tuple[str, list[str]]:
        """The name x's chain starts from and the statements that make it."""
        if self.kind == "param":
            return x, []
        shape = [str(self.extents[p]) for p in self.perm]
        stride = [self.stride_text(x, p) for p in self.perm]
        layout = f"make_layout({_tuple_text(shape)}, {_tuple_text(stride)})"
        return f"m{x}", [f"m{x} = make_tensor({x}, {layout})"]

    def coordinate_layout(self, assumes: dict[str, int]) -> Layout:
        """The root's shape (dynamic extents symbolic, with the kernel's facts) with
        strides (1, R, R^2): its value at a coordinate encodes the coordinate. A rank-1
        parameter's shape is an integer (as the frontend makes it), a view's a tuple."""
        shape = tuple(
            sym(e, divisibility=assumes.get(e, 1)) if isinstance(e, str) else e
            for e in self.view_extents()
        )
        if len(shape) == 1 and self.kind == "param":
            return Layout(shape[0], 1)
        return Layout(shape, tuple(R**i for i in range(len(shape))))


def _tuple_text(items: list[str]) -> str:
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def value_of(e: str | int, extents: dict[str, int]) -> int:
    return extents[e] if isinstance(e, str) else e


# --------------------------------------------------------------------------- kernels


@dataclass(frozen=True)
class GridDim:
    """One grid dimension: ceil_div(extent, tile) + extra, or the constant `extra`."""

    extent: str | int | None = None
    tile: int = 1
    extra: int = 0

    def text(self) -> str:
        if self.extent is None or isinstance(self.extent, int):
            return str(self.value({}))
        base = self.extent if self.tile == 1 else f"ceil_div({self.extent}, {self.tile})"
        return f"{base} + {self.extra}" if self.extra else base

    def value(self, extents: dict[str, int]) -> int:
        if self.extent is None:
            return self.extra
        return -(-value_of(self.extent, extents) // self.tile) + self.extra


@dataclass(frozen=True)
class ViewKernel:
    """A generated kernel: the root, the chain (steps[loop:] inside a loop over k),
    the transfer through registers and the launch shape."""

    root: Root
    steps: tuple[Step, ...]
    loop: int | None  # steps[loop] slices at the loop index k
    transfer: str  # "copy", "axpby", "copy_if", "elements", "columns"
    copy_tv: tuple[tuple[int, int], tuple[int, int]] | None  # a TiledCopy's (thr, val)
    threads: int
    grid: tuple[GridDim, GridDim, GridDim]
    assumes: tuple[tuple[str, int], ...]  # (extent, divisor)
    specialize: bool
    tiles: tuple[tuple[str, int], ...] = ()  # (extent, the tile that cuts it)

    @functools.cached_property
    def view(self) -> SView:
        """The per-thread view in the oracle."""
        v = SView(self.root.coordinate_layout(dict(self.assumes)))
        for step in self.steps:
            v = step.apply(v, self.threads)
        return v

    def coordinates(self, extents: dict[str, int]) -> np.ndarray:
        """The encoded root coordinate of every element that every thread of every block
        moves in every loop iteration (flat): copy_if's only where its predicate holds."""
        axes = _axes(tuple(g.value(extents) for g in self.grid), self.threads)
        codes = self.view.evaluate(extents, axes)
        if self.transfer != "copy_if":
            return codes.reshape(-1)
        i = np.arange(codes.shape[-1])
        return codes[np.broadcast_to(_selected(i, axes["t"][..., None]), codes.shape)]

    def features(self) -> tuple[str, ...]:
        """What the kernel does that the failures of a run are sorted by: a slice of the
        root ("slice"), a make_tensor root ("view", "flat"), element accesses
        ("elements"), a copy_if of the user's ("copy_if"), tiles that may lie wholly past
        the extents, from the grid or a constant index ("overhang"), a partition among
        threads of a rank-3 root ("rank3-partition")."""
        out = []
        first = next(i for i, s in enumerate(self.steps) if isinstance(s, Tile))
        if first:
            out.append("slice")
        if self.root.kind != "param":
            out.append(self.root.kind)
        if self.transfer in ("elements", "copy_if"):
            out.append(self.transfer)
        extra = any(g.extra and (g.extent is not None or g.extra > 1) for g in self.grid)
        consts = [c for s in self.steps if isinstance(s, Slice | Tile) for c in _leaves(s.coord)]
        if extra or any(isinstance(c, Idx) and c.axis == "const" and c.value for c in consts):
            out.append("overhang")
        parts = (Partition, CopyPartition)
        if self.root.rank == 3 and any(isinstance(s, parts) for s in self.steps):
            out.append("rank3-partition")
        return tuple(out)

    # ------------------------------------------------------------------ text
    def source(self, manual: bool = False) -> str:
        """The kernel. `manual`: guarded by hand, CuTe's way (an identity tensor viewed
        through the same chain, copy(..., pred = p)): no access needs the predicate pass."""
        params = self.root.params("A") + self.root.params("C")
        if self.root.kind == "flat":
            params += [f"{e}: int" for e in self.root.dynamic()]
        if self.transfer == "axpby" and not manual:
            params += ["alpha: f32", "beta: f32"]
        head = [f"kernel view_chain({', '.join(params)})"]
        if self.assumes:
            head.append("  assume " + ", ".join(f"{e} % {d} == 0" for e, d in self.assumes))
        head.append(f"  grid ({', '.join(g.text() for g in self.grid)}) threads {self.threads}")
        body: list[str] = []
        if self.copy_tv is not None:
            thr, val = self.copy_tv
            atom = "UniversalCopy[f32]"
            body.append(f"cp = tiled_copy({atom}, thr = {_fmt(thr)}, val = {_fmt(val)})")
            body.append("thr_copy = cp.slice(thread.x)")
        names = {}
        for x in "AC":
            names[x], lines = self.root.start(x)
            body += lines
        tensors = "ACP" if manual else "AC"
        if manual:
            names["P"] = "mP"
            body.append(f"mP = make_identity_tensor(shape({names['A']}))")
        cut = len(self.steps) if self.loop is None else self.loop
        for x in tensors:
            names[x] = self._chain(body, x, names[x], 0, cut)
        if self.loop is not None:
            mode = self.steps[self.loop].loop_mode()  # type: ignore[union-attr]
            body.append(f"for k in range(size({names['A']}, {mode})) {{")
            inner: list[str] = []
            for x in tensors:
                names[x] = self._chain(inner, x, names[x], cut, len(self.steps))
            inner += self._transfer(names, manual)
            body += ["  " + line for line in inner] + ["}"]
        else:
            body += self._transfer(names, manual)
        return "\n".join([*head, "{", *("  " + b for b in body), "}", ""])

    def _chain(self, body: list[str], x: str, src: str, first: int, last: int) -> str:
        for i in range(first, last):
            step = self.steps[i]
            if isinstance(step, CopyPartition) and x == "P":
                body.append(f"v{x}{i} = thr_copy.partition_S({src})")
            else:
                body.append(f"v{x}{i} = {step.text(src, x)}")
            src = f"v{x}{i}"
        return src

    def _transfer(self, names: dict[str, str], manual: bool) -> list[str]:
        a, c = names["A"], names["C"]
        lines = [f"r = make_fragment_like({a})"]
        pred = ""
        guards = [f"elem_less({names['P']}[i], shape(mP))"] if manual else []
        if self.transfer == "copy_if":
            guards.append(SELECTED)
        if guards:
            lines.append(f"p = make_fragment_like({a}, dtype = bool)")
            lines.append(f"for i in range(size(p)) unroll {{ p[i] = {' and '.join(guards)} }}")
        cp = "cp, " if self.copy_tv is not None else ""
        if self.transfer == "elements":
            for dst, src in (("r", a), (c, "r")):
                move = f"{dst}[i] = {src}[i]"
                if manual:
                    move = f"if p[i] {{ {move} }}"
                lines.append(f"for i in range(size(r)) unroll {{ {move} }}")
        elif self.transfer == "columns":
            n = len(_modes(self.view.layout))
            keep = ", ".join(["_"] * (n - 1))
            if manual:
                pred = f", pred = p[{keep}, j]"
            for src, dst in ((a, "r"), ("r", c)):
                lines.append(
                    f"for j in range(size({a}, {n - 1})) unroll {{ "
                    f"copy({cp}{src}[{keep}, j], {dst}[{keep}, j]{pred}) }}"
                )
        else:
            pred = ", pred = p" if guards else ""
            lines.append(f"copy({cp}{a}, r{pred})")
            if self.transfer == "axpby" and not manual:
                lines.append(f"axpby(alpha, r, beta, {c})")
            else:
                lines.append(f"copy({cp}r, {c}{pred})")
        return lines


SELECTED = "(i + thread.x) % 2 == 0"  # copy_if's predicate of element i, run-time


def _selected(i: np.ndarray, t: np.ndarray) -> np.ndarray:
    return (i + t) % 2 == 0  # SELECTED


def _modes(layout: Layout) -> tuple:
    return layout.shape if isinstance(layout.shape, tuple) else (layout.shape,)


def _leaves(t: Any) -> list[Any]:
    if isinstance(t, tuple):
        return [x for s in t for x in _leaves(s)]
    return [t]


# --------------------------------------------------------------------------- generation


class _Gen:
    """The draws of one kernel (numpy's Generator) and what they have used."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.blocks = ["bx", "by", "bz"]  # block axes not used yet
        self.grid: dict[str, GridDim] = {}
        self.tiles: dict[str, int] = {}

    def pick(self, items: list[Any], p: list[float] | None = None) -> Any:
        return items[int(self.rng.choice(len(items), p=p))]

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def root(self) -> Root:
        rank_ = self.pick([1, 2, 3], [0.2, 0.5, 0.3])
        extents = tuple(
            int(self.pick([1, 3, 8, 12, 16, 20])) if self.chance(0.12) else EXTENT_NAMES[i]
            for i in range(rank_)
        )
        kind = self.pick(["param", "view", "flat"], [0.45, 0.2, 0.35])
        if rank_ == 1 and kind == "view":
            kind = "param"
        perm = tuple(range(rank_))
        while kind == "view" and perm == tuple(range(rank_)):
            perm = tuple(int(p) for p in self.rng.permutation(rank_))
        if kind == "flat":
            orders = tuple(tuple(int(p) for p in self.rng.permutation(rank_)) for _ in "AC")
            unit = (self.chance(0.8), self.chance(0.8))
        else:  # numpy arrays on the CPU are C- or Fortran-contiguous
            col, row = tuple(range(rank_)), tuple(reversed(range(rank_)))
            orders = (self.pick([col, row]), self.pick([col, row]))
            unit = (True, True)
        return Root(kind, extents, perm, orders, unit)  # type: ignore[arg-type]

    def block(self, extent: str | int, tile: int) -> Idx | None:
        """The next block axis, for a mode of `extent` cut by `tile` (None: none left);
        its grid dimension covers the tiles, or is one block (fewer, for a large extent):
        never more blocks than tiles, which is the kernel's to avoid (as in CuTe; the CPU
        backend's bounds check reports it, test_view_chains shows)."""
        if not self.blocks:
            return None
        axis = self.blocks.pop(0)
        if self.chance(0.05):
            self.grid[axis] = GridDim(None, 1, 1)
        else:
            self.grid[axis] = GridDim(extent, tile, 0)
        return Idx(axis)

    def const(self, p: list[float]) -> Idx:
        return Idx("const", int(self.pick(list(range(len(p))), p)))

    def tiler(self, modes: int) -> tuple[int, ...]:
        sizes, weights = [1, 2, 3, 4, 5, 8, 16], [0.08, 0.17, 0.12, 0.25, 0.08, 0.2, 0.1]
        while True:
            tiler = tuple(int(self.pick(sizes, weights)) for _ in range(modes))
            if math.prod(tiler) <= MAX_TILE:
                return tiler

    def divisor(self, n: int, most: int = 8) -> int:
        return int(self.pick([d for d in range(1, min(n, most) + 1) if n % d == 0]))


def random_kernel(rng: np.random.Generator) -> ViewKernel:
    """A random kernel (draws that break a rule of the language are drawn again)."""
    while True:
        with warnings.catch_warnings():
            warnings.simplefilter("error", LayoutWarning)
            try:
                k = _draw(_Gen(rng))
                if k is not None and k.view:  # with the facts, as the kernel has them
                    return k
            except LayoutWarning:
                continue


def _draw(g: _Gen) -> ViewKernel | None:
    root = g.root()
    steps: list[Step] = []
    extents = list(root.view_extents())
    # slices of the root's modes: at block.z (the grid covers the extent) or a constant
    while len(extents) >= 2 and g.chance(0.4 if not steps else 0.15):
        j = int(g.rng.integers(len(extents)))
        if "bz" in g.blocks and g.chance(0.6):
            g.blocks.remove("bz")
            g.grid["bz"] = GridDim(extents[j], 1, int(g.pick([0, 1], [0.8, 0.2])))
            c = Idx("bz")
        else:
            c = g.const([0.4, 0.3, 0.2, 0.1])
        steps.append(Slice(tuple(c if i == j else None for i in range(len(extents)))))
        extents.pop(j)
    steps.append(_tile(g, extents))
    # the rest modes kept: the loop over one, constants for the others
    layout = _layout(root, steps)
    dynamic = [i for i, m in enumerate(_modes(layout)) if not _static(m)]
    if dynamic:
        coord: list[Idx | None] = [None] * len(_modes(layout))
        for i in dynamic:
            looped = any(_uses(c, "k") for c in coord)
            # tile 0 always exists; a tile count's coordinate is the kernel's to keep below
            # it, as a tile's is (cutec.analysis.bounds)
            coord[i] = Idx("k") if not looped and g.chance(0.6) else Idx("const", 0)
        steps.append(Slice(tuple(coord)))
    loops = [i for i, s in enumerate(steps) if isinstance(s, Slice) and s.loop_mode() is not None]
    loop = loops[0] if loops else None
    layout = _layout(root, steps)
    if not _static(layout.shape) or int(product(layout.shape)) > MAX_TILE:
        return None
    modes = _modes(layout)
    if g.chance(0.12) and all(isinstance(m, int) for m in modes):
        # a second tile of the static tile, at constants below the number of tiles (a
        # tile coordinate is the kernel's to keep in range, as in CuTe); a sub-tile that
        # does not divide the tile runs past it
        sub = tuple(max(1, m // int(g.pick([1, 2]))) + int(g.chance(0.2)) for m in modes)
        counts = [-(-m // t) for m, t in zip(modes, sub, strict=True)]
        coords = tuple(Idx("const", int(g.pick(list(range(n))))) for n in counts)
        steps.append(Tile("local_tile", sub, coords))
        layout = _layout(root, steps)
    if g.chance(0.25):
        # a composition permuting the tile's elements (exact: compact strides)
        leaves = [int(x) for x in _leaves(layout.shape)]
        strides = [math.prod(leaves[:i]) for i in range(len(leaves))]
        perm = [int(p) for p in g.rng.permutation(len(leaves))]
        steps.append(Compose(tuple(leaves[p] for p in perm), tuple(strides[p] for p in perm)))
        layout = _layout(root, steps)
    copy_tv, threads = _partition(g, steps, _modes(layout))
    layout = _layout(root, steps, threads)
    if int(product(layout.shape)) > MAX_FRAGMENT or threads > 64:
        return None
    transfer = g.pick(
        ["copy", "axpby", "copy_if", "elements", "columns"], [0.35, 0.25, 0.1, 0.15, 0.15]
    )
    if transfer == "columns" and len(_modes(layout)) < 2:
        transfer = "copy"
    assumes = []
    for e, t in g.tiles.items():  # a mode made full, or a fact that does not make it so
        if g.chance(0.2):
            assumes.append((e, t * int(g.pick([1, 2]))))
        elif g.chance(0.1):
            assumes.append((e, int(g.pick([2, 3]))))
    grid = tuple(g.grid.get(a, GridDim(None, 1, 1)) for a in ("bx", "by", "bz"))
    return ViewKernel(
        root, tuple(steps), loop, transfer, copy_tv, threads, grid,  # type: ignore[arg-type]
        tuple(assumes), g.chance(0.3), tuple(g.tiles.items()),
    )  # fmt: skip


def _tile(g: _Gen, extents: list[str | int]) -> Tile:
    """The tile of the (sliced) root: each mode at a block index, a constant or kept."""
    forms = ["local_tile", "logical", "zipped", "tiled", "flat"]
    form = g.pick(forms, [0.4, 0.15, 0.15, 0.15, 0.15])
    tiler = g.tiler(len(extents))
    coord: list[Idx | None] = []
    for e, t in zip(extents, tiler, strict=True):
        if form != "logical" and g.chance(0.2):
            coord.append(None)
        else:
            c = g.block(e, t) if g.chance(0.85) else None
            coord.append(c if c is not None else Idx("const", 0))  # tile 0 always exists
        if isinstance(e, str):
            g.tiles[e] = t
    if form != "local_tile" or not g.chance(0.3):
        return Tile(form, tiler, tuple(coord))
    at = int(g.rng.integers(len(tiler) + 1))  # one more mode, dropped by the step's X
    tiler = (*tiler[:at], int(g.pick([2, 4, 8])), *tiler[at:])
    coord.insert(at, Idx("const", 0) if g.chance(0.5) else Idx("by"))
    return Tile(form, tiler, tuple(coord), tuple(X if i == at else 1 for i in range(len(tiler))))


def _partition(g: _Gen, steps: list[Step], modes: tuple) -> tuple[Any, int]:
    """Appends the partition among threads: (a TiledCopy's (thr, val) or None, threads)."""
    part = g.pick(["none", "local", "copy", "tile"], [0.15, 0.5, 0.2, 0.15])
    flat = all(isinstance(m, int) for m in modes)
    if part == "tile" and len(modes) in (1, 2) and flat:
        # a tile per thread: thread.x % a and thread.x / a index a x b sub-tiles
        sub = tuple(g.divisor(m, 4) for m in modes)
        counts = [m // t for m, t in zip(modes, sub, strict=True)]
        if len(modes) == 1:
            coord: tuple[Idx, ...] = (Idx("t"),)
        else:
            coord = (Idx("t", counts[0], "%"), Idx("t", counts[0], "/"))
        steps.append(Tile("local_tile", sub, coord))
        return None, math.prod(counts)
    if part == "copy" and len(modes) in (2, 3) and flat:
        thr = (g.divisor(modes[0]), g.divisor(modes[1]))
        val = (g.divisor(modes[0] // thr[0], 4), g.divisor(modes[1] // thr[1], 4))
        steps.append(CopyPartition(thr, val))
        return (thr, val), math.prod(thr)
    if part == "none":
        return None, int(g.pick([1, 2, 32], [0.6, 0.2, 0.2]))
    # a nested mode by a divisor of its first leaf (the composition inside the
    # zipped divide needs one of the two to divide the other)
    shape = tuple(g.divisor(int(_leaves(m)[0])) for m in modes)
    step = None
    if g.chance(0.2):  # a thread mode dropped by X: the kept modes cut the leading ones
        at = int(g.rng.integers(len(shape) + 1))
        shape = (*shape[:at], int(g.pick([2, 4])), *shape[at:])
        step = tuple(X if i == at else 1 for i in range(len(shape)))
    order = list(range(len(shape)))[:: -1 if g.chance(0.4) else 1]
    stride = [0] * len(shape)
    for n, i in enumerate(order):
        stride[i] = math.prod(shape[j] for j in order[:n])
    steps.append(Partition(shape, tuple(stride), step))
    return None, math.prod(shape)


def _layout(root: Root, steps: list[Step], threads: int = 1) -> Layout:
    """The chain's layout; a LayoutWarning (a composition that is not the function
    composition: CuTe's weak divisibility condition) is an error here."""
    v = SView(root.coordinate_layout({}))
    with warnings.catch_warnings():
        warnings.simplefilter("error", LayoutWarning)
        for s in steps:
            v = s.apply(v, threads)
    return v.layout


def _static(shape: Any) -> bool:
    return all(isinstance(s, int) for s in _leaves(shape))
