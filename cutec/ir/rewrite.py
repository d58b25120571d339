"""Rewrite patterns, the rewriter they mutate the IR through, and the greedy
worklist driver (MLIR's ``applyPatternsGreedily``).

A pattern is one class with one `match_and_rewrite` on one op type, and a
docstring stating the rewrite as an equation. Op classes list their patterns in
``canonicalization_patterns``. All mutation goes through `PatternRewriter`,
which tells its `RewriteListener` what it inserted, changed and erased; the
driver listens and re-queues exactly the ops a rewrite touched, so a rewrite
costs work near it, not a walk of the module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import ClassVar

from cutec.ir.attributes import Attribute
from cutec.ir.core import Block, Operation, Value
from cutec.ir.traits import (
    ConstantLike,
    IsolatedFromAbove,
    SymbolOp,
    Terminator,
    is_side_effect_free,
)


class RewriteListener:
    """Told of every change a `PatternRewriter` makes (all hooks do nothing)."""

    def op_inserted(self, op: Operation) -> None:
        """`op` (with anything nested in it) was inserted or moved."""

    def op_modified(self, op: Operation) -> None:
        """`op` changed in place (operands, attributes), or its uses did."""

    def op_erased(self, op: Operation) -> None:
        """`op` is about to be erased (called for it and each op nested in it)."""


class PatternRewriter:
    """Mutates the IR on a pattern's behalf and reports what it touched."""

    def __init__(self, listener: RewriteListener | None = None) -> None:
        self.listener = listener or RewriteListener()
        self.changed = False

    # -- insertion --------------------------------------------------------
    def insert_before(self, anchor: Operation, op: Operation) -> Operation:
        """Insert `op` just before `anchor`; it takes the anchor's location if it has none."""
        assert anchor.parent is not None
        if op.location is None:
            op.location = anchor.location
        anchor.parent.insert_before(anchor, op)
        self.changed = True
        self.listener.op_inserted(op)
        return op

    def insert_after(self, anchor: Operation, op: Operation) -> Operation:
        """Insert `op` just after `anchor`; it takes the anchor's location if it has none."""
        assert anchor.parent is not None
        if op.location is None:
            op.location = anchor.location
        anchor.parent.insert_after(anchor, op)
        self.changed = True
        self.listener.op_inserted(op)
        return op

    def inline_block_before(self, block: Block, anchor: Operation, args: Sequence[Value]) -> None:
        """Move `block`'s ops before `anchor`, its arguments replaced by `args`."""
        assert anchor.parent is not None
        for a, v in zip(block.args, args, strict=True):
            self.replace_all_uses_with(a, v)
        for op in list(block.ops):
            op.move_before(anchor)
            self.listener.op_inserted(op)
        self.changed = True

    # -- replacement and erasure ------------------------------------------
    def replace_all_uses_with(self, old: Value, new: Value) -> None:
        """Make every user of `old` use `new`; the users are revisited."""
        if old is new:
            return
        for user in old.users():
            self.listener.op_modified(user)
        old.replace_all_uses_with(new)
        self.changed = True

    def replace_op(self, op: Operation, values: Sequence[Value]) -> None:
        """Replace `op`'s results with `values` and erase it.

        A replacement without a name takes the name of the result it replaces.
        """
        if len(values) != len(op.results):
            raise ValueError(f"{op.name}: {len(values)} replacements for {len(op.results)}")
        for r, v in zip(op.results, values, strict=True):
            if v.name_hint is None:
                v.name_hint = r.name_hint
            self.replace_all_uses_with(r, v)
        self.erase_op(op)

    def erase_op(self, op: Operation) -> None:
        """Erase `op` (results unused) and everything nested in it.

        The defining ops of the values it used from outside may now be dead:
        they are reported modified.
        """
        nested = list(op.walk())
        # Keyed by id: op classes need not be hashable (nor compare by identity).
        inside = {id(n) for n in nested}
        producers: dict[int, Operation] = {}
        for n in nested:
            self.listener.op_erased(n)
            for v in n.operands:
                owner = v.owner
                if isinstance(owner, Operation) and id(owner) not in inside:
                    producers[id(owner)] = owner
        op.erase()
        for p in producers.values():
            self.listener.op_modified(p)
        self.changed = True

    def modify(self, op: Operation) -> None:
        """Record that `op` was changed in place."""
        self.changed = True
        self.listener.op_modified(op)


class RewritePattern:
    """Rewrites ops of type `op_type` (and its subclasses); True if it changed the IR.

    Patterns of higher `benefit` are tried first. A pattern that returns
    False must not have changed anything.
    """

    op_type: ClassVar[type[Operation]] = Operation
    benefit: ClassVar[int] = 1

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        raise NotImplementedError


