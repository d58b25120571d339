"""cute ops for atomics on one element of a global tensor: read-modify-write, load, store.

The element is named as `cute.load` names one: a linear index (one index operand),
or one coordinate per mode of the tensor (as many index operands as its rank, each
a mode's own linear index), so ``atomic_add(C, (m, n), v)`` costs no division.

    %old = cute.atomic_rmw %v, %t, %i {kind = "add", scope = "gpu", sem = "relaxed"}
             : i32, !cute.tensor<i32, gmem, ?:1> -> i32
    %x = cute.atomic_load %t, %m, %n {scope = "gpu", sem = "acquire"}
             : !cute.tensor<f32, gmem, (?,?):(1,?)> -> f32
    cute.atomic_store %v, %t, %i {scope = "gpu", sem = "release"}
             : i32, !cute.tensor<i32, gmem, ?:1>

lower-to-thread makes each the `thread` atomic on the element's pointer
(cutec/ir/dialects/thread_atomic.py). The memory orders and the element types each
takes are cutec/ir/dialects/memory_order.py's; every op reads and writes global
memory, so no pass merges, moves or deletes one.
"""

from __future__ import annotations

from collections.abc import Sequence

from cutec.ir.attributes import StringAttr
from cutec.ir.core import Value
from cutec.ir.dialects.cute_base import CuteOp
from cutec.ir.dialects.cute_types import TensorType
from cutec.ir.dialects.memory_order import (
    ATOMIC_EFFECTS,
    LOAD_SEMANTICS,
    RMW_KINDS,
    RMW_SEMANTICS,
    SCOPES,
    STORE_SEMANTICS,
    atomic_elements,
    takes_element,
)
from cutec.ir.opdef import attr_def, operand_def, result_def, var_operand_def
from cutec.ir.types import FloatType, IndexType, IntegerType, dtype_name
from cutec.target import AddressSpace


def _attrs(sem: str, scope: str, kind: str | None = None) -> dict[str, StringAttr]:
    attrs = {"sem": StringAttr(sem), "scope": StringAttr(scope)}
    if kind is not None:
        attrs["kind"] = StringAttr(kind)
    return attrs


class _AtomicOp(CuteOp):
    """An atomic of one element of a global tensor, at `indices`."""

    traits = (ATOMIC_EFFECTS,)

    def _check(self, tensor: Value, indices: Sequence[Value], kind: str | None) -> TensorType:
        t = tensor.type
        assert isinstance(t, TensorType)
        if t.space is not AddressSpace.GLOBAL:
            raise self.error(f"is an atomic of a gmem tensor, not of an {t.space.memory} one")
        shape = t.spec.shape
        rank = len(shape) if isinstance(shape, tuple) else 1
        if len(indices) not in (1, rank):
            raise self.error(
                f"names its element by a linear index or {rank} coordinates, "
                f"not {len(indices)} indices"
            )
        if not takes_element(kind, t.element):
            what = f"atomic {kind}" if kind else "an atomic load or store"
            allowed = ", ".join(dtype_name(e) for e in atomic_elements(kind))
            raise self.error(f"{what} takes {allowed} elements, not {dtype_name(t.element)}")
        return t


class AtomicRmwOp(_AtomicOp):
    """``old = t[i]; t[i] = old <kind> v`` atomically; yields ``old``.

    ``%old = cute.atomic_rmw %v, %t, %i {kind = "max", scope = "gpu", sem = "acq_rel"}
    : i32, !cute.tensor<i32, gmem, ?:1> -> i32``
    """

    name = "cute.atomic_rmw"
    value = operand_def((FloatType, IntegerType))
    tensor = operand_def(TensorType)
    indices = var_operand_def(IndexType)
    result = result_def()
    kind = attr_def(StringAttr, one_of=RMW_KINDS)
    sem = attr_def(StringAttr, one_of=RMW_SEMANTICS)
    scope = attr_def(StringAttr, one_of=SCOPES)

    def __init__(self, kind: str, value: Value, t: Value, indices: Sequence[Value],
                 sem: str = "relaxed", scope: str = "gpu") -> None:  # fmt: skip
        super().__init__(
            operands=[value, t, *indices],
            result_types=[value.type],
            attributes=_attrs(sem, scope, kind),
        )

    def verify_(self) -> None:
        t = self._check(self.tensor, self.indices, self.kind.value)
        if self.value.type != t.element:
            raise self.error(f"combines a {self.value.type} value with a {t.element} tensor")
        if self.result.type != t.element:
            raise self.error(f"yields the old {t.element}, not {self.result.type}")


class AtomicLoadOp(_AtomicOp):
    """Read one element atomically: ``%v = cute.atomic_load %t, %i {scope = "gpu",
    sem = "acquire"} : !cute.tensor<i32, gmem, ?:1> -> i32``."""

    name = "cute.atomic_load"
    tensor = operand_def(TensorType)
    indices = var_operand_def(IndexType)
    result = result_def()
    sem = attr_def(StringAttr, one_of=LOAD_SEMANTICS)
    scope = attr_def(StringAttr, one_of=SCOPES)

    def __init__(self, t: Value, indices: Sequence[Value], sem: str = "acquire",
                 scope: str = "gpu") -> None:  # fmt: skip
        assert isinstance(t.type, TensorType)
        super().__init__(
            operands=[t, *indices], result_types=[t.type.element], attributes=_attrs(sem, scope)
        )

    def verify_(self) -> None:
        t = self._check(self.tensor, self.indices, None)
        if self.result.type != t.element:
            raise self.error(f"reads {t.element}, not {self.result.type}")


class AtomicStoreOp(_AtomicOp):
    """Write one element atomically: ``cute.atomic_store %v, %t, %i {scope = "gpu",
    sem = "release"} : i32, !cute.tensor<i32, gmem, ?:1>``."""

    name = "cute.atomic_store"
    value = operand_def((FloatType, IntegerType))
    tensor = operand_def(TensorType)
    indices = var_operand_def(IndexType)
    sem = attr_def(StringAttr, one_of=STORE_SEMANTICS)
    scope = attr_def(StringAttr, one_of=SCOPES)

    def __init__(self, value: Value, t: Value, indices: Sequence[Value], sem: str = "release",
                 scope: str = "gpu") -> None:  # fmt: skip
        super().__init__(operands=[value, t, *indices], attributes=_attrs(sem, scope))

    def verify_(self) -> None:
        t = self._check(self.tensor, self.indices, None)
        if self.value.type != t.element:
            raise self.error(f"stores {self.value.type} into a {t.element} tensor")


ATOMIC_OPS = (AtomicRmwOp, AtomicLoadOp, AtomicStoreOp)
