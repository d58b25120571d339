"""The gpu dialect: what the cute level and the thread level share.

Typed pointers per address space (``!gpu.ptr<f32, global>``), the token of
asynchronous work (``!gpu.token``), the special registers (thread, block and
cluster ids and extents, the lane, the warp-uniform warp index), the CTA
barrier and the memory fence. The cute dialect's tensors sit on `gpu.ptr`s and its
async copies yield `gpu.token`s; the thread dialect (loads, stores, cp.async)
is what the cute level lowers to.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from cutec.ir.attributes import StringAttr
from cutec.ir.core import Operation
from cutec.ir.dialect import Dialect
from cutec.ir.dialects.memory_order import FENCE_EFFECTS, FENCE_SEMANTICS, SCOPES
from cutec.ir.opdef import attr_def, result_def
from cutec.ir.traits import AddressSpace, Collective, MemoryEffects, Pure, Scope, reads, writes
from cutec.ir.types import DialectType, IndexType, Type

if TYPE_CHECKING:
    from cutec.ir.parser import Parser

_SPACES = {s.value: s for s in AddressSpace}


@dataclass(frozen=True)
class PointerType(DialectType):
    """A pointer to `element`s in one address space: ``!gpu.ptr<f32, global>``."""

    name: ClassVar[str] = "gpu.ptr"
    element: Type
    space: AddressSpace

    def print_body(self) -> str:
        return f"{self.element}, {self.space.value}"

    @classmethod
    def parse_body(cls, parser: Parser) -> PointerType:
        element = parser.parse_type()
        parser.parse_punct(",")
        loc = parser.tok.loc
        word = parser.parse_identifier("an address space")
        if word == "shared" and parser.parse_optional_punct("::"):
            word += "::" + parser.parse_identifier("'cluster'")
        if word not in _SPACES:
            raise parser.error(
                f"unknown address space '{word}'; expected one of {', '.join(_SPACES)}", loc
            )
        return cls(element, _SPACES[word])


@dataclass(frozen=True)
class TokenType(DialectType):
    """Completion of asynchronous work: ``!gpu.token``."""

    name: ClassVar[str] = "gpu.token"
    has_body: ClassVar[bool] = False

    @classmethod
    def parse_body(cls, parser: Parser) -> TokenType:
        return cls()


class _SpecialRegisterOp(Operation):
    """``%t = gpu.<reg> x : index`` — reads a PTX special register (pure per thread)."""

    traits = (Pure(),)
    dim = attr_def(StringAttr, one_of=("x", "y", "z"))
    result = result_def(IndexType)
    assembly_format = "$dim attr-dict `:` type($result)"

    def __init__(self, dim: str) -> None:
        super().__init__(result_types=[IndexType()], attributes={"dim": StringAttr(dim)})


class ThreadIdOp(_SpecialRegisterOp):
    """The thread index in the CTA (``%tid.x``): ``%t = gpu.thread_id x : index``."""

    name = "gpu.thread_id"


class BlockIdOp(_SpecialRegisterOp):
    """The CTA index in the grid (``%ctaid.x``): ``%b = gpu.block_id x : index``."""

    name = "gpu.block_id"


class BlockDimOp(_SpecialRegisterOp):
    """Threads per CTA (``%ntid.x``): ``%n = gpu.block_dim x : index``."""

    name = "gpu.block_dim"


class GridDimOp(_SpecialRegisterOp):
    """CTAs per grid (``%nctaid.x``): ``%n = gpu.grid_dim x : index``."""

    name = "gpu.grid_dim"


class ClusterIdOp(_SpecialRegisterOp):
    """The cluster index in the grid (``%clusterid.x``, sm_90): ``gpu.cluster_id x : index``."""

    name = "gpu.cluster_id"


class ClusterDimOp(_SpecialRegisterOp):
    """Clusters per grid (``%nclusterid.x``, sm_90): ``gpu.cluster_dim x : index``."""

    name = "gpu.cluster_dim"


class ClusterBlockIdOp(_SpecialRegisterOp):
    """The CTA index in its cluster (``%cluster_ctaid.x``, sm_90): ``gpu.cluster_block_id x``."""

    name = "gpu.cluster_block_id"


class ClusterDimBlocksOp(_SpecialRegisterOp):
    """CTAs per cluster (``%cluster_nctaid.x``, sm_90): ``gpu.cluster_dim_blocks x : index``."""

    name = "gpu.cluster_dim_blocks"


class _ScalarRegisterOp(Operation):
    """``%r = gpu.<reg> : index`` — a special register without a dimension."""

    traits = (Pure(),)
    result = result_def(IndexType)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self) -> None:
        super().__init__(result_types=[IndexType()])


class LaneIdOp(_ScalarRegisterOp):
    """The thread's lane in its warp, 0..31 (``%laneid``): ``%l = gpu.lane_id : index``."""

    name = "gpu.lane_id"


