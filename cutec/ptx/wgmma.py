"""The warpgroup-MMA family → PTX (cutec/ir/dialects/thread_wgmma.py).

The batch brackets and the proxy fence are one instruction each (PTX ISA 8.0,
sm_90a for the wgmma ones). A matrix descriptor is computed from the tile's
shared-window address, which fits 18 bits (shared memory is at most 228 KiB)::

    shr.u64  %rd1, %rd0, 4;              // start address >> 4 ...
    and.b64  %rd1, %rd1, 16383;          // ... in bits [0, 14)
    or.b64   %rd2, %rd1, 4611688217450340352;   // LBO, SBO, swizzle: constants

The wgmma itself is a ``thread.atom`` rendered from its atom's template.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cutec.ir.core import Operation
from cutec.ir.dialects import thread
from cutec.target import Feature

if TYPE_CHECKING:
    from cutec.ptx.emitter import KernelEmitter
    from cutec.ptx.rules import Rule

_START_FIELD = (1 << 14) - 1  # the descriptor's start address, in 16-byte units


def _needs(feature: Feature, what: str) -> Rule:
    """A rule that emits `what` (a fixed instruction) on targets with `feature`."""

    def rule(ctx: KernelEmitter, op: Operation) -> None:
        if not ctx.target.has(feature):
            raise ctx.error(op, f"{what.split()[0]} needs sm_90 (the target is {ctx.target})")
        ctx.emit(what)

    return rule


def _fence(ctx: KernelEmitter, op: Operation) -> None:
    _needs(Feature.WGMMA, "wgmma.fence.sync.aligned;")(ctx, op)
    ctx.in_wgmma_batch = True


def _wait(ctx: KernelEmitter, op: Operation) -> None:
    assert isinstance(op, thread.WgmmaWaitOp)
    if not ctx.target.has(Feature.WGMMA):
        raise ctx.error(op, f"wgmma.wait_group needs sm_90a (the target is {ctx.target})")
    ctx.emit(f"wgmma.wait_group.sync.aligned {op.pending.value};")
    if op.pending.value == 0:  # every batch has landed
        ctx.in_wgmma_batch = False
        ctx.landed()


def _gmma_desc(ctx: KernelEmitter, op: Operation) -> None:
    assert isinstance(op, thread.GmmaDescOp)
    fixed = op.descriptor(0).encode()  # every field but the start address
    start = ctx.temp("b64")
    ctx.emit(f"shr.u64 {start}, {ctx.reg(op.ptr)}, 4;")
    ctx.emit(f"and.b64 {start}, {start}, {_START_FIELD};")
    ctx.emit(f"or.b64 {ctx.define(op.result, op)}, {start}, {fixed};")


WGMMA_RULES: dict[type[Operation], Rule] = {
    thread.WgmmaFenceOp: _fence,
    thread.WgmmaCommitOp: _needs(Feature.WGMMA, "wgmma.commit_group.sync.aligned;"),
    thread.WgmmaWaitOp: _wait,
    # The async proxy exists from sm_90 (PTX 8.0), with TMA.
    thread.FenceProxyAsyncOp: _needs(Feature.TMA, "fence.proxy.async.shared::cta;"),
    thread.GmmaDescOp: _gmma_desc,
}
