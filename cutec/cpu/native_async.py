"""cp.async for the native backend: the warp code calls back into this module.

A ``thread.cp_async`` reads its source when issued (as the interpreter does)
and keeps the bytes in its thread's open group; the destination holds 0xFF
bytes (NaN, or -1 as integers) until a ``cp_async_wait`` that covers the group
lands them, so a missing or misplaced wait changes the results even with the
checks off (and with them on, `cutec.cpu.checks` reports the access). Commit
groups are per thread: each lane of a warp has its own queue.

The warp code stores the op's lanes in its scratch area, ``[6 x <32 x i64>]``:
destination buffer ids, destination byte offsets, source host addresses,
source sizes (src-size), the live-lane mask; and calls the hook in ``info``
with (info, what, n, scratch): `ISSUE` (n: the copy's bytes), `COMMIT`, or
`WAIT` (n: the groups that may stay in flight). A Python callback per warp op
is slow next to the warp code (tens of microseconds), which is fine for the
copies of a tile; the loads and stores of the tile run natively.
"""

from __future__ import annotations

import ctypes

import numpy as np

from cutec.cpu.checks import PENDING, SharedShadow
from cutec.cpu.lanes import LANES

ISSUE, COMMIT, WAIT = 0, 1, 2
HOOK = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                        ctypes.c_void_p)  # fmt: skip

_Copy = tuple[int, int, np.ndarray]  # (buffer id, byte offset, the bytes to land)


class AsyncCopies:
    """The copies in flight of one run's CTA, per warp and lane; `address` is the hook's."""

    def __init__(self, buffers: list[np.ndarray], shadows: dict[int, SharedShadow]) -> None:
        self.buffers, self.shadows = buffers, shadows
        self.error: BaseException | None = None
        self.open: list[list[list[_Copy]]] = []  # warp -> lane -> uncommitted copies
        self.groups: list[list[list[list[_Copy]]]] = []  # warp -> lane -> committed groups
        self.fn = HOOK(self._hook)  # kept alive with this object
        self.address = ctypes.cast(self.fn, ctypes.c_void_p).value

    def reset(self, nwarps: int) -> None:
        """A new CTA: nothing in flight (copies a CTA never waited for are dropped, and
        so are their pending marks in the shadows, which live across CTAs)."""
        self.open = [[[] for _ in range(LANES)] for _ in range(nwarps)]
        self.groups = [[[] for _ in range(LANES)] for _ in range(nwarps)]
        for shadow in self.shadows.values():
            shadow.words[:, 0] &= ~PENDING

    def _hook(self, info: int, what: int, n: int, scratch: int) -> int:
        try:
            warp = ctypes.c_int64.from_address(info + 8 * 9).value
            table = np.ctypeslib.as_array((ctypes.c_int64 * (6 * LANES)).from_address(scratch))
            lanes = table.reshape(6, LANES)
            for lane in np.flatnonzero(lanes[4]).tolist():
                if what == ISSUE:
                    self._issue(warp, lane, n, *(int(x) for x in lanes[:4, lane]))
                elif what == COMMIT:
                    self.groups[warp][lane].append(self.open[warp][lane])
                    self.open[warp][lane] = []
                else:
                    self._wait(warp, lane, n)
            return 0
        except BaseException as e:
            self.error = e
            return 1

    def _issue(self, warp: int, lane: int, n: int, buf: int, off: int, src: int, size: int
               ) -> None:  # fmt: skip
        data = np.zeros(n, dtype=np.uint8)
        if size:
            data[:size] = np.frombuffer(ctypes.string_at(src, size), dtype=np.uint8)
        self.buffers[buf][off : off + n] = 0xFF  # pending: NaN until the wait
        self.open[warp][lane].append((buf, off, data))

    def _wait(self, warp: int, lane: int, pending: int) -> None:
        groups = self.groups[warp][lane]
        while len(groups) > pending:
            for copy in groups.pop(0):
                self.land(copy)

    def land(self, copy: _Copy) -> None:
        """A copy's bytes land in shared memory."""
        buf, off, data = copy
        self.buffers[buf][off : off + data.size] = data
        shadow = self.shadows.get(buf)
        if shadow is not None:
            shadow.land(off, data.size)

    def take(self, warp: int, lane: int) -> list[_Copy]:
        """A lane's copies in flight, out of its groups (which stay, emptied, so that
        waits count them as before): they land with an mbarrier arrival."""
        groups = self.groups[warp][lane]
        taken = [c for g in groups for c in g] + self.open[warp][lane]
        self.groups[warp][lane] = [[] for _ in groups]
        self.open[warp][lane] = []
        return taken
