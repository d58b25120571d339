"""cutec's GEMM examples against cuBLAS, Triton and CuTe's own tutorials, in one run.

    python benchmarks/gemm.py                    # on the GPU machine (torch, triton, nvcc)
    python benchmarks/gemm.py --quick            # 1024³, 4096³ and one ragged shape
    python benchmarks/gemm.py --dry-run          # no GPU: the reporting code on fake numbers

For each problem (dtype, layout NT/TN/NN/TT, M×N×K) and implementation — cutec's
example kernels (cutec.jit), CuTe's tutorial kernels (built here with nvcc
from the nvidia-cutlass wheel's sources, see cute_tutorials/), a Triton
matmul in the style of Triton's tutorial, and cuBLAS (torch.mm; TF32 off for
f32) — the output is checked first: random inputs (never zeros), C poisoned
with NaN, one launch, normwise relative error against a float64 product
(f32 output < 1e-5). Only then is it timed: CUDA events around each launch
after a warm-up, L2 flushed before each (as triton.testing.do_bench does,
which also keeps the GPU busy while the host enqueues), the median of
--repeat launches. The implementations of one problem are timed round-robin,
one launch each per round: a GPU at its power cap (an H100 throttles from
1980 MHz to about 1450-1650 MHz within a second of large GEMMs) runs a kernel
at a clock set by the work just before it, and rounds give every
implementation the same history, where timing them one after another gave each
the state its predecessor left. Ratios are speeds relative to references
measured in the same run on the same GPU. Also measured: cold compile-and-load of
sgemm_2 in a fresh process with an empty cache, and host launch overhead
of a cached cutec call against a raw cuLaunchKernel (see gemm_host.py).

Progress goes to stderr; the last thing printed is the table (Markdown).
The JSON holds every row with its error message, and the run's metadata.
Exit status 1 when an implementation computed a wrong result.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT)]

import gemm_report as report  # noqa: E402  (after the path set-up)
from cute_tutorials import build as cute_build  # noqa: E402
from gemm_impls import (  # noqa: E402
    CUTEC_KERNELS,
    DTYPES,
    TOLERANCE,
    TOLERANCE_BY_KEY,
    CutecKernel,
    Problem,
    Unsupported,
)

SQUARES = [(s, s, s) for s in (1024, 2048, 4096, 8192)]
OTHERS = [
    (2048, 8192, 1024),  # wide, shallow
    (8192, 1024, 4096),  # tall
    (3000, 2000, 1003),  # the tiles do not divide it; 4 | M, N (16-byte vectors still align)
    (1001, 999, 1003),  # odd everything
]
QUICK = [(1024, 1024, 1024), (4096, 4096, 4096), (3000, 2000, 1003)]
FAMILIES = ("cutec", "cute", "triton", "cublas")


@dataclass(frozen=True)
class Impl:
    """One implementation of one (dtype, layout): what gemm_impls prepares."""

    family: str  # a report.FAMILIES name
    name: str
    dtype: str
    layout: str
    cutec: CutecKernel | None = None
    counterpart: str | None = None


def parse_shape(text: str) -> tuple[int, int, int]:
    parts = [int(p) for p in text.lower().replace("×", "x").split("x")]
    if len(parts) == 1:
        parts *= 3
    if len(parts) != 3 or min(parts) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected N or MxNxK")
    return parts[0], parts[1], parts[2]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", help="comma-separated N or MxNxK (default: 1024..8192 squares, "
                   "two non-square and two non-divisible shapes)")  # fmt: skip
    p.add_argument("--kernels", help="comma-separated cutec kernels, EXAMPLE or EXAMPLE.KERNEL "
                   f"(default all: {', '.join(k.label for k in CUTEC_KERNELS)})")  # fmt: skip
    p.add_argument("--impls", default=",".join(FAMILIES), help="subset of " + ",".join(FAMILIES))
    p.add_argument("--define", action="append", default=[], metavar="NAME=VALUE",
                   help="a compile-time parameter set on every chosen cutec kernel, over its "
                   "own (--define BN=128 --define BP=3 times another tile); the rows' "
                   "names show it, so the targets do not count them")  # fmt: skip
    p.add_argument("--quick", action="store_true", help="3 shapes, 10 timed launches, no 8192")
    p.add_argument("--repeat", type=int, help="timed launches per row (default 30; quick 10)")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--json", type=Path, default=ROOT / ".bench" / "gemm.json")
    p.add_argument("--png", type=Path, default=ROOT / ".bench" / "gemm.png")
    p.add_argument("--cute-build-dir", type=Path, default=cute_build.BUILD)
    p.add_argument("--cutlass-dir", type=Path, default=cute_build.CUTLASS,
                   help="CuTe's sources, from cute_tutorials/prepare.py")  # fmt: skip
    p.add_argument("--no-host", action="store_true", help="skip cold compile and launch overhead")
    p.add_argument("--dry-run", action="store_true", help="no GPU: report fake numbers")
    args = p.parse_args(argv)
    if args.sizes:
        args.shapes = [parse_shape(s) for s in args.sizes.split(",") if s.strip()]
    else:
        args.shapes = QUICK if args.quick else SQUARES + OTHERS
    args.repeat = args.repeat or (10 if args.quick else 30)
    args.impls = [f.strip().lower() for f in args.impls.split(",") if f.strip()]
    if bad := set(args.impls) - set(FAMILIES):
        p.error(f"--impls: unknown {', '.join(sorted(bad))}")
    args.kernels_selected = select_kernels(p, args.kernels)
    defines = []
    for item in args.define:
        name, eq, value = item.partition("=")
        if not eq or not name.isidentifier() or not value:
            p.error(f"--define: {item!r} is not NAME=VALUE")
        defines.append((name, value))
    if defines:
        args.kernels_selected = [k.with_defines(tuple(defines)) for k in args.kernels_selected]
    return args


def select_kernels(p: argparse.ArgumentParser, text: str | None) -> list[CutecKernel]:
    if not text:
        return list(CUTEC_KERNELS)
    chosen = []
    for item in (t.strip() for t in text.split(",") if t.strip()):
        hits = [k for k in CUTEC_KERNELS if item in (k.label, k.example)]
        if not hits:
            p.error(f"--kernels: no cutec GEMM kernel {item!r}")
        chosen += [k for k in hits if k not in chosen]
    return chosen


def plan(args: argparse.Namespace) -> list[Impl]:
    """Implementations per (dtype, layout) of the chosen cutec kernels, in table order."""
    impls = []
    for dtype, layout in dict.fromkeys((k.dtype, k.layout) for k in args.kernels_selected):
        if "cutec" in args.impls:
            mine = [k for k in args.kernels_selected if (k.dtype, k.layout) == (dtype, layout)]
            impls += [Impl("cutec", k.label, dtype, layout, k, k.cute) for k in mine]
        if "cute" in args.impls:
            impls += [Impl("CuTe", t.name, dtype, layout) for t in cute_build.TUTORIALS.values()
                      if (dtype, layout) in t.entries]  # fmt: skip
        if "triton" in args.impls:
            impls.append(Impl("Triton", "Triton", dtype, layout))
        if "cublas" in args.impls:
            impls.append(Impl("cuBLAS", "cuBLAS", dtype, layout))
    return impls


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ---- the GPU run -------------------------------------------------------------------------


def _time_ms(launches: list, warmup: int, repeat: int, flush) -> list[float]:
    """The median time of each launch, timed in rounds: each round runs every launch
    once, in order, each after an L2 flush (see the module docstring)."""
    import torch

    for launch in launches:
        for _ in range(warmup):
            launch()
    events = [[(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
               for _ in range(repeat)] for _ in launches]  # fmt: skip
    for r in range(repeat):
        for launch, timed in zip(launches, events, strict=True):
            start, end = timed[r]
            flush.zero_()  # cold L2, and the GPU stays busy while the host enqueues the launch
            start.record()
            launch()
            end.record()
    torch.cuda.synchronize()
    return [statistics.median(s.elapsed_time(e) for s, e in timed) for timed in events]


def _rel_err(c, ref) -> float:
    return ((c.double() - ref).norm() / ref.norm()).item()


def _launcher(impl: Impl, problem, ops, libraries: dict):
    import gemm_impls

    a, b, c = ops
    if impl.family == "cutec":
        return gemm_impls.cutec_launcher(impl.cutec, a, b, c)
    tf32 = problem.dtype == "tf32"
    if impl.family == "cuBLAS":
        return gemm_impls.cublas_launcher(a, b, c, tf32=tf32)
    if impl.family == "Triton":
        return gemm_impls.triton_launcher(a, b, c, tf32=tf32)
    lib = libraries[impl.name]
    if isinstance(lib, Exception):
        raise RuntimeError(f"build failed: {lib}")
    tutorial = cute_build.TUTORIALS[impl.name]
    return gemm_impls.cute_launcher(lib, tutorial, problem, a, b, c)


def check_one(impl: Impl, problem, ops, ref, libraries: dict) -> tuple[report.Row, object]:
    """Check one implementation on one problem: its row, and its launch if it is to be
    timed (None when the row is not ok); never raises."""
    import torch

    row = report.Row(impl.family, impl.name, problem.dtype, problem.layout,
                     problem.m, problem.n, problem.k, counterpart=impl.counterpart)  # fmt: skip
    c = ops[2]
    phase = "prepare"
    try:
        launch = _launcher(impl, problem, ops, libraries)
        phase = "first call"
        launch()  # compiles / autotunes where the implementation does that lazily
        torch.cuda.synchronize()
        phase = "checked call"
        c.fill_(float("nan"))
        launch()
        torch.cuda.synchronize()
        row.rel_err = _rel_err(c, ref)
        tol = TOLERANCE_BY_KEY.get(problem.dtype, TOLERANCE[DTYPES[problem.dtype][1]])
        if not row.rel_err < tol:  # NaN fails too
            row.status, row.note = "wrong", f"normwise relative error {row.rel_err:.2e} >= {tol}"
            return row, None
        return row, launch
    except Unsupported as exc:
        row.status, row.note = "n/a", str(exc)
    except (TypeError, ValueError) as exc:
        # cutec checks its arguments against the kernel's declaration before launching
        rejected = impl.family == "cutec" and phase == "first call"
        row.status, row.note = ("rejected" if rejected else "error"), f"{type(exc).__name__}: {exc}"
    except Exception as exc:
        row.status, row.note = "error", f"{phase}: {type(exc).__name__}: {exc}"
    return row, None


def time_rows(checked: list[tuple[report.Row, object]], args, flush) -> None:
    """Time the checked rows of one problem together (`_time_ms`); a failure marks them
    all (a launch that passed its check should not fail here)."""
    timed = [(row, launch) for row, launch in checked if launch is not None]
    if not timed:
        return
    try:
        times = _time_ms([launch for _, launch in timed], args.warmup, args.repeat, flush)
    except Exception as exc:
        for row, _ in timed:
            row.status, row.note = "error", f"timing: {type(exc).__name__}: {exc}"
        return
    for (row, _), ms in zip(timed, times, strict=True):
        row.ms = ms


def _operands(values, problem, torch):
    """a (M,K), b (N,K) in the problem's layout and input dtype; c (M,N) M-major, output dtype."""
    a_val, b_val = values
    t_in, t_out = (getattr(torch, t) for t in DTYPES[problem.dtype])
    a, b = a_val.to(t_in), b_val.to(t_in)
    # The layout's first letter is A's majorness, its second B's: N is M- or N-major
    # (the transpose's storage), T K-major (row-major (M,K) and (N,K)). NT: both MN-major,
    # TN: both K-major, NN: A M-major and B K-major, TT: A K-major and B N-major.
    if problem.layout[0] == "N":
        a = a.t().contiguous().t()
    if problem.layout[1] == "T":
        b = b.t().contiguous().t()
    c = torch.empty((problem.n, problem.m), dtype=t_out, device="cuda").t()
    return a, b, c


