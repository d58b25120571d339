"""simplify keeps every result: random integer programs, evaluated before and after.

Programs mix index and i32 arithmetic (all the integer ops, constants that are
often 0, 1, -1 or powers of two), thread and block ids, and an scf.for whose
body uses the induction variable, a carried value and outer values, so that
folding, strength reduction (with its non-negativity facts), hoisting and CSE
all fire. A program whose original evaluation divides by zero is skipped.
"""

from __future__ import annotations

import pytest
from arith_eval import EvalError, run_function
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from cutec.ir import types as T
from cutec.ir.attributes import TypeAttr
from cutec.ir.builder import Builder
from cutec.ir.core import Operation, Value
from cutec.ir.dialects import arith, builtin, gpu, scf
from cutec.ir.printer import print_op
from cutec.ir.types import FunctionType
from cutec.ir.verifier import verify
from cutec.passes import PASSES

BINARY = [
    arith.AddIOp,
    arith.SubIOp,
    arith.MulIOp,
    arith.DivSIOp,
    arith.DivUIOp,
    arith.RemSIOp,
    arith.RemUIOp,
    arith.FloorDivSIOp,
    arith.CeilDivSIOp,
    arith.AndIOp,
    arith.OrIOp,
    arith.XOrIOp,
    arith.MaxSIOp,
    arith.MinSIOp,
]
CONSTANTS = st.sampled_from([0, 1, -1, 2, 4, 8, 16, 32, 3, 5, 12, 7, 31])
TYPES = [T.index, T.i32]
ARGS = st.integers(-40, 40)


class Program:
    """Draws ops into a func's block (and one loop body) from hypothesis data."""

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw
        self.func = builtin.FuncOp("f", [T.index, T.index, T.i32], [])
        self.builder = Builder.at_end(self.func.body)
        a, b, c = self.func.body.args
        self.pool: dict[object, list[Value]] = {T.index: [a, b], T.i32: [c]}

    def value(self, t: object) -> Value:
        """A value of type t, most often one of the last made (so chains grow)."""
        pool = self.pool[t]
        return self.draw(st.sampled_from(pool[-3:]) | st.sampled_from(pool))

    def add(self, op: Operation) -> Value:
        result = self.builder.insert(op).results[0]
        self.pool[result.type].append(result)
        return result

    def step(self) -> None:
        kind = self.draw(st.sampled_from(["binary"] * 6 + ["constant"] * 3 + ["cast", "id"]))
        t = self.draw(st.sampled_from(TYPES))
        if kind == "constant":
            self.add(arith.constant(self.draw(CONSTANTS), t))
        elif kind == "binary":
            cls = self.draw(st.sampled_from(BINARY))
            lhs = self.value(t)
            # Often a fresh constant on the right: x / 2^k, x * 1, x % 1 ...
            if self.draw(st.booleans()):
                rhs = self.builder.insert(arith.constant(self.draw(CONSTANTS), t)).results[0]
            else:
                rhs = self.value(t)
            self.add(cls(lhs, rhs))
        elif kind == "cast":
            other = T.i32 if t == T.index else T.index
            self.add(arith.IndexCastOp(self.value(other), t))
        else:
            cls = self.draw(st.sampled_from([gpu.ThreadIdOp, gpu.BlockIdOp]))
            self.add(cls(self.draw(st.sampled_from("xy"))))

    def loop(self) -> None:
        c0 = self.add(arith.constant(self.draw(st.integers(0, 2)), T.index))
        ub = self.draw(st.sampled_from([0, 1, 3, 5]))
        upper = self.add(arith.constant(ub, T.index)) if ub else self.value(T.index)
        c1 = self.add(arith.constant(1, T.index))
        loop = self.builder.insert(scf.ForOp(c0, upper, c1, [self.value(T.index)]))
        outer = {t: list(vs) for t, vs in self.pool.items()}
        self.pool[T.index] += list(loop.body.args)
        with self.builder.at_end_of(loop.body):
            for _ in range(self.draw(st.integers(1, 6))):
                self.step()
            self.builder.insert(scf.YieldOp([self.pool[T.index][-1]]))
        self.pool = outer
        self.pool[T.index].append(loop.results[0])


@st.composite
def programs(draw: st.DrawFn) -> builtin.FuncOp:
    p = Program(draw)
    for _ in range(draw(st.integers(1, 8))):
        p.step()
    if draw(st.booleans()):
        p.loop()
        for _ in range(draw(st.integers(0, 3))):
            p.step()
    made = [v for vs in p.pool.values() for v in vs if v not in p.func.body.args]
    returned = draw(st.lists(st.sampled_from(made), min_size=1, max_size=4)) if made else []
    p.builder.insert(builtin.ReturnOp(returned))
    signature = FunctionType((T.index, T.index, T.i32), tuple(v.type for v in returned))
    p.func.attributes["function_type"] = TypeAttr(signature)
    return p.func


REGISTERS = st.fixed_dictionaries(
    {f"gpu.{r} {d}": st.integers(0, 300) for r in ("thread_id", "block_id") for d in "xy"}
)


