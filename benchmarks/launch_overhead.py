"""Host cost of a launch: a cached `cutec.jit` call against a raw ``cuLaunchKernel``.

    PYTHONPATH=. python benchmarks/launch_overhead.py [--calls 200] [--rounds 201]

Two cases, each launching one loaded kernel both ways on torch's current stream:

* copy: examples/tiled_copy.cute's copy_kernel on one 128x64 tile, so the GPU never
  holds the host back for long;
* tensor map (on compute capability 9.0): tests/runtime/launch_ptx.py's tma_tile,
  which takes a TMA tensor map by value, on one 16x8 box; the cutec call finds the map
  in its cache (no driver call) and copies its 128 bytes into the parameter buffer.

The raw launch packs its arguments once beforehand (for the map case, a map encoded
once), as issue 11 defines it, and checks the CUresult it gets; the cutec call checks
and packs its torch tensors every time (with the checks made per call: D, which the
kernel writes, is writable and shares no memory with its input). A round is `--calls`
back-to-back launches (200: few enough that the GPU's launch queue never fills, so the
host time is the launch path's own, not the GPU's pace), timed with time.perf_counter
and followed by a synchronisation; raw and cutec rounds alternate, and each figure is
the median over `--rounds` rounds of host time per call.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import torch

import cutec.runtime as rt
from cutec.runtime import cuda, launcher
from cutec.runtime.jit import _stream_of
from cutec.runtime.tensor_map import TENSOR_MAPS

ROOT = Path(__file__).parents[1]
EXAMPLE = ROOT / "examples" / "tiled_copy.cute"

Case = tuple[Callable[[], None], Callable[[], None], Callable[[], None]]  # raw, cutec, check


def _raw_launch(handle: object, grid: tuple[int, int, int], block: int, params: int,
                stream: int) -> Callable[[], None]:  # fmt: skip
    cu = cuda.driver()

    def raw() -> None:
        err = cu.cuLaunchKernel(handle, *grid, block, 1, 1, 0, stream, params, 0)[0]
        if err:
            raise RuntimeError(f"cuLaunchKernel: {err}")

    return raw


def copy_case(stream: int, keep: list[object]) -> Case:
    k = rt.jit(EXAMPLE, kernel="copy_kernel")
    s = torch.randn(64, 128, device="cuda").t()
    d = torch.empty_like(s)
    k(s, d)
    (variant,) = k._launcher.__variants__.values()
    holders = [
        np.array([s.data_ptr()], np.uint64), np.array([128], np.int64),
        np.array([64], np.int64), np.array([d.data_ptr()], np.uint64),
    ]  # fmt: skip
    params = np.array([h.ctypes.data for h in holders], np.uint64)
    keep += [holders, params]
    raw = _raw_launch(variant.fn.handle, (1, 1, 1), 256, params.ctypes.data, stream)
    return raw, lambda: k(s, d), lambda: _equal(s, d)


def tensor_map_case(stream: int, keep: list[object]) -> Case:
    # The kernel is the GPU test's (no compile writes tensor maps yet).
    sys.path.insert(0, str(ROOT))
    from tests.runtime.launch_ptx import TMA_TILE, TMA_TILE_PTX

    signature, launch = TMA_TILE
    fn = cuda.load_function(cuda.device(0), TMA_TILE_PTX.encode(), signature.kernel, ptx=True)
    variant = launcher.Variant(fn, 0, fn.handle, int(fn.handle))
    launch_fn, _ = launcher.build_launcher(
        signature, launch.block, launch.grid, 32, frozenset(), lambda key, dev: variant, None,
        _stream_of,
    )  # fmt: skip
    kernel = SimpleNamespace(name=signature.kernel)
    call = launcher.fast_call(kernel, launch_fn) or (lambda *a: launch_fn(kernel, *a))
    a = torch.randn(8, 16, device="cuda").t()  # one 16 x 8 box, column-major
    d = torch.empty(128, device="cuda")
    call(a, d)
    tensor_map = TENSOR_MAPS.for_param(signature.kernel, signature.params[2], a.data_ptr(),
                                       {"M": 16, "N": 8, "ldA": 16})  # fmt: skip
    holders = [
        np.array([a.data_ptr()], np.uint64), np.array([16], np.int64), np.array([8], np.int64),
        np.array([16], np.int64), np.array([d.data_ptr()], np.uint64),
        np.array([128], np.int64),
    ]  # fmt: skip
    pointers = [h.ctypes.data for h in holders] + [tensor_map.address]
    params = np.array(pointers, np.uint64)
    keep += [holders, params, tensor_map]
    raw = _raw_launch(fn.handle, (1, 1, 1), 128, params.ctypes.data, stream)
    want = a.t().contiguous().flatten()  # the box as it lies in shared memory
    return raw, lambda: call(a, d), lambda: _equal(want, d)


def _equal(x: torch.Tensor, y: torch.Tensor) -> None:
    torch.cuda.synchronize()
    assert torch.equal(x, y)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=201)
    args = parser.parse_args()

    stream = torch.cuda.current_stream().cuda_stream
    keep: list[object] = []  # what the raw launches' parameter arrays point into
    cases = {"copy": copy_case(stream, keep)}
    if torch.cuda.get_device_capability() == (9, 0):
        cases["tensor map"] = tensor_map_case(stream, keep)
    dev = cuda.device(0)
    print(f"{dev.name}, {args.rounds} rounds of {args.calls} calls, median host us per call")
    print("| case | raw cuLaunchKernel | cutec call | ratio |")
    print("| --- | --- | --- | --- |")
    for name, (raw, jitted, check) in cases.items():
        check()
        rounds: dict[str, list[float]] = {"raw": [], "cutec": []}
        for _ in range(args.rounds):
            for which, call in (("raw", raw), ("cutec", jitted)):
                torch.cuda.synchronize()
                start = time.perf_counter()
                for _ in range(args.calls):
                    call()
                rounds[which].append((time.perf_counter() - start) / args.calls * 1e6)
        check()
        us = {which: statistics.median(r) for which, r in rounds.items()}
        print(f"| {name} | {us['raw']:.2f} us | {us['cutec']:.2f} us | "
              f"{us['cutec'] / us['raw']:.2f} |")  # fmt: skip


if __name__ == "__main__":
    main()
