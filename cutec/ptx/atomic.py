"""Atomics and fences → PTX (cutec/ir/dialects/thread_atomic.py, ``gpu.fence``).

Every form names its memory order and scope, which PTX ISA 6.0 and sm_70 introduced
(cutec emits for sm_80 and sm_90a only)::

    atom.relaxed.gpu.global.add.u32 %r2, [%rd1], %r1;   // thread.atomic_rmw
    red.release.gpu.global.add.f32 [%rd1], %f1;         // ... whose old value is unused
    ld.acquire.gpu.global.s32 %r3, [%rd1];              // thread.atomic_load
    st.release.gpu.global.s32 [%rd1], %r3;              // thread.atomic_store
    fence.acq_rel.gpu;                                  // gpu.fence

The type suffix is the kind's (`RMW_SUFFIX`): add takes .u32/.u64 (the bits of a
signless integer wrap the same) and .f32/.f64, max and min .s32/.s64 (signed, as
the language's integers compare), exch .b32/.b64. ``red`` has no exch and no
acquire: an unused result of those stays an ``atom`` into a scratch register.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cutec.ir.core import Operation
from cutec.ir.dialects import gpu, thread

if TYPE_CHECKING:
    from cutec.ptx.emitter import KernelEmitter
    from cutec.ptx.rules import Rule
    from cutec.ptx.tables import PtxType

# kind -> the PtxType suffix its atom/red takes, for integers and for floats.
RMW_SUFFIX: dict[str, tuple[str, str | None]] = {
    "add": ("u", "f"),
    "max": ("s", None),
    "min": ("s", None),
    "exch": ("b", "b"),
}
RED_SEMANTICS = ("relaxed", "release")  # red's .sem (it returns nothing to acquire with)


def _suffix(ctx: KernelEmitter, op: Operation, kind: str, t: PtxType) -> str:
    integer, floating = RMW_SUFFIX[kind]
    field = floating if t.f is not None else integer
    suffix = getattr(t, field) if field is not None else None
    if suffix is None or t.nbytes not in (4, 8):
        raise ctx.error(op, f"atom.{kind} has no form for {t.ir}")
    return suffix


def _rmw(ctx: KernelEmitter, op: Operation) -> None:
    """``atom.<sem>.<scope>.global.<kind>.<type> %d, [%a], %b;``, or ``red`` without %d."""
    assert isinstance(op, thread.AtomicRmwOp)
    kind, sem, scope = op.kind.value, op.sem.value, op.scope.value
    t = ctx.ptype(op.value, op)
    suffix = _suffix(ctx, op, kind, t)
    where = f"{sem}.{scope}.global.{kind}.{suffix}"
    addr, value = ctx.reg(op.ptr), ctx.reg(op.value)
    if not op.result.uses and kind != "exch" and sem in RED_SEMANTICS:
        ctx.emit(f"red.{where} [{addr}], {value};")
        return
    old = ctx.define(op.result, op) if op.result.uses else ctx.temp(t.reg)
    ctx.emit(f"atom.{where} {old}, [{addr}], {value};")


def _load(ctx: KernelEmitter, op: Operation) -> None:
    """``ld.<sem>.<scope>.global.<type> %d, [%a];``."""
    assert isinstance(op, thread.AtomicLoadOp)
    t = ctx.ptype(op.result, op)
    where = f"{op.sem.value}.{op.scope.value}.global.{t.mem}"
    ctx.emit(f"ld.{where} {ctx.define(op.result, op)}, [{ctx.reg(op.ptr)}];")


def _store(ctx: KernelEmitter, op: Operation) -> None:
    """``st.<sem>.<scope>.global.<type> [%a], %v;``."""
    assert isinstance(op, thread.AtomicStoreOp)
    t = ctx.ptype(op.value, op)
    where = f"{op.sem.value}.{op.scope.value}.global.{t.mem}"
    ctx.emit(f"st.{where} [{ctx.reg(op.ptr)}], {ctx.reg(op.value)};")


def _fence(ctx: KernelEmitter, op: Operation) -> None:
    """``fence.<sem>.<scope>;``."""
    assert isinstance(op, gpu.FenceOp)
    ctx.emit(f"fence.{op.sem.value}.{op.scope.value};")


ATOMIC_RULES: dict[type[Operation], Rule] = {
    thread.AtomicRmwOp: _rmw,
    thread.AtomicLoadOp: _load,
    thread.AtomicStoreOp: _store,
    gpu.FenceOp: _fence,
}
