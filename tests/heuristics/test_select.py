"""The choices of `auto` atoms (cutec/heuristics/select.py), decision by decision."""

from __future__ import annotations

import pytest

from cutec.atoms.mma import mma_atom_named
from cutec.atoms.tiled_mma import TiledMMA, make_tiled_mma
from cutec.heuristics.select import (
    AUTO,
    SelectionError,
    select_global_copy,
    select_mma,
    select_operand_copy,
)
from cutec.layout import Layout, Swizzle, composition, tile_to_shape
from cutec.target import target

SM80, SM90A, SM75 = target("sm_80"), target("sm_90a"), target("sm_75")
WARPS_2X2 = Layout((2, 2, 1), (1, 2, 0))


def _mma(name: str, atoms: Layout = WARPS_2X2) -> TiledMMA:
    record = mma_atom_named(name)
    assert record is not None
    return make_tiled_mma(record, atoms, None)


# --------------------------------------------------------------------------- MMA


@pytest.mark.parametrize(
    ("types", "atom"),
    [
        (("f32", "f16", "f16", "f32"), "SM80_16x8x16_F32F16F16F32_TN"),
        (("f16", "f16", "f16", "f16"), "SM80_16x8x16_F16F16F16F16_TN"),
        (("f32", "bf16", "bf16", "f32"), "SM80_16x8x16_F32BF16BF16F32_TN"),
        (("f32", "tf32", "tf32", "f32"), "SM80_16x8x8_F32TF32TF32F32_TN"),
        (("s32", "s8", "s8", "s32"), "SM80_16x8x32_S32S8S8S32_TN"),
        (("f32", "f32", "f32", "f32"), "UniversalFMA_F32F32F32F32"),
        (("f64", "f64", "f64", "f64"), "UniversalFMA_F64F64F64F64"),
    ],
)
@pytest.mark.parametrize("tgt", [SM80, SM90A])
def test_mma_by_element_types(types: tuple[str, str, str, str], atom: str, tgt) -> None:
    choice = select_mma(tgt, *types, WARPS_2X2, 128)
    assert choice.atom == atom
    # On sm_90a mma.sync stands until wgmma is selected, and the remark says so.
    hopper = any("wgmma" in r for r in choice.ruled_out)
    assert hopper == (tgt is SM90A and atom.startswith("SM80_"))


def test_f32_is_fma_and_the_remark_says_how_to_allow_tf32() -> None:
    choice = select_mma(SM80, "f32", "f32", "f32", "f32", Layout((16, 8, 1)), 128)
    assert choice.atom == "UniversalFMA_F32F32F32F32"
    assert "declare A and B tf32" in choice.remark()


def test_mma_sync_needs_the_threads_of_every_atom() -> None:
    # 2x2 warps need 128 threads; with 64 the f16 MMA has no fallback (FMA needs one type).
    with pytest.raises(SelectionError, match="need 128 threads, the kernel runs 64"):
        select_mma(SM80, "f32", "f16", "f16", "f32", WARPS_2X2, 64)
    # f16 accumulation does have an FMA.
    choice = select_mma(SM80, "f16", "f16", "f16", "f16", WARPS_2X2, 64)
    assert choice.atom == "UniversalFMA_F16F16F16F16" and "need 128 threads" in choice.remark()


# --------------------------------------------------------------------------- smem -> rmem

F16 = "SM80_16x8x16_F32F16F16F32_TN"
TF32 = "SM80_16x8x8_F32TF32TF32F32_TN"
K_MAJOR = Layout((128, 32), (32, 1))  # (M,K): k contiguous
MN_MAJOR = Layout((128, 32), (1, 128))  # (M,K): m contiguous
SWIZZLED_K_MAJOR = tile_to_shape(composition(Swizzle(2, 3, 3), Layout((8, 32), (32, 1))), (128, 32))


@pytest.mark.parametrize("layout", [K_MAJOR, SWIZZLED_K_MAJOR], ids=["plain", "swizzled"])
def test_f16_k_major_is_ldmatrix(layout) -> None:
    a = select_operand_copy(SM80, _mma(F16), "A", 16, layout, shared=True)
    assert a.atom == "SM75_U32x4_LDSM_N" and a.ruled_out == ()
    # A warp's B of 16x8x16 is two 8x8 matrices: x2 (the remark says why not x4).
    b = select_operand_copy(SM80, _mma(F16), "B", 16, layout, shared=True)
    assert b.atom == "SM75_U32x2_LDSM_N"
    assert b.ruled_out == ("SM75_U32x4_LDSM_N not used: a thread's B fragment holds fewer "
                           "values than it loads",)  # fmt: skip


