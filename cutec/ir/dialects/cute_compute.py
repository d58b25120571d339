"""cute ops that make atom objects and move or compute data.

Memory effects follow the operands' memories (gmem → global, smem → shared,
rmem → reg), so passes see exactly which address spaces an op reads and
writes: `copy` reads its source's and writes its destination's, `gemm` reads
A and B and reads and writes C, `clear` and `fill` write.
"""

from __future__ import annotations

from cutec.atoms.copy import CopyAtomError, copy_atom
from cutec.atoms.mma import UnsupportedMmaError, lookup_mma_atom
from cutec.ir.attributes import ArrayAttr, IntegerAttr, StringAttr, UnitAttr
from cutec.ir.core import Value
from cutec.ir.dialects.cute_atom_types import AUTO, TiledCopyType, TiledMmaType
from cutec.ir.dialects.cute_base import CuteOp, same_shape_mismatch
from cutec.ir.dialects.cute_types import TensorType
from cutec.ir.dialects.gpu import TokenType
from cutec.ir.opdef import operand_def, opt_attr_def, opt_operand_def, result_def
from cutec.ir.traits import AsyncProducer, MemoryEffect, Pure, reads, writes
from cutec.ir.types import FloatType, IndexType, IntegerType, dtype_name, dtype_of
from cutec.target import AddressSpace

# --------------------------------------------------------------------------- atom objects


# An array of sentences (a decision's reasons).
_STRINGS = (
    lambda a: all(isinstance(e, StringAttr) for e in a.elements),
    "must be an array of strings",
)


class MakeTiledCopyOp(CuteOp):
    """A TiledCopy; everything about it is in its type.

    ``%copy_a = cute.make_tiled_copy
        : !cute.tiled_copy<"UniversalCopy<uint128_t>", f32, ((32,8),4):((4,128),1), (128,8)>``

    A copy of an MMA operand whose atom the source left ``auto``
    (``tiled_copy_A(auto, mma)``) names the TiledMMA it was made from and the
    operand, and carries ``{auto}``: the frontend chose its atom (ldmatrix, or
    ``auto`` for plain loads) and select-atoms explains the choice::

        %s2r = cute.make_tiled_copy %mma {auto, operand = "A"}
            : !cute.tiled_mma<...> -> !cute.tiled_copy<"SM75_U32x4_LDSM_N", f16, ...>
    """

    name = "cute.make_tiled_copy"
    traits = (Pure(),)
    mma = opt_operand_def(TiledMmaType)
    auto = opt_attr_def(UnitAttr)  # the source said `auto`: the atom is the compiler's choice
    operand = opt_attr_def(StringAttr)  # with `mma`: the operand (A, B or C) it copies
    # The frontend's choice of an auto atom, said once: its summary, then the better
    # options ruled out and why (select-atoms reports it at the copies and drops it).
    choice = opt_attr_def(ArrayAttr, check=_STRINGS)
    result = result_def(TiledCopyType)

    def __init__(self, t: TiledCopyType, mma: Value | None = None) -> None:
        super().__init__(operands=[mma] if mma is not None else [], result_types=[t])

    def verify_(self) -> None:
        t = self.result.type
        assert isinstance(t, TiledCopyType)
        if t.atom != AUTO:
            try:
                copy_atom(t.atom)
            except CopyAtomError as e:
                raise self.error(str(e)) from None
        operand = self.operand
        if self.mma is not None and not (operand is not None and operand.value in ("A", "B", "C")):
            raise self.error("a tiled copy made from a tiled MMA names its operand (A, B or C)")


