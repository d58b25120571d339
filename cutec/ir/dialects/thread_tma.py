"""The thread dialect's TMA tensor maps: ``thread.tensor_map``.

A TMA copy (``cp.async.bulk.tensor``, a ``thread.atom`` of a TMA-family atom)
names its global tensor through a 128-byte tensor map that the runtime encodes
at launch and passes by value: a kernel parameter ``.param .align 64 .b8
name[128]`` (CUDA's ``__grid_constant__ const CUtensorMap``; docs/abi.md,
*Tensor-map parameters*). The kernel's ``tensor_maps`` attribute lists its
maps, in the order they follow its arguments; ``thread.tensor_map`` is the
generic address of one, the instruction's ``$tmap`` operand:

    %m = thread.tensor_map "A_map" : i64
"""

from __future__ import annotations

from cutec.ir.attributes import ArrayAttr, StringAttr
from cutec.ir.core import Operation
from cutec.ir.opdef import attr_def, result_def
from cutec.ir.traits import Pure
from cutec.ir.types import IntegerType


def tensor_map_names(kernel: Operation) -> list[str]:
    """The names a kernel's ``tensor_maps`` attribute lists, in parameter order."""
    attr = kernel.attributes.get("tensor_maps")
    if not isinstance(attr, ArrayAttr):
        return []
    return [e.value for e in attr.elements if isinstance(e, StringAttr)]


class TensorMapOp(Operation):
    """The generic address of the kernel's tensor-map parameter `param`:
    ``%m = thread.tensor_map "A_map" : i64``."""

    name = "thread.tensor_map"
    traits = (Pure(),)
    param = attr_def(StringAttr)
    result = result_def(IntegerType(64))
    assembly_format = "$param attr-dict `:` type($result)"

    def __init__(self, name: str) -> None:
        super().__init__(result_types=[IntegerType(64)], attributes={"param": StringAttr(name)})

    def verify_(self) -> None:
        kernel = self.parent_op
        while kernel is not None and kernel.name != "builtin.kernel":
            kernel = kernel.parent_op
        if kernel is not None and self.param.value not in tensor_map_names(kernel):
            listed = tensor_map_names(kernel)
            raise self.error(
                f"the kernel has no tensor map '{self.param.value}' (its tensor_maps: {listed})"
            )
