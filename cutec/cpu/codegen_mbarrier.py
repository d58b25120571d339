"""Warp code of the mbarrier family (cutec/ir/dialects/thread_mbarrier.py).

Each op (and the init fence, which names no mbarrier) checks its live lanes' mbarrier
addresses (bounds, 8-byte alignment;
``mbarrier_init`` is also a store to the shared-memory shadow, the others are
atomic updates the race check does not see), stores the lanes' buffer ids,
byte offsets, operand (count, bytes or parity) and live mask in rows 0..3 of
the warp's scratch area, and calls the warp-op hook
(`cutec.cpu.native_mbarrier`), which runs `cutec.cpu.mbarrier` lane by lane.

``mbarrier_wait`` is a resume point, as a barrier: the warp stores its state
and returns 3 when the hook finds a live lane whose phase has not completed;
the scheduler calls it again later, and it checks again from the resume label.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cutec.cpu import checks
from cutec.cpu.codegen_ops import _address_parts
from cutec.cpu.lanes import ERR_HOOK, ERR_LOAD, ERR_STORE, INFO_WARP_HOOK, vec
from cutec.cpu.mbarrier import INIT_FENCES
from cutec.ir.core import Operation, Value
from cutec.ir.dialects import thread

if TYPE_CHECKING:
    from cutec.cpu.codegen import _Gen

MBARRIER_HANDLERS: dict[str, object] = {}
ROWS = 4  # scratch rows an mbarrier op uses: buffer ids, offsets, operand, live mask
NOT_READY = 3  # the hook's and the warp's return code at a wait not yet satisfied


def _call(g: _Gen, op: Operation, value: Value | None) -> str:
    """Check the lanes' mbarrier addresses, fill the scratch rows and call the hook;
    a failure in it returns 2. The hook's return code (0 or NOT_READY)."""
    i64 = vec("i64")
    mask = g.mask_now()
    init = isinstance(op, thread.MbarrierInitOp)
    err, shadow = (ERR_STORE, checks.STORE) if init else (ERR_LOAD, None)
    ids = off = "zeroinitializer"  # the init fence names no mbarrier
    if op.operands:
        _, ids, off = _address_parts(g, op, op.operands[0], mask, 8, err, shadow)
    operand = "zeroinitializer"
    if value is not None:
        operand = g.op(f"sext {vec('i32')} {g.get(value)} to {i64}")
    live = g.op(f"zext {vec('i1')} {mask} to {i64}")
    for k, row in enumerate((ids, off, operand, live)):
        at = g.op(f"getelementptr [{g.collective_rows} x {i64}], ptr %wscratch, i64 0, i64 {k}")
        g.emit(f"store {i64} {row}, ptr {at}, align 64")
    return call_warp_hook(g, op)


def call_warp_hook(g: _Gen, op: Operation) -> str:
    """Call the runner's warp-op hook for `op` on the rows of the warp's scratch; a
    failure in it (return code 1: an exception the runner raises again) ends the warp.
    Returns the code (0, or NOT_READY where the op waits)."""
    fn = g.op(f"inttoptr i64 {g.info(INFO_WARP_HOOK)} to ptr")
    index = g.op_index(op)
    rc = g.op(f"call i32 {fn}(ptr %info, i64 {index}, ptr %wscratch)")
    g.fail_when(g.op(f"icmp eq i32 {rc}, 1"), lambda: [str(index), "0", "0", "0", str(ERR_HOOK)])
    return rc


def _init(g: _Gen, op: thread.MbarrierInitOp) -> None:
    _call(g, op, op.count)


def _arrive(g: _Gen, op: Operation) -> None:
    _call(g, op, None)


def _expect_tx(g: _Gen, op: thread.MbarrierExpectTxOp | thread.MbarrierArriveExpectTxOp) -> None:
    _call(g, op, op.tx)


def _wait(g: _Gen, op: thread.MbarrierWaitOp) -> None:
    g.barriers.append(op)
    state = len(g.barriers)
    g.branch(f"br label %resume{state}")
    g.label(f"resume{state}")
    rc = _call(g, op, op.parity)
    wait, go = g.fresh("wait"), g.fresh("go")
    g.emit(f"br i1 {g.op(f'icmp eq i32 {rc}, {NOT_READY}')}, label %{wait}, label %{go}")
    g.label(wait, keep_cache=True)
    g.emit(f"store i32 {state}, ptr %frame, align 64")
    g.emit(f"ret i32 {NOT_READY}")
    g.label(go, keep_cache=True)


MBARRIER_HANDLERS.update({
    "thread.mbarrier_init": _init, "thread.mbarrier_arrive": _arrive,
    "thread.mbarrier_expect_tx": _expect_tx, "thread.mbarrier_wait": _wait,
    "thread.mbarrier_arrive_expect_tx": _expect_tx,
    "thread.cp_async_mbarrier_arrive": _arrive,
    **{fence.name: _arrive for fence in INIT_FENCES},
})  # fmt: skip
