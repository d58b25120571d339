"""The planner of a whole-tensor gemm: the kernel's structure, chosen before its
library body is instantiated.

``gemm(A, B, C, alpha, beta, tile = ..., stages = ...)`` is a library builtin: a
.cute func (``cutec/frontend/lib/``) that the frontend inlines with the plan's
choices as arguments. `plan_kernel` makes every choice of the kernel once, from
the facts the frontend hands it (`GemmFacts`):

* the **body** (the mainloop family): the first rule of `GEMM_BODIES` that holds
  for the target names the .cute file and func. Every target takes
  ``gemm_tiled`` (cp.async, ldmatrix and mma.sync, CuTe's sgemm_sm80); a body for
  another family (Hopper's TMA and wgmma) is a new .cute file and a row here;
* the **tile and stages**: the user's, but for the tail kernel of ``stream_k =
  true`` with 32-bit operands of a long BK (`tail_tile`);
* the **block** (`tile_plan.choose_threads`) where the kernel leaves it, and with it
  the warp layout, the shared-memory layouts, the copies and the epilogue
  (`tile_plan.plan_gemm`, `plan_epilogue`).

Each choice comes with the sentence the `tile` pass reports. The atoms inside the
body are select-atoms' (`select.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cutec.heuristics.tile_plan import (
    EpiloguePlan,
    GemmPlan,
    choose_threads,
    copy_bytes,
    plan_epilogue,
    plan_gemm,
)
from cutec.target import Target

# gemm_tiled's rule splits a last wave only when the k-loop it saves is worth this
# much of K (about what a share's second prologue and epilogue and the partial
# tile's store and load cost: lib/gemm_tiled.cute). Measured on an H200 at
# 8192 x 8192 x K (docs/notes/2026-11-28-stream-k-one-call.md): a split saving
# 497 of K lost 2.5%, 993 lost 0.5-1%, 1489 broke even and 1986 gained 0.2-0.7%.
SPLIT_MIN_K = 2048
# The tail kernel's k-tile under `stream_k = true` is the first kernel's, but for
# 32-bit (tf32) operands of this many bits of K or more: their loop over a share's
# pieces needs more registers than BK = 32 leaves (12 bytes spilled in NN), so it runs
# BK / 2 with a stage more.
TAIL_HALVES_BK_BITS = 1024


@dataclass(frozen=True)
class LibraryBody:
    """A library builtin's body: func `func` of the .cute file `file` (relative to
    cutec/frontend/lib/, or an absolute path)."""

    file: str
    func: str


@dataclass(frozen=True)
class BodyRule:
    """A body for the targets where `applies` holds; `why` says what it runs."""

    applies: Callable[[Target], bool]
    body: LibraryBody
    why: str


GEMM_TILED = LibraryBody("gemm_tiled.cute", "gemm_tiled")
# The whole-tensor gemm's bodies, first match wins.
GEMM_BODIES: tuple[BodyRule, ...] = (
    BodyRule(lambda t: True, GEMM_TILED, "cp.async, ldmatrix and mma.sync (CuTe's sgemm_sm80)"),
)


def choose_body(target: Target, rules: Sequence[BodyRule] | None = None) -> BodyRule:
    """The first of `rules` (default `GEMM_BODIES`) that applies to `target`."""
    for rule in GEMM_BODIES if rules is None else rules:
        if rule.applies(target):
            return rule
    raise LookupError(f"no library body of the whole-tensor gemm serves {target.name}")


def tail_tile(
    tile: tuple[int, int, int], stages: int, bits: int
) -> tuple[tuple[int, int, int], int, str]:
    """The tail kernel's tile and stages under `stream_k = true`, and the sentence saying
    so: the first kernel's, or for 32-bit operands at TAIL_HALVES_BK_BITS BK halved with
    a stage more."""
    bm, bn, bk = tile
    if bk % 2 == 0 and bits >= 32 and bk * bits >= TAIL_HALVES_BK_BITS:
        why = f"32-bit operands: at BK = {bk} the loop over a share's pieces may spill"
        return (
            (bm, bn, bk // 2),
            stages + 1,
            f"stream-K tail: BK = {bk // 2}, {stages + 1} stages ({why})",
        )
    return tile, stages, f"stream-K tail: the first kernel's BK = {bk} and {stages} stages"


@dataclass(frozen=True)
class GemmFacts:
    """What the planner chooses from: the target, the operands' element bits and
    majorness, the accumulators' bits, the user's tile and stages, the block the kernel
    fixes (None: the planner's), whether this is `stream_k = true`'s tail kernel, and
    per operand whether v elements may move as one aligned vector (`copy_bytes`)."""

    target: Target
    bits: int
    acc_bits: int
    a_k_major: bool
    b_k_major: bool
    tile: tuple[int, int, int]
    stages: int
    threads: int | None
    stream_k_tail: bool
    a_divisible: Callable[[int], bool]
    b_divisible: Callable[[int], bool]


@dataclass(frozen=True)
class KernelPlan:
    """The kernel's structure: its body, tile, stages and block, the CTA tile's plan
    and the epilogue's, and the sentences saying the choices the user did not make
    (`threads_why`: None where the kernel fixed the block; `tail_why`: the tail's)."""

    body: LibraryBody
    tile: tuple[int, int, int]
    stages: int
    threads: int
    threads_why: str | None
    tail_why: str | None
    gemm: GemmPlan
    epilogue: EpiloguePlan

    def reasons(self) -> tuple[str, ...]:
        """The CTA tile's sentences, in the order the `tile` pass says them."""
        g = self.gemm
        return (g.remark, g.a.remark, g.b.remark, self.epilogue.remark)


def plan_kernel(facts: GemmFacts, rules: Sequence[BodyRule] | None = None) -> KernelPlan:
    """Every choice of a whole-tensor gemm's kernel (see the module docstring); raises
    TilePlanError (its message says which size to change) where none fits."""
    body = choose_body(facts.target, rules).body
    tile, stages, tail_why = facts.tile, facts.stages, None
    if facts.stream_k_tail:
        tile, stages, tail_why = tail_tile(tile, stages, facts.bits)
    threads, threads_why = facts.threads, None
    if threads is None:
        threads, threads_why = choose_threads(tile)
    a_copy = copy_bytes(facts.bits, facts.a_divisible)
    b_copy = copy_bytes(facts.bits, facts.b_divisible)
    bits = facts.bits
    gemm = plan_gemm(bits, bits, facts.a_k_major, facts.b_k_major, tile, a_copy, b_copy, threads)
    epilogue = plan_epilogue(facts.acc_bits, tile[0], gemm)
    return KernelPlan(body, tile, stages, threads, threads_why, tail_why, gemm, epilogue)
