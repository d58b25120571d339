"""The thread dialect's op for distributed shared memory (sm_90 clusters).

* ``thread.mapa``: ``mapa.shared::cluster.u32 d, a, rank``: the ``shared::cluster``
  address of the byte at shared (``shared::cta``) address `a` in the shared memory
  of the cluster's CTA `rank`. Loads and stores through the result are
  ``ld/st.shared::cluster`` (cutec.ptx.rules); the CPU backends read and write that
  CTA's buffer.
"""

from __future__ import annotations

from cutec.ir.core import Operation, Value
from cutec.ir.dialects.gpu import PointerType
from cutec.ir.opdef import operand_def, result_def
from cutec.ir.traits import AddressSpace, Pure
from cutec.ir.types import IndexType


class MapaOp(Operation):
    """The address of the same shared byte in the cluster's CTA `rank` (``mapa``):

    ``%q = thread.mapa %p, %rank : !gpu.ptr<f32, shared>, index
        -> !gpu.ptr<f32, shared::cluster>``
    """

    name = "thread.mapa"
    traits = (Pure(),)
    ptr = operand_def(PointerType)
    rank = operand_def(IndexType)
    result = result_def(PointerType)
    assembly_format = "$ptr `,` $rank attr-dict `:` type($ptr) `,` type($rank) `->` type($result)"

    def __init__(self, ptr: Value, rank: Value) -> None:
        t = ptr.type
        assert isinstance(t, PointerType)
        result = PointerType(t.element, AddressSpace.SHARED_CLUSTER)
        super().__init__(operands=[ptr, rank], result_types=[result])

    def verify_(self) -> None:
        src, dst = self.ptr.type, self.result.type
        assert isinstance(src, PointerType) and isinstance(dst, PointerType)
        if src.space is not AddressSpace.SHARED:
            raise self.error(f"maps a shared pointer, not a {src.space.value} one")
        if dst != PointerType(src.element, AddressSpace.SHARED_CLUSTER):
            raise self.error(f"the result is the pointer in shared::cluster, not {dst}")
