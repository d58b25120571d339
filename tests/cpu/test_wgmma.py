"""wgmma on the CPU (cutec/cpu/wgmma.py, both backends): hand-written thread-level
kernels (tests/cpu/wgmma_cases.py) against float64 numpy, and one planted bug per check."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from cutec.cpu import native, reference
from cutec.cpu.reference import AccessError, InterpreterError
from cutec.ir.dialects.builtin import KernelOp
from cutec.ir.parser import parse_module
from cutec.ir.verifier import verify
from tests.cpu.wgmma_cases import Case

BACKENDS = [reference, native]


def _kernel(text: str, file: str = "wg.mlir") -> KernelOp:
    module = parse_module(text, file)
    verify(module)
    (kernel,) = module.walk_type(KernelOp)
    return kernel


def _run(backend: Any, case: Case, text: str | None = None, seed: int = 0,
         check_shared: bool = True, warpgroup: int = 0
         ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    a, b = case.inputs(seed)
    img = case.image(a, b)
    areg = case.a_registers(a).reshape(-1) if case.rs else np.zeros(1, np.int32)
    dtype = np.float32 if case.acc == "f32" else np.int32
    out = np.zeros(case.threads * case.atom.fragment("d").count, dtype)
    kernel = _kernel(text or case.kernel())
    backend.run_kernel(kernel, 1, [img, areg, out], check_shared=check_shared)
    return case.tile(out, warpgroup), case.reference(a, b)


def _close(case: Case, got: np.ndarray, want: np.ndarray) -> None:
    tol = 0 if case.acc == "f32" else 1e-3 * np.abs(want).max()
    assert np.all(np.abs(got - want) <= tol), (np.abs(got - want).max(), got[:2, :4], want[:2, :4])


CASES = [
    Case(8),
    Case(64, b_swizzle="64B", a_swizzle="64B"),
    Case(256),
    Case(64, a_swizzle="32B", b_swizzle="32B", kblocks=1),
    Case(64, a_swizzle="none", b_swizzle="none"),
    Case(64, acc="f16"),
    Case(64, ab="bf16"),
    Case(64, ab="tf32", a_swizzle="128B", b_swizzle="64B"),
    Case(64, a_major="MN", b_major="MN"),
    Case(64, a_major="MN", b_major="K", a_swizzle="none", b_swizzle="32B", kblocks=1),
    Case(64, b_major="MN", b_swizzle="64B"),
    Case(64, b_major="MN", b_swizzle="none", acc="f16"),
    Case(64, rs=True),
    Case(8, rs=True, acc="f16"),
    Case(16, loop=True, kblocks=4, warpgroups=2, cp_async=True),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_wgmma_products_match_float64(case: Case) -> None:
    got, want = _run(native, case)
    _close(case, got, want)


LOOP = Case(16, acc="f16", loop=True, kblocks=3, warpgroups=2, cp_async=True)


def test_both_backends_give_the_same_bits() -> None:
    """A k-loop carrying the accumulators through iter_args, one group in flight past
    each wait, two warpgroups, the stage landed by cp.async; and an RS case."""
    for case in (LOOP, Case(8, rs=True, ab="bf16")):
        outs = []
        for backend in BACKENDS:
            for warpgroup in range(case.warpgroups):
                got, want = _run(backend, case, seed=3, warpgroup=warpgroup)
                _close(case, got, want)
                outs.append(got)
        assert all(np.array_equal(outs[0], o) for o in outs)


def test_a_wrong_descriptor_gives_a_wrong_result() -> None:
    """The descriptor is decoded, not assumed: A's SBO halved reads other rows of A."""
    case = Case(8, kblocks=1)
    right, wrong = "{lbo = 16 : i32, sbo = 1024 : i32", "{lbo = 16 : i32, sbo = 512 : i32"
    text = case.kernel().replace(right, wrong, 1)
    got, want = _run(reference, case, text)
    assert np.abs(got - want).max() > 1


def _line(text: str, needle: str) -> int:
    """1-based line number of the first line of `text` containing `needle`."""
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def _report(case: Case, text: str, check_shared: bool = True) -> str:
    found = []
    for backend in BACKENDS:
        with pytest.raises((AccessError, InterpreterError)) as info:
            _run(backend, case, text, check_shared=check_shared)
        found.append(str(info.value))
    assert len(set(found)) == 1, found
    return found[0]


CASE = Case(8)
WAIT = "    thread.wgmma_wait {pending = 0 : i32}"
COMMIT = "    thread.wgmma_commit"


def test_accumulator_read_before_the_wait() -> None:
    text = CASE.kernel({WAIT: ""})
    line = _line(text, "thread.store %d1#0")
    assert _report(CASE, text) == (
        f"wg.mlir:{line}:5: accumulator read before the wait: thread.store accesses a register "
        f"that the wgmma at wg.mlir:{_line(text, '%d1:4')}:13 writes, before a "
        "thread.wgmma_wait completes it (thread.store, thread (0, 0, 0), block (0, 0, 0))"
    )


def test_early_stage_release() -> None:
    """Threads rewrite A's tile between the commit and the wait (after a barrier, so
    every warp has issued: the backends order warps differently between barriers)."""
    store = (
        "\n    gpu.barrier"
        "\n    %sa = thread.ptr_add %s, %t : !gpu.ptr<i32, shared>, i32"
        "\n    thread.store %t, %sa : i32, !gpu.ptr<i32, shared>"
    )
    text = CASE.kernel({COMMIT: COMMIT + store})
    wait, issue = _line(text, "wgmma_wait"), _line(text, "%d0:4")
    assert _report(CASE, text) == (
        f"wg.mlir:{wait}:5: early stage release: byte 1 of shared@wg.mlir:3:10, which the "
        f"wgmma at wg.mlir:{issue}:13 reads (operand A), was written before the "
        "thread.wgmma_wait that completes it (thread.wgmma_wait, thread (0, 0, 0), block "
        "(0, 0, 0))"
    )


