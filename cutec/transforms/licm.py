"""Loop-invariant code motion out of ``scf.for`` (the licm pass; simplify's step 3).

An op directly in a loop's body moves to just before the loop when

* it is `Pure` (no memory effect, no async work: a load, a store, a barrier
  never moves), not `Collective` (a warp shuffle stays where its warp meets)
  and has no regions, and
* every operand is defined outside the loop (hoisted ops count as outside,
  so chains of invariant ops move together, in order).

Moving a pure op out of a loop that runs zero times computes a value nobody
uses, which is harmless — unless the op can trap. Integer division and
remainder trap on a zero divisor (and signed ones on MIN / -1) on the CPU
backend. One whose divisor is a constant other than 0 and -1, or in a loop
whose constant bounds prove it runs, moves as it is. Any other moves with its
divisor guarded::

    %runs = arith.cmpi slt, %lb, %ub            // the loop runs at least once
    %d1 = arith.select %runs, %d, %c1
    %q = arith.divsi %x, %d1

When the loop runs, the body would have divided by %d in its first iteration
(the op is directly in the body), so trapping or not is unchanged; when it
does not, nobody uses %q and dividing by 1 cannot trap. (A CTA coordinate from a
grouped launch order, ``pid / (8 * grid_dim.y)``, was divided again in every
k-tile.) Ops in nested regions (an ``scf.if`` in the body) stay: they may not
run at all.

Loops are visited innermost first, so an op invariant in two nested loops
leaves both. An op after the last loop nested in the body stays: hoisted, its
value would be live across that loop, where it is not used (a persistent
kernel's epilogue addresses across its k-loop took registers the k-loop needed:
gemm_auto tf32 spilled), and it costs one evaluation per iteration of a loop
whose iterations each run a whole inner loop. Hoisting reads or loads from
memory no write in the loop touches is not done yet.
"""

from __future__ import annotations

from cutec.ir.builder import Builder
from cutec.ir.core import Block, BlockArgument, Operation, Value
from cutec.ir.dialects import arith, scf
from cutec.ir.dialects.arith_patterns import int_constant
from cutec.ir.traits import Collective, Pure

# Ops that trap on some operands (a zero divisor, and MIN / -1 when signed).
_DIVISIONS: tuple[type[Operation], ...] = (
    arith.DivSIOp,
    arith.DivUIOp,
    arith.RemSIOp,
    arith.RemUIOp,
    arith.FloorDivSIOp,
    arith.CeilDivSIOp,
)


def _runs_at_least_once(loop: scf.ForOp) -> bool:
    lb, ub = int_constant(loop.lb), int_constant(loop.ub)
    return lb is not None and ub is not None and lb < ub


def _may_trap(op: Operation) -> bool:
    if not isinstance(op, _DIVISIONS):
        return False
    divisor = int_constant(op.operands[1])
    return divisor is None or divisor == 0 or (divisor == -1 and not isinstance(op, arith.DivUIOp))


def _defined_in(value: Value, body: Block) -> bool:
    """True if `value` is an argument of `body` or the result of an op directly in it
    (an op of `body` sees no value of a region nested in a sibling)."""
    if isinstance(value, BlockArgument):
        return value.block is body
    return value.owner.parent is body  # type: ignore[union-attr]


def hoist_invariants(loop: scf.ForOp) -> int:
    """Move `loop`'s invariant pure ops before it; the number moved."""
    body = loop.body
    safe_to_trap = _runs_at_least_once(loop)
    runs: Value | None = None  # lb < ub, made for the first guarded division
    moved = 0
    ops = list(body.ops)
    inner = [i for i, op in enumerate(ops) if isinstance(op, scf.ForOp | scf.WhileOp)]
    end = inner[-1] if inner else len(ops)  # ops past the last inner loop stay
    for op in ops[:end]:
        if op.regions or not op.has_trait(Pure) or not op.results or op.has_trait(Collective):
            continue
        if any(_defined_in(v, body) for v in op.operands):
            continue
        if not safe_to_trap and _may_trap(op):
            b = Builder.before(loop, op.location)
            if runs is None:
                runs = b.insert(arith.CmpIOp("slt", loop.lb, loop.ub)).result
            divisor = op.operands[1]
            one = b.insert(arith.constant(1, divisor.type)).result
            op.set_operand(1, b.insert(arith.SelectOp(runs, divisor, one)).result)
        op.move_before(loop)
        moved += 1
    return moved


def loops_innermost_first(root: Operation) -> list[scf.ForOp]:
    """The scf.for loops nested in `root`, each after the loops nested in it.

    Only ops with regions are descended into, so the walk costs one step per
    region-holding op, not one per op.
    """
    loops: list[scf.ForOp] = []

    def visit(op: Operation) -> None:
        for region in op.regions:
            for block in region.blocks:
                for inner in block.ops:
                    if inner.regions:
                        visit(inner)
        if isinstance(op, scf.ForOp):
            loops.append(op)

    visit(root)
    return loops
