"""The reference interpreter's TMA stores (a TMA_STORE atom) and bulk async-groups.

One thread issues ``cp.async.bulk.tensor`` shared::cta -> global (operands: the map,
the coordinates innermost first, the shared source). The async proxy may read the
box from shared memory at any time between the issue and the ``thread.bulk_wait
{read}`` (``cp.async.bulk.wait_group.read``) that covers the store's group, and its
global writes are complete at a plain ``thread.bulk_wait``. The model reads the box
as late as the GPU may: at the first wait that covers its group (at the CTA's end
for a store no wait covers), and writes the box's elements that are in bounds to
global memory at a plain wait (or the CTA's end); the others are skipped
(`cutec.cpu.tma.store_box`).

Checks (with the shared-memory checks), each located:

* at the issue, the bytes of the box's in-bounds elements are a read by the issuing
  thread (`checks.TMA_STORE`): written in this CTA, landed, and not written by
  another thread since the last barrier; and each writer fenced its generic-proxy
  writes to the async proxy after writing them (``thread.fence_proxy_async``,
  `checks.ProxyFences`: a *missing proxy fence*);
* a write of a box's bytes (``st.shared``, ``cp.async``, a TMA load; by any thread)
  after the store's issue and before the wait that reads it is reported at the
  write: the staging tile was *rewritten before cp.async.bulk.wait_group.read*.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from cutec.atoms.tma import store_overrun
from cutec.cpu import checks, tma
from cutec.cpu.reference_tma import TmaOps
from cutec.ir.dialects.thread_tma import BulkCommitOp, BulkWaitOp

if TYPE_CHECKING:
    from cutec.cpu.reference import _Cta
    from cutec.cpu.reference_memory import AccessError, Buffer
    from cutec.ir.core import Operation
    from cutec.ir.dialects import thread


@dataclass(eq=False)
class BulkStore:
    """One TMA store in flight: its op, map and coordinates, and the shared byte address
    of each byte of its box (swizzled, in the box's order); `data`, once it is read."""

    op: thread.AtomOp
    map: tma.BoundMap
    coords: list[int]
    buffer: Buffer
    at: np.ndarray
    data: np.ndarray | None = None

    def read(self, staged: StagedBoxes) -> None:
        """The async proxy reads the box (once): its bytes may be rewritten after."""
        if self.data is None:
            self.data = self.buffer.data[self.at].copy()
            staged.remove(self)

    def complete(self, staged: StagedBoxes) -> None:
        """The store is done: the box read and its in-bounds elements written."""
        self.read(staged)
        assert self.data is not None
        tma.store_box(self.map, self.coords, self.data)


@dataclass
class BulkGroups:
    """A thread's bulk copies: those issued since its last commit, and its groups."""

    open: list[BulkStore] = field(default_factory=list)
    groups: list[list[BulkStore]] = field(default_factory=list)


class StagedBoxes:
    """A CTA's TMA stores issued and not yet read, by buffer: a write of their bytes is
    reported (the staging tile rewritten before the wait that reads it)."""

    def __init__(self) -> None:
        self.by_buffer: dict[int, list[BulkStore]] = {}

    def add(self, store: BulkStore) -> None:
        self.by_buffer.setdefault(id(store.buffer), []).append(store)

    def remove(self, store: BulkStore) -> None:
        self.by_buffer[id(store.buffer)].remove(store)

    def rewritten(self, buf: Buffer, first: int, n: int, kind: int) -> str | None:
        """The report of a write (`kind`) of bytes first..first+n-1 of `buf` that a store
        not yet read reads, or None."""
        for store in self.by_buffer.get(id(buf), ()):
            hit = (store.at >= first) & (store.at < first + n)
            if hit.any():
                byte = int(store.at[np.flatnonzero(hit)[0]])
                where = store.op.location or store.op.parsed_at
                return (f"{checks.kind_name(kind)} of byte {byte} of {buf.name}, which the TMA "
                        f"store at {where} reads: the staging tile is rewritten before "
                        "cp.async.bulk.wait_group.read (thread.bulk_wait {read}) covers the "
                        "store")  # fmt: skip
        return None


def _runs(addresses: np.ndarray) -> list[tuple[int, int]]:
    """(first, count) of each run of consecutive byte addresses."""
    breaks = np.flatnonzero(np.diff(addresses) != 1) + 1
    return [(int(r[0]), len(r)) for r in np.split(addresses, breaks) if len(r)]


class TmaStoreOps(TmaOps):
    """The TMA store and bulk-group handlers of a reference thread (mixed into its class)."""

    if TYPE_CHECKING:
        env: dict[Any, Any]
        cta: _Cta
        bulk: BulkGroups
        linear: int

        def error(self, op: Operation, message: str) -> AccessError: ...

    def tma_store(self, op: thread.AtomOp) -> None:
        """``cp.async.bulk.tensor`` shared::cta -> global: checked now, read at the wait
        that covers it."""
        m, coords, buf, at = self.tma_box(op, op.args[0], op.args[1:-1], op.args[-1], "source")
        _, inside = tma.box_elements(m, coords)
        d = m.desc
        why = store_overrun(d.global_dims, d.dtype.nbytes)
        if why is not None and coords[0] + d.box_dims[0] > d.global_dims[0]:
            raise self.error(op, why)
        size = m.desc.dtype.nbytes
        read = np.sort(at.reshape(-1, size)[inside].reshape(-1))  # the bytes written out
        if self.cta.check_shared and read.size:
            for first, n in _runs(read):
                self.cta.note_shared(self, op, buf, first, n, checks.TMA_STORE)
            shadow = self.cta.shadows[id(buf)]
            units = np.unique(read // shadow.unit)
            k = self.cta.proxy.unfenced(shadow, units)
            if k is not None:
                writer = int(shadow.words[units[k], 0] & checks.TID_MASK) - 1
                raise self.error(op, checks.missing_fence_message(
                    "the TMA store", int(units[k]) * shadow.unit, buf.name,
                    checks.tid3(writer, self.cta.block)))  # fmt: skip
        store = BulkStore(op, m, coords, buf, at)
        self.bulk.open.append(store)
        self.cta.staged.add(store)

    def bulk_commit(self, op: BulkCommitOp) -> None:
        self.bulk.groups.append(self.bulk.open)
        self.bulk.open = []

    def bulk_wait(self, op: BulkWaitOp) -> None:
        """All but the newest `pending` groups are read (`read`) or complete."""
        groups = self.bulk.groups
        older = groups[: max(0, len(groups) - op.pending.value)]
        for store in (s for g in older for s in g):
            if op.read is not None:
                store.read(self.cta.staged)
            else:
                store.complete(self.cta.staged)
        if op.read is None:
            del groups[: len(older)]

    def bulk_finish(self) -> None:
        """The CTA ends: the thread's stores that no wait completed complete now."""
        for store in [s for g in self.bulk.groups for s in g] + self.bulk.open:
            store.complete(self.cta.staged)
        self.bulk = BulkGroups()


# Handlers: op class -> method name (the store is a TMA_STORE atom's rule, by its family).
TMA_STORE_HANDLERS: dict[type[Operation], str] = {
    BulkCommitOp: "bulk_commit",
    BulkWaitOp: "bulk_wait",
}
