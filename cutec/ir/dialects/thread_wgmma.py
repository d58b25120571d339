"""The thread dialect's warpgroup-MMA family: batch brackets, descriptors, proxy fence.

A ``wgmma.mma_async`` (a ``thread.atom`` of a WGMMA-family atom) is issued by
the 128 threads of a warpgroup together and runs asynchronously (PTX ISA,
*Asynchronous Warpgroup Level Matrix Multiply-Accumulate*):

* ``thread.wgmma_fence`` (``wgmma.fence.sync.aligned``) comes before the first
  wgmma of a batch and orders the registers and shared memory it reads after
  the thread's earlier accesses to them;
* ``thread.wgmma_commit`` (``wgmma.commit_group.sync.aligned``) closes the
  batch of wgmmas issued since the last commit into one group;
* ``thread.wgmma_wait {pending = N}`` (``wgmma.wait_group.sync.aligned N``)
  waits until at most N groups are in flight. Until a wgmma's group has been
  waited for, its accumulator registers must be neither read nor written, and
  the shared memory it reads must not be rewritten.

A wgmma reads a shared-memory operand through a 64-bit matrix descriptor,
``thread.gmma_desc``. The async proxy reads it, so shared memory written
through the generic proxy (``st.shared``, ``cp.async``) is made visible to it by
``thread.fence_proxy_async`` (``fence.proxy.async.shared::cta``) in each
writing thread, before the barrier that hands the data over.

The batch ops are warpgroup rendezvous (``.sync.aligned``); each orders shared
memory (a wgmma reads it until the wait), so none is moved or deleted.
"""

from __future__ import annotations

from cutec.atoms.family import Family
from cutec.atoms.gmma_desc import SWIZZLE_CODE, GmmaDescriptor
from cutec.ir.attributes import FloatAttr, IntegerAttr, StringAttr
from cutec.ir.core import Operation, Value
from cutec.ir.dialects.arith_patterns import make_constant
from cutec.ir.dialects.gpu import PointerType
from cutec.ir.dialects.thread_atom import AtomOp
from cutec.ir.opdef import attr_def, operand_def, result_def
from cutec.ir.rewrite import PatternRewriter, RewritePattern, constant_value
from cutec.ir.traits import AddressSpace, Collective, MemoryEffects, Pure, Scope, reads, writes
from cutec.ir.types import IntegerType
from cutec.ir.value import OpResult

_SHARED = MemoryEffects((*reads(AddressSpace.SHARED), *writes(AddressSpace.SHARED)))
_WARPGROUP = Collective(Scope.WARPGROUP)

# wgmma.wait_group takes an immediate 0..7 (PTX ISA 8.0).
MAX_PENDING = 7


class WgmmaFenceOp(Operation):
    """Order earlier register and shared-memory accesses before the next wgmma:
    ``thread.wgmma_fence``."""

    name = "thread.wgmma_fence"
    traits = (_WARPGROUP, _SHARED)
    assembly_format = "attr-dict"

    def __init__(self) -> None:
        super().__init__()


class WgmmaCommitOp(Operation):
    """Close the wgmmas issued since the last commit into one group: ``thread.wgmma_commit``."""

    name = "thread.wgmma_commit"
    traits = (_WARPGROUP, _SHARED)
    assembly_format = "attr-dict"

    def __init__(self) -> None:
        super().__init__()


class WgmmaWaitOp(Operation):
    """Wait until at most `pending` wgmma groups are in flight:
    ``thread.wgmma_wait {pending = 0 : i32}``."""

    name = "thread.wgmma_wait"
    traits = (_WARPGROUP, _SHARED)
    pending = attr_def(
        IntegerAttr,
        check=(lambda a: 0 <= a.value <= MAX_PENDING, f"must be 0..{MAX_PENDING}"),
    )
    assembly_format = "attr-dict"

    def __init__(self, pending: int = 0) -> None:
        super().__init__(attributes={"pending": IntegerAttr(pending, IntegerType(32))})


class FenceProxyAsyncOp(Operation):
    """Make this thread's generic-proxy shared-memory writes visible to the async proxy
    (wgmma operands, TMA stores): ``thread.fence_proxy_async``."""

    name = "thread.fence_proxy_async"
    traits = (_SHARED,)
    assembly_format = "attr-dict"

    def __init__(self) -> None:
        super().__init__()


