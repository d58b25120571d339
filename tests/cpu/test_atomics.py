"""Atomics and fences on the CPU: both backends (the reference interpreter and the native
one) give the values an atomic must give, the same bits (each applies a warp's atomics
in lane order, warps and CTAs one after another), the flag handoff of stream-K runs,
and an atomic out of bounds is reported like a load or a store."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import cutec.runtime as rt
from cutec.cpu import codegen_atomic, native, reference
from cutec.cpu.reference import AccessError
from cutec.driver import Options, Source, Stage, compile
from cutec.ir.dialects.builtin import KernelOp

COUNTER = """
kernel count(counter: s32[1], out: s32[N]) grid ceil_div(N, 128) threads 128 {
  t = thread.x + block.x * 128
  if t < N {
    old = atomic_add(counter, 0, 1)
    out[t] = old
  }
}
"""

EXTREMES = """
kernel extremes(x: s32[N], y: s64[N], hi: s32[1], lo: s32[1], hi64: s64[1], lo64: s64[1])
  threads 64
{
  t = thread.x + block.x * 64
  if t < N {
    atomic_max(hi, 0, x[t])
    atomic_min(lo, 0, x[t], sem = "acq_rel", scope = "sys")
    atomic_max(hi64, 0, y[t])
    atomic_min(lo64, 0, y[t])
  }
}
"""

SUMS = """
kernel sums(x: f32[N], bins: f32[B], total: f64[1], seen: s32[N], slot: s32[1]) threads 96 {
  t = thread.x + block.x * 96
  if t < N {
    atomic_add(bins, t % B, x[t])
    atomic_add(total, 0, f64(x[t]))
    seen[t] = atomic_exch(slot, 0, s32(t))
  }
}
"""

TILE = """
kernel tile(C: f32[M, N] : (1, ldC), V: f32[K]) threads (8, 4) {
  m = thread.x
  n = thread.y
  atomic_add(C, (m, n), V[m + 8 * n])
  atomic_add(C, (m, n), 1.0)
}
"""

HANDOFF = """
kernel handoff(data: f32[N], flag: s32[1], out: f32[N]) threads 64 {
  if block.x == 0 {
    data[thread.x] = 2.0 * f32(s32(thread.x)) + 1.0
    sync()                                    // every thread's data before the flag
    if thread.x == 0 {
      fence()
      atomic_store(flag, 0, 1, sem = "release")
    }
  } else {
    if thread.x == 0 {
      while atomic_load(flag, 0) == 0 { }     // acquire, read again each iteration
    }
    sync()                                    // the flag seen before any data is read
    out[thread.x] = data[thread.x]
  }
}
"""

OOB = """
kernel oob(counter: s32[N]) threads 32 {
  atomic_add(counter, thread.x + 2, 1)
}
"""


def _kernel(text: str) -> KernelOp:
    module = compile(Source(text, "atomics.cute"), Stage.THREAD, Options()).module
    (k,) = module.walk_type(KernelOp)
    return k


def _both(text: str, grid: Any, args: dict[str, Any]) -> dict[str, Any]:
    """Run in both backends on copies of `args`; check they agree bit for bit and return
    the native run's arrays."""
    k = _kernel(text)
    runs = []
    for backend in (reference, native):
        copies = {n: v.copy(order="A") if isinstance(v, np.ndarray) else v for n, v in args.items()}
        backend.run_kernel(k, grid, copies)
        runs.append(copies)
    for name, value in runs[0].items():
        if isinstance(value, np.ndarray):
            assert value.tobytes() == runs[1][name].tobytes(), name
    return runs[1]


def test_every_thread_takes_one_ticket() -> None:
    """old = atomic_add(counter, 0, 1): the olds are 0..n-1 once each (lanes in order,
    a last warp partly live), the counter n."""
    n = 300
    args = {"counter": np.zeros(1, np.int32), "out": np.full(n, -1, np.int32), "N": n}
    got = _both(COUNTER, 3, args)
    assert np.array_equal(np.sort(got["out"]), np.arange(n))
    assert got["counter"][0] == n


