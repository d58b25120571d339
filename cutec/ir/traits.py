"""Op traits: the facts about an op that every pass consults instead of its name.

A pass asks "may I delete / move / merge this op?" through these traits:

* `Pure` — no side effects; may be folded, CSE'd, hoisted, and deleted when
  its results are unused.
* `MemoryEffects` — reads/writes/allocations, each on one address space. An op
  with a write is never deleted; nothing that touches an address space moves
  across an op that writes it; two reads merge only if no write to their space
  lies between. A barrier is modelled as a read and write of the memory it
  orders, which is exactly what keeps accesses from crossing it.
* `Collective(scope)` — executed together by a warp / warpgroup / CTA /
  cluster (convergent): never moved into or out of divergent control flow.
* `AsyncProducer` / `AsyncWaiter` — the op starts asynchronous work and yields
  a token, or waits on tokens (cp.async → commit → wait; wgmma → wait;
  TMA → mbarrier), as MLIR's nvgpu dialect does.
* `SameOperandsAndResultType` — every operand and result has one type (the
  generic verifier checks it; an assembly format writes the type once).
* `Terminator`, `IsolatedFromAbove`, `NoTerminator`, `HasParent`,
  `ConstantLike`, `Commutative`, `SymbolOp` — structural facts for the
  verifier and the rewriters.

An op with neither `Pure` nor `MemoryEffects` has *unknown* effects and is
treated as touching everything.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

# The one enum of address spaces lives with the targets; the IR's users import it from here too.
from cutec.target import AddressSpace as AddressSpace


class EffectKind(enum.Enum):
    READ = "read"
    WRITE = "write"
    ALLOC = "alloc"


@dataclass(frozen=True)
class MemoryEffect:
    """One effect of an op on one address space."""

    kind: EffectKind
    space: AddressSpace


def reads(*spaces: AddressSpace) -> tuple[MemoryEffect, ...]:
    return tuple(MemoryEffect(EffectKind.READ, s) for s in spaces)


def writes(*spaces: AddressSpace) -> tuple[MemoryEffect, ...]:
    return tuple(MemoryEffect(EffectKind.WRITE, s) for s in spaces)


class Scope(enum.Enum):
    """The group of threads a collective op runs in lock-step with."""

    WARP = "warp"
    WARPGROUP = "warpgroup"
    CTA = "cta"
    CLUSTER = "cluster"


class Trait:
    """Base of all traits; traits are instances so they can carry parameters."""


@dataclass(frozen=True)
class Pure(Trait):
    """No side effects and no dependence on memory."""


@dataclass(frozen=True)
class MemoryEffects(Trait):
    """The op's effects when they do not depend on its operands."""

    effects: tuple[MemoryEffect, ...]


@dataclass(frozen=True)
class Collective(Trait):
    """Convergent: every thread of `scope` must execute it together."""

    scope: Scope


@dataclass(frozen=True)
class AsyncProducer(Trait):
    """Starts asynchronous work; its last result is the completion token."""


@dataclass(frozen=True)
class AsyncWaiter(Trait):
    """Waits for the asynchronous work named by its token operands."""


@dataclass(frozen=True)
class Terminator(Trait):
    """Must be the last op of its block."""


@dataclass(frozen=True)
class NoTerminator(Trait):
    """Its regions' blocks need no terminator (module, kernel bodies that return implicitly)."""


@dataclass(frozen=True)
class IsolatedFromAbove(Trait):
    """Ops inside may not use values defined outside."""


@dataclass(frozen=True)
class HasParent(Trait):
    """May only appear directly inside one of the named ops."""

    parents: tuple[str, ...]


@dataclass(frozen=True)
class ConstantLike(Trait):
    """Materialises its `value` attribute; the folder reads it."""


@dataclass(frozen=True)
class SameOperandsAndResultType(Trait):
    """Every operand and result has one type (``arith.addi %a, %b : i32``)."""


@dataclass(frozen=True)
class Commutative(Trait):
    """Binary op whose operands may be swapped (CSE canonicalises their order)."""


@dataclass(frozen=True)
class SymbolOp(Trait):
    """Defines a symbol named by its `sym_name` attribute."""


# --------------------------------------------------------------------------- queries


def effects_of(op) -> tuple[MemoryEffect, ...] | None:
    """All memory effects of `op` and everything nested in it; None if unknown."""
    total: list[MemoryEffect] = []
    for nested in op.walk():
        own = nested.memory_effects()
        if own is None:
            return None
        total.extend(own)
    return tuple(total)


def is_side_effect_free(op) -> bool:
    """True if deleting `op` (when its results are unused) cannot change behaviour.

    Reads and allocations may go; a write, an unknown effect, a collective op
    (which other threads wait on) or an async producer may not.
    """
    for nested in op.walk():
        if nested.has_trait(Collective) or nested.has_trait(AsyncProducer):
            return False
        effects = nested.memory_effects()
        if effects is None:
            return False
        if any(e.kind is EffectKind.WRITE for e in effects):
            return False
    return True


def is_read_only(op) -> bool:
    """True if `op` (with nested ops) only reads memory and is not collective."""
    effects = effects_of(op)
    if effects is None or any(e.kind is not EffectKind.READ for e in effects):
        return False
    return not any(n.has_trait(Collective) or n.has_trait(AsyncProducer) for n in op.walk())
