"""Write cases_random.txt: seeded random cases of the layout algebra, to be evaluated by CuTe.

    python tools/cute_reference/random_cases.py [--per-op N] [--seed S]
    python tools/cute_reference/generate.py --include DIR --reuse \\
        --cases tools/cute_reference/cases_random.txt \\
        --out tests/layout/data/cute_reference_random.tsv

The hand-picked and systematic cases of cases.txt test the corners one knows of; these test the
ones nobody thought of. Every stream of RANDOM_OPS (one per operation of the algebra, and a
second one for coalesce with a by-mode profile) gets N cases (default 2,000), drawn with a seed
derived from the stream's name, from small random layouts: rank 1 to 3, sometimes nested, shapes
of 1 to 8, strides that are compact, permuted, padded, zero or arbitrary, positive (CuTe's algebra
is defined for those); the tensor ops draw a tensor of whole tiles (rarely not), a tiler or thread
layout and a coordinate, sometimes with a projecting Step.

CuTe rejects most random pairs of a composition or divide at compile time (its divisibility
static_asserts), and every rejected case costs generate.py a compilation of its own. So the static
cases are screened with cutec first: a case that cutec rejects is kept only now and then (about
one in 100 kept cases), enough for the reference to check that cutec rejects exactly what CuTe
rejects without spending the generation's time on errors. About a quarter of the kept static cases
are repeated with dynamic leaves (every shape, or every leaf, a run-time int; tilers, orders and
types stay static), so that cutec's symbolic algebra is compared on the same inputs. The dynamic
variants are screened the same way, except in the first twelve streams, which were generated
before that rule and keep their cases.
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


def _shape_text(tree: list | int, values: list[int]) -> str:
    if not isinstance(tree, list):
        return _leaf(values[0])
    return _fmt(tree, values, [0])


def _flat_layout(rng: random.Random, shape: list[int], kinds: tuple[str, ...]) -> str:
    """A layout of the given flat shape (rank 1 printed bare), strides of a random kind."""
    stride = random_strides(rng, shape, rng.choice(kinds))
    return layout_text(shape, stride, list(range(len(shape))) if len(shape) > 1 else 0)


def _modes(layout: str) -> list[int]:
    """product_each of a static layout's shape."""
    from cutec.layout import product_each
    from cutec.layout.text import parse_value

    return list(product_each(parse_value(layout).shape))


def _tuple(items: list[str]) -> str:
    return "(" + ",".join(items) + ")"


def _coalesce_profile(rng: random.Random) -> list[str]:
    """coalesce by mode: _1 per top mode, or a tuple of _1 mirroring a nested mode."""
    from cutec.layout.text import parse_value

    a = random_layout(rng)
    shape = parse_value(a).shape
    modes = shape if isinstance(shape, tuple) else (shape,)
    profile = [
        _tuple(["_1"] * len(m)) if isinstance(m, tuple) and rng.random() < 0.5 else "_1"
        for m in modes
    ]
    return [a, _tuple(profile)]


def _tile_to_shape(rng: random.Random) -> list[str]:
    """A block and a target shape of whole multiples of it (rarely not); sometimes an order."""
    block = random_layout(rng, max_leaves=3, max_size=16, kinds=("colmajor", "perm", "padded"))
    modes = _modes(block)
    rank = len(modes) + rng.choice([0, 0, 0, 1])
    target = []
    for i in range(rank):
        b = modes[i] if i < len(modes) else 1
        m = b * rng.choice([1, 2, 3, 4, 8])
        if rng.random() < 0.03:
            m += 1
        target.append(_leaf(m))
    args = [block, _tuple(target)]
    if rng.random() < 0.4:
        order = list(range(rank))
        rng.shuffle(order)
        args.append(_tuple([_leaf(o) for o in order]))
    return args


def _cast_n(rng: random.Random) -> str:
    return str(rng.choice([1, 2, 2, 4, 4, 8, 16]))


def _maybe_swizzled(rng: random.Random, layout: str) -> str:
    if rng.random() < 0.1:
        b, m = rng.randint(1, 3), rng.randint(0, 3)
        return f"Sw<{b},{m},{rng.randint(b, 4)}> o _0 o {layout}"
    return layout


def _upcast(rng: random.Random) -> list[str]:
    return [_cast_n(rng), _maybe_swizzled(rng, random_layout(rng))]


TYPES = ["uint8_t", "uint16_t", "uint16_t", "uint32_t", "uint32_t", "uint64_t", "uint128_t"]


def _recast(rng: random.Random) -> list[str]:
    a = rng.choice([*TYPES, "uint4_t"])
    b = rng.choice([t for t in TYPES if t != a])
    return [a, b, _maybe_swizzled(rng, random_layout(rng))]


