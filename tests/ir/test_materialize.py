"""Materialising symbolic integers as arith ops: values, sharing, cheap forms."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from arith_eval import run_function
from hypothesis import given
from hypothesis import strategies as st

from cutec.frontend import compile_source
from cutec.ir import types as T
from cutec.ir.builder import Builder
from cutec.ir.core import Value
from cutec.ir.dialects import arith, builtin
from cutec.ir.dialects.builtin import KernelOp
from cutec.ir.layout_of import LayoutAnalysis
from cutec.ir.materialize import IntegerMaterializer, offset_of
from cutec.ir.parser import parse_module
from cutec.ir.printer import print_op
from cutec.ir.verifier import verify
from cutec.layout import ComposedLayout, Layout
from cutec.layout.inttuple import leaves
from cutec.layout.swizzle import Swizzle
from cutec.layout.symbolic import Integer, SymInt, ceil_div, evaluate, smax, smin, sym

# Symbols with the kinds of facts layouts carry: extents >= 1, strides with a
# divisor, a thread index in [0, 127], and one that may be negative.
SYMBOLS: dict[str, SymInt] = {
    "M": sym("M"),
    "K": sym("K", divisibility=4),
    "ldA": sym("ldA", divisibility=8),
    "tid": sym("tid", min_value=0, max_value=127),
    "d": sym("d", min_value=-40, max_value=40),
}
NAMES = list(SYMBOLS)


def symbol_values(name: str) -> st.SearchStrategy[int]:
    s = SYMBOLS[name]
    ((m, _),) = s.terms
    atom = m[0][0]
    step = atom.divisibility
    lo, hi = atom.min_value, atom.max_value if atom.max_value is not None else 300
    return st.integers(-(-lo // step), hi // step).map(lambda k: k * step)


ENVS = st.fixed_dictionaries({n: symbol_values(n) for n in NAMES})

POSITIVE = st.sampled_from([1, 2, 3, 4, 8, 12, 32, 64]).map(int) | st.sampled_from(
    [SYMBOLS["M"], SYMBOLS["K"], SYMBOLS["ldA"], SYMBOLS["M"] + 3]
)


def _combine(children: st.SearchStrategy[Integer]) -> st.SearchStrategy[Integer]:
    binary: list[Callable[[Integer, Integer], Integer]] = [
        lambda a, b: a + b,
        lambda a, b: a - b,
        lambda a, b: a * b,
        smin,
        smax,
    ]
    divide: list[Callable[[Integer, Integer], Integer]] = [
        lambda a, b: a // b,
        lambda a, b: a % b,
        ceil_div,
    ]
    return st.one_of(
        st.tuples(st.sampled_from(binary), children, children).map(lambda t: t[0](t[1], t[2])),
        st.tuples(st.sampled_from(divide), children, POSITIVE).map(lambda t: t[0](t[1], t[2])),
    )


LEAVES = st.sampled_from([SYMBOLS[n] for n in NAMES]) | st.integers(-20, 20)
EXPRS = st.recursive(LEAVES, _combine, max_leaves=8)


def materialize(*xs: Integer) -> tuple[builtin.FuncOp, list[Value]]:
    """A func of the symbols (index arguments) returning xs, materialised."""
    func = builtin.FuncOp("f", [T.index] * len(NAMES), [T.index] * len(xs))
    b = Builder.at_end(func.body)
    m = IntegerMaterializer(b, dict(zip(NAMES, func.body.args, strict=True)))
    values = [m(x) for x in xs]
    b.insert(builtin.ReturnOp(values))
    return func, values


@given(EXPRS, EXPRS, ENVS)
def test_values_match_the_algebra(x: Integer, y: Integer, env: dict[str, int]) -> None:
    func, _ = materialize(x, y)
    got = run_function(func, [env[n] for n in NAMES])
    assert got == [evaluate(x, env), evaluate(y, env)], print_op(func)


def _ops(func: builtin.FuncOp) -> list[str]:
    return [op.name for op in func.body.ops]


def test_one_op_per_distinct_monomial() -> None:
    M, ldA = SYMBOLS["M"], SYMBOLS["ldA"]
    func, (a, b) = materialize(M * ldA + 3, 2 * (M * ldA) + M * ldA * ldA)
    # M*ldA is one muli, shared by both results and by the cube's prefix.
    names = _ops(func)
    assert names.count("arith.muli") == 2, print_op(func)  # M*ldA, (M*ldA)*ldA
    assert names.count("arith.shli") == 1  # 2*(M*ldA)
    assert a is not b


def test_the_same_integer_twice_is_one_value() -> None:
    M = SYMBOLS["M"]
    func, (a, b) = materialize(M // 3 + 1, M // 3 + 1)
    assert a is b
    assert _ops(func).count("arith.divui") == 1


def test_powers_of_two_become_shifts_and_masks() -> None:
    tid, d = SYMBOLS["tid"], SYMBOLS["d"]
    func, _ = materialize(tid // 32, tid % 32, d // 4, d % 4, 8 * tid, ceil_div(tid, 16))
    text = print_op(func)
    names = _ops(func)
    # tid >= 0: a logical shift; d may be negative: floor division is an arithmetic one.
    assert names.count("arith.shrui") == 2 and names.count("arith.shrsi") == 1, text
    assert names.count("arith.andi") == 2 and names.count("arith.shli") == 1, text
    for slow in ("arith.divui", "arith.divsi", "arith.floordivsi", "arith.remui", "arith.muli"):
        assert slow not in names, text


def test_general_division_by_facts() -> None:
    M, d = SYMBOLS["M"], SYMBOLS["d"]
    func, _ = materialize(M // 3, M % 3, d // 3, ceil_div(M, 3))
    names = _ops(func)
    # M >= 0 divides unsigned; d may be negative: floor division, and no remsi.
    assert names.count("arith.divui") == 2  # M // 3 and (M + 2) // 3
    assert names.count("arith.remui") == 1
    assert names.count("arith.floordivsi") == 1
    assert "arith.ceildivsi" not in names and "arith.remsi" not in names


def test_symbol_values_come_from_the_layout_analysis() -> None:
    func = builtin.FuncOp("f", [T.index, T.i32], [T.index])
    n, w = func.body.args
    n.name_hint, w.name_hint = "n", "w"
    b = Builder.at_end(func.body)
    la = LayoutAnalysis()
    nn, ww = la.integer_of(n), la.integer_of(w)
    wi = b.insert(arith.IndexCastOp(w, T.index)).result
    assert la.integer_of(wi) == ww
    symbols = la.symbol_values(func)
    assert symbols == {"n": n, "w": w}
    m = IntegerMaterializer(b, symbols)
    result = m(nn * ww + 1)
    b.insert(builtin.ReturnOp([result]))
    # The i32 symbol is cast to index once.
    assert _ops(func).count("arith.index_cast") == 2
    assert run_function(func, [7, 5]) == [36]


@given(ENVS, st.integers(0, 3), st.integers(0, 7), st.integers(0, 40))
def test_offset_of_is_crd2idx(env: dict[str, int], i: int, j: int, k: int) -> None:
    M, ldA = SYMBOLS["M"], SYMBOLS["ldA"]
    layout = Layout(((4, 8), M, 2), ((ldA, 1), 32, 0))
    swizzled = ComposedLayout(Swizzle(2, 2, 3), 4, Layout((8, 16), (16, 1)))
    func = builtin.FuncOp("f", [T.index] * (len(NAMES) + 3), [T.index] * 4)
    *syms, ci, cj, ck = func.body.args
    b = Builder.at_end(func.body)
    m = IntegerMaterializer(b, dict(zip(NAMES, syms, strict=True)))
    flat = offset_of(layout, ((ci, cj), ck, 1), m)
    whole = offset_of(layout, (ci, ck, 1), m)  # an integer for the (4,8) mode
    static = offset_of(layout, ((3, 1), 2, 0), m)
    sw = offset_of(swizzled, (cj, ck), m)
    b.insert(builtin.ReturnOp([flat, whole, static, sw]))
    got = run_function(func, [*(env[n] for n in NAMES), i, j, k])
    ev = {**env}
    expect = [
        evaluate(layout(((i, j), k, 1)), ev),
        evaluate(layout((i, k, 1)), ev),
        3 * env["ldA"] + 1 + 64,
        swizzled((j, k)),
    ]
    assert got == expect, print_op(func)
    assert "arith.constant" in _ops(func)


@given(st.integers(0, 7), st.integers(0, 63), st.integers(0, 3))
def test_swizzle_is_applied_below_its_domain(i: int, j: int, k: int) -> None:
    """Sw<3,3,3> reads and writes bits 0-8: a stage of 512 elements is added after the
    xor, so two stages of one (row, column) share one swizzled value (one xor)."""
    staged = ComposedLayout(Swizzle(3, 3, 3), 0, Layout((8, 64, 4), (64, 1, 512)))
    func = builtin.FuncOp("f", [T.index] * 3, [T.index] * 2)
    ci, cj, ck = func.body.args
    b = Builder.at_end(func.body)
    m = IntegerMaterializer(b, {})
    first, other = offset_of(staged, (ci, cj, 0), m), offset_of(staged, (ci, cj, ck), m)
    b.insert(builtin.ReturnOp([first, other]))
    assert run_function(func, [i, j, k]) == [staged((i, j, 0)), staged((i, j, k))]
    assert _ops(func).count("arith.xori") == 1, print_op(func)


def test_offset_of_folds_static_parts() -> None:
    M = SYMBOLS["M"]
    func = builtin.FuncOp("f", [T.index] * (len(NAMES) + 1), [T.index])
    *syms, c = func.body.args
    b = Builder.at_end(func.body)
    m = IntegerMaterializer(b, dict(zip(NAMES, syms, strict=True)))
    # (_4, M):(_1, _4) at (2, c): 4*c + 2, one shift and one add (2 is one constant).
    off = offset_of(Layout((4, M), (1, 4)), (2, c), m)
    b.insert(builtin.ReturnOp([off]))
    names = _ops(func)
    assert names == ["arith.constant", "arith.shli", "arith.addi", "builtin.return"], names


EXAMPLES = sorted((Path(__file__).parents[2] / "examples").glob("*.cute"))
# gemm_stream_k (7 s) is a slow case: its kernels are gemm_auto's with a stream-K tail,
# whose layouts gemm_auto.cute covers.
CASES = [
    pytest.param(p, marks=pytest.mark.slow) if p.stem == "gemm_stream_k" else p for p in EXAMPLES
]


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.name)
def test_every_layout_of_every_example_materialises(path: Path) -> None:
    """Each dynamic leaf of each tensor's layout, and its offset in its root
    tensor, become arith ops just after the op that defines the tensor, from
    the values its symbols stand for; the module still verifies (every
    symbol's value dominates its use)."""
    module = parse_module(print_op(compile_source(path.read_text(), str(path))), path.name)
    la = LayoutAnalysis()
    made = 0
    for k in module.walk_type(KernelOp):
        for op in list(k.walk()):
            for r in op.results:
                if not hasattr(r.type, "spec"):
                    continue
                layout = la.layout_of(r)
                if isinstance(layout, ComposedLayout):
                    layout = layout.layout_b
                dynamic = [
                    x for x in leaves((layout.shape, layout.stride)) if isinstance(x, SymInt)
                ]
                m = IntegerMaterializer(Builder.after(op), la.symbol_values(k))
                # The view's offset in its root tensor too: what the lowering addresses.
                offset = la.address_of(r).offset
                for x in [*dynamic, *([offset] if isinstance(offset, SymInt) else [])]:
                    m(x)
                    made += 1
    verify(module)
    assert made > 0
