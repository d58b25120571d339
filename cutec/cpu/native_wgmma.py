"""wgmma for the native backend: the warp code's calls (cutec/cpu/codegen_wgmma.py).

The warp-op hook runs `cutec.cpu.wgmma` (the interpreter's semantics and checks)
for one warp: a wgmma's issue with its lanes' input words (scratch rows, as
mma.sync's), the batch ops, the proxy fence of the live lanes (scratch row 0)
and the accumulator-register accesses. At a wait it writes each completed
wgmma's D words into the frame slots of its accumulator webs (the warp reloads
them). A failed check becomes the interpreter's `AccessError`.
"""

from __future__ import annotations

import ctypes

import numpy as np

from cutec.cpu import checks, wgmma
from cutec.cpu.codegen_mbarrier import NOT_READY
from cutec.cpu.lanes import LANES
from cutec.cpu.native_mbarrier import NativeMbarriers
from cutec.cpu.reference_memory import AccessError, Dim3
from cutec.ir.core import Operation
from cutec.ir.dialects import thread

_WIDTH = {"half": 16, "bfloat": 16, "float": 32, "double": 64}


class NativeWgmma:
    """The wgmma state of one run (its CTAs one after another)."""

    def __init__(self, kernel_webs: wgmma.AccumulatorWebs, window: wgmma.SharedWindow,
                 web_slots: list[list[tuple[int, str]]], frames: list[np.ndarray],
                 nthreads: int, block: Dim3, mbarriers: NativeMbarriers) -> None:  # fmt: skip
        self.webs, self.window, self.web_slots = kernel_webs, window, web_slots
        self.frames, self.nthreads, self.block = frames, nthreads, block
        self.state = wgmma.WgmmaCta(kernel_webs, window, nthreads)
        self.block_id: Dim3 = (0, 0, 0)
        self.mbarriers = mbarriers  # whose `waiting` the runner reads at a NOT_READY

    def reset(self, block_id: Dim3, start: int) -> None:
        """A new CTA: nothing in flight, every web touched."""
        self.state = wgmma.WgmmaCta(self.webs, self.window, self.nthreads)
        self.state.start, self.state.block = start, self.block
        self.block_id = block_id

    def error(self, e: wgmma.WgmmaError) -> AccessError:
        return AccessError(str(e), e.op, checks.tid3(e.thread, self.block), self.block_id)

    def converged(self) -> None:
        try:
            self.state.converged()
        except wgmma.WgmmaError as e:
            raise self.error(e) from None

    def handles(self, op: Operation) -> bool:
        """Whether the warp-op hook's call for `op` is this module's."""
        return (isinstance(op, (*wgmma.SYNC_OPS, thread.FenceProxyAsyncOp)) or wgmma.is_wgmma(op)
                or op in self.webs.accesses or op in self.webs.writes)  # fmt: skip

    def run(self, op: Operation, warp: int, scratch: int) -> int:
        """Run `op` for `warp` (`scratch`: the warp's scratch rows); 0, or NOT_READY at
        a wait for groups the rest of the warpgroup has not committed."""
        try:
            return self._run(op, warp, scratch)
        except wgmma.WgmmaError as e:
            raise self.error(e) from None

    def _rows(self, scratch: int, rows: int) -> np.ndarray:
        raw = (ctypes.c_uint64 * (rows * LANES)).from_address(scratch)
        return np.ctypeslib.as_array(raw).reshape(rows, LANES)

    def _run(self, op: Operation, warp: int, scratch: int) -> int:
        state = self.state
        if isinstance(op, thread.AtomOp):
            words = self._rows(scratch, len(op.args))
            state.issue(op, warp, words.T.copy())
        elif isinstance(op, thread.WgmmaWaitOp):
            landed = state.wait(op, warp)
            if landed is None:
                self.mbarriers.waiting[warp] = wgmma.WgmmaWaiting(op, "", 0, 0)
                return NOT_READY
            for issued, words in landed:
                self._land(warp, issued, words)
            self.mbarriers.state.events += 1  # a warp went on: progress for the scheduler
        elif isinstance(op, thread.WgmmaCommitOp):
            state.commit(op, warp)
            self.mbarriers.state.events += 1  # a warp waiting on this group may go on
        elif isinstance(op, thread.WgmmaFenceOp):
            state.fence(op, warp)
        else:
            live = np.flatnonzero(self._rows(scratch, 1)[0]).tolist()
            if isinstance(op, thread.FenceProxyAsyncOp):
                state.proxy_fence([warp * LANES + lane for lane in live])
            else:
                state.access(op, warp, warp * LANES + (live[0] if live else 0))
        return 0

    def _land(self, warp: int, issued: wgmma.Issued, words: np.ndarray) -> None:
        """D's words into the frame slots of each output's web (components little-endian)."""
        frame = self.frames[warp]
        for j, web in enumerate(issued.out_webs):
            for i, (slot, ty) in enumerate(self.web_slots[web]):
                width = _WIDTH.get(ty) or int(ty[1:])
                part = (words[:, j] >> np.uint64(i * width)) & np.uint64((1 << width) - 1)
                raw = part.astype(f"<u{width // 8}").view(np.uint8)
                frame[slot : slot + raw.size] = raw
