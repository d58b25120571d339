"""The SIMT examples on the GPU against cuBLAS and torch, as ratios measured in one run.

    python benchmarks/gpu_simt.py            # on a machine with an NVIDIA GPU and torch

Each kernel is compiled by cutec for the GPU present (sm_90a on a Hopper),
loaded with the CUDA driver (cuda.bindings) and launched on torch's current
stream on torch tensors filled with random numbers; results are checked
against float64 first, then timed with CUDA events after a warm-up (median of
`--repeat` launches). Ratios are cutec time / reference time in the same run:
cuBLAS SGEMM (torch.matmul, TF32 off) for the GEMMs, a device-to-device copy
(torch's ``copy_``) for the copy kernels. (The runtime issue replaces this
launcher with cutec.jit and extends the benchmark to Triton and CuTe's own
kernels: benchmarks/gemm.py, which also covers these GEMM rows; the copy rows
are measured only here.)
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _ok(result: tuple) -> tuple:
    from cuda.bindings import driver

    err, *rest = result
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"CUDA driver error {err}")
    return tuple(rest)


class Kernel:
    """One compiled kernel, launched with arguments packed as docs/abi.md says."""

    def __init__(self, example: str, name: str, target: str) -> None:
        from cuda.bindings import driver

        from cutec.driver import Options, Source, Stage, compile
        from cutec.ir.dialects.builtin import KernelOp

        result = compile(
            Source.from_file(ROOT / "examples" / f"{example}.cute"),
            Stage.PTX,
            Options(kernel=name, target=target),
        )
        (self.op,) = result.module.walk_type(KernelOp)
        (self.module,) = _ok(driver.cuModuleLoadData(result.ptx.encode() + b"\0"))
        (self.func,) = _ok(driver.cuModuleGetFunction(self.module, name.encode()))
        self.threads = self.op.attributes["reqntid"].values[0]

    def launcher(self, grid: tuple[int, int], args: dict):
        """A function that launches the kernel on torch's current stream."""
        import torch
        from cuda.bindings import driver

        from cutec.ir.dialects.gpu import PointerType
        from cutec.ir.types import IndexType

        holders = []
        for arg in self.op.args:
            value = args[arg.name_hint]
            if isinstance(arg.type, PointerType):
                holders.append(np.array([value.data_ptr()], dtype=np.uint64))
            elif isinstance(arg.type, IndexType):
                holders.append(np.array([value], dtype=np.int64))
            else:
                holders.append(np.array([value], dtype=np.float32))
        params = np.array([h.ctypes.data for h in holders], dtype=np.uint64)

        def launch() -> None:
            stream = torch.cuda.current_stream().cuda_stream
            _ok(
                driver.cuLaunchKernel(
                    self.func, *grid, 1, self.threads, 1, 1, 0, stream, params.ctypes.data, 0
                )
            )

        launch.keep = (holders, params)  # type: ignore[attr-defined]
        return launch


def _share_torch_context() -> None:
    """Make the device's primary context, which torch uses, current for the driver API."""
    import torch
    from cuda.bindings import driver

    torch.zeros(1, device="cuda")  # torch creates (retains) the primary context
    _ok(driver.cuInit(0))
    (dev,) = _ok(driver.cuDeviceGet(torch.cuda.current_device()))
    (ctx,) = _ok(driver.cuDevicePrimaryCtxRetain(dev))
    _ok(driver.cuCtxSetCurrent(ctx))


def _time_ms(fn, repeat: int) -> float:
    import torch

    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def bench_sgemm(target: str, repeat: int, size: int) -> list[tuple]:
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    rows = []
    m = n = k = size
    kernels = (
        ("sgemm_1", "sgemm_nt"),
        ("sgemm_1", "sgemm_tn"),
        ("sgemm_2", "sgemm_nt"),
        ("sgemm_2", "sgemm_tn"),
    )
    for example, name in kernels:
        kern = Kernel(example, name, target)
        nt = name.endswith("nt")
        gen = torch.Generator(device="cuda").manual_seed(0)
        a = torch.randn((k, m) if nt else (m, k), device="cuda", generator=gen)
        b = torch.randn((k, n) if nt else (n, k), device="cuda", generator=gen)
        c = torch.zeros((n, m), device="cuda")
        args = {
            "A": a, "M": m, "K": k, "ldA": m if nt else k,
            "B": b, "N": n, "ldB": n if nt else k,
            "C": c, "ldC": m, "alpha": 1.0, "beta": 0.0,
        }  # fmt: skip
        launch = kern.launcher(((m + 127) // 128, (n + 127) // 128), args)
        launch()
        torch.cuda.synchronize()
        am, bm = (a.T, b.T) if nt else (a, b)
        ref = (am.double() @ bm.double().T).T  # C is (M,N) column-major: stored as (N,M)
        err = (c.double() - ref).abs().max().item()
        assert err < 1e-3 * np.sqrt(k), f"{example} {name}: max error {err}"
        ours = _time_ms(launch, repeat)
        out = torch.empty((n, m), device="cuda")
        cublas = _time_ms(lambda am=am, bm=bm, out=out: torch.matmul(bm, am.T, out=out), repeat)
        tflops = 2 * m * n * k / ours / 1e9
        rows.append((f"{example} {name}", f"{m}x{n}x{k}", ours, cublas, tflops))
    return rows


def bench_copy(target: str, repeat: int) -> list[tuple]:
    import torch

    rows = []
    m, n = 16384, 8192
    for name in ("copy_kernel", "copy_kernel_vectorized", "copy_if_kernel_vectorized"):
        kern = Kernel("tiled_copy", name, target)
        s = torch.randn((n, m), device="cuda")
        d = torch.empty_like(s)
        launch = kern.launcher(((m + 127) // 128, (n + 63) // 64), {"S": s, "M": m, "N": n, "D": d})
        launch()
        torch.cuda.synchronize()
        assert torch.equal(s, d), name
        ours = _time_ms(launch, repeat)
        ref = _time_ms(lambda s=s, d=d: d.copy_(s), repeat)
        gbps = 2 * s.numel() * 4 / ours / 1e6
        rows.append((f"tiled_copy {name}", f"{m}x{n}", ours, ref, gbps))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--size", type=int, default=4096)
    args = parser.parse_args()
    import torch

    major, minor = torch.cuda.get_device_capability()
    target = "sm_90a" if (major, minor) == (9, 0) else "sm_80"
    print(f"{torch.cuda.get_device_name()} ({target}), median of {args.repeat} launches")
    _share_torch_context()
    gemm = bench_sgemm(target, args.repeat, args.size)
    copies = bench_copy(target, args.repeat)
    print(f"{'kernel':<36}{'size':>16}{'cutec ms':>10}{'ref ms':>9}{'ratio':>7}  rate")
    for label, size, ours, ref, rate in gemm:
        print(f"{label:<36}{size:>16}{ours:10.3f}{ref:9.3f}{ours / ref:7.2f}  {rate:.1f} TFLOP/s")
    for label, size, ours, ref, rate in copies:
        print(f"{label:<36}{size:>16}{ours:10.3f}{ref:9.3f}{ours / ref:7.2f}  {rate:.0f} GB/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
