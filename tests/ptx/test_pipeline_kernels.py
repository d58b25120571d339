"""The kernels the `pipeline` pass builds (examples/sgemm_pipeline_pass.cute,
hgemm_pipeline_pass.cute) against the hand-pipelined examples/sgemm_pipelined.cute
and sgemm_sm80.cute: no more registers (two CTAs of 256 threads fit an SM at 128),
and the same k-loop: one barrier, one cp.async wait and one commit per k-tile, the
same FMAs or MMAs and shared loads."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from cutec.driver import Options, Source, Stage, compile
from cutec.ptx.ptxas import find_ptxas
from tests.gemm_auto_launch import DIVISIBLE

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


# sm_90a's loops are sm_80's (the examples assemble for both: tests/ptx/test_examples.py);
# their comparison is a slow case (CI time).
@pytest.mark.parametrize("target", ["sm_80", pytest.param("sm_90a", marks=pytest.mark.slow)])
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


def _schedule(loop: str) -> str:
    """The k-loop's instructions that the schedule orders, as runs: ``L8 G8 H32 ...``
    (L ldmatrix, G cp.async, c commit, H mma.sync, S shared load, F fma, w wait, B bar)."""
    kinds = (("ldmatrix", "L"), ("cp.async.commit", "c"), ("cp.async.wait", "w"),
             ("cp.async", "G"), ("mma.sync", "H"), ("fma.rn", "F"), ("ld.relaxed", "S"),
             ("ld.shared", "S"), ("bar.sync", "B"))  # fmt: skip
    seq = []
    for line in loop.splitlines():
        instr = re.sub(r"^\s*(?:@!?%p\d+\s+)?", "", line)
        seq += [ch for prefix, ch in kinds if instr.startswith(prefix)][:1]
    return " ".join(f"{ch}{len(list(run))}" for ch, run in itertools.groupby(seq))


@pytest.mark.parametrize(
    ("example", "kernel", "defines", "schedule"),
    [
        # Tensor cores: k-block j+1's ldmatrix before the copies (ptxas keeps cp.async
        # and ldmatrix, both on shared memory, in order; after the copies, block 1's
        # MMAs waited on loads issued just before them), the copies spread over
        # blocks 0 and 1, B's eight per thread first.
        ("gemm_auto", "gemm_nt", {"BN": "256", "BK": "64"},
         "L8 G8 H32 L8 G4 c1 H32 L8 H32 w1 B1 L8 H32"),
        # Two k-blocks: every copy in block 0.
        ("gemm_auto", "gemm_tn", {}, "L8 G8 c1 H32 w1 B1 L8 H32"),
        # Equal copies keep their order.
        ("hgemm_pipeline_pass", "hgemm_tn", {},
         "L8 G8 H32 L8 G8 c1 H32 L8 H32 w1 B1 L8 H32"),
        # FMA: the copies first (fewer registers under ptxas: 107 against 126).
        ("sgemm_pipeline_pass", "sgemm_nt", {},
         "G4 c1 " + "S4 F64 " * 15 + "w1 B1 S4 F64"),
    ],
)  # fmt: skip
def test_k_loop_schedule(example: str, kernel: str, defines: dict, schedule: str) -> None:
    result = compile(
        Source.from_file(EXAMPLES / f"{example}.cute"),
        Stage.PTX,
        # gemm_auto's plan for a launch whose sizes are multiples of 16 (16-byte copies).
        Options(**(DIVISIBLE if example == "gemm_auto" else {}), kernel=kernel,
                defines=defines, target="sm_80"),
    )  # fmt: skip
    assert result.ptx is not None
    assert _schedule(_k_loop(result.ptx)) == schedule


@pytest.mark.parametrize("kernel", ["gemm_nt", "gemm_tn"])
def test_whole_tensor_gemm_barriers_after_the_k_loop(kernel: str) -> None:
    """After gemm_auto's k-loop: one drain (the epilogue's own wait and barrier; the
    pipeline adds no second pair), then per chunk of C a barrier before reading it
    back and one before the next chunk overwrites it; none after the last chunk."""
    result = compile(
        Source.from_file(EXAMPLES / "gemm_auto.cute"),
        Stage.PTX,
        Options(**DIVISIBLE, kernel=kernel, defines={"BN": "256", "BK": "64"}, target="sm_80"),
    )
    assert result.ptx is not None
    after = result.ptx[result.ptx.rindex("cp.async.wait_group 1;") :]
    after = after[after.index("$L_for_end_") :]
    assert _count(after, "cp.async.wait_group 0;") == 1
    chunks = 4  # BN 256 / the MMA tile's 64 columns
    assert _count(after, "bar.sync") == 1 + 2 * chunks - 1
    tail = after[after.rindex("bar.sync") :]
    # The last chunk is read back and stored after it; nothing follows but ret.
    assert "ld.shared" in tail and "st.global" in tail and "st.shared" not in tail
