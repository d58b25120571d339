"""``cutec run FILE``: launch a kernel once on random inputs and time it.

    cutec run examples/sgemm_2.cute --kernel sgemm_nt --shape A=4096,4096 \\
        --shape B=4096,4096 --set alpha=1 --set beta=0 --repeat 20

Every tensor gets random data (never zeros: normal floats, small non-zero
integers), laid out as its declaration says: static strides as written, a
run-time stride compact after the modes of smaller stride (``(1, ldA)`` gives
``ldA = M``). Extents come from ``--shape NAME=E0,E1,...`` (flattened modes) or
from names already bound (``K`` of A binds K of B); scalars and run-time names
from ``--set NAME=VALUE`` (floats default to 1). It prints a checksum of each
tensor after the launch (sum and sum of absolute values, in float64) and the
median time of ``--repeat`` launches measured with CUDA events (``--device
cpu`` runs once on the CPU backend, untimed, with its checks: a failed one is
reported with the op's location, the thread and the block, exit code 1;
``--no-bounds-check`` and ``--no-shared-checks`` turn them off for speed).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from typing import Any

import numpy as np

from cutec.commands.compile import _defines
from cutec.cpu.reference_memory import AccessError, InterpreterError
from cutec.diagnostics import CompileError
from cutec.dtypes import DTYPES, numpy_dtype
from cutec.ir.signature import ScalarParam, TensorParam
from cutec.layout.symbolic import parse_expr
from cutec.runtime import cuda
from cutec.runtime.arrays import DeviceArray
from cutec.runtime.errors import ArgumentError
from cutec.runtime.jit import jit


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("run", help="launch a kernel on random inputs and time it",
                              description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("file", help="a .cute file")
    p.add_argument("--kernel", help="the kernel to run (when the file has several)")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME=VALUE",
                   help="set a compile-time parameter")  # fmt: skip
    p.add_argument("--shape", action="append", default=[], metavar="T=E0,E1,...",
                   help="the extents of tensor T (its flattened modes)")  # fmt: skip
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="a scalar argument or a run-time extent/stride")  # fmt: skip
    p.add_argument("--repeat", type=int, default=10, help="timed launches (default 10)")
    p.add_argument("--device", default="0", help="a GPU ordinal, or cpu")
    p.add_argument("--arch", help="the target (default: the GPU's)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--no-bounds-check",
        action="store_true",
        help="--device cpu: do not check accesses against their buffers' bounds",
    )
    p.add_argument("--no-shared-checks", action="store_true",
                   help="--device cpu: do not check shared memory for races, uninitialised "
                        "loads and cp.async destinations read before their wait")  # fmt: skip
    p.set_defaults(run=run)


def _pairs(items: list[str], flag: str) -> dict[str, str]:
    out = {}
    for item in items:
        name, eq, value = item.partition("=")
        if not eq or not name.strip().isidentifier():
            raise CompileError(f"{flag} {item}: expected NAME=VALUE")
        out[name.strip()] = value.strip()
    return out


def layouts(params: list[Any], shapes: dict[str, list[int]], values: dict[str, int]) -> dict:
    """(shape, strides) per tensor parameter, binding run-time names into `values`."""
    out = {}
    for p in params:
        if not isinstance(p, TensorParam) or p.shape is None:
            continue
        flat = p.flat
        given = shapes.get(p.name)
        if given is not None and len(given) != len(flat):
            raise CompileError(f"--shape {p.name}: {len(flat)} extents expected, got {len(given)}")
        extents = []
        for i, (e, _) in enumerate(flat):
            if given is not None:
                extent = given[i]
            elif isinstance(e, int):
                extent = e
            elif e in values:
                extent = values[e]
            else:
                raise CompileError(f"--shape {p.name}=...: the extent {e} is not known yet")
            if isinstance(e, str) and e.isidentifier():
                values.setdefault(e, extent)
            extents.append(extent)
        # Static strides first (in size order), then the others compact after them.
        strides: list[int | None] = [None] * len(flat)
        step = 1
        order = sorted(range(len(flat)), key=lambda i: (not isinstance(flat[i][1], int), i))
        for i in order:
            s = flat[i][1]
            if isinstance(s, int):
                stride = s
            elif s in values:
                stride = values[s]
            elif not s.isidentifier():
                # An expression of run-time names (a default compact stride).
                stride = parse_expr(s, values)
                if not isinstance(stride, int):
                    raise CompileError(f"--shape {p.name}: the stride {s} is not known yet")
            else:
                stride = values[s] = step
            strides[i] = stride
            step = max(step, stride * max(extents[i], 1))
        out[p.name] = (tuple(extents), tuple(int(x) for x in strides))  # type: ignore[arg-type]
    return out


def _random(dtype: str, n: int, rng: np.random.Generator) -> np.ndarray:
    row = DTYPES[dtype]
    np_dtype = numpy_dtype(row)
    if row.is_float:
        return rng.standard_normal(n).astype(np_dtype)
    values = (
        rng.integers(1, 8, n) * rng.choice([-1, 1], n) if row.is_signed else rng.integers(1, 8, n)
    )
    return values.astype(np_dtype)


def _number(text: str, kind: type, what: str) -> Any:
    """`text` as an int or a float; a CompileError (exit 1) naming the flag if it is not."""
    try:
        return kind(text)
    except ValueError:
        noun = "an integer" if kind is int else "a number"
        raise CompileError(f"{what}: expected {noun}, got '{text}'") from None


def run(args: argparse.Namespace) -> int:
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
