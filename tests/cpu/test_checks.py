"""Planted errors, caught by the checks the GPU does not give (cutec/cpu/checks.py):
each is reported with the op's .cute location, the thread and the block, in the same
words by the native backend and the interpreter; and the asynchrony of cp.async is
visible (its destination is NaN until the wait that lands it)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cutec.cli import main
from cutec.cpu import native, reference
from cutec.cpu.reference import AccessError, InterpreterError
from cutec.driver import Options, Source, Stage, compile
from cutec.ir.dialects.builtin import KernelOp
from tests.passes.test_lowering_values import CP_ASYNC, _column_major, _gemm_args

EXAMPLES = Path(__file__).parents[2] / "examples"
SGEMM_CP_ASYNC = Path(__file__).parent / "data" / "sgemm_cp_async.cute"


def _kernel(text: str, file: str, name: str | None = None, **defines: Any) -> KernelOp:
    module = compile(Source(text, file), Stage.THREAD, Options(defines=defines)).module
    kernels = {k.sym_name: k for k in module.walk_type(KernelOp)}
    return kernels[name] if name else next(iter(kernels.values()))


def _errors(kernel: KernelOp, grid: Any, args: dict[str, Any]) -> list[Exception]:
    """The error each backend raises, on copies of `args`: [interpreter's, native's]."""
    found = []
    for backend in (reference, native):
        copy = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}
        with pytest.raises((AccessError, InterpreterError)) as info:
            backend.run_kernel(kernel, grid, copy)
        found.append(info.value)
    return found


def _same_report(kernel: KernelOp, grid: Any, args: dict[str, Any]) -> str:
    ref, got = _errors(kernel, grid, args)
    assert type(ref) is type(got) and str(ref) == str(got)
    return str(got)


OUT = {"out": np.zeros(64, np.float32), "M": 64}

OOB_SHARED = """
kernel oob(out: f32[M]) grid 1 threads 64 {
  s = smem f32[(64,)]
  s[thread.x + 1] = 1.0
  sync()
  out[thread.x] = s[thread.x]
}
"""

OOB_GLOBAL = """
kernel oob(out: f32[M]) grid 2 threads 32 {
  out[32 * block.x + thread.x + 1] = 1.0
}
"""


def test_out_of_bounds_stores() -> None:
    report = _same_report(_kernel(OOB_SHARED, "oob.cute"), 1, OUT)
    assert report == (
        "oob.cute:4:3: out-of-bounds store of 4 bytes at byte offset 256 of "
        "shared@oob.cute:3:7 (256 bytes) (thread.store, thread (63, 0, 0), block (0, 0, 0))"
    )
    report = _same_report(_kernel(OOB_GLOBAL, "oob.cute"), 2, OUT)
    assert report == (
        "oob.cute:3:3: out-of-bounds store of 4 bytes at byte offset 256 of out (256 bytes) "
        "(thread.store, thread (31, 0, 0), block (1, 0, 0))"
    )


DIVERGENT = """
kernel div(out: f32[M]) grid 1 threads 64 {
  if thread.x < 40 {
    sync()
  }
  out[thread.x] = 1.0
}
"""


def test_divergent_barrier() -> None:
    """Threads 32..39 of warp 1 reach the barrier, 40..63 do not."""
    assert _same_report(_kernel(DIVERGENT, "div.cute"), 1, OUT) == (
        "div.cute:4:5: divergent barrier: thread (40, 0, 0) of block (0, 0, 0) does not "
        "reach it while other threads of its warp do"
    )


OTHER_BARRIER = """
kernel other(out: f32[M]) grid 1 threads 96 {
  if thread.x < 64 {
    sync()
    out[thread.x] = 1.0
  } else {
    sync()
  }
}
"""


def test_deadlocks_say_who_waits_on_what() -> None:
    """Warp 1 finishes while warp 0 waits; warps wait at two different barriers."""
    finished = DIVERGENT.replace("40", "32")
    assert _same_report(_kernel(finished, "dead.cute"), 1, OUT) == (
        "dead.cute:4:5: deadlock in block (0, 0, 0): no warp can go on: warp 0 (threads "
        "0..31) waits at the barrier at dead.cute:4:5; warp 1 (threads 32..63) finished"
    )
    out = {"out": np.zeros(96, np.float32), "M": 96}
    assert _same_report(_kernel(OTHER_BARRIER, "other.cute"), 1, out) == (
        "other.cute:4:5: deadlock in block (0, 0, 0): no warp can go on: warps 0-1 (threads "
        "0..63) wait at the barrier at other.cute:4:5; warp 2 (threads 64..95) waits at the "
        "barrier at other.cute:7:5"
    )


def test_shared_memory_race() -> None:
    """examples/transpose.cute without its sync(): a thread reads the tile before another
    thread's store (which backend sees which of the two first differs: the report
    names the access found second, and the other thread)."""
    text = (EXAMPLES / "transpose.cute").read_text().replace("  sync()\n", "")
    kernel = _kernel(text, "transpose.cute")
    s = _column_major(64, 32, 1)
    args = {"S": s, "M": 64, "N": 32, "D": np.full((64, 32), np.nan, np.float32)}
    race = re.compile(
        r"transpose\.cute:(23|28):3: shared-memory race on byte \d+ of shared@transpose"
        r"\.cute:14:8: (store|load) by this thread, (load|store) by thread \(\d+, 0, 0\), "
        r"no barrier between \(thread\.(store|load), thread \(\d+, 0, 0\), block \(0, 0, 0\)\)"
    )
    for error in _errors(kernel, (2, 1), args):
        assert isinstance(error, AccessError) and race.fullmatch(str(error)), error
    native.run_kernel(kernel, (2, 1), args, check_shared=False)  # unchecked: a wrong result
    assert not np.array_equal(args["D"], s.T)


SAME_WORD = """
kernel same(out: f32[M]) grid 1 threads 64 {
  s = smem f32[(64,)]
  s[thread.x / 2] = 1.0
  sync()
  out[thread.x] = s[thread.x / 2]
}
"""


def test_lanes_of_one_warp_race_in_one_op() -> None:
    """Threads 0 and 1 store to one word in one op: the lanes of a warp are unordered, and
    both backends check them one after another (the same report)."""
    assert _same_report(_kernel(SAME_WORD, "same.cute"), 1, OUT) == (
        "same.cute:4:3: shared-memory race on byte 0 of shared@same.cute:3:7: store by this "
        "thread, store by thread (0, 0, 0), no barrier between (thread.store, thread (1, 0, "
        "0), block (0, 0, 0))"
    )


UNINIT = """
kernel uninit(out: f32[M]) grid 1 threads 64 {
  s = smem f32[(64,)]
  if thread.x != 5 {
    s[thread.x] = 2.0
  }
  sync()
  out[thread.x] = s[thread.x]
}
"""


def test_uninitialised_shared_load() -> None:
    assert _same_report(_kernel(UNINIT, "uninit.cute"), 1, OUT) == (
        "uninit.cute:8:19: load of uninitialised shared memory: byte 20 of "
        "shared@uninit.cute:3:7 was not written in this block (thread.load, thread (5, 0, 0), "
        "block (0, 0, 0))"
    )


# --------------------------------------------------------------------------- cp.async
def test_cp_async_staging_kernel_natively() -> None:
    """cp.async.cg with src-size zero-fill past the end: the same bits as the interpreter."""
    kernel = _kernel(CP_ASYNC, "cp_async.cute")
    m, n = 36, 10
    s = _column_major(m, n, 5)
    for backend in (reference, native):
        d = np.full((n, m), np.nan, np.float32)
        backend.run_kernel(kernel, (2, 2), {"S": s, "M": m, "N": n, "D": d})
        assert np.array_equal(s, d)


def test_a_missing_cp_async_wait_is_reported_by_both() -> None:
    kernel = _kernel(CP_ASYNC.replace("  cp_async_wait(0)\n", ""), "cp_async.cute")
    args = {"S": _column_major(36, 10, 5), "M": 36, "N": 10, "D": np.zeros((10, 36), np.float32)}
    assert _same_report(kernel, (2, 2), args) == (
        "cp_async.cute:24:3: load of byte 0 of shared@cp_async.cute:11:8, which a cp.async of "
        "thread (0, 0, 0) writes, before a cp.async wait lands it (thread.load, thread (0, 0, "
        "0), block (0, 0, 0))"
    )


def _sgemm_cp_async(text: str) -> KernelOp:
    return _kernel(text, "sgemm_cp_async.cute", "sgemm_nt")


def test_cp_async_gemm_matches_float64() -> None:
    """sgemm_1 with cp.async copies (tests/cpu/data), natively, tiles divided or not."""
    kernel = _sgemm_cp_async(SGEMM_CP_ASYNC.read_text())
    for m, n, k in [(128, 128, 16), (100, 36, 13)]:
        args, want = _gemm_args("sgemm_nt", m, n, k, 0.0)
        native.run_kernel(kernel, (-(-m // 128), -(-n // 128)), args)
        c = args["C"].T.astype(np.float64)
        assert np.linalg.norm(c - want) / np.linalg.norm(want) < 1e-6


GEMM = "    gemm(tCsA, tCsB, tCrC)"


@pytest.mark.parametrize("where", ["missing", "misplaced"])
def test_a_missing_or_misplaced_wait_fails_the_gemm(where: str) -> None:
    """Without the wait (or with it after the gemm) the mainloop reads the tiles before
    they land: reported with the check, NaN in C without it."""
    lines = SGEMM_CP_ASYNC.read_text().splitlines()
    (wait,) = [i for i, line in enumerate(lines) if line.strip().startswith("cp_async_wait(0)")]
    del lines[wait]
    if where == "misplaced":
        (gemm,) = [i for i, line in enumerate(lines) if line.startswith(GEMM)]
        lines.insert(gemm + 1, "    cp_async_wait(0)")
    text = "\n".join(lines)
    kernel = _sgemm_cp_async(text)
    args, _ = _gemm_args("sgemm_nt", 100, 36, 13, 0.0)
    with pytest.raises(AccessError, match=r"^sgemm_cp_async\.cute:\d+:5: load of byte 0 of "
                       r"shared@sgemm_cp_async.cute:\d+:8, which a cp.async of thread "
                       r"\(0, 0, 0\) writes, before a cp.async wait lands it \(thread.load, "
                       r"thread \(0, 0, 0\), block \(0, 0, 0\)\)$"):  # fmt: skip
        native.run_kernel(kernel, (1, 1), args)
    if where == "missing":  # unchecked (another compilation): the tiles read as NaN
        native.run_kernel(kernel, (1, 1), args, check_shared=False)
        assert np.isnan(args["C"]).all()


# --------------------------------------------------------------------------- the CLI
def test_cli_reports_a_failed_check_and_can_turn_checks_off(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    racy = tmp_path / "racy.cute"
    racy.write_text((EXAMPLES / "transpose.cute").read_text().replace("  sync()\n", ""))
    run = ["run", str(racy), "--device", "cpu", "--shape", "S=64,32"]
    assert main(run) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {racy}:") and "shared-memory race" in err
    seen = []
    compile_kernel = native.compile_kernel

    def spy(op: KernelOp, bounds_check: bool, check_shared: bool, objects: Any = None
            ) -> native.NativeKernel:  # fmt: skip
        seen.append((bounds_check, check_shared))
        return compile_kernel(op, bounds_check, check_shared, objects)

    monkeypatch.setattr(native, "compile_kernel", spy)
    assert main([*run, "--no-shared-checks", "--no-bounds-check"]) == 0
    assert seen == [(False, False)]