def sweep(args, impls: list[Impl], libraries: dict) -> list[report.Row]:
    import torch

    rows: list[report.Row] = []
    total = len(args.shapes) * len(impls)
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    gen = torch.Generator(device="cuda").manual_seed(0)
    for m, n, k in args.shapes:
        values = (torch.randn((m, k), device="cuda", generator=gen),
                  torch.randn((n, k), device="cuda", generator=gen))  # fmt: skip
        refs: dict[str, object] = {}
        for dtype, layout in dict.fromkeys((i.dtype, i.layout) for i in impls):
            problem = Problem(dtype, layout, m, n, k)
            t_in = DTYPES[dtype][0]
            if t_in not in refs:  # the product of the inputs as rounded to their dtype
                a64, b64 = (v.to(getattr(torch, t_in)).double() for v in values)
                refs[t_in] = a64 @ b64.t()
                del a64, b64
            ops = _operands(values, problem, torch)
            checked = []
            for impl in (i for i in impls if (i.dtype, i.layout) == (dtype, layout)):
                row, launch = check_one(impl, problem, ops, refs[t_in], libraries)
                checked.append((row, launch))
                if row.status == "error" and not _context_alive():
                    log("the CUDA context is unusable after this error: stopping the sweep")
                    rows += [r for r, _ in checked]
                    return rows
            time_rows(checked, args, flush)
            for row, _ in checked:
                rows.append(row)
                _progress(len(rows), total, row)
            if any(r.status == "error" for r, _ in checked) and not _context_alive():
                log("the CUDA context is unusable after this error: stopping the sweep")
                return rows
            del ops
        del values, refs
        torch.cuda.empty_cache()
    return rows


