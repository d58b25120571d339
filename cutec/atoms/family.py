"""Atom families: which instruction an MMA or copy atom is, and the traits lowering reads.

Every atom record names its `Family` (set in its per-architecture table); the
family's `FamilyTraits` row below holds what is true of all its atoms and what
the compiler's consumers need to decide how to lower, run or show one. Code
outside cutec/atoms dispatches on ``atom.family`` and these traits, never on an
atom's name (tests/test_atom_name_tests.py checks that).

Per-atom facts that vary inside a family are record fields: the issuing threads
(``thr_id``), ldmatrix/stmatrix's ``transpose``, cp.async's ``cache`` operator and
``zfill``, wgmma's majors and shared-memory operands.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Literal


class Family(enum.Enum):
    """One instruction family of the atom library."""

    UNIVERSAL_FMA = "UniversalFMA"  # fma.rn / mad.lo, one thread
    QUADPAIR_MMA = "mma.sync quadpair"  # SM70's m8n8k4: 8 threads (a quadpair)
    MMA_SYNC = "mma.sync"  # SM80's warp-wide mma.sync
    WGMMA = "wgmma"  # SM90's warpgroup wgmma.mma_async
    UNIVERSAL_COPY = "UniversalCopy"  # ld/st of one thread
    LDMATRIX = "ldmatrix"
    STMATRIX = "stmatrix"
    CP_ASYNC = "cp.async"
    TMA_LOAD = "TMA load"  # cp.async.bulk.tensor global -> shared::cluster
    TMA_STORE = "TMA store"  # cp.async.bulk.tensor shared -> global

    @property
    def traits(self) -> FamilyTraits:
        """This family's row of `FAMILY_TRAITS`."""
        return FAMILY_TRAITS[self]


class IssueGroup(enum.Enum):
    """The threads that issue one instruction together (the atom's size(ThrID))."""

    THREAD = "thread"
    QUADPAIR = "quadpair"
    WARP = "warp"
    WARPGROUP = "warpgroup"

    @property
    def threads(self) -> int:
        return _GROUP_THREADS[self]


_GROUP_THREADS = {
    IssueGroup.THREAD: 1,
    IssueGroup.QUADPAIR: 8,
    IssueGroup.WARP: 32,
    IssueGroup.WARPGROUP: 128,
}

# What makes an asynchronous atom's result visible; the same words as `SyncOp.group`
# (sync.py), so a wait can be matched with the atoms it completes.
Completion = Literal["cp.async.group", "mbarrier", "bulk_group", "wgmma"]


@dataclass(frozen=True)
class FamilyTraits:
    """What holds for every atom of a family.

    * `instruction`: the PTX instruction the family's templates are (``cutec atoms``'
      KIND column).
    * `group`: the threads that issue one instruction; every record's ``thr_id`` has
      this many threads (tests/atoms/test_families.py).
    * `completion`: None for a synchronous atom, else what completes it.
    * `portable`: the instruction exists on every target (UniversalFMA/UniversalCopy;
      their records carry the oldest target ptxas assembles, ``cutec atoms`` says
      "any").
    * `elementwise`: one thread moves a vector of contiguous elements, so any
      partition whose per-thread values are contiguous serves it and one predicate
      guards one call (UniversalCopy, cp.async); the other copy families fix each
      thread's registers to one instruction's layout (ldmatrix, stmatrix, TMA).
    * `per_box`: an atom moves a whole box whose size each use gives (TMA's
      ``bits=``), so the record is made per use, not listed.
    """

    kind: Literal["mma", "copy"]
    instruction: str
    group: IssueGroup
    completion: Completion | None = None
    portable: bool = False
    elementwise: bool = False
    per_box: bool = False


# One row per family. Adding a family: a `Family` member, its row here, its records in
# a per-architecture table, and a row in each consumer table that lowers or runs it
# (docs/atoms.md, "Adding a family").
FAMILY_TRAITS: dict[Family, FamilyTraits] = {
    Family.UNIVERSAL_FMA: FamilyTraits("mma", "fma", IssueGroup.THREAD, portable=True),
    Family.QUADPAIR_MMA: FamilyTraits("mma", "mma.sync", IssueGroup.QUADPAIR),
    Family.MMA_SYNC: FamilyTraits("mma", "mma.sync", IssueGroup.WARP),
    Family.WGMMA: FamilyTraits("mma", "wgmma", IssueGroup.WARPGROUP, completion="wgmma"),
    Family.UNIVERSAL_COPY: FamilyTraits(
        "copy", "ld/st", IssueGroup.THREAD, portable=True, elementwise=True
    ),
    Family.LDMATRIX: FamilyTraits("copy", "ldmatrix", IssueGroup.WARP),
    Family.STMATRIX: FamilyTraits("copy", "stmatrix", IssueGroup.WARP),
    Family.CP_ASYNC: FamilyTraits(
        "copy", "cp.async", IssueGroup.THREAD, completion="cp.async.group", elementwise=True
    ),
    Family.TMA_LOAD: FamilyTraits(
        "copy", "cp.async.bulk.tensor", IssueGroup.THREAD, completion="mbarrier", per_box=True
    ),
    Family.TMA_STORE: FamilyTraits(
        "copy", "cp.async.bulk.tensor", IssueGroup.THREAD, completion="bulk_group", per_box=True
    ),
}
