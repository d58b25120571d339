"""The reference interpreter's TMA loads (a TMA_LOAD atom; the model is cutec/cpu/tma.py).

One thread issues ``cp.async.bulk.tensor``: the box is read from global memory when it
is issued and lands in shared memory, swizzled, when a wait on its mbarrier finds its
bytes counted toward the phase (`cutec.cpu.mbarrier.Mbarriers.async_tx`): as late as
the GPU may land it. Until then its bytes hold 0xFF (NaN) and, with the shared-memory
checks, are pending as a cp.async's are: a read of them is reported, naming the load.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from cutec.cpu import checks, tma
from cutec.cpu.reference_memory import Pointer
from cutec.ir.attributes import IntegerAttr
from cutec.ir.dialects.thread_tma import TensorMapOp
from cutec.ir.traits import AddressSpace

if TYPE_CHECKING:
    from cutec.cpu.reference import _Cta
    from cutec.cpu.reference_memory import AccessError, Buffer
    from cutec.ir.core import Operation, Value
    from cutec.ir.dialects import thread


class TmaOps:
    """The TMA handlers of a reference thread (mixed into its class)."""

    if TYPE_CHECKING:
        env: dict[Value, Any]
        cta: _Cta

        def error(self, op: Operation, message: str) -> AccessError: ...
        def _mbarrier(self, op: Operation, init: bool = False, operand: Value | None = None
                      ) -> tuple[Pointer, np.ndarray]: ...  # fmt: skip
        def _mbarrier_call(self, op: Operation, fn: Callable[..., Any], *args: Any) -> Any: ...

    def tma_box(self, op: thread.AtomOp, tmap: Value, coords: Sequence[Value], shared: Value,
                what: str) -> tuple[tma.BoundMap, list[int], Buffer, np.ndarray]:  # fmt: skip
        """A TMA copy's map, coordinates and shared side (`what`: "destination" or
        "source"), checked: the box's buffer and the shared byte address of each byte
        of the box (swizzled), in the box's order."""
        ptr: Pointer = self.env[shared]
        m = self.env[tmap]
        at_coords = [self.env[v] for v in coords]
        if not isinstance(m, tma.BoundMap):
            raise self.error(op, "the map operand is not a thread.tensor_map")
        d = m.desc
        if len(at_coords) != d.rank:
            raise self.error(op, f"{len(at_coords)} coordinates for tensor map '{m.name}' of "
                                 f"rank {d.rank}")  # fmt: skip
        bits = op.attributes.get("bits")
        if isinstance(bits, IntegerAttr) and bits.value != d.box_bits:
            raise self.error(op, f"the atom moves {bits.value // 8} bytes but the box "
                                 f"{d.box_dims} of tensor map '{m.name}' is {d.box_bytes} "
                                 "bytes")  # fmt: skip
        buf = ptr.buffer
        if not buf.space.aliases(AddressSpace.SHARED):
            raise self.error(op, f"the TMA {what} {buf.name} is not shared memory")
        if ptr.offset % tma.SHARED_ALIGN or not 0 <= ptr.offset <= buf.size - d.box_bytes:
            raise self.error(op, f"the TMA {what}, byte {ptr.offset} of {buf.name} "
                                 f"({buf.size} bytes), must be {tma.SHARED_ALIGN}-byte aligned "
                                 f"and hold the {d.box_bytes}-byte box")  # fmt: skip
        try:
            m.check()
        except tma.TmaError as e:
            raise self.error(op, str(e)) from None
        at = tma.swizzle(ptr.offset + np.arange(d.box_bytes), d.swizzle.span_bytes)
        end = int(at.max()) + 1
        if end > buf.size:
            raise self.error(op, f"the swizzled box reaches byte {end} of {buf.name}")
        return m, at_coords, buf, at

    def tma_load(self, op: thread.AtomOp) -> None:
        """``cp.async.bulk.tensor`` global -> shared (operands: the shared destination,
        the map, the coordinates innermost first, the mbarrier): the box is read now and
        lands, poisoned until then, when a wait on the mbarrier finds its bytes counted
        toward the phase (`Mbarriers.async_tx`)."""
        m, coords, buf, at = self.tma_box(op, op.args[1], op.args[2:-1], op.args[0],
                                          "destination")  # fmt: skip
        d = m.desc
        end = int(at.max()) + 1
        data = tma.box(m, coords)
        # 16-byte chunks are permuted: note each chunk's bytes (one run without swizzle)
        chunks = [(int(at[k]), min(16, d.box_bytes - k)) for k in range(0, d.box_bytes, 16)]
        if not d.swizzle.span_bytes:
            chunks = [(int(at[0]), d.box_bytes)]
        for first, n in chunks if self.cta.check_shared else ():
            self.cta.note_shared(self, op, buf, first, n, checks.ASYNC)
        buf.data[at] = 0xFF  # pending: NaN until the phase completes
        pending = self.cta.tma_pending.setdefault(id(buf), [])
        entry = (int(at.min()), end, op)
        pending.append(entry)

        def land() -> None:
            buf.data[at] = data
            shadow = self.cta.shadows.get(id(buf))
            if shadow is not None:
                for first, n in chunks:
                    shadow.land(first, n)
                    # the async proxy's own writes: no proxy fence before an async read
                    self.cta.proxy.async_write(shadow, first, n)
            pending.remove(entry)

        bar: Pointer = self.env[op.args[-1]]
        _, raw = self._mbarrier(op, operand=op.args[-1])
        key = (id(bar.buffer), bar.offset)
        self._mbarrier_call(op, self.cta.mbarriers.async_tx, key, raw, d.box_bytes, land)

    def tensor_map(self, op: TensorMapOp) -> None:
        self.env[op.result] = self.cta.maps[op.param.value]


# Handlers: op class -> method name (the load is a TMA_LOAD atom's rule, by its family).
TMA_HANDLERS: dict[type[Operation], str] = {TensorMapOp: "tensor_map"}
