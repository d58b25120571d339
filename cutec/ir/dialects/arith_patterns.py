"""Canonicalization patterns of the integer arith ops (need no analysis).

Together with the ops' folds (x + 0, x * 1, x * 0, x - x, x / 1, constants)
they bring integer expressions to one form: constants on the right of
commutative ops, subtraction of a constant as addition, chains of constant
additions and multiplications merged. So ``muli %c1, %M`` is ``%M`` and
``(x + 4) + 8`` is ``x + 12``. Integer arithmetic wraps, which keeps each
rewrite exact in every width (wrapping + and * are associative).

`attach()` (called at the end of arith.py, once the op classes exist) lists
them on the op classes; `canonicalize` and `simplify` apply them.
"""

from __future__ import annotations

from cutec.ir.attributes import IntegerAttr
from cutec.ir.core import Operation, Value
from cutec.ir.dialects import arith_int as ai
from cutec.ir.dialects.arith_fold import int_value
from cutec.ir.rewrite import PatternRewriter, RewritePattern, constant_value
from cutec.ir.types import VectorType


def int_constant(value: Value) -> int | None:
    """The integer a constant op gives `value` (stored signed), else None."""
    attr = constant_value(value)
    return attr.value if isinstance(attr, IntegerAttr) else None


def make_constant(rewriter: PatternRewriter, before: Operation, value: int, of: Value) -> Value:
    """A new ``arith.constant value`` of `of`'s type, inserted before `before`."""
    # Imported here: arith.py imports this module at its end.
    from cutec.ir.dialects.arith import ConstantOp

    t = of.type
    op = ConstantOp(IntegerAttr(int_value(value, t), t))
    return rewriter.insert_before(before, op).results[0]


def _scalar(op: Operation) -> bool:
    return not isinstance(op.results[0].type, VectorType)


class ConstantToRight(RewritePattern):
    """``c ⊕ x → x ⊕ c`` for a commutative ⊕, c constant and x not: the folds
    then see ``muli %c1, %M`` as ``M * 1 = M``, and CSE sees one form.

    Listed only on commutative classes (`attach`)."""

    op_type = ai.IntBinaryOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        lhs, rhs = op.operands
        if int_constant(lhs) is None or int_constant(rhs) is not None:
            return False
        op.set_operands([rhs, lhs])
        rewriter.modify(op)
        return True


class SubConstantToAdd(RewritePattern):
    """``x - c → x + (-c)``: one form for offsets, which `MergeConstants` chains."""

    op_type = ai.SubIOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        lhs, rhs = op.operands
        c = int_constant(rhs)
        if c is None or int_constant(lhs) is not None or not _scalar(op):
            return False
        add = ai.AddIOp(lhs, make_constant(rewriter, op, -c, rhs))
        rewriter.replace_op(op, [rewriter.insert_before(op, add).results[0]])
        return True


class MergeConstants(RewritePattern):
    """``(x ⊕ c1) ⊕ c2 → x ⊕ (c1 ⊕ c2)`` for ⊕ in +, *: two constants in a row fold."""

    op_type = ai.IntBinaryOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        inner, c2_value = op.operands
        producer = inner.owner
        # Cheapest test first: most adds are not fed by an add.
        if type(producer) is not type(op) or not _scalar(op):
            return False
        c2 = int_constant(c2_value)
        if c2 is None:
            return False
        assert isinstance(producer, Operation)
        x, c1_value = producer.operands
        c1 = int_constant(c1_value)
        if c1 is None or int_constant(x) is not None:
            return False
        merged = c1 + c2 if isinstance(op, ai.AddIOp) else c1 * c2
        op.set_operands([x, make_constant(rewriter, op, merged, c2_value)])
        rewriter.modify(op)
        rewriter.modify(producer)  # perhaps dead now
        return True


class RemainderByOne(RewritePattern):
    """``x % 1 → 0`` and ``x % -1 → 0`` (signed), ``x % 1 → 0`` (unsigned)."""

    op_type = ai.IntBinaryOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        if not isinstance(op, ai.RemSIOp | ai.RemUIOp) or not _scalar(op):
            return False
        ones = (1, -1) if isinstance(op, ai.RemSIOp) else (1,)
        if int_constant(op.operands[1]) not in ones:
            return False
        rewriter.replace_op(op, [make_constant(rewriter, op, 0, op.results[0])])
        return True


def attach() -> None:
    """List the patterns on the integer op classes."""
    commutative = (ai.AddIOp, ai.MulIOp, ai.AndIOp, ai.OrIOp, ai.XOrIOp)
    commutative += (ai.MaxSIOp, ai.MinSIOp, ai.MaxUIOp, ai.MinUIOp)
    for cls in commutative:
        cls.canonicalization_patterns = (ConstantToRight(),)
    for cls in (ai.AddIOp, ai.MulIOp):
        cls.canonicalization_patterns = (ConstantToRight(), MergeConstants())
    ai.SubIOp.canonicalization_patterns = (SubConstantToAdd(),)
    for cls in (ai.RemSIOp, ai.RemUIOp):
        cls.canonicalization_patterns = (RemainderByOne(),)
