"""TiledCopy and ThrCopy: a copy atom tiled over threads and values, as CuTe's copy_atom.hpp.

A `TypedCopyAtom` is CuTe's ``Copy_Atom<Op, ValType>``: a `CopyAtom` (whose layouts are
in bits) read in units of ``value_bits``-wide values, ``ValLayout = recast(BitLayout)``.
A `TiledCopy` is that atom plus ``TiledLayout_TV`` ((thr_idx, val_idx) -> coordinate in
the tile, column-major) and ``Tiler_MN`` (the tile); it partitions any (M,N,..) layout
into ``(Thr, (FrgV,FrgX), (RestM,RestN,..))`` and `ThrCopy` slices one thread out of it.
Everything works on layouts and returns exactly CuTe's shape and stride; the thread index
may be an ``int`` or a ``SymInt`` (only the partition's offset depends on it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cutec.atoms.copy import CopyAtom, copy_atom
from cutec.atoms.tiled_mma import TiledMMA, format_tiler, repeat_none
from cutec.layout import (
    Layout,
    LayoutError,
    composition,
    logical_product,
    product_each,
    raked_product,
    recast_layout,
    right_inverse,
    size,
    slice_and_offset,
    upcast,
    zipped_divide,
)
from cutec.layout import inttuple as it
from cutec.layout.inttuple import Integer
from cutec.layout.layout import as_layout
from cutec.layout.text import format_leaf
from cutec.layout.tv import tile2thrfrg


@dataclass(frozen=True)
class TypedCopyAtom:
    """CuTe's Copy_Atom<Op, T>: the atom's bit layouts recast to value_bits-wide values."""

    op: CopyAtom
    value_bits: int

    def __post_init__(self) -> None:
        for name, layout in (("Src", self.val_layout_src), ("Dst", self.val_layout_dst)):
            if size(layout, 0) != size(self.op.thr_id):
                raise LayoutError(
                    f"{self.op.name} is not valid for {name} of {self.value_bits}-bit values"
                )
        if self.op.total_bits % self.value_bits:
            raise LayoutError(
                f"{self.op.name} moves {self.op.total_bits} bits, "
                f"not a multiple of {self.value_bits}-bit values"
            )

    @property
    def thr_id(self) -> Layout:
        """ThrID: logical thread id -> thread index in the group issuing the atom."""
        return self.op.thr_id

    @property
    def val_layout_src(self) -> Layout:
        """ValLayoutSrc = recast_layout<uint1_t, T>(SrcLayout): (thr, val) -> value offset."""
        return recast_layout(self.op.src_layout, 1, self.value_bits)

    @property
    def val_layout_dst(self) -> Layout:
        """ValLayoutDst = recast_layout<uint1_t, T>(DstLayout)."""
        return recast_layout(self.op.dst_layout, 1, self.value_bits)

    @property
    def val_layout_ref(self) -> Layout:
        """ValLayoutRef = recast_layout<uint1_t, T>(RefLayout): the view partitioning uses."""
        return recast_layout(self.op.ref_layout, 1, self.value_bits)

    @property
    def num_val_src(self) -> Integer:
        """NumValSrc: values one thread passes to one atom."""
        return size(self.val_layout_src, 1)

    def __str__(self) -> str:
        # CuTe's print(Copy_Atom), without the final newline.
        return (
            "Copy_Atom\n"
            f"  ThrID:        {self.thr_id}\n"
            f"  ValLayoutSrc: {self.val_layout_src}\n"
            f"  ValLayoutDst: {self.val_layout_dst}\n"
            f"  ValLayoutRef: {self.val_layout_ref}\n"
            f"  ValueType:    {self.value_bits}b"
        )


def make_copy_atom(atom: CopyAtom | str, value_bits: int) -> TypedCopyAtom:
    """Copy_Atom<atom, T> for a T of value_bits bits; `atom` may be given by CuTe's name."""
    return TypedCopyAtom(copy_atom(atom) if isinstance(atom, str) else atom, value_bits)