class PatternSet:
    """Patterns by the op class they match, highest benefit first.

    With `canonicalization=True` each op class's own
    ``canonicalization_patterns`` join the given ones.
    """

    def __init__(
        self, patterns: Iterable[RewritePattern] = (), *, canonicalization: bool = False
    ) -> None:
        self.patterns = tuple(patterns)
        self.canonicalization = canonicalization
        self._by_class: dict[type[Operation], tuple[RewritePattern, ...]] = {}

    def for_op(self, op: Operation) -> tuple[RewritePattern, ...]:
        cls = type(op)
        found = self._by_class.get(cls)
        if found is None:
            candidates = [p for p in self.patterns if issubclass(cls, p.op_type)]
            if self.canonicalization:
                candidates += cls.canonicalization_patterns
            # sorted() is stable: equal benefits keep their listed order.
            found = tuple(sorted(candidates, key=lambda p: -p.benefit))
            self._by_class[cls] = found
        return found


# --------------------------------------------------------------------------- folding


def constant_value(value: Value) -> Attribute | None:
    """The attribute a value is known to equal, if a constant op defines it."""
    owner = value.owner
    if isinstance(owner, Operation) and _is_constant_like(type(owner)):
        return owner.attributes.get("value")
    return None


_CONSTANT_LIKE: dict[type[Operation], bool] = {}


def _is_constant_like(cls: type[Operation]) -> bool:
    # Cached per class: the driver asks for every operand of every op it visits.
    found = _CONSTANT_LIKE.get(cls)
    if found is None:
        found = _CONSTANT_LIKE[cls] = cls.has_trait(ConstantLike)
    return found


def is_trivially_dead(op: Operation) -> bool:
    """Unused results and nothing observable (asked of the traits): safe to delete.

    Stores, barriers, cp.async with an unused token, collective ops and ops of
    unknown effect are never dead; nor are terminators, symbols and isolated ops.
    """
    for r in op.results:
        if r.uses:
            return False
    return not _kept_by_structure(type(op)) and is_side_effect_free(op)


_KEPT: dict[type[Operation], bool] = {}


def _kept_by_structure(cls: type[Operation]) -> bool:
    """Terminators, symbols and isolated ops are never dead (cached per class)."""
    kept = _KEPT.get(cls)
    if kept is None:
        traits = (Terminator, SymbolOp, IsolatedFromAbove)
        kept = _KEPT[cls] = any(cls.has_trait(t) for t in traits)
    return kept


Materializer = Callable[[Attribute], Operation | None]


def fold_op(op: Operation, rewriter: PatternRewriter, materialize: Materializer | None) -> bool:
    """Replace `op` by what its ``fold(constants)`` hook returns; True if it did.

    A fold returns, per result, an existing value or an attribute; attributes
    become ops through `materialize` (a fold that needs one and has no
    materializer, or one the materializer refuses, is not applied).
    """
    fold = getattr(op, "fold", None)
    if fold is None or _is_constant_like(type(op)):
        return False
    result = fold([constant_value(v) for v in op.operands])
    if result is None:
        return False
    new_ops: list[Operation | None] = []
    for item in result:
        if isinstance(item, Value):
            new_ops.append(None)
            continue
        made = materialize(item) if materialize is not None else None
        if made is None:
            for m in new_ops:
                if m is not None:
                    m.drop_all_references()
            return False
        new_ops.append(made)
    values: list[Value] = []
    for item, made in zip(result, new_ops, strict=True):
        if made is None:
            values.append(item)
        else:
            values.append(rewriter.insert_before(op, made).results[0])
    rewriter.replace_op(op, values)
    return True


# --------------------------------------------------------------------------- the greedy driver


class ConvergenceError(RuntimeError):
    """The patterns kept rewriting past the driver's limit (a bug in the patterns)."""

    def __init__(self, message: str, op: Operation | None) -> None:
        where = f" (last rewrite at '{op.name}'" if op is not None else ""
        if op is not None and (op.location or op.parsed_at) is not None:
            where += f" at {op.location or op.parsed_at}"
        super().__init__(message + (where + ")" if where else ""))
        self.op = op


