"""TMA's tensor maps and bulk async-groups → PTX (cutec/ir/dialects/thread_tma.py).

A map is a kernel parameter passed by value (``.param .align 64 .b8
k_param_N[128]``, declared by the emitter after the arguments); a TMA copy takes
its generic address (PTX ISA, cp.async.bulk.tensor: the map may live in the
param space), which ``cvta.param`` (PTX ISA 7.7) makes::

    mov.b64 %rd1, k_param_3;
    cvta.param.u64 %rd2, %rd1;

The copy itself is a ``thread.atom`` rendered from its TMA atom's template (a store:
``cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd2, {%r1, %r2}], [%r3];``).
A store's bulk async-group ops are one instruction each (PTX ISA 8.0, sm_90), from
`BULK_GROUP_PTX`::

    cp.async.bulk.commit_group;
    cp.async.bulk.wait_group.read 0;
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cutec.ir.core import Operation
from cutec.ir.dialects import thread
from cutec.target import Feature

if TYPE_CHECKING:
    from cutec.ptx.emitter import KernelEmitter
    from cutec.ptx.rules import Rule


def _tensor_map(ctx: KernelEmitter, op: Operation) -> None:
    assert isinstance(op, thread.TensorMapOp)
    if not ctx.target.has(Feature.TMA):
        raise ctx.error(op, f"TMA tensor maps need sm_90 (the target is {ctx.target})")
    param = ctx.temp("b64")
    ctx.emit(f"mov.b64 {param}, {ctx.tensor_map(op.param.value)};")
    ctx.emit(f"cvta.param.u64 {ctx.define(op.result, op)}, {param};")


# The bulk async-group ops' PTX; the wait's fields: ``.read`` or nothing, and its count.
BULK_GROUP_PTX: dict[type[Operation], str] = {
    thread.BulkCommitOp: "cp.async.bulk.commit_group;",
    thread.BulkWaitOp: "cp.async.bulk.wait_group{read} {pending};",
}


def _bulk_group(ctx: KernelEmitter, op: Operation) -> None:
    text = BULK_GROUP_PTX[type(op)]
    if isinstance(op, thread.BulkWaitOp):
        text = text.format(read=".read" if op.read is not None else "", pending=op.pending.value)
    if not ctx.target.has(Feature.TMA):
        raise ctx.error(op, f"{text.split()[0]} needs sm_90 (the target is {ctx.target})")
    ctx.emit(text)


TMA_RULES: dict[type[Operation], Rule] = {
    thread.TensorMapOp: _tensor_map,
    thread.BulkCommitOp: _bulk_group,
    thread.BulkWaitOp: _bulk_group,
}