def test_missing_proxy_fence() -> None:
    text = CASE.kernel({"    thread.fence_proxy_async": ""})
    assert _report(CASE, text) == (
        f"wg.mlir:{_line(text, '%d0:4')}:13: missing proxy fence: the wgmma reads byte 0 of "
        "shared@wg.mlir:3:10, which thread (0, 0, 0) wrote through the generic proxy and did "
        "not fence (thread.fence_proxy_async) after the write (thread.atom, thread (0, 0, 0), "
        "block (0, 0, 0))"
    )


def test_missing_wgmma_fence() -> None:
    text = CASE.kernel({"    thread.wgmma_fence": ""})
    assert _report(CASE, text) == (
        f"wg.mlir:{_line(text, '%d0:4')}:13: wgmma without a thread.wgmma_fence since its "
        "accumulator registers were last accessed (PTX requires wgmma.fence before the first "
        "wgmma and after any other access to its registers) (thread.atom, thread (0, 0, 0), "
        "block (0, 0, 0))"
    )


def test_divergent_commit() -> None:
    """Warps 0-1 and 2-3 commit at different ops: not one warpgroup instruction."""
    branch = (
        "    %c64 = arith.constant 64 : i32\n    %low = arith.cmpi slt, %t, %c64 : i32\n"
        "    scf.if %low {\n      thread.wgmma_commit\n      scf.yield\n    } else {\n"
        "      thread.wgmma_commit\n      scf.yield\n    }"
    )
    text = CASE.kernel({COMMIT: branch})
    assert _report(CASE, text) == (
        f"wg.mlir:{_line(text, 'thread.wgmma_commit')}:7: divergent warpgroup-collective "
        "thread.wgmma_commit: warp 2 (threads 64..95) does not reach it while warp 0 of its "
        "warpgroup does (thread.wgmma_commit, thread (64, 0, 0), block (0, 0, 0))"
    )


def test_missing_proxy_fence_after_cp_async() -> None:
    """A thread fences before its cp.async lands: the landing is a later generic write."""
    case = Case(8, cp_async=True, kblocks=1)
    wait = "    thread.cp_async_wait %grp {pending = 0 : i32}"
    fence = "    thread.fence_proxy_async"
    text = case.kernel().replace(wait, "WAIT").replace(fence, wait).replace("WAIT", fence)
    assert _report(case, text).startswith(
        f"wg.mlir:{_line(text, '%d0:4')}:13: missing proxy fence: the wgmma reads byte 0 of "
        "shared@wg.mlir:3:10, which thread (0, 0, 0) wrote through the generic proxy"
    )


def test_a_misaligned_descriptor_address() -> None:
    text = CASE.kernel().replace("%ao0 = arith.constant 0 : i32", "%ao0 = arith.constant 1 : i32")
    assert _report(CASE, text) == (
        f"wg.mlir:{_line(text, '%ad0 =')}:12: gmma_desc of shared-window address 2: the start "
        "address must be a multiple of 16 below 262144 (thread.gmma_desc, thread (0, 0, 0), "
        "block (0, 0, 0))"
    )


def test_a_batch_op_reached_by_part_of_a_warp() -> None:
    branch = (
        "    %c16 = arith.constant 16 : i32\n    %few = arith.cmpi slt, %t, %c16 : i32\n"
        "    scf.if %few {\n      thread.wgmma_commit\n      scf.yield\n    }"
    )
    text = CASE.kernel({COMMIT: branch})
    assert _report(CASE, text) == (
        f"wg.mlir:{_line(text, 'thread.wgmma_commit')}:7: divergent warp-collective "
        "thread.wgmma_commit in block (0, 0, 0): thread (16, 0, 0) does not reach it while "
        "other lanes of its warp wait at it"
    )


def test_a_wgmma_needs_a_whole_warpgroup() -> None:
    text = CASE.kernel().replace("array<i32: 128, 1, 1>", "array<i32: 96, 1, 1>")
    assert _report(CASE, text) == (
        f"wg.mlir:{_line(text, '%d0:4')}:13: {CASE.atom.name} runs on a warpgroup of 128 "
        "threads; this warpgroup has 96 (thread.atom, thread (0, 0, 0), block (0, 0, 0))"
    )


def test_through_jit_on_the_cpu() -> None:
    import cutec.runtime as rt  # the JIT path, as test_mbarrier's

    k = rt.jit(LOOP.kernel(), device="cpu")
    a, b = LOOP.inputs()
    out = np.zeros(LOOP.threads * LOOP.atom.fragment("d").count, np.int32)
    k(LOOP.image(a, b), np.zeros(1, np.int32), out, grid=(1, 1, 1))
    assert k.cpu_backend == "native"
    _close(LOOP, LOOP.tile(out), LOOP.reference(a, b))


def test_a_group_completes_for_the_whole_warpgroup() -> None:
    """Once a warp's wait returns, its warpgroup's wgmma has read its operands, so the
    warp may rewrite them at once (as wgmma_sm90's next stage copy does); the native
    backend runs warp 0 to its wait before warp 1 issues, so warp 0 waits for them."""
    store = (
        "\n    %sa = thread.ptr_add %s, %t : !gpu.ptr<i32, shared>, i32"
        "\n    thread.store %t, %sa : i32, !gpu.ptr<i32, shared>"
    )
    text = CASE.kernel({WAIT: WAIT + store})
    for backend in BACKENDS:
        got, want = _run(backend, CASE, text)
        _close(CASE, got, want)
