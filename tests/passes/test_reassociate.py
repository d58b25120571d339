"""reassociate keeps every result: random add/sub trees and shifted products in a loop,
over operands near the wrap-around of their width, evaluated before and after."""

from __future__ import annotations

from arith_eval import run_function
from hypothesis import given, settings
from hypothesis import strategies as st

from cutec.ir import types as T
from cutec.ir.attributes import TypeAttr
from cutec.ir.builder import Builder
from cutec.ir.core import Value
from cutec.ir.dialects import arith, builtin, scf
from cutec.ir.printer import print_op
from cutec.ir.types import FunctionType
from cutec.ir.verifier import verify
from cutec.passes import PASSES

# Values near 0 and near +-2^31 and +-2^63, so that sums and products wrap.
BIG = st.sampled_from([0, 1, -1, 3, 7, 2**31 - 1, -(2**31), 2**30 + 5, 2**62 + 9, -(2**63)])
ARGS = st.integers(-50, 50) | BIG


@st.composite
def loops(draw: st.DrawFn) -> builtin.FuncOp:
    """f(a, b, c) = the xor over k of random expression trees of k, the carried value
    and a, b, c: adds and subtractions of subtrees, shifted products ``(x * y) << s``, in i32 or
    index, each inner node used once (as lower-to-thread writes addresses)."""
    t = draw(st.sampled_from([T.i32, T.index]))
    func = builtin.FuncOp("f", [t, t, t], [t])
    b = Builder.at_end(func.body)
    outer: list[Value] = list(func.body.args)
    for c in draw(st.lists(BIG, max_size=2)):
        outer.append(b.insert(arith.constant(c, t)).result)
    zero = b.insert(arith.constant(0, T.index)).result
    one = b.insert(arith.constant(1, T.index)).result
    trips = b.insert(arith.constant(draw(st.integers(0, 4)), T.index)).result
    init = b.insert(arith.constant(0, t)).result
    # Shift amounts live outside the loop, as licm leaves constants.
    shifts = [b.insert(arith.constant(s, t)).result for s in range(6)]
    loop = b.insert(scf.ForOp(zero, trips, one, [init]))
    with b.at_end_of(loop.body):
        k, acc = loop.body.args
        kt = k if t == T.index else b.insert(arith.IndexCastOp(k, t)).result
        leaves = st.sampled_from([*outer, kt, acc])

        def tree(depth: int) -> Value:
            kind = draw(
                st.sampled_from(["leaf", "add", "add", "sub", "shifted"])
                if depth
                else st.just("leaf")
            )
            if kind == "leaf":
                return draw(leaves)
            if kind in ("add", "sub"):
                op = arith.AddIOp if kind == "add" else arith.SubIOp
                return b.insert(op(tree(depth - 1), tree(depth - 1))).result
            s = draw(st.sampled_from(shifts))
            product = b.insert(arith.MulIOp(tree(depth - 1), tree(depth - 1))).result
            return b.insert(arith.ShLIOp(product, s)).result

        total = acc
        for _ in range(draw(st.integers(1, 3))):
            total = b.insert(arith.XOrIOp(total, tree(4))).result
        b.insert(scf.YieldOp([total]))
    b.insert(builtin.ReturnOp([loop.results[0]]))
    func.attributes["function_type"] = TypeAttr(FunctionType((t, t, t), (t,)))
    return func


@settings(max_examples=300)
@given(loops(), st.tuples(ARGS, ARGS, ARGS))
def test_reassociate_keeps_results(func: builtin.FuncOp, args: tuple) -> None:
    before = print_op(func)
    expected = run_function(func, args)
    module = builtin.ModuleOp([func])
    PASSES["reassociate"]().run(module)
    verify(module)
    assert run_function(func, args) == expected, f"before:\n{before}\nafter:\n{print_op(func)}"