def test_max_and_min_are_numpys() -> None:
    rng = np.random.default_rng(0)
    n = 200
    x = rng.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32)
    y = rng.integers(-(2**62), 2**62, n, dtype=np.int64)
    args = {
        "x": x, "y": y, "N": n,
        "hi": np.full(1, np.iinfo(np.int32).min, np.int32), "lo": np.full(1, 2**31 - 1, np.int32),
        "hi64": np.full(1, np.iinfo(np.int64).min), "lo64": np.full(1, np.iinfo(np.int64).max),
    }  # fmt: skip
    got = _both(EXTREMES, 4, args)
    assert (got["hi"][0], got["lo"][0]) == (x.max(), x.min())  # signed
    assert (got["hi64"][0], got["lo64"][0]) == (y.max(), y.min())


def test_float_sums_of_small_integers_are_exact_and_exch_passes_every_value_on() -> None:
    rng = np.random.default_rng(1)
    n, b = 250, 7
    x = rng.integers(-50, 50, n).astype(np.float32)
    args = {
        "x": x, "N": n, "bins": np.zeros(b, np.float32), "B": b, "total": np.full(1, 0.5),
        "seen": np.full(n, -7, np.int32), "slot": np.full(1, -1, np.int32),
    }  # fmt: skip
    got = _both(SUMS, 3, args)
    want = np.zeros(b, np.float32)
    np.add.at(want, np.arange(n) % b, x)
    assert np.array_equal(got["bins"], want)
    assert got["total"][0] == 0.5 + x.astype(np.float64).sum()
    # each exch returns the value before it: the olds and the last value are -1, 0..n-1
    values = np.sort(np.append(got["seen"], got["slot"]))
    assert np.array_equal(values, np.arange(-1, n))


def test_a_coordinate_per_mode_names_the_element_of_a_strided_tensor() -> None:
    rng = np.random.default_rng(2)
    c = np.zeros((10, 6), np.float32, order="F")  # M = 10 > 8: the first rows only
    v = np.asfortranarray(rng.integers(0, 9, (8, 4)).astype(np.float32))
    got = _both(TILE, 1, {"C": c, "M": 10, "N": 6, "ldC": 10, "V": v.reshape(-1, order="F"),
                           "K": 32})  # fmt: skip
    want = np.zeros((10, 6), np.float32)
    want[:8, :4] = v + 1
    assert np.array_equal(got["C"], want)


def test_the_flag_handoff_between_two_ctas() -> None:
    """CTA 0 writes the data, fences and releases the flag; CTA 1 spins on the flag and
    reads the data (CTAs run in order on the CPU, so the spin ends at once)."""
    n = 64
    args = {"data": np.zeros(n, np.float32), "N": n, "flag": np.zeros(1, np.int32),
            "out": np.full(n, np.nan, np.float32)}  # fmt: skip
    got = _both(HANDOFF, 2, args)
    assert np.array_equal(got["out"], 2 * np.arange(n, dtype=np.float32) + 1)
    assert got["flag"][0] == 1


def test_an_atomic_out_of_bounds_is_reported_alike() -> None:
    k = _kernel(OOB)
    errors = []
    for backend in (reference, native):
        with pytest.raises(AccessError) as info:
            backend.run_kernel(k, 1, {"counter": np.zeros(32, np.int32), "N": 32})
        errors.append(str(info.value))
    assert errors[0] == errors[1]
    assert errors[0].startswith(
        "atomics.cute:3:3: out-of-bounds atomic of 4 bytes at byte offset 128 of counter "
        "(128 bytes) (thread.atomic_rmw, thread (30, 0, 0), block (0, 0, 0))"
    )


def test_jit_runs_atomics_natively() -> None:
    k = rt.jit(COUNTER, device="cpu")
    counter, out = np.zeros(1, np.int32), np.full(100, -1, np.int32)
    k(counter, out)
    assert k.cpu_backend == "native"
    assert np.array_equal(np.sort(out), np.arange(100)) and counter[0] == 100


def test_the_reference_runs_atomics_when_the_native_backend_cannot(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without the native rule (as for an op it does not run yet), cutec.jit falls back
    to the interpreter, which gives the same values."""
    monkeypatch.delitem(codegen_atomic.ATOMIC_HANDLERS, "thread.atomic_rmw")
    k = rt.jit(COUNTER.replace("128", "96"), device="cpu")  # not the first test's kernel
    counter, out = np.zeros(1, np.int32), np.full(100, -1, np.int32)
    k(counter, out)
    assert k.cpu_backend == "reference (op thread.atomic_rmw)"
    assert np.array_equal(np.sort(out), np.arange(100)) and counter[0] == 100
