"""The tile heuristic (`cutec.heuristics.tile_plan`) decision by decision: the swizzle
of each row width puts the 8 rows an ldmatrix reads in distinct 16-byte bank
groups, the copy threads cover the tile, and impossible tiles are refused."""

from __future__ import annotations

import pytest

from cutec.heuristics.tile_plan import (
    TilePlanError,
    copy_bytes,
    plain_copy,
    plan_epilogue,
    plan_gemm,
    plan_operand,
)
from cutec.layout import Layout


@pytest.mark.parametrize(
    ("bits", "k_major", "mn", "bk", "atom"),
    [
        (16, True, 128, 64, "Sw<3,3,3> o _0 o (_8,_64):(_64,_1)"),  # CuTe's sgemm_sm80
        (16, True, 128, 32, "Sw<2,3,3> o _0 o (_8,_32):(_32,_1)"),
        (16, True, 128, 16, "Sw<1,3,3> o _0 o (_8,_16):(_16,_1)"),
        (16, False, 128, 32, "Sw<3,3,3> o _0 o (_64,_8):(_1,_64)"),
        (16, False, 32, 32, "Sw<2,3,3> o _0 o (_32,_8):(_1,_32)"),
        (32, True, 128, 32, "Sw<3,2,3> o _0 o (_8,_32):(_32,_1)"),  # tf32
        (32, False, 128, 16, "Sw<2,3,2> o _0 o (_32,_8):(_1,_32)"),  # tf32 MN-major
        (16, True, 128, 8, "(_8,_8):(_8,_1)"),  # 16-byte rows: nothing to swizzle
    ],
)
def test_smem_atom(bits: int, k_major: bool, mn: int, bk: int, atom: str) -> None:
    assert str(plan_operand("A", bits, k_major, mn, bk).smem_atom) == atom


