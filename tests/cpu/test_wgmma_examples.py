"""CuTe's cp.async + wgmma tutorial (examples/wgmma_sm90.cute) run by the CPU backend:
the lowering's descriptors decoded by the CPU's wgmma model, the stages landing and the
wgmma reading them asynchronously, against a float64 reference. The tutorial's tiles
must divide the problem (and K span the pipe's prologue), so the sizes do."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import cutec

EXAMPLES = Path(__file__).parents[2] / "examples"
# f16 accumulation, rounded per instruction on the CPU (docs/cpu-backend.md, *wgmma*).
F16_ACC_TOLERANCE = 1e-2


def _operand(rng: np.random.Generator, rows: int, k: int, mn_major: bool) -> np.ndarray:
    x = rng.standard_normal((rows, k)).astype(np.float16)
    return np.asfortranarray(x) if mn_major else np.ascontiguousarray(x)


@pytest.mark.parametrize(("kernel", "mn_major"), [("hgemm_nt", True), ("hgemm_tn", False)])
@pytest.mark.parametrize(("m", "n", "k"), [(128, 128, 192), (256, 128, 256)])
def test_wgmma_sm90_on_the_cpu_against_float64(
    kernel: str, mn_major: bool, m: int, n: int, k: int
) -> None:
    rng = np.random.default_rng(m + n + k)
    a, b = _operand(rng, m, k, mn_major), _operand(rng, n, k, mn_major)
    c0 = np.asfortranarray(rng.standard_normal((m, n)).astype(np.float16))
    c = c0.copy(order="F")
    cutec.jit(EXAMPLES / "wgmma_sm90.cute", kernel=kernel, device="cpu")(a, b, c, 1.0, 0.5)
    ref = a.astype(np.float64) @ b.astype(np.float64).T + 0.5 * c0.astype(np.float64)
    err = np.linalg.norm(c.astype(np.float64) - ref) / np.linalg.norm(ref)
    assert err < F16_ACC_TOLERANCE, err
