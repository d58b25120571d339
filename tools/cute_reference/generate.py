"""Evaluate the layout-algebra cases in cases.txt with CuTe itself and record its printed results.

Run by hand when cases are added (never in CI)::

    python tools/cute_reference/generate.py --include DIR [--cuda-include DIR] [--compiler g++]
        [--cases FILE --out FILE] [--reuse] [--predict]

CuTe's headers come from the ``nvidia-cutlass`` wheel on PyPI::

    pip download --no-deps nvidia-cutlass==4.2.0.0 -d /tmp/cutlass
    cd /tmp/cutlass && unzip -q nvidia_cutlass-4.2.0.0-*.whl 'cutlass_library/source/include/*'
    # --include /tmp/cutlass/cutlass_library/source/include

The include dir may also be given as ``$CUTE_INCLUDE``. Every case becomes one C++ function that
builds its arguments, calls the CuTe function named by the case's op (see OPS) and prints the result
with ``cute::print``. The functions are compiled in chunks, in parallel, as host-only C++ (``g++``
or ``clang++`` with the CUDA toolkit's headers and a precompiled header, or ``nvcc -x cu``, which
runs g++ over the same CuTe code; clang++ is the fastest and prints the same results). A chunk
that fails to compile is split: cases blamed by the compiler's diagnostics (or, failing that,
halves) are compiled alone, so each case that CuTe rejects at compile time (a static_assert: the
operation is impossible) is recorded as ``ERROR``. A case that aborts at run time (a CuTe assert
on dynamic values, or a division by a run-time 0) is also recorded as ``ERROR``; the chunk is
rerun from the next case. The generated C++ lives in a temporary directory, never in git.
With ``--reuse``, a case already recorded in the output (same id and arguments) keeps its recorded
outcome and only the new cases are built: adding cases costs only their own compilations.
With ``--predict``, the cases that cutec's algebra rejects are built alone from the start, so that
they do not fail the chunks of the others (only the batching follows cutec, never an outcome).

Output: ``tests/layout/data/cute_reference.tsv`` (``id, op, args, result``) and
``tests/layout/data/cute_reference_errors.tsv`` (``id, kind, first diagnostic line``); the format is
described in ``tests/layout/data/README.md``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from cute_args import Arg, ParseError, cpp, cpp_template_int, cpp_type, parse_arg, show

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DEFAULT_CASES = HERE / "cases.txt"
DEFAULT_OUT = REPO / "tests" / "layout" / "data" / "cute_reference.tsv"


# ---------------------------------------------------------------------------------------------
# Ops: name -> (allowed argument counts, C++ body builder, documentation).
# A body is C++ statements that end by printing the result.
# ---------------------------------------------------------------------------------------------

Body = Callable[[Sequence[Arg]], str]


@dataclass(frozen=True)
class Op:
    arities: tuple[int, ...]
    body: Body
    doc: str


def _call(fn: str) -> Body:
    return lambda a: f"print({fn}({', '.join(cpp(x) for x in a)}));"


def _tensor(fn: str) -> Body:
    # The tensor's iterator is an ArithmeticTuple iterator at _0, so the result's offset keeps
    # CuTe's static/dynamic distinction; the result prints as `offset o layout`.
    def body(a: Sequence[Arg]) -> str:
        rest = ", ".join(cpp(x) for x in a[1:])
        return (
            f"auto t = make_tensor(make_inttuple_iter(Int<0>{{}}), {cpp(a[0])});\n"
            f"  auto r = {fn}(t, {rest});\n"
            '  print(get<0>(*r.data())); printf(" o "); print(r.layout());'
        )

    return body


def _recast(a: Sequence[Arg]) -> str:
    return f"print(recast_layout<{cpp_type(a[0])}, {cpp_type(a[1])}>({cpp(a[2])}));"


def _cast(fn: str) -> Body:
    return lambda a: f"print({fn}<{cpp_template_int(a[0])}>({cpp(a[1])}));"


def _make_layout_tv(a: Sequence[Arg]) -> str:
    # The construction in make_tiled_copy (copy_atom.hpp), as the tiled-copy seed shows it.
    return (
        f"auto thr = {cpp(a[0])};\n  auto val = {cpp(a[1])};\n"
        "  auto layout_mn = raked_product(thr, val);\n"
        "  auto layout_tv = right_inverse(layout_mn)"
        ".with_shape(make_shape(size(thr), size(val)));\n"
        "  auto tiler = product_each(shape(layout_mn));\n"
        "  print(cute::make_tuple(tiler, layout_tv));"
    )


def _make_tiled_copy(a: Sequence[Arg]) -> str:
    return (
        "auto tc = make_tiled_copy(Copy_Atom<UniversalCopy<uint16_t>, uint16_t>{}, "
        f"{cpp(a[0])}, {cpp(a[1])});\n"
        "  using TC = decltype(tc);\n"
        "  print(cute::make_tuple(typename TC::Tiler_MN{}, typename TC::TiledLayout_TV{}));"
    )


def _method(name: str, nargs: int) -> Body:
    return lambda a: f"print({cpp(a[0])}.{name}({', '.join(cpp(x) for x in a[1 : nargs + 1])}));"


OPS: dict[str, Op] = {
    "size": Op((1,), _call("size"), "size(x)"),
    "cosize": Op((1,), _call("cosize"), "cosize(L)"),
    "rank": Op((1,), _call("rank"), "rank(x)"),
    "depth": Op((1,), _call("depth"), "depth(x)"),
    "coalesce": Op((1, 2), _call("coalesce"), "coalesce(L) | coalesce(L, profile)"),
    "filter": Op((1,), _call("filter"), "filter(L)"),
    "filter_zeros": Op((1,), _call("filter_zeros"), "filter_zeros(L)"),
    "composition": Op((2,), _call("composition"), "composition(A, B); B a layout, tiler or int"),
    "complement": Op((1, 2), _call("complement"), "complement(L) | complement(L, cotarget)"),
    "left_inverse": Op((1,), _call("left_inverse"), "left_inverse(L)"),
    "right_inverse": Op((1,), _call("right_inverse"), "right_inverse(L)"),
    "nullspace": Op((1,), _call("nullspace"), "nullspace(L)"),
    "logical_divide": Op((2,), _call("logical_divide"), "logical_divide(L, tiler)"),
    "zipped_divide": Op((2,), _call("zipped_divide"), "zipped_divide(L, tiler)"),
    "tiled_divide": Op((2,), _call("tiled_divide"), "tiled_divide(L, tiler)"),
    "flat_divide": Op((2,), _call("flat_divide"), "flat_divide(L, tiler)"),
    "logical_product": Op((2,), _call("logical_product"), "logical_product(A, B)"),
    "zipped_product": Op((2,), _call("zipped_product"), "zipped_product(A, B)"),
    "tiled_product": Op((2,), _call("tiled_product"), "tiled_product(A, B)"),
    "flat_product": Op((2,), _call("flat_product"), "flat_product(A, B)"),
    "blocked_product": Op((2,), _call("blocked_product"), "blocked_product(A, B)"),
    "raked_product": Op((2,), _call("raked_product"), "raked_product(A, B)"),
    "tile_to_shape": Op(
        (2, 3), _call("tile_to_shape"), "tile_to_shape(block, shape) | (block, shape, order)"
    ),
    "local_tile": Op(
        (3, 4),
        _tensor("local_tile"),
        "local_tile(tensor, tiler, coord) | (tensor, tiler, coord, proj); tensor given by layout",
    ),
    "local_partition": Op(
        (3, 4),
        _tensor("local_partition"),
        "local_partition(tensor, thr_layout, index) | (..., proj); tensor given by layout",
    ),
    "max_common_layout": Op((2,), _call("max_common_layout"), "max_common_layout(A, B)"),
    "max_common_vector": Op((2,), _call("max_common_vector"), "max_common_vector(A, B)"),
    "recast_layout": Op((3,), _recast, "recast_layout<From, To>(L)"),
    "upcast": Op((2,), _cast("upcast"), "upcast<N>(L); N written as an integer"),
    "downcast": Op((2,), _cast("downcast"), "downcast<N>(L); N written as an integer"),
    "make_layout_tv": Op(
        (2,), _make_layout_tv, "(product_each(shape(raked_product(thr,val))), right_inverse(...))"
    ),
    "make_tiled_copy": Op(
        (2,), _make_tiled_copy, "make_tiled_copy(Copy_Atom<UniversalCopy<u16>,u16>, thr, val)"
    ),
    "make_ordered_layout": Op(
        (2,), _call("make_ordered_layout"), "make_ordered_layout(shape, order)"
    ),
    "make_layout": Op(
        (1, 2), _call("make_layout"), "make_layout(shape) | make_layout(shape, LayoutLeft/Right)"
    ),
    "idx2crd": Op((2, 3), _call("idx2crd"), "idx2crd(idx, shape) | idx2crd(idx, shape, stride)"),
    "crd2idx": Op((2, 3), _call("crd2idx"), "crd2idx(crd, shape) | crd2idx(crd, shape, stride)"),
    "shape_div": Op((2,), _call("shape_div"), "shape_div(a, b)"),
    "compact_col_major": Op((1,), _call("compact_col_major"), "compact_col_major(shape)"),
    "compact_row_major": Op((1,), _call("compact_row_major"), "compact_row_major(shape)"),
    "with_shape": Op((2,), _method("with_shape", 1), "L.with_shape(shape)"),
    "product_each": Op((1,), _call("product_each"), "product_each(x)"),
}


@dataclass(frozen=True)
class Case:
    id: str
    op: str
    args: tuple[Arg, ...]

    @property
    def args_text(self) -> str:
        return " ; ".join(show(a) for a in self.args)

    def body(self) -> str:
        return OPS[self.op].body(self.args)


def read_cases(path: Path) -> list[Case]:
    cases: list[Case] = []
    seen: set[str] = set()
    for lineno, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        op, _, rest = line.partition(" ")
        if op not in OPS:
            raise SystemExit(f"{path}:{lineno}: unknown op {op!r}")
        try:
            args = tuple(parse_arg(t) for t in rest.split(";")) if rest.strip() else ()
            for a in args:
                cpp(a)
        except ParseError as e:
            raise SystemExit(f"{path}:{lineno}: {e}") from e
        if len(args) not in OPS[op].arities:
            raise SystemExit(f"{path}:{lineno}: {op} takes {OPS[op].arities} arguments")
        key = op + "\t" + " ; ".join(show(a) for a in args)
        if key in seen:
            continue
        seen.add(key)
        digest = hashlib.sha1(key.encode()).hexdigest()[:8]
        cases.append(Case(f"{op}-{digest}", op, args))
    return cases


# ---------------------------------------------------------------------------------------------
# Building and running
# ---------------------------------------------------------------------------------------------

PRELUDE = """\
#include <cute/tensor.hpp>
#include <cute/layout.hpp>
#include <cute/layout_composed.hpp>
#include <cute/swizzle_layout.hpp>
#include <cute/atom/copy_atom.hpp>
#include <cstdio>
#include <cstdlib>
"""

START, END = "\x1e", "\x1d"


@dataclass
class Toolchain:
    compiler: str
    include: Path
    cuda_include: Path | None
    workdir: Path

    def flags(self) -> list[str]:
        if self.compiler == "nvcc":
            return ["nvcc", "-std=c++17", "-x", "cu", "-w", f"-I{self.include}"]
        flags = [self.compiler, "-std=c++17", "-w", f"-I{self.include}"]
        if self.cuda_include is not None:
            flags += [f"-I{self.cuda_include}", f"-I{self.cuda_include / 'cccl'}"]
        return flags

    @property
    def clang(self) -> bool:
        return "clang" in Path(self.compiler).name

    def pch(self) -> list[str]:
        """Flags that use the precompiled prelude (g++ finds prelude.hpp.gch by itself)."""
        return ["-include-pch", str(self.workdir / "prelude.hpp.pch")] if self.clang else []

    def prepare(self) -> None:
        """Write the prelude header; with g++ or clang++, precompile it."""
        header = self.workdir / "prelude.hpp"
        header.write_text(PRELUDE)
        if self.compiler != "nvcc":
            out = f"{header}.pch" if self.clang else f"{header}.gch"
            cmd = [*self.flags(), "-x", "c++-header", str(header), "-o", out]
            subprocess.run(cmd, check=True)


@dataclass
class Outcome:
    result: str
    error_kind: str = ""
    error_text: str = ""


def write_source(cases: Sequence[Case], path: Path) -> dict[int, Case]:
    """Write one program for the cases; return the line ranges (start line) of each case."""
    lines = ['#include "prelude.hpp"', "using namespace cute;", ""]
    starts: dict[int, Case] = {}
    for i, case in enumerate(cases):
        starts[len(lines) + 1] = case
        lines.append(f"// {case.id}: {case.op} {case.args_text}")
        lines.append(f"static void case_{i}() {{")
        lines.extend("  " + ln for ln in case.body().split("\n  "))
        lines.append("}")
    lines.append("int main(int argc, char** argv) {")
    lines.append("  int start = argc > 1 ? std::atoi(argv[1]) : 0;")
    lines.append(f"  void (*fns[])() = {{{', '.join(f'case_{i}' for i in range(len(cases)))}}};")
    lines.append(f"  for (int i = start; i < {len(cases)}; ++i) {{")
    lines.append('    printf("\\x1e%d\\t", i); fflush(stdout);')
    lines.append('    fns[i](); printf("\\x1d\\n"); fflush(stdout);')
    lines.append("  }")
    lines.append("}")
    path.write_text("\n".join(lines) + "\n")
    return starts


def blame(stderr: str, src: Path, starts: dict[int, Case]) -> set[str]:
    """Case ids whose lines the compiler's diagnostics point at."""
    begin = sorted(starts)
    ids: set[str] = set()
    for m in re.finditer(re.escape(src.name) + r":(\d+):", stderr):
        line = int(m.group(1))
        owner = [b for b in begin if b <= line]
        if owner:
            ids.add(starts[owner[-1]].id)
    return ids


