"""The IR core: operations, values, blocks and regions.

The structure is MLIR's. An `Operation` has operands (uses of `Value`s),
results, attributes (a name → `Attribute` dict), regions and a source
location. A `Region` holds `Block`s; a block has arguments and an ordered list
of operations. Types and attributes are frozen, hashable dataclasses that print
themselves (see types.py and attributes.py). Values and their use lists are
in value.py (re-exported here).

A block's ops form an intrusive doubly linked list (`Operation.prev_op` /
`next_op`, `Block.first_op` / `last_op`), so inserting, moving and erasing an
op cost O(1) however long the block is: lowered per-thread code is fully
unrolled, tens of thousands of ops in one block. `block.ops` is a live view
(forwards, `reversed`, `len`); nothing indexes a block by position.

Op classes subclass `Operation` and set `name`, `traits` and arity; their
``__init__`` takes natural arguments, while `Operation.create` builds any op
generically (the parser and the rewriters use it).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, ClassVar, TypeVar

from cutec.diagnostics import CompileError, Location
from cutec.ir.traits import MemoryEffects, Pure
from cutec.ir.value import BlockArgument, OpResult, Use, Value

if TYPE_CHECKING:
    from cutec.ir.attributes import Attribute
    from cutec.ir.opdef import FieldValues, OpDef
    from cutec.ir.traits import MemoryEffect, Trait
    from cutec.ir.types import Type

OpT = TypeVar("OpT", bound="Operation")
TraitT = TypeVar("TraitT", bound="Trait")


class VerifyError(CompileError):
    """The IR breaks an invariant; names the op and its location."""


# --------------------------------------------------------------------------- operations


# has_trait's answers by (op class, trait class).
_HAS_TRAIT: dict[tuple[type, type], bool] = {}


class Operation:
    """An operation. Subclasses declare `name`, `traits` and arity.

    `num_operands` / `num_results` / `num_regions` of None mean variadic; the
    generic verifier checks the fixed ones before calling `verify_`.
    """

    name: ClassVar[str] = "builtin.unregistered"
    traits: ClassVar[tuple[Trait, ...]] = ()
    num_operands: ClassVar[int | None] = None
    num_results: ClassVar[int | None] = None
    num_regions: ClassVar[int | None] = 0
    # Patterns the canonicalize pass applies to ops of this class.
    canonicalization_patterns: ClassVar[tuple] = ()
    # Declared fields (cutec.ir.opdef), collected when a subclass is created.
    op_def: ClassVar[OpDef | None] = None

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        # opdef builds on this module, so it is imported when the first op class is made.
        from cutec.ir.opdef import define_op

        define_op(cls)

    @classmethod
    def build(cls: type[OpT], *, location: Location | None = None, **fields: object) -> OpT:
        """Build an op from its declared fields by name (`cutec.ir.opdef`)."""
        from cutec.ir.opdef import build_parts  # opdef imports this module

        return cls.create(**build_parts(cls, fields), location=location)

    @classmethod
    def infer_result_types(cls, fields: FieldValues) -> Sequence[Type] | None:
        """The result types given the operands and attributes by field name, if they
        follow from them (an assembly format need not print them then)."""
        return None

    def __init__(
        self,
        *,
        operands: Sequence[Value] = (),
        result_types: Sequence[Type] = (),
        attributes: dict[str, Attribute] | None = None,
        regions: Sequence[Region] = (),
        location: Location | None = None,
    ) -> None:
        self._operands: list[Value] = []
        self._operand_uses: list[Use] = []  # the Use of each operand, in its value's list
        self.results: list[OpResult] = [OpResult(t, self, i) for i, t in enumerate(result_types)]
        self.attributes: dict[str, Attribute] = dict(attributes or {})
        self.regions: list[Region] = []
        self.location = location
        # Where the op stood in a parsed IR file; diagnostics fall back to it
        # when the op carries no source location. Never printed.
        self.parsed_at: Location | None = None
        self.parent: Block | None = None
        # Links of the parent block's op list, and this op's order number in it
        # (increasing along the list while the block's `_order_valid` holds).
        self._prev: Operation | None = None
        self._next: Operation | None = None
        self._order = 0
        for v in operands:
            self._append_operand(v)
        for r in regions:
            self.add_region(r)

    @classmethod
    def create(
        cls: type[OpT],
        *,
        operands: Sequence[Value] = (),
        result_types: Sequence[Type] = (),
        attributes: dict[str, Attribute] | None = None,
        regions: Sequence[Region] = (),
        location: Location | None = None,
    ) -> OpT:
        """Build an op of this class from its generic parts, bypassing ``__init__``."""
        op = cls.__new__(cls)
        Operation.__init__(
            op,
            operands=operands,
            result_types=result_types,
            attributes=attributes,
            regions=regions,
            location=location,
        )
        return op

    # -- operands ---------------------------------------------------------
    @property
    def operands(self) -> tuple[Value, ...]:
        return tuple(self._operands)

    def _append_operand(self, value: Value) -> None:
        if not isinstance(value, Value):
            raise TypeError(f"{self.name}: operand must be a Value, got {type(value).__name__}")
        use = Use(self, len(self._operands))
        value._add_use(use)
        self._operands.append(value)
        self._operand_uses.append(use)

    def set_operand(self, index: int, value: Value) -> None:
        """Replace operand `index`, keeping both values' use lists right (O(1))."""
        use = self._operand_uses[index]
        self._operands[index]._remove_use(use)
        self._operands[index] = value
        value._add_use(use)

    def set_operands(self, values: Sequence[Value]) -> None:
        """Replace the whole operand list."""
        self.drop_all_references()
        for v in values:
            self._append_operand(v)

    def drop_all_references(self) -> None:
        """Remove this op's uses of its operands (before erasing it)."""
        for v, use in zip(self._operands, self._operand_uses, strict=True):
            v._remove_use(use)
        self._operands = []
        self._operand_uses = []

    # -- results ----------------------------------------------------------
    @property
    def result(self) -> OpResult:
        """The single result of a one-result op."""
        if len(self.results) != 1:
            raise ValueError(f"{self.name} has {len(self.results)} results, not one")
        return self.results[0]

    @property
    def result_types(self) -> tuple[Type, ...]:
        return tuple(r.type for r in self.results)

    @property
    def operand_types(self) -> tuple[Type, ...]:
        return tuple(v.type for v in self._operands)

    # -- regions ----------------------------------------------------------
    def add_region(self, region: Region) -> Region:
        if region.parent is not None:
            raise ValueError("region already belongs to an op")
        region.parent = self
        self.regions.append(region)
        return region

    # -- traits -----------------------------------------------------------
    @classmethod
    def has_trait(cls, trait_type: type[Trait]) -> bool:
        # Cached per (class, trait): the rewrite driver and the passes ask it of every op
        # they visit, and an op class's traits are fixed when it is defined.
        key = (cls, trait_type)
        found = _HAS_TRAIT.get(key)
        if found is None:
            found = _HAS_TRAIT[key] = any(isinstance(t, trait_type) for t in cls.traits)
        return found

    @classmethod
    def get_trait(cls, trait_type: type[TraitT]) -> TraitT | None:
        for t in cls.traits:
            if isinstance(t, trait_type):
                return t
        return None

    def memory_effects(self) -> tuple[MemoryEffect, ...] | None:
        """The op's own memory effects; None means unknown (assume anything).

        The default reads the `MemoryEffects` trait, and a `Pure` op has none.
        Ops whose effects depend on their operands (a load through a pointer of
        some address space) override this.
        """
        if self.has_trait(Pure):
            return ()
        trait = self.get_trait(MemoryEffects)
        return trait.effects if trait is not None else None

    # -- structure --------------------------------------------------------
    @property
    def parent_op(self) -> Operation | None:
        block = self.parent
        if block is None or block.parent is None:
            return None
        return block.parent.parent

    def is_ancestor_of(self, other: Operation) -> bool:
        """True if `other` is this op or nested in one of its regions."""
        op: Operation | None = other
        while op is not None:
            if op is self:
                return True
            op = op.parent_op
        return False

    @property
    def next_op(self) -> Operation | None:
        """The op after this one in its block (None at the end or when detached)."""
        return self._next

    @property
    def prev_op(self) -> Operation | None:
        """The op before this one in its block (None at the start or when detached)."""
        return self._prev

    def is_before_in_block(self, other: Operation) -> bool:
        """True if this op comes before `other` in their common block.

        Amortised O(1), as MLIR's isBeforeInBlock: ops carry order numbers
        that insertion keeps increasing where it can and otherwise marks stale;
        the first query after that renumbers the block once.
        """
        block = self.parent
        if block is None or other.parent is not block:
            raise ValueError(f"{self.name} and {other.name} are not in one block")
        if not block._order_valid:
            block._renumber()
        return self._order < other._order

    def walk(self, *, reverse: bool = False) -> Iterator[Operation]:
        """This op and every op nested in it, pre-order (post-order if reverse).

        The op just yielded may be erased or moved (blocks are iterated by the
        rule of `BlockOps`); erasing other ops during the walk is not safe.
        """
        if not reverse:
            yield self
        regions = reversed(self.regions) if reverse else self.regions
        for region in regions:
            for block in reversed(region.blocks) if reverse else region.blocks:
                for op in reversed(block.ops) if reverse else block.ops:
                    if op.regions:
                        yield from op.walk(reverse=reverse)
                    else:  # most ops: no nested generator for a leaf
                        yield op
        if reverse:
            yield self

    def walk_type(self, op_type: type[OpT]) -> Iterator[OpT]:
        """Every nested op (this one included) of class `op_type`."""
        for op in self.walk():
            if isinstance(op, op_type):
                yield op

    def detach(self) -> Operation:
        """Unlink from the parent block in O(1), keeping operands and regions."""
        if self.parent is not None:
            self.parent._unlink(self)
        return self

    def move_before(self, anchor: Operation) -> None:
        """Move this op (in a block or detached) to just before `anchor`."""
        assert anchor.parent is not None, "anchor is not in a block"
        anchor.parent.insert_before(anchor, self.detach())

    def move_after(self, anchor: Operation) -> None:
        """Move this op (in a block or detached) to just after `anchor`."""
        assert anchor.parent is not None, "anchor is not in a block"
        anchor.parent.insert_after(anchor, self.detach())

    def erase(self) -> None:
        """Remove this op; its results must be unused."""
        for r in self.results:
            if r.uses:
                raise ValueError(f"cannot erase {self.name}: result #{r.index} still has uses")
        self.detach()
        for op in list(self.walk(reverse=True)):
            op.drop_all_references()

    def replace_with(self, values: Sequence[Value]) -> None:
        """Replace every result's uses with `values` and erase this op."""
        if len(values) != len(self.results):
            raise ValueError(f"{self.name}: {len(values)} replacements for {len(self.results)}")
        for r, v in zip(self.results, values, strict=True):
            r.replace_all_uses_with(v)
        self.erase()

    def clone(self, mapping: dict[Value, Value] | None = None) -> Operation:
        """A deep copy; operands are remapped through `mapping` (updated in place)."""
        mapping = {} if mapping is None else mapping
        new = self._clone_alone(mapping)
        _clone_regions(new._empty_regions_like(self), mapping)
        return new

    def _clone_alone(self, mapping: dict[Value, Value]) -> Operation:
        """A copy of this op without its regions; its results are added to `mapping`."""
        new = type(self).create(
            operands=[mapping.get(v, v) for v in self._operands],
            result_types=self.result_types,
            attributes=dict(self.attributes),
            location=self.location,
        )
        new.parsed_at = self.parsed_at
        for old_r, new_r in zip(self.results, new.results, strict=True):
            new_r.name_hint = old_r.name_hint
            mapping[old_r] = new_r
        return new

    def _empty_regions_like(self, old: Operation) -> list[tuple[Region, Region]]:
        """Give this copy of `old` one empty region per region of `old`: (old, new) pairs."""
        return [(r, self.add_region(Region())) for r in old.regions]

    def verify_(self) -> None:
        """The op's own invariants; raise `self.error(...)` when one fails."""

    def error(self, message: str) -> VerifyError:
        """A verification error about this op, at its location."""
        return VerifyError(f"'{self.name}' op {message}", self.location or self.parsed_at)

    def __repr__(self) -> str:
        return f"<{self.name} at {self.location}>" if self.location else f"<{self.name}>"


