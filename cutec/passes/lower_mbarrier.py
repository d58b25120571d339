"""lower-to-thread's mbarrier ops: each cute op on an mbarrier element
(cutec/ir/dialects/cute_mbarrier.py) is the thread op on the element's shared pointer
(cutec/ir/dialects/thread_mbarrier.py). `lower_to_thread` computes the pointer as
for any element access and asks `thread_ops` for what goes there:

    cute.mbarrier_init %n, %bars, %i           thread.mbarrier_init %p, %n
    cute.mbarrier_arrive %bars, %i             thread.mbarrier_arrive %p
    cute.mbarrier_expect_tx %b, %bars, %i      thread.mbarrier_expect_tx %p, %b
    cute.mbarrier_arrive_expect_tx %b, ...     thread.mbarrier_arrive_expect_tx %p, %b
    cute.mbarrier_wait %phase, %bars, %i       thread.mbarrier_wait %p, %phase
"""

from __future__ import annotations

from collections.abc import Callable

from cutec.ir.core import Operation, Value
from cutec.ir.dialects import cute_mbarrier as cm
from cutec.ir.dialects import thread

_THREAD_OPS: dict[type[Operation], Callable[[Operation, Value], list[Operation]]] = {
    cm.MbarrierInitOp: lambda op, p: [thread.MbarrierInitOp(p, op.count)],  # type: ignore[attr-defined]
    cm.MbarrierArriveOp: lambda op, p: [thread.MbarrierArriveOp(p)],
    cm.MbarrierExpectTxOp: lambda op, p: [thread.MbarrierExpectTxOp(p, op.tx)],  # type: ignore[attr-defined]
    cm.MbarrierArriveExpectTxOp: lambda op, p: [thread.MbarrierArriveExpectTxOp(p, op.tx)],  # type: ignore[attr-defined]
    cm.MbarrierWaitOp: lambda op, p: [thread.MbarrierWaitOp(p, op.phase)],  # type: ignore[attr-defined]
}

MBARRIER_OPS = tuple(_THREAD_OPS)


def thread_ops(op: Operation, ptr: Value) -> list[Operation]:
    """The thread ops of the cute mbarrier op `op` on its mbarrier's pointer `ptr`."""
    return _THREAD_OPS[type(op)](op, ptr)
