"""The thread dialect's atomics: a read-modify-write, a load and a store of one element of
global memory with a memory order (cutec/ir/dialects/memory_order.py has the words).

* ``%old = thread.atomic_rmw add relaxed gpu %p, %v : !gpu.ptr<i32, global>, i32``
  (``atom.relaxed.gpu.global.add.u32``; ``red`` when `%old` is unused);
* ``%v = thread.atomic_load acquire gpu %p : !gpu.ptr<i32, global>``
  (``ld.acquire.gpu.global.s32``);
* ``thread.atomic_store release gpu %v, %p : i32, !gpu.ptr<i32, global>``
  (``st.release.gpu.global.s32``).

Each reads and writes global memory (`ATOMIC_EFFECTS`), so none is merged, moved across
another global access, hoisted out of a loop or deleted: a spin loop on an atomic load
reads memory at every iteration. The fence is the gpu dialect's (``gpu.fence``).
"""

from __future__ import annotations

from collections.abc import Sequence

from cutec.ir.attributes import StringAttr
from cutec.ir.core import Operation, Value
from cutec.ir.dialects.gpu import PointerType
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
from cutec.ir.opdef import AnyType, FieldValues, attr_def, operand_def, result_def
from cutec.ir.traits import AddressSpace
from cutec.ir.types import Type


class _AtomicOp(Operation):
    """An atomic access of one element through a global pointer."""

    traits = (ATOMIC_EFFECTS,)

    def _check(self, ptr: Value, element: Type, kind: str | None) -> None:
        t = ptr.type
        assert isinstance(t, PointerType)
        if t.space is not AddressSpace.GLOBAL:
            raise self.error(f"is an atomic of global memory, not {t.space.value}")
        if t.element != element:
            raise self.error(f"accesses {element} through a pointer to {t.element}")
        if not takes_element(kind, element):
            what = f"atomic {kind}" if kind else "an atomic load or store"
            allowed = ", ".join(map(str, atomic_elements(kind)))
            raise self.error(f"{what} takes {allowed}, not {element}")


class AtomicRmwOp(_AtomicOp):
    """Atomically replace the element at `ptr` by ``old <kind> value`` and yield ``old``.

    ``%old = thread.atomic_rmw max acq_rel gpu %p, %v : !gpu.ptr<i64, global>, i64``

    `kind`: add (integers wrap; floats round to nearest even), max and min (signed),
    exch (the value replaces the old one).
    """

    name = "thread.atomic_rmw"
    kind = attr_def(StringAttr, one_of=RMW_KINDS)
    sem = attr_def(StringAttr, one_of=RMW_SEMANTICS)
    scope = attr_def(StringAttr, one_of=SCOPES)
    ptr = operand_def(PointerType)
    value = operand_def(AnyType)
    result = result_def(AnyType)
    assembly_format = "$kind $sem $scope $ptr `,` $value attr-dict `:` type($ptr) `,` type($value)"

    def __init__(self, kind: str, ptr: Value, value: Value, sem: str = "relaxed",
                 scope: str = "gpu") -> None:  # fmt: skip
        attrs = {"kind": StringAttr(kind), "sem": StringAttr(sem), "scope": StringAttr(scope)}
        super().__init__(operands=[ptr, value], result_types=[value.type], attributes=attrs)

    @classmethod
    def infer_result_types(cls, fields: FieldValues) -> Sequence[Type]:
        return [fields.value.type]

    def verify_(self) -> None:
        self._check(self.ptr, self.value.type, self.kind.value)
        if self.result.type != self.value.type:
            raise self.error(f"yields the old {self.value.type}, not {self.result.type}")


class AtomicLoadOp(_AtomicOp):
    """Read the element at `ptr` atomically (relaxed or acquire).

    ``%v = thread.atomic_load acquire gpu %p : !gpu.ptr<i32, global>``
    """

    name = "thread.atomic_load"
    sem = attr_def(StringAttr, one_of=LOAD_SEMANTICS)
    scope = attr_def(StringAttr, one_of=SCOPES)
    ptr = operand_def(PointerType)
    result = result_def(AnyType)
    assembly_format = "$sem $scope $ptr attr-dict `:` type($ptr)"

    def __init__(self, ptr: Value, sem: str = "acquire", scope: str = "gpu") -> None:
        t = ptr.type
        assert isinstance(t, PointerType)
        attrs = {"sem": StringAttr(sem), "scope": StringAttr(scope)}
        super().__init__(operands=[ptr], result_types=[t.element], attributes=attrs)

    @classmethod
    def infer_result_types(cls, fields: FieldValues) -> Sequence[Type]:
        t = fields.ptr.type
        return [t.element if isinstance(t, PointerType) else t]

    def verify_(self) -> None:
        self._check(self.ptr, self.result.type, None)


class AtomicStoreOp(_AtomicOp):
    """Write the element at `ptr` atomically (relaxed or release).

    ``thread.atomic_store release gpu %v, %p : i32, !gpu.ptr<i32, global>``
    """

    name = "thread.atomic_store"
    sem = attr_def(StringAttr, one_of=STORE_SEMANTICS)
    scope = attr_def(StringAttr, one_of=SCOPES)
    value = operand_def(AnyType)
    ptr = operand_def(PointerType)
    assembly_format = "$sem $scope $value `,` $ptr attr-dict `:` type($value) `,` type($ptr)"

    def __init__(self, value: Value, ptr: Value, sem: str = "release", scope: str = "gpu") -> None:
        attrs = {"sem": StringAttr(sem), "scope": StringAttr(scope)}
        super().__init__(operands=[value, ptr], attributes=attrs)

    def verify_(self) -> None:
        self._check(self.ptr, self.value.type, None)


ATOMIC_OPS: tuple[type[Operation], ...] = (AtomicRmwOp, AtomicLoadOp, AtomicStoreOp)
