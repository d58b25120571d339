"""`cutec run`'s launch: random inputs, one checked launch, timed launches.

Kept apart from `cutec.commands.run_cmd` (the verb's parser) so that the command
line imports numpy and the runtime only when a kernel is run.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from cutec.commands.common import detect_lang, read_source
from cutec.commands.compile import _defines
from cutec.commands.run_args import layouts, number, pairs
from cutec.cpu.reference_memory import AccessError, InterpreterError
from cutec.diagnostics import CompileError
from cutec.dtypes import DTYPES, dtype, numpy_dtype
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
    except cuda.NoDriverError as e:  # the runtime's hint names the Python API's option
        hint = "cutec run --device cpu runs the kernel on the CPU without a GPU"
        print(f"error: {str(e).replace(cuda.NO_DRIVER_HINT, hint)}", file=sys.stderr)
        return 1
    except (ArgumentError, AccessError, InterpreterError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except MemoryError:  # what _check_memory lets through but the machine cannot give
        print("error: out of memory making the inputs: give smaller --shape", file=sys.stderr)
        return 1


def _check_source(path: str) -> None:
    """FILE must be a readable .cute file (its own mistakes are the compile's to report)."""
    text, _ = read_source(path)  # no such file, a directory, not UTF-8: one clean error
    if path.endswith(".cute"):
        return
    if detect_lang(text) == "mlir":
        raise CompileError(
            f"cutec run launches .cute kernels; '{path}' is textual IR, whose pointer "
            "arguments have no shapes to make inputs from (launch it with cutec.jit and grid=)"
        )
    raise CompileError(f"cutec run launches .cute kernels: name the file NAME.cute, not '{path}'")


# Integer --set values also bind run-time extents and strides.
_INTEGER = re.compile(r"-?[0-9]+")


def _run(args: argparse.Namespace) -> int:
    _check_source(args.file)
    device = "cpu" if args.device == "cpu" else number(args.device, int, "--device")
    k = jit(args.file, args.kernel, arch=args.arch, device=device,
            bounds_check=not args.no_bounds_check, check_shared=not args.no_shared_checks,
            **_defines(args.defines))  # fmt: skip
    sig = k.signature
    params = [p for p in sig.params if p.passed]  # (the runtime builds tensor maps itself)
    shapes = {
        n: [number(x, int, f"--shape {n}={v}") for x in v.split(",")]
        for n, v in pairs(args.shape, "--shape").items()
    }
    sets = pairs(args.set, "--set")
    values = _run_time_values(params, sets)
    laid = layouts(params, shapes, values)
    _check_memory(params, laid)
    rng = np.random.default_rng(args.seed)
    call_args, buffers, views = [], {}, {}
    for p in params:
        if isinstance(p, ScalarParam):
            call_args.append(_scalar(p, sets.get(p.name)))
            continue
        shape, strides = laid[p.name]
        flat = buffers[p.name] = _random(p.element, _span(shape, strides), rng)
        itemsize = flat.itemsize
        host = np.ndarray(shape, flat.dtype, flat, strides=tuple(s * itemsize for s in strides))
        views[p.name] = host
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
    for p, a in zip(params, call_args, strict=True):
        if isinstance(p, TensorParam):
            flat = buffers[p.name]
            if isinstance(a, DeviceArray):
                cuda.check(cuda.driver().cuMemcpyDtoH(flat.ctypes.data, a.ptr, flat.nbytes),
                           "copying an output back")  # fmt: skip
            v = views[p.name].astype(np.float64)  # the tensor's elements, not the gaps
            print(f"{p.name}: shape {laid[p.name][0]} strides {laid[p.name][1]}  "
                  f"sum {v.sum():.6e}  abs-sum {np.abs(v).sum():.6e}")  # fmt: skip
    times = _time(k, call_args, args.repeat, device)
    if times:
        print(f"{sig.kernel}: median {statistics.median(times) * 1e3:.3f} us over {len(times)} "
              f"launches (CUDA events)")  # fmt: skip
    return 0


def _scalar(p: ScalarParam, text: str | None) -> float | int:
    """The value of scalar `p` from its --set text (a float defaults to 1)."""
    if p.type in ("f32", "f64", "f16", "bf16"):
        return 1.0 if text is None else number(text, float, f"--set {p.name}")
    if text is None:
        raise CompileError(f"the scalar {p.name} ({p.type}) needs --set {p.name}=VALUE")
    return number(text, int, f"--set {p.name}")


def _run_time_values(params: Sequence[Any], sets: dict[str, str]) -> dict[str, int]:
    """The integers --set gives: run-time extents and strides of the tensors (which must be
    integers) and integer scalars; any other NAME is not the kernel's."""
    scalars = {p.name for p in params if isinstance(p, ScalarParam)}
    names = set()
    for p in params:
        if isinstance(p, TensorParam) and p.shape is not None:
            for pair in p.flat:
                names |= {x for part in pair if isinstance(part, str) for x in _NAME.findall(part)}
    values = {}
    for name, text in sets.items():
        if name not in scalars | names:
            raise CompileError(
                f"--set {name}: the kernel has no scalar, extent or stride {name} "
                f"(it has: {', '.join(sorted(scalars | names)) or 'none'})"
            )
        if _INTEGER.fullmatch(text):
            values[name] = int(text)
        elif name not in scalars:  # a scalar's text is read by its type (_scalar)
            raise CompileError(f"--set {name}: expected an integer, got '{text}'")
    return values


_NAME = re.compile(r"[A-Za-z_]\w*")


def _span(shape: tuple[int, ...], strides: tuple[int, ...]) -> int:
    """Elements from the base to the last element, inclusive: 1 + sum (extent - 1) * stride."""
    return 1 + sum((e - 1) * s for e, s in zip(shape, strides, strict=True))


def _check_memory(params: Sequence[Any], laid: dict) -> None:
    """The inputs must fit in half this machine's memory: a --shape of 65536x65536 is
    refused before numpy runs out of memory (or the machine starts swapping)."""
    need = sum(
        _span(*laid[p.name]) * dtype(p.element).bits // 8
        for p in params
        if isinstance(p, TensorParam) and p.name in laid
    )
    limit = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    if need > limit:
        sizes = ", ".join(f"{p.name} {laid[p.name][0]}" for p in params if p.name in laid)
        raise CompileError(
            f"the inputs ({sizes}) take {need / 2**30:.3g} GiB; cutec run allocates at most "
            f"{limit / 2**30:.3g} GiB (half this machine's memory): give smaller --shape"
        )


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
