"""The thread dialect: one thread's program after partitioning.

The last IR before PTX (and the CPU backend's input). Ids, barriers, pointers
and tokens, which the cute level uses too, are the gpu dialect's. Here:

* pointers: `ptr_add` (in elements; bytes through a `ptr_cast` to i8),
  `ptr_cast` (another element type), `cvta` (generic <-> a state space),
  `mapa` (shared -> another CTA's in shared::cluster; thread_cluster.py);
  shared memory: `alloc_shared` (a static array), `dynamic_shared`; a
  thread's own array: `alloc_local` (register fragments before promotion);
* loads and stores, scalar or PTX's ``.v2``/``.v4`` vectors, plain or under a
  predicate (`load_if` yields a default where the predicate is false);
* vectors are the builtin ``vector<4xf32>`` type, one value (a brace list of
  registers in PTX): a vector load's element is read with `extract`, a
  vector store's value built with `from_elements`. A vector type keeps one op
  per access and one result, as MLIR's vector dialect and LLVM's NVPTX do;
* the cp.async family (thread_async.py), the mbarrier family (thread_mbarrier.py),
  the atomics of global memory (thread_atomic.py) and the one atom op (thread_atom.py).

Access rules the verifier enforces: an access moves its element or a vector
of 2 or 4 elements of at most 128 bits, through a pointer of that element
type in the global, shared, shared::cluster, local, param or generic space.
Every access must be aligned to its size (the reference interpreter checks).
Effects are per address space of the pointer; a generic pointer may touch
any memory, which `AddressSpace.aliases` says.
"""

from __future__ import annotations

from collections.abc import Sequence

from cutec.ir.attributes import Attribute, IntegerAttr, UnitAttr
from cutec.ir.core import Operation, OpResult, Value
from cutec.ir.dialect import Dialect
from cutec.ir.dialects.arith_fold import int_value
from cutec.ir.dialects.arith_int import AddIOp
from cutec.ir.dialects.arith_patterns import int_constant, make_constant
from cutec.ir.dialects.gpu import PointerType
from cutec.ir.dialects.thread_async import CpAsyncCommitOp, CpAsyncOp, CpAsyncWaitOp
from cutec.ir.dialects.thread_atom import (
    AtomOp,
    AtomSignature,
    atom_family,
    atom_signature,
    lookup_atom,
)
from cutec.ir.dialects.thread_atomic import AtomicLoadOp, AtomicRmwOp, AtomicStoreOp
from cutec.ir.dialects.thread_barrier import (
    ClusterArriveOp,
    ClusterWaitOp,
    ElectOneOp,
    FenceMbarrierInitOp,
    NamedBarrierArriveOp,
    NamedBarrierSyncOp,
)
from cutec.ir.dialects.thread_cluster import MapaOp
from cutec.ir.dialects.thread_mbarrier import (
    CpAsyncMbarrierArriveOp,
    MbarrierArriveExpectTxOp,
    MbarrierArriveOp,
    MbarrierExpectTxOp,
    MbarrierInitOp,
    MbarrierWaitOp,
)
from cutec.ir.dialects.thread_regs import SetMaxNRegOp
from cutec.ir.dialects.thread_tma import BulkCommitOp, BulkWaitOp, TensorMapOp
from cutec.ir.dialects.thread_wgmma import (
    FenceProxyAsyncOp,
    GmmaDescOp,
    WgmmaCommitOp,
    WgmmaFenceOp,
    WgmmaWaitOp,
    ZeroAccumulatorScale,
)
from cutec.ir.opdef import (
    AnyType,
    FieldValues,
    attr_def,
    operand_def,
    opt_attr_def,
    result_def,
    var_operand_def,
)
from cutec.ir.rewrite import PatternRewriter, RewritePattern
from cutec.ir.traits import (
    AddressSpace,
    EffectKind,
    MemoryEffect,
    Pure,
    reads,
    writes,
)
from cutec.ir.types import IndexType, IntegerType, Type, VectorType, bit_width

