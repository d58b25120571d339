"""The analysis manager: each analysis of a kernel built once, and kept while it holds.

An *analysis* here is a class whose instance answers questions about the IR of
one kernel (or function) and memoises its answers: `cutec.ir.layout_of`'s
`LayoutAnalysis` is the one passes share. A pass asks ``analyses.get(kind, op)``
for the analysis of the kernel `op` is in (or is); the first request builds it
(``kind()``), later ones return the same object, so a pass and the helpers it
calls, and the passes after it, read one memo instead of each rebuilding it.

Its answers are valid only for the IR it read. As in MLIR's analysis manager,
a pass declares the analyses it *preserves* (`Pass.preserves`); after each pass
the pass manager drops every cached analysis the pass does not name. A pass
preserves an analysis only when no answer the analysis gave, nor one it would
give, changes: the layouts of the tensors (their ops, operands and types) and
the SSA values each symbol stands for. Setting an attribute that no layout
reads preserves it; folding, CSE, loop rewriting and new atom types do not (a
value merged away leaves its symbol behind, and a replayed offset is another
symbolic expression than the one it was materialised from).

Inside one pass, an analysis stays valid across the pass's own rewrites only as
far as that pass knows them to leave its answers alone; `invalidate` drops one
kernel's analyses when they do not.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from typing import TypeVar, cast

from cutec.ir.core import Operation
from cutec.ir.traits import IsolatedFromAbove

A = TypeVar("A")


def scope_of(op: Operation) -> Operation:
    """The kernel or function `op` is (or is in): its nearest op isolated from above."""
    scope: Operation | None = op
    while scope is not None and not scope.has_trait(IsolatedFromAbove):
        scope = scope.parent_op
    return op if scope is None else scope


class AnalysisManager:
    """Analyses cached per kernel; `built` counts the ones made, by class."""

    def __init__(self) -> None:
        self._cache: dict[Operation, dict[type, object]] = {}
        self.built: Counter[type] = Counter()

    def get(self, kind: type[A], op: Operation) -> A:
        """The `kind` analysis of the kernel `op` is in, built on first request."""
        cached = self._cache.setdefault(scope_of(op), {})
        found = cached.get(kind)
        if found is None:
            found = cached[kind] = kind()
            self.built[kind] += 1
        return cast(A, found)

    def cached(self, kind: type, op: Operation) -> bool:
        """Whether the `kind` analysis of `op`'s kernel is built and kept."""
        return kind in self._cache.get(scope_of(op), {})

    def invalidate(self, op: Operation) -> None:
        """Drop every analysis of `op`'s kernel (its IR changed under them)."""
        self._cache.pop(scope_of(op), None)

    def keep_only(self, preserved: Collection[type]) -> None:
        """Drop, for every kernel, the analyses not in `preserved` (after a pass)."""
        for scope in list(self._cache):
            kept = {k: a for k, a in self._cache[scope].items() if k in preserved}
            if kept:
                self._cache[scope] = kept
            else:
                del self._cache[scope]
