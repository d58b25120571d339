"""The thread dialect's mbarrier family: a 64-bit shared-memory barrier with phases.

An mbarrier (PTX ISA, *Parallel synchronization and communication: mbarrier*)
is an 8-byte object in shared memory. ``init`` sets its expected arrival count;
each phase completes when that many arrivals have happened and its transaction
count (``expect_tx`` raises it; TMA's ``complete_tx`` lowers it) is back to
zero; the phase parity then flips and the count starts again. A thread waits
for the phase of a given parity to complete (``try_wait.parity`` in a loop).

* ``thread.mbarrier_init %bar, %count : !gpu.ptr<i64, shared>, i32``
* ``thread.mbarrier_arrive %bar : !gpu.ptr<i64, shared>``
* ``thread.mbarrier_expect_tx %bar, %bytes : !gpu.ptr<i64, shared>, i32`` (sm_90)
* ``thread.mbarrier_arrive_expect_tx %bar, %bytes : !gpu.ptr<i64, shared>, i32``: the
  two in one instruction (sm_90), as CuTe's ``ClusterTransactionBarrier``
* ``thread.mbarrier_wait %bar, %parity : !gpu.ptr<i64, shared>, i32``: block until
  the phase of that parity (0 or 1) has completed: ``mbarrier.try_wait.parity``
  (``test_wait`` before sm_90) in a loop.
* ``thread.cp_async_mbarrier_arrive %bar : !gpu.ptr<i64, shared>``: an arrival
  that happens when all of this thread's earlier cp.async copies have landed
  (``cp.async.mbarrier.arrive.noinc``: the init count includes it).

The mbarrier ops are per-thread (``collective = "thread"`` in
`cutec.atoms.sync`), not CTA rendezvous; each reads and writes its mbarrier's
shared memory, so none is moved or deleted.
"""

from __future__ import annotations

from cutec.ir.core import Operation, Value
from cutec.ir.dialects.gpu import PointerType
from cutec.ir.opdef import operand_def
from cutec.ir.traits import AddressSpace, MemoryEffects, reads, writes
from cutec.ir.types import IntegerType

# Each reads and updates the mbarrier; a wait also orders the shared memory after it.
_EFFECTS = MemoryEffects((*reads(AddressSpace.SHARED), *writes(AddressSpace.SHARED)))


class _MbarrierOp(Operation):
    """An mbarrier op: its first operand is the mbarrier, an i64 in shared memory."""

    traits = (_EFFECTS,)
    bar = operand_def(PointerType)

    def verify_(self) -> None:
        t = self.bar.type
        assert isinstance(t, PointerType)
        if t.space is not AddressSpace.SHARED or t.element != IntegerType(64):
            raise self.error(f"the mbarrier is a !gpu.ptr<i64, shared>, not {t}")


class MbarrierInitOp(_MbarrierOp):
    """Set the mbarrier's expected arrivals per phase (1 .. 2^20 - 1), phase 0 pending:
    ``thread.mbarrier_init %bar, %count : !gpu.ptr<i64, shared>, i32``."""

    name = "thread.mbarrier_init"
    count = operand_def(IntegerType(32))
    assembly_format = "$bar `,` $count attr-dict `:` type($bar) `,` type($count)"

    def __init__(self, bar: Value, count: Value) -> None:
        super().__init__(operands=[bar, count])


class MbarrierArriveOp(_MbarrierOp):
    """One arrival on the current phase: ``thread.mbarrier_arrive %bar : !gpu.ptr<i64,
    shared>``."""

    name = "thread.mbarrier_arrive"
    assembly_format = "$bar attr-dict `:` type($bar)"

    def __init__(self, bar: Value) -> None:
        super().__init__(operands=[bar])


class MbarrierExpectTxOp(_MbarrierOp):
    """Raise the current phase's transaction count by `bytes` (sm_90):
    ``thread.mbarrier_expect_tx %bar, %bytes : !gpu.ptr<i64, shared>, i32``."""

    name = "thread.mbarrier_expect_tx"
    tx = operand_def(IntegerType(32))
    assembly_format = "$bar `,` $tx attr-dict `:` type($bar) `,` type($tx)"

    def __init__(self, bar: Value, tx: Value) -> None:
        super().__init__(operands=[bar, tx])


class MbarrierArriveExpectTxOp(_MbarrierOp):
    """Raise the transaction count by `bytes`, then one arrival, in one instruction
    (``mbarrier.arrive.expect_tx``, sm_90): ``thread.mbarrier_arrive_expect_tx %bar,
    %bytes : !gpu.ptr<i64, shared>, i32``."""

    name = "thread.mbarrier_arrive_expect_tx"
    tx = operand_def(IntegerType(32))
    assembly_format = "$bar `,` $tx attr-dict `:` type($bar) `,` type($tx)"

    def __init__(self, bar: Value, tx: Value) -> None:
        super().__init__(operands=[bar, tx])


class MbarrierWaitOp(_MbarrierOp):
    """Wait until the phase of parity `parity` (its low bit) has completed:
    ``thread.mbarrier_wait %bar, %parity : !gpu.ptr<i64, shared>, i32``."""

    name = "thread.mbarrier_wait"
    parity = operand_def(IntegerType(32))
    assembly_format = "$bar `,` $parity attr-dict `:` type($bar) `,` type($parity)"

    def __init__(self, bar: Value, parity: Value) -> None:
        super().__init__(operands=[bar, parity])


class CpAsyncMbarrierArriveOp(_MbarrierOp):
    """An arrival when this thread's earlier cp.async copies have all landed
    (``cp.async.mbarrier.arrive.noinc``): ``thread.cp_async_mbarrier_arrive %bar :
    !gpu.ptr<i64, shared>``."""

    name = "thread.cp_async_mbarrier_arrive"
    assembly_format = "$bar attr-dict `:` type($bar)"

    def __init__(self, bar: Value) -> None:
        super().__init__(operands=[bar])


MBARRIER_OPS: tuple[type[Operation], ...] = (
    MbarrierInitOp,
    MbarrierArriveOp,
    MbarrierExpectTxOp,
    MbarrierArriveExpectTxOp,
    MbarrierWaitOp,
    CpAsyncMbarrierArriveOp,
)