def _make_layout_tv(rng: random.Random) -> list[str]:
    thr = random_layout(rng, max_leaves=2, max_size=64, kinds=("colmajor", "perm"))
    val = random_layout(rng, max_leaves=2, max_size=8, kinds=("colmajor", "perm", "padded"))
    return [thr, val]


def _local_tile(rng: random.Random) -> list[str]:
    """A tensor of whole tiles (rarely not), a shape tiler, a tile coordinate (or _ to keep)."""
    rank = rng.randint(1, 3)
    tile = [rng.choice([1, 2, 4, 8]) for _ in range(rank)]
    count = [rng.choice([1, 2, 3, 4]) for _ in range(rank)]
    shape = [t * c + (1 if rng.random() < 0.05 else 0) for t, c in zip(tile, count, strict=True)]
    tensor = _flat_layout(rng, shape, ("colmajor", "perm", "padded"))
    coord = [_leaf(rng.randrange(c)) if rng.random() < 0.85 else "_" for c in count]
    tiler = [_leaf(t) for t in tile]
    if rng.random() < 0.3:
        extra_tile, extra_coord = _leaf(rng.choice([1, 2, 4])), _leaf(rng.randrange(3))
        at = rng.randint(0, rank)
        steps = ["_1"] * rank
        steps.insert(at, "_")
        tiler.insert(at, extra_tile)
        coord.insert(at, extra_coord)
        return [tensor, _tuple(tiler), _tuple(coord), _tuple(steps)]
    return [tensor, _tuple(tiler), _tuple(coord)]


def _local_partition(rng: random.Random) -> list[str]:
    """A tensor, a thread layout tiling it (rarely not), a thread index."""
    rank = rng.randint(1, 3)
    thr_shape = [rng.choice([1, 2, 4, 8]) for _ in range(rank)]
    shape = [t * rng.choice([1, 2, 3, 4]) for t in thr_shape]
    shape = [s + (1 if rng.random() < 0.05 else 0) for s in shape]
    tensor = _flat_layout(rng, shape, ("colmajor", "perm", "padded"))
    threads = 1
    for t in thr_shape:
        threads *= t
    index = _leaf(rng.randrange(threads))
    if rng.random() < 0.25:
        extra = rng.choice([1, 2, 4])
        at = rng.randint(0, rank)
        steps = ["_1"] * rank
        steps.insert(at, "_")
        full = [*thr_shape[:at], extra, *thr_shape[at:]]
        thr = _flat_layout(rng, full, ("colmajor", "perm"))
        return [tensor, thr, _leaf(rng.randrange(threads * extra)), _tuple(steps)]
    thr = _flat_layout(rng, thr_shape, ("colmajor", "perm"))
    return [tensor, thr, index]


def _make_ordered_layout(rng: random.Random) -> list[str]:
    """A (nested) shape and an order congruent to it: a permutation of its leaves."""
    n = rng.randint(1, 4)
    shape = [rng.choice(SHAPE_CHOICES) for _ in range(n)]
    tree = _structure(rng, n)
    order = list(range(n))
    rng.shuffle(order)
    return [_shape_text(tree, shape), _shape_text(tree, order)]


def _factor(rng: random.Random, n: int) -> list[int]:
    """n as a product of 1 to 3 factors > 1 (or [n])."""
    primes, p, m = [], 2, n
    while m > 1:
        while m % p == 0:
            primes.append(p)
            m //= p
        p += 1
    rng.shuffle(primes)
    k = min(len(primes), rng.randint(1, 3))
    if k <= 1:
        return [n]
    cuts = sorted(rng.sample(range(1, len(primes)), k - 1))
    out = []
    for lo, hi in zip([0, *cuts], [*cuts, len(primes)], strict=True):
        f = 1
        for q in primes[lo:hi]:
            f *= q
        out.append(f)
    return out


def _with_shape(rng: random.Random) -> list[str]:
    """A layout and a shape of its size (or of a divisor), maybe nested."""
    a = random_layout(rng, max_size=64)
    n = _size(a)
    if rng.random() < 0.2 and n > 1:
        n = rng.choice([d for d in range(1, n) if n % d == 0])
    factors = _factor(rng, n)
    return [a, _shape_text(_structure(rng, len(factors)), factors)]


