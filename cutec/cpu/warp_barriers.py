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
* **Cluster barrier** (`ClusterBarrier`, one for the CTAs of a cluster, which run
  together: every warp of every CTA of the cluster is a fiber of one scheduler):
  ``cluster_arrive`` counts the warp in the current phase and goes on;
  ``cluster_wait`` waits until every warp of the cluster that has not finished (a
  thread that exited does not hold the barrier up) has arrived in the phase the warp
  arrived in. A wait without an arrival before it is an error. A warp is named by
  (its CTA's rank in the cluster, its index in the CTA).

A completed generation or phase calls `on_complete` with the warps that took part
(the race check's new interval, and the mbarrier inits it publishes): a named
barrier the CTA's, a cluster phase each CTA's of the cluster with its own warps.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from cutec.ir.core import Operation
from cutec.ir.dialects import thread

WARP = 32
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


Warp = tuple[int, int]  # (its CTA's rank in the cluster, its index in the CTA)


class ClusterBarrier:
    """The cluster barrier of one cluster's run. `live` gives the warps of the cluster
    that have not finished; `on_complete` is called with the warps of each completed
    phase."""

    def __init__(self, live: Callable[[], set[Warp]],
                 on_complete: Callable[[set[Warp]], None]) -> None:  # fmt: skip
        self.live, self.on_complete = live, on_complete
        self.reset()

    def reset(self) -> None:
        self.arrived: set[Warp] = set()  # warps arrived in the current phase
        self.number = 0  # phases completed
        self.phase: dict[Warp, int] = {}  # warp -> the phase it arrived in

    def step(self, op: Operation, warp: Warp) -> bool:
        """Warp `warp` is at cluster_arrive or cluster_wait `op`; whether it goes on now."""
        arrived = self.phase.get(warp)
        if isinstance(op, thread.ClusterArriveOp):
            if arrived is not None:
                raise BarrierError("cluster_arrive twice with no cluster_wait between")
            self.arrived.add(warp)
            self.phase[warp] = self.number
            self._complete()
            return True
        if arrived is None:
            raise BarrierError("cluster_wait without a cluster_arrive before it")
        self._complete()
        if self.number == arrived:
            return False
        del self.phase[warp]
        return True

    def _complete(self) -> None:
        """The phase completes when every warp still running has arrived."""
        if self.arrived and self.live() <= self.arrived:
            warps, self.arrived = self.arrived, set()
            self.number += 1
            self.on_complete(warps)


class WarpBarriers:
    """The named barriers of one CTA's run, and its part of its cluster's barrier
    (`rank`: the CTA's in the cluster)."""

    def __init__(self, cluster: ClusterBarrier, rank: int,
                 on_complete: Callable[[set[int]], None]) -> None:  # fmt: skip
        self.cluster, self.rank = cluster, rank
        self.on_complete = on_complete
        self.barriers: dict[int, _Generation] = {}
        self.waiting: dict[int, tuple[int, int]] = {}  # warp -> (named barrier, generation)

    def reset(self) -> None:
        self.barriers, self.waiting = {}, {}

    def step(self, op: Operation, warp: int) -> bool:
        """Warp `warp` is at `op` (its lanes all are); whether it goes on now."""
        if isinstance(op, thread.NamedBarrierSyncOp | thread.NamedBarrierArriveOp):
            if warp in self.waiting:  # waits in a generation: has it completed?
                key, number = self.waiting[warp]
                if self.barriers[key].number == number:
                    return False
                del self.waiting[warp]
                return True
            return self._named(op, warp)
        return self.cluster.step(op, (self.rank, warp))

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

    def _done(self, g: _Generation) -> None:
        warps = g.warps
        g.count, g.arrived, g.warps = 0, 0, set()
        g.number += 1
        self.on_complete(warps)
