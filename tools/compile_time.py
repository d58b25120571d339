"""Best-of-N in-process compile time, source text to PTX, of the kernels issues 27 and 29 track.

    python tools/compile_time.py [-n 5]

Each run clears the layout caches first, so it pays for its own inference as a
fresh compile does. Prints one line per kernel: best and median milliseconds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cutec import driver  # noqa: E402  (after the path set-up)
from cutec.ir.dialects.cute import clear_caches  # noqa: E402
from tests.gemm_auto_launch import DIVISIBLE  # noqa: E402

# (label, example, kernel, target, compile-time parameters): issue 27's two, and issue
# 29's gemm_tn at the benchmark's tile (the Hopper body, 4 stages of 128x256x64).
# gemm_auto assumes nothing of its sizes; it is compiled with the facts the JIT gives a
# launch whose extents and leading dimensions are multiples of 16 (the plan measured
# before they left the source: 16-byte copies, the Hopper body).
FACTS = {"gemm_auto.cute": DIVISIBLE}
KERNELS = (
    ("gemm_tn", "gemm_auto.cute", "gemm_tn", "sm_90a", {}),
    ("gemm_tn_ws", "gemm_auto.cute", "gemm_tn", "sm_90a", {"BN": 256, "BK": 64, "BP": 4}),
    ("sgemm_2", "sgemm_2.cute", None, "sm_80", {}),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=5, help="runs per kernel (default 5)")
    args = parser.parse_args()
    for label, example, kernel, target, defines in KERNELS:
        source = driver.Source.from_file(ROOT / "examples" / example)
        facts = FACTS.get(example, {})
        options = driver.Options(**facts, kernel=kernel, target=target, defines=defines)
        driver.compile(source, driver.Stage.PTX, options)  # warm-up: imports, lark tables
        times = []
        for _ in range(args.n):
            clear_caches()
            start = time.perf_counter()
            driver.compile(source, driver.Stage.PTX, options)
            times.append((time.perf_counter() - start) * 1e3)
        print(f"{label:10} best {min(times):7.1f} ms   median {statistics.median(times):7.1f} ms")


if __name__ == "__main__":
    main()
