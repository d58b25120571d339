"""The reference interpreter's TMA loads (a TMA_LOAD atom; the model, shared with the
native backend, is cutec/cpu/tma.py).

One thread issues ``cp.async.bulk.tensor`` (`tma.issue`): the box is read from global
memory when it is issued and lands in shared memory, swizzled, when a wait on its
mbarrier finds its bytes counted toward the phase (`cutec.cpu.mbarrier.Mbarriers.async_tx`):
as late as the GPU may land it. Until then its bytes hold 0xFF (NaN) and, with the
shared-memory checks, are pending as a cp.async's are: a read of them is reported,
naming the load (`tma.PendingLoads`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cutec.cpu import checks, tma
from cutec.cpu.reference_memory import Pointer
from cutec.ir.dialects.thread_tma import TensorMapOp
from cutec.ir.traits import AddressSpace

if TYPE_CHECKING:
    import numpy as np

    from cutec.cpu.reference import _Cta
    from cutec.cpu.reference_memory import AccessError
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
            load.land(buf.data, self.cta.shadows.get(id(buf)))
            self._async_written(buf, load.chunks())
            self.cta.tma_pending.remove(id(buf), load)

        bar: Pointer = self.env[op.args[-1]]
        _, raw = self._mbarrier(op, operand=op.args[-1])
        key = (id(bar.buffer), bar.offset)
        self._mbarrier_call(op, self.cta.mbarriers.async_tx, key, raw, load.nbytes, land)

    def _async_written(self, buf: Any, chunks: list[tuple[int, int]]) -> None:
        """The landed box was written by the async proxy: a wgmma may read it unfenced."""
        state = self.cta.wgmma
        if state is None:
            return
        for i, e in enumerate(self.cta.window):
            if self.cta.shared.get(e.op) is buf:
                for first, n in chunks:
                    state.async_written(i, first, n)

    def tensor_map(self, op: TensorMapOp) -> None:
        self.env[op.result] = self.cta.maps[op.param.value]


# Handlers: op class -> method name (the load is a TMA_LOAD atom's rule, by its family).
TMA_HANDLERS: dict[type[Operation], str] = {TensorMapOp: "tensor_map"}