@dataclass(frozen=True)
class TiledCopy:
    """CuTe's TiledCopy<Copy_Atom, LayoutCopy_TV, ShapeTiler_MN>."""

    atom: TypedCopyAtom
    layout_tv: Layout  # (thr_idx, val_idx) -> column-major coordinate in the tile
    tiler_mn: Any  # the tile: a shape (tuple of ints) or a tuple of tiler layouts

    def __post_init__(self) -> None:
        if not isinstance(self.atom, TypedCopyAtom):
            raise LayoutError(
                "a TiledCopy needs the value type of its atom: make_copy_atom(atom, value_bits)"
            )
        ref = self.atom.val_layout_ref
        for mode, what in ((0, "thrs"), (1, "vals")):
            tiled, atom = size(self.layout_tv, mode), size(ref, mode)
            if (it.is_static(tiled) and tiled == 0) or (it.is_static(atom) and atom == 0):
                raise LayoutError(
                    f"TiledCopy with no {what}: size<{mode}>({self.layout_tv}) = {tiled}, "
                    f"and {self.atom.op.name} has {atom}"
                )
            if it.is_static(tiled) and tiled % atom:
                raise LayoutError(
                    f"TiledCopy uses too few {what} for {self.atom.op.name}: "
                    f"size<{mode}>({self.layout_tv}) = {tiled} is not a multiple of {atom}"
                )

    @property
    def num_threads(self) -> Integer:
        """TiledNumThr = size<0>(TiledLayout_TV) (CuTe's size(tiled_copy))."""
        return size(self.layout_tv, 0)

    @property
    def num_values(self) -> Integer:
        """TiledNumVal = size<1>(TiledLayout_TV)."""
        return size(self.layout_tv, 1)

    def _tiler_rank(self) -> int:
        return len(self.tiler_mn) if isinstance(self.tiler_mn, tuple) else 1

    def tiler_shape(self) -> Any:
        """shape(Tiler_MN): the tile's extent per mode (a layout mode contributes its shape)."""
        t = self.tiler_mn
        if isinstance(t, tuple):
            return tuple(x.shape if isinstance(x, Layout) else x for x in t)
        return t.shape if isinstance(t, Layout) else t

    def _ref2trg(self, trg: Layout) -> Layout:
        # (trg-thr, trg-val) -> (ref-thr, ref-val)
        return composition(right_inverse(self.atom.val_layout_ref), trg)

    def tile2thrfrg(self, tiled: Layout, ref2trg: Layout) -> Layout:
        """((TileM,TileN,..),(RestM,..)) -> (Thr,(FrgV,FrgX),(RestM,RestN,..))."""
        return tile2thrfrg(tiled, self.layout_tv, self.atom.val_layout_ref, ref2trg)

    def _tidfrg(self, layout: Layout, trg: Layout) -> Layout:
        layout = as_layout(layout)
        if layout.rank < self._tiler_rank():
            raise LayoutError(
                f"rank of {layout} is too small for the tiler {format_tiler(self.tiler_mn)}"
            )
        return self.tile2thrfrg(zipped_divide(layout, self.tiler_mn), self._ref2trg(trg))

    def tidfrg_S(self, layout: Layout) -> Layout:
        """(M,N,..) -> (Thr,(FrgV,FrgX),(RestM,RestN,..)) through the atom's source layout."""
        return self._tidfrg(layout, self.atom.val_layout_src)

    def tidfrg_D(self, layout: Layout) -> Layout:
        """(M,N,..) -> (Thr,(FrgV,FrgX),(RestM,RestN,..)) through the atom's destination layout."""
        return self._tidfrg(layout, self.atom.val_layout_dst)

    def _layout_trg_tv(self, trg: Layout) -> Layout:
        ref = Layout((self.tiler_shape(), 1))  # (M,N) -> (M,N), with a size-1 rest mode
        return self.tile2thrfrg(ref, self._ref2trg(trg))((None, None, 0))

    def get_layoutS_TV(self) -> Layout:
        """(thr_idx, val_idx) -> (M,N) coordinate, as the source side sees the tile."""
        return self._layout_trg_tv(self.atom.val_layout_src)

    def get_layoutD_TV(self) -> Layout:
        """(thr_idx, val_idx) -> (M,N) coordinate, as the destination side sees the tile."""
        return self._layout_trg_tv(self.atom.val_layout_dst)

    def retile_and_offset(self, layout: Layout) -> tuple[Layout, Integer]:
        """CuTe's retile: a thread's (V,..) fragment regrouped as ((AtomV,RestV),..)."""
        layout = as_layout(layout)
        r = layout.rank
        v = size(layout, 0)
        # (m,n) -> v_idx: the shape and order of the V values inside TiledLayout_TV.
        inverse = right_inverse(self.layout_tv).with_shape(self.tiler_shape())
        frg_layout_mn = upcast(inverse, self.num_threads * v)
        # (atom_vals, rest_vals) -> (v,m,n)
        frg_layout_v = zipped_divide(
            logical_product(Layout(v), right_inverse(frg_layout_mn)),
            Layout(size(self.atom.val_layout_ref, 1)),
        )
        tile = it.prepend(product_each(frg_layout_mn.shape), v)
        t_layout = zipped_divide(layout, tile)  # ((TileV,TileM,..),(1,RestM,..))
        v_layout = composition(t_layout, (frg_layout_v, None))
        rest: Any = (0,) + (None,) * (r - 1) if r > 1 else 0
        return slice_and_offset((None, rest), v_layout)

    def retile(self, layout: Layout) -> Layout:
        """retile_S / retile_D (the same: both assume the reference layout)."""
        return self.retile_and_offset(layout)[0]

    def get_slice(self, thr_idx: Integer) -> ThrCopy:
        """The ThrCopy of thread thr_idx (an int or a SymInt)."""
        return ThrCopy(self, thr_idx)

    get_thread_slice = get_slice

    def __str__(self) -> str:
        return (
            "TiledCopy\n"
            f"  Tiler_MN:       {format_tiler(self.tiler_mn)}\n"
            f"  TiledLayout_TV: {self.layout_tv}\n{self.atom}"
        )


