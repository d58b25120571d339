"""cutec benchmarks: what the project promises, measured.

    python benchmarks/bench.py compile        # parse/build/pipeline time per example

Sections:

* ``compile`` — wall time to parse each example (lark LALR → AST), to build
  it to verified cute-dialect IR, and to run the default pipeline, median of
  repeated runs in one process after a warm-up (the first parse of a process
  also builds lark's tables; that cold time is reported separately). The
  in-process memo caches of layout inference are cleared before each run.

GPU sections (cutec kernels against cuBLAS and Triton, as ratios measured in
one run) join when kernels run on the GPU. Numbers measured with this script
are recorded, with machine and date, in docs/performance.md.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _median_ms(fn: Callable[[], object], repeat: int) -> float:
    from cutec.ir.dialects.cute import clear_caches

    times = []
    for _ in range(repeat):
        clear_caches()  # each run pays for its own layout inference, as a fresh compile does
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def bench_compile(repeat: int) -> int:
    from cutec.diagnostics import CompileError
    from cutec.frontend.builder import build_module
    from cutec.frontend.parser import parse_source
    from cutec.passes import PASSES, PassManager, parse_pipeline

    examples = sorted((ROOT / "examples").glob("*.cute"))
    start = time.perf_counter()
    parse_source(examples[0].read_text(), str(examples[0]))
    cold_ms = 1e3 * (time.perf_counter() - start)

    def pipeline(program: object) -> None:
        module = build_module(program, {}, None)
        PassManager(parse_pipeline("canonicalize,cse", PASSES)).run(module)

    rows = []
    for path in examples:
        text, name = path.read_text(), str(path)
        parse_ms = _median_ms(functools.partial(parse_source, text, name), repeat)
        program = parse_source(text, name)
        try:
            build_module(program, {}, None)
        except CompileError as e:
            message = e.diagnostics[0].message[:40]
            rows.append((path.name, len(text.splitlines()), parse_ms, None, None, message))
            continue
        build_ms = _median_ms(functools.partial(build_module, program, {}, None), repeat)
        total_ms = _median_ms(functools.partial(pipeline, program), repeat)
        rows.append((path.name, len(text.splitlines()), parse_ms, build_ms, total_ms, ""))

    print(f"first parse in this process (lark tables): {cold_ms:.1f} ms")
    print(
        f"{'example':<18}{'lines':>6}{'parse ms':>10}{'build ms':>10}"
        f"{'build+canon+cse ms':>20}  note"
    )
    for name, lines, p, b, t, note in rows:
        b_text = f"{b:10.2f}" if b is not None else f"{'-':>10}"
        t_text = f"{t:20.2f}" if t is not None else f"{'-':>20}"
        print(f"{name:<18}{lines:>6}{p:10.2f}{b_text}{t_text}  {note}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("section", choices=("compile",))
    parser.add_argument("--repeat", type=int, default=20, help="timed runs per measurement")
    args = parser.parse_args()
    return bench_compile(args.repeat)


if __name__ == "__main__":
    sys.exit(main())
