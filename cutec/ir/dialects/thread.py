"""The thread dialect: one thread's program after partitioning.

This module starts it with what the foundation needs to exercise the traits
end to end: typed pointers per address space, special registers, loads and
stores, the CTA barrier and the cp.async family with its tokens. The atom
intrinsics (mma, ldmatrix, wgmma, TMA, mbarrier) join it with the lowering.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from cutec.ir.attributes import IntegerAttr, StringAttr
from cutec.ir.core import Operation, Value
from cutec.ir.dialect import Dialect
from cutec.ir.traits import (
    AddressSpace,
    AsyncProducer,
    AsyncWaiter,
    Collective,
    MemoryEffect,
    MemoryEffects,
    Pure,
    Scope,
    reads,
    writes,
)
from cutec.ir.types import DialectType, IndexType, IntegerType, Type

if TYPE_CHECKING:
    from cutec.ir.parser import Parser, ResultName
    from cutec.ir.printer import Printer

_SPACES = {s.value: s for s in AddressSpace}


@dataclass(frozen=True)
class PointerType(DialectType):
    """A pointer to `element`s in one address space: ``!thread.ptr<f32, global>``."""

    name: ClassVar[str] = "thread.ptr"
    element: Type
    space: AddressSpace

    def print_body(self) -> str:
        return f"{self.element}, {self.space.value}"

    @classmethod
    def parse_body(cls, parser: Parser) -> PointerType:
        element = parser.parse_type()
        parser.parse_punct(",")
        loc = parser.tok.loc
        word = parser.parse_identifier("an address space")
        if word == "shared" and parser.parse_optional_punct("::"):
            word += "::" + parser.parse_identifier("'cluster'")
        if word not in _SPACES:
            raise parser.error(
                f"unknown address space '{word}'; expected one of {', '.join(_SPACES)}", loc
            )
        return cls(element, _SPACES[word])


@dataclass(frozen=True)
class TokenType(DialectType):
    """Completion of asynchronous work: ``!thread.token``."""

    name: ClassVar[str] = "thread.token"
    has_body: ClassVar[bool] = False

    @classmethod
    def parse_body(cls, parser: Parser) -> TokenType:
        return cls()


def _pointer(op: Operation, value: Value) -> PointerType:
    if not isinstance(value.type, PointerType):
        raise op.error(f"expects a pointer, got {value.type}")
    return value.type


class _SpecialRegisterOp(Operation):
    """``%t = thread.<reg> x : index`` — reads a PTX special register (pure per thread)."""

    traits = (Pure(),)
    num_operands = 0
    num_results = 1

    def __init__(self, dim: str) -> None:
        super().__init__(result_types=[IndexType()], attributes={"dim": StringAttr(dim)})

    def verify_(self) -> None:
        dim = self.attributes.get("dim")
        if not (isinstance(dim, StringAttr) and dim.value in ("x", "y", "z")):
            raise self.error("needs dim = x, y or z")

    def print_custom(self, p: Printer) -> None:
        dim = self.attributes["dim"]
        assert isinstance(dim, StringAttr)
        p.print(self.name, " ", dim.value, " : ", self.result.type)

    @classmethod
    def parse_custom(cls, parser: Parser, results: list[ResultName]) -> Operation:
        loc = parser.tok.loc
        dim = parser.parse_identifier("a dimension (x, y or z)")
        if dim not in ("x", "y", "z"):
            raise parser.error(f"unknown dimension '{dim}'; expected x, y or z", loc)
        t = parser.parse_colon_type()
        return cls.create(result_types=[t], attributes={"dim": StringAttr(dim)})


class ThreadIdOp(_SpecialRegisterOp):
    """The thread index in the CTA (``%tid.x``): ``%t = thread.thread_id x : index``."""

    name = "thread.thread_id"


class BlockIdOp(_SpecialRegisterOp):
    """The CTA index in the grid (``%ctaid.x``): ``%b = thread.block_id x : index``."""

    name = "thread.block_id"


class PtrAddOp(Operation):
    """Pointer plus an element offset: ``%q = thread.ptr_add %p, %i : !thread.ptr<f32, global>``."""

    name = "thread.ptr_add"
    traits = (Pure(),)
    num_operands = 2
    num_results = 1

    def __init__(self, ptr: Value, offset: Value) -> None:
        super().__init__(operands=[ptr, offset], result_types=[ptr.type])

    def verify_(self) -> None:
        _pointer(self, self.operands[0])
        if not isinstance(self.operand_types[1], IndexType | IntegerType):
            raise self.error("offset must be an integer or index")
        if self.result.type != self.operand_types[0]:
            raise self.error("result must have the pointer's type")

    def print_custom(self, p: Printer) -> None:
        p.print("thread.ptr_add ")
        p.print_operands(self.operands)
        p.print(" : ", self.operand_types[0], ", ", self.operand_types[1])

    @classmethod
    def parse_custom(cls, parser: Parser, results: list[ResultName]) -> Operation:
        ptr = parser.parse_operand()
        parser.parse_punct(",")
        offset = parser.parse_operand()
        loc = parser.tok.loc
        parser.parse_punct(":")
        types = parser.parse_type_list()
        parser.check_types([ptr, offset], types, loc)
        return cls.create(operands=[ptr, offset], result_types=[ptr.type])


class LoadOp(Operation):
    """Read one element: ``%v = thread.load %p : !thread.ptr<f32, shared> -> f32``."""

    name = "thread.load"
    num_operands = 1
    num_results = 1

    def __init__(self, ptr: Value) -> None:
        assert isinstance(ptr.type, PointerType)
        super().__init__(operands=[ptr], result_types=[ptr.type.element])

    def memory_effects(self) -> tuple[MemoryEffect, ...] | None:
        t = self.operand_types[0]
        return reads(t.space) if isinstance(t, PointerType) else None

    def verify_(self) -> None:
        ptr = _pointer(self, self.operands[0])
        if self.result.type != ptr.element:
            raise self.error(f"loads {ptr.element}, not {self.result.type}")

    def print_custom(self, p: Printer) -> None:
        p.print("thread.load ")
        p.print_operand(self.operands[0])
        p.print(" : ", self.operand_types[0], " -> ", self.result.type)

    @classmethod
    def parse_custom(cls, parser: Parser, results: list[ResultName]) -> Operation:
        ptr = parser.parse_operand()
        loc = parser.tok.loc
        t = parser.parse_colon_type()
        if t != ptr.type:
            raise parser.error(f"operand has type {ptr.type}, but {t} is written", loc)
        parser.parse_punct("->")
        return cls.create(operands=[ptr], result_types=[parser.parse_type()])


class StoreOp(Operation):
    """Write one element: ``thread.store %v, %p : f32, !thread.ptr<f32, global>``."""

    name = "thread.store"
    num_operands = 2
    num_results = 0

    def __init__(self, value: Value, ptr: Value) -> None:
        super().__init__(operands=[value, ptr])

    def memory_effects(self) -> tuple[MemoryEffect, ...] | None:
        t = self.operand_types[1]
        return writes(t.space) if isinstance(t, PointerType) else None

    def verify_(self) -> None:
        ptr = _pointer(self, self.operands[1])
        if self.operand_types[0] != ptr.element:
            raise self.error(f"stores {self.operand_types[0]} through a pointer to {ptr.element}")

    def print_custom(self, p: Printer) -> None:
        p.print("thread.store ")
        p.print_operands(self.operands)
        p.print(" : ")
        p.print_types(self.operand_types)

    @classmethod
    def parse_custom(cls, parser: Parser, results: list[ResultName]) -> Operation:
        values = parser.parse_comma_list(parser.parse_operand)
        loc = parser.tok.loc
        parser.parse_punct(":")
        parser.check_types(values, parser.parse_type_list(), loc)
        return cls.create(operands=values)


class _NoOperandForm(Operation):
    """Custom form: the op name, then its attribute dictionary."""

    def print_custom(self, p: Printer) -> None:
        p.print(self.name)
        p.print_attr_dict(self.attributes)

    @classmethod
    def parse_custom(cls, parser: Parser, results: list[ResultName]) -> Operation:
        return cls.create(attributes=parser.parse_optional_attr_dict())


# A CTA barrier orders every shared and global access of the CTA's threads.
_FENCE_EFFECTS = (
    *reads(AddressSpace.SHARED, AddressSpace.GLOBAL),
    *writes(AddressSpace.SHARED, AddressSpace.GLOBAL),
)


class BarrierOp(_NoOperandForm):
    """All threads of the CTA meet here (``bar.sync 0``): ``thread.barrier``."""

    name = "thread.barrier"
    traits = (Collective(Scope.CTA), MemoryEffects(_FENCE_EFFECTS))
    num_operands = 0
    num_results = 0

    def __init__(self) -> None:
        super().__init__()


class CpAsyncOp(Operation):
    """Start a global→shared copy of `bytes` bytes; yields its token.

    ``%t = thread.cp_async %dst, %src {bytes = 16} : !thread.ptr<f32, shared>,
    !thread.ptr<f32, global>``
    """

    name = "thread.cp_async"
    traits = (
        AsyncProducer(),
        MemoryEffects((*reads(AddressSpace.GLOBAL), *writes(AddressSpace.SHARED))),
    )
    num_operands = 2
    num_results = 1

    def __init__(self, dst: Value, src: Value, nbytes: int) -> None:
        super().__init__(
            operands=[dst, src],
            result_types=[TokenType()],
            attributes={"bytes": IntegerAttr(nbytes, IntegerType(32))},
        )

    def verify_(self) -> None:
        dst, src = (_pointer(self, v) for v in self.operands)
        if dst.space is not AddressSpace.SHARED or src.space is not AddressSpace.GLOBAL:
            raise self.error("copies from a global pointer to a shared pointer")
        nbytes = self.attributes.get("bytes")
        if not (isinstance(nbytes, IntegerAttr) and nbytes.value in (4, 8, 16)):
            raise self.error("'bytes' must be 4, 8 or 16")
        if self.result.type != TokenType():
            raise self.error("result must be a !thread.token")

    def print_custom(self, p: Printer) -> None:
        p.print("thread.cp_async ")
        p.print_operands(self.operands)
        p.print_attr_dict(self.attributes)
        p.print(" : ")
        p.print_types(self.operand_types)

    @classmethod
    def parse_custom(cls, parser: Parser, results: list[ResultName]) -> Operation:
        values = parser.parse_comma_list(parser.parse_operand)
        attrs = parser.parse_optional_attr_dict()
        loc = parser.tok.loc
        parser.parse_punct(":")
        parser.check_types(values, parser.parse_type_list(), loc)
        return cls.create(operands=values, result_types=[TokenType()], attributes=attrs)


class CpAsyncCommitOp(Operation):
    """Close the current group of cp.async copies: ``%g = thread.cp_async_commit %t0, %t1``."""

    name = "thread.cp_async_commit"
    # Orders this thread's earlier copies into a group: never moved or deleted.
    traits = (AsyncProducer(), MemoryEffects(writes(AddressSpace.SHARED)))
    num_results = 1

    def __init__(self, tokens: list[Value]) -> None:
        super().__init__(operands=tokens, result_types=[TokenType()])

    def verify_(self) -> None:
        if any(t != TokenType() for t in self.operand_types):
            raise self.error("operands must be !thread.token")

    def print_custom(self, p: Printer) -> None:
        p.print("thread.cp_async_commit")
        if self.operands:
            p.print(" ")
            p.print_operands(self.operands)

    @classmethod
    def parse_custom(cls, parser: Parser, results: list[ResultName]) -> Operation:
        return cls.create(operands=parser.parse_operand_list(), result_types=[TokenType()])


class CpAsyncWaitOp(Operation):
    """Wait until at most `pending` committed groups are in flight (cp.async.wait_group).

    ``thread.cp_async_wait %g {pending = 0}``
    """

    name = "thread.cp_async_wait"
    traits = (
        AsyncWaiter(),
        MemoryEffects((*reads(AddressSpace.SHARED), *writes(AddressSpace.SHARED))),
    )
    num_results = 0

    def __init__(self, tokens: list[Value], pending: int = 0) -> None:
        super().__init__(
            operands=tokens, attributes={"pending": IntegerAttr(pending, IntegerType(32))}
        )

    def verify_(self) -> None:
        pending = self.attributes.get("pending")
        if not (isinstance(pending, IntegerAttr) and pending.value >= 0):
            raise self.error("needs a non-negative 'pending' count")
        if any(t != TokenType() for t in self.operand_types):
            raise self.error("operands must be !thread.token")

    def print_custom(self, p: Printer) -> None:
        p.print("thread.cp_async_wait")
        if self.operands:
            p.print(" ")
            p.print_operands(self.operands)
        p.print_attr_dict(self.attributes)

    @classmethod
    def parse_custom(cls, parser: Parser, results: list[ResultName]) -> Operation:
        values = parser.parse_operand_list()
        return cls.create(operands=values, attributes=parser.parse_optional_attr_dict())


DIALECT = Dialect(
    "thread",
    ops=(
        ThreadIdOp,
        BlockIdOp,
        PtrAddOp,
        LoadOp,
        StoreOp,
        BarrierOp,
        CpAsyncOp,
        CpAsyncCommitOp,
        CpAsyncWaitOp,
    ),
    types=(PointerType, TokenType),
)
