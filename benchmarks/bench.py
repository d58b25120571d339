"""cutec benchmarks: what the project promises, measured.

    python benchmarks/bench.py compile        # parse/build/pipeline time per example
    python benchmarks/bench.py rewrite        # canonicalize, cse, simplify, licm on 50,000 ops

Sections:

* ``compile`` — wall time to parse each example (lark LALR → AST), to build
  it to verified cute-dialect IR, and to run the default pipeline, median of
  repeated runs in one process after a warm-up (the first parse of a process
  also builds lark's tables; that cold time is reported separately). The
  in-process memo caches of layout inference are cleared before each run.

* ``rewrite`` — the rewrite drivers' scaling: one function whose single block
  holds ``--ops`` arith ops (constants, foldable identities, duplicates for
  CSE, dead ops, one accumulating chain), as fully unrolled per-thread code
  looks; times building it, `canonicalize` and `cse`, then `simplify` on a
  fresh build, and `licm` on the same ops inside an ``scf.for`` (all but the
  accumulating chain invariant); best of ``--repeat`` fresh builds (each run
  mutates the block).

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


def _unrolled_block(n_ops: int, in_loop: bool = False) -> object:
    """A module with one function of about `n_ops` ops in one block.

    Each group of ten ops: two constants (one repeated every 97 groups), x + c,
    (x + c) * 1 (folds), the same x + c again (CSE), a dead subi, a dead
    constant, c + 0 (folds), and the chain acc = acc + (x + c) + ... that
    keeps the live ones used. `in_loop`: the ops sit in an scf.for whose
    carried value is acc, so all but the chain are loop-invariant.
    """
    from cutec.ir import types as T
    from cutec.ir.builder import Builder
    from cutec.ir.dialects import arith, builtin, scf

    func = builtin.FuncOp("unrolled", [T.i32], [T.i32])
    b = Builder.at_end(func.body)
    x = func.body.args[0]
    acc = x
    loop = None
    if in_loop:
        c0 = b.insert(arith.constant(0, T.index)).result
        c1 = b.insert(arith.constant(1, T.index)).result
        loop = b.insert(scf.ForOp(c0, c1, c1, [x]))
        b = Builder.at_end(loop.body)
        acc = loop.body.args[1]
    one = b.insert(arith.constant(1, T.i32)).result
    zero = b.insert(arith.constant(0, T.i32)).result
    for i in range(max(1, n_ops // 10)):
        c = b.insert(arith.constant(i % 97, T.i32)).result
        b.insert(arith.constant(i, T.i32))  # dead
        a = b.insert(arith.AddIOp(x, c)).result
        m = b.insert(arith.MulIOp(a, one)).result
        d = b.insert(arith.AddIOp(x, c)).result
        b.insert(arith.SubIOp(a, d))  # dead
        z = b.insert(arith.AddIOp(c, zero)).result
        acc = b.insert(arith.AddIOp(acc, m)).result
        acc = b.insert(arith.AddIOp(acc, d)).result
        acc = b.insert(arith.XOrIOp(acc, z)).result
    if loop is not None:
        b.insert(scf.YieldOp([acc]))
        acc = loop.results[0]
        b = Builder.at_end(func.body)
    b.insert(builtin.ReturnOp([acc]))
    return builtin.ModuleOp([func])


def bench_rewrite(repeat: int, n_ops: int) -> int:
    from cutec.ir.dialects import scf
    from cutec.passes import PASSES

    def count(module: object) -> int:
        return sum(1 for _ in module.walk()) - 2  # type: ignore[attr-defined]

    def timed(name: str, module: object, times: dict[str, float]) -> int:
        start = time.perf_counter()
        PASSES[name]().run(module)  # type: ignore[arg-type]
        times[name] = time.perf_counter() - start
        return count(module)

    best: dict[str, float] = {}
    sizes: list[int] = []
    for _ in range(repeat):
        start = time.perf_counter()
        module = _unrolled_block(n_ops)
        times = {"build": time.perf_counter() - start}
        sizes = [count(module)]
        sizes += [timed(name, module, times) for name in ("canonicalize", "cse")]
        sizes.append(timed("simplify", _unrolled_block(n_ops), times))
        looped = _unrolled_block(n_ops, in_loop=True)
        (loop,) = looped.walk_type(scf.ForOp)  # type: ignore[attr-defined]
        inside = sum(1 for _ in loop.walk())
        timed("licm", looped, times)
        hoisted = inside - sum(1 for _ in loop.walk())
        for key, t in times.items():
            best[key] = min(best.get(key, t), t)
    built, canonical, cse, simplified = sizes
    print(f"ops in the block: {built} built, {canonical} after canonicalize, {cse} after cse")
    print(f"simplify: {simplified} ops left; licm: {hoisted} ops left the loop")
    for key, t in best.items():
        print(f"{key:<14}{1e3 * t:10.1f} ms")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("section", choices=("compile", "rewrite"))
    parser.add_argument("--repeat", type=int, default=None, help="timed runs per measurement")
    parser.add_argument("--ops", type=int, default=50_000, help="ops in the rewrite block")
    args = parser.parse_args()
    if args.section == "rewrite":
        return bench_rewrite(args.repeat or 3, args.ops)
    return bench_compile(args.repeat or 20)


if __name__ == "__main__":
    sys.exit(main())
