"""The cute dialect: layout-typed tensors and CuTe's operations on them.

Decisions (docs/ir.md, "cute dialect", says the same for readers of the IR):

* A tensor's layout lives in its type (`cute_types`): static leaves as
  numbers, dynamic leaves as ``?``. Only the op that makes a base tensor from
  a pointer (`cute.make_tensor`) carries dynamic leaves, as index operands in
  the type's reading order, like memref's dynamic sizes; it also records the
  divisibility the kernel declared for each leaf.
* Every other tensor is a view (local_tile, local_partition, slice,
  partition, retile) whose static parameters are attributes (`cute_attrs`:
  ``#cute.tuple<...>`` for tilers, coordinates and steps with ``?``/``_``/``X``
  leaves, ``#cute.layout<...>`` for thread layouts) and whose run-time
  coordinates are index operands. The result type is computed with the
  algebra when the op is built (`cute_infer`); coordinates only move the base,
  so the type never depends on them. The verifier recomputes the type of a
  view whose source is static; a lowering recomputes dynamic leaves from the
  same algebra, so nothing is lost by printing them as ``?``.
* TiledCopy and TiledMMA are values (`cute_atom_types`): a pure op makes one
  (a copy of an MMA operand names the TiledMMA it is made from), and its type
  holds the whole object (atom name or ``auto``, element types, TV layout and
  tiler / atom layout and permutation). An MMA or operand copy the source left
  ``auto`` is typed with the chosen atom and marked ``{auto}``; a
  ``tiled_copy(auto, ...)`` keeps ``auto`` for select-atoms (docs/passes.md).
* Memory ops declare their effects from their operands' memories (gmem →
  global, smem → shared, rmem → reg); allocations (`alloc_smem`,
  `make_fragment`) allocate; a copy by an asynchronous atom is
  `cute.copy_async`, an AsyncProducer yielding a ``!gpu.token`` that
  `thread.cp_async_commit` / `thread.cp_async_wait` consume. Barriers are the
  thread dialect's.
* A predicated copy is `cute.copy_if` when it is synchronous, and
  `cute.copy_async` with a predicate operand (``%tiled, %pred, %src, %dst``) when
  its atom is cp.async (CuTe's copy_if with an SM80_CP_ASYNC atom): whether an
  op is asynchronous stays a property of the op (its trait and token), not of an
  operand's type, so passes never look inside a copy_if to learn it. What a false
  predicate does is the atom's: a ``_ZFILL`` atom writes zeros (src-size 0),
  the others skip the element, as CuTe's copy_if does.
* A view may also be of a coordinate tensor (`cute_coord`: CuTe's identity
  tensor, basis strides encoded in base 2**32 and printed ``E0``, ``8*E1``); its
  elements are coordinates, read one component at a time with
  `cute.load_coord`. ``divide`` is the algebra's {logical,zipped,tiled,flat}
  divide of a tensor's layout.
* wgmma batches are bracketed by `cute_sync`'s warpgroup ops; a GMMA atom's
  shared-memory operands are smem tensor views (the descriptors are built by
  the lowering from their layouts).
* Atomics on one element of a global tensor (`cute_atomic`: read-modify-write,
  load, store) take the element's index as `cute.load` does, or one coordinate per
  mode; they read and write global memory. The fence is the gpu dialect's.
* mbarriers (`cute_mbarrier`: init, arrive, expect_tx, wait) name an i64 element of
  an smem tensor the same way; named and cluster barriers are the thread dialect's.
* All ops share one custom form (`cute_base`): operands, attributes, then the
  types of the non-index operands and ``-> result``.
"""

from __future__ import annotations

