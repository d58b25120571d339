"""The planner of the whole-tensor gemm (cutec/heuristics/planner.py): the body by its
rule table (sm_90a's warp-specialised body where ws_plan's rules allow, else gemm_tiled,
saying why), the stream-K tail's tile, the block, each with its reason."""

from __future__ import annotations

from dataclasses import replace

import pytest

from cutec.heuristics.planner import (
    GEMM_BODIES,
    GEMM_TILED,
    GEMM_WS,
    GEMM_WS_SWAPPED,
    BodyRule,
    GemmFacts,
    LibraryBody,
    choose_body,
    plan_kernel,
    tail_tile,
)
from cutec.heuristics.tile_plan import TilePlanError
from cutec.target import TARGETS, Feature, target


def _facts(**kw: object) -> GemmFacts:
    base: dict = dict(target=target("sm_80"), bits=16, acc_bits=32, a_k_major=True,
                      b_k_major=True, tile=(128, 256, 32), stages=3, threads=None,
                      stream_k_tail=False, a_divisible=lambda v: True,
                      b_divisible=lambda v: True)  # fmt: skip
    return GemmFacts(**{**base, **kw})


HOPPER = dict(target=target("sm_90a"), a_tma=True, b_tma=True, tile=(128, 256, 64), stages=4)


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_targets_without_wgmma_get_gemm_tiled_and_no_body_remark(name: str) -> None:
    plan = plan_kernel(_facts(target=target(name), a_tma=True, b_tma=True))
    if target(name).has(Feature.WGMMA):
        assert plan.body == GEMM_WS and plan.ws is not None
    else:
        assert plan.body == GEMM_TILED and plan.ws is None and plan.body_why == ()


def test_sm90a_takes_the_warp_specialised_body_with_its_remarks() -> None:
    plan = plan_kernel(_facts(**HOPPER))
    assert plan.body == GEMM_WS and plan.ws is not None
    assert (plan.threads, plan.ws.consumers, plan.ws.mma_atom) == (
        384,
        2,
        "SM90_64x256x16_F32F16F16_SS_TN",
    )
    assert (plan.ws.a_smem_atom, plan.ws.b_smem_atom) == ("Layout_K_SW128_Atom",) * 2
    assert plan.threads_why == "384 threads: the Hopper body's warpgroups"
    assert plan.reasons()[0] == "body: a warp-specialised TMA + wgmma kernel"
    assert any("setmaxnreg 40 in the producer, 232" in r for r in plan.reasons())


@pytest.mark.parametrize(
    ("kw", "atom", "a_atom", "b_atom"),
    [
        (dict(a_k_major=False, b_k_major=False), "SM90_64x256x16_F32F16F16_SS_NT",
         "Layout_MN_SW128_Atom", "Layout_MN_SW128_Atom"),
        (dict(element="bf16", tile=(128, 128, 32)), "SM90_64x128x16_F32BF16BF16_SS_TN",
         "Layout_K_SW64_Atom", "Layout_K_SW64_Atom"),
        (dict(bits=32, element="tf32", tile=(128, 128, 32)), "SM90_64x128x8_F32TF32TF32_SS_TN",
         "Layout_K_SW128_Atom", "Layout_K_SW128_Atom"),
        (dict(acc_bits=16, a_k_major=False), "SM90_64x256x16_F16F16F16_SS_NN",
         "Layout_MN_SW128_Atom", "Layout_K_SW128_Atom"),
    ],
)  # fmt: skip
def test_the_hopper_plan_names_the_wgmma_and_gmma_atoms(
    kw: dict, atom: str, a_atom: str, b_atom: str
) -> None:
    ws = plan_kernel(_facts(**{**HOPPER, **kw})).ws
    assert ws is not None and (ws.mma_atom, ws.a_smem_atom, ws.b_smem_atom) == (
        atom,
        a_atom,
        b_atom,
    )


