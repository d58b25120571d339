"""The thread dialect: one thread's program after partitioning.

Loads and stores through `gpu.ptr`s, pointer arithmetic and the cp.async
family with its `gpu.token`s. Ids, barriers, pointers and tokens, which the
cute level uses too, are the gpu dialect's. The atom intrinsics (mma,
ldmatrix, wgmma, TMA, mbarrier) join it with the lowering.
"""

from __future__ import annotations

from collections.abc import Sequence

from cutec.ir.attributes import IntegerAttr
from cutec.ir.core import Operation, Value
from cutec.ir.dialect import Dialect
from cutec.ir.dialects.gpu import PointerType, TokenType
from cutec.ir.opdef import AnyType, FieldValues, attr_def, operand_def, result_def, var_operand_def
from cutec.ir.traits import (
    AddressSpace,
    AsyncProducer,
    AsyncWaiter,
    MemoryEffect,
    MemoryEffects,
    Pure,
    reads,
    writes,
)
from cutec.ir.types import IndexType, IntegerType, Type


def _pointee(ptr: Value) -> Type:
    """The element type of a pointer operand (its field constraint is checked first)."""
    t = ptr.type
    assert isinstance(t, PointerType)
    return t.element


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


class LoadOp(Operation):
    """Read one element: ``%v = thread.load %p : !gpu.ptr<f32, shared> -> f32``."""

    name = "thread.load"
    ptr = operand_def(PointerType)
    result = result_def(AnyType)
    assembly_format = "$ptr attr-dict `:` type($ptr) `->` type($result)"

    def __init__(self, ptr: Value) -> None:
        assert isinstance(ptr.type, PointerType)
        super().__init__(operands=[ptr], result_types=[ptr.type.element])

    def memory_effects(self) -> tuple[MemoryEffect, ...] | None:
        t = self.ptr.type
        return reads(t.space) if isinstance(t, PointerType) else None

    def verify_(self) -> None:
        element = _pointee(self.ptr)
        if self.result.type != element:
            raise self.error(f"loads {element}, not {self.result.type}")


class StoreOp(Operation):
    """Write one element: ``thread.store %v, %p : f32, !gpu.ptr<f32, global>``."""

    name = "thread.store"
    value = operand_def(AnyType)
    ptr = operand_def(PointerType)
    assembly_format = "$value `,` $ptr attr-dict `:` type($value) `,` type($ptr)"

    def __init__(self, value: Value, ptr: Value) -> None:
        super().__init__(operands=[value, ptr])

    def memory_effects(self) -> tuple[MemoryEffect, ...] | None:
        t = self.ptr.type
        return writes(t.space) if isinstance(t, PointerType) else None

    def verify_(self) -> None:
        element = _pointee(self.ptr)
        if self.value.type != element:
            raise self.error(f"stores {self.value.type} through a pointer to {element}")


class CpAsyncOp(Operation):
    """Start a global→shared copy of `bytes` bytes; yields its token.

    ``%t = thread.cp_async %dst, %src {bytes = 16 : i32} : !gpu.ptr<f32, shared>,
    !gpu.ptr<f32, global>``
    """

    name = "thread.cp_async"
    traits = (
        AsyncProducer(),
        MemoryEffects((*reads(AddressSpace.GLOBAL), *writes(AddressSpace.SHARED))),
    )
    dst = operand_def(PointerType)
    src = operand_def(PointerType)
    bytes = attr_def(IntegerAttr, check=(lambda a: a.value in (4, 8, 16), "must be 4, 8 or 16"))
    token = result_def(TokenType())
    assembly_format = "$dst `,` $src attr-dict `:` type($dst) `,` type($src)"

    def __init__(self, dst: Value, src: Value, nbytes: int) -> None:
        super().__init__(
            operands=[dst, src],
            result_types=[TokenType()],
            attributes={"bytes": IntegerAttr(nbytes, IntegerType(32))},
        )

    def verify_(self) -> None:
        dst, src = self.dst.type, self.src.type
        assert isinstance(dst, PointerType) and isinstance(src, PointerType)
        if dst.space is not AddressSpace.SHARED or src.space is not AddressSpace.GLOBAL:
            raise self.error("copies from a global pointer to a shared pointer")


class CpAsyncCommitOp(Operation):
    """Close the current group of cp.async copies: ``%g = thread.cp_async_commit %t0, %t1``."""

    name = "thread.cp_async_commit"
    # Orders this thread's earlier copies into a group: never moved or deleted.
    traits = (AsyncProducer(), MemoryEffects(writes(AddressSpace.SHARED)))
    tokens = var_operand_def(TokenType())
    group = result_def(TokenType())
    assembly_format = "$tokens attr-dict"

    def __init__(self, tokens: list[Value]) -> None:
        super().__init__(operands=tokens, result_types=[TokenType()])


class CpAsyncWaitOp(Operation):
    """Wait until at most `pending` committed groups are in flight (cp.async.wait_group).

    ``thread.cp_async_wait %g {pending = 0 : i32}``
    """

    name = "thread.cp_async_wait"
    traits = (
        AsyncWaiter(),
        MemoryEffects((*reads(AddressSpace.SHARED), *writes(AddressSpace.SHARED))),
    )
    tokens = var_operand_def(TokenType())
    pending = attr_def(IntegerAttr, check=(lambda a: a.value >= 0, "must be non-negative"))
    assembly_format = "$tokens attr-dict"

    def __init__(self, tokens: list[Value], pending: int = 0) -> None:
        super().__init__(
            operands=tokens, attributes={"pending": IntegerAttr(pending, IntegerType(32))}
        )


DIALECT = Dialect(
    "thread",
    ops=(PtrAddOp, LoadOp, StoreOp, CpAsyncOp, CpAsyncCommitOp, CpAsyncWaitOp),
)
