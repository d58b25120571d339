"""The planner of a whole-tensor gemm: the kernel's structure, chosen before its
library body is instantiated.

``gemm(A, B, C, alpha, beta, tile = ..., stages = ...)`` is a library builtin: a
.cute func (``cutec/frontend/lib/``) that the frontend inlines with the plan's
choices as arguments. `plan_kernel` makes every choice of the kernel once, from
the facts the frontend hands it (`GemmFacts`):

* the **body** (the mainloop family): the first rule of `GEMM_BODIES` for the
  target that accepts the gemm names the .cute file and func. sm_90a takes
  ``gemm_ws`` (``lib/gemm_ws_sm90.cute``: warp-specialised TMA + wgmma, planned by
  `ws_plan.plan_ws`) where its rules allow, and says why not where they do not;
  every target's fallback is ``gemm_tiled`` (cp.async, ldmatrix and mma.sync,
  CuTe's sgemm_sm80);
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
from typing import Any

from cutec.heuristics.tile_plan import (
    EpiloguePlan,
    GemmPlan,
    choose_threads,
    copy_bytes,
    plan_epilogue,
    plan_gemm,
)
from cutec.heuristics.ws_plan import WsFacts, WsPlan, plan_ws
from cutec.target import Feature, Target

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
    per operand whether v elements may move as one aligned vector (`copy_bytes`), the
    element type, the schedule, and per operand whether a tensor map may read it."""

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
    element: str = "f16"  # the operands' dtype name
    schedule: str = "tiles"  # "tiles", "persistent" or "stream-K" (a wave or stream_k)
    a_tma: bool = False  # whether A may be read through a tensor map (16-byte base, strides)
    b_tma: bool = False
    epilogue: str = "registers"  # the gemm's `epilogue =`
    c_bits: int = 32
    c_tma_store: bool = False  # whether a store map may write C (M-major, 16-byte rows)
    c_element: str = "f32"


@dataclass(frozen=True)
class BodyRule:
    """A library body for the targets where `targets` holds, serving the gemms `plan`
    accepts: it returns the body's own plan (None for gemm_tiled, whose plan is
    `plan_gemm`'s), or a sentence saying why the body does not serve the gemm (the
    planner tries the next rule and reports it). `what` says what the body runs."""

    targets: Callable[[Target], bool]
    body: LibraryBody
    what: str
    plan: Callable[[GemmFacts], Any]


def _ws_plan(f: GemmFacts) -> WsPlan | str:
    facts = WsFacts(f.bits, f.acc_bits, f.element == "f16", f.a_k_major, f.b_k_major, f.a_tma,
                    f.b_tma, f.tile, f.stages, f.threads, f.schedule,
                    f.target.smem_per_cta, f.epilogue, f.c_bits, f.c_tma_store,
                    f.c_element in ("f32", "f16"))  # fmt: skip
    return plan_ws(facts)


GEMM_TILED = LibraryBody("gemm_tiled.cute", "gemm_tiled")
GEMM_WS = LibraryBody("gemm_ws_sm90.cute", "gemm_ws")
GEMM_WS_SWAPPED = LibraryBody("gemm_ws_sm90.cute", "gemm_ws_swapped")  # Cᵀ = B·Aᵀ
# The whole-tensor gemm's bodies, first match wins.
GEMM_BODIES: tuple[BodyRule, ...] = (
    BodyRule(
        lambda t: t.has(Feature.WGMMA) and t.has(Feature.TMA),
        GEMM_WS,
        "a warp-specialised TMA + wgmma kernel",
        _ws_plan,
    ),
    BodyRule(
        lambda t: True,
        GEMM_TILED,
        "cp.async, ldmatrix and mma.sync (CuTe's sgemm_sm80)",
        lambda f: None,
    ),
)


def choose_body(
    facts: GemmFacts, rules: Sequence[BodyRule] | None = None
) -> tuple[BodyRule, Any, tuple[str, ...]]:
    """The first of `rules` (default `GEMM_BODIES`) for the facts' target that accepts
    the gemm, its plan, and why each rule before it for that target did not."""
    passed = []
    for rule in GEMM_BODIES if rules is None else rules:
        if not rule.targets(facts.target):
            continue
        plan = rule.plan(facts)
        if not isinstance(plan, str):
            return rule, plan, tuple(passed)
        passed.append(f"not {rule.what}: {plan}")
    raise LookupError(f"no library body of the whole-tensor gemm serves {facts.target.name}")


@dataclass(frozen=True)
class KernelPlan:
    """The kernel's structure: its body, tile, stages and block, the body's plan (the
    CTA tile's `gemm` and `epilogue` for gemm_tiled, `ws` for the Hopper body), and the
    sentences saying the choices the user did not make (`body_why`: the body and why
    the bodies before it did not serve, empty where the target has one body;
    `threads_why`: None where the kernel fixed the block; `tail_why`: the tail's)."""

    body: LibraryBody
    tile: tuple[int, int, int]
    stages: int
    threads: int
    threads_why: str | None
    tail_why: str | None
    gemm: GemmPlan | None = None
    epilogue: EpiloguePlan | None = None
    ws: WsPlan | None = None
    body_why: tuple[str, ...] = ()

    def reasons(self) -> tuple[str, ...]:
        """The choices' sentences, in the order the `tile` pass says them."""
        if self.ws is not None:
            return (*self.body_why, *self.ws.remarks)
        g, e = self.gemm, self.epilogue
        assert g is not None and e is not None
        return (*self.body_why, g.remark, g.a.remark, g.b.remark, e.remark)


def plan_kernel(facts: GemmFacts, rules: Sequence[BodyRule] | None = None) -> KernelPlan:
    """Every choice of a whole-tensor gemm's kernel (see the module docstring); raises
    TilePlanError (its message says which size to change) where none fits."""
    rule, body_plan, passed = choose_body(facts, rules)
    body_why = (f"body: {rule.what}", *passed) if passed or len(_for(facts, rules)) > 1 else ()
    tile, stages, tail_why = facts.tile, facts.stages, None
    if isinstance(body_plan, WsPlan):
        threads_why = None
        if facts.threads is None:
            threads_why = f"{body_plan.threads} threads: the Hopper body's warpgroups"
        body = GEMM_WS_SWAPPED if body_plan.swapped else rule.body
        return KernelPlan(body, tile, stages, body_plan.threads, threads_why, None,
                          ws=body_plan, body_why=body_why)  # fmt: skip
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
    if facts.epilogue == "tma":  # the Hopper body's: said, not silently dropped
        body_why = (*body_why, 'epilogue = "tma" is the Hopper body\'s: this one writes C '
                    "through its shared chunks")  # fmt: skip
    return KernelPlan(rule.body, tile, stages, threads, threads_why, tail_why, gemm, epilogue,
                      body_why=body_why)  # fmt: skip


def _for(facts: GemmFacts, rules: Sequence[BodyRule] | None) -> list[BodyRule]:
    """The rules for the facts' target."""
    return [r for r in (GEMM_BODIES if rules is None else rules) if r.targets(facts.target)]
