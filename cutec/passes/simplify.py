"""simplify: the clean-up pipeline of thread-level IR, in one pass.

1. canonicalize — folds, the ops' canonicalization patterns (constants to the
   right, ``muli %c1, %M → %M``, merged constant chains, ``x % 1 → 0``), dead
   code;
2. strength reduction (below), once canonical forms have settled: run with
   the patterns of step 1, ``(x * 4) * 8`` would become two shifts, not one.
   One walk suffices: a shift or a mask matches no reduction, and the
   non-negativity facts do not change;
3. per ``scf.for``, innermost first: licm — pure loop-invariant ops out of
   the loop (`cutec.transforms.licm`) — then reassociate — the invariant terms of
   the index math that stayed, grouped into one value before the loop
   (`cutec.transforms.reassociate`);
4. the constant reassociate left last in a pointer's offset is added after the
   pointer (thread.ptr_add's `ConstantOffsetLast`), so accesses that differ by
   a constant share one pointer and the constant becomes the address offset;
5. cse — one op per expression, hoisted ones and new constants included; then
   ``x & x`` and ``x | x`` of values CSE made one fold to ``x``.

Strength reduction turns index math into shifts and masks. Division and
remainder by 2^k agree with a shift and a mask for every unsigned dividend,
and for a signed one that is >= 0 (`NonNegative` proves it); floor division
by 2^k is an arithmetic shift for every dividend. A 64-bit multiply is
several instructions on the GPU, a shift one, so ``x * 2^k`` becomes a shift.
Deletion and motion ask the op traits (canonicalize and licm do), so no store
is deleted and nothing crosses a barrier.
"""

from __future__ import annotations

from dataclasses import dataclass

from cutec.ir.attributes import IntegerAttr
from cutec.ir.core import Operation
from cutec.ir.dialects import arith
from cutec.ir.dialects.arith_fold import to_signed, to_unsigned
from cutec.ir.dialects.arith_patterns import make_constant
from cutec.ir.dialects.builtin import ModuleOp
from cutec.ir.dialects.thread import ConstantOffsetLast
from cutec.ir.nonnegative import NonNegative
from cutec.ir.rewrite import (
    GreedyConfig,
    PatternRewriter,
    PatternSet,
    RewritePattern,
    apply_patterns_greedily,
    constant_value,
)
from cutec.ir.types import VectorType, bit_width
from cutec.passes.canonicalize import Canonicalize
from cutec.passes.cse import CSE
from cutec.passes.manager import Pass, working_on
from cutec.transforms.constants import materialize
from cutec.transforms.licm import hoist_invariants, loops_innermost_first
from cutec.transforms.reassociate import reassociate_loop


def _power_of_two(op: Operation, *, unsigned: bool) -> int | None:
    """k when `op`'s right operand is the constant 2^k (k >= 1) in the op's reading."""
    t = op.results[0].type
    attr = constant_value(op.operands[1])
    if isinstance(t, VectorType) or not isinstance(attr, IntegerAttr):
        return None
    width = bit_width(t)
    c = (to_unsigned if unsigned else to_signed)(attr.value, width)
    return c.bit_length() - 1 if c >= 2 and c & (c - 1) == 0 else None


class _StrengthReduction(RewritePattern):
    """Replace ``op x, 2^k`` by ``new_op x, f(k)`` (when `applies`)."""

    unsigned = False
    new_op: type[Operation]

    def __init__(self, nonneg: NonNegative) -> None:
        self.nonneg = nonneg

    def applies(self, op: Operation) -> bool:
        return True

    def operand(self, k: int) -> int:
        return k  # the shift amount; masks override

    def replacement(self, op: Operation) -> type[Operation]:
        return self.new_op

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        k = _power_of_two(op, unsigned=self.unsigned)
        if k is None or not self.applies(op):
            return False
        x, c = op.operands
        cls = self.replacement(op)
        new = cls(x, make_constant(rewriter, op, self.operand(k), c))  # type: ignore[call-arg]
        rewriter.replace_op(op, [rewriter.insert_before(op, new).results[0]])
        return True