class GmmaDescOp(Operation):
    """The wgmma matrix descriptor of the operand tile starting at `ptr`:

    ``%d = thread.gmma_desc %p {lbo = 1024 : i32, sbo = 64 : i32, swizzle = "128B"}
    : !gpu.ptr<f16, shared>``

    The 64-bit value is `GmmaDescriptor` (cutec/atoms/gmma_desc.py) with start
    address the pointer's shared-window address and base offset 0: the tile's
    swizzle pattern is aligned to its repeat (1024 bytes for 128B), which the
    shared-memory plan guarantees. `lbo` and `sbo` are in bytes.
    """

    name = "thread.gmma_desc"
    traits = (Pure(),)
    ptr = operand_def(PointerType)
    lbo = attr_def(IntegerAttr)
    sbo = attr_def(IntegerAttr)
    swizzle = attr_def(StringAttr, one_of=tuple(SWIZZLE_CODE))
    result = result_def(IntegerType(64))
    assembly_format = "$ptr attr-dict `:` type($ptr)"

    def __init__(self, ptr: Value, lbo: int, sbo: int, swizzle: str) -> None:
        i32 = IntegerType(32)
        super().__init__(
            operands=[ptr],
            result_types=[IntegerType(64)],
            attributes={
                "lbo": IntegerAttr(lbo, i32),
                "sbo": IntegerAttr(sbo, i32),
                "swizzle": StringAttr(swizzle),
            },
        )

    def descriptor(self, start_address: int) -> GmmaDescriptor:
        """The descriptor for a tile at `start_address` (a shared-window byte address)."""
        return GmmaDescriptor(start_address, self.lbo.value, self.sbo.value, self.swizzle.value)

    def verify_(self) -> None:
        t = self.ptr.type
        assert isinstance(t, PointerType)
        if t.space is not AddressSpace.SHARED:
            raise self.error(f"describes a tile in shared memory, not {t}")
        try:
            self.descriptor(0)
        except ValueError as e:
            raise self.error(str(e)) from None


def scale_d(op: AtomOp) -> Value | None:
    """A wgmma's ``$scale_d`` operand (its last), or None for another atom."""
    return op.args[-1] if op.family() is Family.WGMMA else None


def accumulates(op: AtomOp) -> bool:
    """Whether a wgmma reads its accumulator registers: ``$scale_d`` is not a constant
    false (with scale-d false, D = A·B and the input registers are not read)."""
    scale = scale_d(op)
    attr = None if scale is None else constant_value(scale)
    return not (isinstance(attr, IntegerAttr) and attr.value == 0)


def _is_zero(value: Value) -> bool:
    """A constant zero, or a vector built from constant zeros."""
    attr = constant_value(value)
    if isinstance(attr, IntegerAttr | FloatAttr):
        return attr.value == 0
    owner = value.op if isinstance(value, OpResult) else None
    if owner is not None and owner.name == "thread.from_elements":
        return all(_is_zero(v) for v in owner.operands)
    return False


class ZeroAccumulatorScale(RewritePattern):
    """A wgmma that accumulates onto zeros computes D = A·B: scale-d false, so its
    accumulator registers need no zeros moved into them (CuTe's ScaleOut::Zero):

        %d = thread.atom "SM90_..."(%zero, ..., %da, %db, %true)
        → %d = thread.atom "SM90_..."(%zero, ..., %da, %db, %false)
    """

    op_type = AtomOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        assert isinstance(op, AtomOp)
        scale = scale_d(op)
        if scale is None or not accumulates(op):
            return False
        count = op.signature().outputs[0].count
        if not all(_is_zero(v) for v in op.args[:count]):
            return False
        op.set_operand(len(op.operands) - 1, make_constant(rewriter, op, 0, scale))
        rewriter.modify(op)
        return True


WGMMA_OPS: tuple[type[Operation], ...] = (
    WgmmaFenceOp,
    WgmmaCommitOp,
    WgmmaWaitOp,
    FenceProxyAsyncOp,
    GmmaDescOp,
)
