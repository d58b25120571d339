"""The builtin registry: one declaration per builtin name of the language.

Each `Builtin` says where docs/language.md documents it (`section`), what it is
in one line (`summary`), and how it is built: a function ``build(ctx, args,
kwargs, node)`` over the build context (`ctx`), or None for a name whose value
the builder gives (``thread``, ``block_dim``, ``UniversalCopy``, the layout
tags ...). The builder dispatches calls through `REGISTRY`; the "did you mean"
notes, the highlighter (pygments_lexer.py) and tests/frontend/test_builtin_registry.py,
which checks the registry against docs/language.md both ways, read it too. A
new builtin is one entry here and its line in the docs.

The build functions are plain functions of the build context, one module per
language feature: build_values.py (layouts, integers, scalars), tensor_builtins.py
(views, fragments, algorithms), build_tuples.py (tuple algebra, launch geometry),
build_fragments.py (element-wise arithmetic), build_tiled.py (atoms, TiledCopy,
TiledMMA), build_sync.py (barriers and async fences), build_barriers.py (mbarriers,
named and cluster barriers), build_atomics.py (atomics and memory fences). The
machinery they share is plain functions of the same context too: build_scalars.py
(run-time scalars), build_tensors.py (views, allocation), static_eval.py (checks of
compile-time values); context.py lists every module of the builder.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cutec.atoms.copy import copy_atoms, is_copy_template
from cutec.atoms.mma import mma_atom_named
from cutec.frontend import build_atomics as atomics
from cutec.frontend import build_barriers as barriers
from cutec.frontend import build_sync as sync
from cutec.frontend import build_tma as tma
from cutec.frontend import build_values as values
from cutec.frontend import scope as S
from cutec.frontend import tensor_builtins as tensors
from cutec.frontend.build_fragments import reduce
from cutec.frontend.build_tiled import TILED_BUILTINS
from cutec.frontend.build_tuples import GEOMETRY_BUILTINS, TUPLE_BUILTINS
from cutec.frontend.static_eval import error
from cutec.layout import LayoutLeft, LayoutRight

if TYPE_CHECKING:
    from cutec.frontend import ast
    from cutec.frontend.context import BuildContext

Build = Callable[["BuildContext", list[Any], dict[str, Any], "ast.Call"], Any]


@dataclass(frozen=True)
class Builtin:
    name: str
    section: str  # the docs/language.md section ("Layouts", "Tensors" ...)
    summary: str
    build: Build | None = None  # None: a value the builder gives the name
    # Its first argument ``t[i]`` is passed as the element (`S.ElementRef`), not read.
    takes_element: bool = False


def _algebra(name: str) -> Build:
    def build(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: Any) -> Any:
        return values.algebra_call(ctx, name, args, kwargs, node)

    return build


def _reduce(kind: str) -> Build:
    def build(ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: Any) -> Any:
        if kwargs:
            raise error(f"reduce_{kind} takes no keyword arguments", node)
        return reduce(ctx, kind, args, node)

    return build


GEOMETRY = "Indices and launch geometry"
TUPLES = "Integers and tuples"
LAYOUTS = "Layouts"
TENSORS = "Tensors"
ATOMS = "Atoms, TiledCopy, TiledMMA"
ALGORITHMS = "Algorithms"
FRAGMENTS = "Fragment arithmetic"
SYNC = "Synchronisation"
ATOMICS = "Atomics and fences"

_DECLARATIONS: tuple[Builtin, ...] = (
    # -- indices and launch geometry
    Builtin("thread", GEOMETRY, "thread.x|y|z: the thread's index in its CTA (%tid)"),
    Builtin("threadIdx", GEOMETRY, "CUDA's spelling of thread"),
    Builtin("block", GEOMETRY, "block.x|y|z: the CTA's index in the grid (%ctaid)"),
    Builtin("blockIdx", GEOMETRY, "CUDA's spelling of block"),
    Builtin("block_dim", GEOMETRY, "block_dim.x|y|z: threads per CTA (%ntid)"),
    Builtin("grid_dim", GEOMETRY, "grid_dim.x|y|z: CTAs per grid (%nctaid)"),
    *(
        Builtin(name, GEOMETRY, (fn.__doc__ or name).splitlines()[0], fn)
        for name, fn in GEOMETRY_BUILTINS.items()
    ),
    # -- integers and tuples
    Builtin("ceil_div", TUPLES, "ceil_div(a, b)", values.b_ceil_div),
    Builtin("min", TUPLES, "min(a, b), also element-wise", values.b_min),
    Builtin("max", TUPLES, "max(a, b), also element-wise", values.b_max),
    Builtin("size", TUPLES, "size(x), size(x, i): CuTe's size, size<i>", values.b_size),
    Builtin("rank", TUPLES, "rank(x): the number of modes", values.b_rank),
    Builtin("shape", TUPLES, "shape(x)", values.b_shape),
    Builtin("stride", TUPLES, "stride(x)", values.b_stride),
    Builtin("layout", TUPLES, "layout(t): a tensor's layout", values.b_layout),
    Builtin("cosize", TUPLES, "cosize(x): one past the largest offset", values.b_cosize),
    Builtin("make_shape", TUPLES, "make_shape(...): a tuple", values.b_make_shape),
    Builtin("make_stride", TUPLES, "make_stride(...): a tuple", values.b_make_shape),
    Builtin("make_coord", TUPLES, "make_coord(...): a tuple", values.b_make_shape),
    Builtin("make_tile", TUPLES, "make_tile(...): a tuple of tilers", values.b_make_shape),
    Builtin("static_assert", TUPLES, "static_assert(cond, message)", values.b_static_assert),
    *(
        Builtin(name, TUPLES, (fn.__doc__ or name).splitlines()[0], fn)
        for name, fn in TUPLE_BUILTINS.items()
        if name not in ("flatten", "filter", "upcast", "downcast")
    ),
    # -- layouts
    Builtin("make_layout", LAYOUTS, "make_layout(shape[, stride])", values.b_make_layout),
    Builtin("LayoutLeft", LAYOUTS, "column-major order for make_layout"),
    Builtin("LayoutRight", LAYOUTS, "row-major order for make_layout"),
    Builtin("swizzle", LAYOUTS, "swizzle(B, M, S): Swizzle<B,M,S>", values.b_swizzle),
    Builtin("GMMA", LAYOUTS, "GMMA.Layout_*_Atom[T]: wgmma smem layout atoms"),
    *(
        Builtin(name, LAYOUTS, f"{name}: the layout algebra's", _algebra(name))
        for name in (
            "composition",
            "complement",
            "coalesce",
            "right_inverse",
            "left_inverse",
            "logical_divide",
            "zipped_divide",
            "tiled_divide",
            "flat_divide",
            "logical_product",
            "zipped_product",
            "tiled_product",
            "blocked_product",
            "raked_product",
            "tile_to_shape",
        )
    ),
    *(
        Builtin(
            name,
            LAYOUTS,
            (TUPLE_BUILTINS[name].__doc__ or name).splitlines()[0],
            TUPLE_BUILTINS[name],
        )
        for name in ("flatten", "filter", "upcast", "downcast")
    ),
    # -- tensors
    Builtin("make_tensor", TENSORS, "make_tensor(t, layout)", tensors.b_make_tensor),
    Builtin("recast", TENSORS, "recast(t, dtype): the bytes as another type", tensors.b_recast),
    Builtin("local_tile", TENSORS, "CuTe's local_tile", tensors.b_local_tile),
    Builtin("local_partition", TENSORS, "CuTe's local_partition", tensors.b_local_partition),
    Builtin("make_fragment_like", TENSORS, "registers like t", tensors.b_make_fragment_like),
    Builtin("make_tensor_like", TENSORS, "registers like t", tensors.b_make_tensor_like),
    Builtin("make_identity_tensor", TENSORS, "coordinates", tensors.b_make_identity_tensor),
    Builtin("elem_less", TENSORS, "coordinate inside shape", tensors.b_elem_less),
    Builtin(
        "group_modes", TENSORS, "group_modes(x, b, e): modes [b, e) as one", tensors.b_group_modes
    ),
    Builtin(
        "as_position_independent_swizzle_tensor",
        TENSORS,
        "CuTe's, the identity here",
        tensors.b_as_position_independent_swizzle_tensor,
    ),
    # -- atoms
    Builtin("UniversalCopy", ATOMS, "UniversalCopy[T]: a copy of T-sized units"),
    Builtin("UniversalFMA", ATOMS, "UniversalFMA[T]: one FMA"),
    Builtin(
        "make_tma_atom", ATOMS, "make_tma_atom(op, tensor, smem_layout, tile)", tma.b_make_tma_atom
    ),
    Builtin(
        "tma_partition",
        ATOMS,
        "tma_partition(atom, [0, make_layout(1),] smem, coords)",
        tma.b_tma_partition,
    ),
    *(Builtin(name, ATOMS, f"CuTe's {name}", fn) for name, fn in TILED_BUILTINS.items()),
    # -- algorithms
    Builtin("copy", ALGORITHMS, "copy([atom,] src, dst[, pred = p])", tensors.b_copy),
    Builtin("gemm", ALGORITHMS, "gemm([mma,] a, b, c)", tensors.b_gemm),
    Builtin("clear", ALGORITHMS, "clear(t)", tensors.b_clear),
    Builtin("fill", ALGORITHMS, "fill(t, v)", tensors.b_fill),
    Builtin("axpby", ALGORITHMS, "axpby(alpha, x, beta, y)", tensors.b_axpby),
    # -- fragment arithmetic
    Builtin("fma", FRAGMENTS, "fma(a, b, c): one rounding", values.b_fma),
    Builtin("abs", FRAGMENTS, "abs(a)", values.b_abs),
    *(
        Builtin(f"reduce_{kind}", FRAGMENTS, f"reduce_{kind}(t[, mode])", _reduce(kind))
        for kind in ("sum", "max", "min")
    ),
    Builtin("exp", FRAGMENTS, "exp(a): e to the a (ex2.approx)", values.b_exp),
    Builtin("exp2", FRAGMENTS, "exp2(a): 2 to the a (ex2.approx)", values.b_exp2),
    Builtin("log", FRAGMENTS, "log(a): natural logarithm (lg2.approx)", values.b_log),
    Builtin("log2", FRAGMENTS, "log2(a): base-2 logarithm (lg2.approx)", values.b_log2),
    Builtin("sqrt", FRAGMENTS, "sqrt(a): IEEE square root", values.b_sqrt),
    Builtin("rsqrt", FRAGMENTS, "rsqrt(a): 1/sqrt(a) (rsqrt.approx)", values.b_rsqrt),
    # -- synchronisation
    Builtin("sync", SYNC, "sync(): bar.sync 0", sync.b_sync),
    Builtin("syncthreads", SYNC, "CUDA's __syncthreads", sync.b_sync),
    Builtin("__syncthreads", SYNC, "CUDA's spelling", sync.b_sync),
    Builtin("cp_async_fence", SYNC, "cp.async.commit_group", sync.b_cp_async_fence),
    Builtin("cp_async_wait", SYNC, "cp.async.wait_group n", sync.b_cp_async_wait),
    Builtin("warpgroup_arrive", SYNC, "wgmma.fence", sync.b_warpgroup_arrive),
    Builtin("warpgroup_commit_batch", SYNC, "wgmma.commit_group", sync.b_warpgroup_commit_batch),
    Builtin("warpgroup_wait", SYNC, "wgmma.wait_group n", sync.b_warpgroup_wait),
    Builtin(
        "warpgroup_fence_operand",
        SYNC,
        "keeps registers in place across wgmma",
        sync.b_warpgroup_fence_operand,
    ),
    Builtin(
        "fence_view_async_shared",
        SYNC,
        "fence.proxy.async.shared::cta",
        sync.b_fence_view_async_shared,
    ),
    Builtin("tma_store_fence", SYNC, "fence.proxy.async.shared::cta", tma.b_tma_store_fence),
    Builtin("tma_store_arrive", SYNC, "cp.async.bulk.commit_group", tma.b_tma_store_arrive),
    Builtin("tma_store_wait", SYNC, "cp.async.bulk.wait_group.read n", tma.b_tma_store_wait),
    Builtin("mbarrier_init", SYNC, "mbarrier.init", barriers.b_mbarrier_init, True),
    Builtin("mbarrier_init_fence", SYNC, "fence.mbarrier_init", barriers.b_mbarrier_init_fence),
    Builtin("mbarrier_arrive", SYNC, "mbarrier.arrive", barriers.b_mbarrier_arrive, True),
    Builtin(
        "mbarrier_arrive_and_expect_tx",
        SYNC,
        "mbarrier.arrive.expect_tx",
        barriers.b_mbarrier_arrive_and_expect_tx,
        True,
    ),
    Builtin("mbarrier_expect_tx", SYNC, "mbarrier.expect_tx", barriers.b_mbarrier_expect_tx, True),
    Builtin("mbarrier_wait", SYNC, "mbarrier.try_wait.parity", barriers.b_mbarrier_wait, True),
    Builtin("named_barrier_sync", SYNC, "bar.sync id, n", barriers.b_named_barrier_sync),
    Builtin("named_barrier_arrive", SYNC, "bar.arrive id, n", barriers.b_named_barrier_arrive),
    Builtin("cluster_arrive", SYNC, "barrier.cluster.arrive", barriers.b_cluster_arrive),
    Builtin(
        "cluster_arrive_relaxed",
        SYNC,
        "barrier.cluster.arrive.relaxed",
        barriers.b_cluster_arrive_relaxed,
    ),
    Builtin("cluster_wait", SYNC, "barrier.cluster.wait", barriers.b_cluster_wait),
    Builtin("cluster_sync", SYNC, "cluster_arrive(); cluster_wait()", barriers.b_cluster_sync),
    Builtin(
        "map_shared_rank",
        TENSORS,
        "map_shared_rank(t, rank): t in the shared memory of the cluster's CTA rank (mapa)",
        barriers.b_map_shared_rank,
    ),
    Builtin("elect_one", SYNC, "elect.sync: true in one lane", barriers.b_elect_one),
    Builtin("warpgroup_reg_alloc", SYNC, "setmaxnreg.inc n", barriers.b_warpgroup_reg_alloc),
    Builtin("warpgroup_reg_dealloc", SYNC, "setmaxnreg.dec n", barriers.b_warpgroup_reg_dealloc),
    # -- atomics and fences
    *(
        Builtin(name, ATOMICS, (fn.__doc__ or name).splitlines()[0], fn)
        for name, fn in atomics.RMW_BUILTINS.items()
    ),
    Builtin("atomic_load", ATOMICS, "atomic_load(t, i, sem, scope)", atomics.b_atomic_load),
    Builtin("atomic_store", ATOMICS, "atomic_store(t, i, v, sem, scope)", atomics.b_atomic_store),
    Builtin("fence", ATOMICS, "fence(sem, scope): fence.sem.scope", atomics.b_fence),
)

REGISTRY: dict[str, Builtin] = {b.name: b for b in _DECLARATIONS}


def lookup(name: str) -> Any:
    """What a builtin name denotes, or None: the layout tags, a registered builtin, or an
    atom named bare (an MMA atom, a fixed copy atom, a copy atom family)."""
    if name in ("LayoutLeft", "LayoutRight"):
        return LayoutLeft if name == "LayoutLeft" else LayoutRight
    if name in REGISTRY:
        return S.Builtin(name)
    return named_atom(name)


def named_atom(name: str) -> S.AtomRef | None:
    """A bare atom name: an MMA atom (SM80_16x8x16_...), a fixed copy atom or a TMA op."""
    atom = mma_atom_named(name)
    if atom is not None:
        return S.AtomRef("mma", name, atom)
    for a in copy_atoms():
        if a.name == name:
            return S.AtomRef("copy", name, a)
    if name in tma.TMA_OPS:  # SM90_TMA_LOAD: the op make_tma_atom makes an atom of
        return S.AtomRef("tma", name)
    if is_copy_template(name):
        return S.AtomRef("family", name)
    return None


def _unique() -> None:
    names = [b.name for b in _DECLARATIONS]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise AssertionError(f"builtins declared twice: {duplicates}")


_unique()
