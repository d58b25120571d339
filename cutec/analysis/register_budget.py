"""The register budget of a kernel's ``setmaxnreg``s (`thread.setmaxnreg`), checked
before any PTX is written.

A warpgroup's ``setmaxnreg`` moves registers between it and the CTA's pool (PTX ISA,
*setmaxnreg*). What makes a kernel's uses well defined, each a located error here:

* the kernel is whole warpgroups (its threads a multiple of 128);
* each ``setmaxnreg`` is outside loops and under branches whose conditions every
  thread of a warpgroup evaluates alike from its thread index (the role branches on
  ``warpgroup_idx()``): the 128 threads run it together or not at all;
* a warpgroup's ``dec`` is not above, and its ``inc`` not below, the count it holds
  (at entry the pool shared out evenly: 65,536 registers over the CTA's threads times
  its CTAs per SM, rounded down to 8 and at most 248, which is what ptxas gives a kernel
  declaring ``.minnctapersm``);
* the counts the warpgroups end with fit the pool, Σ 128 × count ≤ 65,536: an ``inc``
  that the pool cannot serve blocks forever.

Which warpgroup runs which ``setmaxnreg`` is found by evaluating the enclosing
conditions for every thread (`_evaluate`: constants, thread and warp indices, and the
integer ops that fold); a condition that depends on anything else is refused.
"""

from __future__ import annotations

from typing import Any

from cutec.diagnostics import CompileError
from cutec.ir.attributes import DenseArrayAttr, IntegerAttr
from cutec.ir.core import Operation, Value
from cutec.ir.dialects import arith, gpu, scf
from cutec.ir.dialects.builtin import KernelOp
from cutec.ir.dialects.thread_regs import SetMaxNRegOp
from cutec.ir.types import IndexType, IntegerType
from cutec.ir.value import OpResult

POOL = 65536  # registers an SM (and so a CTA) has
WARPGROUP = 128
MAX_ENTRY = 248  # ptxas's largest count at entry: 255 rounded down to a multiple of 8


