"""What the atomics and fences of the cute, thread and gpu dialects share: the words of
PTX's memory consistency model and the element types each atomic takes.

* An atomic read-modify-write (``kind``: add, max, min, exch) returns the old value;
  its ``sem`` is relaxed, acquire, release or acq_rel (PTX's ``atom.sem``).
* An atomic load is relaxed or acquire, an atomic store relaxed or release
  (``ld.sem`` / ``st.sem``); a fence is acq_rel or sc (``fence.sem``).
* ``scope`` is the set of threads the ordering is promised to: the CTA, the GPU
  or the system (``.cta``, ``.gpu``, ``.sys``; ``.cluster`` is not offered yet).

Element types: 32- and 64-bit integers for every kind (signless: add and exch
act on the bits, max and min compare them signed, as the language's integers
do), f32 and f64 for add and exch (PTX's ``atom.add.f32`` / ``.f64``; it has no
float max or min of these widths before sm_90's bf16 and f16 forms). Atomic
loads and stores take the four types.
"""

from __future__ import annotations

from cutec.ir.traits import AddressSpace, MemoryEffects, reads, writes
from cutec.ir.types import FloatType, IntegerType, Type, f32, f64, i32, i64

RMW_KINDS = ("add", "max", "min", "exch")
SCOPES = ("cta", "gpu", "sys")
RMW_SEMANTICS = ("relaxed", "acquire", "release", "acq_rel")
LOAD_SEMANTICS = ("relaxed", "acquire")
STORE_SEMANTICS = ("relaxed", "release")
FENCE_SEMANTICS = ("acq_rel", "sc")
# Every word a `sem` may be, for "unknown sem" messages.
ALL_SEMANTICS = (*RMW_SEMANTICS, "sc")

ATOMIC_ELEMENTS: tuple[Type, ...] = (i32, i64, f32, f64)
_FLOAT_KINDS = ("add", "exch")

# An atomic reads and writes global memory: nothing moves it across another access of
# global memory, no two of them merge, and none is deleted, even an atomic load whose
# value is unused (its acquire orders what follows).
ATOMIC_EFFECTS = MemoryEffects((*reads(AddressSpace.GLOBAL), *writes(AddressSpace.GLOBAL)))
# A fence orders every access of its thread, global and shared, as a barrier does.
FENCE_EFFECTS = MemoryEffects(
    (
        *reads(AddressSpace.GLOBAL, AddressSpace.SHARED),
        *writes(AddressSpace.GLOBAL, AddressSpace.SHARED),
    )
)


def atomic_elements(kind: str | None) -> tuple[Type, ...]:
    """The element types an atomic of `kind` takes (None: an atomic load or store)."""
    if kind is None or kind in _FLOAT_KINDS:
        return ATOMIC_ELEMENTS
    return tuple(t for t in ATOMIC_ELEMENTS if isinstance(t, IntegerType))


def takes_element(kind: str | None, t: Type) -> bool:
    """Whether an atomic of `kind` (None: a load or store) takes elements of type `t`."""
    return isinstance(t, IntegerType | FloatType) and t in atomic_elements(kind)


def words(options: tuple[str, ...]) -> str:
    """``"a", "b" or "c"``: the options as a message lists them."""
    quoted = [f'"{w}"' for w in options]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"
