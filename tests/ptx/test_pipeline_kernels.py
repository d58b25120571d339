"""The kernels the `pipeline` pass builds (examples/sgemm_pipeline_pass.cute,
hgemm_pipeline_pass.cute) against the hand-pipelined examples/sgemm_pipelined.cute
and sgemm_sm80.cute: no more registers (two CTAs of 256 threads fit an SM at 128),
and the same k-loop: one barrier, one cp.async wait and one commit per k-tile, the
same FMAs or MMAs and shared loads."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cutec.driver import Options, Source, Stage, compile
from cutec.ptx.ptxas import find_ptxas

pytestmark = pytest.mark.skipif(find_ptxas() is None, reason="no ptxas (install the test extra)")

EXAMPLES = Path(__file__).parents[2] / "examples"


def _build(example: str, kernel: str, target: str) -> tuple[str, int]:
    result = compile(
        Source.from_file(EXAMPLES / f"{example}.cute"),
        Stage.CUBIN,
        Options(kernel=kernel, target=target),
    )
    assert result.ptx is not None and result.resources
    return result.ptx, result.resources[kernel].registers


def _k_loop(ptx: str) -> str:
    """The k-loop: the loop whose body waits for cp.async groups."""
    for m in re.finditer(r"^(\$L_for_\d+):$", ptx, re.M):
        end = ptx.index(f"bra {m.group(1)};", m.end())
        body = ptx[m.end() : end]
        if "cp.async.wait_group" in body:
            return body
    raise AssertionError("no k-loop")


def _count(text: str, instr: str) -> int:
    return len(re.findall(rf"^\s*(?:@!?%p\d+\s+)?{re.escape(instr)}", text, re.M))


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
@pytest.mark.parametrize(
    ("example", "kernel", "hand", "wait", "math"),
    [
        ("sgemm_pipeline_pass", "sgemm_nt", "sgemm_pipelined", 2, ("fma.rn.f32", "ld.relaxed")),
        ("sgemm_pipeline_pass", "sgemm_tn", "sgemm_pipelined", 2, ("fma.rn.f32", "ld.relaxed")),
        ("hgemm_pipeline_pass", "hgemm_tn", "sgemm_sm80", 1, ("mma.sync", "ldmatrix")),
    ],
)
def test_pass_pipelined_loop_matches_the_hand_pipelined_one(
    example: str, kernel: str, hand: str, wait: int, math: tuple[str, ...], target: str
) -> None:
    ptx, regs = _build(example, kernel, target)
    hand_ptx, hand_regs = _build(hand, kernel, target)
    assert regs <= max(hand_regs, 128), (regs, hand_regs)
    loop, hand_loop = _k_loop(ptx), _k_loop(hand_ptx)
    for instr in ("bar.sync", f"cp.async.wait_group {wait};", "cp.async.commit_group"):
        assert _count(loop, instr) == 1, instr
    for instr in (*math, "cp.async.c"):
        assert _count(loop, instr) == _count(hand_loop, instr) > 0, instr
