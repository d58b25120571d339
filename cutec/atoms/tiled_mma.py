"""TiledMMA and ThrMMA: an MMA atom tiled over threads and values, as CuTe's mma_atom.hpp.

``make_tiled_mma(atom, atom_layout, permutation)`` repeats `atom` over the (M,N,K) thread
grid `atom_layout` (CuTe's AtomLayoutMNK) after reordering each of M, N, K by
`permutation` (CuTe's PermutationMNK; ``None`` is CuTe's ``_``). The thread layout is
``ThrLayoutVMNK = tiled_product(atom.thr_id, atom_layout)``: thread index ->
(ThrV, ThrM, ThrN, ThrK). Every function here works on layouts (a tensor is its layout;
partitions also return the offset of the thread's first element) and returns exactly the
shape and stride CuTe computes. The thread index may be an ``int`` or a ``SymInt``: the
layouts of a partition do not depend on it, only its offset does.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from cutec.atoms.mma import MmaAtom, lookup_mma_atom
from cutec.layout import (
    Layout,
    LayoutError,
    append,
    complement,
    composition,
    get_flat_coord,
    logical_divide,
    make_layout,
    make_ordered_layout,
    rank,
    right_inverse,
    size,
    slice_and_offset,
    tiled_product,
    zipped_divide,
)
from cutec.layout import inttuple as it
from cutec.layout.inttuple import Integer
from cutec.layout.layout import as_layout
from cutec.layout.symbolic import sym
from cutec.layout.text import format_int_tuple, format_leaf

Operand = Literal["A", "B", "C"]

# Which (M,N,K) modes each operand's tile spans, and which ThrLayoutVMNK modes tile it.
_MODES: dict[str, tuple[int, int]] = {"A": (0, 2), "B": (1, 2), "C": (0, 1)}


def repeat_none(n: int) -> Any:
    """CuTe's repeat<N>(_): N underscores, a bare _ for N == 1."""
    return None if n == 1 else (None,) * n


def tiler_size(tiler: Any) -> Integer:
    """size of one tiler mode: a Layout's size, an integer n, or the product of a shape."""
    return tiler.size() if isinstance(tiler, Layout) else it.size(tiler)


def format_tiler(tiler: Any) -> str:
    """A tiler as CuTe prints it: ``_`` for None, layouts as shape:stride, ints as ``_n``."""
    if isinstance(tiler, tuple):
        return "(" + ",".join(format_tiler(t) for t in tiler) + ")"
    if isinstance(tiler, Layout):
        return str(tiler)
    return format_int_tuple(tiler)


def make_fragment_like(layout: Layout) -> Layout:
    """CuTe's make_fragment_like: mode 0 compact (zero strides kept), the rest in stride order."""
    r = layout.rank
    if r > 1 and it.is_static(layout.shape):
        shape0, stride0 = it.get(layout.shape, 0), it.get(layout.stride, 0)
        # A stride-0 (broadcast) mode of the value mode gets no storage: compact over
        # filter_zeros, which treats those modes as size 1.
        mode0 = Layout(shape0, it.compact_col_major(it.filter_zeros(stride0, shape0)))
        rest = make_ordered_layout(it.take(layout.shape, 1, r), it.take(layout.stride, 1, r))
        return tiled_product(mode0, rest)
    return Layout(layout.shape)


