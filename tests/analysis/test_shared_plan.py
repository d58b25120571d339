"""Shared-memory placement (cutec/analysis/shared_plan.py): a buffer takes the bytes
of one that no thread touches any more, only past a barrier that every thread
reaches after its last access (and after its cp.async copies have landed); a
kernel whose buffers exceed the target's shared memory is a located error."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import cutec.runtime as rt
from cutec.diagnostics import CompileError
from cutec.driver import Options, Source, Stage, compile
from cutec.ir.dialects.builtin import KernelOp
from tests.gemm_auto_launch import DIVISIBLE
from tests.passes.test_tile import _call_line

EXAMPLES = Path(__file__).parents[2] / "examples"

# Two 32 KiB buffers (64 KiB: past the 48 KiB of static shared memory, so one
# dynamic array). Each thread writes a row of sX, and reads a row another thread
# wrote; then the same through sY, after `{fence}`.
TWO_BUFFERS = """
kernel k(A: f32[128, 64] : (1, 128), B: f32[128, 64] : (1, 128),
         C: f32[128, 64] : (1, 128), D: f32[128, 64] : (1, 128))
  grid (1, 1) threads 128
{{
  sX = smem f32[(128, 64)]
  sY = smem f32[(128, 64)]
  mine = make_layout((128, 1))
  other = make_layout((128, 1), (1, 0))
  {copy_x}
  sync()
  r = make_fragment_like(local_partition(sX, mine, thread.x))
  copy(local_partition(sX, mine, (thread.x + 1) % 128), r)
  copy(r, local_partition(C, mine, thread.x))
{fence}
  copy(local_partition(B, mine, thread.x), local_partition(sY, mine, thread.x))
  sync()
  copy(local_partition(sY, mine, (thread.x + 1) % 128), r)
  copy(r, local_partition(D, mine, thread.x))
}}
"""
SYNC_COPY = "copy(local_partition(A, mine, thread.x), local_partition(sX, mine, thread.x))"
ASYNC_COPY = """c = tiled_copy(SM80_CP_ASYNC_CACHEALWAYS[f32], thr = (128, 1), val = (1, 64))
  copy(c, c.slice(thread.x).partition_S(A), c.slice(thread.x).partition_D(sX))
  cp_async_fence()
  cp_async_wait(0)"""
ASYNC_PENDING = """c = tiled_copy(SM80_CP_ASYNC_CACHEALWAYS[f32], thr = (128, 1), val = (1, 64))
  copy(c, c.slice(thread.x).partition_S(A), c.slice(thread.x).partition_D(sX))
  cp_async_fence()
  cp_async_fence()
  cp_async_wait(1)"""


def _dynamic_smem(source: str, **options) -> int:
    module = compile(Source(source, "k.cute"), Stage.THREAD, Options(**options)).module
    assert module is not None
    (kernel,) = [op for op in module.body.ops if isinstance(op, KernelOp)]
    return kernel.attributes["dynamic_smem"].value


def _operands(seed: int) -> tuple[np.ndarray, ...]:
    """A and B random, C and D NaN: (128, 64) f32 column-major, the kernels' four."""
    rng = np.random.default_rng(seed)
    a, b = (np.asfortranarray(rng.standard_normal((128, 64), dtype=np.float32)) for _ in "ab")
    c, d = (np.asfortranarray(np.full((128, 64), np.nan, np.float32)) for _ in "cd")
    return a, b, c, d


@pytest.mark.parametrize(
    ("copy_x", "fence", "nbytes"),
    [
        (SYNC_COPY, "  sync()", 32768),  # sY reuses sX's bytes
        (SYNC_COPY, "", 65536),  # a thread may still read sX while another writes sY
        (ASYNC_COPY, "  sync()", 32768),  # the wait(0) before the first sync landed them
        # A copy into sX may still be in flight (wait(1) leaves one group pending).
        (ASYNC_PENDING, "  sync()", 65536),
        (ASYNC_PENDING, "  cp_async_wait(0)\n  sync()", 32768),
    ],
)
def test_a_buffer_reuses_a_dead_one_only_past_a_fence(copy_x: str, fence: str, nbytes: int) -> None:
    source = TWO_BUFFERS.format(copy_x=copy_x, fence=fence)
    assert _dynamic_smem(source) == nbytes


