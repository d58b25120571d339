"""sgemm_2 on the CPU backend, compilation included (issue 12: < 2 s at 256^3 on 2 cores).

    PYTHONPATH=. python benchmarks/cpu_sgemm.py [--size 256] [--kernel sgemm_nt]

Each run starts a fresh process-level state: an empty disk cache (a temporary
CUTEC_CACHE_DIR) and a new `cutec.jit` kernel, so the first call lowers the
kernel, generates and compiles its warp function with llvmlite, and runs the
grid. The figures: that first call (everything), a second call (the run alone),
the phases of the first (lowering to thread IR, LLVM text, llvmlite compile)
measured apart, and the error against float64 numpy (normwise relative).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

EXAMPLE = Path(__file__).parents[1] / "examples" / "sgemm_2.cute"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--kernel", default="sgemm_nt", choices=["sgemm_nt", "sgemm_tn"])
    opts = parser.parse_args()
    os.environ["CUTEC_CACHE_DIR"] = tempfile.mkdtemp(prefix="cutec-bench-")

    import cutec.runtime as rt
    from cutec.cpu import native
    from cutec.cpu.codegen import generate
    from cutec.driver import Options, Source, Stage, compile
    from cutec.ir.dialects.builtin import KernelOp

    n = opts.size
    rng = np.random.default_rng(0)
    nt = opts.kernel == "sgemm_nt"
    # NT: A (M, K) and B (N, K) m- and n-major; TN: k-major. Column-major numpy arrays.
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    a_mk = np.asfortranarray(a) if nt else np.ascontiguousarray(a)
    b_nk = np.asfortranarray(b) if nt else np.ascontiguousarray(b)
    c = np.full((n, n), np.nan, np.float32, order="F")

    start = time.perf_counter()
    k = rt.jit(EXAMPLE, kernel=opts.kernel, device="cpu")
    k(a_mk, b_nk, c, 1.0, 0.0)
    first = time.perf_counter() - start
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    error = np.linalg.norm(c - ref) / np.linalg.norm(ref)
    start = time.perf_counter()
    k(a_mk, b_nk, c, 1.0, 0.0)
    second = time.perf_counter() - start

    t0 = time.perf_counter()
    module = compile(Source.from_file(EXAMPLE), Stage.THREAD, Options(kernel=opts.kernel)).module
    (kernel,) = [op for op in module.walk_type(KernelOp) if op.sym_name == opts.kernel]
    t1 = time.perf_counter()
    generate(kernel)
    t2 = time.perf_counter()
    native.compile_kernel(kernel)
    t3 = time.perf_counter()
    print(f"{opts.kernel} {n}x{n}x{n} on the CPU backend ({k.cpu_backend})")
    print(f"  first call, empty cache: {first:.2f} s   second call: {second * 1e3:.1f} ms")
    print(f"  phases: lower {t1 - t0:.2f} s, LLVM text {t2 - t1:.2f} s, "
          f"llvmlite compile {t3 - t2:.2f} s")  # fmt: skip
    print(f"  normwise relative error vs float64: {error:.1e}")


if __name__ == "__main__":
    main()