@dataclass
class GreedyConfig:
    """Limits and hooks of `apply_patterns_greedily`.

    * ``max_iterations`` — sweeps that change the IR: each seeds the worklist
      with every op and drains it; the driver stops after a sweep that
      changed nothing (one more sweep confirms the fixpoint, as MLIR's driver
      does) and fails if sweep ``max_iterations + 1`` still changes something.
    * ``max_rewrites`` — rewrites (folds, patterns, erasures) in all sweeps;
      None: 16 per op of the first sweep, plus 1000. Guards against patterns
      that undo each other, which would otherwise loop inside one sweep.
    * ``fold`` / ``materialize`` — try each op's ``fold`` hook first; the
      materializer turns folded attributes into constant ops.
    * ``context`` — a context manager (the pass manager's `working_on`) that
      an exception escaping the processing of an op is raised through, so a
      crash names the op.
    """

    max_iterations: int = 10
    max_rewrites: int | None = None
    fold: bool = True
    materialize: Materializer | None = None
    context: Callable[[Operation], AbstractContextManager[object]] | None = None


class _Worklist:
    """A stack of ops with O(1) membership and removal (removed slots hold None).

    Keyed by `id`: an op on the stack is alive, and op classes need not be
    hashable."""

    def __init__(self) -> None:
        self._stack: list[Operation | None] = []
        self._where: dict[int, int] = {}

    def push(self, op: Operation) -> None:
        if id(op) not in self._where:
            self._where[id(op)] = len(self._stack)
            self._stack.append(op)

    def pop(self) -> Operation | None:
        while self._stack:
            op = self._stack.pop()
            if op is not None:
                del self._where[id(op)]
                return op
        return None

    def remove(self, op: Operation) -> None:
        i = self._where.pop(id(op), None)
        if i is not None:
            self._stack[i] = None


class _GreedyDriver(RewriteListener):
    def __init__(self, root: Operation, patterns: PatternSet, config: GreedyConfig) -> None:
        self.root = root
        self.patterns = patterns
        self.config = config
        self.worklist = _Worklist()
        self.rewriter = PatternRewriter(self)
        self.rewrites = 0
        self.limit = config.max_rewrites

    # -- listener: re-queue what a rewrite touched -------------------------
    def op_inserted(self, op: Operation) -> None:
        for nested in op.walk():
            self.worklist.push(nested)

    def op_modified(self, op: Operation) -> None:
        if op is not self.root:
            self.worklist.push(op)

    def op_erased(self, op: Operation) -> None:
        self.worklist.remove(op)

    # -- driving ------------------------------------------------------------
    def _seed(self) -> int:
        ops = [op for op in self.root.walk() if op is not self.root]
        # Pushed in reverse so the first pop is the first op in program order.
        for op in reversed(ops):
            self.worklist.push(op)
        return len(ops)

    def run(self) -> bool:
        changed_any = False
        for _ in range(self.config.max_iterations + 1):
            seeded = self._seed()
            if self.limit is None:
                self.limit = 16 * seeded + 1000
            changed = False
            op = None
            try:
                while (op := self.worklist.pop()) is not None:
                    if not self._process(op):
                        continue
                    changed = True
                    self.rewrites += 1
                    if self.rewrites > self.limit:
                        raise ConvergenceError(
                            f"rewrite patterns did not converge in {self.limit} rewrites", op
                        )
            except Exception:
                if self.config.context is None or op is None:
                    raise
                with self.config.context(op):  # let it see the exception, naming the op
                    raise
            if not changed:
                return changed_any
            changed_any = True
        raise ConvergenceError(
            "rewrite patterns did not converge in "
            f"{self.config.max_iterations} iterations over the IR",
            None,
        )

    def _process(self, op: Operation) -> bool:
        """Erase, fold or rewrite `op`; True if anything changed."""
        if is_trivially_dead(op):
            self.rewriter.erase_op(op)
            return True
        if self.config.fold and fold_op(op, self.rewriter, self.config.materialize):
            return True
        for pattern in self.patterns.for_op(op):
            if pattern.match_and_rewrite(op, self.rewriter):
                if op.parent is not None:  # changed in place: look at it again
                    self.worklist.push(op)
                return True
        return False


def apply_patterns_greedily(
    root: Operation,
    patterns: PatternSet | Iterable[RewritePattern],
    config: GreedyConfig | None = None,
) -> bool:
    """Rewrite the ops nested in `root` (not `root` itself) to a fixpoint.

    A worklist is seeded with every op in program order. Each popped op is
    erased if trivially dead (`is_trivially_dead`), else folded, else given to
    its patterns in benefit order. What a rewrite touches goes back on the
    worklist: new and moved ops, users of replaced values, the producers of an
    erased op's operands (now perhaps dead) and an op its pattern changed in
    place. Returns True if anything changed; raises `ConvergenceError` past
    the config's limits.
    """
    if not isinstance(patterns, PatternSet):
        patterns = PatternSet(patterns)
    return _GreedyDriver(root, patterns, config or GreedyConfig()).run()
