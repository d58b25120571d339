"""Clusters on the CPU: which CTAs run together, and the scheduler that runs them.

Both backends run a grid cluster by cluster (clusters one after another, x
fastest, then y, then z), and the CTAs of one cluster together: every warp of
every CTA of the cluster is a fiber of one scheduler (`run_cluster`), so a
cluster barrier (`cutec.cpu.warp_barriers.ClusterBarrier`) rendezvous over all
of them. Each CTA keeps its own shared memory, CTA barriers, named barriers,
mbarriers and race-check intervals. A kernel without a cluster clause, or with
``cluster (1, 1, 1)``, runs as clusters of one CTA: the grid's CTAs one after
another, as before clusters existed.

The grid must be a whole number of clusters on each axis, as a cluster launch on
the GPU needs: cutec's launcher rounds a kernel's own grid up to whole clusters
and refuses a given grid that is not (cutec/runtime/launcher.py), for the GPU and
the CPU alike; `cluster_blocks` refuses one here too, naming ``grid``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

from cutec.cpu import checks
from cutec.cpu.mbarrier import Waiting
from cutec.cpu.warp_barriers import ClusterBarrier, Warp
from cutec.ir.attributes import DenseArrayAttr
from cutec.ir.core import Operation
from cutec.ir.dialects import builtin

Dim3 = tuple[int, int, int]


def cluster_dim(kernel: builtin.KernelOp) -> Dim3:
    """The kernel's cluster shape ((1, 1, 1) without a cluster clause)."""
    attr = kernel.attributes.get("cluster_dim")
    if not isinstance(attr, DenseArrayAttr):
        return (1, 1, 1)
    v = [int(x) for x in attr.values] + [1, 1]
    return (v[0], v[1], v[2])


def cluster_size(kernel: builtin.KernelOp) -> int:
    """The number of CTAs of the kernel's cluster (1 without a cluster clause)."""
    x, y, z = cluster_dim(kernel)
    return x * y * z


def cluster_blocks(grid: Dim3, cluster: Dim3) -> Iterator[list[Dim3]]:
    """Each cluster's block ids, in rank order (``%cluster_ctarank``: x fastest), the
    clusters x fastest; a `ValueError` naming ``grid`` when it is not whole clusters."""
    if any(g % c for g, c in zip(grid, cluster, strict=True)):
        raise ValueError(
            f"grid={grid} is not a whole number of clusters of {cluster} CTAs (the kernel's "
            "'cluster' clause): give each axis a multiple of the cluster's"
        )
    cx, cy, cz = cluster
    for z in range(0, grid[2], cz):
        for y in range(0, grid[1], cy):
            for x in range(0, grid[0], cx):
                yield [(x + i, y + j, z + k) for k in range(cz) for j in range(cy)
                       for i in range(cx)]  # fmt: skip


class ClusterCta(Protocol):
    """One CTA of a cluster as `run_cluster` drives it (each backend has its own)."""

    block_id: Dim3

    def advance(self) -> bool:
        """Run the CTA's warps while any makes progress (each to a barrier, an mbarrier
        wait or its end, again while it may go on); whether any did."""
        ...

    def stopped(self) -> list[Operation | Waiting | None]:
        """Where each warp stopped: its barrier, the mbarrier it waits on, None (finished)."""
        ...

    def live_warps(self) -> set[int]:
        """The warps that have not finished."""
        ...

    def barrier_completed(self, warps: set[int]) -> None:
        """A named barrier that `warps` took part in completed."""
        ...

    def cluster_completed(self, warps: set[int]) -> None:
        """The cluster barrier, which `warps` took part in, completed (what a named
        barrier does, and remote accesses are ordered after it: cutec.cpu.checks)."""
        ...

    def close_interval(self) -> None:
        """The barrier interval ends: raise what its checks found at its end."""
        ...

    def next_round(self) -> None:
        """Every warp waits at one CTA barrier: a new interval, and they go on."""
        ...

    def finish(self) -> None:
        """Every warp finished: complete what the CTA left in flight (its threads' TMA
        stores that no wait covered)."""
        ...


def cluster_barrier(ctas: Sequence[ClusterCta]) -> ClusterBarrier:
    """The cluster barrier of the CTAs in `ctas` (in rank order; the list may be filled
    after): its live warps are theirs, and a completed phase completes for each CTA
    with its own warps."""

    def live() -> set[Warp]:
        return {(rank, w) for rank, cta in enumerate(ctas) for w in cta.live_warps()}

    def completed(warps: set[Warp]) -> None:
        for rank, cta in enumerate(ctas):
            cta.cluster_completed({w for r, w in warps if r == rank})

    return ClusterBarrier(live, completed)


def run_cluster(ctas: Sequence[ClusterCta], nthreads: int) -> None:
    """Run the CTAs of one cluster (`nthreads` each) to their ends: each advances while
    its warps make progress; with more than one CTA, the others again while any did
    (a warp's arrival at the cluster barrier may release another CTA's warps). When
    none can go on, a CTA whose warps all wait at one CTA barrier starts its next
    round; one whose warps all finished is done; and when every CTA left is stuck,
    the cluster is deadlocked (`checks.deadlock`, who waits on what, per CTA)."""
    live = list(ctas)
    while live:
        if len(live) == 1:  # (no other CTA can let its warps go on)
            live[0].advance()
        else:
            while any([cta.advance() for cta in live]):
                pass
        changed = False
        for cta in list(live):
            state = checks.round_state(cta.stopped())
            if state == checks.STUCK:
                continue
            cta.close_interval()
            changed = True
            if state == checks.AT_BARRIER:
                cta.next_round()
            else:
                cta.finish()
                live.remove(cta)
        if live and not changed:
            for cta in live:
                cta.close_interval()  # (a load of an unwritten byte is the better report)
            raise checks.deadlock([(c.block_id, c.stopped()) for c in ctas], nthreads)
