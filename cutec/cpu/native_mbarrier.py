"""mbarriers for the native backend: the warp code's calls (cutec/cpu/codegen_mbarrier.py).

The hook runs `cutec.cpu.mbarrier` for each live lane in lane order, on the
mbarrier's bytes in its shared buffer; a wait returns `NOT_READY` when some live
lane's phase has not completed (the warp then yields), and notes what the warp
waits on for a deadlock report. Each completed phase starts a new interval of
the race check: the epoch in every warp's ``info`` grows by one.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from cutec.cpu.checks import tid3
from cutec.cpu.codegen_mbarrier import NOT_READY
from cutec.cpu.lanes import INFO_EPOCH, LANES
from cutec.cpu.mbarrier import INIT_FENCES, MbarrierError, Mbarriers, Waiting
from cutec.cpu.native_async import AsyncCopies
from cutec.cpu.reference_memory import AccessError
from cutec.ir.core import Operation
from cutec.ir.dialects import thread


class NativeMbarriers:
    """The mbarrier state of one run (its CTAs one after another)."""

    def __init__(self, buffers: list[np.ndarray], names: list[str], copies: AsyncCopies,
                 infos: np.ndarray) -> None:  # fmt: skip
        self.buffers, self.names, self.copies, self.infos = buffers, names, copies, infos
        self.state = Mbarriers(self._phase)
        self.waiting: dict[int, Waiting] = {}  # warp -> what it waits on, at its last wait

    def _phase(self) -> None:
        self.infos[:, INFO_EPOCH] += 1

    def reset(self) -> None:
        self.state.reset()
        self.waiting = {}

    def run(self, op: Operation, warp: int, table: np.ndarray) -> int:
        """Run `op` for the live lanes of `warp` (`table`: buffer ids, byte offsets,
        operand, live mask, as rows of 32); 0, or NOT_READY at an unsatisfied wait."""
        ready = 0
        for lane in np.flatnonzero(table[3]).tolist():
            buf, off, value = (int(x) for x in table[:3, lane])
            try:
                ready |= self._lane(op, warp, lane, buf, off, value)
            except MbarrierError as e:
                raise self.error(e, op, warp, lane, f" (byte {off} of {self.names[buf]})") from None
        return ready

    def tid(self, warp: int, lane: int) -> tuple[int, int, int]:
        block = tuple(int(x) for x in self.infos[warp, 3:6])
        return tid3(warp * LANES + lane, block)  # type: ignore[arg-type]

    def error(self, e: object, op: Operation, warp: int, lane: int, where: str = ""
              ) -> AccessError:  # fmt: skip
        """The report of `e` (an exception or a message) at `op` in `lane` of `warp`
        (`where`: appended to it)."""
        block_id = tuple(int(x) for x in self.infos[warp, 0:3])
        return AccessError(f"{e}{where}", op, self.tid(warp, lane), block_id)  # type: ignore[arg-type]

    def fence(self, warp: int, lanes: list[int]) -> None:
        """`lanes` of `warp` ran an init fence (`Mbarriers.fence`)."""
        for lane in lanes:
            self.state.fence(self.tid(warp, lane))

    def async_tx(self, op: Operation, warp: int, lane: int, buf: int, off: int, nbytes: int,
                 land: Callable[[], None]) -> None:  # fmt: skip
        """A TMA load's transaction of `nbytes` on the mbarrier at byte `off` of buffer
        `buf`, issued by `lane` of `warp` (`Mbarriers.async_tx`; `land` lands it)."""
        try:
            self.state.check_published((buf, off), self.tid(warp, lane))
            self.state.async_tx((buf, off), self.buffers[buf][off : off + 8], nbytes, land)
        except MbarrierError as e:
            raise self.error(e, op, warp, lane, f" (byte {off} of {self.names[buf]})") from None

    def _lane(self, op: Operation, warp: int, lane: int, buf: int, off: int, value: int) -> int:
        tid = self.tid(warp, lane)
        if isinstance(op, INIT_FENCES):
            self.state.fence(tid)
            return 0
        raw = self.buffers[buf][off : off + 8]
        if isinstance(op, thread.MbarrierInitOp):
            self.state.init(raw, value)
            self.state.initialised((buf, off), tid, warp)
            return 0
        self.state.check_published((buf, off), tid)
        if isinstance(op, thread.MbarrierArriveOp):
            self.state.arrive(raw)
        elif isinstance(op, thread.MbarrierExpectTxOp):
            self.state.expect_tx(raw, value)
        elif isinstance(op, thread.MbarrierArriveExpectTxOp):
            self.state.arrive_expect_tx(raw, value)
        elif isinstance(op, thread.CpAsyncMbarrierArriveOp):
            taken = self.copies.take(warp, lane)

            def land(taken: list = taken) -> None:
                for copy in taken:
                    self.copies.land(copy)

            self.state.async_arrival((buf, off), raw, land)
        elif not self.state.ready((buf, off), raw, value & 1):
            self.waiting[warp] = Waiting(op, self.names[buf], off, value & 1)
            return NOT_READY
        return 0
