"""CuTe's TMA + wgmma tutorial (examples/wgmma_tma_sm90.cute) run by the CPU backend (native:
TMA loads, mbarriers, clusters of two CTAs and wgmma all run there) against float64, at
the issue's ragged sizes: tiles past M, N and K read zeros through the maps, and the
epilogue is predicated. The TMA maps need 16-byte strides, so TN's K-major operands with
K = 1003 are views of rows padded to 1008 elements (the kernel takes ldA, ldB)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import cutec

EXAMPLE = Path(__file__).parents[2] / "examples" / "wgmma_tma_sm90.cute"
F16_ACC_TOLERANCE = 1e-2  # f16 accumulation, rounded per instruction on the CPU


def _operand(rng: np.random.Generator, rows: int, k: int, mn_major: bool) -> np.ndarray:
    if mn_major:  # (rows, k) with stride (1, rows): rows is a multiple of 8 here
        return np.asfortranarray(rng.standard_normal((rows, k)).astype(np.float16))
    padded = -(-k // 8) * 8
    x = np.zeros((rows, padded), np.float16)
    x[:, :k] = rng.standard_normal((rows, k)).astype(np.float16)
    return x[:, :k]


@pytest.mark.parametrize(("kernel", "mn_major"), [("hgemm_nt", True), ("hgemm_tn", False)])
@pytest.mark.parametrize(("m", "n", "k"), [(200, 136, 72), (72, 200, 1003)])
def test_wgmma_tma_sm90_on_the_cpu_against_float64(
    kernel: str, mn_major: bool, m: int, n: int, k: int
) -> None:
    rng = np.random.default_rng(m + n + k)
    a, b = _operand(rng, m, k, mn_major), _operand(rng, n, k, mn_major)
    c0 = np.asfortranarray(rng.standard_normal((m, n)).astype(np.float16))
    c = c0.copy(order="F")
    run = cutec.jit(EXAMPLE, kernel=kernel, device="cpu")
    run(a, b, c, 1.0, 0.5)
    assert run.cpu_backend == "native"
    ref = a.astype(np.float64) @ b.astype(np.float64).T + 0.5 * c0.astype(np.float64)
    err = np.linalg.norm(c.astype(np.float64) - ref) / np.linalg.norm(ref)
    assert err < F16_ACC_TOLERANCE, err