def _context_alive() -> bool:
    import torch

    try:
        torch.cuda.synchronize()
        torch.zeros(1, device="cuda").item()
        return True
    except Exception:
        return False


def _progress(i: int, total: int, r: report.Row) -> None:
    what = f"[{i}/{total}] {r.dtype} {r.layout} {report.shape_label(r.m, r.n, r.k)} {r.label}"
    if r.status == "ok":
        log(f"{what}: {r.ms:.3f} ms, {r.tflops:.1f} TFLOP/s (rel err {r.rel_err:.1e})")
    else:
        log(f"{what}: {r.status}: {(r.note.strip().splitlines() or [''])[0]}")


def _share_torch_context() -> None:
    """Make the device's primary context, which torch uses, current for the driver API."""
    import torch
    from cuda.bindings import driver
    from gemm_host import _ok

    torch.zeros(1, device="cuda")
    _ok(driver.cuInit(0))
    (dev,) = _ok(driver.cuDeviceGet(torch.cuda.current_device()))
    (ctx,) = _ok(driver.cuDevicePrimaryCtxRetain(dev))
    _ok(driver.cuCtxSetCurrent(ctx))


def _command_output(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        return f"unavailable ({exc})"


def metadata(args) -> dict:
    import torch

    try:
        import triton

        triton_version = triton.__version__
    except ImportError:
        triton_version = "not installed"
    nvcc = _command_output(["nvcc", "--version"]).splitlines()
    smi = ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]
    git = ["git", "-C", str(ROOT), "describe", "--always", "--dirty"]
    return {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "gpu": torch.cuda.get_device_name(),
        "driver": _command_output(smi),
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "triton": triton_version,
        "nvcc": nvcc[-1] if nvcc else "",
        "python": platform.python_version(),
        "host": platform.node(),
        "cutec_commit": _command_output(git) or "unknown (no git checkout here)",
        "shapes": args.shapes,
        "repeat": args.repeat,
        "warmup": args.warmup,
        "timing": "median of per-launch CUDA event times, L2 flushed before each launch, "
        "the implementations of a problem timed in rounds (one launch each per round)",
    }