@pytest.mark.parametrize("copy_x", [SYNC_COPY, ASYNC_COPY])
def test_reused_bytes_compute_right_on_the_cpu(copy_x: str) -> None:
    source = TWO_BUFFERS.format(copy_x=copy_x, fence="  sync()")
    k = rt.jit(source, device="cpu")
    a, b, c, d = _operands(0)
    k(a, b, c, d)
    np.testing.assert_array_equal(c, np.roll(a, -1, axis=0))
    np.testing.assert_array_equal(d, np.roll(b, -1, axis=0))


# The same in a loop whose iterations all threads run (a persistent kernel's loop over
# tiles): sY may take sX's bytes only if a barrier also orders this iteration's reads
# of sY before the next iteration's writes of sX (`{back}` at the end of the body).
LOOP = """
kernel k(A: f32[128, 64] : (1, 128), B: f32[128, 64] : (1, 128),
         C: f32[128, 64] : (1, 128), D: f32[128, 64] : (1, 128), n: int)
  grid (1, 1) threads 128
{{
  sX = smem f32[(128, 64)]
  sY = smem f32[(128, 64)]
  mine = make_layout((128, 1))
  r = make_fragment_like(local_partition(sX, mine, thread.x))
  for i in range(n) {{
    copy(local_partition(A, mine, (thread.x + i) % 128), local_partition(sX, mine, thread.x))
    sync()
    copy(local_partition(sX, mine, (thread.x + 1) % 128), r)
    copy(r, local_partition(C, mine, thread.x))
    sync()
    copy(local_partition(B, mine, thread.x), local_partition(sY, mine, thread.x))
    sync()
    copy(local_partition(sY, mine, (thread.x + 1) % 128), r)
    copy(r, local_partition(D, mine, thread.x))
{back}
  }}
}}
"""


# The loop, its shift read from a buffer written before it (a stream-K share's bounds
# in gemm_tiled): that buffer is pinned, live through the loop in bytes of its own, and
# the two others still share theirs inside it.
PINNED = LOOP.replace(
    "  for i in range(n) {{",
    "  sN = smem s64[make_layout(1)]\n  if thread.x == 0 {{\n    sN[0] = s64(1)\n  }}\n"
    "  sync()\n  for i in range(n) {{",
).replace("copy(local_partition(sX, mine, (thread.x + 1) % 128), r)",
          "copy(local_partition(sX, mine, (thread.x + int(sN[0])) % 128), r)")  # fmt: skip


@pytest.mark.parametrize(
    ("source", "nbytes"),
    [(LOOP.format(back="    sync()"), 32768), (LOOP.format(back=""), 65536),
     (PINNED.format(back="    sync()"), 32768 + 128)],  # the pinned 8 bytes in their own 128
    ids=["back-barrier", "no-back-barrier", "pinned"],
)  # fmt: skip
def test_in_a_loop_the_reuse_needs_a_barrier_before_the_next_iteration(
    source: str, nbytes: int
) -> None:
    assert _dynamic_smem(source) == nbytes
    k = rt.jit(source, device="cpu")
    a, b, c, d = _operands(1)
    k(a, b, c, d, 3)  # the race checker watches the reused bytes across iterations
    np.testing.assert_array_equal(c, np.roll(a, -3, axis=0))
    np.testing.assert_array_equal(d, np.roll(b, -1, axis=0))


# The two-buffer kernel inside a branch: the CTAs past a limit skip it (gemm_tiled's
# past the full waves). A thread that takes the branch runs its ops in order.
BRANCH = TWO_BUFFERS.replace(
    "C: f32[128, 64] : (1, 128), D: f32[128, 64] : (1, 128))",
    "C: f32[128, 64] : (1, 128), D: f32[128, 64] : (1, 128), n: int)",
)
BRANCH = BRANCH.replace("  {copy_x}\n", "  if block.x < n {{\n  {copy_x}\n").replace(
    "local_partition(D, mine, thread.x))\n}}", "local_partition(D, mine, thread.x))\n  }}\n}}"
)


