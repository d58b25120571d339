"""Compiling and launching the random view chains of view_chain_gen.py on the CPU
backend, bounds checks on, and comparing C with what the oracle says.

A kernel is compiled once and launched at many random run-time shapes (that is where
the residues come from): about 200 cases a second on this machine at 50 launches a
kernel. `python -m tests.passes.view_chain_run -n 100000` is the long run (unseeded
unless --seed): it prints the counts as it goes and every failing kernel at the end;
tests/passes/test_view_chains.py runs a fixed set.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cutec.layout.errors import LayoutWarning
from tests.passes.view_chain_gen import R, ViewKernel, random_kernel, value_of

# --------------------------------------------------------------------------- launches


@dataclass(frozen=True)
class Launch:
    """One run-time shape of a kernel: extents, flat roots' strides and buffer slack,
    and axpby's scalars."""

    extents: dict[str, int]
    strides: tuple[tuple[int, ...], tuple[int, ...]]  # flat roots: A's and C's, by mode
    slack: tuple[int, int]
    alpha: float
    beta: float

    def describe(self) -> str:
        out = ", ".join(f"{k}={v}" for k, v in self.extents.items())
        if any(self.strides):
            out += f"; strides A {self.strides[0]}, C {self.strides[1]}"
        return out


def random_launch(k: ViewKernel, rng: np.random.Generator) -> Launch:
    """Extents that satisfy the kernel's facts: multiples of the tile that cuts them,
    smaller than a tile, or anything up to four tiles and more (multiples of 16 too
    when the kernel specialises, so that both of its variants run); for a flat root,
    strides in its mode orders with random padding."""
    divisors = {e: 1 for e in k.root.dynamic()}
    for e, d in k.assumes:
        divisors[e] = math.lcm(divisors[e], d)
    while True:
        extents = {}
        for e, d in divisors.items():
            t = dict(k.tiles).get(e, 2)
            r = rng.random()
            if k.specialize and r < 0.15:
                n = math.lcm(16, d) * int(rng.integers(1, 3))
            elif r < 0.4:
                n = t * int(rng.integers(1, 4))
            elif r < 0.55:
                n = int(rng.integers(1, t + 1))
            else:
                n = int(rng.integers(1, 4 * t + 2))
            extents[e] = -(-n // d) * d
        size = math.prod(value_of(e, extents) for e in k.root.extents)
        if size <= 1 << 14:
            break
    strides: list[tuple[int, ...]] = [(), ()]
    if k.root.kind == "flat":
        for which in (0, 1):
            s = 1 if k.root.unit[which] else int(rng.choice([1, 2, 3]))
            st = [0] * k.root.rank
            for i in k.root.orders[which]:
                st[i] = s
                s = s * value_of(k.root.extents[i], extents) + int(rng.choice([0, 0, 1, 3]))
            strides[which] = tuple(st)
    alpha = float(rng.choice([1.0, 2.0, -0.5]))
    beta = float(rng.choice([0.0, 0.0, 1.0, 0.5]))
    slack = (int(rng.integers(0, 3)), int(rng.integers(0, 3)))
    return Launch(extents, (strides[0], strides[1]), slack, alpha, beta)


@dataclass
class Outcome:
    """One case: "ok", "refused" (a located CompileError) or a failure: "wrong" (C or A
    not as the oracle says), "runtime" (a check of the CPU backend fired, or the launch
    raised), "ice" (an internal compiler error), "unlocated" (a CompileError not located
    in the kernel); `detail` has the message, the kernel and the launch."""

    kind: str
    detail: str = ""

    @property
    def failed(self) -> bool:
        return self.kind not in ("ok", "refused")


@dataclass
class _Buffers:
    """A launch's arrays: what the kernel gets, the flat memory behind them, and the
    element strides of each root mode (the view's order)."""

    args: dict[str, Any]
    memory: tuple[np.ndarray, np.ndarray]
    strides: tuple[tuple[int, ...], tuple[int, ...]]


def _buffers(k: ViewKernel, launch: Launch, axpby: bool, rng: np.random.Generator) -> _Buffers:
    """A's memory holds distinct integers; C's NaN, or distinct negative integers when
    axpby reads it (beta != 0)."""
    root = k.root
    shape = tuple(value_of(e, launch.extents) for e in root.extents)
    args: dict[str, Any] = {}
    memory, strides = [], []
    for which, x in enumerate("AC"):
        if root.kind == "flat":
            st = launch.strides[which]
            n = 1 + sum((e - 1) * s for e, s in zip(shape, st, strict=True)) + launch.slack[which]
        else:
            n = math.prod(shape)
        values = x == "A" or (axpby and launch.beta != 0)
        mem = _fill(n, values, -1.0 if x == "C" else 1.0, rng)
        if root.kind == "flat":
            args[x] = mem
            for i, name in enumerate(root.stride_text(x, i) for i in range(root.rank)):
                if name != "1":
                    args[name] = st[i]
        else:
            col = root.orders[which][0] == 0
            arr = mem.reshape(shape, order="F" if col else "C")
            assert np.shares_memory(arr, mem)
            st = tuple(s // 4 for s in arr.strides)
            args[x] = arr
        memory.append(mem)
        strides.append(tuple(st[p] for p in root.perm))
    if root.kind == "flat":
        args.update({e: launch.extents[e] for e in root.dynamic()})
    if axpby:
        args["alpha"], args["beta"] = launch.alpha, launch.beta
    return _Buffers(args, (memory[0], memory[1]), (strides[0], strides[1]))


def _fill(n: int, values: bool, sign: float, rng: np.random.Generator) -> np.ndarray:
    """n distinct exact integers (of `sign`), or NaN."""
    if not values:
        return np.full(n, np.nan, np.float32)
    return (sign * (rng.permutation(n) + 1)).astype(np.float32)


def covered(k: ViewKernel, launch: Launch) -> tuple[np.ndarray, bool]:
    """The in-bounds root coordinates the chain covers (a column each), and whether one
    is covered twice (then axpby with beta != 0 has no one answer)."""
    codes = k.coordinates(launch.extents)
    ext = np.array([value_of(e, launch.extents) for e in k.root.view_extents()])
    coords = np.stack([(codes // R**j) % R for j in range(len(ext))])
    inside = codes[np.all(coords < ext[:, None], axis=0)]
    unique = np.unique(inside)
    return np.stack([(unique // R**j) % R for j in range(len(ext))]), len(unique) < len(inside)


def expected(launch: Launch, buffers: _Buffers, pos: np.ndarray, axpby: bool) -> np.ndarray:
    """C's memory after the kernel: its elements at the coordinates `pos` written
    (alpha * A + beta * C in f32, exact on these integers), nothing else."""
    a_off = (pos * np.array(buffers.strides[0])[:, None]).sum(axis=0)
    c_off = (pos * np.array(buffers.strides[1])[:, None]).sum(axis=0)
    a, c = buffers.memory
    out = c.copy()
    out[c_off] = a[a_off]
    if axpby:
        alpha, beta = np.float32(launch.alpha), np.float32(launch.beta)
        out[c_off] = alpha * a[a_off] + (beta * c[c_off] if beta != 0 else 0)
    return out


# --------------------------------------------------------------------------- running


def run_cases(k: ViewKernel, launches: list[Launch], rng: np.random.Generator,
              manual: bool = False) -> list[Outcome]:  # fmt: skip
    """Compile `k` once (the CPU backend, bounds checks on) and launch it at each shape.
    A compile error ends the kernel's cases: the rest are counted as the same outcome.
    `manual`: the kernel guarded by hand (ViewKernel.source), a check of the oracle."""
    import cutec.runtime as rt  # here: drawing kernels needs only the algebra

    source = k.source(manual)
    kernel = rt.jit(source, device="cpu", specialize=k.specialize)
    outcomes: list[Outcome] = []
    try:
        for launch in launches:
            outcome = _run_one(k, kernel, source, launch, rng)
            outcomes.append(outcome)
            if outcome.kind in ("refused", "unlocated", "ice"):
                outcomes += [outcome] * (len(launches) - len(outcomes))
                break
    finally:  # a long run keeps no kernel alive
        kernels = sys.modules["cutec.runtime.jit"]._KERNELS
        for key in [key for key, v in kernels.items() if v is kernel]:
            del kernels[key]
    return outcomes


def _run_one(k: ViewKernel, kernel: Any, source: str, launch: Launch,
             rng: np.random.Generator) -> Outcome:  # fmt: skip
    from cutec.diagnostics import CompileError, InternalCompilerError

    pos, twice = covered(k, launch)
    axpby = "alpha: f32" in source
    if (twice and launch.beta != 0) or not axpby:
        launch = Launch(launch.extents, launch.strides, launch.slack, launch.alpha, 0.0)
    buffers = _buffers(k, launch, axpby, rng)
    a_before = buffers.memory[0].copy()
    want = expected(launch, buffers, pos, axpby)
    where = f"{source}launch: {launch.describe()}"
    if axpby:
        where += f", alpha={launch.alpha}, beta={launch.beta}"
    try:
        kernel(**buffers.args)
    except CompileError as e:
        n = source.count("\n")
        located = all(
            d.location is not None and d.location.file == "<jit>" and 1 <= d.location.line <= n
            for d in e.diagnostics
        )
        return Outcome("refused" if located else "unlocated", f"{e}\n{where}")
    except InternalCompilerError as e:
        return Outcome("ice", f"{e}\n{where}")
    except Exception as e:  # a check of the CPU backend (AccessError), or anything else
        return Outcome("runtime", f"{type(e).__name__}: {e}\n{where}")
    if not np.array_equal(buffers.memory[0], a_before, equal_nan=True):
        return Outcome("wrong", f"the kernel wrote A\n{where}")
    got = buffers.memory[1]
    if not np.array_equal(got, want, equal_nan=True):
        return Outcome("wrong", f"{_mismatch(got, want)}\n{where}")
    return Outcome("ok")


def _mismatch(got: np.ndarray, want: np.ndarray) -> str:
    bad = np.flatnonzero(~((got == want) | (np.isnan(got) & np.isnan(want))))
    shown = ", ".join(f"[{i}] {got[i]} (want {want[i]})" for i in bad[:6])
    return f"C differs at {len(bad)} of {len(got)} elements of its memory: {shown}"


@dataclass
class Report:
    """Counts of outcomes by kind, and the first failure of each failing kernel."""

    counts: Counter = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    refusals: Counter = field(default_factory=Counter)  # messages, without the location
    failing: Counter = field(default_factory=Counter)  # failing kernels by their features
    # Kernels whose compile warned that a composition is not the function composition
    # (a LayoutWarning a pass lets out as a Python warning), by the warning.
    layout_warnings: Counter = field(default_factory=Counter)
    kernels: int = 0


def run(seed: int, kernels: range, launches: int, manual: bool = False,
        report: Report | None = None) -> Report:  # fmt: skip
    """Kernels `kernels` of `seed` (kernel i draws from default_rng([seed, i])), each
    launched at `launches` random shapes."""
    report = Report() if report is None else report
    for i in kernels:
        rng = np.random.default_rng([seed, i])
        k = random_kernel(rng)
        shapes = [random_launch(k, rng) for _ in range(launches)]
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always", LayoutWarning)
            outcomes = run_cases(k, shapes, rng, manual)
        report.layout_warnings.update(
            {str(w.message) for w in warned if w.category is LayoutWarning}
        )
        report.kernels += 1
        report.counts.update(o.kind for o in outcomes)
        for o in outcomes[:1]:
            if o.kind == "refused":
                report.refusals[o.detail.split(": error: ", 1)[-1].split("\n")[0]] += 1
        failed = [(j, o) for j, o in enumerate(outcomes) if o.failed]
        if failed:
            report.failing[" ".join(k.features()) or "-"] += 1
        for kind in sorted({o.kind for _, o in failed}):  # the first of each kind
            j, o = next((j, o) for j, o in failed if o.kind == kind)
            report.failures.append(
                f"seed {seed}, kernel {i} ({' '.join(k.features())}): {len(failed)} of "
                f"{len(outcomes)} launches failed; launch {j}: {o.kind}\n{o.detail}"
            )
    return report


def main(argv: list[str] | None = None) -> int:
    """The long run: `python -m tests.passes.view_chain_run -n 100000` (unseeded unless
    --seed): prints the counts and throughput as it goes, then the refusals, the failing
    kernels by what they do (ViewKernel.features) and the first failures."""
    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("-n", type=int, default=100_000, help="cases (launches) in all")
    ap.add_argument("--per-kernel", type=int, default=50, help="launches per compiled kernel")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--first", type=int, default=0, help="the first kernel index")
    ap.add_argument("--manual", action="store_true", help="the kernels guarded by hand")
    ap.add_argument("--failures", help="write every failure's report to this file")
    args = ap.parse_args(argv)
    seed = int(np.random.SeedSequence().entropy % 2**63) if args.seed is None else args.seed
    kernels = range(args.first, args.first + -(-args.n // args.per_kernel))
    print(f"seed {seed}: {len(kernels)} kernels x {args.per_kernel} launches", flush=True)
    report = Report()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="cutec-views-") as cache:
        os.environ.setdefault("CUTEC_CACHE_DIR", cache)
        for first in kernels[::20]:
            run(seed, range(first, min(first + 20, kernels.stop)), args.per_kernel,
                args.manual, report)  # fmt: skip
            elapsed = time.perf_counter() - start
            done = sum(report.counts.values())
            print(f"{report.kernels} kernels, {done} cases, {elapsed:.0f} s "
                  f"({done / elapsed:.1f} cases/s): {dict(report.counts)}", flush=True)  # fmt: skip
    for message, n in report.refusals.most_common():
        print(f"refused ({n} kernels): {message}")
    for message, n in report.layout_warnings.most_common():
        print(f"compiled with a LayoutWarning ({n} kernels): {message}")
    for features, n in report.failing.most_common():
        print(f"failing kernels ({features}): {n}")
    if args.failures:
        with open(args.failures, "w") as f:
            f.write(("\n" + "=" * 78 + "\n").join(report.failures))
    for failure in report.failures[:5]:
        print("=" * 78 + "\n" + failure)
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
