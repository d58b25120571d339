"""Synchronisation builtins for the IR builder: barriers, cp.async groups, wgmma batches.

CTA barriers and cp.async group fences are the thread dialect's ops; the
wgmma batch brackets (warpgroup_arrive / commit_batch / wait), the operand
fence and the async-proxy fence are the cute dialect's (`cute_sync`).

Plain functions ``(ctx, args, kwargs, node)`` of the build context `ctx`,
registered in builtins.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cutec.frontend import ast
from cutec.frontend.build_tensors import tensor_arg
from cutec.frontend.static_eval import arity, error, require_int
from cutec.ir import types as T
from cutec.ir.attributes import IntegerAttr
from cutec.ir.dialects import cute as C
from cutec.ir.dialects import gpu, thread
from cutec.target import AddressSpace

if TYPE_CHECKING:
    from cutec.frontend.context import BuildContext


def b_sync(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> None:
    arity("sync", args, 0, 0, node)
    ctx.emit(gpu.BarrierOp(), node)


def b_cp_async_fence(
    ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> None:
    arity("cp_async_fence", args, 0, 0, node)
    here = ctx.ir.point.block if ctx.ir.point is not None else None
    tokens = [t for t in ctx.pending_tokens if t.owner.parent is here]
    ctx.pending_tokens = [t for t in ctx.pending_tokens if t not in tokens]
    ctx.emit(thread.CpAsyncCommitOp(tokens), node)


def b_cp_async_wait(
    ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> None:
    arity("cp_async_wait", args, 1, 1, node)
    n = require_int(args[0], node.args[0], "the number of pending cp.async groups")
    if n < 0:
        raise error(f"cp_async_wait needs a non-negative count, got {n}", node.args[0])
    op = thread.CpAsyncWaitOp([], n)
    op.attributes["pending"] = IntegerAttr(n, T.i32)
    ctx.emit(op, node)


def b_warpgroup_arrive(
    ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> None:
    arity("warpgroup_arrive", args, 0, 0, node)
    ctx.emit(C.WarpgroupArriveOp(), node)


def b_warpgroup_commit_batch(
    ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> None:
    arity("warpgroup_commit_batch", args, 0, 0, node)
    ctx.emit(C.WarpgroupCommitBatchOp(), node)


def b_warpgroup_wait(
    ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> None:
    arity("warpgroup_wait", args, 1, 1, node)
    n = require_int(args[0], node.args[0], "the number of pending wgmma batches")
    if not 0 <= n <= 7:
        raise error(
            f"warpgroup_wait takes a count between 0 and 7 (wgmma.wait_group), got {n}",
            node.args[0],
        )
    ctx.emit(C.WarpgroupWaitOp(n), node)


def b_warpgroup_fence_operand(
    ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> None:
    arity("warpgroup_fence_operand", args, 1, 1, node)
    t = tensor_arg(args[0], node.args[0], "warpgroup_fence_operand's argument")
    if t.space is not AddressSpace.REGISTER:
        raise error(
            f"warpgroup_fence_operand fences registers, not a {t.space.memory} tensor",
            node.args[0],
        )
    ctx.emit(C.WarpgroupFenceOperandOp(t.value), node)


def b_fence_view_async_shared(
    ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> None:
    arity("fence_view_async_shared", args, 0, 0, node)
    ctx.emit(C.FenceViewAsyncSharedOp(), node)