# --------------------------------------------------------------------------- blocks and regions


class BlockOps:
    """A live view of a block's ops: iterable forwards and with `reversed`,
    `len` and `in` in O(1), and `first` / `last`.

    Iteration rule: the iterator takes the next op before handing out the
    current one, so the current op may be erased, detached or moved, and
    ops inserted anywhere except just after it are visited when reached.
    Erasing or detaching the op it holds next (the current op's successor,
    or predecessor in reverse) raises `RuntimeError`; to change other ops,
    iterate over a snapshot, ``list(block.ops)``.
    """

    __slots__ = ("_block",)

    def __init__(self, block: Block) -> None:
        self._block = block

    def __iter__(self) -> Iterator[Operation]:
        block = self._block
        op = block._first
        while op is not None:
            following = op._next
            yield op
            if following is not None and following.parent is not block:
                raise RuntimeError("the next op was removed while iterating over its block")
            op = following

    def __reversed__(self) -> Iterator[Operation]:
        block = self._block
        op = block._last
        while op is not None:
            preceding = op._prev
            yield op
            if preceding is not None and preceding.parent is not block:
                raise RuntimeError("the next op was removed while iterating over its block")
            op = preceding

    def __len__(self) -> int:
        return self._block._len

    def __bool__(self) -> bool:
        return self._block._first is not None

    def __contains__(self, op: object) -> bool:
        return isinstance(op, Operation) and op.parent is self._block

    @property
    def first(self) -> Operation | None:
        return self._block._first

    @property
    def last(self) -> Operation | None:
        return self._block._last