@pytest.mark.parametrize(
    ("kw", "why"),
    [
        (dict(a_tma=False), "A cannot be read through a tensor map"),
        (dict(bits=32, element="tf32", a_k_major=False, b_k_major=False),
         "tf32 operands are both MN-major"),
        (dict(bits=32, element="tf32", b_k_major=False, a_tma=False),
         "A cannot be read through a tensor map"),
        (dict(acc_bits=16, element="bf16"), "16-bit accumulators need f16 operands"),
        (dict(threads=256), "the Hopper body's 128-row tile needs 384"),
        (dict(schedule="stream-K"), "a stream-K gemm runs on the mma.sync body"),
        (dict(tile=(32, 128, 64)), "BM = 32"),
        (dict(tile=(128, 512, 32)), "BN = 512"),
        (dict(tile=(256, 256, 64)), "256 accumulator registers, more than 128"),
    ],
)  # fmt: skip
def test_where_the_hopper_body_does_not_serve_the_plan_says_why(kw: dict, why: str) -> None:
    plan = plan_kernel(_facts(**{**HOPPER, "tile": (128, 128, 64), **kw}))
    assert plan.body == GEMM_TILED
    assert plan.body_why[0].startswith("body: cp.async, ldmatrix and mma.sync")
    assert plan.body_why[1].startswith("not a warp-specialised TMA + wgmma kernel: ")
    assert why in plan.body_why[1]


def test_an_m_major_tf32_a_goes_through_registers() -> None:
    """wgmma reads shared tf32 K-major only: an M-major A is loaded by the consumer threads
    (an RS wgmma), B stays in shared memory."""
    plan = plan_kernel(_facts(**{**HOPPER, "bits": 32, "element": "tf32", "a_k_major": False,
                                 "tile": (128, 256, 32)}))  # fmt: skip
    ws = plan.ws
    assert plan.body == GEMM_WS and ws is not None and ws.a_regs and not ws.swapped
    assert (ws.mma_atom, ws.a_smem_atom, ws.b_smem_atom) == (
        "SM90_64x256x8_F32TF32TF32_RS_TN",
        "Layout_MN_SW128_Atom",
        "Layout_K_SW128_Atom",
    )
    assert any(r.startswith("A: each consumer thread loads its wgmma fragment") for r in ws.remarks)


def test_an_n_major_tf32_b_swaps_the_operands() -> None:
    """Cᵀ = B·Aᵀ: B (N-major) becomes the body's M-major A, read into registers; A's tensor
    map is B's (a_tma False: the swapped plan says A of Cᵀ, which is B)."""
    facts = {**HOPPER, "bits": 32, "element": "tf32", "b_k_major": False, "tile": (128, 256, 32)}
    plan = plan_kernel(_facts(**facts))
    ws = plan.ws
    assert plan.body == GEMM_WS_SWAPPED and ws is not None and ws.a_regs and ws.swapped
    assert ws.mma_atom == "SM90_64x256x8_F32TF32TF32_RS_TN"
    assert ws.remarks[0].startswith("tf32 with an N-major B: the body computes Cᵀ = B·Aᵀ")
    assert not ws.epi_tma  # Cᵀ is N-major: no store map


def test_hopper_stages_that_do_not_fit_are_a_tile_plan_error() -> None:
    with pytest.raises(TilePlanError, match="5 stages of 128x256x64 take 245840 bytes"):
        plan_kernel(_facts(**{**HOPPER, "stages": 5}))


def test_a_rule_table_may_put_a_body_before_another() -> None:
    test_body = LibraryBody("gemm_test.cute", "gemm_test")
    rules = (BodyRule(lambda t: True, test_body, "a test body", lambda f: None), *GEMM_BODIES)
    assert choose_body(_facts(), rules)[0].body == test_body


def test_no_rule_is_a_lookup_error() -> None:
    with pytest.raises(LookupError, match="no library body of the whole-tensor gemm serves sm_80"):
        choose_body(_facts(), ())


@pytest.mark.parametrize(
    ("tile", "stages", "bits", "want"),
    [
        ((128, 128, 32), 3, 32, ((128, 128, 16), 4)),  # tf32 at BK = 32: 1024 bits of K
        ((128, 128, 16), 3, 32, ((128, 128, 16), 3)),
        ((128, 256, 64), 3, 16, ((128, 256, 64), 3)),  # 16-bit operands keep the tile
    ],
)
def test_the_stream_k_tail_halves_bk_for_long_32_bit_k_tiles(
    tile: tuple[int, int, int], stages: int, bits: int, want: tuple
) -> None:
    got_tile, got_stages, why = tail_tile(tile, stages, bits)
    assert (got_tile, got_stages) == want
    assert why.startswith("stream-K tail: ")


