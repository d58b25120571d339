"""A small evaluator of arith and scf IR, for value tests of passes and lowerings.

Each arith op is evaluated by its own constant folder (`op.fold`, which wraps
to the type's width as the hardware does); `scf.for` and `scf.if` run their
regions; thread and block ids read the registers a test sets. A value the IR
cannot compute (an op with no fold, a division by zero), or a loop of more than
`MAX_TRIPS` iterations, raises `EvalError`, so a test never compares garbage
and never runs for ever.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from cutec.ir.attributes import IntegerAttr
from cutec.ir.core import Block, Operation, Value
from cutec.ir.dialects import scf
from cutec.ir.dialects.builtin import ReturnOp
from cutec.ir.dialects.gpu import BlockIdOp, ThreadIdOp
from cutec.ir.rewrite import constant_value

# A loop running more often is not evaluated (EvalError): a generated program
# whose bound is a computed value (a product, a shift) could otherwise run for
# hours (nested, 2^62 trips).
MAX_TRIPS = 4096


class EvalError(Exception):
    """The IR does not compute a value here."""


# The special registers a test sets: ``{"gpu.thread_id x": 5, ...}``.
Registers = Mapping[str, int]
NO_REGISTERS: Registers = MappingProxyType({})


def run_function(
    func: Operation, args: Sequence[int], registers: Registers = NO_REGISTERS
) -> list[int]:
    """The results of a func whose body is arith and scf ops, on integer arguments."""
    body = func.regions[0].blocks[0]
    return run_block(body, dict(zip(body.args, args, strict=True)), registers)


def value_of(value: Value, env: Mapping[Value, int]) -> int:
    """An integer value: from `env`, or its constant op's attribute."""
    if value in env:
        return env[value]
    attr = constant_value(value)
    if isinstance(attr, IntegerAttr):
        return attr.value
    raise EvalError(f"no value for {value}")


def run_block(
    block: Block, env: dict[Value, int], registers: Registers = NO_REGISTERS
) -> list[int]:
    """Run `block`'s ops in order; the values its terminator passes on."""
    for op in block.ops:
        if isinstance(op, ReturnOp | scf.YieldOp):
            return [value_of(v, env) for v in op.operands]
        if isinstance(op, scf.ForOp):
            lb, ub, step = (value_of(v, env) for v in (op.lb, op.ub, op.step))
            if len(range(lb, ub, step)) > MAX_TRIPS:
                raise EvalError(f"scf.for runs {len(range(lb, ub, step))} times")
            carried = [value_of(v, env) for v in op.inits]
            for i in range(lb, ub, step):
                env.update(zip(op.body.args, [i, *carried], strict=True))
                carried = run_block(op.body, env, registers)
            env.update(zip(op.results, carried, strict=True))
        elif isinstance(op, scf.IfOp):
            taken = op.then_block if value_of(op.cond, env) else op.else_block
            out = run_block(taken, env, registers) if taken is not None else []
            env.update(zip(op.results, out, strict=True))
        elif isinstance(op, ThreadIdOp | BlockIdOp):
            env[op.results[0]] = registers[f"{op.name} {op.dim.value}"]
        else:
            constants = [IntegerAttr(value_of(v, env), v.type) for v in op.operands]
            folded = op.fold(constants) if hasattr(op, "fold") else None
            if folded is None:
                raise EvalError(f"cannot evaluate {op.name} on {[c.value for c in constants]}")
            for r, item in zip(op.results, folded, strict=True):
                env[r] = value_of(item, env) if isinstance(item, Value) else item.value
    return []
