"""cute ops that make atom objects and move or compute data.

Memory effects follow the operands' memories (gmem → global, smem → shared,
rmem → reg), so passes see exactly which address spaces an op reads and
writes: `copy` reads its source's and writes its destination's, `gemm` reads
A and B and reads and writes C, `clear` and `fill` write.
"""

from __future__ import annotations

from cutec.ir.core import Value
from cutec.ir.dialects.cute_atom_types import AUTO, TiledCopyType, TiledMmaType
from cutec.ir.dialects.cute_base import SPACE_OF_MEMORY, CuteOp, same_shape_mismatch
from cutec.ir.dialects.cute_types import TensorType
from cutec.ir.dialects.gpu import TokenType
from cutec.ir.traits import AsyncProducer, MemoryEffect, Pure, reads, writes
from cutec.ir.types import FloatType, IndexType, IntegerType, Type

# --------------------------------------------------------------------------- atom objects


class MakeTiledCopyOp(CuteOp):
    """A TiledCopy; everything about it is in its type.

    ``%copy_a = cute.make_tiled_copy
        : !cute.tiled_copy<"UniversalCopy<uint128_t>", f32, ((32,8),4):((4,128),1), (128,8)>``
    """

    name = "cute.make_tiled_copy"
    traits = (Pure(),)
    num_operands = 0
    num_results = 1

    def __init__(self, t: TiledCopyType) -> None:
        super().__init__(result_types=[t])

    def verify_(self) -> None:
        t = self.results[0].type
        if not isinstance(t, TiledCopyType):
            raise self.error(f"must make a !cute.tiled_copy, not {t}")
        if t.atom != AUTO:
            from cutec.atoms.copy import CopyAtomError, copy_atom

            try:
                copy_atom(t.atom)
            except CopyAtomError as e:
                raise self.error(str(e)) from None


class MakeTiledMmaOp(CuteOp):
    """A TiledMMA; everything about it is in its type.

    ``%mma = cute.make_tiled_mma
        : !cute.tiled_mma<"UniversalFMA_F32F32F32F32", f32, f32, f32, f32, (16,16,1):(1,16,0)>``
    """

    name = "cute.make_tiled_mma"
    traits = (Pure(),)
    num_operands = 0
    num_results = 1

    def __init__(self, t: TiledMmaType) -> None:
        super().__init__(result_types=[t])

    def verify_(self) -> None:
        t = self.results[0].type
        if not isinstance(t, TiledMmaType):
            raise self.error(f"must make a !cute.tiled_mma, not {t}")
        if (
            t.atom_layout.dynamic_count
            or not isinstance(t.atom_layout.shape, tuple)
            or len(t.atom_layout.shape) != 3
        ):
            raise self.error(f"atom layout {t.atom_layout} must be a static (M,N,K) layout")
        if t.atom != AUTO:
            from cutec.atoms.mma import UnsupportedMmaError, lookup_mma_atom

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


# The atom library's dtype names for IR element types.
_DTYPE_NAMES = {"i8": "s8", "i32": "s32", "f8E4M3FN": "e4m3", "f8E5M2": "e5m2"}


def dtype_name(t: Type) -> str:
    """The atom library's name of an element type (f32, tf32, s8, e4m3, ...)."""
    return _DTYPE_NAMES.get(str(t), str(t))


# --------------------------------------------------------------------------- data movement


def _space(t: TensorType):
    return SPACE_OF_MEMORY[t.space]