@pytest.mark.parametrize(("fence", "nbytes"), [("  sync()", 32768), ("", 65536)])
def test_in_a_branch_the_reuse_follows_its_ops(fence: str, nbytes: int) -> None:
    source = BRANCH.format(copy_x=SYNC_COPY, fence=fence)
    assert "if block.x < n" in source
    assert _dynamic_smem(source) == nbytes
    k = rt.jit(source, device="cpu")
    a, b, c, d = _operands(2)
    k(a, b, c, d, 1)
    np.testing.assert_array_equal(d, np.roll(b, -1, axis=0))
    if fence:  # without the barrier the CPU's race checker reports the read of sX
        np.testing.assert_array_equal(c, np.roll(a, -1, axis=0))


def test_buffers_in_both_branches_keep_their_own_bytes() -> None:
    """sX touched in one branch and sY in the other: no one order of positions, so
    no reuse (the analysis does not reason across branches)."""
    source = """
kernel k(A: f32[128, 64] : (1, 128), C: f32[128, 64] : (1, 128), n: int)
  grid (1, 1) threads 128
{
  sX = smem f32[(128, 64)]
  sY = smem f32[(128, 64)]
  mine = make_layout((128, 1))
  r = make_fragment_like(local_partition(C, mine, thread.x))
  if block.x < n {
    copy(local_partition(A, mine, thread.x), local_partition(sX, mine, thread.x))
    sync()
    copy(local_partition(sX, mine, (thread.x + 1) % 128), r)
  } else {
    copy(local_partition(A, mine, thread.x), local_partition(sY, mine, thread.x))
    sync()
    copy(local_partition(sY, mine, (thread.x + 1) % 128), r)
  }
  copy(r, local_partition(C, mine, thread.x))
}
"""
    assert _dynamic_smem(source) == 65536


def test_the_epilogue_takes_the_pipeline_stages_bytes() -> None:
    """gemm_auto's tuned sm_80 tile: 3 stages of (128 + 256) x 64 f16 (147,456 bytes); the
    epilogue's (128, 64) f32 chunk of C (padded, 33,792 bytes) is touched only after
    the k-loop's wait and barrier, and lives in the stages' bytes."""
    defines = {"BN": "256", "BK": "64"}
    text = (EXAMPLES / "gemm_auto.cute").read_text()
    # On sm_80 (163 KiB per CTA) it fits only so: 181,248 bytes without the reuse.
    nt = {"kernel": "gemm_nt", "target": "sm_80", **DIVISIBLE}
    assert _dynamic_smem(text, defines=defines, **nt) == 147456
    # Persistent: the chunk and the stages in the loop over tiles, a barrier at its end.
    assert _dynamic_smem(text, defines={**defines, "PERSIST": "true"}, **nt) == 147456
    # The full waves' kernel of a stream-K pair (its tiles in a branch), and the tail
    # (a loop over a share's tiles; its bounds, 32 bytes, pinned outside it).
    text = (EXAMPLES / "gemm_stream_k.cute").read_text()
    assert _dynamic_smem(text, kernel="gemm_nt", target="sm_80") == 147456
    assert _dynamic_smem(text, kernel="gemm_nt_tail", target="sm_80") == 147456 + 128


def test_too_much_shared_memory_is_a_located_error() -> None:
    defines = {"BN": "256", "BK": "64", "BP": "4"}
    source = Source.from_file(EXAMPLES / "gemm_auto.cute")
    with pytest.raises(CompileError) as e:
        options = Options(**DIVISIBLE, kernel="gemm_nt", defines=defines, target="sm_80")
        compile(source, Stage.PTX, options)
    text = e.value.render()
    line = _call_line("gemm_nt")
    assert f"gemm_auto.cute:{line}:3: error: shared memory use reaches 196608 bytes" in text
    assert "the limit on sm_80 is 166912 (163 KiB per CTA)" in text


def test_the_reuse_is_a_remark_at_the_buffer() -> None:
    defines = {"BN": "256", "BK": "64"}
    result = compile(
        Source.from_file(EXAMPLES / "gemm_auto.cute"),
        Stage.PTX,
        Options(**DIVISIBLE, kernel="gemm_nt", defines=defines, target="sm_80"),
    )
    said = [r for r in result.remarks if r.message.startswith("shared memory:")]
    assert [r.message for r in said] == [
        "shared memory: this 33776-byte buffer reuses the bytes of one no thread touches "
        "any more (147456 bytes per CTA, 181248 without the reuse)"
    ]
    assert said[0].location is not None and said[0].location.line == _call_line("gemm_nt")
