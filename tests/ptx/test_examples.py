"""Every example compiles to PTX that ptxas accepts, for each target, with no spill and
no stack frame; an example the SIMT path cannot lower yet is one located error."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cutec.diagnostics import CompileError
from cutec.driver import Options, Source, Stage, compile
from cutec.ptx.ptxas import find_ptxas
from tests.gemm_auto_launch import DIVISIBLE

pytestmark = pytest.mark.skipif(find_ptxas() is None, reason="no ptxas (install the test extra)")

EXAMPLES = Path(__file__).parents[2] / "examples"
LOWERED = [
    "tiled_copy",
    "sgemm_1",
    "sgemm_2",
    "sgemm_2_shared",
    "sgemm_pipelined",
    "sgemm_pipeline_pass",
    "hgemm_pipeline_pass",
    "sgemm_sm80",
    "auto_atoms",
    "gemm_auto",
    "gemm_stream_k",
    "elementwise",
    "transpose",
    "batched_gemm",
]
# Hopper's examples (wgmma, TMA) assemble for sm_90a only; for sm_80 they are one
# located error at the first Hopper atom.
HOPPER = {
    "wgmma_sm90": "the MMA atom SM90_64x64x16_F16F16F16_SS_NT needs sm_90a",
    "wgmma_tma_sm90": "TMA copies need sm_90 (the target is sm_80)",
    "gemm_ws_sm90": "TMA copies need sm_90 (the target is sm_80)",
}
TARGETS = ["sm_80", "sm_90a"]


def test_every_example_is_covered() -> None:
    assert {p.stem for p in EXAMPLES.glob("*.cute")} == set(LOWERED) | set(HOPPER)


# gemm_stream_k's pair takes 13-16 s of ptxas per target: both are slow cases. In CI,
# tests/ptx/test_gemm_auto.py assembles the same pair for sm_80 (the tighter register and
# shared-memory budget: gemm_auto's stream_k = true is the pair's PTX, entry for entry)
# and checks its kernels for spills at the tiles of every element type.
CASES = [
    pytest.param(example, target, marks=pytest.mark.slow)
    if example == "gemm_stream_k"
    else (example, target)
    for example in LOWERED
    for target in TARGETS
] + [(example, "sm_90a") for example in HOPPER]


# gemm_auto assumes nothing of its sizes: it is assembled as the JIT compiles it for a
# launch whose extents and leading dimensions are multiples of 16 (16-byte copies, the
# Hopper body on sm_90a).
FACTS = {"gemm_auto": DIVISIBLE}


@pytest.mark.parametrize(("example", "target"), CASES)
def test_example_assembles_without_spills(example: str, target: str) -> None:
    result = compile(
        Source.from_file(EXAMPLES / f"{example}.cute"),
        Stage.CUBIN,
        Options(**FACTS.get(example, {}), target=target),
    )
    assert result.cubin is not None and result.resources
    # Every register fragment was promoted: no .local array is left (ptxas -v does not
    # count a kernel's own .local arrays in its stack frame).
    assert result.ptx is not None and ".local" not in result.ptx
    for usage in result.resources.values():
        assert not usage.spills, usage
        assert usage.stack_frame == 0, usage


@pytest.mark.parametrize("example", sorted(HOPPER))
def test_hopper_example_for_sm80_is_one_located_error(example: str) -> None:
    path = EXAMPLES / f"{example}.cute"
    with pytest.raises(CompileError) as info:
        compile(Source.from_file(path), Stage.PTX, Options(target="sm_80"))
    rendered = info.value.render()
    assert rendered.startswith(f"{path}:") and HOPPER[example] in rendered
    assert rendered.splitlines()[-1].strip() == "^"


def _k_loop(ptx: str) -> str:
    """The text of the first loop: from its head label to its back branch."""
    start = ptx.index("$L_for_0:")
    end = ptx.index("bra $L_for_0;")
    return ptx[start:end]


def test_sgemm_2_nt_loads_128_bits_and_keeps_its_k_loop_cheap() -> None:
    """align 16 and the assumptions allow ld.global.v4.f32; the k-loop's address math is
    32-bit multiplies and adds: no division, remainder or 64-bit multiply."""
    ptx = compile(
        Source.from_file(EXAMPLES / "sgemm_2.cute"), Stage.PTX, Options(kernel="sgemm_nt")
    ).ptx
    assert ptx is not None
    assert "ld.global.v4.f32" in ptx
    loop = _k_loop(ptx)
    assert "ld.global.v4.f32" in loop and "fma.rn.f32" in loop
    assert not re.search(r"\b(div|rem)\.", loop)
    assert not re.search(r"\bmul\.(lo|hi|wide)\.[su]64\b|\bmad\.lo\.[su]64\b", loop)


@pytest.mark.parametrize("kernel", ["sgemm_nt", "sgemm_tn"])
def test_sgemm_2_issues_next_tile_loads_before_the_barrier(kernel: str) -> None:
    """sink-barriers: the k-loop's global loads come between the smem stores and the
    barrier that publishes them, so ptxas cannot schedule them after the FMAs."""
    ptx = compile(
        Source.from_file(EXAMPLES / "sgemm_2.cute"), Stage.PTX, Options(kernel=kernel)
    ).ptx
    assert ptx is not None
    loop = _k_loop(ptx)
    bars = [m.start() for m in re.finditer(r"\bbar\.sync\b", loop)]
    loads = [m.start() for m in re.finditer(r"\bld\.global\b", loop)]
    stores = [m.start() for m in re.finditer(r"\bst\.shared\b", loop)]
    fmas = [m.start() for m in re.finditer(r"\bfma\.rn\.f32\b", loop)]
    assert len(bars) == 2 and loads and stores and fmas
    assert bars[0] < min(stores) and max(stores) < min(loads) and max(loads) < bars[1] < min(fmas)


@pytest.mark.parametrize(
    ("example", "kernel", "ordered"),
    [
        ("sgemm_2", "sgemm_nt", 128),
        ("sgemm_2", "sgemm_tn", 128),
        ("sgemm_1", "sgemm_nt", 128),
        # K-major fragments of 4 contiguous, 16-byte aligned elements: ptxas merges them
        # into LDS.128, which it cannot do with relaxed loads, so they stay plain.
        ("sgemm_1", "sgemm_tn", 0),
    ],
)
def test_k_loop_shared_loads_are_relaxed_unless_mergeable(
    example: str, kernel: str, ordered: int
) -> None:
    """order-shared-loads: the k-loop's fragment loads are ld.relaxed.cta.shared, which
    ptxas keeps early (spread among the previous k-block's FMAs), unless ptxas could
    merge them into vectors."""
    ptx = compile(
        Source.from_file(EXAMPLES / f"{example}.cute"), Stage.PTX, Options(kernel=kernel)
    ).ptx
    assert ptx is not None
    loop = _k_loop(ptx)
    relaxed = len(re.findall(r"\bld\.relaxed\.cta\.shared\.f32\b", loop))
    plain = len(re.findall(r"\bld\.shared\.f32\b", loop))
    assert (relaxed, plain) == (ordered, 128 - ordered)
    assert "ld.relaxed" not in ptx.replace(loop, "")