class MakeTiledMmaOp(CuteOp):
    """A TiledMMA; everything about it is in its type.

    ``%mma = cute.make_tiled_mma
        : !cute.tiled_mma<"UniversalFMA_F32F32F32F32", f32, f32, f32, f32, (16,16,1):(1,16,0)>``
    """

    name = "cute.make_tiled_mma"
    traits = (Pure(),)
    auto = opt_attr_def(UnitAttr)  # the source said `auto`: the atom is the compiler's choice
    choice = opt_attr_def(ArrayAttr, check=_STRINGS)  # as make_tiled_copy's
    # A whole-tensor gemm's plan, said once: the planner's choices and why, one
    # sentence each (the `tile` pass reports them at the call and drops them).
    tile_plan = opt_attr_def(ArrayAttr, check=_STRINGS)
    result = result_def(TiledMmaType)

    def __init__(self, t: TiledMmaType) -> None:
        super().__init__(result_types=[t])

    def verify_(self) -> None:
        t = self.result.type
        assert isinstance(t, TiledMmaType)
        if (
            t.atom_layout.dynamic_count
            or not isinstance(t.atom_layout.shape, tuple)
            or len(t.atom_layout.shape) != 3
        ):
            raise self.error(f"atom layout {t.atom_layout} must be a static (M,N,K) layout")
        if t.atom != AUTO:
            try:
                atom = lookup_mma_atom(t.atom)
            except UnsupportedMmaError as e:
                raise self.error(str(e)) from None
            have = tuple(dtype_name(x) for x in (t.d_type, t.a_type, t.b_type, t.c_type))
            want = (atom.d_type, atom.a_type, atom.b_type, atom.c_type)
            if have != want:
                raise self.error(
                    f"atom {t.atom} computes {'/'.join(want)} (D/A/B/C), not {'/'.join(have)}"
                )


# --------------------------------------------------------------------------- data movement


def _space(t: TensorType) -> AddressSpace:
    return t.space


class _CopyLike(CuteOp):
    """[%tiled_copy,] %src, %dst: a copy between two tensors of one shape.

    Each copy declares its operand fields in order; all have `src` and `dst`.
    """

    src: operand_def
    dst: operand_def

    def tiled_type(self) -> TiledCopyType | None:
        return None

    def memory_effects(self) -> tuple[MemoryEffect, ...] | None:
        src, dst = self.src.type, self.dst.type
        if not (isinstance(src, TensorType) and isinstance(dst, TensorType)):
            return None
        return (*reads(_space(src)), *writes(_space(dst)))

    def verify_(self) -> None:
        src, dst = self.src.type, self.dst.type
        assert isinstance(src, TensorType) and isinstance(dst, TensorType)
        tiled = self.tiled_type()
        if src.element != dst.element:
            raise self.error(f"copies {src.element} into {dst.element}; convert explicitly")
        if tiled is not None and tiled.element != src.element:
            raise self.error(f"tiled copy of {tiled.element} used on {src.element} tensors")
        why = same_shape_mismatch(src, dst, self._call_values())
        if why:
            raise self.error(why)

    def _call_values(self) -> tuple[int, int]:
        """Elements per atom call on each side (ldmatrix x1/x2 read 8, receive 2 or 4)."""
        tiled = self.tiled_type()
        attr = self.attributes.get("atom")
        name = tiled.atom if tiled is not None else getattr(attr, "value", None)
        if not isinstance(name, str) or name == AUTO:
            return (1, 1)
        try:
            atom = copy_atom(name)
        except CopyAtomError:
            return (1, 1)
        src = self.src.type
        assert isinstance(src, TensorType)
        return atom.call_values(dtype_of(src.element).bits)


def _tiled_copy(value: Value | None) -> TiledCopyType | None:
    """The type of an optional tiled-copy operand (its field constraint is checked first)."""
    if value is None:
        return None
    assert isinstance(value.type, TiledCopyType)
    return value.type


def _check_predicate(op: CuteOp, pred: TensorType, src: TensorType) -> None:
    """A copy predicate is an i1 register tensor of the source's size."""
    if str(pred.element) != "i1" or pred.space is not AddressSpace.REGISTER:
        raise op.error(
            f"the predicate must be an i1 rmem tensor, not {pred.element} {pred.space.memory}"
        )
    why = same_shape_mismatch(pred, src)
    if why:
        raise op.error(why)