__all__ = [
    "AllocLocalOp",
    "AllocSharedOp",
    "AtomOp",
    "AtomSignature",
    "AtomicLoadOp",
    "AtomicRmwOp",
    "AtomicStoreOp",
    "BulkCommitOp",
    "BulkWaitOp",
    "ClusterArriveOp",
    "ClusterWaitOp",
    "CpAsyncCommitOp",
    "CpAsyncMbarrierArriveOp",
    "CpAsyncOp",
    "CpAsyncWaitOp",
    "CvtaOp",
    "DynamicSharedOp",
    "ElectOneOp",
    "ExtractOp",
    "FenceMbarrierInitOp",
    "FenceProxyAsyncOp",
    "FromElementsOp",
    "GmmaDescOp",
    "LoadIfOp",
    "LoadOp",
    "MapaOp",
    "MbarrierArriveExpectTxOp",
    "MbarrierArriveOp",
    "MbarrierExpectTxOp",
    "MbarrierInitOp",
    "MbarrierWaitOp",
    "NamedBarrierArriveOp",
    "NamedBarrierSyncOp",
    "PtrAddOp",
    "PtrCastOp",
    "SetMaxNRegOp",
    "StoreIfOp",
    "StoreOp",
    "TensorMapOp",
    "WgmmaCommitOp",
    "WgmmaFenceOp",
    "WgmmaWaitOp",
    "atom_family",
    "atom_signature",
    "lookup_atom",
]

# Spaces a load or store may go through (registers are SSA values, not memory).
_MEMORY_SPACES = frozenset(AddressSpace) - {AddressSpace.REGISTER}
# The state spaces cvta converts a generic address to or from (PTX ISA, cvta).
_CVTA_SPACES = frozenset(
    {
        AddressSpace.GLOBAL,
        AddressSpace.SHARED,
        AddressSpace.SHARED_CLUSTER,
        AddressSpace.LOCAL,
        AddressSpace.PARAM,
    }
)
VECTOR_WIDTHS = (2, 4)  # PTX's .v2 / .v4
PACKED_WIDTH = 8  # 16-bit elements in pairs: .v4.b32 (16 bytes), which the PTX emitter packs
MAX_ACCESS_BITS = 128


class PtrAddOp(Operation):
    """Pointer plus an element offset.

    ``%q = thread.ptr_add %p, %i : !gpu.ptr<f32, global>, index``
    """

    name = "thread.ptr_add"
    traits = (Pure(),)
    ptr = operand_def(PointerType)
    offset = operand_def((IndexType, IntegerType))
    result = result_def(PointerType)
    assembly_format = "$ptr `,` $offset attr-dict `:` type($ptr) `,` type($offset)"

    def __init__(self, ptr: Value, offset: Value) -> None:
        super().__init__(operands=[ptr, offset], result_types=[ptr.type])

    @classmethod
    def infer_result_types(cls, fields: FieldValues) -> Sequence[Type]:
        return [fields.ptr.type]

    def verify_(self) -> None:
        if self.result.type != self.ptr.type:
            raise self.error("result must have the pointer's type")

    def fold(self, constants: Sequence[Attribute | None]) -> list[Value] | None:
        """``ptr_add(p, 0) → p``."""
        offset = constants[1]
        return [self.ptr] if isinstance(offset, IntegerAttr) and offset.value == 0 else None


class ConstantOffsetLast(RewritePattern):
    """A constant part of a pointer's offset is added last:

        ptr_add(p, x + c)           → ptr_add(ptr_add(p, x), c)
        ptr_add(ptr_add(p, c), x)   → ptr_add(ptr_add(p, x), c)
        ptr_add(ptr_add(p, c1), c2) → ptr_add(p, c1 + c2)      (c1, c2 of one type)

    So the accesses of one thread that differ by a constant (the rows of a copy in one
    swizzled stage) share one pointer, and the PTX adds the constant after it, which
    ptxas folds into the instruction's address (``[R+0x800]``).

    Offsets narrower than 64 bits wrap; pointer arithmetic does not. So the first
    rewrite takes only a constant c >= 0 there (x = (x + c) - c then lies between the
    offset, which fits, and c's negative), and constants merge only where their sum fits.
    """

    op_type = PtrAddOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        assert isinstance(op, PtrAddOp)
        offset, ptr = op.offset, op.ptr
        c = int_constant(offset)
        inner = ptr.owner if isinstance(ptr, OpResult) else None
        if isinstance(inner, PtrAddOp):
            c1 = int_constant(inner.offset)
            if (
                c1 is not None
                and c is not None
                and inner.offset.type == offset.type
                and _fits(c1 + c, offset.type)
            ):
                total = make_constant(rewriter, op, c1 + c, offset)
                rewriter.replace_op(op, [_ptr_add(rewriter, op, inner.ptr, total)])
                return True
            if c1 is not None and c is None:
                moved = _ptr_add(rewriter, op, inner.ptr, offset)
                rewriter.replace_op(op, [_ptr_add(rewriter, op, moved, inner.offset)])
                return True
        add = offset.owner if isinstance(offset, OpResult) else None
        k_value = int_constant(add.operands[1]) if isinstance(add, AddIOp) else None
        wide = isinstance(offset.type, IndexType) or bit_width(offset.type) >= 64
        if k_value is not None and (k_value >= 0 or wide):
            x, k = add.operands  # type: ignore[union-attr]
            rewriter.replace_op(op, [_ptr_add(rewriter, op, _ptr_add(rewriter, op, ptr, x), k)])
            return True
        return False


