"""address_of: where each element of a view lives, checked by values on every example.

For concrete values of the run-time symbols (extents with their divisors, block
indices, loop indices), element i of a view is element ``offset + layout(i)``
of its root. Two properties that do not restate the code:

- local_tile of a kernel tensor at block (bx, by) holds exactly the elements
  the tile's rows and columns name (direct arithmetic on M, K, ldA);
- the partitions of a tensor over all threads of a tiled copy, tiled MMA or
  thread layout cover every element of the tensor, each the same number of
  times (once for copies; the MMA's replication for its operands).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cutec.frontend import compile_source
from cutec.ir.core import Operation, Value
from cutec.ir.dialects.builtin import KernelOp
from cutec.ir.layout_of import LayoutAnalysis, TensorAddress
from cutec.layout import ComposedLayout, Layout
from cutec.layout.inttuple import flatten_to_tuple, transform_leaf
from cutec.layout.symbolic import evaluate, is_static

EXAMPLES = Path(__file__).parents[2] / "examples"


def _concrete(x: Any, env: dict[str, int]) -> Any:
    return transform_leaf(x, lambda v: v if is_static(v) else evaluate(v, env))


def _apply(layout: Layout, env: dict[str, int]) -> np.ndarray:
    """layout(i) for every i, with the symbols' values from env (column-major coordinates)."""
    shapes = flatten_to_tuple(_concrete(layout.shape, env))
    strides = flatten_to_tuple(_concrete(layout.stride, env))
    index = np.arange(int(np.prod(shapes, dtype=np.int64)), dtype=np.int64)
    out = np.zeros_like(index)
    step = 1
    for s, d in zip(shapes, strides, strict=True):
        out += (index // step % s) * d
        step *= s
    return out


def addresses(a: TensorAddress, env: dict[str, int]) -> np.ndarray:
    """The root element holding each element of the view, in the view's order."""
    layout = a.layout
    if isinstance(layout, ComposedLayout):
        sw = layout.layout_a
        x = evaluate(layout.offset, env) + _apply(layout.layout_b, env)
        value = x ^ ((x & sw.yyy_msk) >> sw.shift)  # Sw<B,M,S>(x), S > 0 in cutec's atoms
        assert sw.shift > 0
    else:
        value = _apply(layout, env)
    return evaluate(a.offset, env) + value


def kernel(example: str, name: str) -> KernelOp:
    path = EXAMPLES / example
    module = compile_source(path.read_text(), str(path))
    (k,) = [k for k in module.walk_type(KernelOp) if k.sym_name == name]
    return k


def named(op: Operation, name: str) -> Value:
    for o in op.walk():
        for r in o.results:
            if r.name_hint == name:
                return r
    raise AssertionError(f"no value named {name}")


def test_local_tile_holds_the_tiles_elements() -> None:
    k = kernel("sgemm_2.cute", "sgemm_nt")
    la = LayoutAnalysis()
    g_a = la.address_of(named(k, "gA"))  # A is (M,K):(1,ldA); tile (128,8,k) at block x
    assert g_a.root.op.name == "cute.make_tensor" and g_a.root.op.ptr.name_hint == "A"
    env = {"M": 512, "K": 24, "ldA": 516, "bid_x": 3, "bid_y": 1}
    got = addresses(g_a, env).tolist()
    # Element (i, j, t) of the tile is A(128*bx + i, 8*t + j), column-major order.
    want = [
        (128 * 3 + i) + (8 * t + j) * 516 for t in range(3) for j in range(8) for i in range(128)
    ]
    assert got == want


def _symbols(la: LayoutAnalysis, ops: list[Operation]) -> set[str]:
    names: set[str] = set()
    for op in ops:
        for a in (la.address_of(op.results[0]), la.address_of(op.operands[0])):
            layout = a.layout
            parts = (
                [a.offset, layout.layout_b.shape, layout.layout_b.stride, layout.offset]
                if (isinstance(layout, ComposedLayout))
                else [a.offset, layout.shape, layout.stride]
            )
            for p in parts:
                transform_leaf(
                    p, lambda v: names.update(v.free_symbols() if not is_static(v) else ())
                )
    return names


CASES = [
    ("sgemm_1.cute", "sgemm_nt"),
    ("sgemm_2.cute", "sgemm_nt"),
    ("sgemm_2.cute", "sgemm_tn"),
    ("sgemm_2_shared.cute", "sgemm_nt"),
    ("sgemm_sm80.cute", "hgemm_tn"),
    ("tiled_copy.cute", "copy_kernel"),
    ("wgmma_sm90.cute", "hgemm_nt"),
]


@pytest.mark.parametrize(("example", "name"), CASES)
def test_partitions_over_all_threads_cover_their_tensor_evenly(example: str, name: str) -> None:
    k = kernel(example, name)
    threads = k.attributes["reqntid"].values[0]
    la = LayoutAnalysis()
    parts = [op for op in k.walk() if op.name in ("cute.partition", "cute.local_partition")]
    assert parts
    tid = {v.name_hint for op in parts for v in op.operands[-1:]}

    # Every other symbol gets a value its facts allow (multiples of every divisor the
    # examples assume), with leading dimensions wide enough that no two elements of
    # a tensor alias: extents 128, leading dimensions 1024, block indices 1.
    def value(s: str) -> int:
        return 1 if s.startswith("bid") else 1024 if s.startswith("ld") else 128

    env = {s: value(s) for s in _symbols(la, parts) if s not in tid}
    for op in parts:
        source = addresses(la.address_of(op.operands[0]), env)
        want = np.unique(source)
        assert len(want) == len(source), f"the source of {op} aliases: pick wider strides"
        tid_name = op.operands[-1].name_hint
        result = la.address_of(op.results[0])
        got = np.concatenate([addresses(result, {**env, tid_name: t}) for t in range(threads)])
        values, counts = np.unique(got, return_counts=True)
        assert np.array_equal(values, want), op
        assert len(set(counts.tolist())) == 1, op  # every element equally often