class CopyOp(_CopyLike):
    """Copy a tensor into another of the same size (CuTe's copy), optionally by a TiledCopy.

    ``cute.copy %copy_a, %tAgA_k, %tAsA : !cute.tiled_copy<...>, !cute.tensor<...>,
        !cute.tensor<...>``  or  ``cute.copy %src, %dst : !cute.tensor<...>, !cute.tensor<...>``
    """

    name = "cute.copy"
    tiled = opt_operand_def(TiledCopyType)
    src = operand_def(TensorType)
    dst = operand_def(TensorType)
    atom = opt_attr_def(StringAttr)  # the instruction: copy(atom, ...)'s, or select-atoms'
    vector = opt_attr_def(IntegerAttr)  # elements per access (vectorize, select-atoms)

    def __init__(self, src: Value, dst: Value, tiled: Value | None = None) -> None:
        super().__init__(operands=[*([tiled] if tiled is not None else []), src, dst])

    def tiled_type(self) -> TiledCopyType | None:
        return _tiled_copy(self.tiled)


class CopyIfOp(_CopyLike):
    """A predicated copy (CuTe's copy_if): element i moves where pred[i] is true.

    ``cute.copy_if %copy, %pred, %src, %dst : !cute.tiled_copy<...>,
        !cute.tensor<i1, rmem, ...>, !cute.tensor<...>, !cute.tensor<...>``

    The tiled copy is optional; the predicate is a register tensor of i1 with the
    source's size. Where it is false the destination keeps its value, or, with
    ``{zfill}`` (the predicate pass's residue guards), becomes zero.
    """

    name = "cute.copy_if"
    tiled = opt_operand_def(TiledCopyType)
    pred = operand_def(TensorType)
    src = operand_def(TensorType)
    dst = operand_def(TensorType)
    zfill = opt_attr_def(UnitAttr)
    atom = opt_attr_def(StringAttr)  # as cute.copy's
    vector = opt_attr_def(IntegerAttr)  # as cute.copy's
    residue = opt_attr_def(UnitAttr)  # the predicate is the predicate pass's in-bounds test

    def __init__(self, pred: Value, src: Value, dst: Value, tiled: Value | None = None) -> None:
        super().__init__(operands=[*([tiled] if tiled is not None else []), pred, src, dst])

    def tiled_type(self) -> TiledCopyType | None:
        return _tiled_copy(self.tiled)

    def memory_effects(self) -> tuple[MemoryEffect, ...] | None:
        effects = super().memory_effects()
        pred = self.pred.type
        if effects is None or not isinstance(pred, TensorType):
            return None
        return (*reads(_space(pred)), *effects)

    def verify_(self) -> None:
        super().verify_()
        pred, src = self.pred.type, self.src.type
        assert isinstance(pred, TensorType) and isinstance(src, TensorType)
        _check_predicate(self, pred, src)


class CopyAsyncOp(_CopyLike):
    """A copy by an asynchronous atom (cp.async); its token is waited on by thread ops.

    ``%t = cute.copy_async %copy_a, %tAgA_k, %tAsA : !cute.tiled_copy<...>,
        !cute.tensor<...>, !cute.tensor<...> -> !gpu.token``

    With a predicate (CuTe's copy_if with a cp.async atom), an i1 register tensor of
    the source's size between the tiled copy and the source:

    ``%t = cute.copy_async %copy_a, %pred, %tAgA_k, %tAsA : !cute.tiled_copy<...>,
        !cute.tensor<i1, rmem, ...>, !cute.tensor<...>, !cute.tensor<...> -> !gpu.token``

    Element i is copied where pred[i] is true. Where it is false, a ``_ZFILL`` atom
    writes zeros (cp.async with ``src-size`` 0, reading nothing) and any other
    atom leaves the destination element as it was (CuTe's copy_if skips it),
    unless ``{zfill}`` (the predicate pass's residue guard) says zeros for all.
    """

    name = "cute.copy_async"
    traits = (AsyncProducer(),)
    tiled = operand_def(TiledCopyType)
    pred = opt_operand_def(TensorType)
    src = operand_def(TensorType)
    dst = operand_def(TensorType)
    zfill = opt_attr_def(UnitAttr)  # masked elements become zeros whatever the atom
    atom = opt_attr_def(StringAttr)  # as cute.copy's
    vector = opt_attr_def(IntegerAttr)  # as cute.copy's
    residue = opt_attr_def(UnitAttr)  # as cute.copy_if's
    token = result_def(TokenType())

    def __init__(self, tiled: Value, src: Value, dst: Value, pred: Value | None = None) -> None:
        preds = [pred] if pred is not None else []
        super().__init__(operands=[tiled, *preds, src, dst], result_types=[TokenType()])

    def tiled_type(self) -> TiledCopyType | None:
        return _tiled_copy(self.tiled)

    def memory_effects(self) -> tuple[MemoryEffect, ...] | None:
        effects = super().memory_effects()
        pred = self.pred
        if effects is None or pred is None:
            return effects
        if not isinstance(pred.type, TensorType):
            return None
        return (*reads(_space(pred.type)), *effects)

    def verify_(self) -> None:
        super().verify_()
        if self.pred is not None:
            pred, src = self.pred.type, self.src.type
            assert isinstance(pred, TensorType) and isinstance(src, TensorType)
            _check_predicate(self, pred, src)


