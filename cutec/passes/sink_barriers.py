"""sink-barriers: issue global loads before a CTA barrier that does not order them.

CuTe's register-staged mainloop (sgemm_2) reads the next k-tile from global
memory right after the barrier that publishes this one in shared memory::

    gpu.barrier                      // B1: everyone has read the old tile
    thread.store %rA, %sA            // rmem -> smem
    gpu.barrier                      // B2: the new tile is visible
    %v = thread.load_if %p, %gA_next // gmem -> rmem, for the next iteration
    ... 512 fma on shared loads ...

The loaded registers are used only by the next iteration, and ptxas, given
this order, may schedule the load after the FMAs (it does for sgemm_2 NT),
exposing its whole latency at the next iteration's store. With the barrier
below the load, ptxas cannot sink the load past it (a barrier orders memory),
and the load's latency overlaps the FMAs, as in nvcc's build of CuTe's
tutorial.

The rewrite moves B2 down past the ops that follow it, up to and including
the last of them that reads global memory, when all of these hold:

* every op in that run is `Pure` (and not collective, with no regions) or
  only reads the global space (a generic pointer may point at shared memory:
  it stops the run);
* B1, the previous CTA barrier in the same block, exists, and no op between
  B1 and B2 (nested ops included) may write global or generic memory or has
  unknown effects;
* in the kernel, every CTA- or cluster-collective op is a `gpu.barrier`
  directly in the kernel body or in ``scf.for`` bodies only, so all threads
  pass the barriers in one static order.

Why that is exact: a global write that B2 orders before the load is, in its
thread, before B2. The last condition makes every thread run the same code
between B1 and B2, which writes no global memory, so the write is before B1,
and B1 still orders it before the load. The moved ops are pure or global
reads, which no shared access between B2's old and new place depends on.
"""

from __future__ import annotations

from dataclasses import dataclass

from cutec.ir.core import Operation
from cutec.ir.dialects import gpu, scf
from cutec.ir.dialects.builtin import KernelOp, ModuleOp
from cutec.ir.traits import (
    AddressSpace,
    AsyncProducer,
    Collective,
    EffectKind,
    Pure,
    Scope,
)
from cutec.passes.manager import Pass, working_on

_GLOBAL_WRITES = (AddressSpace.GLOBAL, AddressSpace.GENERIC)


def _is_cta_sync(op: Operation) -> bool:
    trait = op.get_trait(Collective)
    return trait is not None and trait.scope in (Scope.CTA, Scope.CLUSTER)


def _lockstep_barriers(kernel: KernelOp) -> list[gpu.BarrierOp] | None:
    """The kernel's barriers, or None unless every CTA-collective op is a barrier
    whose ancestors are scf.for loops."""
    barriers: list[gpu.BarrierOp] = []
    for op in kernel.walk():
        if op is kernel or not _is_cta_sync(op):
            continue
        if not isinstance(op, gpu.BarrierOp):
            return None
        parent = op.parent_op
        while parent is not kernel:
            if not isinstance(parent, scf.ForOp):
                return None
            parent = parent.parent_op  # type: ignore[union-attr]
        barriers.append(op)
    return barriers


def _may_write_global(op: Operation) -> bool:
    for nested in op.walk():
        effects = nested.memory_effects()
        if effects is None:
            return True
        if any(e.kind is EffectKind.WRITE and e.space in _GLOBAL_WRITES for e in effects):
            return True
    return False


def _reads_only_global(op: Operation) -> bool:
    effects = op.memory_effects()
    return (
        bool(effects)
        and not op.has_trait(AsyncProducer)
        and all(e.kind is EffectKind.READ and e.space is AddressSpace.GLOBAL for e in effects)
    )


def _movable(op: Operation) -> bool:
    if op.regions or op.has_trait(Collective) or not op.results:
        return False
    return op.has_trait(Pure) or _reads_only_global(op)


def _previous_barrier_allows(barrier: gpu.BarrierOp) -> bool:
    """B1 exists in the block and nothing between it and `barrier` may write global memory."""
    op = barrier.prev_op
    while op is not None:
        if isinstance(op, gpu.BarrierOp):
            return True
        if _may_write_global(op):
            return False
        op = op.prev_op
    return False


def sink_barrier(barrier: gpu.BarrierOp) -> bool:
    """Move `barrier` below the global loads after it when that is exact; True if moved."""
    last_load: Operation | None = None
    op = barrier.next_op
    while op is not None and _movable(op):
        if _reads_only_global(op):
            last_load = op
        op = op.next_op
    if last_load is None or not _previous_barrier_allows(barrier):
        return False
    barrier.move_after(last_load)
    return True


@dataclass
class SinkBarriers(Pass):
    """Issue global loads before a CTA barrier that does not order them."""

    name = "sink-barriers"
    summary = "issue global loads above a CTA barrier that does not order them"

    def run(self, module: ModuleOp) -> None:
        for kernel in module.body.ops:
            if not isinstance(kernel, KernelOp):
                continue
            for barrier in _lockstep_barriers(kernel) or ():
                with working_on(barrier):
                    sink_barrier(barrier)
