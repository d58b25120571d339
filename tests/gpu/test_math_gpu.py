"""On a GPU, the math functions of the language against float64 and their stated bounds.

Each function runs through `cutec.jit` on 65,536 values (docs/language.md,
*Fragment arithmetic*, states the bounds).
"""

from __future__ import annotations

import numpy as np
import pytest

import cutec.runtime as rt

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)


MATH = """
kernel fn[F: int = 0](x: f32[M] align 16, y: f32[M] align 16)
  assume M % 4 == 0
  grid ceil_div(M, 256) threads 64
{
  c = tiled_copy(UniversalCopy[u128], thr = 64, val = 4)
  tx = c.slice(thread.x).partition_S(local_tile(x, (256,), (block.x,)))
  ty = c.slice(thread.x).partition_D(local_tile(y, (256,), (block.x,)))
  rx = make_fragment_like(tx)
  copy(c, tx, rx)
  ry = FN(rx)
  copy(c, ry, ty)
}
"""


@pytest.mark.parametrize(
    ("fn", "low", "high", "rel"),
    [
        ("sqrt", 0.0, 100.0, 0.0),  # IEEE: correctly rounded
        ("exp", -10.0, 10.0, "ulp"),  # CUDA's __expf: 2 + floor(|1.173 x|) ulp
        ("exp2", -10.0, 10.0, 2.0**-20),
        ("log2", 0.5, 2.0, None),  # absolute error 2^-22 on [0.5, 2]
        ("log", 0.5, 2.0, None),
        ("rsqrt", 0.01, 100.0, 2.0**-20),
    ],
)
def test_math_functions_within_their_bounds(fn: str, low, high, rel) -> None:
    """The GPU's results against float64: sqrt exact to f32, the approximate functions
    within the tolerance docs/language.md states (or, where it states none, 2^-20)."""
    k = rt.jit(MATH.replace("FN", fn))
    m = 1 << 16
    x = np.random.default_rng(4).uniform(low, high, m).astype(np.float32)
    out = torch.full((m,), float("nan"), device="cuda")
    k(torch.from_numpy(x).cuda(), out)
    y = out.cpu().numpy()
    d = x.astype(np.float64)
    exact = {
        "sqrt": np.sqrt(d), "exp": np.exp(d), "exp2": np.exp2(d), "log2": np.log2(d),
        "log": np.log(d), "rsqrt": 1 / np.sqrt(d),
    }[fn]  # fmt: skip
    if rel == 0.0:
        np.testing.assert_array_equal(y, exact.astype(np.float32))
    elif rel == "ulp":
        # CUDA states 2 + floor(|1.173 x|) ulp for __expf, which runs the same two
        # instructions; measured on an H100 this sequence exceeds it by up to about
        # 0.1 ulp where the result sits just below a power of two (docs/language.md):
        # the test allows one ulp more.
        ulps = 2 + np.floor(np.abs(1.173 * d))
        err = np.abs(y - exact) / np.spacing(exact.astype(np.float32))
        worst = int(np.argmax(err - ulps))
        print(f"exp: max error {err.max():.3f} ulp, max over the bound {(err - ulps).max():.3f}")
        assert (err <= ulps + 1).all(), (float(x[worst]), float(err[worst]), float(ulps[worst]))
    elif rel is None:
        bound = 2.0**-22 if fn == "log2" else 2.0**-21.41
        assert np.abs(y - exact).max() <= bound * 1.0001
    else:
        assert (np.abs(y - exact) / np.abs(exact)).max() <= rel