@dataclass(frozen=True)
class TiledMMA:
    """CuTe's TiledMMA<Atom, AtomLayoutMNK, PermutationMNK> (build with make_tiled_mma)."""

    atom: MmaAtom
    atom_layout_mnk: Layout  # (ThrM,ThrN,ThrK) -> atom index, rank 3
    permutation_mnk: tuple[Any, Any, Any] = (None, None, None)

    def __post_init__(self) -> None:
        if self.atom_layout_mnk.rank != 3:
            raise LayoutError(f"TiledMMA needs a rank-3 AtomLayoutMNK, got {self.atom_layout_mnk}")
        if len(self.permutation_mnk) != 3:
            raise LayoutError("TiledMMA needs a rank-3 PermutationMNK")
        for p in self.permutation_mnk:
            if p is not None and not it.is_static(p.shape if isinstance(p, Layout) else p):
                raise LayoutError(f"TiledMMA permutations must be static, got {format_tiler(p)}")

    # -- the thread layout and tile ----------------------------------------------------
    @cached_property
    def thr_layout_vmnk(self) -> Layout:
        """tiled_product(ThrID, AtomLayoutMNK): thread index of (ThrV,ThrM,ThrN,ThrK)."""
        return tiled_product(self.atom.thr_id, self.atom_layout_mnk)

    @property
    def num_threads(self) -> Integer:
        """size(ThrLayoutVMNK): threads taking part (CuTe's size(tiled_mma))."""
        return size(self.thr_layout_vmnk)

    def permutation(self, i: int) -> Any:
        """permutation_mnk<I>: the given tiler, or size<I>(Shape_MNK) * size<I+1>(ThrLayoutVMNK)."""
        p = self.permutation_mnk[i]
        return self.atom.shape_mnk[i] * size(self.thr_layout_vmnk, i + 1) if p is None else p

    def tile_size(self, i: int) -> Integer:
        """tile_size<I>: the extent of the M (0), N (1) or K (2) tile: size(permutation_mnk<I>)."""
        return tiler_size(self.permutation(i))

    @property
    def tile_size_mnk(self) -> tuple[Integer, Integer, Integer]:
        """(tile_size<0>, tile_size<1>, tile_size<2>): CuTe's tile_shape(mma)."""
        return (self.tile_size(0), self.tile_size(1), self.tile_size(2))

    # -- tiling a layout -------------------------------------------------------------
    def atom_layout_tv(self, op: Operand) -> Layout:
        """The atom's (thr, val) -> coordinate layout of operand op (CuTe's Atom LayoutX_TV)."""
        return {"A": self.atom.a_layout, "B": self.atom.b_layout, "C": self.atom.c_layout}[op]

    def thrfrg(self, op: Operand, layout: Layout) -> Layout:
        """(M,N|K,..) -> ((ThrV,(Thr0,Thr1)),(FrgV,(Rest0,Rest1,..))) for operand op."""
        layout = as_layout(layout)
        if layout.rank < 2:
            raise LayoutError(f"thrfrg_{op}: the {op} layout {layout} needs rank >= 2")
        i, j = _MODES[op]
        t_layout = logical_divide(layout, (self.permutation(i), self.permutation(j)))
        atom_tile = (Layout(self.atom.shape_mnk[i]), Layout(self.atom.shape_mnk[j]))
        a_layout = zipped_divide(t_layout, atom_tile)  # ((AtomI,AtomJ),(RestI,RestJ))
        tv_layout = composition(
            a_layout, (self.atom_layout_tv(op), None)
        )  # ((ThrV,FrgV),(RestI,..))
        vmnk = self.thr_layout_vmnk
        thr_tile = (None, (Layout(size(vmnk, i + 1)), Layout(size(vmnk, j + 1))))
        return zipped_divide(tv_layout, thr_tile)

    def thrfrg_A(self, layout: Layout) -> Layout:
        """(M,K,..) -> ((ThrV,(ThrM,ThrK)),(FrgV,(RestM,RestK,..)))."""
        return self.thrfrg("A", layout)

    def thrfrg_B(self, layout: Layout) -> Layout:
        """(N,K,..) -> ((ThrV,(ThrN,ThrK)),(FrgV,(RestN,RestK,..)))."""
        return self.thrfrg("B", layout)

    def thrfrg_C(self, layout: Layout) -> Layout:
        """(M,N,..) -> ((ThrV,(ThrM,ThrN)),(FrgV,(RestM,RestN,..)))."""
        return self.thrfrg("C", layout)

    # -- TV layouts of the whole tile ------------------------------------------------
    def _thridx_to_thrid(self) -> Layout:
        # thr_idx -> (ThrV,ThrM,ThrN,ThrK): invert ThrLayoutVMNK (completed to a bijection)
        # and keep the first size(vmnk) indices.
        vmnk = self.thr_layout_vmnk
        inverse = right_inverse(make_layout(vmnk, complement(vmnk)))
        return composition(Layout((size(vmnk), 1), (1, 0)), inverse)

    def get_layout_TV(self, op: Operand) -> Layout:
        """(thr_idx, val) -> column-major coordinate in the op tile: CuTe's get_layout{op}_TV."""
        i, j = _MODES[op]
        ref = Layout((self.tile_size(i), self.tile_size(j)))
        frg = self.thrfrg(op, ref)
        if op != "C":
            # (ThrV,(ThrI,ThrK)) -> (ThrV,(ThrM,ThrN,ThrK)): the thread mode that does not
            # tile this operand (N for A, M for B) is broadcast with stride 0.
            vmnk = self.thr_layout_vmnk
            stride = (1, 0) if op == "A" else (0, 1)
            spread = Layout((size(vmnk, 1), size(vmnk, 2)), stride)
            frg = composition(frg, ((None, (spread, None)), None))
        return composition(frg, (self._thridx_to_thrid(), None))

    def get_layoutA_TV(self) -> Layout:
        """(thr_idx, val) -> m + k*TileM."""
        return self.get_layout_TV("A")

    def get_layoutB_TV(self) -> Layout:
        """(thr_idx, val) -> n + k*TileN."""
        return self.get_layout_TV("B")

    def get_layoutC_TV(self) -> Layout:
        """(thr_idx, val) -> m + n*TileM."""
        return self.get_layout_TV("C")

    # -- threads ---------------------------------------------------------------------
    def get_slice(self, thr_idx: Integer) -> ThrMMA:
        """The ThrMMA of thread thr_idx (an int or a SymInt): its (V,M,N,K) coordinate."""
        return ThrMMA(self, thr_idx, get_flat_coord(self.thr_layout_vmnk, thr_idx))

    get_thread_slice = get_slice

    def partition_shape(self, op: Operand, shape: Any) -> Any:
        """partition_shape_{op}: the shape every thread's partition of a `shape` tile has."""
        frg = self.thrfrg(op, Layout(shape))
        return slice_and_offset((0, (None, repeat_none(it.rank(shape)))), frg)[0].shape

    def __str__(self) -> str:
        return (
            "TiledMMA\n"
            f"  ThrLayoutVMNK:  {self.thr_layout_vmnk}\n"
            f"  PermutationMNK: {format_tiler(self.permutation_mnk)}\n" + mma_atom_text(self.atom)
        )


