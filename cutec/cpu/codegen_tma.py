"""Warp code of TMA loads (``thread.tensor_map`` and a TMA_LOAD atom; the semantics and
checks are `cutec.cpu.tma`'s, run by the warp-op hook, `cutec.cpu.native_tma`).

* ``thread.tensor_map "A_map"`` is the map's index in the kernel's ``tensor_maps`` (a
  constant): the runner binds the maps in that order.
* The load checks its live lanes' mbarrier addresses (bounds, 8-byte alignment, as
  the mbarrier ops do), stores its operands in rows of the warp's scratch area (the
  destination pointer, the map, the coordinates innermost first as i64, the
  mbarrier's buffer ids and byte offsets, the live mask) and calls the hook, which
  issues each live lane's load in lane order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from cutec.atoms.family import Family
from cutec.cpu.codegen_mbarrier import call_warp_hook
from cutec.cpu.codegen_ops import _address_parts
from cutec.cpu.lanes import ERR_LOAD, Loc, splat, vec
from cutec.ir.core import Operation
from cutec.ir.dialects import thread
from cutec.ir.dialects.thread_tma import TensorMapOp, tensor_map_names

if TYPE_CHECKING:
    from cutec.cpu.codegen import _Gen


def scratch_rows(op: thread.AtomOp) -> int:
    """Scratch rows a TMA load uses: its operands but the mbarrier, the mbarrier's
    buffer ids and offsets, the live mask (`cutec.cpu.native_tma` reads them)."""
    return len(op.args) + 2


def tma_rows(kernel: Operation) -> int:
    """The scratch rows the kernel's TMA loads need (0: it has none)."""
    loads = [op for op in kernel.walk_type(thread.AtomOp) if op.family() in TMA_ATOM_CODE]
    return max((scratch_rows(op) for op in loads), default=0)


def _tensor_map(g: _Gen, op: TensorMapOp) -> None:
    index = tensor_map_names(g.kernel).index(op.param.value)
    g.alias(op.result, 0, Loc(None, splat(index, "i64"), "i64"))


def _tma_load(g: _Gen, op: thread.AtomOp) -> None:
    i64 = vec("i64")
    mask = g.mask_now()
    _, ids, off = _address_parts(g, op, op.args[-1], mask, 8, ERR_LOAD, None)
    rows = [g.get(op.args[0]), g.get(op.args[1])]
    for c in op.args[2:-1]:
        ty = g.ty(c)
        rows.append(g.get(c) if ty == "i64" else g.op(f"sext {vec(ty)} {g.get(c)} to {i64}"))
    rows += [ids, off, g.op(f"zext {vec('i1')} {mask} to {i64}")]
    for k, row in enumerate(rows):
        at = g.op(f"getelementptr [{g.collective_rows} x {i64}], ptr %wscratch, i64 0, i64 {k}")
        g.emit(f"store {i64} {row}, ptr {at}, align 64")
    call_warp_hook(g, op)


TMA_HANDLERS: dict[str, Callable[[_Gen, TensorMapOp], None]] = {
    "thread.tensor_map": _tensor_map,
}
# The native backend's rule for the TMA atom families, by family (with codegen_ops's
# `_THREAD_ATOM_CODE`, the one-thread families it runs).
TMA_ATOM_CODE: dict[Family | None, Callable[[_Gen, thread.AtomOp], None]] = {
    Family.TMA_LOAD: _tma_load,
}