def host_measurements(args, log=log) -> dict:
    import gemm_host

    host: dict = {}
    spec = next(k for k in CUTEC_KERNELS if k.label == "sgemm_2.sgemm_nt")
    steps = {
        "cold_compile": lambda: gemm_host.cold_compile(spec.example, spec.kernel, log),
        "launch_overhead": lambda: gemm_host.launch_overhead(spec),
    }
    for key, fn in steps.items():
        log(f"{key} ({spec.label}) ...")
        try:
            host[key] = fn()
        except Exception as exc:
            host[key] = {"error": f"{type(exc).__name__}: {exc}"}
            log(f"  {host[key]['error']}")
    return host


def host_lines(host: dict) -> list[str]:
    lines = []
    cold = host.get("cold_compile", {})
    if "cold" in cold:
        c, w = cold["cold"], cold["warm_cache"]
        lines.append(
            f"cold compile {cold['example']}.{cold['kernel']} (fresh process, empty cache): "
            f"import cutec {c['import_cutec_s']:.3f} s + jit {c['jit_s']:.3f} s + first call "
            f"{c['first_call_s']:.3f} s = {c['total_s']:.3f} s (target < 1 s); cuInit + "
            f"context {c['cuinit_context_s']:.3f} s apart; with the disk cache warm "
            f"{w['total_s']:.3f} s ({cold['cache_files']} files in the new cache folder)"
        )
    elif cold:
        lines.append(f"cold compile: {cold.get('error')}")
    launch = host.get("launch_overhead", {})
    if "ratio" in launch:
        lines.append(
            f"launch overhead ({launch['kernel']}, {launch['problem']}): cutec call "
            f"{launch['cutec_us']:.2f} µs, raw cuLaunchKernel {launch['raw_us']:.2f} µs, "
            f"ratio {launch['ratio']:.2f} (target <= 1.5)"
        )
    elif launch:
        lines.append(f"launch overhead: {launch.get('error')}")
    return lines