def _fits(value: int, t: Type) -> bool:
    return isinstance(t, IndexType) or int_value(value, t) == value


def _ptr_add(rewriter: PatternRewriter, before: Operation, ptr: Value, offset: Value) -> Value:
    return rewriter.insert_before(before, PtrAddOp(ptr, offset)).results[0]


PtrAddOp.canonicalization_patterns = (ConstantOffsetLast(),)
AtomOp.canonicalization_patterns = (ZeroAccumulatorScale(),)


def access_problem(ptr: Value, value_type: Type) -> str | None:
    """Why a load or store of `value_type` through `ptr` is not legal, or None."""
    t = ptr.type
    assert isinstance(t, PointerType)
    if t.space not in _MEMORY_SPACES:
        return f"cannot access memory through a {t.space.value} pointer"
    if isinstance(value_type, VectorType):
        n = value_type.shape[0] if len(value_type.shape) == 1 else 0
        packed = n == PACKED_WIDTH and bit_width(value_type.element) == 16
        if n not in VECTOR_WIDTHS and not packed:
            return (
                f"vector accesses are .v2 or .v4 (or 8 16-bit elements in pairs), not {value_type}"
            )
        if value_type.element != t.element:
            return f"accesses {value_type} through a pointer to {t.element}"
        if bit_width(t.element) * value_type.shape[0] > MAX_ACCESS_BITS:
            return f"{value_type} is wider than {MAX_ACCESS_BITS} bits"
        return None
    if value_type != t.element:
        return f"accesses {value_type} through a pointer to {t.element}"
    return None