# Every row width the plan uses: 16 to 128 bytes.
ROWS = [
    (bits, width)
    for bits in (16, 32)
    for width in (128 // bits, 256 // bits, 512 // bits, 1024 // bits)
]


@pytest.mark.parametrize(
    ("bits", "width", "k_major"),
    [(b, w, k) for b, w in ROWS for k in (True, False) if not (b == 32 and w == 32 and not k)],
)
def test_ldmatrix_rows_fall_in_distinct_bank_groups(bits: int, width: int, k_major: bool) -> None:
    """Column block c of rows 0..7 (one ldmatrix 8x8 matrix, or 8 rows of 16-byte
    stores) lands at 8 distinct 16-byte offsets modulo 128 bytes: one wavefront.
    (Not asked of an MN-major 32-bit tile of 128-byte rows: no ldmatrix reads it, and
    its copy writes whole rows; test_tf32_mn_major_reads_hit_32_banks checks it.)"""
    elems16 = 128 // bits
    mn, bk = (128, width) if k_major else (width, 128)
    atom = plan_operand("A", bits, k_major, mn, bk).smem_atom
    for c in range(width // elems16):
        coords = [(r, c * elems16) if k_major else (c * elems16, r) for r in range(8)]
        groups = {(atom(*rc) * bits // 8) % 128 // 16 for rc in coords}
        assert len(groups) == 8, (c, groups)


def test_tf32_mn_major_reads_hit_32_banks() -> None:
    """An MN-major tf32 tile is read by ld.shared: an m16n8k8 fragment's lanes (g, t)
    read (mn0 + g, k0 + t) for g < 8, t < 4. Every such warp read hits 32 distinct
    banks, and the tile's 16-byte chunks (4 elements along MN) stay contiguous for
    the copy's 16-byte stores."""
    atom = plan_operand("A", 32, False, 128, 32).smem_atom
    for mn0 in range(0, 32, 8):
        for k0 in range(0, 8, 4):
            banks = {atom(mn0 + g, k0 + t) % 32 for g in range(8) for t in range(4)}
            assert len(banks) == 32, (mn0, k0, sorted(banks))
    for mn0 in range(0, 32, 4):
        for k in range(8):
            first = atom(mn0, k)
            assert first % 4 == 0 and [atom(mn0 + i, k) for i in range(4)] == [
                first + i for i in range(4)
            ]


def test_copy_threads_cover_the_tile_once() -> None:
    """Every (mn, k) element of the tile is copied by exactly one (thread, value)."""
    for k_major, (mn, bk) in [(True, (128, 32)), (False, (128, 32)), (True, (32, 64))]:
        p = plan_operand("A", 16, k_major, mn, bk)
        thr, val = p.thr, p.val
        tm, tk = thr.shape
        vm, vk = val.shape
        seen = set()
        for t in range(128):
            t_coord = (t // tk, t % tk) if k_major else (t % tm, t // tm)
            for v in range(vm * vk):
                v_coord = (v % vm, v // vm)
                for rm in range(mn // (tm * vm)):
                    for rk in range(bk // (tk * vk)):
                        m = (rm * tm + t_coord[0]) * vm + v_coord[0]
                        k = (rk * tk + t_coord[1]) * vk + v_coord[1]
                        seen.add((m, k))
        assert seen == {(m, k) for m in range(mn) for k in range(bk)}
        assert thr(*t_coord) is not None and isinstance(thr, Layout)


def test_plan_gemm_warps_and_atom() -> None:
    plan = plan_gemm(16, 16, False, True, (128, 128, 32))
    assert plan.warps == (2, 2, 1) and plan.threads == 128
    assert plan.a.copy_atom == plan.b.copy_atom == "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>"
    assert plan.a.val.shape == (8, 1) and plan.b.val.shape == (1, 8)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((16, 16, True, True, (48, 128, 32)), "must be a multiple of (32, 32)"),
        ((16, 16, True, True, (128, 128, 24)), "BK to be a power of two times 8"),
        ((32, 32, True, True, (32, 32, 2)), "BK to be a power of two times 4"),
        ((16, 16, False, True, (32, 32, 16)), "lays 32 threads across BK = 16"),
    ],
)
def test_refused(args: tuple, message: str) -> None:
    with pytest.raises(TilePlanError, match=message.replace("(", r"\(").replace(")", r"\)")):
        plan_gemm(*args)


@pytest.mark.parametrize(
    ("bits", "fits", "nbytes", "why"),
    [
        (16, {8, 4, 2}, 16, ""),
        (16, {4, 2}, 8, "; 16-byte copies not used: 8 elements are not known to align"),
        (16, {2}, 4, "; 16-byte copies not used: 8 elements are not known to align"),
        (32, {1}, 4, "; 16-byte copies not used: 4 elements are not known to align"),
    ],
)
def test_copy_bytes_narrows_to_the_facts(bits: int, fits: set, nbytes: int, why: str) -> None:
    assert copy_bytes(bits, lambda v: v in fits) == (nbytes, why)
    plan = plan_operand("A", bits, True, 128, 32, nbytes, why)
    assert plan.val.shape == (1, nbytes * 8 // bits)
    assert plan.copy_atom.startswith("SM80_CP_ASYNC_CACHE")
    assert plan.remark.endswith(why)


def test_copy_bytes_below_4_is_a_plain_copy_of_one_element() -> None:
    """No cp.async fits a 16-bit (8-bit) element alone: one element through a register,
    UniversalCopy, and the remark says the k-loop is then not pipelined."""
    for bits in (16, 8):
        nbytes, why = copy_bytes(bits, lambda v: v == 1)
        assert nbytes == bits // 8 and plain_copy(nbytes) and "not pipelined" in why
        plan = plan_operand("A", bits, True, 128, 32, nbytes, why)
        assert plan.copy_atom == f"UniversalCopy<uint{bits}_t>" and not plan.asynchronous
    assert not plain_copy(copy_bytes(32, lambda v: v == 1)[0])


def test_plan_gemm_on_eight_warps() -> None:
    """256 threads: 2x4 warps tiled (32, 64, 16 bytes), each warp an eighth of C (half
    the accumulators of 2x2); the copies spread over all 256 threads."""
    plan = plan_gemm(16, 16, True, True, (128, 256, 32), threads=256)
    assert plan.warps == (2, 4, 1) and plan.mma_tile == (32, 64, 16) and plan.threads == 256
    assert "64x64 eighth of C" in plan.remark
    for op in (plan.a, plan.b):
        assert op.thr.size() == 256


@pytest.mark.parametrize(
    ("acc_bits", "tile", "threads", "vec", "chunk", "thr"),
    [(32, (128, 256, 64), 256, 4, 64, Layout((32, 8), (1, 32))),
     (32, (128, 128, 32), 128, 4, 32, Layout((32, 4), (1, 32))),
     (16, (128, 128, 64), 128, 8, 32, Layout((16, 8), (1, 16))),
     (32, (32, 256, 64), 256, 4, 64, Layout((8, 32), (1, 8)))],
)  # fmt: skip
def test_epilogue_chunks_an_mma_tile_along_n(
    acc_bits: int, tile: tuple, threads: int, vec: int, chunk: int, thr: Layout
) -> None:
    """16 bytes of accumulators along M per thread, the threads along M first over a
    chunk one MMA tile wide along N (32 columns on 2x2 warps, 64 on 2x4), which the
    threads across N divide."""
    plan = plan_gemm(16, 16, True, True, tile, threads=threads)
    epilogue = plan_epilogue(acc_bits, tile[0], plan)
    assert (epilogue.vec, epilogue.chunk_n, epilogue.thr) == (vec, chunk, thr)
    assert chunk % thr.shape[1] == 0 and thr.shape[0] * vec == tile[0]
    assert f"({tile[0]}, {chunk})" in epilogue.remark


def test_epilogue_refuses_more_rows_than_threads_can_read() -> None:
    plan = plan_gemm(16, 16, True, True, (1024, 32, 64), threads=128)
    with pytest.raises(TilePlanError, match="the epilogue cannot lay 128 threads"):
        plan_epilogue(32, 1024, plan)
