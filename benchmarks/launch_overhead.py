"""Host cost of a launch: a cached `cutec.jit` call against a raw ``cuLaunchKernel``.

    PYTHONPATH=. python benchmarks/launch_overhead.py [--calls 20000]

Both launch the same loaded kernel (examples/tiled_copy.cute's copy_kernel on one
128x64 tile, so the GPU never holds the host back for long) on torch's current
stream. The raw launch packs its arguments once beforehand, as issue 11 defines
it, and checks the CUresult it gets; the cutec call checks and packs its torch
tensors every time (with the checks made per call: D, which the kernel writes, is
writable and shares no memory with S). A round is `--calls` back-to-back launches (200: few enough
that the GPU's launch queue never fills, so the host time is the launch path's
own, not the GPU's pace), timed with time.perf_counter and followed by a
synchronisation; raw and cutec rounds alternate, and each figure is the median
over `--rounds` rounds of host time per call.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
import torch

import cutec.runtime as rt
from cutec.runtime import cuda

EXAMPLE = Path(__file__).parents[1] / "examples" / "tiled_copy.cute"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=201)
    args = parser.parse_args()

    k = rt.jit(EXAMPLE, kernel="copy_kernel")
    s = torch.randn(64, 128, device="cuda").t()
    d = torch.empty_like(s)
    k(s, d)
    torch.cuda.synchronize()
    assert torch.equal(s, d)
    (variant,) = k._launcher.__variants__.values()
    fn = variant.fn
    cu = cuda.driver()
    stream = torch.cuda.current_stream().cuda_stream
    holders = [
        np.array([s.data_ptr()], np.uint64), np.array([128], np.int64),
        np.array([64], np.int64), np.array([d.data_ptr()], np.uint64),
    ]  # fmt: skip
    params = np.array([h.ctypes.data for h in holders], np.uint64)
    addr = params.ctypes.data

    def raw() -> None:
        err = cu.cuLaunchKernel(fn.handle, 1, 1, 1, 256, 1, 1, 0, stream, addr, 0)[0]
        if err:
            raise RuntimeError(f"cuLaunchKernel: {err}")

    def jitted() -> None:
        k(s, d)

    rounds: dict[str, list[float]] = {"raw cuLaunchKernel": [], "cutec call": []}
    for _ in range(args.rounds):
        for name, call in (("raw cuLaunchKernel", raw), ("cutec call", jitted)):
            torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(args.calls):
                call()
            rounds[name].append((time.perf_counter() - start) / args.calls * 1e6)
    torch.cuda.synchronize()
    results = {name: statistics.median(r) for name, r in rounds.items()}
    assert torch.equal(s, d)
    dev = cuda.device(0)
    print(f"{dev.name}, {args.rounds} rounds of {args.calls} calls, median host us per call")
    for name, us in results.items():
        print(f"| {name} | {us:.2f} us |")
    print(f"| ratio | {results['cutec call'] / results['raw cuLaunchKernel']:.2f} |")


if __name__ == "__main__":
    main()
