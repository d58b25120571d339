"""Named barriers, cluster barriers and the mbarrier-init fence → PTX
(cutec/ir/dialects/thread_barrier.py).

Each op prints one row of `cutec.atoms.sync`'s table, the instructions' one source
(template, lowest target, immediates' ranges); `_ROWS` maps an op to its row:

    thread.named_barrier_sync {id = 1, count = 128}    bar.sync 1, 128;
    thread.named_barrier_arrive {id = 1, count = 128}  bar.arrive 1, 128;
    thread.cluster_arrive [relaxed]                    barrier.cluster.arrive[.relaxed].aligned;
    thread.cluster_wait                                barrier.cluster.wait.aligned;
    thread.fence_mbarrier_init                         fence.mbarrier_init.release.cluster;
    %p = thread.elect_one                              elect.sync _|%p, 0xffffffff;
    thread.setmaxnreg {action = "inc", count = 240}   setmaxnreg.inc.sync.aligned.u32 240;

A row whose target this kernel's cannot run is a located error, except the fence,
which is nothing before sm_90: there a CTA barrier alone orders an mbarrier init
(no cluster, no async proxy to publish it to).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from cutec.atoms.sync import SyncOp, sync_op
from cutec.ir.core import Operation
from cutec.ir.dialects import thread

if TYPE_CHECKING:
    from cutec.ptx.emitter import KernelEmitter
    from cutec.ptx.rules import Rule


def _cluster_arrive(op: Operation) -> str:
    assert isinstance(op, thread.ClusterArriveOp)
    return "barrier.cluster.arrive.relaxed" if op.relaxed is not None else "barrier.cluster.arrive"


# op class -> (the sync row it prints, given the op; whether a target without it emits nothing)
_ROWS: dict[type[Operation], tuple[Callable[[Operation], str], bool]] = {
    thread.NamedBarrierSyncOp: (lambda op: "bar.sync.named", False),
    thread.NamedBarrierArriveOp: (lambda op: "bar.arrive.named", False),
    thread.ClusterArriveOp: (_cluster_arrive, False),
    thread.ClusterWaitOp: (lambda op: "barrier.cluster.wait", False),
    thread.FenceMbarrierInitOp: (lambda op: "fence.mbarrier_init", True),
}


def _immediates(op: Operation) -> dict[str, str]:
    if isinstance(op, thread.NamedBarrierSyncOp | thread.NamedBarrierArriveOp):
        return {"id": str(op.id.value), "count": str(op.count.value)}
    return {}


def _rule(ctx: KernelEmitter, op: Operation) -> None:
    row_of, optional = _ROWS[type(op)]
    row: SyncOp = sync_op(row_of(op))
    if not ctx.target.runs(row.min_target):
        if optional:
            return
        raise ctx.error(op, f"{row.name} needs {row.target()}")
    ctx.emit(row.render(_immediates(op)))


def _elect_one(ctx: KernelEmitter, op: Operation) -> None:
    assert isinstance(op, thread.ElectOneOp)
    row = sync_op("elect.sync")
    if not ctx.target.runs(row.min_target):
        raise ctx.error(op, f"elect_one (elect.sync) needs {row.target()}")
    ctx.emit(row.render({"p": ctx.define(op.result, op)}))


def _setmaxnreg(ctx: KernelEmitter, op: Operation) -> None:
    assert isinstance(op, thread.SetMaxNRegOp)
    row = sync_op(op.instruction)
    if not ctx.target.runs(row.min_target):
        raise ctx.error(op, f"setmaxnreg needs {row.target()}")
    ctx.emit(row.render({"n": str(op.count.value)}))


BARRIER_RULES: dict[type[Operation], Rule] = {
    **dict.fromkeys(_ROWS, _rule),
    thread.ElectOneOp: _elect_one,
    thread.SetMaxNRegOp: _setmaxnreg,
}
