"""Build CuTe's tutorial GEMMs with nvcc, one shared library each, and call them.

    python benchmarks/cute_tutorials/build.py [--build-dir DIR] [--dry-run] [NAME ...]

Each library is wrapper.cu around one tutorial .cu of the nvidia-cutlass wheel
(extracted by prepare.py into .bench/cutlass/); the builds run in parallel. A
library is rebuilt only when its nvcc command line or the text of wrapper.cu
or of the tutorial changed (a stamp file beside it records them). gemm.py calls
`build` and `Tutorial.entry`; this file also builds on its own, e.g. on the
development machine to check that the wrapper compiles (no GPU needed).
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CUTLASS = ROOT / ".bench" / "cutlass"
BUILD = ROOT / ".bench" / "cute-build"
NVCC_FLAGS = (
    "-O3",
    "-std=c++17",
    "-arch=sm_90a",
    "--shared",
    "-Xcompiler",
    "-fPIC",
    "--expt-relaxed-constexpr",
)


@dataclass(frozen=True)
class Tutorial:
    """One tutorial: its source under the extracted wheel, and what it implements.

    entries: (dtype, layout) pairs of the exported cute_gemm_<dtype>_<layout>;
    tiles: per dtype, the (M, N, K) multiples the unpredicated kernels need;
    uses_stream: False where the host function ignores its stream argument (the
    Hopper tutorials launch through cutlass::launch_kernel_on_cluster with
    ClusterLaunchParams' default stream, the legacy default stream).
    """

    name: str
    source: str
    entries: tuple[tuple[str, str], ...]
    tiles: tuple[tuple[str, tuple[int, int, int]], ...]
    uses_stream: bool = True

    def tile(self, dtype: str) -> tuple[int, int, int]:
        return dict(self.tiles)[dtype]

    def supports(self, dtype: str, layout: str, m: int, n: int, k: int) -> str | None:
        """None if the tutorial runs this problem, else why not."""
        if (dtype, layout) not in self.entries:
            return f"no {dtype} {layout} kernel"
        bm, bn, bk = self.tile(dtype)
        if m % bm or n % bn or k % bk:
            return f"needs M % {bm}, N % {bn}, K % {bk} == 0 (no predication)"
        return None


F32_TILE = ("f32", (128, 128, 8))
F16_TILE = ("f16", (128, 128, 64))
F16_BOTH = (("f16", "NT"), ("f16", "TN"))
TUTORIALS = {
    t.name: t
    for t in (
        Tutorial("sgemm_1", "sgemm_1.cu", (("f32", "NT"), ("f32", "TN")), (F32_TILE,)),
        Tutorial("sgemm_2", "sgemm_2.cu", (("f32", "NT"), ("f32", "TN")), (F32_TILE,)),
        # The generic templates are SIMT + cp.async for f32; the f16 TN overload is
        # mma.sync + ldmatrix with f16 accumulation; f16 NT is an assert(false) stub.
        Tutorial(
            "sgemm_sm80",
            "sgemm_sm80.cu",
            (("f32", "NT"), ("f32", "TN"), ("f16", "TN")),
            (F32_TILE, F16_TILE),
        ),
        Tutorial("wgmma_sm90", "hopper/wgmma_sm90.cu", F16_BOTH, (F16_TILE,), uses_stream=False),
        Tutorial(
            "wgmma_tma_sm90", "hopper/wgmma_tma_sm90.cu", F16_BOTH, (F16_TILE,), uses_stream=False
        ),
    )
}


def _source_text(t: Tutorial, cutlass: Path) -> str:
    """The two-line translation unit for `t`: macros, then wrapper.cu."""
    lines = [f'#define CUTE_TUTORIAL_SOURCE "{cutlass / "examples/cute/tutorial" / t.source}"']
    lines += [f"#define WRAP_{d.upper()}_{lay.upper()}" for d, lay in t.entries]
    lines.append(f'#include "{HERE / "wrapper.cu"}"')
    return "\n".join(lines) + "\n"


def nvcc_command(t: Tutorial, cutlass: Path, build_dir: Path, nvcc: str = "nvcc") -> list[str]:
    includes = [f"-I{cutlass / 'include'}", f"-I{cutlass / 'tools/util/include'}"]
    src, lib = build_dir / f"{t.name}.cu", build_dir / f"{t.name}.so"
    return [nvcc, *NVCC_FLAGS, *includes, str(src), "-o", str(lib)]


def _stamp(t: Tutorial, cutlass: Path, cmd: list[str]) -> str:
    h = hashlib.sha256(" ".join(cmd).encode())
    h.update((HERE / "wrapper.cu").read_bytes())
    h.update((cutlass / "examples/cute/tutorial" / t.source).read_bytes())
    return h.hexdigest()


def _build_one(t: Tutorial, cutlass: Path, build_dir: Path, nvcc: str) -> tuple[Path, float]:
    """Build (or reuse) t's library; returns its path and the build's seconds (0 if reused)."""
    cmd = nvcc_command(t, cutlass, build_dir, nvcc)
    lib, stamp_file = build_dir / f"{t.name}.so", build_dir / f"{t.name}.stamp"
    stamp = _stamp(t, cutlass, cmd)
    if lib.exists() and stamp_file.exists() and stamp_file.read_text() == stamp:
        return lib, 0.0
    (build_dir / f"{t.name}.cu").write_text(_source_text(t, cutlass))
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
        raise RuntimeError(f"nvcc failed for {t.name} ({seconds:.0f} s):\n{tail}")
    stamp_file.write_text(stamp)
    return lib, seconds


def find_nvcc() -> str:
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not Path(nvcc).exists():
        raise FileNotFoundError("nvcc not found on PATH nor at /usr/local/cuda/bin/nvcc")
    return nvcc


def build(
    names: list[str],
    cutlass: Path = CUTLASS,
    build_dir: Path = BUILD,
    jobs: int | None = None,
    log=print,
) -> dict[str, tuple[Path, float] | Exception]:
    """Build the named tutorials in parallel: name -> (library, seconds) or the error."""
    if not (cutlass / "include" / "cute").is_dir():
        err = FileNotFoundError(
            f"{cutlass} has no include/cute: run benchmarks/cute_tutorials/prepare.py "
            "on a machine with internet and carry .bench/cutlass"
        )
        return dict.fromkeys(names, err)
    try:
        nvcc = find_nvcc()
        build_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return dict.fromkeys(names, exc)
    jobs = jobs or min(len(names), os.cpu_count() or 1) or 1

    def one(name: str) -> tuple[Path, float] | Exception:
        try:
            lib, seconds = _build_one(TUTORIALS[name], cutlass, build_dir, nvcc)
        except Exception as exc:  # one failed build must not stop the others
            log(f"  cute {name}: {exc}")
            return exc
        log(f"  cute {name}: " + (f"built in {seconds:.1f} s" if seconds else "up to date"))
        return lib, seconds

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return dict(zip(names, pool.map(one, names), strict=True))


class Library:
    """A built tutorial library loaded with ctypes; `call` launches one GEMM."""

    def __init__(self, path: Path) -> None:
        self.lib = ctypes.CDLL(str(path))

    def entry(self, dtype: str, layout: str):
        fn = getattr(self.lib, f"cute_gemm_{dtype}_{layout.lower()}")
        scalar = ctypes.c_float
        fn.argtypes = [
            ctypes.c_int, ctypes.c_int, ctypes.c_int, scalar,
            ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
            scalar, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p,
        ]  # fmt: skip
        fn.restype = ctypes.c_int
        return fn


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help=f"default: all of {', '.join(TUTORIALS)}")
    parser.add_argument("--cutlass", type=Path, default=CUTLASS)
    parser.add_argument("--build-dir", type=Path, default=BUILD)
    parser.add_argument("--jobs", type=int)
    parser.add_argument("--dry-run", action="store_true", help="print the nvcc commands only")
    args = parser.parse_args()
    args.names = args.names or list(TUTORIALS)
    unknown = set(args.names) - set(TUTORIALS)
    if unknown:
        parser.error(f"unknown tutorial(s) {', '.join(sorted(unknown))}")
    if args.dry_run:
        for name in args.names:
            print(" ".join(nvcc_command(TUTORIALS[name], args.cutlass, args.build_dir)))
        return 0
    start = time.perf_counter()
    results = build(args.names, args.cutlass, args.build_dir, args.jobs)
    print(f"{len(results)} libraries in {time.perf_counter() - start:.1f} s wall")
    return 1 if any(isinstance(r, Exception) for r in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
