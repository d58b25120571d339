"""The thread dialect's cp.async family: copies, commit groups and waits.

``cp.async`` copies global → shared without passing through registers; a
thread's copies are grouped by ``cp.async.commit_group`` and waited for by
``cp.async.wait_group N`` (at most N of this thread's groups still in flight).
Tokens make the order visible in the IR (MLIR's nvgpu does the same): each
copy yields a `!gpu.token`, a commit takes the copies' tokens and yields the
group's, a wait takes group tokens. The tokens carry no run-time value; the
hardware's order is per thread and in program order.
"""

from __future__ import annotations

from cutec.ir.attributes import IntegerAttr, StringAttr
from cutec.ir.core import Operation, Value
from cutec.ir.dialects.gpu import PointerType, TokenType
from cutec.ir.opdef import (
    attr_def,
    operand_def,
    opt_attr_def,
    opt_operand_def,
    result_def,
    var_operand_def,
)
from cutec.ir.traits import AddressSpace, AsyncProducer, AsyncWaiter, MemoryEffects, reads, writes
from cutec.ir.types import IntegerType

# cache operator -> the copy sizes in bytes PTX allows it (PTX ISA, cp.async: .cg takes 16 only).
CP_ASYNC_BYTES: dict[str, tuple[int, ...]] = {"ca": (4, 8, 16), "cg": (16,)}


class CpAsyncOp(Operation):
    """Start a global→shared copy of `bytes` bytes; yields its token.

    ``%t = thread.cp_async cg %dst, %src, %n {bytes = 16 : i32} : !gpu.ptr<f32, shared>,
    !gpu.ptr<f32, global>``

    The cache operator is ``ca`` (cache at all levels; 4, 8 or 16 bytes; the
    default when none is written) or ``cg`` (L2 only; 16 bytes). The optional
    i32 operand is PTX's run-time ``src-size``: only that many bytes (0 ..
    `bytes`) are read from `src`, the rest of the `bytes` at `dst` are filled
    with zeros (CuTe's ``_ZFILL`` atoms: src-size 0 for a false predicate).
    Both addresses must be aligned to `bytes`.
    """

    name = "thread.cp_async"
    traits = (
        AsyncProducer(),
        MemoryEffects((*reads(AddressSpace.GLOBAL), *writes(AddressSpace.SHARED))),
    )
    dst = operand_def(PointerType)
    src = operand_def(PointerType)
    src_size = opt_operand_def(IntegerType(32))
    cache = opt_attr_def(StringAttr, one_of=tuple(CP_ASYNC_BYTES))
    bytes = attr_def(IntegerAttr, check=(lambda a: a.value in (4, 8, 16), "must be 4, 8 or 16"))
    token = result_def(TokenType())
    assembly_format = "$cache $dst `,` $src `,` $src_size attr-dict `:` type($dst) `,` type($src)"

    def __init__(
        self,
        dst: Value,
        src: Value,
        nbytes: int,
        *,
        cache: str | None = None,
        src_size: Value | None = None,
    ) -> None:
        attributes: dict = {"bytes": IntegerAttr(nbytes, IntegerType(32))}
        if cache is not None:
            attributes["cache"] = StringAttr(cache)
        super().__init__(
            operands=[dst, src] + ([] if src_size is None else [src_size]),
            result_types=[TokenType()],
            attributes=attributes,
        )

    @property
    def cache_op(self) -> str:
        """The cache operator, ``ca`` when none is written."""
        return self.cache.value if self.cache is not None else "ca"

    def verify_(self) -> None:
        dst, src = self.dst.type, self.src.type
        assert isinstance(dst, PointerType) and isinstance(src, PointerType)
        if dst.space is not AddressSpace.SHARED or src.space is not AddressSpace.GLOBAL:
            raise self.error("copies from a global pointer to a shared pointer")
        allowed = CP_ASYNC_BYTES[self.cache_op]
        if self.bytes.value not in allowed:
            sizes = ", ".join(map(str, allowed))
            nbytes = self.bytes.value
            raise self.error(f"cp.async.{self.cache_op} copies {sizes} bytes, not {nbytes}")


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
