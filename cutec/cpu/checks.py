"""Checks the GPU does not give, shared by the interpreter and the native backend.

* **Shared memory** (`SharedShadow`, and `SHADOW_CHECK_LLVM` for the warp code):
  every byte of a CTA's shared memory has a shadow of two words,

      W = epoch << 32 | pending << 31 | writer + 1      (0: never written)
      R = epoch << 32 | reader + 1 (or MANY)            (0: never read)

  where the *epoch* numbers barrier intervals (it grows by one each time a CTA's
  threads all pass a barrier, and never goes back across CTAs, so the shadow
  needs no clearing: a byte whose W epoch is below the CTA's first epoch was not
  written in this CTA) and writer / reader are linear thread indices. In one
  interval a byte keeps its last writer and its reader (MANY once two threads
  read it); an access conflicts when another thread wrote the byte in this
  interval, or, for a store, another thread read it. A load of a byte not
  written in this CTA is noted (the first one) and reported when the interval
  ends, unless a race is found first: a read before another thread's write in
  the same interval is a race, which is the better report of a missing barrier.
  Because every access is checked against the record the earlier ones left,
  which access comes first does not matter: lanes of one warp are checked one
  after another, so two lanes touching one byte in one op are caught too (lanes
  are unordered between barriers, as under independent thread scheduling). A
  cp.async marks its destination *pending* until the wait that lands it:
  reading or writing a pending byte is an error (a missing or misplaced
  ``cp_async_wait``). The native backend keeps one shadow entry per *unit* of
  bytes that every shared access covers whole (cutec.cpu.codegen), which
  records exactly what one entry per byte would.
* **Another CTA's shared memory** (*remote*: a ``shared::cluster`` pointer from
  ``thread.mapa``) is bounds- and alignment-checked like any buffer and reported as
  the buffer "of cluster rank R" (`remote_name`). A remote access of a CTA whose
  threads have all finished is reported (`exited_message`: the cluster_sync() that
  must come before a CTA's end is missing). Each CTA keeps the first interval after
  its last cluster barrier (*since*): a remote load of a byte the owner's threads
  stored since, or a remote store of one they stored or loaded since, is a race
  with no cluster barrier between (`remote_conflict`; only a cluster barrier orders
  two CTAs). A remote store marks its bytes written in the owner's shadow
  (`remote_stamp`: interval *since*, writer MANY), so the owner's loads after a
  cluster barrier are not uninitialised, and an owner access in that same
  interval is a race with "a store by another CTA". Not checked: remote accesses
  against each other (two CTAs storing to one byte, or one's remote load of
  another's remote store), and an owner access after a CTA barrier of its own
  but before the cluster barrier.
* **Proxy fences** (`ProxyFences`): the async proxy (a wgmma's shared operands, a
  TMA store's box) sees a generic-proxy write (``st.shared``, ``cp.async``) only
  after the writing thread's ``fence.proxy.async``; per shadow entry the W word
  of its writer's last fence is kept, and an async read of an entry whose W word
  differs (written after the fence, or never fenced) is a *missing proxy fence*.
* **Barriers** (`round_state`, `deadlock`): after each round in which every warp
  ran to a barrier or to its end, a CTA's warps either all wait at one barrier
  (the next round starts), have all finished, or are stuck; when every CTA of a
  cluster is stuck, the kernel is: a warp whose threads wait at different places
  (a divergent barrier), or warps that wait while others finished or wait
  elsewhere (a deadlock, reported as who waits on what, per CTA of the cluster).

Both backends report through these functions, so their messages are the same.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from cutec.cpu.mbarrier import Waiting
from cutec.cpu.reference_memory import InterpreterError
from cutec.ir.core import Operation

Dim3 = tuple[int, int, int]

WARP = 32
PENDING = 1 << 31
MANY = 0x7FFFFFFF  # a reader field: two or more threads read the byte
TID_MASK = 0x7FFFFFFF

# Shadow access kinds and failure codes (the warp code's helper returns them too).
LOAD, STORE, ASYNC = 0, 1, 2
WGMMA = 3  # a wgmma's read of a shared operand (checked in Python: cutec.cpu.wgmma)
TMA_STORE = 4  # a TMA store's read of its box (a load, checked in Python: reference_tma_store)
UNINIT, PENDING_ACCESS, RACE_WRITER, RACE_READER = 1, 2, 3, 4

_KIND_NAMES = {LOAD: "load", STORE: "store", ASYNC: "cp.async store", WGMMA: "wgmma read",
               TMA_STORE: "TMA store read"}  # fmt: skip
_READS = (LOAD, TMA_STORE)


def kind_name(kind: int) -> str:
    """What an access of `kind` (`LOAD` ...) is called in reports."""
    return _KIND_NAMES[kind]


def tid3(linear: int, block: Dim3) -> Dim3:
    """(x, y, z) of a linear thread index x + bx * (y + by * z)."""
    return (linear % block[0], linear // block[0] % block[1], linear // (block[0] * block[1]))


def shared_message(code: int, kind: int, byte: int, buffer: str, other: int, block: Dim3) -> str:
    """The report of a failed shared-memory check (`other`: the W or R field's thread + 1)."""
    what = _KIND_NAMES[kind]
    if code == UNINIT:
        return (
            f"{'load' if kind == LOAD else what} of uninitialised shared memory: byte {byte} "
            f"of {buffer} was not written in this block"
        )
    if code == PENDING_ACCESS:
        return (
            f"{what} of byte {byte} of {buffer}, which a cp.async of thread "
            f"{tid3(other - 1, block)} writes, before a cp.async wait lands it"
        )
    barrier = "barrier"
    if code == RACE_READER and other == MANY:
        by = "loads by other threads"
    elif code == RACE_WRITER and other == MANY:  # (`remote_stamp`)
        by, barrier = "a store by another CTA of the cluster (map_shared_rank)", "cluster barrier"
    else:
        by = f"{'store' if code == RACE_WRITER else 'load'} by thread {tid3(other - 1, block)}"
    return (
        f"shared-memory race on byte {byte} of {buffer}: {what} by this thread, {by}, "
        f"no {barrier} between"
    )


def missing_fence_message(reader: str, byte: int, buffer: str, writer: Dim3) -> str:
    """The report of an async-proxy read (`reader`: "the wgmma") of a byte that thread
    `writer` wrote through the generic proxy and did not fence (`ProxyFences`)."""
    return (
        f"missing proxy fence: {reader} reads byte {byte} of {buffer}, which thread {writer} "
        "wrote through the generic proxy and did not fence (thread.fence_proxy_async) after "
        "the write"
    )


def remote_name(buffer: str, rank: int) -> str:
    """How reports name shared buffer `buffer` of the cluster's CTA `rank`, reached
    through ``thread.mapa`` (a shared::cluster pointer)."""
    return f"{buffer} of cluster rank {rank}"


def remote_stamp(since: int) -> int:
    """The W word of a byte another CTA of the cluster stored, in the owner's interval
    `since` (the first after its last cluster barrier)."""
    return since << 32 | MANY


def remote_conflict(w: int, r: int, kind: int, since: int) -> tuple[int, int] | None:
    """The conflict of another CTA's access (`LOAD` or `STORE`) of a shared byte whose
    shadow words are `w` and `r` with the owner's own accesses since its last cluster
    barrier (intervals `since` on): (`RACE_WRITER` or `RACE_READER`, other thread + 1),
    or None. Another CTA's earlier stores (writer MANY) are not told apart."""
    writer = w & TID_MASK
    if w and writer != MANY and w >> 32 >= since:
        return RACE_WRITER, writer
    if kind == STORE and r and r >> 32 >= since:
        return RACE_READER, r & 0xFFFFFFFF
    return None


def remote_race_message(code: int, kind: int, byte: int, buffer: str, other: int,
                        block: Dim3, owner: Dim3) -> str:  # fmt: skip
    """The report of a `remote_conflict` with the threads of block `owner` (of shape `block`)."""
    if code == RACE_READER and other == MANY:
        by = f"loads by threads of block {owner}"
    else:
        what = "store" if code == RACE_WRITER else "load"
        by = f"{what} by thread {tid3(other - 1, block)} of block {owner}"
    return (
        f"shared-memory race on byte {byte} of {buffer}: {_KIND_NAMES[kind]} by this thread, "
        f"{by}, no cluster barrier between"
    )


def exited_message(kind: str, buffer: str) -> str:
    """The report of a `kind` ("load" or "store") of another CTA's shared `buffer` after
    every thread of that CTA finished."""
    return (
        f"{kind} of {buffer}, whose CTA has exited: a cluster_sync() before each CTA's end "
        "keeps its shared memory for the others"
    )


def mapa_rank_message(rank: int, ctas: int) -> str:
    """The report of a ``thread.mapa`` to a rank outside the cluster of `ctas` CTAs."""
    return f"mapa to rank {rank}, outside the cluster of {ctas} CTAs (ranks 0..{ctas - 1})"


class SharedShadow:
    """The shadow words of one shared buffer: an (n, 2) int64 array, W then R per byte.

    The interpreter calls `access`; the warp code reads and writes the same array
    through `SHADOW_CHECK_LLVM`, and the native runner lands cp.async copies
    with `land`."""

    def __init__(self, nbytes: int, unit: int = 1) -> None:
        self.unit = unit  # bytes per shadow entry (the native backend's, cutec.cpu.codegen)
        self.words = np.zeros((-(-nbytes // unit), 2), dtype=np.int64)
        self.uninit: int | None = None  # the byte of the last access's uninitialised load

    def access(self, first: int, n: int, tid: int, kind: int, epoch: int, start: int
               ) -> tuple[int, int, int] | None:  # fmt: skip
        """Check and record thread `tid`'s access of bytes first..first+n-1 (a shadow of
        one entry per byte, the interpreter's) in interval
        `epoch` of a CTA whose first interval is `start`; the first failure as (code,
        byte, other thread + 1), or None. A load of an unwritten byte is no failure
        here: `uninit` says its byte (the caller reports it when the interval ends)."""
        me = tid + 1
        self.uninit = None
        rows = self.words[first : first + n]
        stamp = epoch << 32
        for k, (w, r) in enumerate(rows.tolist()):
            w_epoch, writer = w >> 32, w & TID_MASK
            r_epoch, reader = r >> 32, r & 0xFFFFFFFF
            if kind in _READS and w_epoch < start and self.uninit is None:
                self.uninit = first + k
            if w & PENDING:
                return PENDING_ACCESS, first + k, writer
            if w_epoch == epoch and writer != me:
                return RACE_WRITER, first + k, writer
            if kind in _READS:
                if r_epoch != epoch:
                    rows[k, 1] = stamp | me
                elif reader != me:
                    rows[k, 1] = stamp | MANY
                continue
            if r_epoch == epoch and reader != me:
                return RACE_READER, first + k, reader
            rows[k, 0] = stamp | (PENDING if kind == ASYNC else 0) | me
        return None

    def land(self, first: int, n: int) -> None:
        """A cp.async's bytes have landed: no longer pending."""
        self.words[first // self.unit : -(-(first + n) // self.unit), 0] &= ~PENDING


class ProxyFences:
    """Which generic-proxy shared writes their writers fenced to the async proxy: per
    shadow, the W word each entry had at its writer's last ``fence.proxy.async``."""

    def __init__(self) -> None:
        self.fenced: dict[int, np.ndarray] = {}  # id(shadow) -> W words at the last fences

    def _words(self, shadow: SharedShadow) -> np.ndarray:
        found = self.fenced.get(id(shadow))
        if found is None:
            found = self.fenced[id(shadow)] = np.zeros(len(shadow.words), dtype=np.int64)
        return found

    def fence(self, shadows: Iterable[SharedShadow | None], threads: Sequence[int]) -> None:
        """`threads` (linear indices) fence their writes so far to the async proxy."""
        mine = np.asarray(threads, dtype=np.int64) + 1
        for shadow in shadows:
            if shadow is None:
                continue
            w = shadow.words[:, 0]
            hit = np.isin(w & TID_MASK, mine) & (w != 0)
            self._words(shadow)[hit] = w[hit]

    def async_write(self, shadow: SharedShadow, first: int, n: int) -> None:
        """Bytes first..first+n-1 were written by the async proxy (a TMA load): its own
        writes need no fence before an async read."""
        units = slice(first // shadow.unit, -(-(first + n) // shadow.unit))
        self._words(shadow)[units] = shadow.words[units, 0]

    def unfenced(self, shadow: SharedShadow, units: np.ndarray) -> int | None:
        """The position in `units` (shadow entries an async read covers) of the first
        entry written through the generic proxy and not fenced since, or None."""
        fenced = self.fenced.get(id(shadow))
        w = shadow.words[units, 0]
        bad = w != (fenced[units] if fenced is not None else 0)
        return int(np.flatnonzero(bad)[0]) if bad.any() else None


# The warp code's shadow check: lanes in order, each lane's bytes in order, as
# `SharedShadow.access`. %lanes: four rows of 32 i64: the live mask (0 or 1), each
# lane's shadow base (0: not shared memory), byte offset and buffer id; %info: the
# warp's (its index, the interval, the CTA's first); %shift: log2 of the bytes per
# shadow entry (each access covers whole entries; `cutec.cpu.codegen` picks the unit).
# Compiled once per process at -O2 (`cutec.cpu.native.shadow_check_address`) and
# called by the warp code, which is compiled at -O0. Returns the failing lane, with
# err[0..8] = (op, lane, buffer, byte, ERR_SHARED, bytes, code, other, kind), or -1;
# the first uninitialised load of the run is noted in err[12..15] (op + 1, thread,
# buffer, byte).
SHADOW_CHECK_LLVM = """
define i32 @shadow_check(ptr noalias %lanes, i64 %n, ptr noalias %info, i64 %kind,
                         ptr noalias %err, i64 %opidx, i64 %shift) {
entry:
  %pwarp = getelementptr i64, ptr %info, i64 9
  %warp = load i64, ptr %pwarp
  %tid0 = mul i64 %warp, 32
  %pepoch = getelementptr i64, ptr %info, i64 10
  %epoch = load i64, ptr %pepoch
  %pstart = getelementptr i64, ptr %info, i64 11
  %start = load i64, ptr %pstart
  %stamp = shl i64 %epoch, 32
  %isload = icmp eq i64 %kind, 0
  %isasync = icmp eq i64 %kind, 2
  %pend = select i1 %isasync, i64 2147483648, i64 0
  %units = lshr i64 %n, %shift
  br label %lane
lane:
  %l = phi i32 [0, %entry], [%l1, %next]
  %more = icmp ult i32 %l, 32
  br i1 %more, label %body, label %done
body:
  %l64 = zext i32 %l to i64
  %pm = getelementptr i64, ptr %lanes, i64 %l64
  %pbase = getelementptr i64, ptr %pm, i64 32
  %poff = getelementptr i64, ptr %pm, i64 64
  %pid = getelementptr i64, ptr %pm, i64 96
  %mi = load i64, ptr %pm
  %base = load i64, ptr %pbase
  %m = icmp ne i64 %mi, 0
  %hasbase = icmp ne i64 %base, 0
  %go = and i1 %m, %hasbase
  br i1 %go, label %bytes0, label %next
bytes0:
  %ob = load i64, ptr %poff
  %o = ashr i64 %ob, %shift
  %t0 = add i64 %tid0, %l64
  %me = add i64 %t0, 1
  br label %byte
byte:
  %b = phi i64 [0, %bytes0], [%b1, %bytenext]
  %bmore = icmp ult i64 %b, %units
  br i1 %bmore, label %check, label %next
check:
  %unit = add i64 %o, %b
  %idx = shl i64 %unit, %shift
  %wi = mul i64 %unit, 2
  %basep = inttoptr i64 %base to ptr
  %pwr = getelementptr i64, ptr %basep, i64 %wi
  %prr = getelementptr i64, ptr %pwr, i64 1
  %w = load i64, ptr %pwr
  %r = load i64, ptr %prr
  %we = lshr i64 %w, 32
  %wt = and i64 %w, 2147483647
  %wp = and i64 %w, 2147483648
  %re = lshr i64 %r, 32
  %rt = and i64 %r, 4294967295
  %old = icmp ult i64 %we, %start
  %uninit = and i1 %isload, %old
  br i1 %uninit, label %note_uninit, label %c1
note_uninit:
  %e8 = getelementptr i64, ptr %err, i64 12
  %noted = load i64, ptr %e8
  %first = icmp eq i64 %noted, 0
  br i1 %first, label %note, label %c1
note:
  %op1 = add i64 %opidx, 1
  store i64 %op1, ptr %e8
  %e9 = getelementptr i64, ptr %err, i64 13
  store i64 %t0, ptr %e9
  %e10 = getelementptr i64, ptr %err, i64 14
  %bufid = load i64, ptr %pid
  store i64 %bufid, ptr %e10
  %e11 = getelementptr i64, ptr %err, i64 15
  store i64 %idx, ptr %e11
  br label %c1
c1:
  %ispend = icmp ne i64 %wp, 0
  br i1 %ispend, label %fail_pending, label %c2
c2:
  %wnow = icmp eq i64 %we, %epoch
  %wother = icmp ne i64 %wt, %me
  %wrace = and i1 %wnow, %wother
  br i1 %wrace, label %fail_writer, label %c3
c3:
  br i1 %isload, label %rec_load, label %c4
rec_load:
  %rnow = icmp eq i64 %re, %epoch
  %rsame = icmp eq i64 %rt, %me
  %mine = or i64 %stamp, %me
  %many = or i64 %stamp, 2147483647
  %keep = and i1 %rnow, %rsame
  %r2 = select i1 %rnow, i64 %many, i64 %mine
  %r3 = select i1 %keep, i64 %r, i64 %r2
  store i64 %r3, ptr %prr
  br label %bytenext
c4:
  %rnow4 = icmp eq i64 %re, %epoch
  %rother = icmp ne i64 %rt, %me
  %rrace = and i1 %rnow4, %rother
  br i1 %rrace, label %fail_reader, label %rec_store
rec_store:
  %w1 = or i64 %stamp, %pend
  %w2 = or i64 %w1, %me
  store i64 %w2, ptr %pwr
  br label %bytenext
bytenext:
  %b1 = add i64 %b, 1
  br label %byte
next:
  %l1 = add i32 %l, 1
  br label %lane
done:
  ret i32 -1
fail_pending:
  br label %fail
fail_writer:
  br label %fail
fail_reader:
  br label %fail
fail:
  %code = phi i64 [2, %fail_pending], [3, %fail_writer], [4, %fail_reader]
  %other = phi i64 [%wt, %fail_pending], [%wt, %fail_writer], [%rt, %fail_reader]
  store i64 %opidx, ptr %err
  %e1 = getelementptr i64, ptr %err, i64 1
  store i64 %l64, ptr %e1
  %e2 = getelementptr i64, ptr %err, i64 2
  %failbuf = load i64, ptr %pid
  store i64 %failbuf, ptr %e2
  %e3 = getelementptr i64, ptr %err, i64 3
  store i64 %idx, ptr %e3
  %e4 = getelementptr i64, ptr %err, i64 4
  store i64 5, ptr %e4
  %e5 = getelementptr i64, ptr %err, i64 5
  store i64 %n, ptr %e5
  %e6 = getelementptr i64, ptr %err, i64 6
  store i64 %code, ptr %e6
  %e7 = getelementptr i64, ptr %err, i64 7
  store i64 %other, ptr %e7
  %f8 = getelementptr i64, ptr %err, i64 8
  store i64 %kind, ptr %f8
  ret i32 %l
}
"""


# --------------------------------------------------------------------------- barriers
def _where(op: Operation) -> str:
    loc = op.location or op.parsed_at
    return f"{loc}: " if loc is not None else ""


def _at(op: Operation | Waiting) -> str:
    if isinstance(op, Waiting):
        return op.describe()
    loc = op.location or op.parsed_at
    what = "the barrier"
    if op.name == "thread.named_barrier_sync":
        what = f"named barrier {op.attributes['id'].value}"  # type: ignore[attr-defined]
    elif op.name == "thread.cluster_wait":
        what = "the cluster barrier"
    return f"{what} at {loc}" if loc is not None else "a barrier"


def _threads(warps: list[int], nthreads: int) -> str:
    first, last = warps[0] * WARP, min((warps[-1] + 1) * WARP, nthreads) - 1
    name = f"warp {warps[0]}" if len(warps) == 1 else f"warps {warps[0]}-{warps[-1]}"
    return f"{name} (threads {first}..{last})"


def divergent_barrier(op: Operation, tid: Dim3, block_id: Dim3) -> InterpreterError:
    return InterpreterError(
        f"{_where(op)}divergent barrier: thread {tid} of block {block_id} does not reach it "
        "while other threads of its warp do"
    )


def divergent_collective(op: Operation, tid: Dim3, block_id: Dim3) -> InterpreterError:
    """A warp-collective op that a lane of its warp does not reach."""
    return InterpreterError(
        f"{_where(op)}divergent warp-collective {op.name} in block {block_id}: thread {tid} "
        "does not reach it while other lanes of its warp wait at it"
    )


def short_warp(op: Operation, atom: str, nlanes: int) -> InterpreterError:
    """A warp-collective op in a warp of fewer than 32 threads (the CTA's last)."""
    return InterpreterError(
        f"{_where(op)}{atom} runs on a warp of {WARP} lanes; this warp has {nlanes} threads"
    )


# What a CTA's warps do at the end of a round (`round_state`).
AT_BARRIER, FINISHED, STUCK = 0, 1, 2


def round_state(warps: Sequence[Operation | Waiting | None]) -> int:
    """After a round in which each warp of a CTA ran to a barrier (its op), an mbarrier
    wait that nothing can satisfy (`Waiting`) or its end (None): `AT_BARRIER` when all
    wait at one CTA barrier (the next round starts), `FINISHED` when all finished, else
    `STUCK` (warps at a named or cluster barrier wait for more arrivals, which another
    CTA of the cluster may bring)."""
    first, n = warps[0], len(warps)
    if first is None and warps.count(None) == n:
        return FINISHED
    if isinstance(first, Operation) and first.name == "gpu.barrier" and warps.count(first) == n:
        return AT_BARRIER
    return STUCK


def _warp_groups(warps: Sequence[Operation | Waiting | None], nthreads: int) -> list[str]:
    """Who waits on what: runs of consecutive warps stopped at one place."""
    groups: list[tuple[Operation | Waiting | None, list[int]]] = []
    for w, op in enumerate(warps):
        if groups and groups[-1][0] == op and groups[-1][1][-1] == w - 1:
            groups[-1][1].append(w)
        else:
            groups.append((op, [w]))
    parts = []
    for op, ws in groups:
        verb = "waits" if len(ws) == 1 else "wait"
        on = "on" if isinstance(op, Waiting) else "at"
        state = "finished" if op is None else f"{verb} {on} {_at(op)}"
        parts.append(f"{_threads(ws, nthreads)} {state}")
    return parts


def deadlock(ctas: Sequence[tuple[Dim3, Sequence[Operation | Waiting | None]]], nthreads: int
             ) -> InterpreterError:  # fmt: skip
    """The report of a cluster (or a lone CTA) in which no warp can go on: each CTA's
    (block id, where each of its warps stopped), who waits on what."""
    if len(ctas) == 1:
        block_id, warps = ctas[0]
        where = f"block {block_id}"
        parts = _warp_groups(warps, nthreads)
    else:
        where = f"the cluster of blocks {ctas[0][0]}..{ctas[-1][0]}"
        parts = [f"block {b}: " + ", ".join(_warp_groups(w, nthreads)) for b, w in ctas]
    # Located at the first mbarrier wait if any, else at the first warp waiting at
    # something other than a cluster barrier (warps at a barrier are more often the
    # symptom: waiting for warps that wait on an mbarrier, or a CTA of the cluster that
    # waits elsewhere), else at the first waiting warp.
    stopped = [op for _, warps in ctas for op in warps if op is not None]
    waits = [op.op for op in stopped if isinstance(op, Waiting)]
    others = [op for op in stopped if isinstance(op, Operation)
              and op.name != "thread.cluster_wait"]  # fmt: skip
    first = (waits or others or stopped)[0]
    assert isinstance(first, Operation)
    return InterpreterError(
        f"{_where(first)}deadlock in {where}: no warp can go on: " + "; ".join(parts)
    )


__all__ = [
    "SHADOW_CHECK_LLVM",
    "ProxyFences",
    "SharedShadow",
    "deadlock",
    "divergent_barrier",
    "shared_message",
    "tid3",
]
