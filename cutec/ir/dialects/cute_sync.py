"""cute ops that order asynchronous tensor-core work: wgmma fences and proxy fences.

CuTe's warpgroup_arrive / warpgroup_commit_batch / warpgroup_wait<N> bracket a
batch of wgmma instructions (`cute.gemm` with an SM90 GMMA atom, whose results
land in registers only when a wait covers them), warpgroup_fence_operand keeps
an accumulator's registers from being moved across that bracket, and
fence_view_async_shared makes generic-proxy writes of shared memory (cp.async,
st.shared) visible to the async proxy wgmma reads through.

Their effects say exactly that: each reads and writes the registers and shared
memory the wgmma batch may touch (the fence of one tensor only that tensor's
memory), so no pass moves an access across them or deletes them.
"""

from __future__ import annotations

from cutec.ir.attributes import IntegerAttr
from cutec.ir.core import Value
from cutec.ir.dialects.cute_base import CuteOp
from cutec.ir.dialects.cute_types import TensorType
from cutec.ir.opdef import attr_def, operand_def
from cutec.ir.traits import (
    AddressSpace,
    AsyncWaiter,
    Collective,
    MemoryEffect,
    MemoryEffects,
    Scope,
    reads,
    writes,
)
from cutec.ir.types import i32

_REG_AND_SHARED = (
    *reads(AddressSpace.REGISTER, AddressSpace.SHARED),
    *writes(AddressSpace.REGISTER, AddressSpace.SHARED),
)


class _NoOperandOp(CuteOp):
    num_operands = 0
    num_results = 0

    def __init__(self) -> None:
        super().__init__()


class WarpgroupArriveOp(_NoOperandOp):
    """Registers and smem written before it are visible to the next wgmma (``wgmma.fence``).

    ``cute.warpgroup_arrive``
    """

    name = "cute.warpgroup_arrive"
    traits = (Collective(Scope.WARPGROUP), MemoryEffects(_REG_AND_SHARED))


class WarpgroupCommitBatchOp(_NoOperandOp):
    """Close the batch of wgmma issued since the last commit (``wgmma.commit_group``).

    ``cute.warpgroup_commit_batch``
    """

    name = "cute.warpgroup_commit_batch"
    traits = (Collective(Scope.WARPGROUP), MemoryEffects(_REG_AND_SHARED))


class WarpgroupWaitOp(CuteOp):
    """Wait until at most `pending` wgmma batches are in flight (``wgmma.wait_group N``).

    ``cute.warpgroup_wait {pending = 0 : i32}``
    """

    name = "cute.warpgroup_wait"
    traits = (AsyncWaiter(), Collective(Scope.WARPGROUP), MemoryEffects(_REG_AND_SHARED))
    pending = attr_def(
        IntegerAttr, check=(lambda a: 0 <= a.value <= 7, "must be between 0 and 7 (wait_group)")
    )

    def __init__(self, pending: int) -> None:
        super().__init__(attributes={"pending": IntegerAttr(pending, i32)})


class WarpgroupFenceOperandOp(CuteOp):
    """Keep a tensor's registers in place across a wgmma batch (CuTe's warpgroup_fence_operand).

    ``cute.warpgroup_fence_operand %tCrC : !cute.tensor<f16, rmem, ((2,2,8),2,1):((1,2,4),32,0)>``
    """

    name = "cute.warpgroup_fence_operand"
    tensor = operand_def(TensorType)

    def __init__(self, t: Value) -> None:
        super().__init__(operands=[t])

    def memory_effects(self) -> tuple[MemoryEffect, ...] | None:
        t = self.tensor.type
        if not isinstance(t, TensorType):
            return None
        space = t.space
        return (*reads(space), *writes(space))


class FenceViewAsyncSharedOp(_NoOperandOp):
    """Order generic-proxy smem writes before async-proxy reads (``fence.proxy.async.shared::cta``).

    ``cute.fence_view_async_shared``
    """

    name = "cute.fence_view_async_shared"
    traits = (MemoryEffects((*reads(AddressSpace.SHARED), *writes(AddressSpace.SHARED))),)
