"""`cutec run`'s launch: random inputs, one checked launch, timed launches.

Kept apart from `cutec.commands.run_cmd` (the verb's parser) so that the command
line imports numpy and the runtime only when a kernel is run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from typing import Any

import numpy as np

from cutec.commands.compile import _defines
from cutec.commands.run_cmd import _number, _pairs, layouts
from cutec.cpu.reference_memory import AccessError, InterpreterError
from cutec.diagnostics import CompileError
from cutec.dtypes import DTYPES, numpy_dtype
from cutec.ir.signature import ScalarParam, TensorParam
from cutec.runtime import cuda
from cutec.runtime.arrays import DeviceArray
from cutec.runtime.errors import ArgumentError
from cutec.runtime.jit import jit


def _random(dtype: str, n: int, rng: np.random.Generator) -> np.ndarray:
    row = DTYPES[dtype]
    np_dtype = numpy_dtype(row)
    if row.is_float:
        return rng.standard_normal(n).astype(np_dtype)
    values = (
        rng.integers(1, 8, n) * rng.choice([-1, 1], n) if row.is_signed else rng.integers(1, 8, n)
    )
    return values.astype(np_dtype)


def launch(args: argparse.Namespace) -> int:
    # A launch argument the kernel refuses, no GPU, or a check of the CPU backend that
    # fails (the kernel's bug, located) is the user's mistake (exit 1).
    try:
        return _run(args)
    except (ArgumentError, cuda.NoDriverError, AccessError, InterpreterError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace) -> int:
    device = "cpu" if args.device == "cpu" else _number(args.device, int, "--device")
    k = jit(args.file, args.kernel, arch=args.arch, device=device,
            bounds_check=not args.no_bounds_check, check_shared=not args.no_shared_checks,
            **_defines(args.defines))  # fmt: skip
    sig = k.signature
    shapes = {
        n: [_number(x, int, f"--shape {n}={v}") for x in v.split(",")]
        for n, v in _pairs(args.shape, "--shape").items()
    }
    sets = _pairs(args.set, "--set")
    values: dict[str, int] = {n: int(v) for n, v in sets.items() if v.lstrip("-").isdigit()}
    laid = layouts(list(sig.params), shapes, values)
    rng = np.random.default_rng(args.seed)
    call_args, buffers = [], {}
    for p in sig.params:
        if isinstance(p, ScalarParam):
            text = sets.get(p.name)
            if p.type in ("f32", "f64", "f16", "bf16"):
                value = 1.0 if text is None else _number(text, float, f"--set {p.name}")
                call_args.append(value)
            elif text is None:
                raise CompileError(f"the scalar {p.name} ({p.type}) needs --set {p.name}=VALUE")
            else:
                call_args.append(_number(text, int, f"--set {p.name}"))
            continue
        shape, strides = laid[p.name]
        span = (
            1 + sum((e - 1) * s for e, s in zip(shape, strides, strict=True)) if all(shape) else 0
        )
        flat = _random(p.element, max(span, 1), rng)
        buffers[p.name] = flat
        itemsize = flat.itemsize
        host = np.ndarray(shape, flat.dtype, flat, strides=tuple(s * itemsize for s in strides))
        if device == "cpu":
            call_args.append(host)
        else:
            arr = DeviceArray(shape, p.element, strides, device)
            cuda.check(cuda.driver().cuMemcpyHtoD(arr.ptr, flat.ctypes.data, flat.nbytes),
                       "copying an input to the GPU")  # fmt: skip
            call_args.append(arr)
    k(*call_args)  # the launch whose outputs the checksums show
    if device != "cpu":
        cuda.device(device).synchronize()
    for p, a in zip(sig.params, call_args, strict=True):
        if isinstance(p, TensorParam):
            flat = buffers[p.name]
            if isinstance(a, DeviceArray):
                cuda.check(cuda.driver().cuMemcpyDtoH(flat.ctypes.data, a.ptr, flat.nbytes),
                           "copying an output back")  # fmt: skip
            v = flat.astype(np.float64)
            print(f"{p.name}: shape {laid[p.name][0]} strides {laid[p.name][1]}  "
                  f"sum {v.sum():.6e}  abs-sum {np.abs(v).sum():.6e}")  # fmt: skip
    times = _time(k, call_args, args.repeat, device)
    if times:
        print(f"{sig.kernel}: median {statistics.median(times) * 1e3:.3f} us over {len(times)} "
              f"launches (CUDA events)")  # fmt: skip
    return 0


def _time(k: Any, call_args: list[Any], repeat: int, device: Any) -> list[float]:
    """`repeat` launches, each timed with CUDA events, in ms (none on the CPU)."""
    if device == "cpu":
        return []
    cu = cuda.driver()
    start = cuda.check(cu.cuEventCreate(0), "creating an event")
    stop = cuda.check(cu.cuEventCreate(0), "creating an event")
    times = []
    for _ in range(repeat):
        cuda.check(cu.cuEventRecord(start, 0), "recording an event")
        k(*call_args, stream=0)
        cuda.check(cu.cuEventRecord(stop, 0), "recording an event")
        cuda.check(cu.cuEventSynchronize(stop), "waiting for the kernel")
        times.append(float(cuda.check(cu.cuEventElapsedTime(start, stop), "reading the time")))
    return times