def access_bytes(value_type: Type) -> int:
    """Bytes one access of `value_type` moves (its required alignment too)."""
    if isinstance(value_type, VectorType):
        return access_bytes(value_type.element) * value_type.shape[0]
    return max(bit_width(value_type) // 8, 1)


def _spaces(ptr: Value) -> tuple[AddressSpace, ...]:
    t = ptr.type
    return (t.space,) if isinstance(t, PointerType) else ()


class PtrCastOp(Operation):
    """The same address as a pointer to another element type (bytes: cast to i8).

    ``%q = thread.ptr_cast %p : !gpu.ptr<f16, global> to !gpu.ptr<i32, global>``
    """

    name = "thread.ptr_cast"
    traits = (Pure(),)
    ptr = operand_def(PointerType)
    result = result_def(PointerType)
    assembly_format = "$ptr attr-dict `:` type($ptr) `to` type($result)"

    def __init__(self, ptr: Value, element: Type) -> None:
        t = ptr.type
        assert isinstance(t, PointerType)
        super().__init__(operands=[ptr], result_types=[PointerType(element, t.space)])

    def verify_(self) -> None:
        src, dst = self.ptr.type, self.result.type
        assert isinstance(src, PointerType) and isinstance(dst, PointerType)
        if src.space is not dst.space:
            raise self.error(f"keeps the address space ({src.space.value}); cvta changes it")


class CvtaOp(Operation):
    """Convert an address between the generic space and a state space (``cvta``).

    ``%g = thread.cvta %s : !gpu.ptr<f32, shared> to !gpu.ptr<f32, generic>``
    (``cvta.shared``) and back (``cvta.to.shared``); exactly one side is generic.
    """

    name = "thread.cvta"
    traits = (Pure(),)
    ptr = operand_def(PointerType)
    result = result_def(PointerType)
    assembly_format = "$ptr attr-dict `:` type($ptr) `to` type($result)"

    def __init__(self, ptr: Value, space: AddressSpace) -> None:
        t = ptr.type
        assert isinstance(t, PointerType)
        super().__init__(operands=[ptr], result_types=[PointerType(t.element, space)])

    def verify_(self) -> None:
        src, dst = self.ptr.type, self.result.type
        assert isinstance(src, PointerType) and isinstance(dst, PointerType)
        if src.element != dst.element:
            raise self.error(f"keeps the element type ({src.element}); ptr_cast changes it")
        spaces = {src.space, dst.space}
        other = spaces - {AddressSpace.GENERIC}
        if AddressSpace.GENERIC not in spaces or len(other) != 1:
            raise self.error(
                f"converts between generic and a state space, not {src.space.value} to "
                f"{dst.space.value}"
            )
        if not other <= _CVTA_SPACES:
            raise self.error(f"cvta has no {next(iter(other)).value} form")


class _AllocOp(Operation):
    """A static array of `bytes` bytes in the op's state space; yields its base address."""

    SPACE: AddressSpace
    bytes = attr_def(IntegerAttr, check=(lambda a: a.value > 0, "must be positive"))
    align = attr_def(
        IntegerAttr,
        check=(lambda a: a.value > 0 and a.value & (a.value - 1) == 0, "must be a power of 2"),
    )
    result = result_def(PointerType)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, element: Type, nbytes: int, align: int = 16) -> None:
        super().__init__(
            result_types=[PointerType(element, self.SPACE)],
            attributes={
                "bytes": IntegerAttr(nbytes, IntegerType(64)),
                "align": IntegerAttr(align, IntegerType(64)),
            },
        )

    def memory_effects(self) -> tuple[MemoryEffect, ...]:
        return (MemoryEffect(EffectKind.ALLOC, self.SPACE),)

    def verify_(self) -> None:
        t = self.result.type
        assert isinstance(t, PointerType)
        if t.space is not self.SPACE:
            raise self.error(f"allocates {self.SPACE.value} memory, not {t.space.value}")


class AllocSharedOp(_AllocOp):
    """A static shared-memory array of the CTA.

    ``%s = thread.alloc_shared {bytes = 4096 : i64, align = 16 : i64} : !gpu.ptr<f32, shared>``

    Each op is its own array (the emitter declares one ``.shared`` array per op).
    """

    name = "thread.alloc_shared"
    SPACE = AddressSpace.SHARED


class AllocLocalOp(_AllocOp):
    """A thread's private array: a register fragment before `promote-registers`.

    ``%r = thread.alloc_local {bytes = 64 : i64, align = 16 : i64} : !gpu.ptr<f32, local>``

    lower-to-thread gives each rmem tensor one; promote-registers turns every
    array it can (constant offsets only) into SSA values. One left over is a
    ``.local`` array in PTX: a stack frame, which ptxas -v reports.
    """

    name = "thread.alloc_local"
    SPACE = AddressSpace.LOCAL


class DynamicSharedOp(Operation):
    """The base of the CTA's dynamic shared memory (the kernel's ``dynamic_smem`` bytes).

    ``%s = thread.dynamic_shared : !gpu.ptr<f32, shared>``
    """

    name = "thread.dynamic_shared"
    traits = (Pure(),)
    result = result_def(PointerType)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, element: Type) -> None:
        super().__init__(result_types=[PointerType(element, AddressSpace.SHARED)])

    def verify_(self) -> None:
        t = self.result.type
        assert isinstance(t, PointerType)
        if t.space is not AddressSpace.SHARED:
            raise self.error(f"is shared memory, not {t.space.value}")


