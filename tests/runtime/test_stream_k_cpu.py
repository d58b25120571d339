"""`stream_k = true`: one gemm, two kernels, one call. The frontend builds the kernel
and its tail (`<kernel>__tail`), the runtime supplies the wave and the workspace and
launches the tail after the kernel (docs/abi.md, *Implicit arguments*). Checked on
the CPU, where a wave is CPU_RESIDENT_CTAS (4) CTAs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import cutec.runtime as rt
from cutec.driver import Options, Source, Stage, compile
from cutec.ir.dialects.builtin import KernelOp
from cutec.ir.signature import KernelSignature, LaunchInfo, ScalarParam, TensorParam
from cutec.runtime.jit import CPU_RESIDENT_CTAS
from tests.runtime.test_jit_cpu import stream_k_operands

EXAMPLE = Path(__file__).parents[2] / "examples" / "gemm_auto.cute"
# Tiles small enough for the CPU: 32x32x32, 2 stages, 4 warps.
SMALL = {"BM": 32, "BN": 32, "BK": 32, "BP": 2, "STREAM_K": True}


def _splitting_any_k() -> str:
    """gemm_auto.cute whose gemms split a small K too (by default a split must save 2048
    of K, which would take the CPU long)."""
    source = EXAMPLE.read_text()
    assert source.count("stream_k = STREAM_K)") == 4
    return source.replace("stream_k = STREAM_K)", "stream_k = STREAM_K, split_min_k = 0)")


def _workspaces(k: rt.Kernel) -> list:
    """The tail workspaces of `k`'s loaded variants."""
    return [v.then.workspace for v in k._launcher.__variants__.values()]


def _run(k: rt.Kernel, lay: str, mnk: tuple[int, int, int], seed: int) -> None:
    """C = 2 A B^T - C0 in one call, exact against float64 (a tile the two kernels both
    wrote would subtract C0 twice)."""
    a, b, c0, ga, gb, c = stream_k_operands(lay, mnk, seed)
    k(ga, gb, c, 2.0, -1.0)
    np.testing.assert_array_equal(c, 2.0 * a @ b.T - c0, err_msg=str(mnk))


# CI runs the NT pair; the other majors are slow cases (the same lowering, other
# layouts: `pytest -m slow`), to keep the suite within its time.
@pytest.mark.parametrize(
    "lay", ["nt", *(pytest.param(x, marks=pytest.mark.slow) for x in ("tn", "nn", "tt"))]
)
def test_one_call_computes_every_tile_once(lay: str) -> None:
    """Split tails (6 tiles of 4: 2 left; 10: 2 left; 9 with K = 40: 1 left over 2
    k-tiles) and unsplit ones (11 tiles: 3 left, more than two thirds; 12: none left;
    2: no full wave), each exact; the workspace exists once a tail ran, and its flags
    are zero after every call."""
    k = rt.jit(_splitting_any_k(), f"gemm_{lay}", device="cpu", **SMALL)
    assert CPU_RESIDENT_CTAS == 4
    for i, mnk in enumerate([(352, 32, 64), (128, 96, 96), (64, 32, 64)]):
        _run(k, lay, mnk, seed=i)
    assert all(w._by_stream == {} for w in _workspaces(k))  # no tail launched yet
    for i, mnk in enumerate([(96, 64, 200), (160, 64, 72), (96, 96, 40)]):
        _run(k, lay, mnk, seed=10 + i)
    # the tail's grid is computed once per shape and variant, not at every call
    _run(k, lay, (96, 64, 200), seed=10)
    tails = [v.then for v in k._launcher.__variants__.values()]
    assert sum(len(t.grids) for t in tails) == 6
    (ws,) = [w for w in _workspaces(k) if w._by_stream]
    partials, flags = ws.get(0)
    assert partials.shape == (32 * 32 * CPU_RESIDENT_CTAS,) and partials.dtype == np.float32
    assert flags.shape == (CPU_RESIDENT_CTAS,) and not flags.any()


def test_a_small_k_is_not_split_by_default() -> None:
    """gemm_auto as written: 6 tiles of 4 with K = 200 would save 100 of K, below 2048:
    the kernel takes every tile and the tail is not launched (no workspace)."""
    k = rt.jit(EXAMPLE, "gemm_tn", device="cpu", **SMALL)
    _run(k, "tn", (96, 64, 200), seed=3)
    assert all(w._by_stream == {} for w in _workspaces(k))


def test_persistent_full_waves() -> None:
    """PERSIST = true: the kernel's CTAs loop over the full waves' tiles, the tail
    splits the rest."""
    k = rt.jit(_splitting_any_k(), "gemm_tn", device="cpu", PERSIST=True, **SMALL)
    for i, mnk in enumerate([(160, 64, 72), (96, 128, 96), (352, 32, 64)]):
        _run(k, "tn", mnk, seed=20 + i)
    assert any(w._by_stream for w in _workspaces(k))


def test_the_module_holds_the_kernel_and_its_tail() -> None:
    """Two kernels: the first names the tail (`then`); each lists the arguments the
    runtime supplies (`implicit`), which the signature keeps apart from the caller's."""
    options = Options(kernel="gemm_nt", defines={"STREAM_K": True})
    result = compile(Source.from_file(EXAMPLE), Stage.THREAD, options)
    assert result.module is not None
    kernels = {k.sym_name: k for k in result.module.walk_type(KernelOp)}
    assert list(kernels) == ["gemm_nt", "gemm_nt__tail"]
    first, tail = result.signatures["gemm_nt"], result.signatures["gemm_nt__tail"]
    assert result.launches["gemm_nt"].then == "gemm_nt__tail"
    assert result.launches["gemm_nt__tail"].then is None
    assert [p.name for p in first.params] == [p.name for p in tail.params]
    assert [p.name for p in first.params] == ["A", "B", "C", "alpha", "beta"]
    assert first.implicit == (ScalarParam("stream_k_wave", "index"),)
    assert tail.implicit == (
        ScalarParam("stream_k_wave", "index"),
        TensorParam("stream_k_workspace", "f32", (16384, "stream_k_ctas"), (1, 16384), 16, "write"),
        TensorParam("stream_k_flags", "s32", "stream_k_ctas", 1, 4, "atomic"),
    )
    assert [n for n, _ in tail.abi[-4:]] == [
        "stream_k_wave", "stream_k_workspace", "stream_k_ctas", "stream_k_flags"
    ]  # fmt: skip
    for sig in (first, tail):
        assert KernelSignature.from_json(sig.to_json()) == sig
    info = result.launches["gemm_nt"]
    assert LaunchInfo.from_json(info.to_json()) == info


def test_a_launch_from_the_disk_cache_launches_the_tail() -> None:
    """A second process reads the signature (and the tail's) from the disk cache: a new
    Kernel object for the same source finds the tail without the frontend."""
    source = _splitting_any_k()
    first = rt.jit(source, "gemm_tn", device="cpu", **SMALL)
    first.signature  # noqa: B018  (reads and caches it)
    again = rt.Kernel(first.source, "gemm_tn", dict(first.static_params), None, "cpu", True)
    again.signature  # noqa: B018
    assert again._then is not None and again._then[0].kernel == "gemm_tn__tail"
    _run(again, "tn", (96, 64, 200), seed=5)
    assert any(w._by_stream for w in _workspaces(again))