class _CopyLike(CuteOp):
    """[%tiled_copy,] %src, %dst: a copy between two tensors of one shape."""

    def _tensors(self) -> tuple[TiledCopyType | None, TensorType, TensorType]:
        ops = self.operands
        tiled = None
        if len(ops) == 3:
            t = ops[0].type
            if not isinstance(t, TiledCopyType):
                raise self.error(f"operand #0 must be a !cute.tiled_copy, got {t}")
            tiled = t
        elif len(ops) != 2:
            raise self.error("takes [tiled_copy,] source, destination")
        first = len(ops) - 2
        return (
            tiled,
            self.tensor_operand(first, "a source tensor"),
            self.tensor_operand(first + 1, "a destination tensor"),
        )

    def memory_effects(self) -> tuple[MemoryEffect, ...] | None:
        types = [v.type for v in self.operands[-2:]]
        if len(types) != 2 or not all(isinstance(t, TensorType) for t in types):
            return None
        src, dst = types
        return (*reads(_space(src)), *writes(_space(dst)))

    def verify_(self) -> None:
        self._check_copy(*self._tensors())

    def _check_copy(self, tiled: TiledCopyType | None, src: TensorType, dst: TensorType) -> None:
        if src.element != dst.element:
            raise self.error(f"copies {src.element} into {dst.element}; convert explicitly")
        if tiled is not None and tiled.element != src.element:
            raise self.error(f"tiled copy of {tiled.element} used on {src.element} tensors")
        why = same_shape_mismatch(src, dst)
        if why:
            raise self.error(why)


class CopyOp(_CopyLike):
    """Copy a tensor into another of the same size (CuTe's copy), optionally by a TiledCopy.

    ``cute.copy %copy_a, %tAgA_k, %tAsA : !cute.tiled_copy<...>, !cute.tensor<...>,
        !cute.tensor<...>``  or  ``cute.copy %src, %dst : !cute.tensor<...>, !cute.tensor<...>``
    """

    name = "cute.copy"
    num_results = 0

    def __init__(self, src: Value, dst: Value, tiled: Value | None = None) -> None:
        super().__init__(operands=[*([tiled] if tiled is not None else []), src, dst])


