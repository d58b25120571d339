"""select-atoms on whole kernels: examples/auto_atoms.cute (every atom `auto`) takes the
tensor-core path for f16/bf16/tf32 and runs correctly in the interpreter; the remarks say
what was chosen and why; an f32 kernel keeps UniversalFMA with cp.async and ld.shared;
what the gmem layouts do not allow makes cp.async narrower or a UniversalCopy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cutec.cli import main
from cutec.cpu.reference import run_kernel
from cutec.driver import Options, Result, Source, Stage, compile
from cutec.ir.attributes import ArrayAttr, StringAttr
from cutec.ir.dialects.builtin import KernelOp
from cutec.ir.dialects.cute_compute import CopyAsyncOp, CopyOp, MakeTiledCopyOp, MakeTiledMmaOp
from cutec.passes.select_atoms import SelectAtoms

ROOT = Path(__file__).parents[2]
AUTO_ATOMS = ROOT / "examples" / "auto_atoms.cute"
SMALL = {"BM": 32, "BN": 32}  # one 2x2-warp tile of 32x16 per 32x32 CTA, BK = 32 stays


def _compile(text: str, stage: Stage = Stage.CUTE, target: str = "sm_80", **defines) -> Result:
    return compile(
        Source.from_file(AUTO_ATOMS, text), stage, Options(defines=defines, target=target)
    )


def _remarks(result: Result) -> dict[int, str]:
    """line -> remark message (select-atoms' remarks, one per line here; the predicate
    pass's "global ..." lines are tested in test_predicate_views)."""
    return {
        d.location.line: d.message
        for d in result.remarks
        if d.location is not None and not d.message.startswith("global ")
    }


def _atoms(result: Result) -> dict[str, list[str]]:
    module = result.module
    assert module is not None
    out: dict[str, list[str]] = {"mma": [], "copy": [], "async": [], "sync": []}
    for op in module.walk():
        if isinstance(op, MakeTiledMmaOp):
            out["mma"].append(op.result.type.atom)  # type: ignore[union-attr]
        elif isinstance(op, MakeTiledCopyOp):
            out["copy"].append(op.result.type.atom)  # type: ignore[union-attr]
        elif isinstance(op, CopyAsyncOp):
            out["async"].append(op.attributes["atom"].value)  # type: ignore[union-attr]
        elif isinstance(op, CopyOp) and "atom" in op.attributes:
            out["sync"].append(op.attributes["atom"].value)  # type: ignore[union-attr]
    return out


# --------------------------------------------------------------------------- remarks


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_remarks_of_auto_atoms(capsys, arch: str) -> None:
    src = str(AUTO_ATOMS)
    assert main(["compile", src, "--emit=cute", "--arch", arch, "--remarks"]) == 0
    lines = capsys.readouterr().err.splitlines()
    # The predicate pass's "global ..." lines are tested in test_predicate_views.
    err = [line for line in lines if ": remark: " in line and ": remark: global " not in line]
    mma = (
        f"{src}:25:9: remark: MMA by SM80_16x8x16_F32F16F16F32_TN "
        "(mma.sync m16n8k16, D f32 = A f16 * B f16 + C f32)"
    )
    hopper = "; wgmma not used: select-atoms does not choose Hopper's wgmma yet"
    cp_async = "remark: copy by SM80_CP_ASYNC_CACHEGLOBAL<uint128_t> (cp.async.cg, 16 bytes)"
    assert err == [
        mma + (hopper if arch == "sm_90a" else ""),
        f"{src}:56:5: {cp_async}",
        f"{src}:57:5: {cp_async}",
        f"{src}:61:5: remark: copy by SM75_U32x4_LDSM_N (ldmatrix.x4, K-major A)",
        f"{src}:62:5: remark: copy by SM75_U32x2_LDSM_N (ldmatrix.x2, K-major B); "
        "SM75_U32x4_LDSM_N not used: a thread's B fragment holds fewer values than it loads",
    ]


def test_printed_ir_after_select_atoms_round_trips_and_selects_the_same() -> None:
    result = _compile(AUTO_ATOMS.read_text())
    text = str(result.text)
    again = compile(Source(text, "auto_atoms.mlir", "mlir"), Stage.CUTE, Options(target="sm_80"))
    assert str(again.text) == text  # select-atoms again: the {auto} atoms are kept
    assert "cute.make_tiled_mma {auto}" in text and '{auto, operand = "A"}' in text
    assert "choice" not in text  # reported, and dropped
    assert not [d for d in again.remarks if d.message.startswith(("MMA", "copy by SM75"))]


def test_the_frontend_records_each_choice_and_select_atoms_reports_the_record() -> None:
    """The auto atoms are chosen once, by the frontend: their make ops carry the reasons
    (``choice``), and select-atoms says those, not a choice of its own."""
    options = Options(target="sm_80", pipeline="")  # before any pass
    built = compile(Source.from_file(AUTO_ATOMS), Stage.CUTE, options)
    assert built.module is not None
    mma = next(op for op in built.module.walk() if isinstance(op, MakeTiledMmaOp))
    assert mma.choice is not None
    summary = mma.choice.elements[0].value  # type: ignore[union-attr]
    assert summary.startswith("MMA by SM80_16x8x16_F32F16F16F32_TN (mma.sync m16n8k16")
    copies = [op for op in built.module.walk() if isinstance(op, MakeTiledCopyOp) and op.auto]
    assert sorted(op.choice.elements[0].value for op in copies) == [  # type: ignore[union-attr]
        "copy by SM75_U32x2_LDSM_N (ldmatrix.x2, K-major B)",
        "copy by SM75_U32x4_LDSM_N (ldmatrix.x4, K-major A)",
    ]
    # A record the pass could not have made itself is said as written, and dropped.
    mma.attributes["choice"] = ArrayAttr((StringAttr("MMA by the record (not recomputed)"),))
    select = SelectAtoms()
    select.run(built.module)
    said = [d.message for d in select.take_remarks()]
    assert said[0] == "MMA by the record (not recomputed)"
    assert "copy by SM75_U32x4_LDSM_N (ldmatrix.x4, K-major A)" in said
    assert mma.choice is None and all(op.choice is None for op in copies)


# --------------------------------------------------------------------------- the interpreter


def _gemm_args(t: str, m: int, n: int, k: int, seed: int, pad: int = 0) -> dict:
    """Small integers: every product and sum is exact in f16, bf16, tf32 and f32. A's rows
    are `pad` elements longer than K (ldA = K + pad)."""
    rng = np.random.default_rng(seed)
    element: type = np.float16 if t == "f16" else np.float32  # tf32 takes float32 arrays
    if t == "bf16":
        element = pytest.importorskip("ml_dtypes").bfloat16
    a = rng.integers(-3, 4, (m, k + pad)).astype(element)  # (M,K) k-major, row stride k+pad
    b = rng.integers(-3, 4, (n, k)).astype(element)
    c = np.asfortranarray(rng.integers(-3, 4, (m, n)).astype(np.float32))  # (M,N) m-major
    return {"A": a, "M": m, "K": k, "ldA": k + pad, "B": b, "N": n, "ldB": k, "C": c,
            "ldC": m, "alpha": 2.0, "beta": -1.0}  # fmt: skip


def _run(kernel_result: Result, args: dict, grid: tuple[int, int]) -> np.ndarray:
    module = kernel_result.module
    assert module is not None
    (kernel,) = module.walk_type(KernelOp)
    c0 = args["C"].copy(order="F")
    run_kernel(kernel, grid, args)
    k = args["K"]
    a = args["A"][:, :k].astype(np.float64)
    b = args["B"][:, :k].astype(np.float64)
    return 2.0 * (a @ b.T) - c0.astype(np.float64)


@pytest.mark.parametrize(
    ("t", "mma"),
    [
        ("f16", "SM80_16x8x16_F32F16F16F32_TN"),
        ("bf16", "SM80_16x8x16_F32BF16BF16F32_TN"),
        ("tf32", "SM80_16x8x8_F32TF32TF32F32_TN"),
    ],
)
def test_auto_atoms_in_the_interpreter_against_float64(t: str, mma: str) -> None:
    """2x1 CTAs of 32x32 over 2 k-tiles: cp.async, ldmatrix and mma.sync as chosen."""
    result = _compile(AUTO_ATOMS.read_text(), Stage.THREAD, T=t, **SMALL)
    atoms = _atoms(_compile(AUTO_ATOMS.read_text(), T=t, **SMALL))
    assert atoms["mma"] == [mma]
    assert atoms["async"] == ["SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>"] * 2
    assert sorted(atoms["copy"])[:2] == ["SM75_U32x2_LDSM_N", "SM75_U32x4_LDSM_N"]
    args = _gemm_args(t, 64, 32, 64, seed=3)
    ref = _run(result, args, (2, 1))
    assert np.array_equal(args["C"].astype(np.float64), ref)


def test_an_lda_known_only_as_a_multiple_of_4_halves_the_cp_async() -> None:
    """ldA % 4: rows start 8-byte aligned only, so A's copy is an 8-byte cp.async.ca
    (B keeps 16 bytes); it still computes the right product with padded rows."""
    text = AUTO_ATOMS.read_text().replace("ldA % 8 == 0", "ldA % 4 == 0")
    cute = _compile(text, **SMALL)
    remarks = _remarks(cute)
    offset = "32*bid_x*ldA+32*k_tile+ldA*(tid_x//4)+8*(tid_x%4)"
    assert remarks[56] == (
        "copy by SM80_CP_ASYNC_CACHEALWAYS<uint64_t> (cp.async.ca, 8 bytes); 16-byte cp.async "
        f"not used: the offset {offset} is not known to be a multiple of 8"
    )
    assert remarks[57] == "copy by SM80_CP_ASYNC_CACHEGLOBAL<uint128_t> (cp.async.cg, 16 bytes)"
    args = _gemm_args("f16", 32, 32, 64, seed=4, pad=4)
    ref = _run(_compile(text, Stage.THREAD, **SMALL), args, (1, 1))
    assert np.array_equal(args["C"].astype(np.float64), ref)


def test_an_unknown_odd_lda_is_a_universal_copy() -> None:
    """With nothing known of ldA, a row may start at any element: no cp.async fits (it
    moves 4 bytes at least: two f16), and the plain copy moves one element at a time."""
    text = AUTO_ATOMS.read_text().replace(", ldA % 8 == 0", "")
    remarks = _remarks(_compile(text, **SMALL))
    offset = "32*bid_x*ldA+32*k_tile+ldA*(tid_x//4)+8*(tid_x%4)"
    assert remarks[56] == (
        "copy by UniversalCopy<uint16_t> (16-bit accesses); "
        + "; ".join(
            f"{nbytes}-byte cp.async not used: the offset {offset} is not known to be a "
            f"multiple of {nbytes // 2}"
            for nbytes in (16, 8, 4)
        )
    )
    args = _gemm_args("f16", 32, 32, 32, seed=5, pad=1)
    ref = _run(_compile(text, Stage.THREAD, **SMALL), args, (1, 1))
    assert np.array_equal(args["C"].astype(np.float64), ref)


def test_without_a_fence_and_wait_the_copy_stays_synchronous() -> None:
    text = (
        AUTO_ATOMS.read_text()
        .replace("    cp_async_fence()", "    //")
        .replace("    cp_async_wait(0)", "    //")
    )
    result = _compile(text, **SMALL)
    assert _atoms(result)["async"] == []
    assert "no cp_async_fence() and cp_async_wait() follow this copy" in _remarks(result)[56]


F32_AUTO = """
kernel sgemm_auto[BM: int = 32, BN: int = 32, BK: int = 8](
    A: f32[M, K] : (ldA, 1) align 16, B: f32[N, K] : (ldB, 1) align 16,
    C: f32[M, N] : (1, ldC) align 16, alpha: f32, beta: f32)
  assume M % BM == 0, N % BN == 0, K % BK == 0, ldA % 4 == 0, ldB % 4 == 0
  grid (ceil_div(M, BM), ceil_div(N, BN)) threads 64
{
  sA = smem f32[(BM, BK) : (BK, 1)]
  sB = smem f32[(BN, BK) : (BK, 1)]
  copy_a = tiled_copy(auto, thr = (32, 2) : (2, 1), val = (1, 4))
  mma = tiled_mma(auto, atoms = (8, 8, 1))
  gA = local_tile(A, (BM, BN, BK), (block.x, block.y, _), step = (1, X, 1))
  gB = local_tile(B, (BM, BN, BK), (block.x, block.y, _), step = (X, 1, 1))
  gC = local_tile(C, (BM, BN, BK), (block.x, block.y, _), step = (1, 1, X))
  tAgA = copy_a.slice(thread.x).partition_S(gA)
  tAsA = copy_a.slice(thread.x).partition_D(sA)
  tBgB = copy_a.slice(thread.x).partition_S(gB)
  tBsB = copy_a.slice(thread.x).partition_D(sB)
  thr_mma = mma.slice(thread.x)
  tCgC = thr_mma.partition_C(gC)
  tCrC = thr_mma.make_fragment_C(tCgC)
  clear(tCrC)
  tCrA = thr_mma.partition_fragment_A(sA)
  tCrB = thr_mma.partition_fragment_B(sB)
  s2r_copy_a = tiled_copy_A(auto, mma)
  s2r_copy_b = tiled_copy_B(auto, mma)
  s2r_a = s2r_copy_a.slice(thread.x)
  s2r_b = s2r_copy_b.slice(thread.x)
  tXsA = s2r_a.partition_S(sA)
  tXrA = s2r_a.retile_D(tCrA)
  tXsB = s2r_b.partition_S(sB)
  tXrB = s2r_b.retile_D(tCrB)
  for k_tile in range(size(tAgA, 3)) {
    copy(copy_a, tAgA[_, _, _, k_tile], tAsA)
    copy(copy_a, tBgB[_, _, _, k_tile], tBsB)
    cp_async_fence()
    cp_async_wait(0)
    sync()
    copy(s2r_copy_a, tXsA, tXrA)
    copy(s2r_copy_b, tXsB, tXrB)
    gemm(mma, tCrA, tCrB, tCrC)
    sync()
  }
  axpby(alpha, tCrC, beta, tCgC)
}
"""


def test_an_f32_kernel_keeps_fma_with_cp_async_and_ld_shared() -> None:
    """f32 operands: UniversalFMA (the remark says how to allow tf32); gmem -> smem by
    16-byte cp.async; smem -> registers by ld.shared (the FMA's fragments are too small
    for ldmatrix). Run against float64 over 2x2 CTAs."""
    source = Source("" + F32_AUTO, "f32_auto.cute", "cute")
    cute = compile(source, Stage.CUTE, Options(target="sm_80"))
    atoms = _atoms(cute)
    assert atoms["mma"] == ["UniversalFMA_F32F32F32F32"]
    assert atoms["async"] == ["SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>"] * 2
    assert atoms["sync"] == ["UniversalCopy<uint32_t>"] * 2
    remarks = _remarks(cute)
    lines = F32_AUTO.splitlines()
    s2r_line = lines.index("    copy(s2r_copy_a, tXsA, tXrA)") + 1
    assert remarks[s2r_line].startswith(
        "copy by UniversalCopy<uint32_t> (32-bit accesses); SM75_U32x4_LDSM_N not used: a "
        "thread's A fragment holds fewer values than it loads;"
    )
    mma_line = F32_AUTO.splitlines().index("  mma = tiled_mma(auto, atoms = (8, 8, 1))") + 1
    assert "declare A and B tf32" in remarks[mma_line]
    result = compile(source, Stage.THREAD, Options(target="sm_80"))
    rng = np.random.default_rng(6)
    m, n, k = 64, 64, 16
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((n, k)).astype(np.float32)
    c = np.asfortranarray(rng.standard_normal((m, n)).astype(np.float32))
    c0 = c.copy(order="F")
    args = {"A": a, "M": m, "K": k, "ldA": k, "B": b, "N": n, "ldB": k, "C": c, "ldC": m,
            "alpha": 1.5, "beta": 0.5}  # fmt: skip
    (kernel,) = result.module.walk_type(KernelOp)  # type: ignore[union-attr]
    run_kernel(kernel, (2, 2), args)
    ref = 1.5 * (a.astype(np.float64) @ b.astype(np.float64).T) + 0.5 * c0
    assert np.allclose(c, ref, rtol=1e-5, atol=1e-5)


def test_a_named_mma_with_auto_operand_copies() -> None:
    """The caller binds MMA to a named atom: the operand copies are still chosen (made
    after the MMA's own make op, which is written where the source writes it)."""
    text = AUTO_ATOMS.read_text()
    result = _compile(text, Stage.THREAD, MMA="SM80_16x8x16_F32F16F16F32_TN", **SMALL)
    cute = _compile(text, MMA="SM80_16x8x16_F32F16F16F32_TN", **SMALL)
    assert 25 not in _remarks(cute)  # a named atom is not the compiler's choice
    assert _remarks(cute)[61] == "copy by SM75_U32x4_LDSM_N (ldmatrix.x4, K-major A)"
    args = _gemm_args("f16", 32, 32, 32, seed=7)
    ref = _run(result, args, (1, 1))
    assert np.array_equal(args["C"].astype(np.float64), ref)


def test_residue_tiles_of_f32_are_zero_filling_4_byte_cp_async() -> None:
    """Sizes the tiles do not divide: the predicate pass guards the copies (masked
    elements become zeros), so each element is its own cp.async with src-size 0 where
    masked (the _ZFILL atom); 2x2 CTAs of 32x32 over a 40x36 C and K = 20 (BK = 8)."""
    src = F32_AUTO.replace("assume M % BM == 0, N % BN == 0, K % BK == 0, ", "assume ")
    source = Source(src, "residue.cute", "cute")
    atoms = _atoms(compile(source, Stage.CUTE, Options(target="sm_80")))
    assert atoms["async"] == ["SM80_CP_ASYNC_CACHEALWAYS_ZFILL<uint32_t>"] * 2
    result = compile(source, Stage.THREAD, Options(target="sm_80"))
    (kernel,) = result.module.walk_type(KernelOp)  # type: ignore[union-attr]
    m, n, k = 40, 36, 20
    rng = np.random.default_rng(8)
    a = rng.integers(-3, 4, (m, k + 4)).astype(np.float32)  # ldA = k + 4: a multiple of 4
    b = rng.integers(-3, 4, (n, k + 4)).astype(np.float32)
    c = np.asfortranarray(rng.integers(-3, 4, (m, n)).astype(np.float32))
    c0 = c.copy(order="F")
    args = {"A": a, "M": m, "K": k, "ldA": k + 4, "B": b, "N": n, "ldB": k + 4, "C": c,
            "ldC": m, "alpha": 1.0, "beta": 1.0}  # fmt: skip
    run_kernel(kernel, (2, 2), args)
    ref = a[:, :k].astype(np.float64) @ b[:, :k].astype(np.float64).T + c0
    assert np.array_equal(c.astype(np.float64), ref)


def test_operand_copies_of_a_stage_chosen_at_run_time_are_ldmatrix() -> None:
    """Two smem stages, the stage k_tile % 2: the first partition_S of each operand copy
    reads a slice at a symbolic offset, known to be a multiple of 16 bytes; ldmatrix is
    chosen, and 1x2 CTAs over 3 k-tiles compute the product."""
    source = Source.from_file(Path(__file__).parent / "data" / "auto_atoms_staged.cute")
    options = Options(defines=SMALL, target="sm_80")
    atoms = _atoms(compile(source, Stage.CUTE, options))
    assert atoms["mma"] == ["SM80_16x8x16_F32F16F16F32_TN"]
    assert sorted(atoms["copy"]) == ["SM75_U32x2_LDSM_N", "SM75_U32x4_LDSM_N", "auto"]
    args = _gemm_args("f16", 32, 64, 96, seed=9)
    ref = _run(compile(source, Stage.THREAD, options), args, (1, 2))
    assert np.array_equal(args["C"].astype(np.float64), ref)
