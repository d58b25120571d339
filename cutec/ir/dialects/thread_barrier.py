"""The thread dialect's barriers beyond ``gpu.barrier``: named barriers, cluster barriers,
and the fence that publishes mbarrier inits.

* ``thread.named_barrier_sync {id = 1 : i32, count = 128 : i32}``: ``bar.sync 1, 128``;
  the warp waits until `count` threads (whole warps) have arrived at barrier `id`.
* ``thread.named_barrier_arrive {id = 1 : i32, count = 128 : i32}``: ``bar.arrive 1,
  128``; the warp counts towards that barrier's `count` and goes on (a producer
  signalling its consumers).
* ``thread.cluster_arrive`` (``relaxed``: no release of this thread's writes) and
  ``thread.cluster_wait``: ``barrier.cluster.arrive[.relaxed].aligned`` /
  ``barrier.cluster.wait.aligned`` (sm_90): every thread of every CTA of the
  cluster arrives; a wait returns when all have.
* ``thread.elect_one``: ``elect.sync _|p, 0xffffffff`` (sm_90): true in one lane of
  the warp (CuTe's ``elect_one_sync``).
* ``thread.fence_mbarrier_init``: ``fence.mbarrier_init.release.cluster`` (sm_90):
  this thread's earlier ``mbarrier_init``s are visible to the cluster and the async
  proxy once a barrier follows. Before sm_90 there is no cluster and no async proxy,
  and a CTA barrier alone orders an init: it emits nothing there.

Barrier 0 is ``gpu.barrier`` (``bar.sync 0``), so a named barrier's id is 1..15;
its count is a multiple of 32 up to 1024 (`cutec.atoms.sync`'s ranges, which the
verifier applies). The barriers are rendezvous (`Collective`): no pass moves them
into or out of control flow. Each orders shared and global memory as
``gpu.barrier`` does; the fence orders shared memory.
"""

from __future__ import annotations

from cutec.atoms.sync import SyncOpError, sync_op
from cutec.ir.attributes import IntegerAttr, UnitAttr
from cutec.ir.core import Operation
from cutec.ir.opdef import attr_def, opt_attr_def, result_def
from cutec.ir.traits import AddressSpace, Collective, MemoryEffects, Scope, reads, writes
from cutec.ir.types import IntegerType

_SPACES = (AddressSpace.SHARED, AddressSpace.GLOBAL)
_BARRIER_EFFECTS = MemoryEffects((*reads(*_SPACES), *writes(*_SPACES)))


class _NamedBarrierOp(Operation):
    """A named barrier: its id and its thread count, immediates of the instruction."""

    traits = (Collective(Scope.CTA), _BARRIER_EFFECTS)
    instruction: str  # the row of cutec.atoms.sync that checks the immediates
    id = attr_def(IntegerAttr)
    count = attr_def(IntegerAttr)
    assembly_format = "attr-dict"

    def __init__(self, barrier: int, count: int) -> None:
        i32 = IntegerType(32)
        super().__init__(
            attributes={"id": IntegerAttr(barrier, i32), "count": IntegerAttr(count, i32)}
        )

    def verify_(self) -> None:
        if self.id.value == 0:
            raise self.error("barrier 0 is gpu.barrier's (bar.sync 0); a named barrier is 1..15")
        try:
            sync_op(self.instruction).render({"id": str(self.id.value),
                                              "count": str(self.count.value)})  # fmt: skip
        except SyncOpError as e:
            raise self.error(str(e)) from None


class NamedBarrierSyncOp(_NamedBarrierOp):
    """Wait until `count` threads have arrived at barrier `id` (``bar.sync id, count``):
    ``thread.named_barrier_sync {count = 128 : i32, id = 1 : i32}``."""

    name = "thread.named_barrier_sync"
    instruction = "bar.sync.named"


class NamedBarrierArriveOp(_NamedBarrierOp):
    """Arrive at barrier `id` without waiting (``bar.arrive id, count``):
    ``thread.named_barrier_arrive {count = 128 : i32, id = 1 : i32}``."""

    name = "thread.named_barrier_arrive"
    instruction = "bar.arrive.named"


class ClusterArriveOp(Operation):
    """Arrive at the cluster barrier (``barrier.cluster.arrive.aligned``; with `relaxed`,
    ``.relaxed``: this thread's writes are not released): ``thread.cluster_arrive``."""

    name = "thread.cluster_arrive"
    traits = (Collective(Scope.CLUSTER), _BARRIER_EFFECTS)
    relaxed = opt_attr_def(UnitAttr)
    assembly_format = "attr-dict"

    def __init__(self, relaxed: bool = False) -> None:
        super().__init__(attributes={"relaxed": UnitAttr()} if relaxed else {})


class ClusterWaitOp(Operation):
    """Wait until every thread of the cluster has arrived (``barrier.cluster.wait.aligned``):
    ``thread.cluster_wait``."""

    name = "thread.cluster_wait"
    traits = (Collective(Scope.CLUSTER), _BARRIER_EFFECTS)
    assembly_format = "attr-dict"

    def __init__(self) -> None:
        super().__init__()


class FenceMbarrierInitOp(Operation):
    """Publish this thread's earlier mbarrier inits to the cluster and the async proxy
    (``fence.mbarrier_init.release.cluster``): ``thread.fence_mbarrier_init``."""

    name = "thread.fence_mbarrier_init"
    traits = (MemoryEffects((*reads(AddressSpace.SHARED), *writes(AddressSpace.SHARED))),)
    assembly_format = "attr-dict"

    def __init__(self) -> None:
        super().__init__()


class ElectOneOp(Operation):
    """One lane of the warp, the same one each time, gets true (``elect.sync _|p,
    0xffffffff``, sm_90; CuTe's ``elect_one_sync``): ``%p = thread.elect_one : i1``.

    Every lane of the warp executes it together (a warp collective). A branch on its
    result is one thread's work that the compiler knows is one thread's: ptxas keeps
    that work in uniform registers (a TMA's operands), where a branch on the lane index
    costs a loop over the warp's distinct values at each TMA. The CPU backends elect
    lane 0.
    """

    name = "thread.elect_one"
    traits = (Collective(Scope.WARP),)
    result = result_def(IntegerType(1))
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self) -> None:
        super().__init__(result_types=[IntegerType(1)])


BARRIER_OPS: tuple[type[Operation], ...] = (
    NamedBarrierSyncOp,
    NamedBarrierArriveOp,
    ClusterArriveOp,
    ClusterWaitOp,
    FenceMbarrierInitOp,
    ElectOneOp,
)