class DivUIByPowerOfTwo(_StrengthReduction):
    """``divui x, 2^k → shrui x, k``."""

    op_type = arith.DivUIOp
    unsigned = True
    new_op = arith.ShRUIOp


class RemUIByPowerOfTwo(_StrengthReduction):
    """``remui x, 2^k → andi x, 2^k - 1``."""

    op_type = arith.RemUIOp
    unsigned = True
    new_op = arith.AndIOp

    def operand(self, k: int) -> int:
        return (1 << k) - 1


class DivSIByPowerOfTwo(_StrengthReduction):
    """``divsi x, 2^k → shrui x, k`` when x >= 0 (truncation and floor agree there)."""

    op_type = arith.DivSIOp
    new_op = arith.ShRUIOp

    def applies(self, op: Operation) -> bool:
        return self.nonneg(op.operands[0])


class RemSIByPowerOfTwo(_StrengthReduction):
    """``remsi x, 2^k → andi x, 2^k - 1`` when x >= 0."""

    op_type = arith.RemSIOp
    new_op = arith.AndIOp

    def applies(self, op: Operation) -> bool:
        return self.nonneg(op.operands[0])

    def operand(self, k: int) -> int:
        return (1 << k) - 1


class FloorDivSIByPowerOfTwo(_StrengthReduction):
    """``floordivsi x, 2^k → shrsi x, k`` (an arithmetic shift rounds toward -inf),
    ``shrui x, k`` when x >= 0."""

    op_type = arith.FloorDivSIOp
    new_op = arith.ShRSIOp

    def replacement(self, op: Operation) -> type[Operation]:
        return arith.ShRUIOp if self.nonneg(op.operands[0]) else arith.ShRSIOp


class MulByPowerOfTwo(_StrengthReduction):
    """``muli x, 2^k → shli x, k`` (wrapping multiply and shift agree in every width)."""

    op_type = arith.MulIOp
    unsigned = True
    new_op = arith.ShLIOp


STRENGTH_REDUCTIONS = (
    DivUIByPowerOfTwo,
    RemUIByPowerOfTwo,
    DivSIByPowerOfTwo,
    RemSIByPowerOfTwo,
    FloorDivSIByPowerOfTwo,
    MulByPowerOfTwo,
)


@dataclass
class Simplify(Pass):
    """Canonicalize with strength reduction, hoist loop invariants, CSE."""

    name = "simplify"
    summary = "fold, strength-reduce index math, hoist loop invariants, CSE (thread-level IR)"
    max_iterations: int = 10

    def run(self, module: ModuleOp) -> None:
        self.run_nested([Canonicalize(max_iterations=self.max_iterations)], module)
        reduce_strength(module)
        # licm, then reassociate the loop's index math around what stayed (inner loops
        # first, so an inner loop's new invariant sums can leave the outer loop).
        for loop in loops_innermost_first(module):
            with working_on(loop):
                hoist_invariants(loop)
                reassociate_loop(loop)
        # The constants reassociate put last in a pointer's offset: added after the
        # pointer (thread.ptr_add's ConstantOffsetLast), so CSE shares the rest.
        config = GreedyConfig(
            max_iterations=self.max_iterations, materialize=materialize, context=working_on
        )
        apply_patterns_greedily(module, PatternSet([ConstantOffsetLast()]), config)
        self.run_nested([CSE()], module)
        fold_idempotent(module)


def fold_idempotent(module: Operation) -> None:
    """``x & x → x`` and ``x | x → x`` where CSE made the two operands one value (a
    copy under the kernel's own bounds test and the predicate pass's same test)."""
    for op in list(module.walk()):
        if isinstance(op, arith.AndIOp | arith.OrIOp) and op.lhs is op.rhs:
            op.replace_with([op.lhs])


def reduce_strength(module: Operation) -> None:
    """Apply the strength reductions once to every op nested in `module`."""
    nonneg = NonNegative()
    patterns = PatternSet(p(nonneg) for p in STRENGTH_REDUCTIONS)
    rewriter = PatternRewriter()
    for op in module.walk():  # the op just yielded may be replaced (see Operation.walk)
        for pattern in patterns.for_op(op):
            with working_on(op):
                if pattern.match_and_rewrite(op, rewriter):
                    break