def test_the_plan_chooses_the_block_where_the_kernel_leaves_it() -> None:
    plan = plan_kernel(_facts())
    assert (plan.body, plan.threads, plan.gemm.warps) == (GEMM_TILED, 256, (2, 4, 1))
    assert plan.threads_why == "256 threads: the 128x256 tile holds 8 warps of 64x64 or more"
    fixed = plan_kernel(_facts(threads=128))
    assert (fixed.threads, fixed.threads_why, fixed.gemm.warps) == (128, None, (2, 2, 1))
    assert fixed.reasons()[0].startswith("CTA tile (128, 256, 32) on 128 threads: 2x2 warps")


def test_the_tail_kernel_plans_its_own_tile() -> None:
    plan = plan_kernel(_facts(bits=32, stream_k_tail=True, tile=(128, 128, 32)))
    assert (plan.tile, plan.stages) == ((128, 128, 16), 4)
    assert plan.tail_why is not None and "BK = 16, 4 stages" in plan.tail_why


def test_a_tile_the_plan_cannot_serve_is_a_tile_plan_error() -> None:
    with pytest.raises(TilePlanError, match="must be a multiple of"):
        plan_kernel(_facts(tile=(64, 96, 32), threads=256))


@pytest.mark.parametrize(
    ("kw", "tma", "said"),
    [
        (dict(), False, "epilogue: each thread writes its accumulators"),
        (dict(epilogue="tma", c_tma_store=True), True,
         "epilogue: for beta = 0, through shared memory in chunks of 128x32"),
        (dict(epilogue="tma"), False, "not through TMA stores: C must be M-major"),
        (dict(epilogue="tma", c_tma_store=True, tile=(256, 128, 64), stages=3), False,
         "not through TMA stores: BM = 256 puts two wgmmas' rows on a consumer"),
        (dict(epilogue="tma", c_tma_store=True, tile=(128, 200, 64)), False,
         "BN = 200 is not a multiple of the chunk's 32 columns"),
        (dict(epilogue="tma", c_tma_store=True, c_bits=16, c_element="bf16"), False,
         "C must hold f32 or f16"),
    ],
)  # fmt: skip
def test_the_hopper_epilogue_is_planned_with_its_reason(kw: dict, tma: bool, said: str) -> None:
    ws = plan_kernel(_facts(**{**HOPPER, **kw})).ws
    assert ws is not None and ws.epi_tma == tma
    assert any(said in r for r in ws.remarks), ws.remarks
    if tma:  # only its C layout is used: accumulators of C's type
        assert ws.epi_mma_atom == "SM90_64x32x16_F32F16F16_SS_TN"
    f16_c = plan_kernel(_facts(**HOPPER, epilogue="tma", c_tma_store=True, c_bits=16,
                               c_element="f16")).ws  # fmt: skip
    assert f16_c is not None and f16_c.epi_mma_atom == "SM90_64x32x16_F16F16F16_SS_TN"


def test_the_tma_epilogues_buffers_count_against_shared_memory() -> None:
    """4 stages of 128x256x64 f16 take 196,672 bytes; the epilogue's two 128x32 f32
    buffers 32,768 more: 229,440, which fits the H200's 232,448 and not 229,000."""
    facts = _facts(**HOPPER, epilogue="tma", c_tma_store=True)
    plan = plan_kernel(facts)
    assert plan.ws is not None and plan.ws.epi_tma
    small = replace(facts, target=replace(target("sm_90a"), smem_per_cta=229_000))
    with pytest.raises(TilePlanError, match="take 229440 bytes"):
        plan_kernel(small)


def test_a_tma_epilogue_the_body_cannot_honour_is_said() -> None:
    plan = plan_kernel(_facts(epilogue="tma"))  # sm_80
    assert plan.body == GEMM_TILED
    assert plan.reasons()[0] == (
        'epilogue = "tma" is the Hopper body\'s: this one writes C through its shared chunks'
    )
