"""mma.sync, mbarriers, wgmma and TMA for the native backend: the warp code calls back here.

The warp code (`cutec.cpu.codegen_collective`) stores the 32 lanes' input
register words of a ``thread.atom`` mma.sync in rows of its scratch area
(``[R x <32 x i64>]``, one row per register, in operand order) and calls the
hook in ``info`` with (info, op number, scratch). The hook runs
`cutec.cpu.collective.mma_words` (the atom's record and emulator, as the
interpreter does) and writes D's words to the first rows. An exception is kept
in `error` and the hook returns 1; the warp then fails and the runner raises it.
The mbarrier ops call the same hook (`cutec.cpu.native_mbarrier` runs them), and
so do the wgmma family's (`cutec.cpu.native_wgmma`), TMA loads (`cutec.cpu.native_tma`)
and ``thread.fence_proxy_async`` (an mbarrier init fence, and wgmma's proxy fence).

A call costs tens of microseconds (the ctypes callback and the emulator's numpy
steps): the loads, stores and ldmatrix of a tile run natively around it.
"""

from __future__ import annotations

import ctypes

import numpy as np

from cutec.cpu.collective import mma_words
from cutec.cpu.lanes import LANES
from cutec.cpu.native_mbarrier import NativeMbarriers
from cutec.cpu.native_tma import NativeTma
from cutec.cpu.native_wgmma import NativeWgmma
from cutec.ir.core import Operation
from cutec.ir.dialects import thread

HOOK = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p)


class WarpOps:
    """The warp-op hook of one run: `address` is what the warp code calls."""

    def __init__(self, ops: list[Operation], mbarriers: NativeMbarriers | None = None,
                 wgmma: NativeWgmma | None = None, tma: NativeTma | None = None
                 ) -> None:  # fmt: skip
        self.ops = ops  # op number -> op (the program's)
        self.mbarriers = mbarriers
        self.wgmma = wgmma
        self.tma = tma
        self.error: BaseException | None = None
        self.fn = HOOK(self._hook)  # kept alive with this object
        self.address = ctypes.cast(self.fn, ctypes.c_void_p).value

    def _hook(self, info: int, index: int, scratch: int) -> int:
        try:
            op = self.ops[index]
            warp = ctypes.c_int64.from_address(info + 8 * 9).value
            if isinstance(op, thread.FenceProxyAsyncOp):
                return self._proxy_fence(op, warp, scratch)
            if self.wgmma is not None and self.wgmma.handles(op):
                return self.wgmma.run(op, warp, scratch)
            if self.tma is not None and self.tma.handles(op):
                return self.tma.run(op, warp, scratch)
            if not isinstance(op, thread.AtomOp):
                assert self.mbarriers is not None
                raw4 = (ctypes.c_int64 * (4 * LANES)).from_address(scratch)
                return self.mbarriers.run(op, warp, np.ctypeslib.as_array(raw4).reshape(4, LANES))
            nin, nout = len(op.args), len(op.outs)
            rows = max(nin, nout)
            raw = (ctypes.c_uint64 * (rows * LANES)).from_address(scratch)
            table = np.ctypeslib.as_array(raw).reshape(rows, LANES)
            words = mma_words(op, table[:nin].T)  # (lanes, outputs)
            table[:nout] = words.T
            return 0
        except BaseException as e:
            self.error = e
            return 1

    def _proxy_fence(self, op: thread.FenceProxyAsyncOp, warp: int, scratch: int) -> int:
        """``fence.proxy.async`` in the live lanes (scratch row 0): an mbarrier init fence
        (`cutec.cpu.mbarrier`) and, in a kernel with wgmma, its proxy fence."""
        assert self.mbarriers is not None
        live = np.ctypeslib.as_array((ctypes.c_int64 * LANES).from_address(scratch))
        self.mbarriers.fence(warp, np.flatnonzero(live).tolist())
        return self.wgmma.run(op, warp, scratch) if self.wgmma is not None else 0