class GemmOp(CuteOp):
    """C += A · Bᵀ over partitioned fragments (CuTe's gemm), optionally by a TiledMMA.

    ``cute.gemm %mma, %tCsA, %tCsB, %tCrC : !cute.tiled_mma<...>, !cute.tensor<...>,
        !cute.tensor<...>, !cute.tensor<...>``
    """

    name = "cute.gemm"
    mma = opt_operand_def(TiledMmaType)
    a = operand_def(TensorType)
    b = operand_def(TensorType)
    c = operand_def(TensorType)

    def __init__(self, a: Value, b: Value, c: Value, mma: Value | None = None) -> None:
        super().__init__(operands=[*([mma] if mma is not None else []), a, b, c])

    def memory_effects(self) -> tuple[MemoryEffect, ...] | None:
        a, b, c = self.a.type, self.b.type, self.c.type
        if not (
            isinstance(a, TensorType) and isinstance(b, TensorType) and isinstance(c, TensorType)
        ):
            return None
        return (*reads(_space(a), _space(b), _space(c)), *writes(_space(c)))

    def verify_(self) -> None:
        a, b, c = self.a.type, self.b.type, self.c.type
        assert isinstance(a, TensorType) and isinstance(b, TensorType) and isinstance(c, TensorType)
        if c.space is AddressSpace.GLOBAL:
            raise self.error("accumulates into registers or shared memory, not gmem")
        if self.mma is not None:
            mma = self.mma.type
            assert isinstance(mma, TiledMmaType)
            self._verify_smem_operands(mma, a, b)
            for name, t, want in (("A", a, mma.a_type), ("B", b, mma.b_type), ("C", c, mma.c_type)):
                # tf32 operands are stored as f32.
                if t.element != want and not (str(want) == "tf32" and str(t.element) == "f32"):
                    raise self.error(f"{name} is {t.element} but the MMA takes {want}")

    def _verify_smem_operands(self, mma: TiledMmaType, a: TensorType, b: TensorType) -> None:
        """A wgmma SS atom reads A and B through smem descriptors: they must be smem."""
        if mma.atom == AUTO:
            return
        try:
            atom = lookup_mma_atom(mma.atom)
        except UnsupportedMmaError:
            return  # make_tiled_mma reports it
        for name, t, in_smem in (("A", a, atom.a_in_smem), ("B", b, atom.b_in_smem)):
            if in_smem and t.space is not AddressSpace.SHARED:
                raise self.error(
                    f"{mma.atom} reads {name} from shared memory, not {t.space.memory}"
                )


class ClearOp(CuteOp):
    """Set every element to zero: ``cute.clear %tCrC : !cute.tensor<f32, rmem, (8,8):(1,8)>``."""

    name = "cute.clear"
    tensor = operand_def(TensorType)

    def __init__(self, t: Value) -> None:
        super().__init__(operands=[t])

    def memory_effects(self) -> tuple[MemoryEffect, ...] | None:
        t = self.tensor.type
        return writes(_space(t)) if isinstance(t, TensorType) else None


class FillOp(CuteOp):
    """Set every element to a value: ``cute.fill %t, %v : !cute.tensor<...>, f32``."""

    name = "cute.fill"
    tensor = operand_def(TensorType)
    value = operand_def()

    def __init__(self, t: Value, value: Value) -> None:
        super().__init__(operands=[t, value])

    def memory_effects(self) -> tuple[MemoryEffect, ...] | None:
        t = self.tensor.type
        return writes(_space(t)) if isinstance(t, TensorType) else None

    def verify_(self) -> None:
        t = self.tensor.type
        assert isinstance(t, TensorType)
        if self.value.type != t.element:
            raise self.error(f"fills a {t.element} tensor with {self.value.type}")


