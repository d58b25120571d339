"""TMA in the cute dialect: CuTe's TMA atom, its coordinate tensor, partition and copy.

A kernel names a TMA copy as CuTe's tutorial does (docs/language.md, *TMA*)::

    %tma = cute.make_tma_atom %A {map = "tma_A"}
        : !cute.tensor<f16, gmem, (?,?):(1,?)> -> !cute.tma_atom<load, f16, (64,8), (0,1), 128B>
    %mA = cute.get_tma_tensor %tma, %M, %K
        : !cute.tma_atom<...> -> !cute.coord_tensor<2, (?,?):(E0,E1)>
    %tAsA = cute.tma_partition %sA {tile = #cute.layout<(512,16):(1,512)>} : ... -> ...
    cute.tma_copy %tma, %tAgA_k, %tAsA_p, %bars, %pipe : ...

* `cute.make_tma_atom` is the atom over a global tensor, the tensor a map
  parameter of the kernel (`map`, its `.param` name; cutec.ir.signature adds the
  map's recipe to the launch record) describes. Its type holds the box
  (cutec/atoms/tma_box.py: extents innermost first and the tensor mode each walks)
  and the swizzle the shared tile has, in the driver's terms.
* `cute.get_tma_tensor` is the coordinate tensor a TMA copy reads from (CuTe's
  ``get_tma_tensor``): element c holds the map coordinates of tensor coordinate c
  (tensor mode `modes[d]` has stride ``E<d>``), so views of it (local_tile, slices)
  name TMA coordinates directly.
* `cute.tma_partition` is CuTe's ``tma_partition`` of a tile pair: mode 0 of a
  shared or coordinate view reordered into (one box, boxes) by `tile`, which the
  builder computes from the shared tile (the right inverse of its layout, divided
  by the box), then coalesced mode by mode.
* `cute.tma_copy` issues one TMA load per box of its destination (an element of the
  mbarrier tensor counts the bytes), `cute.tma_store` one TMA store per box of its
  source. lower-to-thread makes each a ``thread.atom`` of ``SM90_TMA_LOAD_<r>D`` or
  ``SM90_TMA_STORE_<r>D`` (cutec/passes/lower_tma.py) after checking that the views
  are the atom's boxes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from cutec.atoms.tma import TmaSwizzle
from cutec.atoms.tma_box import TmaBox
from cutec.ir.attributes import Attribute, StringAttr
from cutec.ir.core import Value
from cutec.ir.dialects.cute_atom_types import split_top_level
from cutec.ir.dialects.cute_attrs import LayoutAttr, parse_tuple
from cutec.ir.dialects.cute_base import CuteOp
from cutec.ir.dialects.cute_coord import CoordTensorType, basis
from cutec.ir.dialects.cute_tensor import VIEWABLE, _ViewOp
from cutec.ir.dialects.cute_types import TensorType
from cutec.ir.opdef import attr_def, operand_def, result_def, var_operand_def
from cutec.ir.traits import MemoryEffects, Pure, reads, writes
from cutec.ir.types import DialectType, IndexType, IntegerType, Type
from cutec.layout import ComposedLayout, Layout, coalesce, composition, make_layout
from cutec.layout.inttuple import format_tuple
from cutec.target import AddressSpace

if TYPE_CHECKING:
    from cutec.ir.layout_of import LayoutAnalysis
    from cutec.ir.parser import Parser

TMA_KINDS = ("load", "store")


@dataclass(frozen=True)
class TmaAtomType(DialectType):
    """A TMA atom: ``!cute.tma_atom<load, f16, (64,8), (0,1), 128B>``: the direction, the
    element type, the box's extents innermost first, the tensor mode each extent walks,
    and the swizzle of the shared tile in bytes (``none``, ``32B``, ``64B``, ``128B``)."""

    name: ClassVar[str] = "cute.tma_atom"
    kind: str
    element: Type
    dims: tuple[int, ...]
    modes: tuple[int, ...]
    swizzle: TmaSwizzle

    def __post_init__(self) -> None:
        if self.kind not in TMA_KINDS:
            raise ValueError(f"a TMA atom loads or stores, not {self.kind!r}")
        if len(self.dims) != len(self.modes) or not 1 <= len(self.dims) <= 5:
            raise ValueError(f"a TMA box has 1..5 extents, one per mode: {self.dims}, {self.modes}")
        if sorted(self.modes) != sorted(set(self.modes)) or min(self.modes) < 0:
            raise ValueError(f"a TMA box walks distinct tensor modes, not {self.modes}")

    @property
    def box(self) -> TmaBox:
        return TmaBox(self.dims, self.modes)

    @property
    def rank(self) -> int:
        """Dimensions of the map and coordinates of one TMA."""
        return len(self.dims)

    def print_body(self) -> str:
        swizzle = "none" if self.swizzle == TmaSwizzle.NONE else f"{self.swizzle.span_bytes}B"
        return (
            f"{self.kind}, {self.element}, {format_tuple(self.dims)}, "
            f"{format_tuple(self.modes)}, {swizzle}"
        )

    @classmethod
    def parse_body(cls, parser: Parser) -> TmaAtomType:
        loc = parser.tok.loc
        kind = parser.parse_identifier("load or store")
        parser.parse_punct(",")
        element = parser.parse_type()
        parser.parse_punct(",")
        fields = split_top_level(parser.parse_balanced_body())
        if len(fields) != 3:
            raise parser.error("expected '(box), (modes), SWIZZLE' after the element type", loc)
        dims, modes, swizzle = (f.strip() for f in fields)
        if swizzle not in _SWIZZLES:
            raise parser.error(f"a TMA swizzle is one of {list(_SWIZZLES)}, not {swizzle!r}", loc)
        try:
            return cls(kind, element, _ints(dims), _ints(modes), _SWIZZLES[swizzle])
        except ValueError as e:
            raise parser.error(str(e), loc) from None


_SWIZZLES = {"none": TmaSwizzle.NONE, "32B": TmaSwizzle.B32, "64B": TmaSwizzle.B64,
             "128B": TmaSwizzle.B128}  # fmt: skip


def _ints(text: str) -> tuple[int, ...]:
    value = parse_tuple(text)
    value = value if isinstance(value, tuple) else (value,)
    if not all(isinstance(v, int) for v in value):
        raise ValueError(f"expected a tuple of integers, not {text}")
    return value


def tma_coord_strides(atom: TmaAtomType, rank: int) -> tuple[int, ...]:
    """The coordinate strides of `atom`'s TMA tensor over a tensor of `rank` modes: mode
    ``modes[d]`` steps TMA coordinate d (``E<d>``); a mode no box dimension walks (extent
    1, or a stride-0 broadcast) has stride 0."""
    strides = [0] * rank
    for d, mode in enumerate(atom.modes):
        strides[mode] = basis(d)
    return tuple(strides)


class MakeTmaAtomOp(CuteOp):
    """CuTe's ``make_tma_atom`` over a global tensor: ``%tma = cute.make_tma_atom %A
    {map = "tma_A"} : !cute.tensor<...> -> !cute.tma_atom<...>``.

    It has no code; it declares the kernel's map parameter `map`, so it is never
    deleted (its effect: reading the tensor it maps).
    """

    name = "cute.make_tma_atom"
    traits = (MemoryEffects(reads(AddressSpace.GLOBAL)),)
    tensor = operand_def(TensorType)
    map = attr_def(StringAttr)
    result = result_def(TmaAtomType)

    def __init__(self, tensor: Value, map_name: str, result: TmaAtomType) -> None:
        super().__init__(
            operands=[tensor], result_types=[result], attributes={"map": StringAttr(map_name)}
        )

    def atom(self) -> TmaAtomType:
        t = self.result.type
        assert isinstance(t, TmaAtomType)
        return t

    def verify_(self) -> None:
        t = self.tensor.type
        assert isinstance(t, TensorType)
        atom = self.atom()
        if t.space is not AddressSpace.GLOBAL:
            raise self.error(f"a TMA atom maps a gmem tensor, not a {t.space.memory} one")
        if t.element != atom.element:
            raise self.error(f"a TMA atom of {atom.element} over a tensor of {t.element}")
        rank = len(t.spec.shape) if isinstance(t.spec.shape, tuple) else 1
        if max(atom.modes) >= rank:
            raise self.error(f"the box walks mode {max(atom.modes)} of a rank-{rank} tensor")


class GetTmaTensorOp(CuteOp):
    """The TMA coordinate tensor of a TMA atom over a shape (CuTe's ``get_tma_tensor``):
    ``%mA = cute.get_tma_tensor %tma, %M, %K : !cute.tma_atom<...> ->
    !cute.coord_tensor<2, (?,?):(E0,E1)>``, the dynamic extents as index operands."""

    name = "cute.get_tma_tensor"
    traits = (Pure(),)
    atom = operand_def(TmaAtomType)
    extents = var_operand_def(IndexType)
    result = result_def(CoordTensorType)

    def __init__(self, atom: Value, extents: Sequence[Value], result: CoordTensorType) -> None:
        super().__init__(operands=[atom, *extents], result_types=[result])

    def verify_(self) -> None:
        atom, t = self.atom.type, self.result.type
        assert isinstance(atom, TmaAtomType) and isinstance(t, CoordTensorType)
        if t.rank != atom.rank:
            raise self.error(f"a TMA tensor has the atom's {atom.rank} coordinates, not {t.rank}")
        if len(self.extents) != t.spec.dynamic_count:
            raise self.error(
                f"layout {t.spec} has {t.spec.dynamic_count} dynamic extents, "
                f"got {len(self.extents)} index operands"
            )
        shape, stride = t.spec.shape, t.spec.stride
        modes = shape if isinstance(shape, tuple) else (shape,)
        have = stride if isinstance(stride, tuple) else (stride,)
        if have != tma_coord_strides(atom, len(modes)):
            raise self.error(f"the TMA tensor's strides are not those of its atom's box {atom}")

    def result_layout(self, la: LayoutAnalysis) -> Layout:
        t = self.result.type
        assert isinstance(t, CoordTensorType)
        layout = t.spec.with_values([la.integer_of(v) for v in self.extents])
        assert isinstance(layout, Layout)
        return layout


def tma_partition_layout(source: Any, tile: Layout) -> Any:
    """CuTe's tma_partition of one view: mode 0 composed with `tile` (the box's values,
    then the boxes), the other modes kept, each mode coalesced on its own."""
    if isinstance(source, ComposedLayout):
        return ComposedLayout(
            source.layout_a, source.offset, tma_partition_layout(source.layout_b, tile)
        )
    modes = [source[i] for i in range(source.rank)] if isinstance(source.shape, tuple) else [source]
    first = composition(modes[0], tile)
    regrouped = make_layout(first, *modes[1:])
    return coalesce(regrouped, ((1, 1),))


class TmaPartitionOp(_ViewOp):
    """A view of a shared tile or of its TMA coordinates as ((box, boxes), rest...):
    ``%tAsA = cute.tma_partition %sA {tile = #cute.layout<(512,16):(1,512)>}``
    (`tma_partition_layout`). The same elements, reordered."""

    name = "cute.tma_partition"
    source = operand_def(VIEWABLE)
    tile = attr_def(LayoutAttr)

    @classmethod
    def infer_layout(cls, source: Any, attributes: dict[str, Attribute], atom: Any = None) -> Any:
        tile = attributes["tile"]
        assert isinstance(tile, LayoutAttr)
        return tma_partition_layout(source, tile.layout)

    @classmethod
    def infer_layout_and_offset(
        cls, source: Any, attributes: dict[str, Attribute], atom: Any, coords: Sequence[Any]
    ) -> tuple[Any, int]:
        return cls.infer_layout(source, attributes, atom), 0


class TmaCopyOp(CuteOp):
    """One TMA per box from the coordinates `src` into the shared view `dst`, completing
    on the mbarrier element `indices` of `bars`::

        cute.tma_copy %tma, %src, %dst, %bars, %i
            : !cute.tma_atom<...>, !cute.coord_tensor<...>, !cute.tensor<f16, smem, ...>,
              !cute.tensor<i64, smem, 3:1>

    Asynchronous: the data lands when the mbarrier's phase completes (its expect_tx
    counts the boxes' bytes), so it reads global memory and writes shared memory.
    """

    name = "cute.tma_copy"
    traits = (MemoryEffects((*reads(AddressSpace.GLOBAL, AddressSpace.SHARED),
                             *writes(AddressSpace.SHARED))),)  # fmt: skip
    atom = operand_def(TmaAtomType)
    src = operand_def(CoordTensorType)
    dst = operand_def(TensorType)
    bars = operand_def(TensorType)
    indices = var_operand_def(IndexType)

    def __init__(
        self, atom: Value, src: Value, dst: Value, bars: Value, indices: Sequence[Value]
    ) -> None:
        super().__init__(operands=[atom, src, dst, bars, *indices])

    def verify_(self) -> None:
        atom, src, dst, bars = (v.type for v in (self.atom, self.src, self.dst, self.bars))
        assert isinstance(atom, TmaAtomType) and isinstance(src, CoordTensorType)
        assert isinstance(dst, TensorType) and isinstance(bars, TensorType)
        if atom.kind != "load":
            raise self.error("a TMA load is made by a TMA load atom (SM90_TMA_LOAD)")
        if src.rank != atom.rank:
            raise self.error(f"the source holds {src.rank}-D coordinates; the atom's map is "
                             f"{atom.rank}-D")  # fmt: skip
        if dst.space is not AddressSpace.SHARED or dst.element != atom.element:
            raise self.error(f"a TMA load writes an smem tensor of {atom.element}, not {dst}")
        if bars.space is not AddressSpace.SHARED or bars.element != IntegerType(64):
            raise self.error(f"a TMA load completes on an mbarrier: an i64 element of an smem "
                             f"tensor, not of {bars}")  # fmt: skip


class TmaStoreOp(CuteOp):
    """One TMA store per box from the shared view `src` to the coordinates `dst`::

        cute.tma_store %tma, %smem, %coords
            : !cute.tma_atom<store, ...>, !cute.tensor<f16, smem, ...>, !cute.coord_tensor<...>

    Asynchronous: it reads shared memory until a ``cp.async.bulk.wait_group.read`` of
    the issuing thread's group says it is done (the language's tma_store_arrive and
    tma_store_wait), and writes global memory (the box's elements inside the map).
    """

    name = "cute.tma_store"
    traits = (MemoryEffects((*reads(AddressSpace.SHARED), *writes(AddressSpace.GLOBAL))),)
    atom = operand_def(TmaAtomType)
    src = operand_def(TensorType)
    dst = operand_def(CoordTensorType)

    def __init__(self, atom: Value, src: Value, dst: Value) -> None:
        super().__init__(operands=[atom, src, dst])

    def verify_(self) -> None:
        atom, src, dst = (v.type for v in (self.atom, self.src, self.dst))
        assert isinstance(atom, TmaAtomType) and isinstance(src, TensorType)
        assert isinstance(dst, CoordTensorType)
        if atom.kind != "store":
            raise self.error("a TMA store is made by a TMA store atom (SM90_TMA_STORE)")
        if dst.rank != atom.rank:
            raise self.error(f"the destination holds {dst.rank}-D coordinates; the atom's "
                             f"map is {atom.rank}-D")  # fmt: skip
        if src.space is not AddressSpace.SHARED or src.element != atom.element:
            raise self.error(f"a TMA store reads an smem tensor of {atom.element}, not {src}")


CUTE_TMA_TYPES: tuple[type[DialectType], ...] = (TmaAtomType,)
CUTE_TMA_OPS = (MakeTmaAtomOp, GetTmaTensorOp, TmaPartitionOp, TmaCopyOp, TmaStoreOp)
