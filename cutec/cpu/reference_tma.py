"""The reference interpreter's TMA loads (a TMA_LOAD atom; the model, shared with the
native backend, is cutec/cpu/tma.py).

One thread issues ``cp.async.bulk.tensor`` (`tma.issue`): the box is read from global
memory when it is issued and lands in shared memory, swizzled, when a wait on its
mbarrier finds its bytes counted toward the phase (`cutec.cpu.mbarrier.Mbarriers.async_tx`):
as late as the GPU may land it. Until then its bytes hold 0xFF (NaN) and, with the
shared-memory checks, are pending as a cp.async's are: a read of them is reported,
naming the load (`tma.PendingLoads`). The bytes it lands are the async proxy's own
writes: a wgmma or a TMA store reads them with no proxy fence (`checks.ProxyFences`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from cutec.cpu import checks, tma
from cutec.cpu.reference_memory import Pointer
from cutec.ir.dialects.thread_tma import TensorMapOp
from cutec.ir.traits import AddressSpace

if TYPE_CHECKING:
    import numpy as np

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
        "source"), checked (`tma.place`): the box's buffer and the shared byte of each
        byte of the box (swizzled), in the box's order."""
        ptr: Pointer = self.env[shared]
        buf = ptr.buffer
        try:
            m, signed, at = tma.place(op, self.env[tmap], [self.env[v] for v in coords],
                                      buf.name, buf.space.aliases(AddressSpace.SHARED),
                                      buf.size, ptr.offset, what)  # fmt: skip
        except tma.TmaError as e:
            raise self.error(op, str(e)) from None
        return m, signed, buf, at

    def tma_load(self, op: thread.AtomOp) -> None:
        """``cp.async.bulk.tensor`` global -> shared (operands: the shared destination,
        the map, the coordinates innermost first, the mbarrier): the box is read now and
        lands, poisoned until then, when a wait on the mbarrier finds its bytes counted
        toward the phase (`Mbarriers.async_tx`)."""
        dst: Pointer = self.env[op.args[0]]
        buf = dst.buffer
        coords = [self.env[v] for v in op.args[2:-1]]
        try:
            shared = buf.space.aliases(AddressSpace.SHARED)
            load = tma.issue(op, self.env[op.args[1]], coords, buf.name, shared, buf.size,
                             dst.offset)  # fmt: skip
        except tma.TmaError as e:
            raise self.error(op, str(e)) from None
        for first, n in load.chunks() if self.cta.check_shared else ():
            self.cta.note_shared(self, op, buf, first, n, checks.ASYNC)
        load.poison(buf.data)
        self.cta.tma_pending.add(id(buf), load)

        def land() -> None:
            shadow = self.cta.shadows.get(id(buf))
            load.land(buf.data, shadow)
            for first, n in load.chunks() if shadow is not None else ():
                # the async proxy's own writes: no proxy fence before an async read
                self.cta.proxy.async_write(shadow, first, n)
            self.cta.tma_pending.remove(id(buf), load)

        bar: Pointer = self.env[op.args[-1]]
        _, raw = self._mbarrier(op, operand=op.args[-1])
        key = (id(bar.buffer), bar.offset)
        self._mbarrier_call(op, self.cta.mbarriers.async_tx, key, raw, load.nbytes, land)

    def tensor_map(self, op: TensorMapOp) -> None:
        self.env[op.result] = self.cta.maps[op.param.value]


# Handlers: op class -> method name (the load is a TMA_LOAD atom's rule, by its family).
TMA_HANDLERS: dict[type[Operation], str] = {TensorMapOp: "tensor_map"}
