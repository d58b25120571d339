"""Warp-collective atoms in the reference interpreter (cutec/cpu/collective.py) and the
native backend (cutec/cpu/codegen_collective.py): the single-warp ldmatrix + mma.sync
kernel against the atom emulator bit for bit (and native against the interpreter),
ldmatrix's emulation against the PTX ISA's fragment figure, divergent collectives,
ldmatrix's shared-memory checks, and examples/sgemm_sm80.cute (swizzled smem,
multistage cp.async, ldmatrix, mma.sync) against float64, in both backends and through
cutec.jit(device="cpu")."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import cutec
import cutec.runtime as rt
from cutec.atoms.copy import copy_atom
from cutec.atoms.emulate import emulate_copy, emulate_mma, gather, scatter
from cutec.cpu import native
from cutec.cpu.reference import AccessError, InterpreterError, run_kernel
from cutec.driver import Options, Source, Stage, compile
from cutec.ir.dialects.builtin import KernelOp
from cutec.ir.parser import parse_module
from cutec.ir.verifier import verify
from cutec.layout import Layout, Swizzle, composition, tile_to_shape
from tests.cpu.mma_cases import (
    MMA_ATOM_KERNEL,
    MMA_CASES,
    MMA_REGISTERS_KERNEL,
    case_atom,
    case_inputs,
)

EXAMPLES = Path(__file__).parents[2] / "examples"


def _kernel(source: Source, **defines: object) -> KernelOp:
    module = compile(source, Stage.THREAD, Options(defines=defines)).module
    (kernel,) = module.walk_type(KernelOp)  # type: ignore[union-attr]
    return kernel


def run_mma_case(
    case: str, backend: object = run_kernel, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(A, B, C before, C after) of the single-warp kernel run by `backend` (the
    interpreter's or the native backend's run_kernel)."""
    a, b, c0 = case_inputs(case, seed)
    c = c0.copy(order="F")
    kernel = _kernel(Source.from_file(MMA_ATOM_KERNEL), **MMA_CASES[case])
    backend(kernel, 1, {"A": a, "B": b, "C": c})  # type: ignore[operator]
    return a, b, c0, c


@pytest.mark.parametrize("case", sorted(MMA_CASES))
def test_single_warp_mma_kernel_equals_the_atom_emulator_bit_for_bit(case: str) -> None:
    """ldmatrix (x1/x2/x4, .trans), the register packing and mma.sync lowered and run
    by the interpreter give exactly what the atom's emulator gives on the whole tiles
    (and, the inputs being small integers, the float64 product)."""
    atom = case_atom(case)
    a, b, c0, c = run_mma_case(case)
    d = emulate_mma(atom, gather(atom, "a", a), gather(atom, "b", b), gather(atom, "c", c0))
    want = scatter(atom, "c", d)
    assert c.dtype == want.dtype
    assert np.ascontiguousarray(c).tobytes() == np.ascontiguousarray(want).tobytes()
    exact = a.astype(np.float64) @ b.astype(np.float64).T + c0.astype(np.float64)
    assert np.array_equal(c.astype(np.float64), exact)


@pytest.mark.parametrize("case", sorted(MMA_CASES))
def test_single_warp_mma_kernel_runs_natively_as_the_interpreter_bit_for_bit(case: str) -> None:
    """The native backend's ldmatrix (shuffles from the emulator's byte tables) and
    mma.sync (the emulator, called from the warp code) give the interpreter's bits, on
    inputs that are not small integers where the type has the bits for it (C's
    rounding then depends on the order of the sums)."""
    kernel = _kernel(Source.from_file(MMA_ATOM_KERNEL), **MMA_CASES[case])
    assert native.compile_kernel(kernel).program.uses_warp_hook
    a, b, c0 = case_inputs(case, seed=5)
    if a.dtype.kind == "f":  # fractions: the float sums round
        rng = np.random.default_rng(6)
        a = (a.astype(np.float32) * rng.uniform(0.5, 1.5, a.shape)).astype(a.dtype)
        b = (b.astype(np.float32) / rng.uniform(0.5, 7.0, b.shape)).astype(b.dtype)
    got = []
    for backend in (run_kernel, native.run_kernel):
        c = c0.copy(order="F")
        backend(kernel, 1, {"A": a, "B": b, "C": c})  # type: ignore[operator]
        got.append(np.ascontiguousarray(c).tobytes())
    assert got[0] == got[1]
    atom = case_atom(case)
    _, _, _, c = run_mma_case(case, native.run_kernel)
    a, b, c0 = case_inputs(case)
    want = scatter(atom, "c", emulate_mma(atom, *(gather(atom, o, x) for o, x in
                                                  (("a", a), ("b", b), ("c", c0)))))  # fmt: skip
    assert np.ascontiguousarray(c).tobytes() == np.ascontiguousarray(want).tobytes()


