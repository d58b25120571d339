"""Named barriers and cluster barriers on the CPU (cutec/ir/dialects/thread_barrier.py).

Both are reached by whole warps (``bar.sync`` and ``barrier.cluster`` are
``.aligned``: every lane of a warp at the same one, else a divergent barrier), so a
CTA's scheduler calls `WarpBarriers.step` once per warp whose lanes all stopped at
one: its first step is its arrival; True when the warp goes on now, False when it
waits (its lanes stay where they are and each later pass of the scheduler steps it
again, to ask whether it may go on).

* **Named barrier** `id` (1..15) with `count` threads: each arriving warp counts 32
  threads (the hardware counts a warp whole); the arrival that brings the count to
  `count` completes the barrier's generation and releases the warps that wait in
  it (``named_barrier_sync``); ``named_barrier_arrive`` counts and goes on. Two
  arrivals in one generation with different counts are an error.
* **Cluster barrier**, for a cluster of one CTA: ``cluster_arrive`` counts the warp
  in the current phase and goes on; ``cluster_wait`` waits until every warp that
  has not finished has arrived in the phase the warp arrived in. A wait without
  an arrival before it is an error. Clusters of more CTAs are refused: the CPU
  backends run a grid's CTAs one after another, never a cluster's together.

A completed generation or phase calls `on_complete` with the warps that took part
(the race check's new interval, and the mbarrier inits it publishes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from cutec.ir.core import Operation
from cutec.ir.dialects import thread

WARP = 32
CLUSTER = 0  # the cluster barrier's key among the named ones' (1..15)
WARP_BARRIER_OPS: tuple[type[Operation], ...] = (
    thread.NamedBarrierSyncOp,
    thread.NamedBarrierArriveOp,
    thread.ClusterArriveOp,
    thread.ClusterWaitOp,
)


class BarrierError(Exception):
    """A misuse of a named or cluster barrier (the caller adds the op's location)."""


@dataclass
class _Generation:
    count: int = 0  # threads expected (0: none arrived yet)
    arrived: int = 0  # threads arrived
    warps: set[int] = field(default_factory=set)  # warps arrived
    number: int = 0  # generations completed


class WarpBarriers:
    """The named and cluster barriers of one CTA's run."""

    def __init__(self, cluster_ctas: int, on_complete: Callable[[set[int]], None]) -> None:
        self.cluster_ctas = cluster_ctas
        self.on_complete = on_complete
        self.barriers: dict[int, _Generation] = {}
        self.waiting: dict[int, tuple[int, int]] = {}  # warp -> (named barrier, generation)
        self.cluster_phase: dict[int, int] = {}  # warp -> the cluster phase it arrived in

    def reset(self) -> None:
        self.barriers, self.waiting, self.cluster_phase = {}, {}, {}

    def step(self, op: Operation, warp: int, live: set[int]) -> bool:
        """Warp `warp` is at `op` (its lanes all are); whether it goes on now.
        `live`: the CTA's warps that have not finished."""
        if isinstance(op, thread.NamedBarrierSyncOp | thread.NamedBarrierArriveOp):
            if warp in self.waiting:  # waits in a generation: has it completed?
                key, number = self.waiting[warp]
                if self.barriers[key].number == number:
                    return False
                del self.waiting[warp]
                return True
            return self._named(op, warp)
        if self.cluster_ctas > 1:
            raise BarrierError(
                f"a cluster barrier across a cluster of {self.cluster_ctas} CTAs does not run "
                "on the CPU (it runs a grid's CTAs one after another); give the kernel "
                "cluster (1, 1, 1) to run it here"
            )
        g = self.barriers.setdefault(CLUSTER, _Generation())
        arrived = self.cluster_phase.get(warp)
        if isinstance(op, thread.ClusterArriveOp):
            if arrived is not None:
                raise BarrierError("cluster_arrive twice with no cluster_wait between")
            g.warps.add(warp)
            self.cluster_phase[warp] = g.number
            self._complete_cluster(live)
            return True
        if arrived is None:
            raise BarrierError("cluster_wait without a cluster_arrive before it")
        self._complete_cluster(live)
        if g.number == arrived:
            return False
        del self.cluster_phase[warp]
        return True

    def _named(self, op: thread.NamedBarrierSyncOp | thread.NamedBarrierArriveOp, warp: int
               ) -> bool:  # fmt: skip
        key, count = op.id.value, op.count.value
        g = self.barriers.setdefault(key, _Generation())
        if g.arrived and g.count != count:
            raise BarrierError(
                f"named barrier {key} is reached with a count of {count} threads while "
                f"{g.arrived} threads have arrived with a count of {g.count}"
            )
        number = g.number
        g.count = count
        g.arrived += WARP
        g.warps.add(warp)
        if g.arrived >= count:
            self._done(g)
            return True
        if isinstance(op, thread.NamedBarrierArriveOp):
            return True
        self.waiting[warp] = (key, number)
        return False

    def _complete_cluster(self, live: set[int]) -> None:
        """The cluster phase completes when every warp still running has arrived."""
        g = self.barriers.get(CLUSTER)
        if g is not None and g.warps and live <= g.warps:
            self._done(g)

    def _done(self, g: _Generation) -> None:
        warps = g.warps
        g.count, g.arrived, g.warps = 0, 0, set()
        g.number += 1
        self.on_complete(warps)
