"""mbarrier semantics for both CPU backends (cutec/ir/dialects/thread_mbarrier.py).

An mbarrier's state lives in its 8 bytes of shared memory, in a layout of our
own (the hardware's is opaque, and a kernel only touches it through mbarrier
instructions):

    bits  0..19  arrivals still pending in the current phase
    bits 20..39  arrivals per phase (the init count)
    bits 40..60  the current phase's transaction count (21-bit two's complement)
    bit  62      set: not an mbarrier (shared memory starts as 0xFF bytes)
    bit  63      the current phase's parity

A phase completes when its pending arrivals reach zero with a transaction count
of zero: the parity flips and the pending count is the init count again. A
wait for parity p is satisfied when the current phase's parity is not p (the
phase of parity p, the one before it, has completed: PTX's test_wait.parity).

**Scheduling.** A warp that reaches a wait that is not satisfied yields (the
scheduler runs the others and comes back), so a warp-specialised kernel runs
as on the GPU; when no warp can go on, the deadlock report names each waiting
warp's mbarrier and parity (`Waiting`).

**Asynchronous arrivals** (``cp_async_mbarrier_arrive``): the thread's copies
issued so far leave its cp.async groups and land, with the arrival, only when
some thread waits on that mbarrier: as late as the GPU may make them. Until
then their destinations hold 0xFF bytes (NaN), and with the shared-memory
checks a read of them is reported: a missing wait shows.

**Asynchronous transactions** (a TMA load, `async_tx`): its bytes land, and
complete their transaction on the phase, likewise only at a wait on the mbarrier.
Every arrival in with a negative count (more bytes landed than `expect_tx`
announced) is an error; fewer never complete the phase (a deadlock at the wait).

**Publishing an init.** Another thread may use an mbarrier only once its init is
published: the initialising thread ran an init fence (`INIT_FENCES`) after it, and
then a barrier joining that thread completed (a CTA barrier, a named barrier its
warp took part in, a cluster barrier). A use before is a *missing init fence*
(`check_published`), reported at the use.

**Ordering.** Each completed phase starts a new interval of the shared-memory
race check (`cutec.cpu.checks`), as a CTA barrier does: an access after a wait
is not a race with one before the arrivals it waited for. Coarser than the GPU's
ordering (a phase orders only its arrivers before its waiters), so a race across
a phase of an unrelated mbarrier is not reported; no false report results.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from cutec.ir.core import Operation
from cutec.ir.dialects import thread

# The fences after which a thread's mbarrier inits are published by the next barrier
# (the PTX ISA's fence.mbarrier_init): both backends run each as `Mbarriers.fence` of
# its thread. fence.proxy.async does it too, in both, where it runs as wgmma's proxy
# fence as well (reference_wgmma, native_collective).
INIT_FENCES: tuple[type[Operation], ...] = (thread.FenceMbarrierInitOp,)

_PENDING = (1 << 20) - 1
_COUNT_SHIFT, _TX_SHIFT = 20, 40
_TX_BITS = 21
_NOT_INIT = 1 << 62
_PARITY = 1 << 63
MAX_COUNT = (1 << 20) - 1


Key = tuple[int, int]  # an mbarrier: (its buffer, its byte offset)
Tid = tuple[int, int, int]


@dataclass
class _Init:
    """Who initialised an mbarrier, and how far its init has been published."""

    tid: Tid
    warp: int
    fenced: bool = False  # the initialising thread ran an init fence since
    published: bool = False  # and a barrier its warp took part in completed after it


class MbarrierError(Exception):
    """A misuse of an mbarrier (the caller adds the op, thread and block)."""


@dataclass(frozen=True)
class Waiting:
    """A warp waiting on an mbarrier, for the deadlock report."""

    op: Operation
    buffer: str
    byte: int
    parity: int

    def describe(self) -> str:
        loc = self.op.location or self.op.parsed_at
        return (f"the mbarrier at byte {self.byte} of {self.buffer} (for the phase of parity "
                f"{self.parity}) at {loc}")  # fmt: skip


def _word(raw: np.ndarray) -> int:
    return int(raw.view(np.uint64)[0])


def _set(raw: np.ndarray, word: int) -> None:
    raw.view(np.uint64)[0] = word


def _fields(raw: np.ndarray) -> tuple[int, int, int, int]:
    """(pending, count, tx, parity) of an initialised mbarrier."""
    w = _word(raw)
    if w & _NOT_INIT or (w >> 61) & 1:
        raise MbarrierError("the mbarrier is not initialised (no mbarrier_init wrote it)")
    tx = (w >> _TX_SHIFT) & ((1 << _TX_BITS) - 1)
    tx -= (tx >> (_TX_BITS - 1)) << _TX_BITS
    return w & _PENDING, (w >> _COUNT_SHIFT) & _PENDING, tx, w >> 63


def _store(raw: np.ndarray, pending: int, count: int, tx: int, parity: int) -> None:
    if not -(1 << (_TX_BITS - 1)) < tx < 1 << (_TX_BITS - 1):
        raise MbarrierError(f"the transaction count {tx} is out of range")
    tx_bits = tx & ((1 << _TX_BITS) - 1)
    _set(raw, parity << 63 | tx_bits << _TX_SHIFT | count << _COUNT_SHIFT | pending)


class Mbarriers:
    """The mbarrier operations of one CTA's run. `raw` arguments are an mbarrier's 8
    bytes (a view into its shared buffer); `key` names it (buffer, byte offset).
    `on_phase` is called at each completed phase (the caller starts a new interval
    of the race check); `events` counts the changes of any mbarrier (the scheduler's
    sign of progress)."""

    def __init__(self, on_phase: Callable[[], None]) -> None:
        self.on_phase = on_phase
        self.events = 0
        # key -> [(the arrival's mbarrier bytes, land its copies)], in issue order
        self.arrivals: dict[tuple[int, int], list[tuple[np.ndarray, Callable[[], None]]]] = {}
        # key -> [(the mbarrier bytes, transaction bytes, land them)]: TMA loads, in order
        self.transactions: dict[Key, list[tuple[np.ndarray, int, Callable[[], None]]]] = {}
        self.inits: dict[Key, _Init] = {}

    def reset(self) -> None:
        """A new CTA: asynchronous arrivals the last one never waited for are dropped."""
        self.arrivals = {}
        self.transactions = {}
        self.inits = {}

    # -- publishing an init: init, then a fence by its thread, then a barrier
    def initialised(self, key: Key, tid: Tid, warp: int) -> None:
        """Thread `tid` (of warp `warp`) ran mbarrier_init on `key`."""
        self.inits[key] = _Init(tid, warp)

    def fence(self, tid: Tid) -> None:
        """Thread `tid` ran an init fence: its inits so far are fenced."""
        for init in self.inits.values():
            if init.tid == tid:
                init.fenced = True

    def barrier(self, warps: set[int] | None = None) -> None:
        """A barrier completed (`warps`: the warps it joined; None: the whole CTA): the
        fenced inits of its threads are published."""
        for init in self.inits.values():
            if init.fenced and (warps is None or init.warp in warps):
                init.published = True

    def check_published(self, key: Key, tid: Tid) -> None:
        """Thread `tid` uses `key`: unless it initialised it itself, the init must be
        published (mbarrier_init_fence by the initialising thread, then a barrier)."""
        init = self.inits.get(key)
        if init is None or init.published or init.tid == tid:
            return
        if init.fenced:
            raise MbarrierError(
                f"missing barrier after the init fence: thread {init.tid} initialised this "
                "mbarrier and fenced it, but no barrier joined it since"
            )
        raise MbarrierError(
            f"missing init fence: thread {init.tid} initialised this mbarrier, and no "
            "mbarrier_init_fence() by that thread and barrier came before this use"
        )

    def init(self, raw: np.ndarray, count: int) -> None:
        if not 1 <= count <= MAX_COUNT:
            raise MbarrierError(f"mbarrier_init count {count} is outside 1..{MAX_COUNT}")
        _store(raw, count, count, 0, 0)
        self.events += 1

    def arrive(self, raw: np.ndarray) -> None:
        pending, count, tx, parity = _fields(raw)
        if pending == 0:  # a phase completes at zero and starts again: cannot happen
            raise MbarrierError("an arrival on an mbarrier whose phase has no pending arrival")
        self._update(raw, pending - 1, count, tx, parity)

    def expect_tx(self, raw: np.ndarray, tx: int) -> None:
        pending, count, old, parity = _fields(raw)
        self._update(raw, pending, count, old + tx, parity)

    def arrive_expect_tx(self, raw: np.ndarray, tx: int) -> None:
        """expect_tx, then an arrival (the count is raised first: the arrival cannot
        complete the phase without it)."""
        self.expect_tx(raw, tx)
        self.arrive(raw)

    def complete_tx(self, raw: np.ndarray, tx: int) -> None:
        self.expect_tx(raw, -tx)

    def _update(self, raw: np.ndarray, pending: int, count: int, tx: int, parity: int) -> None:
        self.events += 1
        if pending == 0 and tx < 0:  # every arrival is in: no expect_tx can make up for it
            raise MbarrierError(
                f"{-tx} bytes more landed on this mbarrier's phase (of parity {parity}) than "
                "its expect_tx announced"
            )
        if pending == 0 and tx == 0:
            _store(raw, count, count, 0, parity ^ 1)
            self.on_phase()
        else:
            _store(raw, pending, count, tx, parity)

    def async_arrival(self, key: tuple[int, int], raw: np.ndarray, land: Callable[[], None]
                      ) -> None:  # fmt: skip
        """An arrival on `raw` once the copies that `land` lands have landed."""
        _fields(raw)  # an initialised mbarrier
        self.arrivals.setdefault(key, []).append((raw, land))

    def async_tx(self, key: Key, raw: np.ndarray, nbytes: int, land: Callable[[], None]
                 ) -> None:  # fmt: skip
        """A transaction of `nbytes` on `raw` (a TMA load's complete_tx) once the bytes
        that `land` writes have landed: as late as the GPU may land them, at a wait."""
        _fields(raw)  # an initialised mbarrier
        self.transactions.setdefault(key, []).append((raw, nbytes, land))

    def ready(self, key: tuple[int, int], raw: np.ndarray, parity: int) -> bool:
        """Whether the phase of `parity` has completed, once the asynchronous arrivals
        and transactions on this mbarrier have happened (their copies landed)."""
        for bar, land in self.arrivals.pop(key, []):
            land()
            self.arrive(bar)
        for bar, nbytes, land in self.transactions.pop(key, []):
            land()
            self.complete_tx(bar, nbytes)
        done = _fields(raw)[3] != parity & 1
        self.events += done  # a thread went on: progress
        return done