def test_gemm_of_one_atom_in_the_rank_1_form() -> None:
    """CuTe's (V) x (V) => (V) gemm, one atom's fragments sliced out, gives the same C."""
    text = MMA_ATOM_KERNEL.read_text()
    assert "gemm(mma, tCrA, tCrB, tCrC)" in text
    text = text.replace(
        "gemm(mma, tCrA, tCrB, tCrC)", "gemm(mma, tCrA[_, 0, 0], tCrB[_, 0, 0], tCrC[_, 0, 0])"
    )
    a, b, c0 = case_inputs("f16_f16acc")
    c = c0.copy(order="F")
    kernel = _kernel(Source.from_file(MMA_ATOM_KERNEL, text), **MMA_CASES["f16_f16acc"])
    run_kernel(kernel, 1, {"A": a, "B": b, "C": c})
    _, _, _, want = run_mma_case("f16_f16acc")
    assert np.array_equal(c, want)


def test_mma_with_fragments_copied_from_global_memory() -> None:
    """f64's mma.sync m8n8k4, its fragments loaded by plain copies of partition_A/B/C."""
    kernel = _kernel(Source.from_file(MMA_REGISTERS_KERNEL))
    rng = np.random.default_rng(4)
    a, b = rng.integers(-4, 5, (8, 4)).astype(np.float64), rng.integers(-4, 5, (8, 4)) * 0.5
    c0 = np.asfortranarray(rng.integers(-4, 5, (8, 8)).astype(np.float64))
    for backend in (run_kernel, native.run_kernel):
        c = c0.copy(order="F")
        backend(kernel, 1, {"A": a, "B": b, "C": c})  # type: ignore[operator]
        assert np.array_equal(c, a @ b.T + c0)


