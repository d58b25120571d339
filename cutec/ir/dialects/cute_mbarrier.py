"""cute ops on one mbarrier: an s64 element of a shared tensor (CuTe's ``uint64_t`` barrier).

The element is named as `cute.load` names one: a linear index, or one coordinate
per mode. The count, the transaction bytes and the phase parity are i32 values:

    cute.mbarrier_init %count, %bars, %i : i32, !cute.tensor<i64, smem, 2:1>
    cute.mbarrier_arrive %bars, %i : !cute.tensor<i64, smem, 2:1>
    cute.mbarrier_expect_tx %bytes, %bars, %i : i32, !cute.tensor<i64, smem, 2:1>
    cute.mbarrier_arrive_expect_tx %bytes, %bars, %i : ...
    cute.mbarrier_wait %phase, %bars, %i : i32, !cute.tensor<i64, smem, 2:1>

lower-to-thread makes each the thread dialect's op (cutec/ir/dialects/thread_mbarrier.py)
on the element's shared pointer. Every op reads and writes its mbarrier's shared
memory, so none is moved or deleted.
"""

from __future__ import annotations

from collections.abc import Sequence

from cutec.ir.core import Value
from cutec.ir.dialects.cute_base import CuteOp
from cutec.ir.dialects.cute_types import TensorType
from cutec.ir.opdef import operand_def, var_operand_def
from cutec.ir.traits import MemoryEffects, reads, writes
from cutec.ir.types import IndexType, IntegerType
from cutec.target import AddressSpace

_i32 = IntegerType(32)


class _MbarrierOp(CuteOp):
    """An op on element `indices` of `tensor`, an smem tensor of i64."""

    traits = (MemoryEffects((*reads(AddressSpace.SHARED), *writes(AddressSpace.SHARED))),)
    tensor: Value
    indices: Sequence[Value]

    def verify_(self) -> None:
        t = self.tensor.type
        assert isinstance(t, TensorType)
        if t.space is not AddressSpace.SHARED or t.element != IntegerType(64):
            raise self.error(f"takes an mbarrier: an i64 element of an smem tensor, not of {t}")
        shape = t.spec.shape
        rank = len(shape) if isinstance(shape, tuple) else 1
        if len(self.indices) not in (1, rank):
            raise self.error(
                f"names its mbarrier by a linear index or {rank} coordinates, "
                f"not {len(self.indices)} indices"
            )


class MbarrierInitOp(_MbarrierOp):
    """Set the mbarrier's arrivals per phase (``mbarrier.init``): ``cute.mbarrier_init
    %count, %bars, %i``."""

    name = "cute.mbarrier_init"
    count = operand_def(_i32)
    tensor = operand_def(TensorType)
    indices = var_operand_def(IndexType)

    def __init__(self, count: Value, t: Value, indices: Sequence[Value]) -> None:
        super().__init__(operands=[count, t, *indices])


class MbarrierArriveOp(_MbarrierOp):
    """One arrival (``mbarrier.arrive``): ``cute.mbarrier_arrive %bars, %i``."""

    name = "cute.mbarrier_arrive"
    tensor = operand_def(TensorType)
    indices = var_operand_def(IndexType)

    def __init__(self, t: Value, indices: Sequence[Value]) -> None:
        super().__init__(operands=[t, *indices])


class MbarrierExpectTxOp(_MbarrierOp):
    """Raise the phase's transaction count (``mbarrier.expect_tx``, sm_90):
    ``cute.mbarrier_expect_tx %bytes, %bars, %i``."""

    name = "cute.mbarrier_expect_tx"
    tx = operand_def(_i32)
    tensor = operand_def(TensorType)
    indices = var_operand_def(IndexType)

    def __init__(self, tx: Value, t: Value, indices: Sequence[Value]) -> None:
        super().__init__(operands=[tx, t, *indices])


class MbarrierArriveExpectTxOp(MbarrierExpectTxOp):
    """expect_tx, then one arrival (``mbarrier.arrive.expect_tx``, sm_90):
    ``cute.mbarrier_arrive_expect_tx %bytes, %bars, %i``."""

    name = "cute.mbarrier_arrive_expect_tx"


class MbarrierWaitOp(_MbarrierOp):
    """Wait until the phase of parity `phase` (its low bit) has completed
    (``mbarrier.try_wait.parity`` in a loop): ``cute.mbarrier_wait %phase, %bars, %i``."""

    name = "cute.mbarrier_wait"
    phase = operand_def(_i32)
    tensor = operand_def(TensorType)
    indices = var_operand_def(IndexType)

    def __init__(self, phase: Value, t: Value, indices: Sequence[Value]) -> None:
        super().__init__(operands=[phase, t, *indices])


MBARRIER_OPS: tuple[type[CuteOp], ...] = (
    MbarrierInitOp,
    MbarrierArriveOp,
    MbarrierExpectTxOp,
    MbarrierArriveExpectTxOp,
    MbarrierWaitOp,
)