# Gap between the order numbers of consecutive ops after renumbering: about
# 16 insertions at one place (each halving the gap) before a renumbering.
_ORDER_STRIDE = 1 << 16


class Block:
    """An ordered list of operations with typed block arguments.

    The ops are linked through their `prev_op` / `next_op`: `append`,
    `prepend`, `insert_before`, `insert_after` and `Operation.detach` are
    O(1). There is no positional access (`ops[i]`): walk from `first_op` /
    `last_op` or an anchor op.
    """

    def __init__(self, arg_types: Iterable[Type] = ()) -> None:
        self.args: list[BlockArgument] = []
        self._first: Operation | None = None
        self._last: Operation | None = None
        self._len = 0
        self._order_valid = True
        self.parent: Region | None = None
        for t in arg_types:
            self.add_arg(t)

    @property
    def ops(self) -> BlockOps:
        """The ops, as a live view (see `BlockOps` for iterating while erasing)."""
        return BlockOps(self)

    @property
    def first_op(self) -> Operation | None:
        return self._first

    @property
    def last_op(self) -> Operation | None:
        return self._last

    def add_arg(self, type: Type, name_hint: str | None = None) -> BlockArgument:
        arg = BlockArgument(type, self, len(self.args))
        arg.name_hint = name_hint
        self.args.append(arg)
        return arg

    def erase_arg(self, index: int) -> None:
        """Remove an unused argument and renumber the rest."""
        if self.args[index].uses:
            raise ValueError("cannot erase a block argument that has uses")
        del self.args[index]
        for i, a in enumerate(self.args):
            a.index = i

    @property
    def parent_op(self) -> Operation | None:
        return self.parent.parent if self.parent is not None else None

    @property
    def terminator(self) -> Operation | None:
        """The last op (a terminator in a verified block), or None if empty."""
        return self._last

    def append(self, op: Operation) -> Operation:
        return self._link(op, self._last, None)

    def prepend(self, op: Operation) -> Operation:
        return self._link(op, None, self._first)

    def insert_before(self, anchor: Operation, op: Operation) -> Operation:
        if anchor.parent is not self:
            raise ValueError(f"{anchor.name} is not in this block")
        return self._link(op, anchor._prev, anchor)

    def insert_after(self, anchor: Operation, op: Operation) -> Operation:
        if anchor.parent is not self:
            raise ValueError(f"{anchor.name} is not in this block")
        return self._link(op, anchor, anchor._next)

    def _link(self, op: Operation, prev: Operation | None, next: Operation | None) -> Operation:
        """Put `op` between the neighbours `prev` and `next` (None: an end)."""
        if op.parent is not None:
            raise ValueError(f"{op.name} is already in a block")
        op.parent, op._prev, op._next = self, prev, next
        if prev is None:
            self._first = op
        else:
            prev._next = op
        if next is None:
            self._last = op
        else:
            next._prev = op
        self._len += 1
        if self._order_valid:
            if next is None:
                op._order = prev._order + _ORDER_STRIDE if prev is not None else 0
            elif prev is None:
                op._order = next._order - _ORDER_STRIDE
            elif next._order - prev._order > 1:
                op._order = (prev._order + next._order) // 2
            else:
                self._order_valid = False
        return op

    def _unlink(self, op: Operation) -> None:
        prev, next = op._prev, op._next
        if prev is None:
            self._first = next
        else:
            prev._next = next
        if next is None:
            self._last = prev
        else:
            next._prev = prev
        op.parent = op._prev = op._next = None
        self._len -= 1

    def _renumber(self) -> None:
        for i, op in enumerate(self.ops):
            op._order = i * _ORDER_STRIDE
        self._order_valid = True

    def clone(self, mapping: dict[Value, Value]) -> Block:
        new = Block()
        _clone_regions(self._clone_into(new, mapping), mapping)
        return new

    def _clone_into(self, new: Block, mapping: dict[Value, Value]) -> list[tuple[Region, Region]]:
        """Copy the arguments and the ops, with empty regions, into `new`; the (old, new)
        pairs of those regions, still to be filled."""
        for a in self.args:
            mapping[a] = new.add_arg(a.type, a.name_hint)
        pending: list[tuple[Region, Region]] = []
        for op in self.ops:
            copy = op._clone_alone(mapping)
            new.append(copy)
            pending += copy._empty_regions_like(op)
        return pending


