"""mbarriers, named barriers, cluster barriers and distributed shared memory for the
IR builder.

An mbarrier is an s64 element of a shared tensor (``bars = smem s64[STAGES]``: CuTe's
``uint64_t`` barrier words), passed as the element itself: ``mbarrier_arrive(bars[s])``
(the call gives it as `S.ElementRef`, nothing read). Its ops are the cute dialect's
(cutec/ir/dialects/cute_mbarrier.py); named barriers, cluster barriers and the init
fence are the thread dialect's (cutec/ir/dialects/thread_barrier.py). Every misuse
is one located error: an mbarrier not in shared memory, a count outside
1..2^20-1, expect_tx before sm_90, a named barrier's id outside 1..15 or a count
not a multiple of 32, a cluster barrier before sm_90 or without a cluster clause;
``map_shared_rank(t, rank)`` (another CTA's shared memory: `C.MapSharedRankOp`) of a
tensor not in shared memory, before sm_90, without a cluster clause, or to a
compile-time rank outside the cluster.

Plain functions ``(ctx, args, kwargs, node)`` of the build context `ctx`, registered
in builtins.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cutec.frontend import ast
from cutec.frontend import scope as S
from cutec.frontend.build_fragments import convert
from cutec.frontend.build_tensors import element_index, tensor_arg
from cutec.frontend.static_eval import arity, describe, error, is_static, require_int
from cutec.ir import types as T
from cutec.ir.attributes import DenseArrayAttr
from cutec.ir.core import Operation, Value
from cutec.ir.dialects import cute as C
from cutec.ir.dialects import thread
from cutec.layout import size
from cutec.target import AddressSpace, Feature

if TYPE_CHECKING:
    from cutec.frontend.context import BuildContext

Build = Callable[["BuildContext", list[Any], dict[str, Any], ast.Call], Any]

MAX_ARRIVALS = (1 << 20) - 1  # mbarrier.init's count: 1 .. 2^20 - 1 arrivals per phase
MAX_TX = (1 << 20) - 1  # a transaction count: 0 .. 2^20 - 1 bytes


def _arity(name: str, args: list[Any], kwargs: dict[str, Any], n: int, node: ast.Call) -> None:
    """Exactly `n` positional arguments and no keywords."""
    if kwargs:
        raise error(f"{name} takes no keyword arguments", node)
    arity(name, args, n, n, node)


def mbarrier_operand(ctx: BuildContext, name: str, v: Any, node: ast.Call) -> tuple[Value, Value]:
    """The mbarrier `v` names: (its tensor, the element's linear index)."""
    at = node.args[0] if node.args else node
    if not isinstance(v, S.ElementRef):
        raise error(
            f"{name} takes an mbarrier, an element bars[i] of an smem s64 tensor, "
            f"not {describe(v)}",
            at,
        )
    t = v.tensor
    if t.space is not AddressSpace.SHARED or t.element != T.i64:
        raise error(
            f"an mbarrier is an element of an smem s64 tensor (bars = smem s64[N]), not of "
            f"a {t.space.memory} {T.dtype_name(t.element)} tensor",
            at,
        )
    if any(i is None or isinstance(i, tuple) for i in v.indices):
        raise error(f"{name} takes one mbarrier: index bars with integers, not a slice", at)
    (i,) = v.indices if len(v.indices) == 1 else (None,)
    n = size(t.layout)
    if i is not None and is_static(i) and is_static(n) and not 0 <= int(i) < int(n):
        raise error(f"mbarrier {i} is outside the {n} of this tensor", v.node.indices[0])
    index = element_index(ctx, t, list(v.indices), v.node)
    return t.value, index.value


def _i32(ctx: BuildContext, v: Any, at: ast.Node, what: str, lo: int, hi: int) -> Value:
    """`v` as an i32 operand: a compile-time integer in lo..hi, or a run-time integer."""
    integer = isinstance(v, S.Runtime) and isinstance(v.type, T.IntegerType | T.IndexType)
    if isinstance(v, bool) or not (is_static(v) or integer):
        raise error(f"{what} is an integer, not {describe(v)}", at)
    if is_static(v) and not lo <= int(v) <= hi:
        raise error(f"{what} must be {lo}..{hi}, got {v}", at)
    return convert(ctx, T.i32, [v], at).value  # type: ignore[arg-type]


def _needs(ctx: BuildContext, feature: Feature, what: str, node: ast.Node) -> None:
    if not ctx.target.has(feature):
        raise error(f"{what} needs sm_90; the target is {ctx.target}", node)


def b_mbarrier_init(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
                    ) -> None:  # fmt: skip
    _arity("mbarrier_init", args, kwargs, 2, node)
    t, i = mbarrier_operand(ctx, "mbarrier_init", args[0], node)
    what = "mbarrier_init's count (arrivals per phase)"
    count = _i32(ctx, args[1], node.args[1], what, 1, MAX_ARRIVALS)
    ctx.emit(C.MbarrierInitOp(count, t, [i]), node)


def b_mbarrier_arrive(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
                      ) -> None:  # fmt: skip
    _arity("mbarrier_arrive", args, kwargs, 1, node)
    t, i = mbarrier_operand(ctx, "mbarrier_arrive", args[0], node)
    ctx.emit(C.MbarrierArriveOp(t, [i]), node)


def _expect_tx(name: str, op: Callable[[Value, Value, list[Value]], Operation]) -> Build:
    def build(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> None:
        _arity(name, args, kwargs, 2, node)
        t, i = mbarrier_operand(ctx, name, args[0], node)
        _needs(ctx, Feature.MBARRIER, f"{name} (mbarrier.expect_tx)", node)
        tx = _i32(ctx, args[1], node.args[1], f"{name}'s byte count", 0, MAX_TX)
        ctx.emit(op(tx, t, [i]), node)

    return build


b_mbarrier_expect_tx = _expect_tx("mbarrier_expect_tx", C.MbarrierExpectTxOp)
b_mbarrier_arrive_and_expect_tx = _expect_tx(
    "mbarrier_arrive_and_expect_tx", C.MbarrierArriveExpectTxOp
)


def b_mbarrier_wait(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
                    ) -> None:  # fmt: skip
    _arity("mbarrier_wait", args, kwargs, 2, node)
    t, i = mbarrier_operand(ctx, "mbarrier_wait", args[0], node)
    # Only the low bit is the parity; any integer phase counter may be passed.
    phase = _i32(ctx, args[1], node.args[1], "mbarrier_wait's phase", 0, 2**31 - 1)
    ctx.emit(C.MbarrierWaitOp(phase, t, [i]), node)


def b_mbarrier_init_fence(
    ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> None:
    _arity("mbarrier_init_fence", args, kwargs, 0, node)
    ctx.emit(thread.FenceMbarrierInitOp(), node)


def _named(name: str, op: Callable[[int, int], Operation]) -> Build:
    def build(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> None:
        _arity(name, args, kwargs, 2, node)
        barrier = require_int(args[0], node.args[0], f"{name}'s barrier id")
        if not 1 <= barrier <= 15:
            raise error(
                f"{name}'s barrier id must be 1..15 (barrier 0 is sync()'s), got {barrier}",
                node.args[0],
            )
        count = require_int(args[1], node.args[1], f"{name}'s thread count")
        limit = ctx.num_threads or ctx.target.threads_per_cta
        if count <= 0 or count % 32 or count > limit:
            raise error(
                f"{name}'s thread count must be a multiple of 32 (whole warps) up to "
                f"{limit}, got {count}",
                node.args[1],
            )
        ctx.emit(op(barrier, count), node)

    return build


b_named_barrier_sync = _named("named_barrier_sync", thread.NamedBarrierSyncOp)
b_named_barrier_arrive = _named("named_barrier_arrive", thread.NamedBarrierArriveOp)


def _in_cluster(ctx: BuildContext, name: str, node: ast.Node, what: str = "barrier.cluster"
                ) -> int:  # fmt: skip
    """The number of CTAs of the kernel's cluster; an error before sm_90 or without a
    cluster clause."""
    _needs(ctx, Feature.CLUSTERS, f"{name} ({what})", node)
    kernel = ctx.body_block.parent_op if ctx.body_block is not None else None
    attr = kernel.attributes.get("cluster_dim") if kernel is not None else None
    if not isinstance(attr, DenseArrayAttr):
        raise error(
            f"{name} needs the kernel's cluster clause (cluster (1, 1, 1) for a cluster of "
            "one CTA)",
            node,
        )
    n = 1
    for d in attr.values:
        n *= int(d)
    return n


def _cluster(name: str, ops: Callable[[], list[Operation]]) -> Build:
    def build(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> None:
        _arity(name, args, kwargs, 0, node)
        _in_cluster(ctx, name, node)
        for op in ops():
            ctx.emit(op, node)

    return build


b_cluster_arrive = _cluster("cluster_arrive", lambda: [thread.ClusterArriveOp()])
b_cluster_arrive_relaxed = _cluster(
    "cluster_arrive_relaxed", lambda: [thread.ClusterArriveOp(relaxed=True)]
)
b_cluster_wait = _cluster("cluster_wait", lambda: [thread.ClusterWaitOp()])
b_cluster_sync = _cluster(
    "cluster_sync", lambda: [thread.ClusterArriveOp(), thread.ClusterWaitOp()]
)


def b_map_shared_rank(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any],
                      node: ast.Call) -> S.Tensor:  # fmt: skip
    """map_shared_rank(t, rank): shared tensor t in the shared memory of the cluster's CTA
    `rank` (CuTe's cluster.map_shared_rank; mapa), a dsmem tensor of t's layout."""
    _arity("map_shared_rank", args, kwargs, 2, node)
    t = tensor_arg(args[0], node.args[0], "map_shared_rank's tensor")
    if t.space is not AddressSpace.SHARED:
        raise error(
            f"map_shared_rank maps a shared (smem) tensor, not a {t.space.memory} one",
            node.args[0],
        )
    n = _in_cluster(ctx, "map_shared_rank", node, "mapa, distributed shared memory")
    rank = args[1]
    integer = isinstance(rank, S.Runtime) and isinstance(rank.type, T.IntegerType | T.IndexType)
    if isinstance(rank, bool) or not (is_static(rank) or integer):
        raise error(f"map_shared_rank's rank is an integer, not {describe(rank)}", node.args[1])
    if is_static(rank) and not 0 <= int(rank) < n:
        raise error(
            f"rank {rank} is outside the cluster of {n} CTA{'s' if n > 1 else ''} "
            f"(ranks 0..{n - 1})",
            node.args[1],
        )
    index = convert(ctx, T.index, [rank], node.args[1]).value  # type: ignore[arg-type]
    op = ctx.emit(C.MapSharedRankOp(t.value, index), node)
    return S.Tensor(op.result, t.layout, t.element, AddressSpace.SHARED_CLUSTER)


def b_elect_one(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
                ) -> S.Runtime:  # fmt: skip
    """elect_one(): true in one lane of the warp (CuTe's elect_one_sync; elect.sync)."""
    _arity("elect_one", args, kwargs, 0, node)
    _needs(ctx, Feature.ELECT, "elect_one (elect.sync)", node)
    return S.Runtime(ctx.emit(thread.ElectOneOp(), node).result)


def _setmaxnreg(name: str, action: str) -> Build:
    def build(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> None:
        _arity(name, args, kwargs, 1, node)
        _needs(ctx, Feature.SETMAXNREG, f"{name} (setmaxnreg)", node)
        n = args[0]
        if isinstance(n, bool) or not isinstance(n, int) or n % 8 or not 24 <= n <= 256:
            raise error(f"{name} takes a compile-time register count, a multiple of 8 in "
                        f"24..256, not {describe(n)}", node.args[0])  # fmt: skip
        ctx.emit(thread.SetMaxNRegOp(action, n), node)

    build.__doc__ = f"{name}(n): setmaxnreg.{action} n"
    return build


# CUTLASS's names: a warpgroup takes registers from the CTA's pool, or gives them back.
b_warpgroup_reg_alloc = _setmaxnreg("warpgroup_reg_alloc", "inc")
b_warpgroup_reg_dealloc = _setmaxnreg("warpgroup_reg_dealloc", "dec")