def finish(rows: list[report.Row], meta: dict, host: dict, args) -> int:
    report.add_ratios(rows)
    for path in (args.json, args.png):
        path.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(report.to_json(rows, meta, host))
    log(f"wrote {args.json}")
    title = f"cutec GEMM benchmark — {meta.get('gpu')} — {meta.get('date')}"
    try:  # the table below must be printed whatever happens here
        log(report.write_png(rows, args.png, title))
        lines = host_lines(host)
    except Exception as exc:
        log(f"PNG or host summary failed: {type(exc).__name__}: {exc}")
        lines = [f"host measurements: {host}"]
    print("\n".join(lines + report.target_lines(rows)))
    print(f"\n{meta.get('gpu')}, {meta.get('date')}: speed ratios (reference time / row time)\n")
    print(report.table(rows))
    return 1 if any(r.status == "wrong" for r in rows) else 0


def dry_run(args) -> int:
    """Everything that needs no GPU; the numbers are fake and go to a temporary folder."""
    impls = plan(args)
    log(f"plan: {len(args.shapes)} shapes x {len(impls)} implementations:")
    for impl in impls:
        log(f"  {impl.dtype} {impl.layout} {impl.family} {impl.name}")
    for name in dict.fromkeys(i.name for i in impls if i.family == "CuTe"):
        cmd = cute_build.nvcc_command(cute_build.TUTORIALS[name], args.cutlass_dir,
                                      args.cute_build_dir)  # fmt: skip
        log("  " + " ".join(cmd))
    if not (args.cutlass_dir / "include" / "cute").is_dir():
        log(f"note: {args.cutlass_dir} is missing: run benchmarks/cute_tutorials/prepare.py")
    with tempfile.TemporaryDirectory(prefix="gemm-dry-run-") as tmp:
        args.json, args.png = Path(tmp) / "gemm.json", Path(tmp) / "gemm.png"
        rows = report.fake_rows()
        meta = {"gpu": "FAKE GPU (dry run)", "date": "dry run", "shapes": args.shapes}
        host = {"launch_overhead": {"kernel": "fake", "problem": "64³", "cutec_us": 9.0,
                                    "raw_us": 7.0, "ratio": 9 / 7}}  # fmt: skip
        finish(rows, meta, host, args)
        back, _, _ = report.from_json(args.json.read_text())
        assert [r.problem for r in back] == [r.problem for r in report.ordered(rows)]
        log(f"dry run: JSON read back ({len(back)} rows); PNG {args.png.exists() and 'written'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.dry_run:
        return dry_run(args)
    import torch

    if not torch.cuda.is_available():
        log("no CUDA device: nothing to measure (try --dry-run)")
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False  # cuBLAS SGEMM in full f32
    torch.set_float32_matmul_precision("highest")
    _share_torch_context()
    impls = plan(args)
    meta = metadata(args)
    log(f"{meta['gpu']}, driver {meta['driver']}, torch {meta['torch']}, triton {meta['triton']}")
    libraries: dict = {}
    tutorials = list(dict.fromkeys(i.name for i in impls if i.family == "CuTe"))
    if tutorials:
        log(f"building CuTe's tutorials {', '.join(tutorials)} with nvcc (in parallel) ...")
        built = cute_build.build(tutorials, args.cutlass_dir, args.cute_build_dir, log=log)
        for name, result in built.items():
            libraries[name] = result if isinstance(result, Exception) else _load(result[0])
        meta["cute_build_s"] = {n: r[1] for n, r in built.items() if not isinstance(r, Exception)}
    host = {} if args.no_host or "cutec" not in args.impls else host_measurements(args)
    rows = sweep(args, impls, libraries)
    return finish(rows, meta, host, args)


def _load(path: Path):
    try:
        return cute_build.Library(path)
    except OSError as exc:
        return exc


if __name__ == "__main__":
    sys.exit(main())
