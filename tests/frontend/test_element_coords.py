"""``t[m, n]``: an element named by one coordinate per mode (CuTe's colexicographic
order), read and written, checked by the values it moves on the CPU backend."""

from __future__ import annotations

import numpy as np
import pytest

import cutec
from cutec.diagnostics import CompileError
from cutec.driver import Source, Stage, compile

TRANSPOSE = """
kernel t2(P: f32[M, N] : (1, ldP), Q: f32[N, M] : (1, ldQ))
  grid (ceil_div(M, 32), N) threads 32
{
  m = block.x * 32 + thread.x
  n = block.y
  if m < M {
    Q[n, m] = P[m, n] + 1.0
  }
}
"""


def test_coordinates_read_and_write_the_element_they_name() -> None:
    rng = np.random.default_rng(11)
    p = np.asfortranarray(rng.standard_normal((45, 7)).astype(np.float32))
    q = np.asfortranarray(np.full((7, 45), np.nan, np.float32))
    cutec.jit(TRANSPOSE, device="cpu")(p, q)
    np.testing.assert_array_equal(q, p.T + np.float32(1.0))


def test_static_coordinates_of_a_fragment_fold_to_one_index() -> None:
    text = """
kernel f(Q: f32[N] : (1))
  grid (1) threads 1
{
  r = rmem f32[(2, 3)]
  r[1, 2] = 5.0
  Q[0] = r[5]
}
"""
    module = compile(Source(text, "f.cute"), Stage.CUTE).module
    assert module is not None
    stores = [op for op in module.walk() if op.name == "cute.store"]
    index = stores[0].operands[2].op  # type: ignore[union-attr]
    assert index.name == "arith.constant" and index.value.value == 5  # 1 + 2 * 2


@pytest.mark.parametrize(
    ("expr", "col", "message"),
    [
        ("r[1, 3]", 15, "coordinate 3 is outside mode 1 of extent 3"),
        ("r[1, 2, 0]", 10, "an element of a rank-2 tensor is named by one linear index or 2"),
        ("r[(0, 1), 2]", 12, "each coordinate of an element is one integer"),
    ],
)
def test_bad_coordinates_are_located(expr: str, col: int, message: str) -> None:
    text = f"""
kernel f(Q: f32[N] : (1))
  grid (1) threads 1
{{
  r = rmem f32[(2, 3)]
  clear(r)
  Q[0] = {expr}
}}
"""
    with pytest.raises(CompileError) as e:
        compile(Source(text, "f.cute"), Stage.CUTE)
    (d,) = e.value.diagnostics
    assert message in d.message
    assert d.location is not None and (d.location.line, d.location.col) == (7, col)