# Each stream: (op, how to draw a case). A stream's seed is derived from its name, so streams
# can be added without changing the cases of the others.
RANDOM_OPS: dict[str, tuple[str, Draw]] = {
    "coalesce": ("coalesce", _coalesce),
    "filter": ("filter", _unary()),
    "composition": ("composition", _composition),
    "complement": ("complement", _complement),
    "right_inverse": ("right_inverse", _unary()),
    "left_inverse": ("left_inverse", _unary(kinds=("colmajor", "perm", "perm", "padded"))),
    "logical_divide": ("logical_divide", _divide),
    "zipped_divide": ("zipped_divide", _divide),
    "logical_product": ("logical_product", _product),
    "blocked_product": ("blocked_product", _product),
    "raked_product": ("raked_product", _product),
    "max_common_vector": ("max_common_vector", _pair),
    "coalesce_profile": ("coalesce", _coalesce_profile),
    "tiled_divide": ("tiled_divide", _divide),
    "flat_divide": ("flat_divide", _divide),
    "zipped_product": ("zipped_product", _product),
    "tiled_product": ("tiled_product", _product),
    "flat_product": ("flat_product", _product),
    "tile_to_shape": ("tile_to_shape", _tile_to_shape),
    "max_common_layout": ("max_common_layout", _pair),
    "nullspace": ("nullspace", _unary(kinds=("any", "any", "padded", "colmajor", "perm"))),
    "filter_zeros": ("filter_zeros", _unary()),
    "upcast": ("upcast", _upcast),
    "downcast": ("downcast", _upcast),
    "recast_layout": ("recast_layout", _recast),
    "make_layout_tv": ("make_layout_tv", _make_layout_tv),
    "local_tile": ("local_tile", _local_tile),
    "local_partition": ("local_partition", _local_partition),
    "make_ordered_layout": ("make_ordered_layout", _make_ordered_layout),
    "with_shape": ("with_shape", _with_shape),
}

# Which argument is the layout (or shape) made dynamic; the tensor ops also make their
# coordinate or thread index dynamic. Other arguments (tilers, orders, types) stay static.
_LAYOUT_ARG = {"upcast": 1, "downcast": 1, "recast_layout": 2}
_INDEX_ARG = {"local_tile": 2, "local_partition": 2}


def dynamic_variant(rng: random.Random, op: str, args: list[str]) -> list[str]:
    """The case with dynamic leaves: every shape leaf of the layout, or every leaf."""
    out = list(args)
    i = _LAYOUT_ARG.get(op, 0)
    if op == "make_ordered_layout":  # the order stays static
        out[0] = dyn_all(args[0])
    elif op == "tile_to_shape":  # the block's shape or the target shape; the order stays static
        k = rng.randrange(2)
        out[k] = dyn_shape(args[0]) if k == 0 else dyn_all(args[1])
    elif op in _INDEX_ARG:
        out[0] = dyn_shape(args[0]) if rng.random() < 0.5 else dyn_all(args[0])
        out[2] = dyn_all(args[2])
    elif " o " in args[i]:  # a swizzled layout: its layout part
        head, _, layout = args[i].rpartition(" o ")
        out[i] = f"{head} o {dyn_shape(layout)}"
    elif rng.random() < 0.5:
        out[i] = dyn_shape(args[i])
    else:
        out = [dyn_all(a) for a in args]
    return out


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


# The first streams were generated with their dynamic variants unscreened; they stay so, which
# keeps their cases (and CuTe's recorded results) as they are.
UNSCREENED_DYNAMIC = frozenset(list(RANDOM_OPS)[:12])


def draw_stream(
    op: str, draw: Draw, rng: random.Random, count: int, screen_dynamic: bool
) -> list[str]:
    """`count` distinct case lines of one stream (see the module docstring for the screening)."""
    seen: set[str] = set()
    cases: list[str] = []
    errors = 0

    def keep(args: list[str], screen: bool = True) -> bool:
        nonlocal errors
        line = f"{op} {' ; '.join(args)}"
        if line in seen:
            return False
        if screen and not cutec_accepts(op, args):
            if errors * 100 >= len(cases) + 100:
                return False
            errors += 1
        seen.add(line)
        cases.append(line)
        return True

    tries = 0
    while len(cases) < count and tries < count * 200:
        tries += 1
        args = draw(rng)
        if keep(args) and rng.random() < 0.25 and len(cases) < count:
            keep(dynamic_variant(rng, op, args), screen=screen_dynamic)
    return cases


def generate(per_op: int, seed: int) -> list[str]:
    lines: list[str] = []
    for stream, (op, draw) in RANDOM_OPS.items():
        rng = random.Random(f"{seed}:{stream}")
        cases = draw_stream(op, draw, rng, per_op, stream not in UNSCREENED_DYNAMIC)
        lines.append(f"# {stream}: {len(cases)} random {op} cases (seed {seed})")
        lines.extend(cases)
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--per-op", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    lines = generate(args.per_op, args.seed)
    head = (
        "# Seeded random cases of the layout algebra; written by random_cases.py, do not edit.\n"
        f"# python tools/cute_reference/random_cases.py --per-op {args.per_op} "
        f"--seed {args.seed}\n"
    )
    args.out.write_text(head + "\n".join(lines) + "\n")
    n = sum(1 for ln in lines if not ln.startswith("#"))
    print(f"{n} random cases -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
