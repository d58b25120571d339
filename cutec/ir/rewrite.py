"""Rewrite patterns and the rewriter they mutate the IR through.

A pattern is one class with one `match_and_rewrite` on one op type, and a
docstring stating the rewrite as an equation. Op classes list their patterns in
``canonicalization_patterns``; the canonicalize pass applies them to a fixpoint.
All mutation goes through `PatternRewriter`, so the driver learns which ops
changed and revisits their neighbours.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from cutec.ir.core import Block, Operation, Value


class PatternRewriter:
    """Mutates the IR on a pattern's behalf and reports what it touched."""

    def __init__(
        self,
        on_change: Callable[[Operation], None] | None = None,
        on_erase: Callable[[Operation], None] | None = None,
    ) -> None:
        self._on_change = on_change or (lambda op: None)
        self._on_erase = on_erase or (lambda op: None)
        self.changed = False

    def _notify_users(self, values: Sequence[Value]) -> None:
        for v in values:
            for user in v.users():
                self._on_change(user)

    def insert_before(self, anchor: Operation, op: Operation) -> Operation:
        """Insert `op` just before `anchor`; it takes the anchor's location if it has none."""
        assert anchor.parent is not None
        if op.location is None:
            op.location = anchor.location
        anchor.parent.insert_before(anchor, op)
        self.changed = True
        self._on_change(op)
        return op

    def replace_op(self, op: Operation, values: Sequence[Value]) -> None:
        """Replace `op`'s results with `values` and erase it."""
        self._notify_users(op.results)
        for r, v in zip(op.results, values, strict=True):
            r.replace_all_uses_with(v)
            self._on_change_value(v)
        self.erase_op(op)

    def _on_change_value(self, v: Value) -> None:
        owner = v.owner
        if isinstance(owner, Operation):
            self._on_change(owner)

    def erase_op(self, op: Operation) -> None:
        """Erase `op` (results unused) and everything nested in it."""
        for nested in op.walk():
            self._on_erase(nested)
        operand_defs = [v.owner for v in op.operands if isinstance(v.owner, Operation)]
        op.erase()
        for d in operand_defs:
            self._on_change(d)  # may now be dead
        self.changed = True

    def inline_block_before(self, block: Block, anchor: Operation, args: Sequence[Value]) -> None:
        """Move `block`'s ops before `anchor`, its arguments replaced by `args`."""
        assert anchor.parent is not None
        for a, v in zip(block.args, args, strict=True):
            a.replace_all_uses_with(v)
        for op in list(block.ops):
            op.detach()
            anchor.parent.insert_before(anchor, op)
            self._on_change(op)
        self.changed = True

    def modify(self, op: Operation) -> None:
        """Record that `op` was changed in place."""
        self.changed = True
        self._on_change(op)


class RewritePattern:
    """Rewrites ops of type `op_type`; returns True if it changed the IR."""

    op_type: ClassVar[type[Operation]] = Operation

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        raise NotImplementedError