@settings(max_examples=300)
@given(programs(), st.tuples(ARGS, ARGS, ARGS), REGISTERS)
def test_simplify_keeps_results(func: builtin.FuncOp, args: tuple, registers: dict) -> None:
    before_text = print_op(func)
    try:
        expected = run_function(func, args, registers)
    except EvalError:
        assume(False)
    module = builtin.ModuleOp([func])
    PASSES["simplify"]().run(module)
    verify(module)
    got = run_function(func, args, registers)
    assert got == expected, f"before:\n{before_text}\nafter:\n{print_op(func)}"


DIVISIONS = [
    arith.DivSIOp,
    arith.DivUIOp,
    arith.RemSIOp,
    arith.RemUIOp,
    arith.FloorDivSIOp,
    arith.CeilDivSIOp,
    arith.MulIOp,
]


def _dividend(kind: str, b: Builder, a: Value) -> Value:
    """x of a known sign (a thread index, tid*4 + bid) or of any sign (an argument)."""
    if kind == "argument":
        return a
    tid = b.insert(gpu.ThreadIdOp("x")).result
    if kind == "tid":
        return tid
    bid = b.insert(gpu.BlockIdOp("x")).result
    scaled = b.insert(arith.MulIOp(tid, b.insert(arith.constant(4, T.index)).result)).result
    return b.insert(arith.AddIOp(scaled, bid)).result


@pytest.mark.parametrize("cls", DIVISIONS, ids=lambda c: c.name)
@pytest.mark.parametrize("kind", ["argument", "tid", "tid*4+bid", "loop"])
@pytest.mark.parametrize("divisor", [1, 2, 8, 3, -4])
def test_every_division_by_a_constant_keeps_its_values(
    cls: type[Operation], kind: str, divisor: int
) -> None:
    """x op c for each op and sign of x: exhaustive over small values."""
    func = builtin.FuncOp("f", [T.index], [T.index])
    b = Builder.at_end(func.body)
    (a,) = func.body.args
    c = b.insert(arith.constant(divisor, T.index)).result
    if kind == "loop":  # sum over k in [0, a) of k op c: the induction variable is >= 0
        zero = b.insert(arith.constant(0, T.index)).result
        one = b.insert(arith.constant(1, T.index)).result
        loop = b.insert(scf.ForOp(zero, a, one, [zero]))
        with b.at_end_of(loop.body):
            k, acc = loop.body.args
            q = b.insert(cls(k, c)).result  # type: ignore[call-arg]
            b.insert(scf.YieldOp([b.insert(arith.AddIOp(acc, q)).result]))
        result = loop.results[0]
    else:
        result = b.insert(cls(_dividend(kind, b, a), c)).result  # type: ignore[call-arg]
    b.insert(builtin.ReturnOp([result]))
    inputs = [
        (x, {"gpu.thread_id x": t, "gpu.block_id x": t // 3})
        for x in range(-9, 10)
        for t in (0, 5, 13, 40)
    ]
    expected = [run_function(func, [x], regs) for x, regs in inputs]
    PASSES["simplify"]().run(builtin.ModuleOp([func]))
    assert [run_function(func, [x], regs) for x, regs in inputs] == expected, print_op(func)


def test_a_division_leaves_a_loop_that_may_not_run_with_its_divisor_guarded() -> None:
    """for k in [0, n): acc += a / b. The division leaves the loop, dividing by
    (0 < n ? b : 1): with n = 0 and b = 0 nothing traps; with n > 0 and b = 0 it
    traps as the loop's first iteration did."""
    func = builtin.FuncOp("f", [T.index, T.index, T.index], [T.index])
    b = Builder.at_end(func.body)
    x, y, n = func.body.args
    zero = b.insert(arith.constant(0, T.index)).result
    one = b.insert(arith.constant(1, T.index)).result
    loop = b.insert(scf.ForOp(zero, n, one, [zero]))
    with b.at_end_of(loop.body):
        q = b.insert(arith.DivSIOp(x, y)).result
        b.insert(scf.YieldOp([b.insert(arith.AddIOp(loop.body.args[1], q)).result]))
    b.insert(builtin.ReturnOp([loop.results[0]]))
    PASSES["simplify"]().run(builtin.ModuleOp([func]))
    (after,) = func.walk_type(scf.ForOp)
    assert not any(isinstance(op, arith.DivSIOp) for op in after.body.ops), print_op(func)
    assert run_function(func, [7, 0, 0]) == [0], print_op(func)
    assert run_function(func, [7, 2, 3]) == [9]
    with pytest.raises(EvalError):
        run_function(func, [7, 0, 3])


def test_non_negativity_of_a_long_chain_needs_no_deep_recursion() -> None:
    """tid + tid + ... (3000 adds, past Python's recursion limit) is >= 0: / 32 is a shift."""
    func = builtin.FuncOp("f", [], [T.index])
    b = Builder.at_end(func.body)
    tid = b.insert(gpu.ThreadIdOp("x")).result
    acc = tid
    for _ in range(3000):
        acc = b.insert(arith.AddIOp(acc, tid)).result
    c32 = b.insert(arith.constant(32, T.index)).result
    b.insert(builtin.ReturnOp([b.insert(arith.DivSIOp(acc, c32)).result]))
    PASSES["simplify"]().run(builtin.ModuleOp([func]))
    assert func.body.last_op.operands[0].owner.name == "arith.shrui"  # type: ignore[union-attr]
    assert run_function(func, [], {"gpu.thread_id x": 5}) == [3001 * 5 // 32]
