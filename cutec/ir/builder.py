"""Builder: creates ops at an insertion point, stamping a source location.

b = Builder.at_end(kernel.body, location=loc)
c = b.insert(arith.constant(4, index)).result
with b.at_start_of(loop.body):
    ...
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

from cutec.diagnostics import Location
from cutec.ir.core import Block, Operation

OpT = TypeVar("OpT", bound=Operation)


@dataclass
class InsertPoint:
    """Before op `before` of `block` (None: at the end).

    The point is an op, not a position, so inserting elsewhere in the block
    never moves it (and inserting costs O(1)).
    """

    block: Block
    before: Operation | None = None


class Builder:
    """Inserts ops at a movable point; each insert moves the point past the new op."""

    def __init__(self, point: InsertPoint | None = None, location: Location | None = None):
        self.point = point
        self.location = location

    @classmethod
    def at_end(cls, block: Block, location: Location | None = None) -> Builder:
        return cls(InsertPoint(block), location)

    @classmethod
    def at_start(cls, block: Block, location: Location | None = None) -> Builder:
        return cls(InsertPoint(block, block.first_op), location)

    @classmethod
    def before(cls, op: Operation, location: Location | None = None) -> Builder:
        assert op.parent is not None, "op is not in a block"
        return cls(InsertPoint(op.parent, op), location or op.location)

    @classmethod
    def after(cls, op: Operation, location: Location | None = None) -> Builder:
        assert op.parent is not None, "op is not in a block"
        return cls(InsertPoint(op.parent, op.next_op), location or op.location)

    def insert(self, op: OpT) -> OpT:
        """Insert `op` at the point (giving it the builder's location if it has none)."""
        if self.point is None:
            raise ValueError("builder has no insertion point")
        if op.location is None:
            op.location = self.location
        block, before = self.point.block, self.point.before
        if before is None:
            block.append(op)
        else:
            block.insert_before(before, op)
        return op

    @contextmanager
    def at(self, point: InsertPoint) -> Iterator[Builder]:
        """Temporarily insert at `point` (e.g. into a loop body), then come back."""
        saved = self.point
        self.point = point
        try:
            yield self
        finally:
            self.point = saved

    def at_end_of(self, block: Block):
        return self.at(InsertPoint(block))

    def at_start_of(self, block: Block):
        return self.at(InsertPoint(block, block.first_op))

    @contextmanager
    def located(self, location: Location | None) -> Iterator[Builder]:
        """Stamp ops inserted inside the `with` with `location`."""
        saved = self.location
        self.location = location
        try:
            yield self
        finally:
            self.location = saved
