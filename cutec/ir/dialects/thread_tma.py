"""The thread dialect's TMA: tensor maps (``thread.tensor_map``) and bulk async-groups.

A TMA copy (``cp.async.bulk.tensor``, a ``thread.atom`` of a TMA-family atom)
names its global tensor through a 128-byte tensor map that the runtime encodes
at launch and passes by value: a kernel parameter ``.param .align 64 .b8
name[128]`` (CUDA's ``__grid_constant__ const CUtensorMap``; docs/abi.md,
*Tensor-map parameters*). The kernel's ``tensor_maps`` attribute lists its
maps, in the order they follow its arguments; ``thread.tensor_map`` is the
generic address of one, the instruction's ``$tmap`` operand:

    %m = thread.tensor_map "A_map" : i64

A TMA store (``cp.async.bulk.tensor`` shared::cta -> global, a ``thread.atom`` of a
TMA_STORE atom) completes through *bulk async-groups*, per thread, as cp.async's
groups: ``thread.bulk_commit`` (``cp.async.bulk.commit_group``) closes the stores
this thread issued since its last commit into a group, and ``thread.bulk_wait
{pending = N : i32}`` (``cp.async.bulk.wait_group N``) waits until at most N of
its groups are pending; with ``read`` (``cp.async.bulk.wait_group.read N``) only
until the older groups have *read* their shared source, which may then be
rewritten (their global writes may still be in flight):

    thread.atom "SM90_TMA_STORE_2D"(%m, %x, %y, %tile) {role = "copy", bits = 4096 : i64}
        : (i64, i32, i32, !gpu.ptr<f32, shared>) -> ()
    thread.bulk_commit
    thread.bulk_wait {pending = 0 : i32, read}

The source tile, written through the generic proxy (``st.shared``), is made visible
to the async proxy by ``thread.fence_proxy_async`` in each writing thread before the
barrier that hands it to the storing thread. The group ops have no tokens (their
order is the thread's program order, as wgmma's); they order shared and global
memory, so none is moved or deleted.
"""

from __future__ import annotations

from cutec.ir.attributes import ArrayAttr, IntegerAttr, StringAttr, UnitAttr
from cutec.ir.core import Operation
from cutec.ir.opdef import attr_def, opt_attr_def, result_def
from cutec.ir.traits import AddressSpace, MemoryEffects, Pure, reads, writes
from cutec.ir.types import IntegerType

# A group's stores read shared memory and write global memory until it completes.
_BULK_EFFECTS = MemoryEffects(
    (*reads(AddressSpace.SHARED, AddressSpace.GLOBAL),
     *writes(AddressSpace.SHARED, AddressSpace.GLOBAL))
)  # fmt: skip


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


class BulkCommitOp(Operation):
    """Close this thread's bulk copies issued since its last commit (TMA stores) into one
    bulk async-group (``cp.async.bulk.commit_group``): ``thread.bulk_commit``."""

    name = "thread.bulk_commit"
    traits = (_BULK_EFFECTS,)
    assembly_format = "attr-dict"

    def __init__(self) -> None:
        super().__init__()


class BulkWaitOp(Operation):
    """Wait until at most `pending` of this thread's bulk async-groups are pending
    (``cp.async.bulk.wait_group N``); with `read`, only until the older groups have read
    their shared sources (``cp.async.bulk.wait_group.read N``):
    ``thread.bulk_wait {pending = 0 : i32, read}``."""

    name = "thread.bulk_wait"
    traits = (_BULK_EFFECTS,)
    pending = attr_def(IntegerAttr, check=(lambda a: a.value >= 0, "must be non-negative"))
    read = opt_attr_def(UnitAttr)
    assembly_format = "attr-dict"

    def __init__(self, pending: int = 0, read: bool = False) -> None:
        attributes: dict = {"pending": IntegerAttr(pending, IntegerType(32))}
        if read:
            attributes["read"] = UnitAttr()
        super().__init__(attributes=attributes)
