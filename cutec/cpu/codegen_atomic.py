"""Warp code of the atomics and fences (cutec/ir/dialects/thread_atomic.py, ``gpu.fence``).

* ``thread.atomic_rmw``: the live lanes' addresses are checked (bounds, alignment;
  err kind ``ERR_ATOMIC``), then a loop over the 32 lanes applies each live lane's
  read-modify-write in lane order, as an LLVM ``atomicrmw`` (add / fadd, max, min,
  xchg), and gathers the old values: one valid serialisation of the warp's atomics,
  each lane seeing the updates of the lanes before it. CTAs run one after another
  and warps interleave only at barriers, so no other update comes between.
* ``thread.atomic_load`` / ``thread.atomic_store``: a checked masked gather / scatter
  of the live lanes (global memory has no race check), after / before an LLVM
  ``fence acquire`` / ``fence release`` when the op acquires / releases.
* ``gpu.fence``: an LLVM ``fence`` (``seq_cst`` for sc, ``acq_rel``): on one host
  thread it orders nothing that is not ordered already.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cutec.cpu.codegen_ops import _address, _gather, _memory_type, _scatter
from cutec.cpu.lanes import ERR_ATOMIC, ERR_LOAD, ERR_STORE, LANES, vec
from cutec.ir.core import Operation
from cutec.ir.dialects import gpu, thread

if TYPE_CHECKING:
    from cutec.cpu.codegen import _Gen

ATOMIC_HANDLERS: dict[str, object] = {}

# kind -> the atomicrmw operation for integer lanes and for float lanes.
_RMW = {"add": ("add", "fadd"), "max": ("max", None), "min": ("min", None),
        "exch": ("xchg", "xchg")}  # fmt: skip


def _rmw(g: _Gen, op: thread.AtomicRmwOp) -> None:
    """A loop over the lanes (k = 0..31): where lane k is live, ``atomicrmw`` at its
    address with its value, its old value inserted into the result."""
    ty, _, nbytes = _memory_type(op.value)
    integer, floating = _RMW[op.kind.value]
    rmw = integer if ty.startswith("i") else floating
    assert rmw is not None, f"atomic {op.kind.value} of {ty} (the verifier refuses it)"
    mask = g.mask_now()
    addr = _address(g, op, op.ptr, mask, nbytes, ERR_ATOMIC)
    values = g.get(op.value)
    enter, head, do, step, done = (g.fresh(s) for s in ("rmw", "lane", "live", "next", "rmwed"))
    k, k1, acc, acc1, acc2 = g.reg(), g.reg(), g.reg(), g.reg(), g.reg()
    g.emit(f"br label %{enter}")
    g.label(enter, keep_cache=True)
    g.emit(f"br label %{head}")
    g.label(head, keep_cache=True)
    g.emit(f"{k} = phi i32 [0, %{enter}], [{k1}, %{step}]")
    g.emit(f"{acc} = phi {vec(ty)} [zeroinitializer, %{enter}], [{acc2}, %{step}]")
    live = g.op(f"extractelement {vec('i1')} {mask}, i32 {k}")
    g.emit(f"br i1 {live}, label %{do}, label %{step}")
    g.label(do, keep_cache=True)
    at = g.op(f"extractelement {vec('ptr')} {addr}, i32 {k}")
    value = g.op(f"extractelement {vec(ty)} {values}, i32 {k}")
    old = g.op(f"atomicrmw {rmw} ptr {at}, {ty} {value} monotonic, align {nbytes}")
    g.emit(f"{acc1} = insertelement {vec(ty)} {acc}, {ty} {old}, i32 {k}")
    g.emit(f"br label %{step}")
    g.label(step, keep_cache=True)
    g.emit(f"{acc2} = phi {vec(ty)} [{acc}, %{head}], [{acc1}, %{do}]")
    g.emit(f"{k1} = add i32 {k}, 1")
    more = g.op(f"icmp ult i32 {k1}, {LANES}")
    g.emit(f"br i1 {more}, label %{head}, label %{done}")
    g.label(done, keep_cache=True)
    g.define(op.result, 0, acc2)


def _load(g: _Gen, op: thread.AtomicLoadOp) -> None:
    ty, _, nbytes = _memory_type(op.result)
    mask = g.mask_now()
    addr = _address(g, op, op.ptr, mask, nbytes, ERR_LOAD)
    g.define(op.result, 0, _gather(g, addr, ty, mask, nbytes))
    if op.sem.value == "acquire":
        g.emit("fence acquire")


def _store(g: _Gen, op: thread.AtomicStoreOp) -> None:
    ty, _, nbytes = _memory_type(op.value)
    mask = g.mask_now()
    addr = _address(g, op, op.ptr, mask, nbytes, ERR_STORE)
    if op.sem.value == "release":
        g.emit("fence release")
    _scatter(g, g.get(op.value), addr, ty, mask, nbytes)


def _fence(g: _Gen, op: Operation) -> None:
    assert isinstance(op, gpu.FenceOp)
    g.emit("fence seq_cst" if op.sem.value == "sc" else "fence acq_rel")


ATOMIC_HANDLERS.update({
    "thread.atomic_rmw": _rmw, "thread.atomic_load": _load, "thread.atomic_store": _store,
    "gpu.fence": _fence,
})  # fmt: skip