def mma_atom_text(atom: MmaAtom) -> str:
    """CuTe's print(MMA_Atom): ThrID, Shape_MNK and the A/B/C TV layouts (no final newline)."""
    return (
        "MMA_Atom\n"
        f"  ThrID:      {atom.thr_id}\n"
        f"  Shape_MNK:  {format_int_tuple(atom.shape_mnk)}\n"
        f"  LayoutA_TV: {atom.a_layout}\n"
        f"  LayoutB_TV: {atom.b_layout}\n"
        f"  LayoutC_TV: {atom.c_layout}"
    )


@dataclass(frozen=True)
class ThrMMA:
    """One thread's view of a TiledMMA: CuTe's ThrMMA (thr_vmnk is its flat coordinate)."""

    tiled_mma: TiledMMA
    thr_idx: Integer
    thr_vmnk: tuple[Integer, Integer, Integer, Integer]

    def partition_and_offset(self, op: Operand, layout: Layout) -> tuple[Layout, Integer]:
        """(FrgV, Rest0, Rest1, ..) of this thread, and the offset of its first element."""
        frg = self.tiled_mma.thrfrg(op, layout)
        i, j = _MODES[op]
        v = self.thr_vmnk
        thr = (v[0], (v[i + 1], v[j + 1]))
        rest = repeat_none(rank(frg, 1, 1))
        return slice_and_offset((thr, (None, rest)), frg)

    def partition(self, op: Operand, layout: Layout) -> Layout:
        """partition_{op}(layout): this thread's (FrgV, Rest...) layout."""
        return self.partition_and_offset(op, layout)[0]

    def partition_A(self, layout: Layout) -> Layout:
        """(MMA, MMA_M, MMA_K, ..) of the (M,K,..) layout."""
        return self.partition("A", layout)

    def partition_B(self, layout: Layout) -> Layout:
        """(MMA, MMA_N, MMA_K, ..) of the (N,K,..) layout."""
        return self.partition("B", layout)

    def partition_C(self, layout: Layout) -> Layout:
        """(MMA, MMA_M, MMA_N, ..) of the (M,N,..) layout."""
        return self.partition("C", layout)

    def partition_fragment(self, op: Operand, layout: Layout) -> Layout:
        """The register fragment layout of partition_{op}: CuTe's make_fragment_{op}.

        C is compact column-major over the partition's shape (accumulators follow no
        input layout); A and B copy the partition's stride order to help vectorised
        copies, except a shared-memory (wgmma descriptor) operand, which is a view of
        the partition itself.
        """
        part = self.partition(op, layout)
        atom = self.tiled_mma.atom
        if part.rank < 3:
            raise LayoutError(f"make_fragment_{op}: {part} is not a partitioned (V,M,N) layout")
        want = size(self.tiled_mma.atom_layout_tv(op), 1)
        if size(part, 0) != want:
            raise LayoutError(f"make_fragment_{op}: mode 0 of {part} is not the atom's {want}")
        if op == "C":
            return Layout(part.shape)
        if atom.a_in_smem if op == "A" else atom.b_in_smem:
            return part
        return make_fragment_like(part)

    def partition_fragment_A(self, layout: Layout) -> Layout:
        """make_fragment_A(partition_A(layout))."""
        return self.partition_fragment("A", layout)

    def partition_fragment_B(self, layout: Layout) -> Layout:
        """make_fragment_B(partition_B(layout))."""
        return self.partition_fragment("B", layout)

    def partition_fragment_C(self, layout: Layout) -> Layout:
        """make_fragment_C(partition_C(layout))."""
        return self.partition_fragment("C", layout)

    def to_text(self, env: dict[str, int] | None = None) -> str:
        """CuTe's print(ThrMMA); a symbolic coordinate is shown under `env` when given.

        As in CuTe, where the thread index is a run-time int, a coordinate is static
        (``_0``) only in a static size-1 mode; an int thr_idx is printed that way too.
        """
        if isinstance(self.thr_idx, int):
            n = int(self.tiled_mma.num_threads)
            probe = get_flat_coord(
                self.tiled_mma.thr_layout_vmnk, sym("t", min_value=0, max_value=n - 1)
            )
            coord = (
                "("
                + ",".join(
                    format_leaf(c, static_marks=isinstance(p, int))
                    for c, p in zip(self.thr_vmnk, probe, strict=True)
                )
                + ")"
            )
        else:
            coord = format_int_tuple(self.thr_vmnk, env=env)
        return f"ThrMMA\n  Thr VMNK: {coord}\n{self.tiled_mma}"

    def __str__(self) -> str:
        return self.to_text()


def make_tiled_mma(
    atom: MmaAtom | str,
    atom_layout: Any = None,
    permutation: Any = None,
) -> TiledMMA:
    """CuTe's make_tiled_mma: atom_layout padded to rank 3 with 1:0, permutation with '_'.

    `atom` is an MmaAtom or its name; `atom_layout` a Layout or a shape (default
    (1,1,1)); `permutation` None or a tuple of up to three tilers (None, an int, or a
    Layout per mode).
    """
    if isinstance(atom, str):
        atom = lookup_mma_atom(atom)
    layout = Layout(1) if atom_layout is None else atom_layout
    layout = layout if isinstance(layout, Layout) else Layout(layout)
    if layout.rank > 3:
        raise LayoutError(f"make_tiled_mma: atom layout {layout} has rank > 3")
    layout_mnk = append(layout, Layout(1, 0), n=3)
    perm: tuple[Any, ...] = () if permutation is None else tuple(permutation)
    if len(perm) > 3:
        raise LayoutError("make_tiled_mma: a permutation has at most three modes (M, N, K)")
    perm = perm + (None,) * (3 - len(perm))
    return TiledMMA(atom, layout_mnk, (perm[0], perm[1], perm[2]))
