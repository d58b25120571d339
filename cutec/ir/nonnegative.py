"""NonNegative: which integer values are provably >= 0 (read as signed).

Strength reduction needs it: ``divsi x, 8`` is ``shrui x, 3`` only when
x >= 0. The facts, each a one-line proof:

* a constant >= 0; a special register (thread, block, cluster and lane
  indices, block and grid sizes, the warp index);
* ``addi``, ``muli``, ``shli`` of non-negatives — for ``index`` only, where address
  arithmetic is assumed not to overflow (the algebra assumes it; the lowering
  keeps addresses 64-bit); a fixed-width sum may wrap, so it is not claimed;
* ``andi`` with a non-negative operand (its bits are a subset of that one's);
  ``ori``, ``xori``, ``minsi``, ``select`` of non-negatives; ``maxsi`` with a
  non-negative operand;
* ``divsi``, ``floordivsi``, ``ceildivsi`` of a non-negative by a
  non-negative; ``divui``, ``remsi``, ``shrsi`` of a non-negative; ``remui``
  when either operand is non-negative (the result is at most both);
  ``shrui`` of a non-negative or by a constant >= 1;
* ``index_cast`` to ``index`` (a sign extension) and ``extsi`` of a
  non-negative; ``extui`` always (a truncation to i32 may turn negative);
* the induction variable of an ``scf.for`` whose lower bound and step are
  non-negative (it rises from the lower bound and stays below the upper one).

Anything else is not claimed. Answers are memoised per value: a value's
defining op does not change while it lives, and rewrites keep the values it
computes, so a fact stays true. Each value is looked at once, with an explicit
stack (a chain of 50,000 adds needs no deep recursion).
"""

from __future__ import annotations

from collections.abc import Callable

from cutec.ir.attributes import IntegerAttr
from cutec.ir.core import BlockArgument, Operation, OpResult, Value
from cutec.ir.dialects import arith, gpu, scf
from cutec.ir.rewrite import constant_value
from cutec.ir.types import IndexType

_REGISTERS: tuple[type[Operation], ...] = (
    gpu.ThreadIdOp,
    gpu.BlockIdOp,
    gpu.BlockDimOp,
    gpu.GridDimOp,
    gpu.ClusterIdOp,
    gpu.ClusterDimOp,
    gpu.ClusterBlockIdOp,
    gpu.ClusterDimBlocksOp,
    gpu.LaneIdOp,
    gpu.ClusterBlockRankOp,
    gpu.WarpIdxOp,
)

# For each op class: given its op and the facts of its operands, is its result >= 0?
Rule = Callable[[Operation, list[bool]], bool]


def _shrui(op: Operation, facts: list[bool]) -> bool:
    shift = constant_value(op.operands[1])
    return facts[0] or (isinstance(shift, IntegerAttr) and shift.value >= 1)


def _index_only(op: Operation, facts: list[bool]) -> bool:
    return isinstance(op.results[0].type, IndexType) and all(facts)


_RULES: dict[type[Operation], Rule] = {
    arith.AddIOp: _index_only,
    arith.MulIOp: _index_only,
    arith.ShLIOp: _index_only,
    arith.AndIOp: lambda op, f: any(f),
    arith.OrIOp: lambda op, f: all(f),
    arith.XOrIOp: lambda op, f: all(f),
    arith.MinSIOp: lambda op, f: all(f),
    arith.MaxSIOp: lambda op, f: any(f),
    arith.SelectOp: lambda op, f: f[1] and f[2],
    arith.DivSIOp: lambda op, f: all(f),
    arith.FloorDivSIOp: lambda op, f: all(f),
    arith.CeilDivSIOp: lambda op, f: all(f),
    arith.DivUIOp: lambda op, f: f[0],
    arith.RemSIOp: lambda op, f: f[0],
    arith.ShRSIOp: lambda op, f: f[0],
    arith.RemUIOp: lambda op, f: any(f),
    arith.ShRUIOp: _shrui,
    arith.IndexCastOp: lambda op, f: f[0] and isinstance(op.results[0].type, IndexType),
    arith.ExtSIOp: lambda op, f: f[0],
    arith.ExtUIOp: lambda op, f: True,
}
# Special registers (ids, dims, ranks, lanes) read as unsigned counts.
_RULES.update({cls: (lambda op, f: True) for cls in _REGISTERS})


class NonNegative:
    """``nn(value)``: True when `value` is provably >= 0 as a signed integer."""

    def __init__(self) -> None:
        self._known: dict[Value, bool] = {}

    def __call__(self, value: Value) -> bool:
        known = self._known
        found = known.get(value)
        if found is not None:
            return found
        stack = [value]
        while stack:
            v = stack[-1]
            if v in known:
                stack.pop()
                continue
            inputs = _inputs(v)
            missing = [i for i in inputs if i not in known]
            if missing:
                stack.extend(missing)
                continue
            stack.pop()
            known[v] = _decide(v, [known[i] for i in inputs])
        return known[value]


def _inputs(value: Value) -> list[Value]:
    """The values whose facts decide `value`'s."""
    if isinstance(value, OpResult):
        return list(value.op.operands) if type(value.op) in _RULES else []
    loop = _loop_of_induction_var(value)
    return [loop.lb, loop.step] if loop is not None else []


def _decide(value: Value, facts: list[bool]) -> bool:
    if isinstance(value, OpResult):
        attr = constant_value(value)
        if isinstance(attr, IntegerAttr):
            return attr.value >= 0
        rule = _RULES.get(type(value.op))
        return rule is not None and rule(value.op, facts)
    return _loop_of_induction_var(value) is not None and all(facts)


def _loop_of_induction_var(value: Value) -> scf.ForOp | None:
    if isinstance(value, BlockArgument) and value.index == 0:
        loop = value.block.parent_op
        if isinstance(loop, scf.ForOp) and value.block is loop.body:
            return loop
    return None
