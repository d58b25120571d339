"""TMA loads for the native backend: the warp code's calls (cutec/cpu/codegen_tma.py).

The warp-op hook runs each live lane's load as the interpreter's thread does
(reference_tma.py), with the same model (`cutec.cpu.tma`): `tma.issue` checks the
load and reads the box; its destination bytes are noted in the shared-memory
shadow as a cp.async store (pending) and hold 0xFF bytes until the load lands,
which `cutec.cpu.mbarrier.Mbarriers.async_tx` does at a wait on its mbarrier (the
landed bytes are async-proxy data: a wgmma reads them with no proxy fence). A
read of the bytes before is reported by the warp code's shadow check, in the
words of `tma.PendingLoads` (`message`).
"""

from __future__ import annotations

import ctypes

import numpy as np

from cutec.atoms.family import Family
from cutec.cpu import checks, tma
from cutec.cpu.codegen_tma import scratch_rows
from cutec.cpu.lanes import INFO_EPOCH, INFO_START, LANES, OFFSET_BITS
from cutec.cpu.native_mbarrier import NativeMbarriers
from cutec.cpu.native_wgmma import NativeWgmma
from cutec.ir.core import Operation
from cutec.ir.dialects import thread


class NativeTma:
    """The TMA loads of one run (its CTAs one after another). `maps` are the kernel's
    bound maps in ``tensor_maps`` order (a ``thread.tensor_map`` value is an index);
    buffers from `num_pointer_args` on are shared memory."""

    def __init__(self, maps: list[tma.BoundMap], buffers: list[np.ndarray], names: list[str],
                 num_pointer_args: int, shadows: dict[int, checks.SharedShadow],
                 mbarriers: NativeMbarriers, wgmma: NativeWgmma | None) -> None:  # fmt: skip
        self.maps, self.buffers, self.names = maps, buffers, names
        self.num_pointer_args, self.shadows, self.mbarriers = num_pointer_args, shadows, mbarriers
        self.wgmma = wgmma  # whose shared-memory reads a landed box is async-proxy data for
        self.pending = tma.PendingLoads()  # by buffer id

    def reset(self) -> None:
        """A new CTA: the loads the last one never waited for are dropped, and so are
        their pending marks in the shadows (which live across CTAs)."""
        for buf, loads in self.pending.loads.items():
            for load in loads:
                for first, n in load.chunks() if buf in self.shadows else ():
                    self.shadows[buf].land(first, n)
        self.pending = tma.PendingLoads()

    @staticmethod
    def handles(op: Operation) -> bool:
        """Whether the warp-op hook's call for `op` is this module's."""
        return isinstance(op, thread.AtomOp) and op.family() is Family.TMA_LOAD

    def run(self, op: Operation, warp: int, scratch: int) -> int:
        """Issue `op` in the live lanes of `warp`, in lane order (`scratch`: the rows
        codegen_tma stores)."""
        assert isinstance(op, thread.AtomOp)
        rows = scratch_rows(op)
        raw = (ctypes.c_int64 * (rows * LANES)).from_address(scratch)
        table = np.ctypeslib.as_array(raw).reshape(rows, LANES)
        for lane in np.flatnonzero(table[-1]).tolist():
            self._issue(op, warp, lane, [int(x) for x in table[:, lane]])
        return 0

    def _issue(self, op: thread.AtomOp, warp: int, lane: int, column: list[int]) -> None:
        ptr, index, *coords, bar_buf, bar_off, _ = column
        # A pointer is (buffer id << OFFSET_BITS) + its byte offset, a signed field.
        off = ptr & ((1 << OFFSET_BITS) - 1)
        off -= (off >> (OFFSET_BITS - 1)) << OFFSET_BITS
        buf = (ptr - off) >> OFFSET_BITS
        if not 0 <= buf < len(self.buffers):
            raise self.mbarriers.error("the TMA destination is a pointer into no buffer", op,
                                       warp, lane)  # fmt: skip
        dst = self.buffers[buf]
        m = self.maps[index] if 0 <= index < len(self.maps) else None
        try:
            load = tma.issue(op, m, coords, self.names[buf], buf >= self.num_pointer_args,
                             dst.size, off)  # fmt: skip
        except tma.TmaError as e:
            raise self.mbarriers.error(e, op, warp, lane) from None
        shadow = self.shadows.get(buf)
        for first, n in load.chunks() if shadow is not None else ():
            self._note(op, warp, lane, buf, shadow, first, n)
        load.poison(dst)
        self.pending.add(buf, load)

        def land() -> None:
            load.land(dst, shadow)
            if self.wgmma is not None and shadow is not None:
                for first, n in load.chunks():  # the async proxy wrote it: read unfenced
                    self.wgmma.state.proxy.async_write(shadow, first, n)
            self.pending.remove(buf, load)

        self.mbarriers.async_tx(op, warp, lane, bar_buf, bar_off, load.nbytes, land)

    def _note(self, op: Operation, warp: int, lane: int, buf: int, shadow: checks.SharedShadow,
              first: int, n: int) -> None:  # fmt: skip
        """The shadow's check and record of the load's write of bytes first..first+n-1
        (whole entries of the shadow: a TMA writes 16-byte chunks)."""
        unit = shadow.unit
        assert first % unit == 0 and n % unit == 0, (first, n, unit)
        info = self.mbarriers.infos[warp]
        epoch, start = int(info[INFO_EPOCH]), int(info[INFO_START])
        failed = shadow.access(first // unit, n // unit, warp * LANES + lane, checks.ASYNC,
                               epoch, start)  # fmt: skip
        if failed is not None:
            code, entry, other = failed
            message = self.message(code, checks.ASYNC, entry * unit, buf, other, warp)
            raise self.mbarriers.error(message, op, warp, lane)

    def message(self, code: int, kind: int, byte: int, buf: int, other: int, warp: int) -> str:
        """The report of a failed shared-memory check (`checks.shared_message`), in the
        words of the pending load when it is a read of a TMA load's bytes before it landed."""
        name = self.names[buf]
        pending = self.pending.message(buf, name, byte, checks.kind_name(kind))
        if code == checks.PENDING_ACCESS and pending is not None:
            return pending
        block = tuple(int(x) for x in self.mbarriers.infos[warp, 3:6])
        return checks.shared_message(code, kind, byte, name, other, block)  # type: ignore[arg-type]
