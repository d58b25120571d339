"""promote-registers: thread-private arrays → SSA values (mem2reg over structured control flow).

lower-to-thread gives every register fragment a `thread.alloc_local` array and
accesses it like memory. This pass keeps, for each element of each array
whose every access has a constant offset, the SSA value it holds at each
program point, walking the ops in order:

    load    → the element's current value (a vector: `from_elements`)
    store   → the element's value becomes the stored one (a vector: `extract`s)
    load_if → ``select(pred, element, default)``;  store_if → ``select(pred, value, element)``
    scf.for → the elements the body writes become iter_args (init: the value
              before the loop, yielded: the value at the end of the body,
              after the loop: the loop's result)
    scf.if  → the elements either side writes become results of the if
    scf.while → the elements either region writes are carried: arguments of `before`,
              forwarded by its condition to `after`, yielded back

An element read before any write reads zero (a fragment's registers start
undefined in CUDA; zero makes a run reproducible). An array with a run-time
offset, or passed to anything but a load or store (an atom, a cast), or
touched inside a region this pass does not model, stays in local memory, where
ptxas reports it as a stack frame.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from cutec.ir.attributes import IntegerAttr
from cutec.ir.builder import Builder
from cutec.ir.core import Block, Operation, Value
from cutec.ir.dialects import arith, scf, thread
from cutec.ir.dialects.builtin import KernelOp, ModuleOp
from cutec.ir.dialects.gpu import PointerType
from cutec.ir.rewrite import constant_value
from cutec.ir.types import FloatType, Type, VectorType
from cutec.passes.manager import Pass

# An element of an array: (the alloc op, element index).
Slot = tuple[Operation, int]
_ACCESSES = (thread.LoadOp, thread.StoreOp, thread.LoadIfOp, thread.StoreIfOp)


@dataclass
class PromoteRegisters(Pass):
    """Turn private arrays with constant offsets into SSA values (see the module docstring)."""

    name = "promote-registers"
    summary = "thread-private arrays with constant offsets to SSA values (mem2reg)"

    def run(self, module: ModuleOp) -> None:
        for kernel in list(module.walk_type(KernelOp)):
            _Promoter(kernel).run()


class _Promoter:
    def __init__(self, kernel: KernelOp) -> None:
        self.kernel = kernel
        self.slot_of: dict[Value, Slot] = {}  # pointer value → the element it points to
        self.addresses: list[Operation] = []  # ptr_adds of promoted arrays, to erase
        self.allocs: list[Operation] = []
        self.zeros: dict[Operation, Value] = {}

    def run(self) -> None:
        for alloc in list(self.kernel.walk_type(thread.AllocLocalOp)):
            self._plan(alloc)
        if not self.allocs:
            return
        self.walk(self.kernel.body, {})
        for op in reversed(self.addresses):
            op.erase()
        for alloc in self.allocs:
            alloc.erase()

    # ------------------------------------------------------------------ which arrays
    def _plan(self, alloc: thread.AllocLocalOp) -> None:
        """Promote `alloc` if every use is an access at a constant element offset."""
        element = _pointee(alloc.result)
        slots: dict[Value, Slot] = {}
        chain: list[Operation] = []
        work = [(alloc.result, 0)]
        while work:
            ptr, at = work.pop()
            slots[ptr] = (alloc, at)
            for use in ptr.uses:
                user = use.owner
                if isinstance(user, thread.PtrAddOp) and use.index == 0:
                    step = constant_value(user.offset)
                    if not isinstance(step, IntegerAttr):
                        return  # a run-time offset: stays in memory
                    chain.append(user)
                    work.append((user.result, at + step.value))
                elif not _is_access(user, ptr, element) or _in_unmodelled(user, alloc):
                    return
        self.slot_of.update(slots)
        self.addresses.extend(chain)
        self.allocs.append(alloc)

    # ------------------------------------------------------------------ the walk
    def value(self, state: dict[Slot, Value], slot: Slot) -> Value:
        found = state.get(slot)
        if found is None:
            found = self._zero(slot[0])
        return found

    def _zero(self, alloc: Operation) -> Value:
        found = self.zeros.get(alloc)
        if found is None:
            t = _pointee(alloc.results[0])
            zero = 0.0 if isinstance(t, FloatType) else 0
            found = self.zeros[alloc] = Builder.after(alloc).insert(arith.constant(zero, t)).result
        return found

    def walk(self, block: Block, state: dict[Slot, Value]) -> None:
        for op in list(block.ops):
            if isinstance(op, _ACCESSES) and op.ptr in self.slot_of:
                self.access(op, state)
            elif isinstance(op, scf.ForOp):
                self.for_op(op, state)
            elif isinstance(op, scf.IfOp):
                self.if_op(op, state)
            elif isinstance(op, scf.WhileOp):
                self.while_op(op, state)
            else:
                for region in op.regions:
                    for inner in region.blocks:
                        self.walk(inner, dict(state))

    def access(self, op: Operation, state: dict[Slot, Value]) -> None:
        alloc, at = self.slot_of[op.ptr]  # type: ignore[attr-defined]
        b = Builder.before(op)
        if isinstance(op, thread.LoadOp | thread.LoadIfOp):
            width = _width(op.result.type)
            values = [self.value(state, (alloc, at + j)) for j in range(width)]
            if isinstance(op, thread.LoadIfOp):
                defaults = _elements(b, op.default, width)
                values = [
                    b.insert(arith.SelectOp(op.pred, v, d)).result
                    for v, d in zip(values, defaults, strict=True)
                ]
            op.result.replace_all_uses_with(_vector(b, values, op.result.type))
        else:
            assert isinstance(op, thread.StoreOp | thread.StoreIfOp)
            width = _width(op.value.type)
            for j, v in enumerate(_elements(b, op.value, width)):
                slot = (alloc, at + j)
                if isinstance(op, thread.StoreIfOp):
                    v = b.insert(arith.SelectOp(op.pred, v, self.value(state, slot))).result
                state[slot] = v
        op.erase()

    def written(self, op: Operation) -> list[Slot]:
        """The promoted slots of arrays made outside `op` that `op`'s regions store to."""
        found: dict[Slot, None] = {}
        for inner in op.walk():
            if isinstance(inner, thread.StoreOp | thread.StoreIfOp) and inner.ptr in self.slot_of:
                alloc, at = self.slot_of[inner.ptr]
                if op.is_ancestor_of(alloc):
                    continue
                for j in range(_width(inner.value.type)):
                    found[(alloc, at + j)] = None
        return list(found)

    def carried(self, op: scf.ForOp) -> list[Slot]:
        """The slots `op`'s body writes whose value crosses an iteration or leaves the
        loop: all of them but those the body overwrites before any read (its first
        access, in a top-level op of the body, a plain store) and that no access
        outside the loop reads. (A persistent kernel's loop over tiles clears its
        accumulators and reloads its fragments for each tile: carrying them
        anyway kept 16-bit fragment halves live across the loop.)"""
        slots = self.written(op)
        first: dict[Slot, bool] = {}  # slot -> its first access in the body is a store
        for top in op.body.ops:
            accesses = [top] if isinstance(top, _ACCESSES) else list(top.walk())
            for inner in accesses:
                if isinstance(inner, _ACCESSES) and inner.ptr in self.slot_of:
                    alloc, at = self.slot_of[inner.ptr]  # type: ignore[attr-defined]
                    is_store = isinstance(inner, thread.StoreOp) and inner is top
                    value = (
                        inner.value
                        if isinstance(inner, thread.StoreOp | thread.StoreIfOp)
                        else inner.result
                    )
                    for j in range(_width(value.type)):
                        first.setdefault((alloc, at + j), is_store)
        read_outside = self.read_outside(op)
        return [s for s in slots if not first.get(s, False) or s[0] in read_outside]

    def read_outside(self, op: Operation) -> set[Operation]:
        """The promoted arrays some load outside `op` still reads (the loads the walk has
        promoted are gone: their pointers' uses, not a walk of the kernel, say which)."""
        found: set[Operation] = set()
        for ptr, (alloc, _) in self.slot_of.items():
            if alloc not in found and any(
                isinstance(use.owner, thread.LoadOp | thread.LoadIfOp)
                and not op.is_ancestor_of(use.owner)
                for use in ptr.uses
            ):
                found.add(alloc)
        return found

    def merged(self, op: scf.IfOp) -> list[Slot]:
        """The slots `op`'s branches write whose value may be read after it: all of them
        inside a loop (a later iteration may read them), else those of arrays some load
        outside `op` reads. (gemm_tiled's CTAs past the full waves skip the whole tile:
        merging its fragments with their values before the branch kept zeros of every
        accumulator and 16-bit fragment half.)"""
        slots = self.written(op)
        parent = op.parent_op
        while parent is not None and not isinstance(parent, scf.ForOp | scf.WhileOp):
            parent = parent.parent_op
        if parent is not None:
            return slots
        read_outside = self.read_outside(op)
        return [s for s in slots if s[0] in read_outside]

    def for_op(self, op: scf.ForOp, state: dict[Slot, Value]) -> None:
        slots = self.carried(op)
        if not slots:
            self.walk(op.body, dict(state))
            return
        inits = [self.value(state, s) for s in slots]
        new = Builder.before(op).insert(
            scf.ForOp(op.lb, op.ub, op.step, [*op.inits, *inits], dict(op.attributes))
        )
        new.location = op.location
        _move_body(op.body, new.body)
        inner = dict(state)
        carried = new.body.args[1 + len(op.inits) :]
        inner.update(zip(slots, carried, strict=True))
        self.walk(new.body, inner)
        _extend_yield(new.body, [inner[s] for s in slots])
        n = len(op.results)
        for old, result in zip(op.results, new.results[:n], strict=True):
            old.replace_all_uses_with(result)
        state.update(zip(slots, new.results[n:], strict=True))
        op.erase()

    def while_op(self, op: scf.WhileOp, state: dict[Slot, Value]) -> None:
        """The slots either region writes are carried: before's arguments, then through
        the condition into after's arguments and back by the yield; the loop's results
        are their values after it."""
        slots = self.written(op)
        if not slots:
            for region in op.regions:
                self.walk(region.blocks[0], dict(state))
            return
        inits = [self.value(state, s) for s in slots]
        types = [v.type for v in inits]
        new = Builder.before(op).insert(
            scf.WhileOp([*op.inits, *inits], [*op.result_types, *types])
        )
        new.location = op.location
        new.attributes.update(op.attributes)
        _move_body(op.before, new.before)
        _move_body(op.after, new.after)
        n_in, n_out = len(op.inits), len(op.results)
        before = dict(state)
        before.update(zip(slots, new.before.args[n_in:], strict=True))
        self.walk(new.before, before)
        condition = new.before.terminator
        assert isinstance(condition, scf.ConditionOp)
        condition.set_operands([*condition.operands, *(self.value(before, s) for s in slots)])
        after = dict(state)
        after.update(zip(slots, new.after.args[n_out:], strict=True))
        self.walk(new.after, after)
        _extend_yield(new.after, [self.value(after, s) for s in slots])
        for old, result in zip(op.results, new.results[:n_out], strict=True):
            old.replace_all_uses_with(result)
        state.update(zip(slots, new.results[n_out:], strict=True))
        op.erase()

    def if_op(self, op: scf.IfOp, state: dict[Slot, Value]) -> None:
        slots = self.merged(op)
        if not slots:
            for region in op.regions:
                self.walk(region.blocks[0], dict(state))
            return
        types = [self.value(state, s).type for s in slots]
        new = Builder.before(op).insert(
            scf.IfOp(op.cond, [*op.result_types, *types], with_else=True)
        )
        new.location = op.location
        new.attributes.update(op.attributes)
        old_blocks = [r.blocks[0] for r in op.regions]
        for old_block, new_block in zip(old_blocks, (new.then_block, new.else_block), strict=False):
            assert new_block is not None
            _move_body(old_block, new_block)
        else_block = new.else_block
        assert else_block is not None
        if len(old_blocks) == 1:  # no else: it yields the values from before the if
            else_block.append(scf.YieldOp())
        for block in (new.then_block, else_block):
            inner = dict(state)
            self.walk(block, inner)
            _extend_yield(block, [self.value(inner, s) for s in slots])
        n = len(op.results)
        for old, result in zip(op.results, new.results[:n], strict=True):
            old.replace_all_uses_with(result)
        state.update(zip(slots, new.results[n:], strict=True))
        op.erase()


