"""Synchronisation instructions: barriers, mbarriers, fences, async-group waits.

One `SyncOp` per instruction form, each a `PtxTemplate` plus what a pass needs
to reason about it (principle 6): which threads must execute it together
(`collective`), and which asynchronous work it commits or waits for (`group`).

The families, with the asynchronous work they order:

* ``bar.sync`` / named barriers      CTA (or `count` threads) rendezvous, memory fence.
* ``mbarrier.*``                     a 64-bit shared-memory barrier with a phase bit
  and a transaction count: TMA loads ``complete_tx`` on it, consumers wait on
  the phase parity. ``try_wait`` may return false: the spin loop around it is
  structured control flow the lowering emits, not part of the template.
* ``fence.proxy.async``              orders generic-proxy shared-memory writes
  before async-proxy reads (TMA store, wgmma operands).
* ``cp.async.commit_group/wait_group``       groups of cp.async copies.
* ``cp.async.bulk.commit_group/wait_group``  groups of TMA stores.
* ``wgmma.fence/commit_group/wait_group``    warpgroup MMAs (sm_90a).
* ``setmaxnreg.inc/dec``             warpgroup register reallocation (sm_90a).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from cutec.atoms.ptx_template import Operand, PtxTemplate
from cutec.target import Target
from cutec.target import target as lookup_target

Collective = str  # "thread" | "warp" | "warpgroup" | "cta" | "cluster"


class SyncOpError(ValueError):
    """An unknown sync op or an immediate outside what the instruction takes."""


@dataclass(frozen=True)
class ImmRange:
    """Allowed values of an immediate operand: lo <= v <= hi and v % multiple == 0."""

    lo: int
    hi: int
    multiple: int = 1

    def check(self, op: str, name: str, value: int) -> None:
        if not (self.lo <= value <= self.hi and value % self.multiple == 0):
            step = f" in steps of {self.multiple}" if self.multiple > 1 else ""
            raise SyncOpError(f"{op}: ${name} must be {self.lo}..{self.hi}{step}, got {value}")


@dataclass(frozen=True)
class SyncOp:
    """One synchronisation instruction.

    `group` names the async-completion mechanism it commits or waits on
    (``cp.async.group``, ``bulk_group``, ``mbarrier``, ``wgmma``), matching
    `CopyAtom.async_completion`; None for plain barriers and fences.
    """

    name: str
    template: PtxTemplate
    min_target: Target  # the lowest target the instruction exists on
    min_ptx: tuple[int, int]
    collective: Collective
    group: str | None = None
    imm_ranges: tuple[tuple[str, ImmRange], ...] = ()
    example: tuple[tuple[str, str], ...] = ()  # legal immediates, for tests and docs

    def target(self) -> str:
        """The lowest ``.target`` this instruction assembles for."""
        return self.min_target.name

    def render(self, values: Mapping[str, str | Sequence[str]]) -> str:
        """The instruction text; immediates with a range are checked first."""
        for name, rng in self.imm_ranges:
            v = values.get(name)
            if isinstance(v, str) and v.lstrip("-").isdigit():
                rng.check(self.name, name, int(v))
        return self.template.render(values)


def _op(
    name: str,
    text: str,
    operands: tuple[Operand, ...] = (),
    *,
    target: str,
    ptx: tuple[int, int],
    collective: Collective,
    group: str | None = None,
    imm: tuple[tuple[str, ImmRange], ...] = (),
    example: tuple[tuple[str, str], ...] = (),
) -> SyncOp:
    return SyncOp(
        name,
        PtxTemplate(text, operands),
        lookup_target(target),
        ptx,
        collective,
        group,
        imm,
        example,
    )


_BAR_ID = ImmRange(0, 15)
_THREAD_COUNT = ImmRange(32, 1024, 32)  # named-barrier counts are whole warps
_GROUPS = ImmRange(0, 2**31 - 1)  # "at most N groups pending": any non-negative constant
_MBAR = Operand("bar", "b32", kind="addr")  # 32-bit shared-window address of the u64
_N = Operand("n", "u32", kind="imm")

SYNC_OPS: tuple[SyncOp, ...] = (
    # -- CTA barriers
    _op(
        "bar.sync",
        "bar.sync $id;",
        (Operand("id", "u32", kind="imm"),),
        target="sm_75",
        ptx=(6, 3),
        collective="cta",
        imm=(("id", _BAR_ID),),
        example=(("id", "0"),),
    ),
    _op(
        "bar.sync.named",
        "bar.sync $id, $count;",
        (Operand("id", "u32", kind="imm"), Operand("count", "u32", kind="imm")),
        target="sm_75",
        ptx=(6, 3),
        collective="cta",
        imm=(("id", _BAR_ID), ("count", _THREAD_COUNT)),
        example=(("id", "1"), ("count", "128")),
    ),
    _op(
        "bar.arrive.named",
        "bar.arrive $id, $count;",
        (Operand("id", "u32", kind="imm"), Operand("count", "u32", kind="imm")),
        target="sm_75",
        ptx=(6, 3),
        collective="cta",
        imm=(("id", _BAR_ID), ("count", _THREAD_COUNT)),
        example=(("id", "1"), ("count", "128")),
    ),
    _op(
        "barrier.cluster.arrive",
        "barrier.cluster.arrive.aligned;",
        target="sm_90",
        ptx=(7, 8),
        collective="cluster",
    ),
    _op(
        "barrier.cluster.arrive.relaxed",
        "barrier.cluster.arrive.relaxed.aligned;",
        target="sm_90",
        ptx=(8, 0),
        collective="cluster",
    ),
    _op(
        "barrier.cluster.wait",
        "barrier.cluster.wait.aligned;",
        target="sm_90",
        ptx=(7, 8),
        collective="cluster",
    ),
    # -- warp
    _op(
        "elect.sync",
        "elect.sync _|$p, 0xffffffff;",
        (Operand("p", "pred"),),
        target="sm_90",
        ptx=(8, 0),
        collective="warp",
    ),
    # -- mbarrier
    _op(
        "mbarrier.init",
        "mbarrier.init.shared::cta.b64 $bar, $count;",
        (_MBAR, Operand("count", "b32")),
        target="sm_80",
        ptx=(7, 8),
        collective="thread",
        group="mbarrier",
    ),
    _op(
        "mbarrier.inval",
        "mbarrier.inval.shared::cta.b64 $bar;",
        (_MBAR,),
        target="sm_80",
        ptx=(7, 8),
        collective="thread",
        group="mbarrier",
    ),
    _op(
        "mbarrier.arrive",
        "mbarrier.arrive.shared::cta.b64 $state, $bar;",
        (Operand("state", "b64"), _MBAR),
        target="sm_80",
        ptx=(7, 8),
        collective="thread",
        group="mbarrier",
    ),
    _op(
        "mbarrier.arrive.expect_tx",
        "mbarrier.arrive.expect_tx.shared::cta.b64 $state, $bar, $tx;",
        (Operand("state", "b64"), _MBAR, Operand("tx", "b32")),
        target="sm_90",
        ptx=(8, 0),
        collective="thread",
        group="mbarrier",
    ),
    _op(
        "mbarrier.expect_tx",
        "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 $bar, $tx;",
        (_MBAR, Operand("tx", "b32")),
        target="sm_90",
        ptx=(8, 0),
        collective="thread",
        group="mbarrier",
    ),
    _op(
        "mbarrier.test_wait.parity",
        "mbarrier.test_wait.parity.shared::cta.b64 $done, $bar, $parity;",
        (Operand("done", "pred"), _MBAR, Operand("parity", "b32")),
        target="sm_80",
        ptx=(7, 8),
        collective="thread",
        group="mbarrier",
    ),
    _op(
        "mbarrier.try_wait.parity",
        "mbarrier.try_wait.parity.shared::cta.b64 $done, $bar, $parity;",
        (Operand("done", "pred"), _MBAR, Operand("parity", "b32")),
        target="sm_90",
        ptx=(7, 8),
        collective="thread",
        group="mbarrier",
    ),
    # -- fences
    _op(
        "fence.proxy.async",
        "fence.proxy.async.shared::cta;",
        target="sm_90",
        ptx=(8, 0),
        collective="thread",
    ),
    _op(
        "fence.mbarrier_init",
        "fence.mbarrier_init.release.cluster;",
        target="sm_90",
        ptx=(8, 0),
        collective="thread",
        group="mbarrier",
    ),
    # -- cp.async groups
    _op(
        "cp.async.commit_group",
        "cp.async.commit_group;",
        target="sm_80",
        ptx=(7, 0),
        collective="thread",
        group="cp.async.group",
    ),
    _op(
        "cp.async.wait_group",
        "cp.async.wait_group $n;",
        (_N,),
        target="sm_80",
        ptx=(7, 0),
        collective="thread",
        group="cp.async.group",
        imm=(("n", _GROUPS),),
        example=(("n", "1"),),
    ),
    _op(
        "cp.async.wait_all",
        "cp.async.wait_all;",
        target="sm_80",
        ptx=(7, 0),
        collective="thread",
        group="cp.async.group",
    ),
    # -- bulk (TMA store) groups
    _op(
        "cp.async.bulk.commit_group",
        "cp.async.bulk.commit_group;",
        target="sm_90",
        ptx=(8, 0),
        collective="thread",
        group="bulk_group",
    ),
    _op(
        "cp.async.bulk.wait_group",
        "cp.async.bulk.wait_group $n;",
        (_N,),
        target="sm_90",
        ptx=(8, 0),
        collective="thread",
        group="bulk_group",
        imm=(("n", _GROUPS),),
        example=(("n", "0"),),
    ),
    _op(
        "cp.async.bulk.wait_group.read",
        "cp.async.bulk.wait_group.read $n;",
        (_N,),
        target="sm_90",
        ptx=(8, 0),
        collective="thread",
        group="bulk_group",
        imm=(("n", _GROUPS),),
        example=(("n", "0"),),
    ),
    # -- wgmma ordering (sm_90a)
    _op(
        "wgmma.fence",
        "wgmma.fence.sync.aligned;",
        target="sm_90a",
        ptx=(8, 0),
        collective="warpgroup",
        group="wgmma",
    ),
    _op(
        "wgmma.commit_group",
        "wgmma.commit_group.sync.aligned;",
        target="sm_90a",
        ptx=(8, 0),
        collective="warpgroup",
        group="wgmma",
    ),
    _op(
        "wgmma.wait_group",
        "wgmma.wait_group.sync.aligned $n;",
        (_N,),
        target="sm_90a",
        ptx=(8, 0),
        collective="warpgroup",
        group="wgmma",
        imm=(("n", _GROUPS),),
        example=(("n", "0"),),
    ),
    # -- register reallocation (sm_90a): count is 24..256 in steps of 8
    _op(
        "setmaxnreg.inc",
        "setmaxnreg.inc.sync.aligned.u32 $n;",
        (_N,),
        target="sm_90a",
        ptx=(8, 0),
        collective="warpgroup",
        imm=(("n", ImmRange(24, 256, 8)),),
        example=(("n", "240"),),
    ),
    _op(
        "setmaxnreg.dec",
        "setmaxnreg.dec.sync.aligned.u32 $n;",
        (_N,),
        target="sm_90a",
        ptx=(8, 0),
        collective="warpgroup",
        imm=(("n", ImmRange(24, 256, 8)),),
        example=(("n", "40"),),
    ),
)

_BY_NAME = {op.name: op for op in SYNC_OPS}
assert len(_BY_NAME) == len(SYNC_OPS), "duplicate sync op names"


def sync_op(name: str) -> SyncOp:
    """The sync instruction called `name`; raises naming the known ones."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise SyncOpError(f"unknown sync op {name!r}; known: {', '.join(_BY_NAME)}") from None