class Region:
    """A list of blocks owned by an op (structured control flow: one block)."""

    def __init__(self, blocks: Iterable[Block] = ()) -> None:
        self.blocks: list[Block] = []
        self.parent: Operation | None = None
        for b in blocks:
            self.add_block(b)

    def add_block(self, block: Block) -> Block:
        if block.parent is not None:
            raise ValueError("block already belongs to a region")
        block.parent = self
        self.blocks.append(block)
        return block

    @property
    def block(self) -> Block:
        """The single block of a single-block region."""
        if len(self.blocks) != 1:
            raise ValueError(f"region has {len(self.blocks)} blocks, not one")
        return self.blocks[0]

    def clone(self, mapping: dict[Value, Value]) -> Region:
        new = Region()
        _clone_regions([(self, new)], mapping)
        return new


def _clone_regions(pending: list[tuple[Region, Region]], mapping: dict[Value, Value]) -> None:
    """Fill each new region with a copy of its old one, nested regions too, from a work
    list rather than by recursion: IR nested however deep clones. A block's ops are all
    copied before any of their regions, so every value a nested region uses (defined in
    an enclosing block, before the op) is in `mapping` when the region is copied."""
    while pending:
        old, new = pending.pop()
        for block in old.blocks:
            pending += block._clone_into(new.add_block(Block()), mapping)
