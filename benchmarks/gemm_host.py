"""Host-side costs for gemm.py: cold compile-and-load, and launch overhead.

* cold compile: a fresh Python process with ``CUTEC_CACHE_DIR`` set to an empty
  temporary folder times cuInit + primary context (reported separately), then
  ``import cutec``, ``cutec.jit(...)`` and the first call (source → PTX → loaded
  module → launch, synchronised). A second process on the same folder measures
  the same with the disk cache warm. torch's import and the allocation of the
  operands happen between the two and are not counted. One process runs
  before both, on a folder of its own, so that Python's bytecode of cutec is
  written (an installed cutec has it) and does not count as compile time.
* launch overhead: in this process, host time per call of a cached cutec kernel
  against ``cuLaunchKernel`` through cuda.bindings on the same kernel (its
  ``k.ptx`` loaded with cuModuleLoadData), with the arguments packed once
  beforehand, in rounds short enough that the GPU's launch queue never fills.

    python benchmarks/gemm_host.py child EXAMPLE KERNEL   # what gemm.py runs in the subprocess
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _ok(result: tuple) -> tuple:
    from cuda.bindings import driver

    err, *rest = result
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"CUDA driver error {err}")
    return tuple(rest)


def child(example: str, kernel: str) -> dict:
    """Run in the fresh process: the cold path, timed piece by piece (seconds)."""
    times = {}
    t0 = time.perf_counter()
    from cuda.bindings import driver

    _ok(driver.cuInit(0))
    (dev,) = _ok(driver.cuDeviceGet(0))
    (ctx,) = _ok(driver.cuDevicePrimaryCtxRetain(dev))
    _ok(driver.cuCtxSetCurrent(ctx))
    times["cuinit_context_s"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    import torch  # not counted: the benchmark's own tensors

    m = n = k = 1024
    nt = kernel.endswith("_nt")
    a = torch.randn((k, m) if nt else (m, k), device="cuda")
    b = torch.randn((k, n) if nt else (n, k), device="cuda")
    a, b = (a.t(), b.t()) if nt else (a, b)
    c = torch.empty((n, m), device="cuda").t()
    torch.cuda.synchronize()
    times["torch_import_and_tensors_s"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    import cutec

    t1 = time.perf_counter()
    kern = cutec.jit(str(ROOT / "examples" / f"{example}.cute"), kernel=kernel)
    t2 = time.perf_counter()
    kern(a, b, c, 1.0, 0.0)
    torch.cuda.synchronize()
    t3 = time.perf_counter()
    times.update(import_cutec_s=t1 - t0, jit_s=t2 - t1, first_call_s=t3 - t2, total_s=t3 - t0)
    err = (c.double() - a.double() @ b.double().t()).norm() / (a.double() @ b.double().t()).norm()
    times["rel_err"] = err.item()
    return times


def _run_child(example: str, kernel: str, cache: str) -> dict:
    env = dict(os.environ, CUTEC_CACHE_DIR=cache)
    # Bytecode is written (by the warm-up process) and read: an installed cutec and lark
    # have theirs. (The GPU machine sets PYTHONDONTWRITEBYTECODE, which would make every
    # process compile cutec's and lark's sources again: about 0.5 s.)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    cmd = [sys.executable, str(HERE / "gemm_host.py"), "child", example, kernel]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"child process failed:\n{proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def cold_compile(example: str, kernel: str, log=print) -> dict:
    """Fresh processes: one to warm Python's bytecode and build the C launcher (as an
    installed cutec has them: the launcher lives in the user's cutec cache, not the
    kernel cache; its numbers are not kept), one on a new empty kernel cache folder,
    one more on that folder."""
    out: dict = {"example": example, "kernel": kernel}
    with tempfile.TemporaryDirectory(prefix="cutec-cache-") as tmp:
        _run_child(example, kernel, str(Path(tmp) / "warm-up"))
        cache = str(Path(tmp) / "cache")
        for run in ("cold", "warm_cache"):
            out[run] = _run_child(example, kernel, cache)
            log(f"  {run}: " + ", ".join(f"{key} {v:.3g}" for key, v in out[run].items()))
        out["cache_files"] = sum(len(files) for _, _, files in os.walk(cache))
    return out


def _per_call_us(fn, calls: int) -> float:
    import torch

    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    elapsed = time.perf_counter() - start
    torch.cuda.synchronize()
    return 1e6 * elapsed / calls


def launch_overhead(spec, calls: int = 200, rounds: int = 101, size: int = 64) -> dict:
    """Host µs per call, median of `rounds` alternating rounds of `calls` calls each.

    A round is short enough (200 launches) that the GPU's launch queue never fills:
    with long rounds the host waits for the GPU to drain the queue, both paths time
    the GPU's pace, and the ratio understates the host cost (2,000-call rounds gave
    1.35x where 200-call rounds give 1.6-1.8x on the same kind of machine)."""
    import ctypes

    import numpy as np
    import torch
    from cuda.bindings import driver
    from gemm_impls import jit_kernel, raw_launch_args

    nt = spec.layout == "NT"
    a = torch.randn((size, size), device="cuda")
    b = torch.randn((size, size), device="cuda")
    a, b = (a.t(), b.t()) if nt else (a, b)
    c = torch.empty((size, size), device="cuda").t()
    kern = jit_kernel(spec.example, spec.kernel, spec.defines)

    def cutec_call() -> None:
        kern(a, b, c, 1.0, 0.0)

    raw = raw_launch_args(spec, kern.ptx, a, b, c)
    (module,) = _ok(driver.cuModuleLoadData(kern.ptx.encode() + b"\0"))
    (func,) = _ok(driver.cuModuleGetFunction(module, raw.name.encode()))
    kinds = {"u64": ctypes.c_uint64, "s64": ctypes.c_int64, "f32": ctypes.c_float}
    holders = [kinds[t](v) for t, v in raw.params]  # docs/abi.md: one host copy per argument
    packed = np.array([ctypes.addressof(h) for h in holders], dtype=np.uint64)
    stream = torch.cuda.current_stream().cuda_stream
    grid = ((size + 127) // 128, (size + 127) // 128, 1)  # the sgemm examples' 128x128 tiles

    address = packed.ctypes.data

    def raw_call() -> None:
        # The leanest correct raw launch: CUresult is an int, CUDA_SUCCESS is 0.
        err = driver.cuLaunchKernel(func, *grid, raw.threads, 1, 1, 0, stream, address, 0)[0]
        if err:
            raise RuntimeError(f"cuLaunchKernel: {err}")

    ref = a.double() @ b.double().t()
    for fn in (cutec_call, raw_call):  # both must compute the product before being timed
        c.fill_(float("nan"))
        fn()
        torch.cuda.synchronize()
        err = ((c.double() - ref).norm() / ref.norm()).item()
        if not err < 1e-5:
            raise RuntimeError(f"{fn.__name__} computed a wrong product (rel err {err})")
    results: dict[str, list[float]] = {"cutec_us": [], "raw_us": []}
    for _ in range(rounds):
        results["cutec_us"].append(_per_call_us(cutec_call, calls))
        results["raw_us"].append(_per_call_us(raw_call, calls))
    _ok(driver.cuModuleUnload(module))
    out = {key: statistics.median(v) for key, v in results.items()}
    out["ratio"] = out["cutec_us"] / out["raw_us"]
    out.update(kernel=spec.label, problem=f"{size}³", calls=calls, rounds=rounds)
    return out


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "child":
        print(json.dumps(child(sys.argv[2], sys.argv[3])))
    else:
        sys.exit(__doc__)
