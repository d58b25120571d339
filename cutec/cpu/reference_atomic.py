"""The reference interpreter's atomics and fences (cutec/ir/dialects/thread_atomic.py).

CTAs run one after another and a CTA's threads one at a time between barriers, so
an atomic read-modify-write is a read and a write with nothing between: the
threads' updates are applied in the order the threads run (one valid
serialisation; the native backend applies a warp's lanes in lane order). Each is
checked as an access (bounds, alignment, the buffer's space) and traced with the
kind "atomic"; an atomic load or store is a checked load or store. Global memory
has no race check, so two atomics of one address are never reported. A fence
orders nothing more here: every access is already done when the next one starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cutec.cpu.reference_memory import Pointer, decode, encode
from cutec.ir.dialects import gpu, thread
from cutec.ir.dialects.arith_fold import int_value, round_float
from cutec.ir.types import FloatType, Type

if TYPE_CHECKING:
    from cutec.ir.core import Operation, Value


def apply_rmw(kind: str, old: Any, value: Any, t: Type) -> Any:
    """The new value of an atomic `kind` (add, max, min, exch) on `old`: integers wrap
    and compare signed (their stored form), floats round to `t`."""
    if kind == "exch":
        return value
    if kind == "add":
        if isinstance(t, FloatType):
            return round_float(old + value, t)
        return int_value(old + value, t)
    return max(old, value) if kind == "max" else min(old, value)


class AtomicOps:
    """The atomic and fence handlers of a reference thread (mixed into its class)."""

    if TYPE_CHECKING:
        env: dict[Value, Any]

        def _check(self, op: Operation, p: Pointer, nbytes: int, kind: str) -> None: ...
        def read(self, op: Operation, p: Pointer, t: Type) -> Any: ...
        def write(self, op: Operation, p: Pointer, t: Type, value: Any) -> None: ...

    def atomic_rmw(self, op: thread.AtomicRmwOp) -> None:
        p: Pointer = self.env[op.ptr]
        t = op.value.type
        nbytes = thread.access_bytes(t)
        self._check(op, p, nbytes, "atomic")
        raw = p.buffer.data[p.offset : p.offset + nbytes]
        old = decode(raw, t)
        raw[:] = encode(apply_rmw(op.kind.value, old, self.env[op.value], t), t)
        self.env[op.result] = old

    def atomic_load(self, op: thread.AtomicLoadOp) -> None:
        self.env[op.result] = self.read(op, self.env[op.ptr], op.result.type)

    def atomic_store(self, op: thread.AtomicStoreOp) -> None:
        self.write(op, self.env[op.ptr], op.value.type, self.env[op.value])

    def fence(self, op: gpu.FenceOp) -> None:
        pass


# op class -> the method of `AtomicOps` that runs it (reference.py's handler table).
ATOMIC_HANDLERS: dict[type, str] = {
    thread.AtomicRmwOp: "atomic_rmw",
    thread.AtomicLoadOp: "atomic_load",
    thread.AtomicStoreOp: "atomic_store",
    gpu.FenceOp: "fence",
}
