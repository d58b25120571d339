"""The reference interpreter's wgmma ops (cutec/ir/dialects/thread_wgmma.py).

The semantics and checks are `cutec.cpu.wgmma`'s, shared with the native
backend. Here: the CTA's wgmma state over its shared buffers (`cta_state`), the
thread-level ops (``thread.gmma_desc``: the descriptor of the pointer's
shared-window address; ``thread.fence_proxy_async``) and the accumulator-web
check each op that reads or writes an accumulator register runs. The warp steps
(the wgmma itself, ``thread.wgmma_fence / commit / wait``) are in
`cutec.cpu.collective`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cutec.cpu import checks, wgmma
from cutec.cpu.reference_memory import AccessError, Buffer, Pointer
from cutec.ir.dialects import thread
from cutec.ir.dialects.arith_fold import int_value
from cutec.ir.types import IntegerType

if TYPE_CHECKING:
    from cutec.cpu.reference import _Cta
    from cutec.ir.core import Operation


def buffer_name(op: Operation | None) -> str:
    """The name a shared buffer has in reports (its alloc op's location)."""
    return "dynamic_shared" if op is None else f"shared@{op.location or op.parsed_at}"


def cta_state(cta: _Cta, webs: wgmma.AccumulatorWebs, nthreads: int) -> wgmma.WgmmaCta:
    """The wgmma state of `cta`, over its shared buffers (made on first use)."""
    entries = cta.window

    def buffer(i: int) -> Buffer:
        e = entries[i]
        return cta.shared_buffer(e.op, e.size, buffer_name(e.op))

    def shadow(i: int) -> checks.SharedShadow | None:
        if not cta.check_shared:
            return None
        buf = buffer(i)
        found = cta.shadows.get(id(buf))
        if found is None:
            found = cta.shadows[id(buf)] = checks.SharedShadow(buf.size)
        return found

    window = wgmma.SharedWindow(entries, lambda i: buffer(i).data, lambda i: buffer(i).name,
                                shadow)  # fmt: skip
    state = wgmma.WgmmaCta(webs, window, nthreads)
    state.start, state.block = cta.start, cta.block
    state.proxy = cta.proxy  # one record of proxy fences for wgmma and TMA stores
    return state


class WgmmaOps:
    """The thread-level wgmma handlers of a reference thread (mixed into its class)."""

    cta: _Cta
    tid: tuple[int, int, int]

    @property
    def linear(self) -> int:
        """The thread's linear index in its CTA (x fastest)."""
        (x, y, z), (bx, by, _) = self.tid, self.cta.block
        return x + bx * (y + by * z)

    def window_address(self, op: Operation, p: Pointer) -> int:
        for e in self.cta.window:
            if self.cta.shared.get(e.op) is p.buffer:
                return e.base + p.offset
        raise self.error(op, wgmma.not_shared_error(p.buffer.name))  # type: ignore[attr-defined]

    def gmma_desc(self, op: thread.GmmaDescOp) -> None:
        address = self.window_address(op, self.env[op.ptr])  # type: ignore[attr-defined]
        try:
            value = wgmma.descriptor(op, address)
        except ValueError as e:
            raise self.error(op, str(e)) from None  # type: ignore[attr-defined]
        self.env[op.result] = int_value(value, IntegerType(64))  # type: ignore[attr-defined]

    def fence_proxy_async(self, op: thread.FenceProxyAsyncOp) -> None:
        # It is an init fence too (cutec.cpu.mbarrier: publishing an init).
        self.cta.mbarriers.fence(self.tid)
        # The CTA's record, which its wgmma state shares (`cta_state`).
        self.cta.proxy.fence(self.cta.shadows.values(), [self.linear])

    def wgmma_access(self, op: Operation) -> None:
        """`op` reads or writes accumulator registers: not while a wgmma writes them."""
        state = self.cta.wgmma
        assert state is not None
        try:
            state.access(op, self.linear // checks.WARP, self.linear)
        except wgmma.WgmmaError as e:
            raise self.cta.wgmma_error(e) from None


def located(cta: _Cta, e: wgmma.WgmmaError) -> AccessError:
    """The interpreter's report of a failed wgmma check."""
    return AccessError(str(e), e.op, checks.tid3(e.thread, cta.block), cta.block_id)