def test_f16_mn_major_is_ldmatrix_trans() -> None:
    a = select_operand_copy(SM80, _mma(F16), "A", 16, MN_MAJOR, shared=True)
    assert a.atom == "SM75_U16x8_LDSM_T"
    assert "not contiguous" in a.ruled_out[0]  # the non-transposed rows run along K
    b = select_operand_copy(SM80, _mma(F16), "B", 16, MN_MAJOR, shared=True)
    assert b.atom == "SM75_U16x4_LDSM_T"


def test_tf32_k_major_is_ldmatrix_and_mn_major_is_ld_shared() -> None:
    assert select_operand_copy(SM80, _mma(TF32), "A", 32, K_MAJOR, True).atom == (
        "SM75_U32x4_LDSM_N"
    )
    choice = select_operand_copy(SM80, _mma(TF32), "A", 32, MN_MAJOR, True)
    assert choice.atom == AUTO
    assert "ldmatrix .trans not used: it transposes 16-bit elements, not 32-bit ones" in (
        choice.ruled_out
    )


def test_s8_mn_major_is_ld_shared() -> None:
    s8 = _mma("SM80_16x8x32_S32S8S8S32_TN")
    assert select_operand_copy(SM80, s8, "A", 8, Layout((128, 64), (64, 1)), True).atom == (
        "SM75_U32x4_LDSM_N"
    )
    assert select_operand_copy(SM80, s8, "A", 8, Layout((128, 64), (1, 128)), True).atom == AUTO


def test_padded_rows_are_not_16_byte_aligned() -> None:
    choice = select_operand_copy(SM80, _mma(F16), "A", 16, Layout((128, 32), (33, 1)), True)
    assert choice.atom == AUTO
    assert "16-byte aligned" in choice.remark()


def test_ldmatrix_reads_shared_memory_of_a_target_that_has_it() -> None:
    assert select_operand_copy(SM80, _mma(F16), "A", 16, K_MAJOR, shared=False).atom == AUTO
    assert select_operand_copy(SM80, _mma(F16), "C", 32, K_MAJOR, shared=True).atom == AUTO


# --------------------------------------------------------------------------- gmem -> smem


def _contiguous_up_to(limit: int):
    """A layout verdict: vectors of up to `limit` elements are contiguous and aligned."""
    return lambda p: None if p <= limit else f"{p} elements are not known contiguous"


def test_cp_async_16_bytes_when_the_layouts_allow() -> None:
    choice, width = select_global_copy(SM80, 16, _contiguous_up_to(8))
    assert (choice.atom, width) == ("SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", 8)
    assert select_global_copy(SM90A, 32, _contiguous_up_to(4))[1] == 4


def test_narrower_cp_async_is_cache_always() -> None:
    # The PTX ISA: .cg takes 16 bytes only, so 8 and 4 bytes are .ca.
    choice, width = select_global_copy(SM80, 16, _contiguous_up_to(4))
    assert (choice.atom, width) == ("SM80_CP_ASYNC_CACHEALWAYS<uint64_t>", 4)
    assert choice.ruled_out == ("16-byte cp.async not used: 8 elements are not known contiguous",)
    choice, width = select_global_copy(SM80, 16, _contiguous_up_to(2))
    assert (choice.atom, width) == ("SM80_CP_ASYNC_CACHEALWAYS<uint32_t>", 2)


def test_no_cp_async_for_single_f16_elements_or_unwaited_copies_or_sm75() -> None:
    choice, _ = select_global_copy(SM80, 16, _contiguous_up_to(1))
    assert choice.atom == AUTO and len(choice.ruled_out) == 3
    assert select_global_copy(SM80, 16, _contiguous_up_to(8), waited=False)[0].atom == AUTO
    assert select_global_copy(SM75, 16, _contiguous_up_to(8))[0].atom == AUTO


def test_predicated_copies_move_one_element_zero_filled_when_asked() -> None:
    # One element needs no contiguity (the verdict of p = 1 is not asked).
    choice, width = select_global_copy(SM80, 32, _contiguous_up_to(0), predicated=True)
    assert (choice.atom, width) == ("SM80_CP_ASYNC_CACHEALWAYS<uint32_t>", 1)
    choice, _ = select_global_copy(SM80, 32, _contiguous_up_to(4), predicated=True, zfill=True)
    assert choice.atom == "SM80_CP_ASYNC_CACHEALWAYS_ZFILL<uint32_t>"
    # f16: one element is 2 bytes, less than cp.async's 4.
    assert select_global_copy(SM80, 16, _contiguous_up_to(8), predicated=True)[0].atom == AUTO