@pytest.mark.parametrize("num", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_ldmatrix_emulation_is_the_isa_fragment_figure(num: int, trans: bool) -> None:
    """Matrix m's row r comes from the address of lane 8m + r; lane l receives, in
    register m, elements (l/4, 2(l%4) + h) of matrix m, or with .trans (2(l%4) + h, l/4).
    Lanes past 8 * num supply addresses that must be ignored (garbage rows here)."""
    name = f"SM75_U16x{2 * num}_LDSM_T" if trans else f"SM75_U32x{num}_LDSM_N"
    rng = np.random.default_rng(num)
    rows = rng.integers(0, 1 << 16, (32, 8)).astype(np.uint16)  # row supplied by each lane
    got = emulate_copy(copy_atom(name), rows.view(np.uint8)).view(np.uint16)
    for lane in range(32):
        for m in range(num):
            for h in range(2):
                r, col = (
                    (2 * (lane % 4) + h, lane // 4) if trans else (lane // 4, 2 * (lane % 4) + h)
                )
                assert got[lane, 2 * m + h] == rows[8 * m + r, col], (lane, m, h)


def test_a_collective_some_lanes_skip_is_reported() -> None:
    text = """
module {
  kernel @k(%g: !gpu.ptr<f16, global>) attributes {reqntid = array<i32: 32, 1, 1>} {
    %s = thread.alloc_shared {bytes = 256 : i64, align = 128 : i64} : !gpu.ptr<f16, shared>
    %t = gpu.thread_id x : index
    %c16 = arith.constant 16 : index
    %lt = arith.cmpi slt, %t, %c16 : index
    scf.if %lt {
      %r = thread.atom "SM75_U32x1_LDSM_N"(%s) {role = "copy"}
        : (!gpu.ptr<f16, shared>) -> (vector<2xf16>)
      scf.yield
    }
    return
  }
}
"""
    module = parse_module(text, "k.mlir")
    verify(module)
    (kernel,) = module.walk_type(KernelOp)
    reports = []
    for backend in (run_kernel, native.run_kernel):
        with pytest.raises(InterpreterError) as info:
            backend(kernel, 1, [np.zeros(8, np.float16)])  # type: ignore[operator]
        reports.append(str(info.value))
    assert reports[0] == reports[1]
    assert reports[1] == (
        "k.mlir:9:12: divergent warp-collective thread.atom in block (0, 0, 0): thread "
        "(16, 0, 0) does not reach it while other lanes of its warp wait at it"
    )


LDSM_KERNEL = """
module {
  kernel @k(%g: !gpu.ptr<f16, global>) attributes {reqntid = array<i32: NTID, 1, 1>} {
    %s = thread.alloc_shared {bytes = 512 : i64, align = 128 : i64} : !gpu.ptr<f16, shared>
    %t = gpu.thread_id x : index
    %c8 = arith.constant 8 : index
    %o = arith.muli %t, %c8 : index
    %p = thread.ptr_add %s, %o : !gpu.ptr<f16, shared>, index
    %v = arith.constant 1.0 : f16
    %w = thread.from_elements %v, %v, %v, %v : vector<4xf16>
    %c4 = arith.constant 4 : index
    %p4 = thread.ptr_add %p, %c4 : !gpu.ptr<f16, shared>, index
    WRITE
    BARRIER
    %c0 = arith.constant 0 : index
    %c31 = arith.constant 31 : index
    %u = READ
    %row = arith.constant ROW : index
    %o2 = arith.muli %u, %row : index
    %q = thread.ptr_add %s, %o2 : !gpu.ptr<f16, shared>, index
    %r:4 = thread.atom "SM75_U32x4_LDSM_N"(%q) {role = "copy"}
      : (!gpu.ptr<f16, shared>) -> (vector<2xf16>, vector<2xf16>, vector<2xf16>, vector<2xf16>)
    %e = thread.extract %r#3 {pos = 1 : i64} : vector<2xf16>
    thread.store %e, %g : f16, !gpu.ptr<f16, global>
    return
  }
}
"""
SAME = "arith.addi %t, %c0 : index"  # lane t reads the row it wrote
LDSM_WRITE_ALL = (
    "thread.store %w, %p : vector<4xf16>, !gpu.ptr<f16, shared>\n"
    "    thread.store %w, %p4 : vector<4xf16>, !gpu.ptr<f16, shared>"
)
LDSM_WRITE_TWO = (  # elements 8 t and 8 t + 4 only
    "thread.store %v, %p : f16, !gpu.ptr<f16, shared>\n"
    "    thread.store %v, %p4 : f16, !gpu.ptr<f16, shared>"
)


def _ldsm_report(
    ntid: int = 32,
    row: int = 8,
    write: str = LDSM_WRITE_ALL,
    barrier: bool = True,
    read: str = "arith.addi %t, %c8 : index",
) -> str | None:
    """Both backends' report (the same text) on the ldmatrix kernel, None if it runs:
    each lane writes the 16 bytes at element 8 t of a 512-byte shared buffer (or only
    two f16s), then lane t gives ldmatrix the row at element ROW * `read`."""
    text = LDSM_KERNEL.replace("NTID", str(ntid)).replace("ROW", str(row))
    text = text.replace("WRITE", write).replace("BARRIER", "gpu.barrier" if barrier else "")
    module = parse_module(text.replace("READ", read), "ld.mlir")
    verify(module)
    (kernel,) = module.walk_type(KernelOp)
    reports = []
    for backend in (run_kernel, native.run_kernel):
        try:
            backend(kernel, 1, [np.zeros(8, np.float16)])  # type: ignore[operator]
            reports.append(None)
        except (AccessError, InterpreterError) as e:
            reports.append(str(e))
    assert reports[0] == reports[1] or "race" in str(reports[1])
    return reports[1]


def test_ldmatrix_reads_are_checked_in_both_backends() -> None:
    """ldmatrix's rows go through the bounds, alignment and shared-memory checks as
    each reading lane's load (all 32 lanes for x4), with the same report in both
    backends (for a race, the same form: which access is found second differs)."""
    at = "ld.mlir:22:12: "
    where = "(thread.atom, thread ({}, 0, 0), block (0, 0, 0))"
    assert _ldsm_report(read="arith.subi %c31, %t : index") is None  # all rows, reversed
    assert _ldsm_report(row=8) == (  # lanes 24.. read past the end
        f"{at}out-of-bounds load of 16 bytes at byte offset 512 of shared@ld.mlir:4:10 "
        f"(512 bytes) {where.format(24)}"
    )
    assert _ldsm_report(row=5, read=SAME) == (
        f"{at}misaligned load of 16 bytes at byte offset 10 of shared@ld.mlir:4:10 "
        f"{where.format(1)}"
    )
    assert _ldsm_report(write=LDSM_WRITE_TWO, read=SAME) == (
        f"{at}load of uninitialised shared memory: byte 2 of shared@ld.mlir:4:10 was not "
        f"written in this block {where.format(0)}"
    )
    race = _ldsm_report(barrier=False, read="arith.subi %c31, %t : index")
    assert race is not None and re.fullmatch(
        r"ld.mlir:(13|14|22):\d+: shared-memory race on byte \d+ of shared@ld.mlir:4:10: .*", race
    )
    assert _ldsm_report(ntid=16, read=SAME) == (
        f"{at}SM75_U32x4_LDSM_N runs on a warp of 32 lanes; this warp has 16 threads"
    )


# ------------------------------------------------------------------------ sgemm_sm80


def _hgemm_args(m: int, n: int, k: int, seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, (m, k)).astype(np.float16)  # (M,K) k-major
    b = rng.integers(-3, 4, (n, k)).astype(np.float16)  # (N,K) k-major
    c = np.asfortranarray(rng.integers(-3, 4, (m, n)).astype(np.float16))  # (M,N) m-major
    return a, b, c


@pytest.mark.parametrize("beta", [0.0, -1.0])
def test_sgemm_sm80_in_the_interpreter_against_float64(beta: float) -> None:
    """One 32x32 CTA (BM = BN = 32; the 2x2 atoms of 16x8x16 stay) over 4 k-tiles of 64,
    so the 3-stage cp.async ring wraps; small integers keep the f16 accumulation exact.
    beta = 0 must not read C (it is NaN)."""
    kernel = _kernel(Source.from_file(EXAMPLES / "sgemm_sm80.cute"), BM=32, BN=32)
    m, n, k = 32, 32, 256
    a, b, c0 = _hgemm_args(m, n, k, 0)
    c = c0.copy(order="F") if beta else np.full((m, n), np.nan, np.float16, order="F")
    args = {"A": a, "M": m, "K": k, "ldA": k, "B": b, "N": n, "ldB": k, "C": c, "ldC": m}
    run_kernel(kernel, (1, 1), {**args, "alpha": 2.0, "beta": beta})
    ref = 2.0 * (a.astype(np.float64) @ b.astype(np.float64).T) + beta * c0.astype(np.float64)
    assert np.array_equal(c.astype(np.float64), ref)


def test_sgemm_sm80_through_jit_on_the_cpu() -> None:
    """cutec.jit(device="cpu") runs the tensor-core kernel natively over 2x1 CTAs of
    32x32."""
    k = rt.jit(EXAMPLES / "sgemm_sm80.cute", device="cpu", BM=32, BN=32)
    m, n, kk = 64, 32, 128
    a, b, c0 = _hgemm_args(m, n, kk, 1)
    c = c0.copy(order="F")
    k(a, b, c, 1.0, 1.0)
    assert k.cpu_backend == "native"
    ref = a.astype(np.float64) @ b.astype(np.float64).T + c0.astype(np.float64)
    assert np.array_equal(c.astype(np.float64), ref)


def test_sgemm_sm80_natively_gives_the_interpreters_bits() -> None:
    """Fractional f16 inputs (the f16 accumulator rounds at every mma): the native
    backend's C is the interpreter's, bit for bit, and close to float64."""
    kernel = _kernel(Source.from_file(EXAMPLES / "sgemm_sm80.cute"), BM=32, BN=32)
    m, n, k = 32, 32, 128
    rng = np.random.default_rng(7)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (n, k)).astype(np.float16)
    c0 = np.asfortranarray(rng.uniform(-1, 1, (m, n)).astype(np.float16))
    args = {"A": a, "M": m, "K": k, "ldA": k, "B": b, "N": n, "ldB": k, "ldC": m,
            "alpha": 0.75, "beta": -0.5}  # fmt: skip
    got = []
    for backend in (run_kernel, native.run_kernel):
        c = c0.copy(order="F")
        backend(kernel, (1, 1), {**args, "C": c})  # type: ignore[operator]
        got.append(c)
    assert got[0].tobytes() == got[1].tobytes()
    ref = 0.75 * (a.astype(np.float64) @ b.astype(np.float64).T) - 0.5 * c0.astype(np.float64)
    assert np.linalg.norm(got[1] - ref) / np.linalg.norm(ref) < 5e-3


def test_sgemm_sm80_refuses_a_size_its_tiles_do_not_divide() -> None:
    """The kernel assumes M % BM == 0 (no residue tiles): a launch that breaks it is an
    argument error, before anything runs."""
    k = rt.jit(EXAMPLES / "sgemm_sm80.cute", device="cpu", BM=32, BN=32)
    a, b, c = _hgemm_args(48, 32, 64, 2)
    with pytest.raises(cutec.ArgumentError, match="M"):
        k(a, b, c, 1.0, 0.0)


def test_sgemm_sm80_swizzled_smem_addresses_are_the_layout_algebras() -> None:
    """Each cp.async of A lands where sA_layout = tile_to_shape(Sw<3,3,3> o (8,(8,8)):(8,(1,64)),
    (BM,BK,BP)) puts its element (so ldmatrix, which reads through the same layout, reads
    CuTe's swizzled tile, not merely one consistent with the writes); each ldmatrix row
    address is 16-byte aligned and inside one stage."""
    bm, bk, bp = 32, 64, 3
    kernel = _kernel(Source.from_file(EXAMPLES / "sgemm_sm80.cute"), BM=bm, BN=32)
    m, n, k = 32, 32, 128
    a, b, c = _hgemm_args(m, n, k, 3)
    args = {"A": a, "M": m, "K": k, "ldA": k, "B": b, "N": n, "ldB": k, "C": c, "ldC": m}
    run = run_kernel(kernel, (1, 1), {**args, "alpha": 1.0, "beta": 0.0}, trace=True)
    atom = composition(Swizzle(3, 3, 3), Layout((8, (8, 8)), (8, (1, 64))))
    s_layout = tile_to_shape(atom, (bm, bk, bp))
    pending: dict[tuple, int] = {}  # thread -> element index of its last cp.async load of A
    checked = 0
    for access in run.trace:
        if access.op.name != "thread.cp_async":
            continue
        if access.kind == "load":
            pending[access.thread] = access.offset // 2 if access.buffer == "A" else -1
            continue
        g = pending.pop(access.thread)
        if g < 0:
            continue  # a copy of B
        row, col = divmod(g, k)
        stage_bytes = 2 * bm * bk
        assert access.offset % stage_bytes == 2 * s_layout((row % bm, col % bk, 0)), g
        checked += 1
    # BP - 1 tiles in the prologue and one per k-tile, 16 bytes (8 elements) per copy
    assert checked == (bp - 1 + k // bk) * (bm * bk // 8)
    rows = [a_ for a_ in run.trace if a_.op.name == "thread.atom"]
    assert rows and all(a_.offset % 16 == 0 and a_.nbytes == 16 for a_ in rows)