class LoadOp(Operation):
    """Read one element or a ``.v2``/``.v4`` vector.

    ``%v = thread.load %p : !gpu.ptr<f32, shared> -> f32``,
    ``%q = thread.load %p : !gpu.ptr<f32, global> -> vector<4xf32>``

    ``{ordered}`` (shared memory only; set by order-shared-loads) makes it a relaxed
    load at CTA scope in PTX (``ld.relaxed.cta.shared``): the same value.
    """

    name = "thread.load"
    ptr = operand_def(PointerType)
    result = result_def(AnyType)
    # order-shared-loads: a shared load the PTX keeps in place (ld.relaxed.cta.shared)
    ordered = opt_attr_def(UnitAttr)
    assembly_format = "$ptr attr-dict `:` type($ptr) `->` type($result)"

    def __init__(self, ptr: Value, width: int = 1) -> None:
        assert isinstance(ptr.type, PointerType)
        element = ptr.type.element
        t = element if width == 1 else VectorType((width,), element)
        super().__init__(operands=[ptr], result_types=[t])

    def memory_effects(self) -> tuple[MemoryEffect, ...]:
        return reads(*_spaces(self.ptr))

    def verify_(self) -> None:
        problem = access_problem(self.ptr, self.result.type)
        if problem is not None:
            raise self.error(problem)
        t = self.ptr.type
        if self.ordered is not None and (
            not isinstance(t, PointerType) or t.space is not AddressSpace.SHARED
        ):
            raise self.error("{ordered} is for shared-memory loads")


class StoreOp(Operation):
    """Write one element or a vector: ``thread.store %v, %p : f32, !gpu.ptr<f32, global>``."""

    name = "thread.store"
    value = operand_def(AnyType)
    ptr = operand_def(PointerType)
    assembly_format = "$value `,` $ptr attr-dict `:` type($value) `,` type($ptr)"

    def __init__(self, value: Value, ptr: Value) -> None:
        super().__init__(operands=[value, ptr])

    def memory_effects(self) -> tuple[MemoryEffect, ...]:
        return writes(*_spaces(self.ptr))

    def verify_(self) -> None:
        problem = access_problem(self.ptr, self.value.type)
        if problem is not None:
            raise self.error(problem)


class LoadIfOp(Operation):
    """A load under a predicate: where `pred` is false nothing is read and the
    result is `default` (PTX: ``mov`` of the default, then ``@p ld``).

    ``%v = thread.load_if %pred, %p, %zero : !gpu.ptr<f32, global> -> f32``
    """

    name = "thread.load_if"
    pred = operand_def(IntegerType(1))
    ptr = operand_def(PointerType)
    default = operand_def(AnyType)
    result = result_def(AnyType)
    assembly_format = "$pred `,` $ptr `,` $default attr-dict `:` type($ptr) `->` type($result)"

    def __init__(self, pred: Value, ptr: Value, default: Value) -> None:
        super().__init__(operands=[pred, ptr, default], result_types=[default.type])

    def memory_effects(self) -> tuple[MemoryEffect, ...]:
        return reads(*_spaces(self.ptr))

    def verify_(self) -> None:
        problem = access_problem(self.ptr, self.result.type)
        if problem is not None:
            raise self.error(problem)
        if self.default.type != self.result.type:
            raise self.error(f"default {self.default.type} is not the result's {self.result.type}")


class StoreIfOp(Operation):
    """A store under a predicate (``@p st``): nothing is written where `pred` is false.

    ``thread.store_if %pred, %v, %p : f32, !gpu.ptr<f32, global>``
    """

    name = "thread.store_if"
    pred = operand_def(IntegerType(1))
    value = operand_def(AnyType)
    ptr = operand_def(PointerType)
    assembly_format = "$pred `,` $value `,` $ptr attr-dict `:` type($value) `,` type($ptr)"

    def __init__(self, pred: Value, value: Value, ptr: Value) -> None:
        super().__init__(operands=[pred, value, ptr])

    def memory_effects(self) -> tuple[MemoryEffect, ...]:
        return writes(*_spaces(self.ptr))

    def verify_(self) -> None:
        problem = access_problem(self.ptr, self.value.type)
        if problem is not None:
            raise self.error(problem)


def _is_small_vector(t: Type) -> bool:
    return isinstance(t, VectorType) and len(t.shape) == 1


