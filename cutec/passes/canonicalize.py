"""canonicalize: fold constants, apply each op's canonicalization patterns and
remove dead code, repeating until nothing changes.

Deletion asks the traits, never op names: an op goes only if its results are
unused and it (with everything nested in it) has no write, no unknown effect,
is not collective and starts no asynchronous work (`is_side_effect_free`). So
stores, barriers, cp.async with an unused token and mbarrier arrives stay.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cutec.ir.attributes import Attribute, FloatAttr, IntegerAttr
from cutec.ir.core import Operation, Value
from cutec.ir.dialects.arith import ConstantOp
from cutec.ir.dialects.builtin import ModuleOp
from cutec.ir.rewrite import PatternRewriter
from cutec.ir.traits import (
    ConstantLike,
    IsolatedFromAbove,
    SymbolOp,
    Terminator,
    is_side_effect_free,
)
from cutec.passes.manager import Pass, working_on


def constant_value(value: Value) -> Attribute | None:
    """The attribute a value is known to equal, if a constant op defines it."""
    owner = value.owner
    if isinstance(owner, Operation) and owner.has_trait(ConstantLike):
        return owner.attributes.get("value")
    return None


def is_trivially_dead(op: Operation) -> bool:
    """Unused results and nothing observable: safe to delete."""
    if op.has_trait(Terminator) or op.has_trait(SymbolOp) or op.has_trait(IsolatedFromAbove):
        return False
    if any(r.uses for r in op.results):
        return False
    return is_side_effect_free(op)


def materialize(attr: Attribute) -> Operation:
    """An op producing `attr` (the folder's constants are integers and floats)."""
    if isinstance(attr, IntegerAttr | FloatAttr):
        return ConstantOp(attr)
    raise TypeError(f"cannot materialise constant {attr}")


def try_fold(op: Operation, rewriter: PatternRewriter) -> bool:
    """Replace `op` by what its `fold` returns; True if it did."""
    fold = getattr(op, "fold", None)
    if fold is None or op.has_trait(ConstantLike):
        return False
    result = fold([constant_value(v) for v in op.operands])
    if result is None:
        return False
    values: list[Value] = []
    for item in result:
        if isinstance(item, Value):
            values.append(item)
        else:
            values.append(rewriter.insert_before(op, materialize(item)).results[0])
    _carry_names(op.results, values)
    rewriter.replace_op(op, values)
    return True


def _carry_names(old: Sequence[Value], new: Sequence[Value]) -> None:
    for o, n in zip(old, new, strict=True):
        if n.name_hint is None:
            n.name_hint = o.name_hint


@dataclass
class Canonicalize(Pass):
    """Fold, canonicalize and remove dead ops to a fixpoint."""

    name = "canonicalize"
    summary = "fold constants, apply canonicalization patterns, remove dead code"
    max_iterations: int = 10

    def run(self, module: ModuleOp) -> None:
        for _ in range(self.max_iterations):
            if not self._sweep(module):
                return

    def _sweep(self, module: ModuleOp) -> bool:
        erased: set[int] = set()
        rewriter = PatternRewriter(on_erase=lambda op: erased.add(id(op)))
        # Post-order, reversed: users are visited before their producers, so a
        # chain of dead ops disappears in one sweep.
        for op in reversed(list(module.walk())):
            if id(op) in erased or op is module:
                continue
            with working_on(op):
                if is_trivially_dead(op):
                    rewriter.erase_op(op)
                    continue
                if try_fold(op, rewriter):
                    continue
                for pattern in type(op).canonicalization_patterns:
                    if pattern.match_and_rewrite(op, rewriter):
                        break
        return rewriter.changed