class CopyIfOp(CuteOp):
    """A predicated copy (CuTe's copy_if): element i moves where pred[i] is true.

    ``cute.copy_if %copy, %pred, %src, %dst : !cute.tiled_copy<...>,
        !cute.tensor<i1, rmem, ...>, !cute.tensor<...>, !cute.tensor<...>``

    The tiled copy is optional; the predicate is a register tensor of i1 with the
    source's size.
    """

    name = "cute.copy_if"
    num_results = 0

    def __init__(self, pred: Value, src: Value, dst: Value, tiled: Value | None = None) -> None:
        super().__init__(operands=[*([tiled] if tiled is not None else []), pred, src, dst])

    def memory_effects(self) -> tuple[MemoryEffect, ...] | None:
        types = [v.type for v in self.operands[-3:]]
        if len(types) != 3 or not all(isinstance(t, TensorType) for t in types):
            return None
        pred, src, dst = types
        return (*reads(_space(pred), _space(src)), *writes(_space(dst)))

    def verify_(self) -> None:
        ops = self.operands
        if len(ops) not in (3, 4):
            raise self.error("takes [tiled_copy,] predicate, source, destination")
        first = len(ops) - 3
        pred, src, dst = (
            self.tensor_operand(first + i, what)
            for i, what in enumerate(
                ("a predicate tensor", "a source tensor", "a destination tensor")
            )
        )
        if first and not isinstance(ops[0].type, TiledCopyType):
            raise self.error(f"operand #0 must be a !cute.tiled_copy, got {ops[0].type}")
        if first and ops[0].type.element != src.element:
            raise self.error(f"tiled copy of {ops[0].type.element} used on {src.element} tensors")
        if str(pred.element) != "i1" or pred.space != "rmem":
            raise self.error(
                f"the predicate must be an i1 rmem tensor, not {pred.element} {pred.space}"
            )
        if src.element != dst.element:
            raise self.error(f"copies {src.element} into {dst.element}; convert explicitly")
        why = same_shape_mismatch(src, dst) or same_shape_mismatch(pred, src)
        if why:
            raise self.error(why)


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
    atom leaves the destination element as it was (CuTe's copy_if skips it).
    """

    name = "cute.copy_async"
    traits = (AsyncProducer(),)
    num_results = 1

    def __init__(self, tiled: Value, src: Value, dst: Value, pred: Value | None = None) -> None:
        preds = [pred] if pred is not None else []
        super().__init__(operands=[tiled, *preds, src, dst], result_types=[TokenType()])

    @property
    def pred(self) -> Value | None:
        """The predicate tensor, or None for an unpredicated copy."""
        return self.operands[1] if len(self.operands) == 4 else None

    def memory_effects(self) -> tuple[MemoryEffect, ...] | None:
        effects = super().memory_effects()
        pred = self.pred
        if effects is None or pred is None:
            return effects
        if not isinstance(pred.type, TensorType):
            return None
        return (*reads(_space(pred.type)), *effects)

    def verify_(self) -> None:
        if len(self.operands) not in (3, 4):
            raise self.error("takes the tiled copy, [a predicate,] source, destination")
        tiled = self.operands[0].type
        if not isinstance(tiled, TiledCopyType):
            raise self.error("needs the tiled copy whose atom is asynchronous")
        if self.pred is not None:
            pred = self.tensor_operand(1, "a predicate tensor")
            if str(pred.element) != "i1" or pred.space != "rmem":
                raise self.error(
                    f"the predicate must be an i1 rmem tensor, not {pred.element} {pred.space}"
                )
            why = same_shape_mismatch(pred, self.tensor_operand(2, "a source tensor"))
            if why:
                raise self.error(why)
        n = len(self.operands)
        self._check_copy(
            tiled,
            self.tensor_operand(n - 2, "a source tensor"),
            self.tensor_operand(n - 1, "a destination tensor"),
        )
        if self.result_types != (TokenType(),):
            raise self.error("result must be a !gpu.token")


class GemmOp(CuteOp):
    """C += A · Bᵀ over partitioned fragments (CuTe's gemm), optionally by a TiledMMA.

    ``cute.gemm %mma, %tCsA, %tCsB, %tCrC : !cute.tiled_mma<...>, !cute.tensor<...>,
        !cute.tensor<...>, !cute.tensor<...>``
    """

    name = "cute.gemm"
    num_results = 0

    def __init__(self, a: Value, b: Value, c: Value, mma: Value | None = None) -> None:
        super().__init__(operands=[*([mma] if mma is not None else []), a, b, c])

    def memory_effects(self) -> tuple[MemoryEffect, ...] | None:
        types = [v.type for v in self.operands[-3:]]
        if len(types) != 3 or not all(isinstance(t, TensorType) for t in types):
            return None
        a, b, c = types
        return (*reads(_space(a), _space(b), _space(c)), *writes(_space(c)))

    def verify_(self) -> None:
        ops = self.operands
        if len(ops) not in (3, 4):
            raise self.error("takes [tiled_mma,] A, B, C")
        first = len(ops) - 3
        a, b, c = (self.tensor_operand(first + i, n) for i, n in enumerate("ABC"))
        if c.space == "gmem":
            raise self.error("accumulates into registers or shared memory, not gmem")
        if first:
            mma = ops[0].type
            if not isinstance(mma, TiledMmaType):
                raise self.error(f"operand #0 must be a !cute.tiled_mma, got {mma}")
            self._verify_smem_operands(mma, a, b)
            for name, t, want in (("A", a, mma.a_type), ("B", b, mma.b_type), ("C", c, mma.c_type)):
                # tf32 operands are stored as f32.
                if t.element != want and not (str(want) == "tf32" and str(t.element) == "f32"):
                    raise self.error(f"{name} is {t.element} but the MMA takes {want}")

    def _verify_smem_operands(self, mma: TiledMmaType, a: TensorType, b: TensorType) -> None:
        """A wgmma SS atom reads A and B through smem descriptors: they must be smem."""
        if mma.atom == AUTO:
            return
        from cutec.atoms.mma import UnsupportedMmaError, lookup_mma_atom

        try:
            atom = lookup_mma_atom(mma.atom)
        except UnsupportedMmaError:
            return  # make_tiled_mma reports it
        for name, t, in_smem in (("A", a, atom.a_in_smem), ("B", b, atom.b_in_smem)):
            if in_smem and t.space != "smem":
                raise self.error(f"{mma.atom} reads {name} from shared memory, not {t.space}")


class ClearOp(CuteOp):
    """Set every element to zero: ``cute.clear %tCrC : !cute.tensor<f32, rmem, (8,8):(1,8)>``."""

    name = "cute.clear"
    num_operands = 1
    num_results = 0

    def __init__(self, t: Value) -> None:
        super().__init__(operands=[t])

    def memory_effects(self) -> tuple[MemoryEffect, ...] | None:
        t = self.operands[0].type
        return writes(_space(t)) if isinstance(t, TensorType) else None

    def verify_(self) -> None:
        self.tensor_operand(0, "a tensor")


class FillOp(CuteOp):
    """Set every element to a value: ``cute.fill %t, %v : !cute.tensor<...>, f32``."""

    name = "cute.fill"
    num_operands = 2
    num_results = 0

    def __init__(self, t: Value, value: Value) -> None:
        super().__init__(operands=[t, value])

    def memory_effects(self) -> tuple[MemoryEffect, ...] | None:
        t = self.operands[0].type
        return writes(_space(t)) if isinstance(t, TensorType) else None

    def verify_(self) -> None:
        t = self.tensor_operand(0, "a tensor")
        if self.operand_types[1] != t.element:
            raise self.error(f"fills a {t.element} tensor with {self.operand_types[1]}")


class AxpbyOp(CuteOp):
    """y = alpha · x + beta · y, element for element (CuTe's axpby).

    ``cute.axpby %alpha, %tCrC, %beta, %tCgC : f32, !cute.tensor<...>, f32, !cute.tensor<...>``
    """

    name = "cute.axpby"
    num_operands = 4
    num_results = 0

    def __init__(self, alpha: Value, x: Value, beta: Value, y: Value) -> None:
        super().__init__(operands=[alpha, x, beta, y])

    def memory_effects(self) -> tuple[MemoryEffect, ...] | None:
        x, y = self.operand_types[1], self.operand_types[3]
        if not (isinstance(x, TensorType) and isinstance(y, TensorType)):
            return None
        return (*reads(_space(x), _space(y)), *writes(_space(y)))

    def verify_(self) -> None:
        x = self.tensor_operand(1, "x")
        y = self.tensor_operand(3, "y")
        for i, what in ((0, "alpha"), (2, "beta")):
            if self.operand_types[i] != y.element:
                raise self.error(f"{what} is {self.operand_types[i]} but y holds {y.element}")
        if x.element != y.element:
            raise self.error(f"x holds {x.element} but y holds {y.element}")
        why = same_shape_mismatch(x, y)
        if why:
            raise self.error(why)


class _ElementOp(CuteOp):
    def _check_indices(self, t: TensorType, first: int) -> None:
        idx = self.index_operands_from(first)
        if len(idx) != 1:
            raise self.error("takes one index (the element's position in the tensor's domain)")


class LoadOp(_ElementOp):
    """Read one element at a linear index: ``%v = cute.load %t, %i : !cute.tensor<...> -> f32``."""

    name = "cute.load"
    num_operands = 2
    num_results = 1

    def __init__(self, t: Value, index: Value) -> None:
        assert isinstance(t.type, TensorType)
        super().__init__(operands=[t, index], result_types=[t.type.element])

    def memory_effects(self) -> tuple[MemoryEffect, ...] | None:
        t = self.operand_types[0]
        return reads(_space(t)) if isinstance(t, TensorType) else None

    def verify_(self) -> None:
        t = self.tensor_operand(0, "a tensor")
        self._check_indices(t, 1)
        if self.result_types != (t.element,):
            raise self.error(f"reads {t.element}, not {self.result_types[0]}")


class StoreOp(_ElementOp):
    """Write one element: ``cute.store %v, %t, %i : f32, !cute.tensor<...>``."""

    name = "cute.store"
    num_operands = 3
    num_results = 0

    def __init__(self, value: Value, t: Value, index: Value) -> None:
        super().__init__(operands=[value, t, index])

    def memory_effects(self) -> tuple[MemoryEffect, ...] | None:
        t = self.operand_types[1]
        return writes(_space(t)) if isinstance(t, TensorType) else None

    def verify_(self) -> None:
        t = self.tensor_operand(1, "a tensor")
        self._check_indices(t, 2)
        v = self.operand_types[0]
        if not isinstance(v, FloatType | IntegerType | IndexType) or v != t.element:
            raise self.error(f"stores {v} into a {t.element} tensor")
