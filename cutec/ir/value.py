"""SSA values and their use lists: op results and block arguments.

A `Value` knows its type and every `Use` of it (which operand of which op);
`Operation.set_operand` keeps both sides right. Importing nothing of the
core at run time keeps this module below `cutec.ir.core`, which re-exports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cutec.ir.core import Block, Operation
    from cutec.ir.types import Type


class Use:
    """One use of a value: operand `index` of `owner`.

    `slot` is the use's position in its value's `uses`, so removing a use is
    O(1) (the last use takes its place): a constant used by thousands of ops
    in an unrolled block loses its users one by one without rescanning.
    """

    __slots__ = ("index", "owner", "slot")

    def __init__(self, owner: Operation, index: int) -> None:
        self.owner = owner
        self.index = index
        self.slot = -1

    def __repr__(self) -> str:
        return f"Use({self.owner.name}#{self.index})"


class Value:
    """An SSA value: an op result or a block argument. Tracks its uses.

    `uses` is in no particular order (removal swaps in the last use).
    """

    __slots__ = ("name_hint", "type", "uses")

    def __init__(self, type: Type, name_hint: str | None = None) -> None:
        self.type = type
        self.uses: list[Use] = []
        self.name_hint = name_hint

    @property
    def owner(self) -> Operation | Block:
        raise NotImplementedError

    def has_uses(self) -> bool:
        return bool(self.uses)

    def _add_use(self, use: Use) -> None:
        use.slot = len(self.uses)
        self.uses.append(use)

    def _remove_use(self, use: Use) -> None:
        last = self.uses.pop()
        if last is not use:
            self.uses[use.slot] = last
            last.slot = use.slot

    def replace_all_uses_with(self, other: Value) -> None:
        """Make every user of this value use `other` instead."""
        if other is self:
            return
        for use in list(self.uses):
            use.owner.set_operand(use.index, other)

    def users(self) -> list[Operation]:
        """The ops using this value, each once."""
        seen: dict[int, Operation] = {}
        for use in self.uses:
            seen.setdefault(id(use.owner), use.owner)
        return list(seen.values())


class OpResult(Value):
    """Result `index` of operation `op`."""

    __slots__ = ("index", "op")

    def __init__(self, type: Type, op: Operation, index: int) -> None:
        super().__init__(type)
        self.op = op
        self.index = index

    @property
    def owner(self) -> Operation:
        return self.op

    def __repr__(self) -> str:
        return f"<OpResult {self.op.name}#{self.index}: {self.type}>"


class BlockArgument(Value):
    """Argument `index` of `block`."""

    __slots__ = ("block", "index")

    def __init__(self, type: Type, block: Block, index: int) -> None:
        super().__init__(type)
        self.block = block
        self.index = index

    @property
    def owner(self) -> Block:
        return self.block

    def __repr__(self) -> str:
        return f"<BlockArgument #{self.index}: {self.type}>"
