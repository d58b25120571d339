"""Every case of tests/layout/data/cute_reference.tsv, computed by cutec, printed as CuTe prints.

Static leaves (``_8``) are ints. Each dynamic input leaf (``8``) becomes a fresh
symbol; the algebra runs on symbols, then the result's SymInt leaves are
evaluated with the recorded values and printed without ``_``, as CuTe prints
its run-time ints. ``ERROR`` cases must raise LayoutError; a case whose C++ program
divided by a run-time 0 counts as raising when cutec's algebra divides by a
symbol that evaluates to 0 (cutec.layout.divisors).

The seeded random cases (cute_reference_random.tsv) are checked one test per op,
and every operation of the algebra must have at least RANDOM_PER_OP of them.
"""

from __future__ import annotations

import re
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import cutec.layout as cl
from cutec.layout import ComposedLayout, Layout, LayoutError, Swizzle
from cutec.layout.divisors import watch_divisors
from cutec.layout.inttuple import is_int
from cutec.layout.symbolic import evaluate, sym
from cutec.layout.text import format_layout, format_leaf, make_leaf_fn, parse_value

DATA = Path(__file__).parent / "data" / "cute_reference.tsv"
# Seeded random cases (tools/cute_reference/random_cases.py), checked one test per op.
RANDOM_DATA = Path(__file__).parent / "data" / "cute_reference_random.tsv"


def _reader(env: dict[str, int]) -> Callable[[str], Any]:
    """parse_value with every plain-integer leaf turned into a fresh recorded symbol."""
    static = make_leaf_fn()

    def leaf(token: str) -> Any:
        if re.fullmatch(r"-?\d+", token):
            value = int(token)
            name = f"d{len(env)}"
            env[name] = value
            # Positive values are only known positive (as CuTe knows nothing more at
            # compile time); a zero or negative run-time value is pinned so that
            # CuTe's run-time sign tests (abs, signum) have an answer.
            if value >= 1:
                return sym(name, min_value=1)
            return sym(name, min_value=value, max_value=value)
        if re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", token):
            return token  # an element type or a tag such as LayoutRight
        return static(token)

    return lambda text: parse_value(text, leaf=leaf)


def _show(x: Any, env: dict[str, int]) -> str:
    if isinstance(x, Layout):
        return format_layout(x, env=env)
    if isinstance(x, ComposedLayout):
        return f"{_show(x.layout_a, env)} o {_show(x.offset, env)} o {_show(x.layout_b, env)}"
    if isinstance(x, tuple):
        return "(" + ",".join(_show(y, env) for y in x) + ")"
    if isinstance(x, Swizzle):
        return str(x)
    if isinstance(x, bool):
        return f"_{'true' if x else 'false'}"
    if is_int(x):
        return format_leaf(x, env=env)
    raise TypeError(f"cannot print {x!r}")


_BITS = {"half_t": 16, "bfloat16_t": 16, "float": 32, "double": 64, "tfloat32_t": 32}


def _bits(name: str) -> int:
    m = re.fullmatch(r"u?int(\d+)(b)?_t", name)
    return int(m.group(1)) if m else _BITS[name]


def _make_layout(s: Any, tag: Any = None) -> Layout:
    return cl.make_layout(s) if tag is None else cl.make_layout(s, tag)


OPS: dict[str, Callable[..., Any]] = {
    "size": lambda x: cl.size(x),
    "cosize": lambda x: cl.cosize(x),
    "rank": lambda x: cl.rank(x),
    "depth": lambda x: cl.depth(x),
    "coalesce": cl.coalesce,
    "filter": cl.filter,
    "filter_zeros": cl.filter_zeros,
    "composition": cl.composition,
    "complement": cl.complement,
    "left_inverse": cl.left_inverse,
    "right_inverse": cl.right_inverse,
    "nullspace": cl.nullspace,
    "logical_divide": cl.logical_divide,
    "zipped_divide": cl.zipped_divide,
    "tiled_divide": cl.tiled_divide,
    "flat_divide": cl.flat_divide,
    "logical_product": cl.logical_product,
    "zipped_product": cl.zipped_product,
    "tiled_product": cl.tiled_product,
    "flat_product": cl.flat_product,
    "blocked_product": cl.blocked_product,
    "raked_product": cl.raked_product,
    "tile_to_shape": cl.tile_to_shape,
    "max_common_layout": cl.max_common_layout,
    "max_common_vector": cl.max_common_vector,
    "recast_layout": lambda a, b, layout: cl.recast_layout(layout, _bits(a), _bits(b)),
    "upcast": lambda n, layout: cl.upcast(layout, int(n)),
    "downcast": lambda n, layout: cl.downcast(layout, int(n)),
    "make_layout_tv": cl.make_layout_tv,
    "make_tiled_copy": cl.make_layout_tv,
    "make_ordered_layout": cl.make_ordered_layout,
    "make_layout": _make_layout,
    "idx2crd": cl.idx2crd,
    "crd2idx": cl.crd2idx,
    "shape_div": cl.shape_div,
    "compact_col_major": cl.compact_col_major,
    "compact_row_major": cl.compact_row_major,
    "product_each": cl.product_each,
    "with_shape": lambda a, s: a.with_shape(s),
}
TENSOR_OPS = {
    "local_tile": cl.local_tile_and_offset,
    "local_partition": cl.local_partition_and_offset,
}


