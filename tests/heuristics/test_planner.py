"""The planner of the whole-tensor gemm (cutec/heuristics/planner.py): the body per
target by its rule table, the stream-K tail's tile, the block, each with its reason."""

from __future__ import annotations

import pytest

from cutec.heuristics.planner import (
    GEMM_BODIES,
    GEMM_TILED,
    BodyRule,
    GemmFacts,
    LibraryBody,
    choose_body,
    plan_kernel,
    tail_tile,
)
from cutec.heuristics.tile_plan import TilePlanError
from cutec.target import COMPILE_TARGETS, TARGETS, Feature, target

HOPPER_TEST = LibraryBody("gemm_hopper_test.cute", "gemm_hopper_test")  # test-only
RULES = (
    BodyRule(lambda t: t.has(Feature.WGMMA), HOPPER_TEST, "wgmma (test)"),
    *GEMM_BODIES,
)


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_every_target_gets_gemm_tiled_today(name: str) -> None:
    assert choose_body(target(name)).body == GEMM_TILED


@pytest.mark.parametrize(("name", "body"), [("sm_90a", HOPPER_TEST), ("sm_80", GEMM_TILED)])
def test_a_rule_table_picks_the_body_per_target(name: str, body: LibraryBody) -> None:
    assert choose_body(target(name), RULES).body == body


def test_no_rule_is_a_lookup_error() -> None:
    with pytest.raises(LookupError, match="no library body of the whole-tensor gemm serves sm_80"):
        choose_body(target("sm_80"), ())


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


def _facts(**kw: object) -> GemmFacts:
    base: dict = dict(target=target(COMPILE_TARGETS[0]), bits=16, acc_bits=32, a_k_major=True,
                      b_k_major=True, tile=(128, 256, 32), stages=3, threads=None,
                      stream_k_tail=False, a_divisible=lambda v: True,
                      b_divisible=lambda v: True)  # fmt: skip
    return GemmFacts(**{**base, **kw})


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