def first_error(stderr: str) -> str:
    for pat in (r"static assertion failed[^\n]*", r"static_assert[^\n]*", r"error:[^\n]*"):
        m = re.search(pat, stderr)
        if m:
            # clang writes `static_assert failed due to requirement '...' "msg"`: g++'s form.
            clang = re.fullmatch(r"static_assert failed(?: due to requirement .*)? \"(.*)\"", m[0])
            return f"static assertion failed: {clang[1]}" if clang else m[0].strip()
    return stderr.strip().splitlines()[0] if stderr.strip() else "compile error"


class Builder:
    def __init__(self, tc: Toolchain) -> None:
        self.tc = tc
        self.counter = 0
        self.outcomes: dict[str, Outcome] = {}

    def _name(self) -> str:
        self.counter += 1
        return f"chunk_{self.counter}"

    def compile(self, cases: Sequence[Case]) -> tuple[Path | None, str, Path, dict[int, Case]]:
        name = self._name()
        src = self.tc.workdir / f"{name}.cpp"
        exe = self.tc.workdir / name
        starts = write_source(cases, src)
        cmd = [*self.tc.flags(), *self.tc.pch(), "-I", str(self.tc.workdir), str(src)]
        cmd += ["-o", str(exe)]
        if self.tc.compiler != "nvcc":
            cmd[1:1] = ["-x", "c++"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        return (exe if proc.returncode == 0 else None), proc.stderr, src, starts

    def build_and_run(self, cases: Sequence[Case]) -> None:
        """Record an outcome for every case, splitting on compile errors."""
        if not cases:
            return
        exe, stderr, src, starts = self.compile(cases)
        if exe is not None:
            self.run(exe, cases)
            return
        if len(cases) == 1:
            self.outcomes[cases[0].id] = Outcome("ERROR", "compile", first_error(stderr))
            return
        blamed = blame(stderr, src, starts)
        bad = [c for c in cases if c.id in blamed]
        good = [c for c in cases if c.id not in blamed]
        if not bad or not good:
            half = len(cases) // 2
            self.build_and_run(cases[:half])
            self.build_and_run(cases[half:])
            return
        self.build_and_run(good)
        for case in bad:
            self.build_and_run([case])

    def run(self, exe: Path, cases: Sequence[Case]) -> None:
        """Run the program, restarting after the case that aborted it (if any)."""
        start = 0
        while start < len(cases):
            try:
                proc = subprocess.run(
                    [str(exe), str(start)], capture_output=True, text=True, timeout=120
                )
                stdout, stderr, status = proc.stdout, proc.stderr, str(proc.returncode)
            except subprocess.TimeoutExpired as e:
                stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else e.stdout or ""
                stderr, status = "timed out", "timeout"
            done = start
            for chunk in stdout.split(START)[1:]:
                index, _, rest = chunk.partition("\t")
                i = int(index)
                done = i + 1
                if END in rest:
                    self.outcomes[cases[i].id] = Outcome(rest.split(END)[0])
                else:  # started, never finished: this case aborted the program
                    detail = stderr.strip().splitlines()
                    text = detail[-1] if detail else f"exit status {status}"
                    self.outcomes[cases[i].id] = Outcome("ERROR", "runtime", text)
            if status == "0":
                break
            if done == start:  # died before announcing a case: blame the first one
                self.outcomes[cases[start].id] = Outcome("ERROR", "runtime", stderr.strip())
                done = start + 1
            start = done


def chunks(cases: Sequence[Case], size: int) -> list[Sequence[Case]]:
    return [cases[i : i + size] for i in range(0, len(cases), size)]


def find_cuda_include() -> Path | None:
    candidates = [os.environ.get("CUDA_INCLUDE", "")]
    nvcc = shutil.which("nvcc")
    if nvcc:
        candidates.append(str(Path(nvcc).resolve().parent.parent / "include"))
    candidates += ["/usr/local/cuda/include"]
    for c in candidates:
        if c and (Path(c) / "cuda_runtime_api.h").exists():
            return Path(c)
    return None


def write_outputs(cases: Sequence[Case], outcomes: dict[str, Outcome], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    rows = ["# id\top\targs\tresult"]
    errors = ["# id\tkind\tdiagnostic"]
    for case in cases:
        if case.id not in outcomes:  # a partial write, during a long run
            continue
        o = outcomes[case.id]
        rows.append(f"{case.id}\t{case.op}\t{case.args_text}\t{o.result}")
        if o.error_kind:
            text = o.error_text.replace("\t", " ")
            errors.append(f"{case.id}\t{o.error_kind}\t{text}")
    out.write_text("\n".join(rows) + "\n")
    out.with_name(out.stem + "_errors.tsv").write_text("\n".join(errors) + "\n")


def read_outputs(out: Path) -> dict[str, tuple[str, Outcome]]:
    """The outcomes recorded in an earlier output (and its errors file): id -> (args, outcome)."""
    if not out.exists():
        return {}
    diagnostics: dict[str, tuple[str, str]] = {}
    errors = out.with_name(out.stem + "_errors.tsv")
    if errors.exists():
        for line in errors.read_text().splitlines():
            if line and not line.startswith("#"):
                rid, kind, text = line.split("\t", 2)
                diagnostics[rid] = (kind, text)
    recorded: dict[str, tuple[str, Outcome]] = {}
    for line in out.read_text().splitlines():
        if line and not line.startswith("#"):
            rid, _, args, result = line.split("\t")
            kind, text = diagnostics.get(rid, ("", ""))
            recorded[rid] = (args, Outcome(result, kind, text))
    return recorded


def predicted_errors(cases: Sequence[Case]) -> set[str]:
    """Ids of the cases that cutec's algebra rejects (or fails on).

    Such a case would most likely fail to compile and make its whole chunk fail, costing a
    compilation of the chunk, one of the rest and one of the case; compiled alone from the
    start, it costs only its own. Only the batching follows the prediction, never an outcome.
    """
    import warnings

    sys.path[:0] = [str(REPO), str(REPO / "tests" / "layout")]
    from test_cute_reference import run_case

    ids: set[str] = set()
    for case in cases:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                run_case(case.op, case.args_text)
        except Exception:  # any failure: build it alone, CuTe decides
            ids.add(case.id)
    print(f"{len(ids)} of {len(cases)} cases predicted to fail, built alone", file=sys.stderr)
    return ids


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument(
        "--include",
        type=Path,
        default=os.environ.get("CUTE_INCLUDE"),
        help="dir holding cute/ and cutlass/ (or $CUTE_INCLUDE)",
    )
    ap.add_argument(
        "--cuda-include",
        type=Path,
        default=None,
        help="CUDA toolkit include dir, for g++ (default: found from nvcc)",
    )
    ap.add_argument(
        "--compiler",
        default="g++",
        help="g++ (default) or clang++ (faster), each with a PCH, or nvcc",
    )
    ap.add_argument("--cases", type=Path, default=DEFAULT_CASES)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--chunk", type=int, default=60, help="cases per compiled program")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--keep", action="store_true", help="keep the generated C++ (prints the dir)")
    ap.add_argument(
        "--predict",
        action="store_true",
        help="build alone the cases cutec's algebra rejects (faster; outcomes are CuTe's)",
    )
    ap.add_argument(
        "--reuse",
        action="store_true",
        help="take the outcome of a case already in --out from there; build only the new cases",
    )
    args = ap.parse_args(argv)
    if args.include is None or not (args.include / "cute" / "layout.hpp").exists():
        ap.error("--include (or $CUTE_INCLUDE) must name a dir holding cute/layout.hpp")
    cuda_include = args.cuda_include or find_cuda_include()
    if args.compiler != "nvcc" and cuda_include is None:
        ap.error("g++ needs the CUDA toolkit headers: pass --cuda-include")

    cases = read_cases(args.cases)
    workdir = Path(tempfile.mkdtemp(prefix="cute_reference_"))
    try:
        outcomes: dict[str, Outcome] = {}
        if args.reuse:
            recorded = read_outputs(args.out)
            for case in cases:
                if case.id in recorded and recorded[case.id][0] == case.args_text:
                    outcomes[case.id] = recorded[case.id][1]
            print(f"{len(outcomes)} outcomes reused from {args.out}", file=sys.stderr)

        def work(index: int, part: Sequence[Case]) -> dict[str, Outcome]:
            sub = workdir / f"part_{index}"
            sub.mkdir()
            for f in workdir.glob("prelude.hpp*"):
                (sub / f.name).symlink_to(f)
            builder = Builder(Toolchain(args.compiler, args.include, cuda_include, sub))
            builder.build_and_run(part)
            print(f"chunk {index + 1} of {len(parts)} done", file=sys.stderr, flush=True)
            return builder.outcomes

        Toolchain(args.compiler, args.include, cuda_include, workdir).prepare()
        todo = [c for c in cases if c.id not in outcomes]
        alone = predicted_errors(todo) if args.predict else set()
        parts = chunks([c for c in todo if c.id not in alone], args.chunk)
        parts += [[c] for c in todo if c.id in alone]
        with ThreadPoolExecutor(args.jobs) as pool:
            for done, result in enumerate(pool.map(work, range(len(parts)), parts), 1):
                outcomes.update(result)
                if args.reuse and done % 20 == 0:  # an interrupted run resumes from here
                    write_outputs(cases, outcomes, args.out)
        missing = [c.id for c in cases if c.id not in outcomes]
        if missing:
            raise RuntimeError(f"no outcome for {missing}")
        write_outputs(cases, outcomes, args.out)
        n_err = sum(1 for o in outcomes.values() if o.error_kind)
        print(f"{len(cases)} cases, {n_err} expected errors -> {args.out}", file=sys.stderr)
    finally:
        if args.keep:
            print(f"generated C++ kept in {workdir}", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
