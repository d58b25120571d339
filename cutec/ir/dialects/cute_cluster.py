"""cute ops of thread-block clusters: a view of another CTA's shared memory.

Distributed shared memory (sm_90): the CTAs of a cluster can load and store each
other's shared memory through the ``shared::cluster`` window, where ``mapa``
turns an address of the CTA's own shared memory into the address of the same
byte in the shared memory of the CTA of a given rank (CuTe's
``cluster.map_shared_rank``). A tensor in that window is a ``dsmem`` tensor.
"""

from __future__ import annotations

from cutec.ir.core import Value
from cutec.ir.dialects.cute_base import CuteOp
from cutec.ir.dialects.cute_infer import AnyLayout
from cutec.ir.dialects.cute_types import TensorType
from cutec.ir.layout_of import LayoutAnalysis
from cutec.ir.opdef import operand_def, result_def
from cutec.ir.traits import AddressSpace, Pure
from cutec.ir.types import IndexType
from cutec.layout.symbolic import Integer


class MapSharedRankOp(CuteOp):
    """The same shared tensor in the shared memory of the cluster's CTA `rank`: same
    element type and layout, its loads and stores going to that CTA's memory.

    ``%r = cute.map_shared_rank %s, %rank : !cute.tensor<f32, smem, (64):(1)>, index
        -> !cute.tensor<f32, dsmem, (64):(1)>``

    Its result is a root of its own, at the source's root offset and layout:
    lower-to-thread maps the source's root pointer (``thread.mapa``), so a view's
    offset, swizzle included, applies unchanged in the other CTA.
    """

    name = "cute.map_shared_rank"
    traits = (Pure(),)
    source = operand_def(TensorType)
    rank = operand_def(IndexType)
    result = result_def(TensorType)

    def __init__(self, source: Value, rank: Value) -> None:
        src = source.type
        assert isinstance(src, TensorType)
        result = TensorType(src.element, AddressSpace.SHARED_CLUSTER, src.spec)
        super().__init__(operands=[source, rank], result_types=[result])

    def verify_(self) -> None:
        src, t = self.source.type, self.result.type
        assert isinstance(src, TensorType) and isinstance(t, TensorType)
        if src.space is not AddressSpace.SHARED:
            raise self.error(f"maps a shared (smem) tensor, not a {src.space.memory} one")
        if t != TensorType(src.element, AddressSpace.SHARED_CLUSTER, src.spec):
            raise self.error(f"the result must be the source's tensor in dsmem, not {t}")

    def result_layout(self, la: LayoutAnalysis) -> AnyLayout:
        return la.layout_of(self.source)

    def result_address(self, la: LayoutAnalysis) -> tuple[Value, Integer, AnyLayout]:
        _, offset, layout = la.address_of(self.source)
        return self.result, offset, layout