def entry_count(threads: int, ctas_per_sm: int) -> int:
    """The registers per thread a kernel of `threads` threads holds at entry when at
    least `ctas_per_sm` CTAs share an SM (the pool shared out, rounded down to 8)."""
    return min(MAX_ENTRY, POOL // (threads * ctas_per_sm) // 8 * 8)


def check_register_budget(kernel: KernelOp) -> None:
    """The module docstring's rules for `kernel`'s setmaxnregs (none: nothing)."""
    sites = [op for op in kernel.walk() if isinstance(op, SetMaxNRegOp)]
    if not sites:
        return
    block = _block(kernel)
    threads = block[0] * block[1] * block[2]
    if threads % WARPGROUP:
        raise _error(
            sites[0],
            f"setmaxnreg sets a warpgroup's registers, and the kernel's {threads} threads "
            f"are not whole warpgroups of {WARPGROUP}",
        )
    for op in sites:
        if _in_loop(op):
            raise _error(op, "setmaxnreg inside a loop: a warpgroup sets its registers once "
                             "per role, at its start")  # fmt: skip
    per_sm = kernel.attributes.get("minnctapersm")
    entry = entry_count(threads, per_sm.value if isinstance(per_sm, IntegerAttr) else 1)
    finals = []
    for w in range(threads // WARPGROUP):
        held = entry
        for op in sites:
            if not _runs(op, w, block):
                continue
            n, action = op.count.value, op.action.value
            if (action == "dec" and n > held) or (action == "inc" and n < held):
                way = "lower" if action == "dec" else "raise"
                raise _error(op, f"setmaxnreg.{action} to {n} in warpgroup {w}, which holds "
                                 f"{held} registers per thread: {action} can only {way} "
                                 "the count")  # fmt: skip
            held = n
        finals.append(held)
    total = WARPGROUP * sum(finals)
    if total > POOL:
        last_inc = next((op for op in reversed(sites) if op.action.value == "inc"), sites[-1])
        counts = " + ".join(f"128 x {n}" for n in finals)
        raise _error(last_inc, f"the warpgroups end holding {counts} = {total} registers, "
                               f"more than the {POOL} of the pool: an inc would wait for "
                               "registers forever")  # fmt: skip


def _block(kernel: KernelOp) -> tuple[int, int, int]:
    for key in ("reqntid", "maxntid"):
        attr = kernel.attributes.get(key)
        if isinstance(attr, DenseArrayAttr):
            x, y, z = (*attr.values, 1, 1)[:3]
            return int(x), int(y), int(z)
    raise CompileError("setmaxnreg needs the kernel's thread count (its 'threads' clause)",
                       kernel.location or kernel.parsed_at)  # fmt: skip


def _error(op: Operation, message: str) -> CompileError:
    return CompileError(message, op.location or op.parsed_at)


def _in_loop(op: Operation) -> bool:
    parent = op.parent_op
    while parent is not None and not isinstance(parent, KernelOp):
        if isinstance(parent, scf.ForOp | scf.WhileOp):
            return True
        parent = parent.parent_op
    return False


def _runs(op: Operation, warpgroup: int, block: tuple[int, int, int]) -> bool:
    """Whether `warpgroup` runs `op`: every enclosing branch taken by all its threads
    (a located error when its threads disagree or a condition is not theirs to decide)."""
    child: Operation = op
    parent = op.parent_op
    while parent is not None and not isinstance(parent, KernelOp):
        if isinstance(parent, scf.IfOp):
            then = child.parent is parent.then_block
            taken = set()
            for t in range(WARPGROUP):
                value = _evaluate(parent.cond, warpgroup * WARPGROUP + t, block, {})
                if value is None:
                    raise _error(op, "setmaxnreg under a branch whose condition is not the "
                                     "warpgroup's alone: branch on warpgroup_idx() (or other "
                                     "thread indices) to pick a role")  # fmt: skip
                taken.add(bool(value) == then)
            if len(taken) > 1:
                raise _error(
                    op,
                    f"setmaxnreg under a branch that the threads of warpgroup {warpgroup} "
                    "take differently: all 128 run it, or none",
                )
            if not taken.pop():
                return False
        child, parent = parent, parent.parent_op
    return True


def _evaluate(value: Value, tid: int, block: tuple[int, int, int], memo: dict[Value, Any]
              ) -> int | None:  # fmt: skip
    """`value` in the thread of linear index `tid`, or None when it is not known from
    thread indices and constants."""
    if value in memo:
        return memo[value]
    memo[value] = None
    if not isinstance(value, OpResult):
        return None
    op = value.op
    x, y = tid % block[0], tid // block[0] % block[1]
    z = tid // (block[0] * block[1])
    found: int | None = None
    if isinstance(op, gpu.ThreadIdOp):
        found = {"x": x, "y": y, "z": z}[op.attributes["dim"].value]  # type: ignore[attr-defined]
    elif isinstance(op, gpu.WarpIdxOp):
        found = x // 32  # tid.x / 32, as the op says
    elif isinstance(op, gpu.LaneIdOp):
        found = tid % 32
    elif isinstance(op, arith.ConstantOp):
        attr = op.attributes["value"]
        found = attr.value if isinstance(attr, IntegerAttr) else None
    elif op.name.startswith("arith.") and op.operands:
        found = _fold(op, tid, block, memo)
    memo[value] = found
    return found


def _fold(op: Operation, tid: int, block: tuple[int, int, int], memo: dict[Value, Any]
          ) -> int | None:  # fmt: skip
    args = [_evaluate(v, tid, block, memo) for v in op.operands]
    if any(a is None for a in args) or not all(
        isinstance(v.type, IntegerType | IndexType) for v in op.operands
    ):
        return None
    attrs = [IntegerAttr(a, v.type) for a, v in zip(args, op.operands, strict=True)]
    try:
        folded = op.fold(attrs)  # type: ignore[arg-type]
    except (ValueError, ZeroDivisionError, ArithmeticError):
        return None
    if not folded or not isinstance(folded[0], IntegerAttr):
        return None
    return folded[0].value
