"""The FMA gemm's summation order: each accumulator element is one chain of fused
multiply-adds in k order, starting from the cleared zero, so the lowered sgemm is
bit-identical to that chain computed in numpy. Any reordering of the FMAs of a
k-block across (m, n) — the order ptxas sees them in — must keep this; only the
order of different elements' FMAs is free."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cutec.cpu.reference import run_kernel
from cutec.driver import Options, Source, Stage, compile
from cutec.ir.dialects.builtin import KernelOp, ModuleOp

EXAMPLES = Path(__file__).parents[2] / "examples"


def _kernel(example: str, name: str) -> KernelOp:
    module = compile(Source.from_file(EXAMPLES / f"{example}.cute"), Stage.THREAD, Options()).module
    assert isinstance(module, ModuleOp)
    return next(k for k in module.walk_type(KernelOp) if k.sym_name == name)


def _k_ordered_fma_chain(am: np.ndarray, bm: np.ndarray) -> np.ndarray:
    """C(m,n) = fma(A(m,k), B(n,k), C(m,n)) for k = 0, 1, ... from 0, each step rounded
    to f32 as the interpreter's fma rounds it: the f32 product is exact in f64, the
    sum is rounded to f64 and then to f32."""
    acc = np.zeros((am.shape[0], bm.shape[0]), np.float32)
    for k in range(am.shape[1]):
        prod = am[:, k, None].astype(np.float64) * bm[None, :, k].astype(np.float64)
        acc = (prod + acc.astype(np.float64)).astype(np.float32)
    return acc


@pytest.mark.parametrize(
    ("example", "kernel"),
    [pytest.param("sgemm_2", "sgemm_nt", marks=pytest.mark.slow), ("sgemm_1", "sgemm_tn")],
)
def test_sgemm_is_the_k_ordered_fma_chain_bit_for_bit(example: str, kernel: str) -> None:
    m = n = 128
    k = 16  # two k-tiles of 8: the chain runs on across the k-tile loop
    rng = np.random.default_rng(11)
    nt = kernel.endswith("nt")
    a = rng.standard_normal((k, m) if nt else (m, k)).astype(np.float32)
    b = rng.standard_normal((k, n) if nt else (n, k)).astype(np.float32)
    c = np.full((n, m), np.nan, np.float32)  # beta == 0: C is never read
    args = {
        "A": a, "M": m, "K": k, "ldA": m if nt else k,
        "B": b, "N": n, "ldB": n if nt else k,
        "C": c, "ldC": m, "alpha": 1.0, "beta": 0.0,
    }  # fmt: skip
    run_kernel(_kernel(example, kernel), (1, 1), args)
    am, bm = (a.T, b.T) if nt else (a, b)
    want = _k_ordered_fma_chain(am, bm)
    # alpha = 1 and beta = 0: the epilogue stores the accumulators unchanged.
    np.testing.assert_array_equal(args["C"].T, want)