class ClusterBlockRankOp(_ScalarRegisterOp):
    """The CTA's linear rank in its cluster (``%cluster_ctarank``, sm_90):
    ``%r = gpu.cluster_block_rank : index``."""

    name = "gpu.cluster_block_rank"


class WarpIdxOp(Operation):
    """The warp's index in the CTA, ``tid.x / 32`` made warp-uniform:
    ``%w = gpu.warp_idx : index``.

    CuTe's ``canonical_warp_idx_sync``: ``__shfl_sync(~0, threadIdx.x / 32, 0)``,
    so the compiler knows every lane holds lane 0's value (a uniform register).
    It is *not* the hardware ``%warpid`` (the slot a warp runs on, which may
    change during execution). It reads ``tid.x`` only: for a CTA whose x
    extent is not a multiple of 32 it is not the warp of the linear thread id.
    The shuffle runs with all 32 lanes, so the op is warp-collective.
    """

    name = "gpu.warp_idx"
    traits = (Pure(), Collective(Scope.WARP))
    result = result_def(IndexType)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self) -> None:
        super().__init__(result_types=[IndexType()])


# A CTA barrier orders every shared and global access of the CTA's threads.
_FENCE_EFFECTS = (
    *reads(AddressSpace.SHARED, AddressSpace.GLOBAL),
    *writes(AddressSpace.SHARED, AddressSpace.GLOBAL),
)


class BarrierOp(Operation):
    """All threads of the CTA meet here (``bar.sync 0``): ``gpu.barrier``."""

    name = "gpu.barrier"
    traits = (Collective(Scope.CTA), MemoryEffects(_FENCE_EFFECTS))
    assembly_format = "attr-dict"

    def __init__(self) -> None:
        super().__init__()


class FenceOp(Operation):
    """Order this thread's memory accesses before and after it, as seen by the threads
    of `scope` (PTX's ``fence.sem.scope``): ``gpu.fence acq_rel gpu``.

    `sem` is ``acq_rel`` (a release and an acquire fence in one: before a flag's
    store it publishes the writes before it, after a flag's load it makes the writes
    the flag published visible) or ``sc`` (also in one total order with the other sc
    fences).
    A fence is per thread, not a rendezvous; it reads and writes global and shared
    memory, so no access moves across it (cutec/ir/dialects/memory_order.py).
    """

    name = "gpu.fence"
    traits = (FENCE_EFFECTS,)
    sem = attr_def(StringAttr, one_of=FENCE_SEMANTICS)
    scope = attr_def(StringAttr, one_of=SCOPES)
    assembly_format = "$sem $scope attr-dict"

    def __init__(self, sem: str = "acq_rel", scope: str = "gpu") -> None:
        super().__init__(attributes={"sem": StringAttr(sem), "scope": StringAttr(scope)})


DIALECT = Dialect(
    "gpu",
    ops=(
        ThreadIdOp,
        BlockIdOp,
        BlockDimOp,
        GridDimOp,
        ClusterIdOp,
        ClusterDimOp,
        ClusterBlockIdOp,
        ClusterDimBlocksOp,
        LaneIdOp,
        ClusterBlockRankOp,
        WarpIdxOp,
        BarrierOp,
        FenceOp,
    ),
    types=(PointerType, TokenType),
)
