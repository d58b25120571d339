"""The transcendental functions through the lowering: a fragment expression of exp, exp2,
log, log2, sqrt and rsqrt compiled to thread IR, run by the reference interpreter
against numpy (each function in float64 rounded once to f32, as the interpreter
defines them, and the float64 value of the whole expression), and its PTX assembled."""

from __future__ import annotations

import numpy as np
import pytest

from cutec.cpu.reference import run_kernel
from cutec.driver import Options, Source, Stage, compile
from cutec.ir.dialects.builtin import KernelOp, ModuleOp
from cutec.ptx.ptxas import assemble, find_ptxas
from cutec.target import COMPILE_TARGETS

MATH = """
kernel transcendental(x: f32[M] align 16, y: f32[M] align 16)
  assume M % 4 == 0
  grid ceil_div(M, 256) threads 64
{
  copy_f = tiled_copy(UniversalCopy[u128], thr = 64, val = 4)
  gx = local_tile(x, (256,), (block.x,))
  gy = local_tile(y, (256,), (block.x,))
  tx = copy_f.slice(thread.x).partition_S(gx)
  ty = copy_f.slice(thread.x).partition_D(gy)
  rx = make_fragment_like(tx)
  copy(copy_f, tx, rx)
  ry = exp(rx) * rsqrt(rx + 1.0) + log(rx + 2.0) + sqrt(rx) - exp2(log2(rx + 3.0))
  copy(copy_f, ry, ty)
}
"""

F32 = np.float32


def _per_op(x: np.ndarray) -> np.ndarray:
    """The kernel's expression with every operation rounded to f32: the functions are
    float64 values rounded once (the interpreter's, and the math folders', definition)."""

    def fn(f, v: np.ndarray) -> np.ndarray:
        return f(v.astype(np.float64)).astype(F32)

    def rsqrt(v: np.ndarray) -> np.ndarray:
        return 1.0 / np.sqrt(v)

    a = fn(np.exp, x) * fn(rsqrt, x + F32(1.0))
    b = a + fn(np.log, x + F32(2.0))
    c = b + fn(np.sqrt, x)
    return c - fn(np.exp2, fn(np.log2, x + F32(3.0)))


def _exact(x: np.ndarray) -> np.ndarray:
    d = x.astype(np.float64)
    return np.exp(d) / np.sqrt(d + 1) + np.log(d + 2) + np.sqrt(d) - (d + 3)


@pytest.fixture(scope="module")
def kernel() -> KernelOp:
    module = compile(Source(MATH, "math.cute"), Stage.THREAD, Options()).module
    assert isinstance(module, ModuleOp)
    assert not [op.name for op in module.walk() if op.name.startswith("cute.")]
    (k,) = module.walk_type(KernelOp)
    names = {op.name for op in k.walk()}
    assert {f"math.{f}" for f in ("exp", "exp2", "log", "log2", "sqrt", "rsqrt")} <= names
    return k


@pytest.mark.parametrize("m", [1024, 1000])
def test_values_match_numpy(kernel: KernelOp, m: int) -> None:
    x = np.random.default_rng(11).uniform(0.05, 4.0, m).astype(F32)
    y = np.full(m, np.nan, F32)
    run = run_kernel(kernel, (-(-m // 256),), {"x": x, "M": m, "y": y}, trace=True)
    np.testing.assert_array_equal(y, _per_op(x))
    np.testing.assert_allclose(y, _exact(x), rtol=1e-5, atol=1e-5)
    assert (run.store_counts("y", m, 4) == 1).all()


@pytest.mark.skipif(find_ptxas() is None, reason="no ptxas (install the test extra)")
@pytest.mark.parametrize("target", COMPILE_TARGETS)
def test_ptx_assembles(target: str) -> None:
    ptx = compile(Source(MATH, "math.cute"), Stage.PTX, Options(target=target)).ptx
    for ins in ("ex2.approx.f32", "lg2.approx.f32", "rsqrt.approx.f32", "sqrt.rn.f32"):
        assert ins in ptx
    assert ".ftz" not in ptx
    result = assemble(ptx, target)
    assert result.ok, result.stderr
