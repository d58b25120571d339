"""Every case of tests/layout/data/cute_reference.tsv, computed by cutec, printed as CuTe prints.

Static leaves (``_8``) are ints. Each dynamic input leaf (``8``) becomes a fresh
symbol; the algebra runs on symbols, then the result's SymInt leaves are
evaluated with the recorded values and printed without ``_``, as CuTe prints
its run-time ints. ``ERROR`` cases must raise LayoutError.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import cutec.layout as cl
from cutec.layout import ComposedLayout, Layout, LayoutError, Swizzle
from cutec.layout.inttuple import is_int
from cutec.layout.symbolic import sym
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


def _tensor_result(fn: Callable[..., tuple[Layout, Any]]) -> Callable[..., str]:
    def run(env: dict[str, int], *args: Any) -> str:
        layout, offset = fn(*args)
        return f"{_show(offset, env)} o {_show(layout, env)}"

    return run


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
    if op in TENSOR_OPS:
        return _tensor_result(TENSOR_OPS[op])(env, *values)
    return _show(OPS[op](*values), env)


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


# Random cases where cutec knowingly differs from CuTe: products of layouts with dynamic shapes.
# CuTe's complement of a layout with dynamic shapes keeps going where the rank-2 complement needs
# run-time values (it builds modes such as (1,1,4):(8,16,32) from its dynamic fold); cutec raises
# DynamicValueError instead. In one case, logical_product-80d98f2a, CuTe's program dies of a
# division by zero (SIGFPE) where cutec computes the product. Each id is checked to still
# differ, so that a fix shows up.
KNOWN_RANDOM_DIVERGENCES: frozenset[str] = frozenset(
    {
        "blocked_product-2e7edd8f",
        "blocked_product-420f5530",
        "blocked_product-6af06dce",
        "blocked_product-8b92998a",
        "blocked_product-9d5bf86d",
        "blocked_product-aee8db56",
        "blocked_product-dc510acf",
        "logical_product-01cec41e",
        "logical_product-02957404",
        "logical_product-054005bb",
        "logical_product-05d1f1c7",
        "logical_product-29a28dbb",
        "logical_product-4994f08b",
        "logical_product-4ef18282",
        "logical_product-5baa8ef2",
        "logical_product-5d519d04",
        "logical_product-67732a3c",
        "logical_product-6b096599",
        "logical_product-7157801e",
        "logical_product-7bc117de",
        "logical_product-80d98f2a",
        "logical_product-8eb94ad4",
        "logical_product-9b83ffd5",
        "logical_product-9fbafe10",
        "logical_product-a8627710",
        "logical_product-b1718fc0",
        "logical_product-b91a95f8",
        "logical_product-bd54183e",
        "logical_product-c940cddb",
        "logical_product-de875b2a",
        "logical_product-e89e1efb",
        "logical_product-fc04ef99",
        "logical_product-ff551feb",
        "raked_product-232b7111",
        "raked_product-248dbb91",
        "raked_product-3a62e3dc",
        "raked_product-83d5f018",
        "raked_product-fb22f5e9",
        "blocked_product-0c1429e7",
        "blocked_product-0d24b018",
        "blocked_product-1bd15f79",
        "blocked_product-1eb813b7",
        "blocked_product-3b886c77",
        "blocked_product-40578600",
        "blocked_product-45e1a95c",
        "blocked_product-553376ab",
        "blocked_product-5b37c3ed",
        "blocked_product-5d288cf8",
        "blocked_product-77442a8f",
        "blocked_product-840ab1fc",
        "blocked_product-9a304c21",
        "blocked_product-ac3cf917",
        "blocked_product-b841dd79",
        "blocked_product-b886856d",
        "blocked_product-c3690484",
        "blocked_product-c545c3bc",
        "blocked_product-d37c0f63",
        "blocked_product-d3a7b767",
        "blocked_product-dd7893a8",
        "blocked_product-ddb91cc2",
        "blocked_product-de0d4cca",
        "blocked_product-df06ce5f",
        "blocked_product-fcb4c617",
        "blocked_product-fd33b20c",
        "blocked_product-fd38807c",
        "blocked_product-ff585f62",
        "blocked_product-fff3f967",
        "raked_product-012a09f8",
        "raked_product-04a5601d",
        "raked_product-0b2008e5",
        "raked_product-11973377",
        "raked_product-212c7d0e",
        "raked_product-2ca4f261",
        "raked_product-2d648eb1",
        "raked_product-2ed6af25",
        "raked_product-3776b56e",
        "raked_product-3cf15e82",
        "raked_product-47b6af99",
        "raked_product-4e52412f",
        "raked_product-53eba1af",
        "raked_product-54238732",
        "raked_product-5aaaa79f",
        "raked_product-620045fe",
        "raked_product-6589f450",
        "raked_product-6d4d6da2",
        "raked_product-7c281706",
        "raked_product-922c980a",
        "raked_product-93507a4b",
        "raked_product-b9118199",
        "raked_product-c066fcf5",
        "raked_product-c19963b7",
        "raked_product-c748ebc0",
        "raked_product-c8d22284",
        "raked_product-d8fc6ff8",
        "raked_product-fae37bb8",
    }
)

RANDOM_RECORDS = _records(RANDOM_DATA)
RANDOM_OPS = sorted({r[1] for r in RANDOM_RECORDS})


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
        if (got == expected) == (rid in KNOWN_RANDOM_DIVERGENCES):
            wrong.append(f"{rid} {op} {args}: CuTe {expected}, cutec {got}")
    assert not wrong, f"{len(wrong)} of {len(rows)} differ:\n" + "\n".join(wrong[:20])
