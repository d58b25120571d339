"""cse: common subexpression elimination with scoped tables.

Two ops are the same expression when they have the same name, operands,
attributes and result types (commutative ops compare their operands as a set).

* A `Pure` op (no regions) replaces a later equal op anywhere it dominates:
  its table is inherited by nested regions.
* A read-only op (it only reads memory, e.g. a load) replaces a later equal op
  only in the same block, and only if no op between them may write the address
  space it reads. Each block keeps a *generation* per address space, bumped by
  every write (a barrier counts as a write of shared and global memory); the
  generation is part of a read's key. So two loads separated by a barrier, a
  store, or a loop containing a store are never merged.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from cutec.ir.core import Block, Operation
from cutec.ir.dialects.builtin import ModuleOp
from cutec.ir.traits import (
    AddressSpace,
    Commutative,
    EffectKind,
    Pure,
    effects_of,
    is_read_only,
)
from cutec.passes.manager import Pass, working_on


class Key:
    """An expression's identity, hashed once: a scoped table looks a key up
    once per enclosing scope, and hashing attributes is not free."""

    __slots__ = ("hash", "parts")

    def __init__(self, parts: tuple) -> None:
        self.parts = parts
        self.hash = hash(parts)

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Key) and self.hash == other.hash and self.parts == other.parts


def _expression_key(op: Operation, *extra: object) -> Key:
    operands = [id(v) for v in op.operands]
    if op.has_trait(Commutative):
        operands.sort()
    return Key((type(op), tuple(operands), tuple(op.attributes.items()), op.result_types, *extra))


class _Generations:
    """A counter per address space, bumped by writes; unknown effects bump all."""

    def __init__(self) -> None:
        self.counts: defaultdict[AddressSpace, int] = defaultdict(int)
        self.unknown = 0

    def of(self, spaces: set[AddressSpace]) -> tuple[int, ...]:
        related = {s2 for s in spaces for s2 in AddressSpace if s.aliases(s2)}
        return (self.unknown, *(self.counts[s] for s in sorted(related, key=lambda s: s.value)))

    def record(self, op: Operation) -> None:
        effects = effects_of(op)
        if effects is None:
            self.unknown += 1
            return
        for e in effects:
            if e.kind is EffectKind.WRITE:
                self.counts[e.space] += 1


class _ScopedTable:
    """One dict with an undo log per scope (MLIR's ScopedHashTable): a lookup
    is one probe however deep the regions nest."""

    def __init__(self) -> None:
        self.table: dict[Key, Operation] = {}
        self.undo: list[list[tuple[Key, Operation | None]]] = [[]]

    def get(self, key: Key) -> Operation | None:
        return self.table.get(key)

    def __setitem__(self, key: Key, op: Operation) -> None:
        self.undo[-1].append((key, self.table.get(key)))
        self.table[key] = op

    def push(self) -> None:
        self.undo.append([])

    def pop(self) -> None:
        for key, previous in reversed(self.undo.pop()):
            if previous is None:
                del self.table[key]
            else:
                self.table[key] = previous


@dataclass
class CSE(Pass):
    """Eliminate common subexpressions."""

    name = "cse"
    summary = "eliminate common subexpressions (pure ops; reads with no write between)"

    def run(self, module: ModuleOp) -> None:
        for region in module.regions:
            for block in region.blocks:
                self._block(block, _ScopedTable())

    def _block(self, block: Block, pure: _ScopedTable) -> None:
        reads: dict[Key, Operation] = {}
        generations = _Generations()
        op = None
        try:
            for op in block.ops:  # erasing the current op is safe (see BlockOps)
                if op.regions:
                    for region in op.regions:
                        for inner in region.blocks:
                            pure.push()
                            self._block(inner, pure)
                            pure.pop()
                elif op.has_trait(Pure) and op.results:
                    self._replace_or_record(op, _expression_key(op), pure)
                    continue
                elif op.results and is_read_only(op):
                    effects = effects_of(op) or ()
                    spaces = {e.space for e in effects}
                    key = _expression_key(op, generations.of(spaces))
                    self._replace_or_record(op, key, reads)
                    continue
                generations.record(op)
        except Exception:
            if op is None:
                raise
            with working_on(op):  # a crash names the op (the innermost one wins)
                raise

    @staticmethod
    def _replace_or_record(op: Operation, key: Key, table: _ScopedTable | dict) -> None:
        existing = table.get(key)
        if existing is None:
            table[key] = op
            return
        for old, new in zip(op.results, existing.results, strict=True):
            if new.name_hint is None:
                new.name_hint = old.name_hint
            old.replace_all_uses_with(new)
        op.erase()
