"""The mbarrier family → PTX (cutec/ir/dialects/thread_mbarrier.py).

The forms without ``::cta`` (PTX ISA 7.0, test_wait 7.1) assemble for every
target cutec emits (sm_80's PTX 7.4 has no ``.shared::cta``); ``expect_tx``
exists from sm_90 (PTX 8.0). A wait is a loop on the phase parity::

    $L_mbarrier_wait_3:
        mbarrier.try_wait.parity.shared.b64 %p, [%bar], %parity;   // test_wait before sm_90
        @!%p bra $L_mbarrier_wait_3;

try_wait suspends the thread for a while inside the instruction (sm_90);
test_wait returns at once, so the loop spins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cutec.ir.core import Operation
from cutec.ir.dialects import thread
from cutec.target import Feature

if TYPE_CHECKING:
    from cutec.ptx.emitter import KernelEmitter
    from cutec.ptx.rules import Rule


def _bar(ctx: KernelEmitter, op: Operation) -> str:
    return f"[{ctx.reg(op.operands[0])}]"


def _init(ctx: KernelEmitter, op: Operation) -> None:
    assert isinstance(op, thread.MbarrierInitOp)
    ctx.emit(f"mbarrier.init.shared.b64 {_bar(ctx, op)}, {ctx.reg(op.count)};")


def _arrive(ctx: KernelEmitter, op: Operation) -> None:
    state = ctx.temp("b64")  # the phase token, which no op reads
    ctx.emit(f"mbarrier.arrive.shared.b64 {state}, {_bar(ctx, op)};")


def _expect_tx(ctx: KernelEmitter, op: Operation) -> None:
    assert isinstance(op, thread.MbarrierExpectTxOp)
    if not ctx.target.has(Feature.MBARRIER):
        raise ctx.error(op, "mbarrier.expect_tx needs sm_90")
    ctx.emit(f"mbarrier.expect_tx.relaxed.cta.shared::cta.b64 {_bar(ctx, op)}, {ctx.reg(op.tx)};")


def _arrive_expect_tx(ctx: KernelEmitter, op: Operation) -> None:
    assert isinstance(op, thread.MbarrierArriveExpectTxOp)
    if not ctx.target.has(Feature.MBARRIER):
        raise ctx.error(op, "mbarrier.arrive.expect_tx needs sm_90")
    state = ctx.temp("b64")  # the phase token, which no op reads
    ctx.emit(
        f"mbarrier.arrive.expect_tx.shared::cta.b64 {state}, {_bar(ctx, op)}, {ctx.reg(op.tx)};"
    )


def _wait(ctx: KernelEmitter, op: Operation) -> None:
    assert isinstance(op, thread.MbarrierWaitOp)
    done, head = ctx.temp("pred"), ctx.label("mbarrier_wait")
    inst = "try_wait" if ctx.target.has(Feature.MBARRIER) else "test_wait"
    ctx.place(head)
    ctx.emit(f"mbarrier.{inst}.parity.shared.b64 {done}, {_bar(ctx, op)}, {ctx.reg(op.parity)};")
    ctx.emit(f"@!{done} bra {head};")


def _cp_async_arrive(ctx: KernelEmitter, op: Operation) -> None:
    ctx.emit(f"cp.async.mbarrier.arrive.noinc.shared.b64 {_bar(ctx, op)};")


MBARRIER_RULES: dict[type[Operation], Rule] = {
    thread.MbarrierInitOp: _init,
    thread.MbarrierArriveOp: _arrive,
    thread.MbarrierExpectTxOp: _expect_tx,
    thread.MbarrierArriveExpectTxOp: _arrive_expect_tx,
    thread.MbarrierWaitOp: _wait,
    thread.CpAsyncMbarrierArriveOp: _cp_async_arrive,
}
