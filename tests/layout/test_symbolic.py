"""Symbolic integers: folding rules, facts, printing, and agreement with plain ints."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutec.layout.errors import DynamicValueError, LayoutError
from cutec.layout.symbolic import (
    Integer,
    SymInt,
    bounds,
    ceil_div,
    evaluate,
    evaluated,
    is_static,
    known_divisible,
    known_residue,
    opaque,
    parse_expr,
    smax,
    smin,
    split_multiple,
    static_value,
    sym,
)

M, N, K = sym("M"), sym("N"), sym("K")
ldA = sym("ldA", divisibility=4)

# -- folding rules ------------------------------------------------------------

FOLDS: list[tuple[Callable[[], Integer], Integer | str]] = [
    (lambda: 2 * M + M, "3*M"),
    (lambda: M - M, 0),
    (lambda: M * 4 // 2, "2*M"),
    (lambda: (8 * ldA) // 8, "ldA"),
    (lambda: (4 * M) % 2, 0),
    (lambda: ceil_div(128 * M, 128), "M"),
    (lambda: ceil_div(M, 1), "M"),
    (lambda: M % 1, 0),
    (lambda: M // 1, "M"),
    (lambda: (6 * M + 4 * N) // 2, "3*M+2*N"),
    (lambda: (4 * M + 3) // 4, "M"),
    (lambda: (4 * M + 3) % 4, 3),
    (lambda: ceil_div(4 * M + 3, 4), "M+1"),
    (lambda: ceil_div(M + 128, 128), "ceil_div(M,128)+1"),
    (lambda: (M * N) // N, "M"),
    (lambda: (K * K) // K, "K"),
    (lambda: (M * M * N) // (M * N), "M"),
    (lambda: (M * M) % M, 0),
    (lambda: (M + N) % N, "M%N"),
    (lambda: (M * N + M) // M, "N+1"),
    (lambda: (2 * M + 2) // (M + 1), 2),
    (lambda: (M // 2) // 4, "M//8"),
    (lambda: ceil_div(ceil_div(M, 2), 4), "ceil_div(M,8)"),
    (lambda: (M % 8) % 4, "M%4"),
    (lambda: (M % 4) // 4, 0),
    (lambda: (M % 4) % 8, "M%4"),
    (lambda: ldA % 4, 0),
    (lambda: ceil_div(ldA, 4), "ldA//4"),
    (lambda: smin(M, M), "M"),
    (lambda: smax(M, 1), "M"),
    (lambda: smin(M, 1), 1),
    (lambda: smin(M + 1, M), "M"),
    (lambda: smax(N, M), "max(M,N)"),
    (lambda: smin(smin(M, N), M + 1), "min(M,N)"),
    (lambda: M * M - 1, "M*M-1"),
    (lambda: 2 * (M // 4), "2*(M//4)"),
    (lambda: -(M // 4), "-(M//4)"),
    (lambda: 5 - M, "-M+5"),
    (lambda: M // (2 * N), "M//(2*N)"),
    (lambda: (M + N) // 2, "(M+N)//2"),
    (lambda: 0 * M, 0),
    (lambda: M + 0, "M"),
    (lambda: operator.neg(-M), "M"),
]


@pytest.mark.parametrize(("build", "expected"), FOLDS)
def test_fold(build: Callable[[], Integer], expected: Integer | str) -> None:
    got = build()
    if isinstance(expected, int):
        assert type(got) is int and got == expected
    else:
        assert isinstance(got, SymInt) and str(got) == expected


def test_local_tile_leaves() -> None:
    # local_tile of (M,K):(1,ldA) by a static (128,8) tiler, as CuTe writes it.
    ld = sym("ldA")
    assert [str(x) for x in (ceil_div(M, 128), ceil_div(K, 8), ld * 8, 8 * ld)] == [
        "ceil_div(M,128)",
        "ceil_div(K,8)",
        "8*ldA",
        "8*ldA",
    ]


@pytest.mark.parametrize(
    "divide", [operator.floordiv, operator.mod, ceil_div], ids=["floordiv", "mod", "ceil_div"]
)
def test_division_by_zero_raises(divide: Callable[[Integer, Integer], Integer]) -> None:
    with pytest.raises(ZeroDivisionError):
        divide(M, 0)
    with pytest.raises(ZeroDivisionError):
        divide(M, N - N)
    assert divide(M, -1) == divide(-M, 1)  # a negative divisor is normalised, not refused


def test_int_semantics_match_python() -> None:
    assert [ceil_div(a, 4) for a in (-5, -4, 0, 1, 4, 5)] == [-1, -1, 0, 1, 1, 2]
    assert [ceil_div(a, 3) for a in range(1, 40)] == [(a + 2) // 3 for a in range(1, 40)]
    assert (smin(3, -2), smax(3, -2)) == (-2, 3)


# -- equality, hashing, conversions -------------------------------------------


def test_structural_equality_and_hash() -> None:
    assert (M * 2) // 2 == M
    assert hash((M * 2) // 2) == hash(M)
    assert sym("M") == M and hash(sym("M")) == hash(M)
    assert M + N == N + M and hash(M + N) == hash(N + M)
    assert smin(M, N) == smin(N, M)
    assert (M == 1) is False and (M != 1) is True
    assert (M == N) is False  # structural: not a claim that they differ at run time
    assert sym("M", divisibility=2) != M  # facts are part of a symbol's identity
    assert len({M, sym("M"), M + 0, 2 * M // 2, N}) == 2


def test_no_silent_guessing() -> None:
    with pytest.raises(DynamicValueError):
        bool(M)
    with pytest.raises(DynamicValueError):
        int(M)
    with pytest.raises(DynamicValueError):
        operator.index(M)
    with pytest.raises(DynamicValueError):
        range(M)
    with pytest.raises(TypeError):
        _ = M / 2  # true division has no integer meaning
    with pytest.raises(TypeError):
        _ = M + True  # bool is not an integer leaf


def test_static_leaves() -> None:
    assert (is_static(3), is_static(True), is_static(M), is_static(3.0)) == (
        True,
        False,
        False,
        False,
    )
    assert (static_value(7), static_value(M), static_value(False)) == (7, None, None)


# -- comparisons --------------------------------------------------------------


def test_comparisons_proved_from_facts() -> None:
    small = sym("S", min_value=2, max_value=64)
    reflected = (operator.le(1, M), operator.lt(0, M), operator.gt(M + 1, M))  # int on the left
    assert (M >= 1, M > 0, M <= M, M < M + 1, *reflected) == (True,) * 7
    assert (M < 1, M <= 0, M + 1 <= M) == (False,) * 3
    assert (ldA >= 4, ldA > 3, ldA < 4) == (True, True, False)  # multiple of 4, >= 1
    assert (small < 65, small > 64, small >= 2, small * 2 <= 128) == (True, False, True, True)
    assert smin(M, N) <= M and smin(M, N) <= N and smax(M, N) >= N
    assert M % 8 < 8 and M % 8 >= 0 and M // 2 >= 0 and ceil_div(M, 8) >= 1


@pytest.mark.parametrize(
    "question",
    [
        lambda: M < 5,
        lambda: M > 5,
        lambda: M <= N,
        lambda: M >= N,
        lambda: smin(M, N) < M,
        lambda: M % 8 < 4,
        lambda: max(M, N),
    ],
)
def test_comparisons_raise_when_unknown(question: Callable[[], Any]) -> None:
    with pytest.raises(DynamicValueError):
        question()


# -- divisibility -------------------------------------------------------------


def test_a_divisor_that_may_be_zero_is_taken_as_non_zero() -> None:
    # 4//M is 0 for M > 4; as a divisor it is assumed non-zero, so it lies in [1, 4].
    assert bounds(ceil_div(6, 4 // M)) == (2, 6)
    assert bounds(6 // (4 // M)) == (1, 6) and 6 // (4 // M) >= 1
    # A divisor that is 0 whatever M is (opaque keeps it symbolic) gives no claim.
    zero = opaque("floordiv", 1, 2 * M)
    assert bounds(ceil_div(6, zero)) == (-math.inf, math.inf)


def test_divisibility_propagation() -> None:
    n8 = sym("n", divisibility=8)
    assert ldA.divisibility() == 4 and M.divisibility() == 1
    assert (8 * ldA).divisibility() == 32  # product
    assert (ldA * n8).divisibility() == 32
    assert (ldA + 6).divisibility() == 2  # gcd over terms
    assert (ldA + n8).divisibility() == 4
    assert (n8 // 2).divisibility() == 4  # floordiv by a known divisor
    assert (n8 // 3).divisibility() == 1
    assert (n8 % 12).divisibility() == 4  # a % b = a - b*(a//b)
    assert smin(ldA, n8).divisibility() == 4
    assert (ldA * ldA).divisibility() == 16


def test_known_divisible() -> None:
    assert known_divisible(8 * ldA, 32) and not known_divisible(8 * ldA, 64)
    assert known_divisible(M * N, M) and known_divisible(M * N + M, M)
    assert known_divisible(2 * M + 2, M + 1) and not known_divisible(M + 1, M)
    assert known_divisible(0, M) and not known_divisible(3, M)
    assert known_divisible(12, -4) and not known_divisible(12, 0) and known_divisible(0, 0)


# -- subs, evaluate, facts ----------------------------------------------------


def test_subs_and_evaluate() -> None:
    e = ceil_div(M, 128) * 8 * ldA + smin(M, N)
    assert e.free_symbols() == {"M", "N", "ldA"}
    assert (M // N).free_symbols() == {"M", "N"}
    assert e.subs({"M": 300}) == 24 * ldA + smin(N, 300)
    assert evaluate(e, {"M": 300, "N": 7, "ldA": 12}) == 3 * 8 * 12 + 7
    assert M.subs({"M": N * 2}) == 2 * N
    assert evaluate(5, {}) == 5
    with pytest.raises(DynamicValueError, match="ldA"):
        evaluate(e, {"M": 1, "N": 2})


def test_subs_checks_facts() -> None:
    bounded = sym("B", min_value=2, max_value=9)
    with pytest.raises(LayoutError, match="ldA=6"):
        ldA.subs({"ldA": 6})
    with pytest.raises(LayoutError):
        bounded.subs({"B": 10})
    with pytest.raises(LayoutError):
        M.subs({"M": 0})


def test_sym_validates() -> None:
    for bad in ("", "1x", "a-b", "min", "ceil_div"):
        with pytest.raises(LayoutError):
            sym(bad)
    with pytest.raises(LayoutError):
        sym("x", divisibility=0)
    with pytest.raises(LayoutError):
        sym("x", divisibility=8, min_value=1, max_value=7)  # no multiple of 8 in [1, 7]


# -- printing and parsing -----------------------------------------------------


def test_parse_expr() -> None:
    assert parse_expr("M") == M and parse_expr("8*ldA", {"ldA": ldA}) == 8 * ldA
    assert parse_expr(" ceil_div( M , 128 ) + 1 ") == ceil_div(M, 128) + 1
    assert parse_expr("-M//2") == (-M) // 2  # Python precedence: unary minus binds first
    assert parse_expr("2*3+4%3-(7//2)") == 4
    assert parse_expr("min(M,N)*max(M,1)") == smin(M, N) * M


@pytest.mark.parametrize(
    ("text", "column"),
    [("M+*2", 3), ("M+", 3), ("ceil_div(M)", 11), ("3 $", 3), ("M N", 3), ("(M", 3), ("", 1)],
)
def test_parse_errors_name_the_column(text: str, column: int) -> None:
    with pytest.raises(LayoutError, match=f"at column {column}$"):
        parse_expr(text)


# -- agreement with plain ints (the key property) -----------------------------

# Symbols with different facts: default extent, divisible, bounded, signed.
SYMBOLS = {
    "M": M,
    "N": sym("N", divisibility=4),
    "K": sym("K", min_value=2, max_value=64),
    "S": sym("S", min_value=-8, max_value=8),
}
VALUES = st.fixed_dictionaries(
    {
        "M": st.integers(1, 300),
        "N": st.integers(1, 80).map(lambda n: 4 * n),
        "K": st.integers(2, 64),
        "S": st.integers(-8, 8),
    }
)
BINARY = ["add", "sub", "mul", "floordiv", "mod", "ceil_div", "min", "max"]
SYM_OPS: dict[str, Callable[..., Integer]] = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "floordiv": operator.floordiv,
    "mod": operator.mod,
    "ceil_div": ceil_div,
    "min": smin,
    "max": smax,
    "neg": operator.neg,
}
# The reference is independent of cutec: Python ints, and ceil as an exact rational.
INT_OPS: dict[str, Callable[..., int]] = {
    **{k: v for k, v in SYM_OPS.items() if k in ("add", "sub", "mul", "floordiv", "mod", "neg")},
    "ceil_div": lambda a, b: math.ceil(Fraction(a, b)),
    "min": min,
    "max": max,
}

Tree = Any  # a symbol name, an int, ("neg", t) or (op, t, t)
TREES: st.SearchStrategy[Tree] = st.recursive(
    st.sampled_from(sorted(SYMBOLS)) | st.integers(-6, 12),
    lambda sub: st.tuples(st.sampled_from(BINARY), sub, sub) | st.tuples(st.just("neg"), sub),
    max_leaves=8,
)


def build(tree: Tree, leaf: Callable[[str], Any], ops: dict[str, Callable[..., Any]]) -> Any:
    if isinstance(tree, str):
        return leaf(tree)
    if isinstance(tree, int):
        return tree
    op, *args = tree
    return ops[op](*(build(a, leaf, ops) for a in args))


def direct(tree: Tree, env: dict[str, int]) -> int | None:
    """The tree on plain ints; None when it divides by zero for these values."""
    try:
        return build(tree, env.__getitem__, INT_OPS)
    except ZeroDivisionError:
        return None


def symbolic(tree: Tree) -> Integer | None:
    """The tree on SymInts; None when a divisor simplified to the int 0."""
    try:
        return build(tree, SYMBOLS.__getitem__, SYM_OPS)
    except ZeroDivisionError:
        return None


@settings(max_examples=400, deadline=None)
@given(TREES, st.lists(VALUES, min_size=1, max_size=4))
def test_simplified_tree_agrees_with_ints(tree: Tree, envs: list[dict[str, int]]) -> None:
    e = symbolic(tree)
    for env in envs:
        want = direct(tree, env)
        if e is None:  # a divisor folded to 0, so it is 0 for every value too
            assert want is None
            continue
        if want is None:
            continue  # the tree divides by zero at these values
        got = e.subs(env) if isinstance(e, SymInt) else e
        assert type(got) is int and got == want, f"{e} at {env}"
        assert evaluate(e, env) == want
        assert want % (e.divisibility() if isinstance(e, SymInt) else 1) == 0


@settings(max_examples=300, deadline=None)
@given(TREES)
def test_printing_round_trips(tree: Tree) -> None:
    e = symbolic(tree)
    if isinstance(e, SymInt):
        text = str(e)
        assert " " not in text
        again = parse_expr(text, SYMBOLS)
        assert again == e and hash(again) == hash(e) and str(again) == text
        assert symbolic(tree) == e and hash(symbolic(tree)) == hash(e)


COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


@settings(max_examples=300, deadline=None)
@given(TREES, TREES, st.sampled_from(sorted(COMPARE)), st.lists(VALUES, min_size=1, max_size=4))
def test_decided_comparisons_are_true(
    lhs: Tree, rhs: Tree, op: str, envs: list[dict[str, int]]
) -> None:
    a, b = symbolic(lhs), symbolic(rhs)
    if a is None or b is None:
        return
    try:
        answer = COMPARE[op](a, b)
    except DynamicValueError:
        return
    assert type(answer) is bool
    for env in envs:
        x, y = direct(lhs, env), direct(rhs, env)
        if x is not None and y is not None:
            assert COMPARE[op](x, y) == answer, f"{a} {op} {b} at {env}"


@given(st.integers(2, 10**6))
def test_unknown_comparison_raises_for_free_extents(c: int) -> None:
    # M < c holds for some extents M >= 1 and fails for others: it must never be decided.
    with pytest.raises(DynamicValueError):
        operator.lt(M, c)
    with pytest.raises(DynamicValueError):
        operator.ge(M, c)


def _bit(x: Integer, k: int) -> Integer:
    return opaque("mod", opaque("floordiv", x, 1 << k), 2)


def test_known_residue_decides_the_bits_of_a_mixed_bits_offset() -> None:
    """A swizzled slice's offset is a sum of 2^k * bit_k(x) (swizzle_slice.Mixed): when x
    is a known multiple of 8, bits 0..2 are 0 and the sum is 0 mod 8, though
    known_divisible sees opaque atoms."""
    t = sym("t", min_value=0, max_value=127)
    x = 512 * opaque("floordiv", t, 8) + 8 * opaque("mod", t, 8)
    offset = sum((1 << k) * _bit(x, k) for k in range(12)) - 16 * _bit(x, 3) * _bit(x, 6)
    assert not known_divisible(offset, 8)
    assert known_residue(offset, 8) == 0
    assert known_residue(offset, 16) is None  # bit 3 of x is not known
    for tv in range(128):  # and the claim holds for every value
        assert evaluate(offset, {"t": tv}) % 8 == 0


@pytest.mark.parametrize(
    ("build", "m", "expected"),
    [
        (lambda: 6 * ldA + 3, 4, 3),  # ldA % 4 == 0
        (lambda: 5 * M + 2, 5, 2),
        (lambda: M + 2, 5, None),
        (lambda: opaque("mod", 4 * M + 6, 4), 2, 0),  # exactly 2
        (lambda: opaque("mod", 4 * M + 6, 8), 2, 0),  # (8 | mod's rhs): 6 mod 2
        (lambda: opaque("floordiv", 8 * M + 20, 4), 2, 1),  # 2M + 5
        (lambda: opaque("min", M, 4), 2, None),
        (lambda: 7, 4, 3),
        (lambda: -1, 4, 3),
    ],
)
def test_known_residue(build: Callable[[], Integer], m: int, expected: int | None) -> None:
    assert known_residue(build(), m) == expected


# -- split_multiple -----------------------------------------------------------


@given(st.integers(-3, 3), st.integers(-2000, 2000), st.integers(1, 50), st.integers(1, 50))
def test_split_multiple_sums_back_and_divides(a: int, c: int, m: int, k: int) -> None:
    """x == rest + multiple, and d | multiple at every value of the symbols: the terms
    of ldA (divisor 4) times 128, and the constant's multiple of 512, go high."""
    x = a * M + 128 * ldA + 512 * K + c
    rest, multiple = split_multiple(x, 512)
    env = {"M": m, "ldA": 4 * k, "K": k}
    assert evaluate(rest, env) + evaluate(multiple, env) == evaluate(x, env)
    assert evaluate(multiple, env) % 512 == 0
    assert str(rest) == str(a * M + c % 512) and known_divisible(multiple, 512)


def test_evaluated_looks_through_opaque_terms() -> None:
    """A swizzled slice keeps a run-time offset as opaque bits (CuTe's MixedBits):
    sum of 2^k * ((x // 2^k) % 2). Its value is x; `evaluated` folds the bits where the
    facts decide them, so a known alignment of x shows through."""
    t = sym("t")
    y = (t // 128) % 2  # a warpgroup's index bit
    bits = sum((1 << k) * opaque("mod", opaque("floordiv", 4096 * y, 1 << k), 2) for k in range(32))
    assert not known_divisible(bits, 512)
    assert evaluated(bits) == 4096 * y and known_divisible(evaluated(bits), 512)
    assert evaluated(7) == 7 and evaluated(t + 3) == t + 3
