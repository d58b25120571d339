"""Warp code of the cp.async family: the copy, commit and wait call the runner's
hook (`cutec.cpu.native_async`), which keeps each lane's groups and lands them.

The copy is checked here first, in the live lanes, as the interpreter checks it:
src-size within 0..bytes, the source (where src-size is not 0) and the
destination in bounds and aligned, the destination against the shared-memory
shadow (a cp.async store, pending until its wait). In a kernel with no
``thread.cp_async``, commit and wait have nothing in flight and generate nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cutec.cpu import checks
from cutec.cpu.codegen_ops import _address_parts
from cutec.cpu.lanes import (
    ERR_HOOK,
    ERR_LOAD,
    ERR_SRC_SIZE,
    ERR_STORE,
    INFO_HOOK,
    Loc,
    splat,
    vec,
)
from cutec.cpu.native_async import COMMIT, ISSUE, WAIT
from cutec.ir.core import Operation
from cutec.ir.dialects import thread

if TYPE_CHECKING:
    from cutec.cpu.codegen import _Gen

ASYNC_HANDLERS: dict[str, object] = {}


def _hook(g: _Gen, op: Operation, what: int, n: int, lanes: list[str]) -> None:
    """Store `lanes` (<32 x i64> each) and the live mask to the scratch area, call the
    hook; a failure in it (an exception, raised again by the runner) returns 2."""
    i64 = vec("i64")
    mask = g.op(f"zext {vec('i1')} {g.mask_now()} to {i64}")
    for k, value in enumerate([*lanes, mask] if lanes else [mask]):
        at = g.op(f"getelementptr [6 x {i64}], ptr %scratch, i64 0, i64 {4 if not lanes else k}")
        g.emit(f"store {i64} {value}, ptr {at}, align 64")
    fn = g.op(f"inttoptr i64 {g.info(INFO_HOOK)} to ptr")
    rc = g.op(f"call i32 {fn}(ptr %info, i64 {what}, i64 {n}, ptr %scratch)")
    index = g.op_index(op)
    g.fail_when(g.op(f"icmp ne i32 {rc}, 0"), lambda: [str(index), "0", "0", "0", str(ERR_HOOK)])


def _cp_async(g: _Gen, op: thread.CpAsyncOp) -> None:
    i64 = vec("i64")
    nbytes = op.bytes.value
    mask = g.mask_now()
    if op.src_size is None:
        size = splat(nbytes, "i64")
    else:
        size = g.op(f"sext {vec('i32')} {g.get(op.src_size)} to {i64}")
    bad = g.op(f"icmp ugt {i64} {size}, {splat(nbytes, 'i64')}")  # negative ones too
    bad = g.op(f"and {vec('i1')} {bad}, {mask}")
    g.fail_if(bad, g.op_index(op), ERR_SRC_SIZE, ["zeroinitializer", size], nbytes)
    reads = g.op(f"icmp ne {i64} {size}, zeroinitializer")
    reads = g.op(f"and {vec('i1')} {reads}, {mask}")
    src = _address_parts(g, op, op.src, reads, nbytes, ERR_LOAD, None)[0]
    _, ids, off = _address_parts(g, op, op.dst, mask, nbytes, ERR_STORE, checks.ASYNC)
    src_int = g.op(f"ptrtoint {vec('ptr')} {src} to {i64}")
    _hook(g, op, ISSUE, nbytes, [ids, off, src_int, size])
    g.alias(op.token, 0, _token())


def _commit(g: _Gen, op: thread.CpAsyncCommitOp) -> None:
    if g.uses_async:
        _hook(g, op, COMMIT, 0, [])
    g.alias(op.group, 0, _token())


def _wait(g: _Gen, op: thread.CpAsyncWaitOp) -> None:
    if g.uses_async:
        _hook(g, op, WAIT, op.pending.value, [])


def _token() -> Loc:
    return Loc(None, "zeroinitializer", "i64")


ASYNC_HANDLERS.update({
    "thread.cp_async": _cp_async, "thread.cp_async_commit": _commit,
    "thread.cp_async_wait": _wait,
})  # fmt: skip