# --------------------------------------------------------------------------- helpers


def _pointee(ptr: Value) -> Type:
    t = ptr.type
    assert isinstance(t, PointerType)
    return t.element


def _width(t: Type) -> int:
    return t.shape[0] if isinstance(t, VectorType) else 1


def _is_access(user: Operation, ptr: Value, element: Type) -> bool:
    """`user` reads or writes elements of `element` through `ptr` (not stores `ptr` itself)."""
    if not isinstance(user, _ACCESSES) or user.ptr is not ptr:
        return False
    t = user.result.type if isinstance(user, thread.LoadOp | thread.LoadIfOp) else user.value.type
    if isinstance(user, thread.StoreOp | thread.StoreIfOp) and user.value is ptr:
        return False
    return (t.element if isinstance(t, VectorType) else t) == element


def _in_unmodelled(op: Operation, alloc: Operation) -> bool:
    """`op` sits in a region op this pass does not model below `alloc`'s block."""
    parent = op.parent_op
    while parent is not None and parent is not alloc.parent_op:
        if not isinstance(parent, scf.ForOp | scf.IfOp | scf.WhileOp):
            return True
        parent = parent.parent_op
    return False


def _elements(b: Builder, value: Value, width: int) -> list[Value]:
    if width == 1:
        return [value]
    return [b.insert(thread.ExtractOp(value, j)).result for j in range(width)]


def _vector(b: Builder, values: list[Value], t: Type) -> Value:
    if not isinstance(t, VectorType):
        return values[0]
    return b.insert(thread.FromElementsOp(values)).result


def _move_body(old: Block, new: Block) -> None:
    """Move `old`'s ops into `new` (which has at least `old`'s arguments, in order)."""
    for arg, replacement in zip(old.args, new.args, strict=False):
        replacement.name_hint = replacement.name_hint or arg.name_hint
        arg.replace_all_uses_with(replacement)
    ops: Iterable[Operation] = list(old.ops)
    for op in ops:
        op.detach()
        new.append(op)


def _extend_yield(block: Block, values: list[Value]) -> None:
    terminator = block.last_op
    assert isinstance(terminator, scf.YieldOp)
    terminator.set_operands([*terminator.operands, *values])
