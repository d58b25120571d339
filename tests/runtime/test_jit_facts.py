"""The JIT's specialisation reaches the frontend (docs/runtime.md, *Specialisation*):
examples/gemm_auto.cute's kernels assume nothing of their sizes, and a launch whose
extents and leading dimensions are divisible gets the plan those facts allow (16-byte
cp.async copies; on sm_90a the warp-specialised TMA body), an odd leading dimension the
narrow fallback; each variant launches with its own block, grid and parameters."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

import cutec.runtime as rt
from cutec.ir.printer import print_op

GEMM_AUTO = Path(__file__).parents[2] / "examples" / "gemm_auto.cute"
SMALL = {"BM": 32, "BN": 32, "BK": 32, "BP": 2}


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test its own disk cache, and no kernel object shared with another test."""
    monkeypatch.setenv("CUTEC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(sys.modules["cutec.runtime.jit"], "_KERNELS", {})


def _gemm_tn(k: rt.Kernel, mnk: tuple[int, int, int], seed: int, **kw: object) -> None:
    """C = A B^T for K-major f16 A (M,K) and B (N,K) of small integers (exact in f32),
    checked against float64."""
    m, n, kk = mnk
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, (m, kk)).astype(np.float16)
    b = rng.integers(-3, 4, (n, kk)).astype(np.float16)
    c = np.asfortranarray(np.full((m, n), np.nan, np.float32))
    k(a, b, c, 1.0, 0.0, **kw)
    np.testing.assert_array_equal(c, a.astype(np.float64) @ b.astype(np.float64).T)


def _used(k: rt.Kernel) -> dict[int, rt.Kernel]:
    """The variants the kernel object loaded, by key."""
    return {key: v for (key, _), v in k._loaded.items()}


def _cp_async_bytes(variant: object) -> set[int]:
    text = print_op(variant.fn.module)  # type: ignore[attr-defined]
    return {int(b) for b in re.findall(r"cp_async \w+ [^\n]*\{bytes = (\d+)", text)}


def test_a_divisible_launch_copies_16_bytes_and_an_odd_one_less() -> None:
    """sm_80's body on the CPU: with M, N, K and the leading dimensions divisible, the
    variant's cp.async copies move 16 bytes; with odd ones (ldA = K = 35), the
    unspecialised variant's move fewer (2 bytes, not by cp.async); both compute A B^T."""
    k = rt.jit(GEMM_AUTO, "gemm_tn", device="cpu", arch="sm_80", **SMALL)
    _gemm_tn(k, (40, 48, 64), seed=1)
    (wide,) = _used(k).values()
    assert _cp_async_bytes(wide) == {16}
    _gemm_tn(k, (37, 41, 35), seed=2)
    narrow = _used(k)[0]  # no fact holds: the unspecialised variant
    assert narrow is not wide
    assert 16 not in _cp_async_bytes(narrow)  # 2-byte copies: none by cp.async


def _block(launch_function: object) -> str:
    source = launch_function.__cutec_source__  # type: ignore[attr-defined]
    (line,) = re.findall(r"_b0, _b1, _b2 = \d+, \d+, \d+", source)
    return line.split("= ")[1]


def test_each_variant_launches_with_its_own_block() -> None:
    """sm_90a: the divisible launch's plan is the Hopper body (384 threads: a producer and
    two consumer warpgroups), the unspecialised one's mma.sync on 128 threads. The launch
    function is written for the first; a call with an odd leading dimension is launched
    by its variant's own launch function, with its block, and both compute A B^T. `k.ptx`
    is the PTX of the variant the CPU loaded last (compiled when asked for)."""
    k = rt.jit(GEMM_AUTO, "gemm_tn", device="cpu", arch="sm_90a")
    assert k.signature.kernel == "gemm_tn"
    assert k._record is not None and k._record.launch.block == (128, 1, 1)  # no facts
    _gemm_tn(k, (128, 64, 64), seed=3)
    assert _block(k._launcher) == "384, 1, 1"
    (hopper,) = _used(k).values()
    assert hopper.launch is None  # the launch function's own record
    assert "wgmma.mma_async" in k.ptx  # the PTX of the variant loaded last
    _gemm_tn(k, (37, 41, 35), seed=4)
    plain = _used(k)[0]
    assert plain.launch is not None and _block(plain.launch) == "128, 1, 1"
    # A `block=` is checked against the variant's block, not the launch function's.
    _gemm_tn(k, (37, 41, 35), seed=5, block=(128, 1, 1))
    with pytest.raises(ValueError, match="block"):
        _gemm_tn(k, (37, 41, 35), seed=5, block=(384, 1, 1))
    with pytest.raises(ValueError, match="block"):
        _gemm_tn(k, (128, 64, 64), seed=5, block=(128, 1, 1))


def test_without_specialisation_one_launch_record_serves() -> None:
    """specialize=False: one variant, the unspecialised plan, for every launch."""
    k = rt.jit(GEMM_AUTO, "gemm_tn", device="cpu", arch="sm_90a", specialize=False)
    _gemm_tn(k, (128, 64, 64), seed=6)
    assert k._key_facts == [] and _block(k._launcher) == "128, 1, 1"
    assert list(_used(k)) == [0] and _used(k)[0].launch is None
