"""partition: each thread's slice of a TiledCopy, TiledMMA or thread layout, made explicit.

``cute.partition`` (partition_S/D/A/B/C) and ``cute.local_partition`` say which
elements thread ``%tid`` owns through the atom algebra. This pass replaces each
with the fragment it denotes: a ``cute.view`` of the root tensor whose layout
is the thread's fragment layout and whose offset is index arithmetic of the
thread index, block indices and extents (materialised once per view, dynamic
layout leaves as operands)::

    %tAgA = cute.partition %gA, %copy, %tid {operand = "S"} : ... -> !cute.tensor<f32, gmem,
        ((4,1),1,1,?):((1,0),0,0,?)>
  becomes
    %c2 = arith.constant 2 : index
    %0 = arith.shli %tid, %c2 : index            (4 * (tid % 32) + ... as the algebra says)
    ...
    %tAgA = cute.view %A, %off, %k_tiles, %ldA8 : ... -> !cute.tensor<f32, gmem,
        ((4,1),1,1,?):((1,0),0,0,?)>

so ``--print-ir-after partition`` shows every thread's fragment layout and the
arithmetic that places it. Views of the partitions (slices at the k-tile ...)
stay as they are. A partition of a swizzled tensor keeps its op: the swizzle
acts on the whole offset, which the explicit view (a plain layout) cannot say.
Coordinate tensors are partitioned alike (their offsets are coordinates).
"""

from __future__ import annotations

from dataclasses import dataclass

from cutec.ir.builder import Builder
from cutec.ir.core import Value
from cutec.ir.dialects.builtin import KernelOp, ModuleOp
from cutec.ir.dialects.cute_tensor import LocalPartitionOp, PartitionOp, ViewOp
from cutec.ir.layout_of import LayoutAnalysis
from cutec.ir.materialize import IntegerMaterializer
from cutec.ir.types import IndexType
from cutec.layout import Layout
from cutec.layout.inttuple import leaves
from cutec.layout.symbolic import Integer, SymInt
from cutec.passes.manager import Pass, working_on


@dataclass
class Partition(Pass):
    """Replace thread partitions by explicit views (see the module docstring)."""

    name = "partition"
    summary = "each thread's TiledCopy/TiledMMA slice as an explicit fragment view"

    def run(self, module: ModuleOp) -> None:
        for kernel in list(module.walk_type(KernelOp)):
            la = self.analyses.get(LayoutAnalysis, kernel)

            def symbol(name: str, kernel: KernelOp = kernel, la: LayoutAnalysis = la) -> Value:
                return la.symbol_values(kernel)[name]

            for op in list(kernel.walk()):
                if not isinstance(op, PartitionOp | LocalPartitionOp):
                    continue
                with working_on(op):
                    address = la.address_of(op.result)
                    if not isinstance(address.layout, Layout):
                        continue  # swizzled: the op keeps saying it
                    values = leaves((address.layout.shape, address.layout.stride))
                    if not all(_fits_index(x) for x in (address.offset, *values)):
                        # A coordinate tensor's mode-2 offset is a multiple of R**2 = 2**64
                        # (cute_coord.py): no index value holds it; the op keeps saying it,
                        # and lower-to-thread takes each mode's digit before materialising.
                        continue
                    b = Builder.before(op)
                    m = IntegerMaterializer(b, symbol, IndexType())
                    offset = m(address.offset)
                    dynamic = [
                        m(x)
                        for x in leaves((address.layout.shape, address.layout.stride))
                        if isinstance(x, SymInt)
                    ]
                    view = b.insert(ViewOp(address.root, offset, dynamic, op.result.type))
                    view.location = op.location
                    view.results[0].name_hint = op.result.name_hint
                    op.result.replace_all_uses_with(view.result)
                    op.erase()


def _fits_index(x: Integer) -> bool:
    """Whether every integer of `x` (its constant and coefficients) fits a 64-bit index."""
    limit = 2**63
    if isinstance(x, int):
        return -limit <= x < limit
    return -limit <= x.const < limit and all(-limit <= k < limit for _, k in x.terms)