from cutec.ir.dialect import Dialect
from cutec.ir.dialects.cute_atom_types import (
    CUTE_ATOM_TYPES,
    TiledCopyType,
    TiledMmaType,
    clear_library_caches,
)
from cutec.ir.dialects.cute_atomic import AtomicLoadOp, AtomicRmwOp, AtomicStoreOp
from cutec.ir.dialects.cute_attrs import CUTE_ATTRIBUTES, LayoutAttr, TupleAttr
from cutec.ir.dialects.cute_cluster import MapSharedRankOp
from cutec.ir.dialects.cute_compute import (
    AxpbyOp,
    ClearOp,
    CopyAsyncOp,
    CopyIfOp,
    CopyOp,
    FillOp,
    GemmOp,
    LoadOp,
    MakeTiledCopyOp,
    MakeTiledMmaOp,
    StoreOp,
)
from cutec.ir.dialects.cute_coord import (
    CUTE_COORD_TYPES,
    CoordTensorType,
    LoadCoordOp,
    MakeIdentityTensorOp,
)
from cutec.ir.dialects.cute_map import MapOp, YieldOp
from cutec.ir.dialects.cute_mbarrier import (
    MbarrierArriveExpectTxOp,
    MbarrierArriveOp,
    MbarrierExpectTxOp,
    MbarrierInitOp,
    MbarrierWaitOp,
)
from cutec.ir.dialects.cute_sync import (
    FenceViewAsyncSharedOp,
    WarpgroupArriveOp,
    WarpgroupCommitBatchOp,
    WarpgroupFenceOperandOp,
    WarpgroupWaitOp,
)
from cutec.ir.dialects.cute_tensor import (
    AllocSmemOp,
    ComposeOp,
    DivideOp,
    GroupModesOp,
    LocalPartitionOp,
    LocalTileOp,
    MakeFragmentOp,
    MakeTensorOp,
    PartitionOp,
    RecastOp,
    RetileOp,
    SizeOp,
    SliceOp,
    ViewOp,
    clear_view_cache,
)
from cutec.ir.dialects.cute_tma import (
    CUTE_TMA_TYPES,
    GetTmaTensorOp,
    MakeTmaAtomOp,
    TmaAtomType,
    TmaCopyOp,
    TmaPartitionOp,
    TmaStoreOp,
)
from cutec.ir.dialects.cute_types import CUTE_TYPES, LayoutSpec, LayoutType, TensorType
from cutec.layout.algebra import clear_caches as clear_algebra_caches

__all__ = [
    "DIALECT",
    "AllocSmemOp",
    "AtomicLoadOp",
    "AtomicRmwOp",
    "AtomicStoreOp",
    "AxpbyOp",
    "ClearOp",
    "CoordTensorType",
    "CopyAsyncOp",
    "CopyIfOp",
    "CopyOp",
    "DivideOp",
    "FenceViewAsyncSharedOp",
    "FillOp",
    "GemmOp",
    "GetTmaTensorOp",
    "GroupModesOp",
    "LayoutAttr",
    "LayoutSpec",
    "LayoutType",
    "LoadCoordOp",
    "LoadOp",
    "LocalPartitionOp",
    "LocalTileOp",
    "MakeFragmentOp",
    "MakeIdentityTensorOp",
    "MakeTensorOp",
    "MakeTiledCopyOp",
    "MakeTiledMmaOp",
    "MakeTmaAtomOp",
    "MapOp",
    "MapSharedRankOp",
    "MbarrierArriveExpectTxOp",
    "MbarrierArriveOp",
    "MbarrierExpectTxOp",
    "MbarrierInitOp",
    "MbarrierWaitOp",
    "PartitionOp",
    "RetileOp",
    "SizeOp",
    "SliceOp",
    "StoreOp",
    "TensorType",
    "TiledCopyType",
    "TiledMmaType",
    "TmaAtomType",
    "TmaCopyOp",
    "TmaPartitionOp",
    "TmaStoreOp",
    "TupleAttr",
    "WarpgroupArriveOp",
    "WarpgroupCommitBatchOp",
    "WarpgroupFenceOperandOp",
    "WarpgroupWaitOp",
    "YieldOp",
]

DIALECT = Dialect(
    "cute",
    ops=(
        MakeTensorOp,
        AllocSmemOp,
        MakeFragmentOp,
        MakeIdentityTensorOp,
        LocalTileOp,
        LocalPartitionOp,
        SliceOp,
        DivideOp,
        PartitionOp,
        RetileOp,
        ComposeOp,
        GroupModesOp,
        RecastOp,
        ViewOp,
        MapSharedRankOp,
        SizeOp,
        MakeTiledCopyOp,
        MakeTiledMmaOp,
        CopyOp,
        CopyAsyncOp,
        CopyIfOp,
        GemmOp,
        ClearOp,
        FillOp,
        AxpbyOp,
        LoadOp,
        StoreOp,
        LoadCoordOp,
        MapOp,
        YieldOp,
        WarpgroupArriveOp,
        WarpgroupCommitBatchOp,
        WarpgroupWaitOp,
        WarpgroupFenceOperandOp,
        FenceViewAsyncSharedOp,
        AtomicRmwOp,
        AtomicLoadOp,
        AtomicStoreOp,
        MbarrierInitOp,
        MbarrierArriveOp,
        MbarrierExpectTxOp,
        MbarrierArriveExpectTxOp,
        MbarrierWaitOp,
        MakeTmaAtomOp,
        GetTmaTensorOp,
        TmaPartitionOp,
        TmaCopyOp,
        TmaStoreOp,
    ),
    types=(*CUTE_TYPES, *CUTE_ATOM_TYPES, *CUTE_COORD_TYPES, *CUTE_TMA_TYPES),
    attributes=CUTE_ATTRIBUTES,
)


def clear_caches() -> None:
    """Forget the memoised layout inference and atom-library objects (benchmarks time
    a compile from cold with this)."""
    clear_view_cache()
    clear_library_caches()
    clear_algebra_caches()