@dataclass(frozen=True)
class ThrCopy:
    """One thread's view of a TiledCopy: CuTe's ThrCopy."""

    tiled_copy: TiledCopy
    thr_idx: Integer

    def _slice(self, frg: Layout, rank: int) -> tuple[Layout, Integer]:
        return slice_and_offset((self.thr_idx, None, repeat_none(rank)), frg)

    def partition_S_and_offset(self, layout: Layout) -> tuple[Layout, Integer]:
        """(CPY, CPY_M, CPY_N, ..) of the source layout, and this thread's first offset."""
        return self._slice(self.tiled_copy.tidfrg_S(layout), as_layout(layout).rank)

    def partition_D_and_offset(self, layout: Layout) -> tuple[Layout, Integer]:
        """(CPY, CPY_M, CPY_N, ..) of the destination layout, and this thread's first offset."""
        return self._slice(self.tiled_copy.tidfrg_D(layout), as_layout(layout).rank)

    def partition_S(self, layout: Layout) -> Layout:
        """This thread's (CPY, CPY_M, CPY_N, ..) source partition."""
        return self.partition_S_and_offset(layout)[0]

    def partition_D(self, layout: Layout) -> Layout:
        """This thread's (CPY, CPY_M, CPY_N, ..) destination partition."""
        return self.partition_D_and_offset(layout)[0]

    def retile_S(self, layout: Layout) -> Layout:
        """A register fragment regrouped for the atom's source side."""
        return self.tiled_copy.retile(layout)

    def retile_D(self, layout: Layout) -> Layout:
        """A register fragment regrouped for the atom's destination side."""
        return self.tiled_copy.retile(layout)

    def to_text(self, env: dict[str, int] | None = None) -> str:
        """CuTe's print(ThrCopy); a symbolic thread index is shown under `env` when given."""
        idx = format_leaf(self.thr_idx, static_marks=False, env=env)
        return f"ThrCopy\n  ThrIdx: {idx}\n{self.tiled_copy}"

    def __str__(self) -> str:
        return self.to_text()


def _typed(atom: Any) -> TypedCopyAtom:
    if not isinstance(atom, TypedCopyAtom):
        raise LayoutError(
            f"a TiledCopy needs the value type of its atom: make_copy_atom({atom}, value_bits)"
        )
    return atom


def make_tiled_copy_tv(copy_atom: TypedCopyAtom, layout_tv: Layout, tiler: Any) -> TiledCopy:
    """CuTe's make_tiled_copy_impl: a TiledCopy from its TV layout and tiler."""
    return TiledCopy(_typed(copy_atom), layout_tv, tiler)


def make_tiled_copy(copy_atom: TypedCopyAtom, thr_layout: Any, val_layout: Any = None) -> TiledCopy:
    """layout_tv = right_inverse(raked_product(thr, val)) as (size(thr), size(val)).

    thr_layout maps (m,n) -> thr_idx and val_layout (m,n) -> val_idx; the tiler is
    product_each(shape(raked_product(thr, val))).
    """
    thr = thr_layout if isinstance(thr_layout, Layout) else Layout(thr_layout)
    val = Layout(1) if val_layout is None else val_layout
    val = val if isinstance(val, Layout) else Layout(val)
    layout_mn = raked_product(thr, val)  # (m,n) -> (thr_idx, val_idx)
    layout_tv = right_inverse(layout_mn).with_shape((size(thr), size(val)))
    return make_tiled_copy_tv(copy_atom, layout_tv, product_each(layout_mn.shape))


def make_tiled_copy_A(copy_atom: TypedCopyAtom, mma: TiledMMA) -> TiledCopy:
    """A TiledCopy with the A partitioning of `mma`: layoutA_TV over (TileM, TileK)."""
    return make_tiled_copy_tv(copy_atom, mma.get_layoutA_TV(), (mma.tile_size(0), mma.tile_size(2)))


def make_tiled_copy_B(copy_atom: TypedCopyAtom, mma: TiledMMA) -> TiledCopy:
    """A TiledCopy with the B partitioning of `mma`: layoutB_TV over (TileN, TileK)."""
    return make_tiled_copy_tv(copy_atom, mma.get_layoutB_TV(), (mma.tile_size(1), mma.tile_size(2)))


def make_tiled_copy_C(copy_atom: TypedCopyAtom, mma: TiledMMA) -> TiledCopy:
    """A TiledCopy with the C partitioning of `mma`: layoutC_TV over (TileM, TileN)."""
    return make_tiled_copy_tv(copy_atom, mma.get_layoutC_TV(), (mma.tile_size(0), mma.tile_size(1)))


def make_tiled_copy_S(copy_atom: TypedCopyAtom, tiled_copy: TiledCopy) -> TiledCopy:
    """A TiledCopy whose threads and values match the source side of `tiled_copy`."""
    return make_tiled_copy_tv(copy_atom, tiled_copy.get_layoutS_TV(), tiled_copy.tiler_mn)


def make_tiled_copy_D(copy_atom: TypedCopyAtom, tiled_copy: TiledCopy) -> TiledCopy:
    """A TiledCopy whose threads and values match the destination side of `tiled_copy`."""
    return make_tiled_copy_tv(copy_atom, tiled_copy.get_layoutD_TV(), tiled_copy.tiler_mn)