class ExtractOp(Operation):
    """Element `pos` of a vector (a register of its brace list).

    ``%x = thread.extract %v {pos = 3 : i64} : vector<4xf32>``
    """

    name = "thread.extract"
    traits = (Pure(),)
    vector = operand_def(VectorType)
    pos = attr_def(IntegerAttr, check=(lambda a: a.value >= 0, "must be non-negative"))
    result = result_def(AnyType)
    assembly_format = "$vector attr-dict `:` type($vector)"

    def __init__(self, vector: Value, pos: int) -> None:
        t = vector.type
        assert isinstance(t, VectorType)
        super().__init__(
            operands=[vector],
            result_types=[t.element],
            attributes={"pos": IntegerAttr(pos, IntegerType(64))},
        )

    @classmethod
    def infer_result_types(cls, fields: FieldValues) -> Sequence[Type]:
        t = fields.vector.type
        return [t.element if isinstance(t, VectorType) else t]

    def fold(self, constants: Sequence[Attribute | None]) -> list[Value] | None:
        """``extract(from_elements(x0, .., xn), i) → xi``."""
        owner = self.vector.op if isinstance(self.vector, OpResult) else None
        if isinstance(owner, FromElementsOp):
            return [owner.elements[self.pos.value]]
        return None

    def verify_(self) -> None:
        t = self.vector.type
        if not _is_small_vector(t):
            raise self.error(f"extracts from a 1-D vector, not {t}")
        assert isinstance(t, VectorType)
        if self.pos.value >= t.shape[0]:
            raise self.error(f"position {self.pos.value} is outside {t}")
        if self.result.type != t.element:
            raise self.error(f"yields {t.element}, not {self.result.type}")


class FromElementsOp(Operation):
    """A vector of its operands, first operand at position 0.

    ``%v = thread.from_elements %a, %b, %c, %d : vector<4xf32>``
    """

    name = "thread.from_elements"
    traits = (Pure(),)
    elements = var_operand_def()
    result = result_def(VectorType)
    assembly_format = "$elements attr-dict `:` type($result)"

    def __init__(self, elements: Sequence[Value]) -> None:
        t = VectorType((len(elements),), elements[0].type)
        super().__init__(operands=list(elements), result_types=[t])

    def fold(self, constants: Sequence[Attribute | None]) -> list[Value] | None:
        """``from_elements(extract(v, 0), .., extract(v, n-1)) → v``: a register unpacked
        and packed again (an ldmatrix result feeding mma.sync) is the register."""
        source = None
        for i, e in enumerate(self.elements):
            owner = e.op if isinstance(e, OpResult) else None
            if not (isinstance(owner, ExtractOp) and owner.pos.value == i):
                return None
            if source is None:
                source = owner.vector
            elif owner.vector is not source:
                return None
        if source is None or source.type != self.result.type:
            return None
        return [source]

    def verify_(self) -> None:
        t = self.result.type
        if not _is_small_vector(t):
            raise self.error(f"builds a 1-D vector, not {t}")
        assert isinstance(t, VectorType)
        if len(self.elements) != t.shape[0]:
            raise self.error(f"{t} takes {t.shape[0]} elements, got {len(self.elements)}")
        for i, v in enumerate(self.elements):
            if v.type != t.element:
                raise self.error(f"element #{i} is {v.type}, not {t.element}")


DIALECT = Dialect(
    "thread",
    ops=(
        PtrAddOp,
        PtrCastOp,
        CvtaOp,
        AllocSharedOp,
        AllocLocalOp,
        DynamicSharedOp,
        LoadOp,
        StoreOp,
        LoadIfOp,
        StoreIfOp,
        ExtractOp,
        FromElementsOp,
        CpAsyncOp,
        CpAsyncCommitOp,
        CpAsyncWaitOp,
        AtomOp,
        MbarrierInitOp,
        MbarrierArriveOp,
        MbarrierExpectTxOp,
        MbarrierArriveExpectTxOp,
        MbarrierWaitOp,
        CpAsyncMbarrierArriveOp,
        WgmmaFenceOp,
        WgmmaCommitOp,
        WgmmaWaitOp,
        FenceProxyAsyncOp,
        GmmaDescOp,
        TensorMapOp,
        BulkCommitOp,
        BulkWaitOp,
        AtomicRmwOp,
        AtomicLoadOp,
        AtomicStoreOp,
        NamedBarrierSyncOp,
        NamedBarrierArriveOp,
        ClusterArriveOp,
        ClusterWaitOp,
        FenceMbarrierInitOp,
        ElectOneOp,
        MapaOp,
        SetMaxNRegOp,
    ),
)