def _records(path: Path = DATA) -> list[tuple[str, str, str, str]]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        rid, op, args, result = line.split("\t")
        out.append((rid, op, args, result))
    return out


def run_case(op: str, args: str) -> str:
    """cutec's printed result for one reference case (raises LayoutError like CuTe)."""
    env: dict[str, int] = {}
    reader = _reader(env)
    texts = args.split(" ; ") if args else []
    # upcast/downcast take N as a template argument, written as a plain integer.
    template_arg = op in ("upcast", "downcast")
    values = [t if template_arg and i == 0 else reader(t) for i, t in enumerate(texts)]
    with watch_divisors() as divisors:
        result = TENSOR_OPS[op](*values) if op in TENSOR_OPS else OPS[op](*values)
    _check_divisors(divisors, env)
    if op in TENSOR_OPS:
        layout, offset = result
        return f"{_show(offset, env)} o {_show(layout, env)}"
    return _show(result, env)


def _check_divisors(divisors: list[Any], env: dict[str, int]) -> None:
    """CuTe's program divides by these run-time values; one that is 0 kills it (SIGFPE)."""
    for d in divisors:
        try:
            zero = evaluate(d, env) == 0
        except ZeroDivisionError:  # d itself divides by a run-time 0
            zero = True
        if zero:
            raise LayoutError(f"CuTe divides by {d} = 0 at run time")


RECORDS = _records()


@pytest.mark.skipif(not RECORDS, reason="cute_reference.tsv not generated yet")
# CuTe's results are the reference even where they are not the function composition
# (its weak divisibility condition): the LayoutWarning such a case raises is expected.
@pytest.mark.filterwarnings("ignore::cutec.layout.LayoutWarning")
@pytest.mark.parametrize(("rid", "op", "args", "expected"), RECORDS, ids=[r[0] for r in RECORDS])
def test_matches_cute(rid: str, op: str, args: str, expected: str) -> None:
    if expected == "ERROR":
        with pytest.raises(LayoutError):
            run_case(op, args)
    else:
        assert run_case(op, args) == expected


RANDOM_RECORDS = _records(RANDOM_DATA)
RANDOM_OPS = sorted({r[1] for r in RANDOM_RECORDS})
# The operations of the layout algebra (tests/layout/data/README.md says why the other ops of
# the reference are not among them) and the random cases each must have.
ALGEBRA_OPS = (
    "coalesce",
    "filter",
    "filter_zeros",
    "composition",
    "complement",
    "right_inverse",
    "left_inverse",
    "nullspace",
    "logical_divide",
    "zipped_divide",
    "tiled_divide",
    "flat_divide",
    "logical_product",
    "zipped_product",
    "tiled_product",
    "flat_product",
    "blocked_product",
    "raked_product",
    "tile_to_shape",
    "max_common_layout",
    "max_common_vector",
    "upcast",
    "downcast",
    "recast_layout",
    "make_layout_tv",
    "make_ordered_layout",
    "with_shape",
    "local_tile",
    "local_partition",
)
RANDOM_PER_OP = 2000


def _outcome(op: str, args: str) -> str:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cl.LayoutWarning)
            return run_case(op, args)
    except LayoutError:
        return "ERROR"


@pytest.mark.skipif(not RANDOM_RECORDS, reason="cute_reference_random.tsv not generated yet")
@pytest.mark.parametrize("op", RANDOM_OPS)
def test_random_cases_match_cute(op: str) -> None:
    rows = [r for r in RANDOM_RECORDS if r[1] == op]
    wrong = []
    for rid, _, args, expected in rows:
        got = _outcome(op, args)
        if got != expected:
            wrong.append(f"{rid} {op} {args}: CuTe {expected}, cutec {got}")
    assert not wrong, f"{len(wrong)} of {len(rows)} differ:\n" + "\n".join(wrong[:20])


@pytest.mark.skipif(not RANDOM_RECORDS, reason="cute_reference_random.tsv not generated yet")
def test_random_cases_cover_every_algebra_op() -> None:
    counts = Counter(r[1] for r in RANDOM_RECORDS)
    short = {op: counts[op] for op in ALGEBRA_OPS if counts[op] < RANDOM_PER_OP}
    assert not short, f"fewer than {RANDOM_PER_OP} random cases: {short}"
    assert sum(counts[op] for op in ALGEBRA_OPS) == len(RANDOM_RECORDS)  # nothing else
