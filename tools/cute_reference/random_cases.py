"""Write cases_random.txt: seeded random cases of the layout algebra, to be evaluated by CuTe.

    python tools/cute_reference/random_cases.py [--per-op N] [--seed S]
    python tools/cute_reference/generate.py --include DIR \\
        --cases tools/cute_reference/cases_random.txt \\
        --out tests/layout/data/cute_reference_random.tsv

The hand-picked and systematic cases of cases.txt test the corners one knows of; these test the
ones nobody thought of. Every op of CORE_OPS gets N cases (default 2,000), the other ops of
RANDOM_OPS (built on those) --per-other cases (default 200), drawn with a fixed seed
from small random layouts: rank 1 to 3, sometimes nested, shapes of 1 to 8, strides that are
compact, permuted, padded, zero or arbitrary, positive (CuTe's algebra is defined for those).

CuTe rejects most random pairs of a composition or divide at compile time (its divisibility
static_asserts), and every rejected case costs generate.py a compilation of its own. So the static
cases are screened with cutec first: a case that cutec rejects is kept only now and then (about
one in 100 kept cases), enough for the reference to check that cutec rejects exactly what CuTe
rejects without spending the generation's time on errors. About a quarter of the kept static cases
are repeated with dynamic leaves (every shape, or every leaf, a run-time int), so that cutec's
symbolic algebra is compared on the same inputs; CuTe checks those at run time, which is cheap.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
OUT = HERE / "cases_random.txt"
SEED = 20261123

sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

from make_cases import dyn_all, dyn_shape  # noqa: E402

SHAPE_CHOICES = [1, 2, 2, 2, 3, 4, 4, 4, 6, 8, 8]


def _leaf(v: int) -> str:
    return f"_{v}"


def _nest(rng: random.Random, leaves: list[int]) -> list:
    """Group a flat list of leaves into a random (shallow) nesting: rank 1 to 3 at the top."""
    if len(leaves) == 1:
        return [leaves[0]]
    out: list = []
    i = 0
    while i < len(leaves):
        k = rng.choice([1, 1, 1, 2, 2]) if len(leaves) - i >= 2 else 1
        out.append(leaves[i] if k == 1 else leaves[i : i + k])
        i += k
    return out


def _fmt(tree: list | int, values: list[int], pos: list[int]) -> str:
    if isinstance(tree, list):
        return "(" + ",".join(_fmt(t, values, pos) for t in tree) + ")"
    v = values[pos[0]]
    pos[0] += 1
    return _leaf(v)


def _structure(rng: random.Random, n: int) -> list | int:
    tree = _nest(rng, list(range(n)))
    if len(tree) == 1 and not isinstance(tree[0], list) and rng.random() < 0.7:
        return 0  # a rank-1 layout printed without parentheses
    return tree


def layout_text(shape: list[int], stride: list[int], tree: list | int) -> str:
    if not isinstance(tree, list):
        return f"{_leaf(shape[0])}:{_leaf(stride[0])}"
    return f"{_fmt(tree, shape, [0])}:{_fmt(tree, stride, [0])}"


def random_strides(rng: random.Random, shape: list[int], kind: str) -> list[int]:
    n = len(shape)
    if kind == "any":
        return [rng.choice([0, 1, 2, 3, 4, 5, 6, 8, 12, 16, 24, 32]) for _ in range(n)]
    order = list(range(n))
    if kind != "colmajor":
        rng.shuffle(order)
    strides = [0] * n
    cur = rng.choice([1, 1, 1, 2]) if kind != "colmajor" else 1
    for i in order:
        strides[i] = cur
        pad = rng.choice([1, 1, 1, 2, 3]) if kind == "padded" else 1
        cur *= shape[i] * pad
    if kind == "padded" and rng.random() < 0.3:
        strides[rng.randrange(n)] = 0
    return strides


def random_layout(
    rng: random.Random,
    max_leaves: int = 4,
    kinds: tuple[str, ...] = ("colmajor", "perm", "perm", "padded", "padded", "any"),
    max_size: int = 256,
) -> str:
    while True:
        n = rng.randint(1, max_leaves)
        shape = [rng.choice(SHAPE_CHOICES) for _ in range(n)]
        size = 1
        for s in shape:
            size *= s
        if size <= max_size:
            break
    stride = random_strides(rng, shape, rng.choice(kinds))
    return layout_text(shape, stride, _structure(rng, n))


def random_tiler(rng: random.Random, rank: int) -> str:
    """A tiler for a rank-`rank` layout: a layout, an integer, or a tuple of them by mode."""
    r = rng.random()
    if r < 0.4 or rank == 1:
        return (
            random_layout(rng, max_leaves=2, max_size=32)
            if rng.random() < 0.75
            else (_leaf(rng.choice([1, 2, 3, 4, 8])))
        )
    k = rng.randint(1, rank)
    modes = []
    for _ in range(k):
        c = rng.random()
        if c < 0.4:
            modes.append(_leaf(rng.choice([1, 2, 4, 8])))
        else:
            modes.append(random_layout(rng, max_leaves=2, max_size=16))
    return "(" + ",".join(modes) + ")"


def _rank(layout: str) -> int:
    from cutec.layout import rank
    from cutec.layout.text import parse_value

    return rank(parse_value(layout))


def _size(layout: str) -> int:
    from cutec.layout import size
    from cutec.layout.text import parse_value

    return size(parse_value(layout))


# Each op: how to draw its argument list (static text).
Draw = Callable[[random.Random], list[str]]


def _unary(**kw: object) -> Draw:
    return lambda rng: [random_layout(rng, **kw)]  # type: ignore[arg-type]


def _coalesce(rng: random.Random) -> list[str]:
    a = random_layout(rng)
    if rng.random() < 0.2 and _rank(a) > 1:
        return [a, "(" + ",".join("_1" for _ in range(_rank(a))) + ")"]
    return [a]


def _composition(rng: random.Random) -> list[str]:
    a = random_layout(rng)
    r = rng.random()
    if r < 0.6:
        b = random_layout(rng, max_leaves=3, max_size=max(1, _size(a)))
    else:
        b = random_tiler(rng, _rank(a))
    return [a, b]


def _complement(rng: random.Random) -> list[str]:
    a = random_layout(rng, kinds=("colmajor", "perm", "padded", "padded", "any"))
    if rng.random() < 0.5:
        return [a]
    return [a, _leaf(rng.choice([1, 2, 4, 8, 16, 32, 64, 128, 256]))]


def _divide(rng: random.Random) -> list[str]:
    a = random_layout(rng)
    return [a, random_tiler(rng, _rank(a))]


def _product(rng: random.Random) -> list[str]:
    a = random_layout(rng, max_leaves=3, max_size=32)
    b = random_layout(rng, max_leaves=3, max_size=32)
    return [a, b]


def _pair(rng: random.Random) -> list[str]:
    a = random_layout(rng, kinds=("colmajor", "perm", "padded"))
    if rng.random() < 0.5:
        return [a, a]
    return [a, random_layout(rng, kinds=("colmajor", "perm", "padded"))]


RANDOM_OPS: dict[str, Draw] = {
    "coalesce": _coalesce,
    "filter": _unary(),
    "composition": _composition,
    "complement": _complement,
    "right_inverse": _unary(),
    "left_inverse": _unary(kinds=("colmajor", "perm", "perm", "padded")),
    "logical_divide": _divide,
    "zipped_divide": _divide,
    "logical_product": _product,
    "blocked_product": _product,
    "raked_product": _product,
    "max_common_vector": _pair,
}


def cutec_accepts(op: str, args: list[str]) -> bool:
    """Whether cutec computes this (static) case; used only to screen out most errors."""
    import warnings

    sys.path.insert(0, str(REPO / "tests" / "layout"))
    from test_cute_reference import run_case

    from cutec.layout import LayoutError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run_case(op, " ; ".join(args))
    except LayoutError:
        return False
    return True


# The ops that get the full count; the others (built on these) get --per-other cases.
CORE_OPS = (
    "coalesce",
    "composition",
    "complement",
    "right_inverse",
    "left_inverse",
    "logical_divide",
    "logical_product",
)


def generate(per_op: int, seed: int, per_other: int | None = None) -> list[str]:
    lines: list[str] = []
    for op, draw in RANDOM_OPS.items():
        count = per_op if op in CORE_OPS or per_other is None else per_other
        rng = random.Random(f"{seed}:{op}")
        seen: set[str] = set()
        cases: list[str] = []
        errors = 0
        tries = 0
        while len(cases) < count and tries < count * 200:
            tries += 1
            args = draw(rng)
            line = f"{op} {' ; '.join(args)}"
            if line in seen:
                continue
            if not cutec_accepts(op, args):
                if errors * 100 >= len(cases) + 100:
                    continue
                errors += 1
            seen.add(line)
            cases.append(line)
            if rng.random() < 0.25 and len(cases) < count:
                dyn = [dyn_shape(args[0]), *args[1:]] if rng.random() < 0.5 else map(dyn_all, args)
                dline = f"{op} {' ; '.join(dyn)}"
                if dline not in seen:
                    seen.add(dline)
                    cases.append(dline)
        lines.append(f"# {op}: {len(cases)} random cases (seed {seed})")
        lines.extend(cases)
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--per-op", type=int, default=2000)
    ap.add_argument("--per-other", type=int, default=200)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    lines = generate(args.per_op, args.seed, args.per_other)
    head = (
        "# Seeded random cases of the layout algebra; written by random_cases.py, do not edit.\n"
        f"# python tools/cute_reference/random_cases.py --per-op {args.per_op} "
        f"--per-other {args.per_other} --seed {args.seed}\n"
    )
    args.out.write_text(head + "\n".join(lines) + "\n")
    n = sum(1 for ln in lines if not ln.startswith("#"))
    print(f"{n} random cases -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
