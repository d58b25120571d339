"""cute ops that make tensors and views of tensors.

A base tensor is made from a pointer (`make_tensor`, the dynamic leaves of its
layout as index operands) or allocated (`alloc_smem`, `make_fragment`, static
layouts only). Every other tensor is a view: its layout is a function of the
source layout and the op's static attributes, computed with the layout algebra
when the op is built (SymInt leaves print as ``?``). Run-time coordinates
(block and thread indices, loop indices) are index operands; they move the
view's base offset, never its layout, which is why the result type does not
depend on them.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from cutec.ir.attributes import Attribute, DenseArrayAttr, IntegerAttr, StringAttr
from cutec.ir.core import Value
from cutec.ir.dialects.cute_atom_types import TiledCopyType, TiledMmaType
from cutec.ir.dialects.cute_attrs import UNDERSCORE, LayoutAttr, TupleAttr
from cutec.ir.dialects.cute_base import CuteOp, attrs_of
from cutec.ir.dialects.cute_coord import CoordTensorType
from cutec.ir.dialects.cute_infer import (
    AnyLayout,
    divide,
    lift_view,
    lift_view_and_offset,
    local_partition,
    local_tile,
    slice_view,
    spec_of,
    zero_dynamic,
)
from cutec.ir.dialects.cute_types import TensorType, fill_dynamic
from cutec.ir.dialects.gpu import PointerType
from cutec.ir.layout_of import LayoutAnalysis, UnknownLayout
from cutec.ir.opdef import (
    attr_def,
    operand_def,
    opt_attr_def,
    result_def,
    var_operand_def,
)
from cutec.ir.traits import AddressSpace, EffectKind, MemoryEffect, Pure
from cutec.ir.types import IndexType, dtype_of, i64
from cutec.layout import (
    ComposedLayout,
    LayoutError,
    composition,
    group_modes,
    local_partition_and_offset,
    local_tile_and_offset,
    recast_layout,
    size,
    slice_and_offset,
)
from cutec.layout.inttuple import leaves
from cutec.layout.inttuple import rank as _rank
from cutec.layout.symbolic import Integer

# What a view is taken of: a tensor or a coordinate tensor.
VIEWABLE = (TensorType, CoordTensorType)


class MakeTensorOp(CuteOp):
    """A tensor over memory at a pointer; the layout's dynamic leaves are operands.

    ``%A = cute.make_tensor %ptr, %M, %K, %ldA {div = array<i64: 1, 8, 4>, align = 16}
        : !gpu.ptr<f32, global> -> !cute.tensor<f32, gmem, (?,?):(1,?)>``

    The leaves come in the order the type reads them (shape, then stride). The
    optional `div` gives what each leaf is known to be divisible by (the
    kernel's declared facts), so later passes rebuild the same symbolic layout
    the builder computed with. The optional `align` is the pointer's promised
    alignment in bytes (the kernel's ``align 16``: a power of two, a multiple
    of the element size); vectorisation may rely on it and the launcher checks
    it. Without it, a pointer is aligned to its element.
    """

    name = "cute.make_tensor"
    traits = (Pure(),)
    ptr = operand_def(PointerType)
    leaves = var_operand_def(IndexType)
    result = result_def(TensorType)
    align = opt_attr_def(
        IntegerAttr,
        check=(lambda a: a.value > 0 and a.value & (a.value - 1) == 0, "must be a power of two"),
    )

    def __init__(
        self,
        ptr: Value,
        leaves: list[Value],
        result: TensorType,
        div: list[int] | None = None,
        align: int | None = None,
    ) -> None:
        attrs: dict[str, Attribute] = {}
        if div and any(d != 1 for d in div):
            attrs["div"] = DenseArrayAttr(i64, tuple(div))
        if align is not None:
            attrs["align"] = IntegerAttr(align, i64)
        super().__init__(operands=[ptr, *leaves], result_types=[result], attributes=attrs)

    @property
    def alignment(self) -> int:
        """The pointer's alignment in bytes: the declared one, else the element's size."""
        element_bytes = max(1, dtype_of(self.tensor_result().element).bits // 8)
        return self.align.value if self.align is not None else element_bytes

    def verify_(self) -> None:
        ptr = self.ptr.type
        t = self.result.type
        assert isinstance(ptr, PointerType) and isinstance(t, TensorType)
        if ptr.element != t.element:
            raise self.error(f"points to {ptr.element} but makes a tensor of {t.element}")
        if t.space is not ptr.space:
            raise self.error(f"a {ptr.space.value} pointer cannot make a {t.space.memory} tensor")
        leaves = self.leaves
        if len(leaves) != t.spec.dynamic_count:
            raise self.error(
                f"layout {t.spec} has {t.spec.dynamic_count} dynamic leaves, "
                f"got {len(leaves)} index operands"
            )
        div = self.attributes.get("div")
        if div is not None and not (
            isinstance(div, DenseArrayAttr)
            and len(div.values) == len(leaves)
            and all(d >= 1 for d in div.values)
        ):
            raise self.error("'div' must give one positive divisor per dynamic leaf")
        element_bytes = max(1, dtype_of(t.element).bits // 8)
        if self.align is not None and self.align.value % element_bytes:
            raise self.error(
                f"align {self.align.value} is not a multiple of the {element_bytes}-byte "
                f"{t.element} element"
            )

    def result_layout(self, la: LayoutAnalysis) -> AnyLayout:
        """The type's layout with the ``?`` leaves taken from the index operands."""
        return self.tensor_result().spec.with_values([la.integer_of(v) for v in self.leaves])

    def leaf_divisor(self, operand_index: int) -> int | None:
        """What the dynamic leaf at `operand_index` is known to be divisible by."""
        if operand_index < 1:
            return None
        div = self.attributes.get("div")
        return div.values[operand_index - 1] if isinstance(div, DenseArrayAttr) else 1


class _AllocOp(CuteOp):
    """An allocation of a tensor with a static layout in one memory."""

    space: AddressSpace
    result = result_def(TensorType)

    def __init__(self, result: TensorType) -> None:
        super().__init__(result_types=[result])

    def memory_effects(self) -> tuple[MemoryEffect, ...]:
        return (MemoryEffect(EffectKind.ALLOC, self.space),)

    def verify_(self) -> None:
        t = self.tensor_result()
        if t.space is not self.space:
            raise self.error(f"allocates {self.space.memory}, not {t.space.memory}")
        if t.spec.dynamic_count:
            raise self.error(f"needs a static layout, got {t.spec}")

    def result_layout(self, la: LayoutAnalysis) -> AnyLayout:
        return self.tensor_result().spec.with_values(())


class AllocSmemOp(_AllocOp):
    """Shared memory for a tensor (cosize of its layout elements).

    ``%sA = cute.alloc_smem : !cute.tensor<f32, smem, (128,8):(1,129)>``
    """

    name = "cute.alloc_smem"
    space = AddressSpace.SHARED


class MakeFragmentOp(_AllocOp):
    """Registers for a tensor (CuTe's make_tensor<T>(layout), make_fragment_like, ...).

    ``%tCrC = cute.make_fragment : !cute.tensor<f32, rmem, (8,8):(1,8)>``
    """

    name = "cute.make_fragment"
    space = AddressSpace.REGISTER


class _ViewOp(CuteOp):
    """A view of its `source`; the result keeps its element type and memory.

    Each view declares `source` first, then (partition, retile) its `atom`, then
    its run-time coordinates (index operands).
    """

    traits = (Pure(),)
    source = operand_def(VIEWABLE)
    result = result_def(VIEWABLE)

    def verify_(self) -> None:
        src = self.source.type
        assert isinstance(src, TensorType | CoordTensorType)
        self._verify_atom_operand()
        if isinstance(src, CoordTensorType):
            t = self.results[0].type if len(self.results) == 1 else None
            if not isinstance(t, CoordTensorType) or t.rank != src.rank:
                raise self.error(
                    f"a view of a coordinate tensor of rank {src.rank} must be one too, not {t}"
                )
        else:
            t = self.tensor_result()
            if (t.element, t.space) != (src.element, src.space):
                raise self.error(
                    f"a view of a {src.element} {src.space.memory} tensor cannot be "
                    f"{t.element} {t.space.memory}"
                )
        self._verify_parameters(src, t)
        try:
            expected = spec_of(self.result_layout(LayoutAnalysis(strict=True)))
        except UnknownLayout:
            return  # a source whose layout only its type tells: nothing to recompute
        if expected != t.spec:
            raise self.error(f"result layout must be {expected}, not {t.spec}")

    @classmethod
    def infer_layout(
        cls, source: AnyLayout, attributes: dict[str, Attribute], atom: Any = None
    ) -> AnyLayout:
        """The result layout from the source's, the op's attributes and its atom's type.

        Run-time coordinates only move the view's base: they enter as 0. The
        builder calls this before the op exists (to make its result type);
        `result_layout` calls it on an op in the IR.
        """
        raise NotImplementedError

    @classmethod
    def inferred_layout(
        cls, source: AnyLayout, attributes: dict[str, Attribute], atom: Any = None
    ) -> AnyLayout:
        """`infer_layout`, memoised: the builder, the verifier after every pass and the
        lowering ask for the same views again and again."""
        return _memo_infer(cls, source, tuple(sorted(attributes.items())), atom)

    @classmethod
    def infer_layout_and_offset(
        cls,
        source: AnyLayout,
        attributes: dict[str, Attribute],
        atom: Any,
        coords: Sequence[Integer],
    ) -> tuple[AnyLayout, Integer]:
        """The view at run-time coordinates `coords` (symbolic): its layout, and the
        offset of its element 0 in the source's codomain (CuTe's `*_and_offset`).

        Element i of the view is element ``offset + layout(i)`` of what the source
        indexes. A swizzled source keeps the whole offset inside its composition
        (Sw o off o B), where the swizzle acts on it.
        """
        raise NotImplementedError

    def atom_type(self) -> Any:
        """The type of the view's tiled copy or MMA operand, if it has one."""
        return None

    def run_time_coords(self) -> tuple[Value, ...]:
        """The index operands that place the view (coordinates, or the thread index)."""
        return ()

    def result_address(self, la: LayoutAnalysis) -> tuple[Value, Integer, AnyLayout]:
        """(root tensor, offset, layout): element i is root element offset + layout(i)."""
        root, offset, source = la.address_of(self.source)
        coords = tuple(la.integer_of(v) for v in self.run_time_coords())
        try:
            layout, delta = _memo_infer_and_offset(
                type(self), source, tuple(sorted(self.attributes.items())), self.atom_type(), coords
            )
        except (LayoutError, ValueError) as e:
            raise self.error(f"cannot compute the view's address: {e}") from None
        return root, offset + delta, layout

    def result_layout(self, la: LayoutAnalysis) -> AnyLayout:
        atom = self.atom_type()
        source = la.layout_of(self.source)
        try:
            return self.inferred_layout(source, self.attributes, atom)
        except (LayoutError, ValueError) as e:
            raise self.error(f"cannot compute the result layout: {e}") from None

    def _verify_atom_operand(self) -> None:
        pass

    def _verify_parameters(self, src: Any, result: Any) -> None:
        pass

    def _check_coord(self, coord: TupleAttr, coords: tuple[Value, ...]) -> TupleAttr:
        key, given = "coord", len(coords)
        if coord.dynamic_count != given:
            raise self.error(
                f"'{key}' {coord.print_body()} has {coord.dynamic_count} '?' "
                f"leaves but {given} index operands follow the tensor"
            )
        return coord


@functools.lru_cache(maxsize=4096)
def _memo_infer(
    cls: type[_ViewOp], source: AnyLayout, attributes: tuple[tuple[str, Attribute], ...], atom: Any
) -> AnyLayout:
    # A pure function of hashable values (frozen layouts, attributes and types).
    return cls.infer_layout(source, dict(attributes), atom)


@functools.lru_cache(maxsize=4096)
def _memo_infer_and_offset(
    cls: type[_ViewOp],
    source: AnyLayout,
    attributes: tuple[tuple[str, Attribute], ...],
    atom: Any,
    coords: tuple[Integer, ...],
) -> tuple[AnyLayout, Integer]:
    # As `_memo_infer`: every pass that asks for a view's address asks for the same.
    return cls.infer_layout_and_offset(source, dict(attributes), atom, list(coords))


def clear_view_cache() -> None:
    _memo_infer.cache_clear()
    _memo_infer_and_offset.cache_clear()


def _value(attr: Attribute) -> Any:
    """The Python value of a tuple, string or layout attribute (a layout tiler)."""
    if isinstance(attr, LayoutAttr):
        return attr.layout
    assert isinstance(attr, TupleAttr | StringAttr), attr
    return attr.value


class LocalTileOp(_ViewOp):
    """CuTe's local_tile: the tile at `coord` of the grid of `tiler`-sized tiles.

    ``%gA = cute.local_tile %A, %bx, %by {tiler = #cute.tuple<(128,128,8)>,
        coord = #cute.tuple<(?,?,_)>, proj = #cute.tuple<(1,X,1)>}
        : !cute.tensor<f32, gmem, (?,?):(1,?)> -> !cute.tensor<f32, gmem, (128,8,?):(1,?,?)>``

    Each ``?`` of `coord` is the next index operand; `proj` (CuTe's Step) drops
    the tiler and coordinate modes marked X.
    """

    name = "cute.local_tile"
    source = operand_def(VIEWABLE)
    coords = var_operand_def(IndexType)
    tiler = attr_def((TupleAttr, LayoutAttr))  # a layout tiler: CuTe's Layout tiler
    coord = attr_def(TupleAttr)
    proj = opt_attr_def(TupleAttr)

    @classmethod
    def infer_layout(
        cls, source: AnyLayout, attributes: dict[str, Attribute], atom: Any = None
    ) -> AnyLayout:
        proj = attributes.get("proj")
        return local_tile(
            source,
            _value(attributes["tiler"]),
            zero_dynamic(_value(attributes["coord"])),
            _value(proj) if proj is not None else None,
        )

    @classmethod
    def infer_layout_and_offset(
        cls,
        source: AnyLayout,
        attributes: dict[str, Attribute],
        atom: Any,
        coords: Sequence[Integer],
    ) -> tuple[AnyLayout, Integer]:
        proj = attributes.get("proj")
        coord = fill_dynamic(_value(attributes["coord"]), iter(coords))
        return lift_view_and_offset(
            lambda x: local_tile_and_offset(
                x, _value(attributes["tiler"]), coord, _value(proj) if proj else None
            ),
            source,
        )

    def run_time_coords(self) -> tuple[Value, ...]:
        return self.coords

    def __init__(
        self,
        source: Value,
        coords: list[Value],
        result: TensorType,
        tiler: TupleAttr,
        coord: TupleAttr,
        proj: TupleAttr | None = None,
    ) -> None:
        super().__init__(
            operands=[source, *coords],
            result_types=[result],
            attributes=attrs_of(tiler=tiler, coord=coord, proj=proj),
        )

    def _verify_parameters(self, src: Any, result: Any) -> None:
        tiler = self.tiler
        coord = self._check_coord(self.coord, self.coords)
        if isinstance(tiler, LayoutAttr):
            if self.proj is not None:
                raise self.error("a layout tiler takes no proj (step)")
            return
        if _rank(tiler.value) != _rank(coord.value):
            raise self.error(
                f"tiler {tiler.print_body()} and coord {coord.print_body()} have different ranks"
            )
        proj = self.proj
        if proj is not None and _rank(proj.value) != _rank(tiler.value):
            raise self.error(
                f"proj {proj.print_body()} and tiler {tiler.print_body()} have different ranks"
            )


class LocalPartitionOp(_ViewOp):
    """CuTe's local_partition: the elements thread %tid of `thr_layout` owns.

    ``%tAgA = cute.local_partition %gA, %tid {thr_layout = #cute.layout<(32,8):(1,32)>}
        : !cute.tensor<f32, gmem, (128,8,?):(1,?,?)> -> !cute.tensor<f32, gmem, (4,1,?):(32,?,?)>``
    """

    name = "cute.local_partition"
    source = operand_def(VIEWABLE)
    tid = operand_def(IndexType)
    thr_layout = attr_def(LayoutAttr)
    proj = opt_attr_def(TupleAttr)

    @classmethod
    def infer_layout(
        cls, source: AnyLayout, attributes: dict[str, Attribute], atom: Any = None
    ) -> AnyLayout:
        proj = attributes.get("proj")
        thr = attributes["thr_layout"]
        assert isinstance(thr, LayoutAttr)
        return local_partition(source, thr.layout, 0, _value(proj) if proj is not None else None)

    @classmethod
    def infer_layout_and_offset(
        cls,
        source: AnyLayout,
        attributes: dict[str, Attribute],
        atom: Any,
        coords: Sequence[Integer],
    ) -> tuple[AnyLayout, Integer]:
        proj = attributes.get("proj")
        thr = attributes["thr_layout"]
        assert isinstance(thr, LayoutAttr)
        (tid,) = coords
        return lift_view_and_offset(
            lambda x: local_partition_and_offset(
                x, thr.layout, tid, _value(proj) if proj else None
            ),
            source,
        )

    def run_time_coords(self) -> tuple[Value, ...]:
        return (self.tid,)

    def __init__(
        self,
        source: Value,
        tid: Value,
        result: TensorType,
        thr_layout: LayoutAttr,
        proj: TupleAttr | None = None,
    ) -> None:
        super().__init__(
            operands=[source, tid],
            result_types=[result],
            attributes=attrs_of(thr_layout=thr_layout, proj=proj),
        )


class SliceOp(_ViewOp):
    """A slice: ``t(_, _, k)`` keeps the ``_`` modes and fixes the others.

    ``%a = cute.slice %tAgA, %k {coord = #cute.tuple<(_,_,?)>}
        : !cute.tensor<f32, gmem, (4,1,?):(32,?,?)> -> !cute.tensor<f32, gmem, (4,1):(32,?)>``
    """

    name = "cute.slice"
    source = operand_def(VIEWABLE)
    coords = var_operand_def(IndexType)
    coord = attr_def(TupleAttr)

    @classmethod
    def infer_layout(
        cls, source: AnyLayout, attributes: dict[str, Attribute], atom: Any = None
    ) -> AnyLayout:
        return slice_view(source, zero_dynamic(_value(attributes["coord"])))

    @classmethod
    def infer_layout_and_offset(
        cls,
        source: AnyLayout,
        attributes: dict[str, Attribute],
        atom: Any,
        coords: Sequence[Integer],
    ) -> tuple[AnyLayout, Integer]:
        # CuTe's slice_and_offset, with its split of a swizzled offset.
        return slice_and_offset(fill_dynamic(_value(attributes["coord"]), iter(coords)), source)

    def run_time_coords(self) -> tuple[Value, ...]:
        return self.coords

    def __init__(
        self, source: Value, coords: list[Value], result: TensorType, coord: TupleAttr
    ) -> None:
        super().__init__(
            operands=[source, *coords], result_types=[result], attributes={"coord": coord}
        )

    def _verify_parameters(self, src: Any, result: Any) -> None:
        coord = self._check_coord(self.coord, self.coords)
        if not any(x is UNDERSCORE for x in leaves(coord.value)):
            raise self.error("a slice keeps at least one '_' mode; read one element with cute.load")


DIVIDE_KINDS = ("logical", "zipped", "tiled", "flat")


class DivideOp(_ViewOp):
    """CuTe's logical/zipped/tiled/flat_divide of a tensor by a static tiler.

    ``%t = cute.divide %S {kind = "tiled", tiler = #cute.tuple<(128,64)>}
        : !cute.tensor<f32, gmem, (?,?):(1,?)>
        -> !cute.tensor<f32, gmem, ((128,64),?,?):((1,?),128,?)>``

    The result is the same memory seen through the algebra's divide of the
    source layout: the tile modes first, then the modes that index the tiles.
    """

    name = "cute.divide"
    source = operand_def(VIEWABLE)
    kind = attr_def(StringAttr, one_of=DIVIDE_KINDS)
    tiler = attr_def((TupleAttr, LayoutAttr))  # integers, or a static layout

    @classmethod
    def infer_layout(
        cls, source: AnyLayout, attributes: dict[str, Attribute], atom: Any = None
    ) -> AnyLayout:
        return divide(source, _value(attributes["kind"]), _value(attributes["tiler"]))

    @classmethod
    def infer_layout_and_offset(
        cls,
        source: AnyLayout,
        attributes: dict[str, Attribute],
        atom: Any,
        coords: Sequence[Integer],
    ) -> tuple[AnyLayout, Integer]:
        return cls.infer_layout(source, attributes, atom), 0  # the same elements, regrouped

    def __init__(self, source: Value, result: Any, kind: str, tiler: TupleAttr) -> None:

        super().__init__(
            operands=[source],
            result_types=[result],
            attributes={"kind": StringAttr(kind), "tiler": tiler},
        )

    def _verify_parameters(self, src: Any, result: Any) -> None:
        tiler = self.tiler
        if isinstance(tiler, LayoutAttr):
            return  # static by construction
        if not all(isinstance(x, int) for x in leaves(tiler.value)):
            raise self.error(f"the tiler {tiler.print_body()} must be static integers")


class ComposeOp(_ViewOp):
    """A tensor composed with a static layout (CuTe's ``composition(tensor, layout)``):
    the same memory seen through ``source_layout ∘ layout``.

    ``%sT = cute.compose %sS {layout = #cute.layout<(32,32):(32,1)>}
        : !cute.tensor<f32, smem, (32,32):(1,33)> -> !cute.tensor<f32, smem, (32,32):(33,1)>``

    A swizzled source stays swizzled: the algebra composes inside the swizzle.
    """

    name = "cute.compose"
    source = operand_def(VIEWABLE)
    layout = attr_def(LayoutAttr)

    @classmethod
    def infer_layout(
        cls, source: AnyLayout, attributes: dict[str, Attribute], atom: Any = None
    ) -> AnyLayout:
        tiler = attributes["layout"]
        assert isinstance(tiler, LayoutAttr)
        return composition(source, tiler.layout)

    @classmethod
    def infer_layout_and_offset(
        cls,
        source: AnyLayout,
        attributes: dict[str, Attribute],
        atom: Any,
        coords: Sequence[Integer],
    ) -> tuple[AnyLayout, Integer]:
        return cls.infer_layout(source, attributes, atom), 0  # the same elements, reordered


class GroupModesOp(_ViewOp):
    """A tensor with modes [begin, end) grouped into one (CuTe's ``group_modes<B,E>``):
    the same elements in the same order.

    ``%g = cute.group_modes %sA {begin = 0 : i64, end = 2 : i64}
        : !cute.tensor<f16, smem, (64,64,3):(1,64,4096)>
        -> !cute.tensor<f16, smem, ((64,64),3):((1,64),4096)>``
    """

    name = "cute.group_modes"
    source = operand_def(VIEWABLE)
    begin = attr_def(IntegerAttr)
    end = attr_def(IntegerAttr)

    @classmethod
    def infer_layout(
        cls, source: AnyLayout, attributes: dict[str, Attribute], atom: Any = None
    ) -> AnyLayout:
        begin, end = attributes["begin"], attributes["end"]
        assert isinstance(begin, IntegerAttr) and isinstance(end, IntegerAttr)
        if isinstance(source, ComposedLayout):
            inner = group_modes(source.layout_b, begin.value, end.value)
            return ComposedLayout(source.layout_a, source.offset, inner)
        return group_modes(source, begin.value, end.value)

    @classmethod
    def infer_layout_and_offset(
        cls,
        source: AnyLayout,
        attributes: dict[str, Attribute],
        atom: Any,
        coords: Sequence[Integer],
    ) -> tuple[AnyLayout, Integer]:
        return cls.infer_layout(source, attributes, atom), 0  # the same elements, regrouped


_COPY_OPERANDS = ("S", "D")
_MMA_OPERANDS = ("A", "B", "C")


class PartitionOp(_ViewOp):
    """ThrCopy::partition_S/D or ThrMMA::partition_A/B/C for thread %tid.

    ``%tAgA = cute.partition %gA, %copy_a, %tid {operand = "S"}
        : !cute.tensor<f32, gmem, (128,8,?):(1,?,?)>, !cute.tiled_copy<...>
        -> !cute.tensor<f32, gmem, ((4,1),1,1,?):((1,0),0,0,?)>``

    The first mode is what one atom consumes (CPY or MMA), then the repeats
    over the tile, then the tensor's modes beyond the tile.
    """

    name = "cute.partition"
    source = operand_def(VIEWABLE)
    atom = operand_def((TiledCopyType, TiledMmaType))
    tid = operand_def(IndexType)
    operand = attr_def(StringAttr)

    @classmethod
    def infer_layout(
        cls, source: AnyLayout, attributes: dict[str, Attribute], atom: Any = None
    ) -> AnyLayout:
        """Thread 0's partition (the thread index moves the base only)."""
        which = _value(attributes["operand"])
        if isinstance(atom, TiledCopyType):
            thr = atom.library().get_slice(0)
            return lift_view(thr.partition_S if which == "S" else thr.partition_D, source)
        if isinstance(atom, TiledMmaType):
            mma = atom.library().get_slice(0)
            return lift_view(lambda x: mma.partition(which, x), source)
        raise ValueError(f"partitions need a tiled copy or MMA, not {atom}")

    @classmethod
    def infer_layout_and_offset(
        cls,
        source: AnyLayout,
        attributes: dict[str, Attribute],
        atom: Any,
        coords: Sequence[Integer],
    ) -> tuple[AnyLayout, Integer]:
        which = _value(attributes["operand"])
        (tid,) = coords
        if isinstance(atom, TiledCopyType):
            thr = atom.library().get_slice(tid)
            fn = thr.partition_S_and_offset if which == "S" else thr.partition_D_and_offset
            return lift_view_and_offset(fn, source)
        if isinstance(atom, TiledMmaType):
            mma = atom.library().get_slice(tid)
            return lift_view_and_offset(lambda x: mma.partition_and_offset(which, x), source)
        raise ValueError(f"partitions need a tiled copy or MMA, not {atom}")

    def run_time_coords(self) -> tuple[Value, ...]:
        return (self.tid,)

    def __init__(
        self, tiled: Value, source: Value, tid: Value, result: TensorType, operand: str
    ) -> None:

        super().__init__(
            operands=[source, tiled, tid],
            result_types=[result],
            attributes={"operand": StringAttr(operand)},
        )

    def _verify_atom_operand(self) -> None:
        allowed = _COPY_OPERANDS if isinstance(self.atom.type, TiledCopyType) else _MMA_OPERANDS
        if self.operand.value not in allowed:
            raise self.error(f"needs 'operand' = one of {', '.join(map(repr, allowed))}")

    def atom_type(self) -> Any:
        return self.atom.type


class RetileOp(_ViewOp):
    """ThrCopy::retile_S/D: view a thread's fragment in the copy's (CPY, ...) shape.

    ``%tXrA = cute.retile %tCrA, %copy {operand = "D"} : !cute.tensor<...>, !cute.tiled_copy<...>
        -> !cute.tensor<...>``
    """

    name = "cute.retile"
    source = operand_def(VIEWABLE)
    atom = operand_def(TiledCopyType)
    operand = attr_def(StringAttr, one_of=_COPY_OPERANDS)

    @classmethod
    def infer_layout(
        cls, source: AnyLayout, attributes: dict[str, Attribute], atom: Any = None
    ) -> AnyLayout:
        if not isinstance(atom, TiledCopyType):
            raise ValueError(f"retile needs a tiled copy, not {atom}")
        return lift_view(atom.library().retile, source)

    @classmethod
    def infer_layout_and_offset(
        cls,
        source: AnyLayout,
        attributes: dict[str, Attribute],
        atom: Any,
        coords: Sequence[Integer],
    ) -> tuple[AnyLayout, Integer]:
        if not isinstance(atom, TiledCopyType):
            raise ValueError(f"retile needs a tiled copy, not {atom}")
        return lift_view_and_offset(atom.library().retile_and_offset, source)

    def __init__(self, source: Value, tiled: Value, result: TensorType, operand: str) -> None:

        super().__init__(
            operands=[source, tiled],
            result_types=[result],
            attributes={"operand": StringAttr(operand)},
        )

    def atom_type(self) -> Any:
        return self.atom.type


class ViewOp(CuteOp):
    """An explicit view: element i is element ``%offset + layout(i)`` of the source's root
    (the source's own offset included), the layout being the result type's with its
    ``?`` leaves taken from the index operands.

    ``%tAgA = cute.view %A, %off, %ldA8 : !cute.tensor<f32, gmem, (?,?):(1,?)>
        -> !cute.tensor<f32, gmem, ((4,1),1,8):((1,0),0,?)>``

    The partition pass writes one for each thread's slice, so the per-thread
    fragment layouts and the thread-index arithmetic of their offsets show in the
    IR; lower-to-thread reads it like any view. Its layout is not swizzled.
    """

    name = "cute.view"
    traits = (Pure(),)
    source = operand_def(VIEWABLE)
    offset = operand_def(IndexType)
    leaves = var_operand_def(IndexType)
    result = result_def(VIEWABLE)

    def __init__(self, source: Value, offset: Value, leaves: list[Value], result: Any) -> None:
        super().__init__(operands=[source, offset, *leaves], result_types=[result])

    def verify_(self) -> None:
        src, t = self.source.type, self.result.type
        if type(src) is not type(t):
            raise self.error(f"a view of a {src} must be of the same kind, not {t}")
        if isinstance(t, TensorType):
            assert isinstance(src, TensorType)
            if (t.element, t.space) != (src.element, src.space):
                raise self.error(
                    f"a view of a {src.element} {src.space.memory} tensor cannot be "
                    f"{t.element} {t.space.memory}"
                )
        spec = t.spec  # type: ignore[union-attr]
        if spec.swizzle is not None:
            raise self.error("an explicit view has a plain layout, not a swizzled one")
        if len(self.leaves) != spec.dynamic_count:
            raise self.error(
                f"layout {spec} has {spec.dynamic_count} dynamic leaves, "
                f"got {len(self.leaves)} index operands"
            )

    def result_layout(self, la: LayoutAnalysis) -> AnyLayout:
        spec = self.result.type.spec  # type: ignore[union-attr]
        return spec.with_values([la.integer_of(v) for v in self.leaves])

    def result_address(self, la: LayoutAnalysis) -> tuple[Value, Integer, AnyLayout]:
        root, offset, source = la.address_of(self.source)
        if isinstance(source, ComposedLayout):
            # The swizzle acts on the whole offset; a plain layout cannot say where.
            raise self.error("cannot view a swizzled tensor through a plain layout")
        return root, offset + la.integer_of(self.offset), self.result_layout(la)


class RecastOp(CuteOp):
    """The same bytes seen as elements of another type (CuTe's ``recast<T>(t)``):
    the layout is CuTe's recast_layout of the source's (upcast for wider elements,
    downcast for narrower).

    ``%u = cute.recast %t : !cute.tensor<f16, smem, (8,4):(1,8)>
        -> !cute.tensor<u32, smem, (4,4):(1,4)>``

    A recast tensor is a root of its own: its elements are addressed from the
    source's element 0, reinterpreted (a pointer cast). Register fragments are
    not recast (their registers are values of one type).
    """

    name = "cute.recast"
    traits = (Pure(),)
    source = operand_def(TensorType)
    result = result_def(TensorType)

    def __init__(self, source: Value, result: TensorType) -> None:
        super().__init__(operands=[source], result_types=[result])

    @staticmethod
    def recast(layout: AnyLayout, old: TensorType, new: TensorType) -> AnyLayout:
        return recast_layout(layout, dtype_of(old.element).bits, dtype_of(new.element).bits)

    def result_layout(self, la: LayoutAnalysis) -> AnyLayout:
        src, t = self.source.type, self.result.type
        assert isinstance(src, TensorType) and isinstance(t, TensorType)
        try:
            return self.recast(la.layout_of(self.source), src, t)
        except (LayoutError, ValueError) as e:
            raise self.error(f"cannot recast the layout: {e}") from None

    def verify_(self) -> None:
        src, t = self.source.type, self.result.type
        assert isinstance(src, TensorType) and isinstance(t, TensorType)
        if src.space is not t.space:
            raise self.error(f"a recast stays in {src.space.memory}, not {t.space.memory}")
        if src.space is AddressSpace.REGISTER:
            raise self.error("register fragments are not recast (convert their elements)")
        try:
            expected = spec_of(self.result_layout(LayoutAnalysis(strict=True)))
        except UnknownLayout:
            return
        if expected != t.spec:
            raise self.error(f"result layout must be {expected}, not {t.spec}")


class SizeOp(CuteOp):
    """The run-time size of a tensor (or coordinate tensor) or of one of its modes (static
    sizes fold to constants).

    ``%n = cute.size %tAgA {mode = #cute.tuple<2>} : !cute.tensor<f32, gmem, (4,1,?):(32,?,?)>
        -> index``
    """

    name = "cute.size"
    traits = (Pure(),)
    source = operand_def(VIEWABLE)
    mode = opt_attr_def(TupleAttr)
    result = result_def(IndexType())

    def __init__(self, source: Value, mode: TupleAttr | None = None) -> None:
        super().__init__(
            operands=[source], result_types=[IndexType()], attributes=attrs_of(mode=mode)
        )

    def verify_(self) -> None:
        t = self.source.type
        assert isinstance(t, TensorType | CoordTensorType)
        mode = self.mode
        if mode is None:
            return
        path = mode.value if isinstance(mode.value, tuple) else (mode.value,)
        shape: Any = t.spec.shape
        for i in path:
            if isinstance(i, int) and not isinstance(shape, tuple) and i == 0:
                continue  # an integral shape is its own mode 0 (CuTe's get<0>)
            if not isinstance(i, int) or not isinstance(shape, tuple) or not 0 <= i < len(shape):
                raise self.error(f"mode {mode.print_body()} does not exist in {t.spec}")
            shape = shape[i]

    def result_integer(self, la: LayoutAnalysis) -> Integer:
        """The size of the layout, or of the mode at `mode`."""
        layout = la.layout_of(self.source)
        mode = self.mode
        if mode is None:
            return size(layout)
        return size(layout, *(mode.value if isinstance(mode.value, tuple) else (mode.value,)))