class AxpbyOp(CuteOp):
    """y = alpha · x + beta · y, element for element (CuTe's axpby).

    ``cute.axpby %alpha, %tCrC, %beta, %tCgC : f32, !cute.tensor<...>, f32, !cute.tensor<...>``

    The arithmetic is in x's element type (an epilogue's accumulator type), as are
    alpha and beta; y may hold another float type: y is read converted to x's type
    and written converted back (rounding to nearest even), as CUTLASS's epilogues do.

    An optional last operand, an i1 register tensor of y's size, masks elements:
    where it is false y is neither read nor written (the predicate pass's guard
    of a partial output tile).
    """

    name = "cute.axpby"
    alpha = operand_def()
    x = operand_def(TensorType)
    beta = operand_def()
    y = operand_def(TensorType)
    pred = opt_operand_def(TensorType)
    vector = opt_attr_def(IntegerAttr)  # elements per access (vectorize)
    residue = opt_attr_def(UnitAttr)  # `pred` is the predicate pass's in-bounds test

    def __init__(
        self, alpha: Value, x: Value, beta: Value, y: Value, pred: Value | None = None
    ) -> None:
        super().__init__(operands=[alpha, x, beta, y, *([pred] if pred is not None else [])])

    def memory_effects(self) -> tuple[MemoryEffect, ...] | None:
        x, y = self.x.type, self.y.type
        if not (isinstance(x, TensorType) and isinstance(y, TensorType)):
            return None
        return (*reads(_space(x), _space(y)), *writes(_space(y)))

    def verify_(self) -> None:
        x, y = self.x.type, self.y.type
        assert isinstance(x, TensorType) and isinstance(y, TensorType)
        for what, scalar in (("alpha", self.alpha), ("beta", self.beta)):
            if scalar.type != x.element:
                raise self.error(f"{what} is {scalar.type} but x holds {x.element}")
        if x.element != y.element and not (
            isinstance(x.element, FloatType) and isinstance(y.element, FloatType)
        ):
            raise self.error(f"x holds {x.element} but y holds {y.element}")
        why = same_shape_mismatch(x, y)
        if why:
            raise self.error(why)
        if self.pred is not None:
            pred = self.pred.type
            assert isinstance(pred, TensorType)
            _check_predicate(self, pred, y)


class LoadOp(CuteOp):
    """Read one element at a linear index: ``%v = cute.load %t, %i : !cute.tensor<...> -> f32``."""

    name = "cute.load"
    tensor = operand_def(TensorType)
    index = operand_def(IndexType)
    result = result_def()

    def __init__(self, t: Value, index: Value) -> None:
        assert isinstance(t.type, TensorType)
        super().__init__(operands=[t, index], result_types=[t.type.element])

    def memory_effects(self) -> tuple[MemoryEffect, ...] | None:
        t = self.tensor.type
        return reads(_space(t)) if isinstance(t, TensorType) else None

    def verify_(self) -> None:
        t = self.tensor.type
        assert isinstance(t, TensorType)
        if self.result.type != t.element:
            raise self.error(f"reads {t.element}, not {self.result.type}")


class StoreOp(CuteOp):
    """Write one element: ``cute.store %v, %t, %i : f32, !cute.tensor<...>``."""

    name = "cute.store"
    value = operand_def((FloatType, IntegerType, IndexType))
    tensor = operand_def(TensorType)
    index = operand_def(IndexType)

    def __init__(self, value: Value, t: Value, index: Value) -> None:
        super().__init__(operands=[value, t, index])

    def memory_effects(self) -> tuple[MemoryEffect, ...] | None:
        t = self.tensor.type
        return writes(_space(t)) if isinstance(t, TensorType) else None

    def verify_(self) -> None:
        t = self.tensor.type
        assert isinstance(t, TensorType)
        if self.value.type != t.element:
            raise self.error(f"stores {self.value.type} into a {t.element} tensor")
