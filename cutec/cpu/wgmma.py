"""wgmma on the CPU: the semantics and checks both backends share (docs/cpu-backend.md).

A ``thread.atom`` of a WGMMA-family atom is issued by the 128 threads of a
warpgroup (`tid.x / 128`) and runs asynchronously (PTX ISA, *Asynchronous
Warpgroup Level Matrix Multiply-Accumulate*). The CPU models it per warp: the
rows of D that a warp's lanes hold (16 of the 64, c_layout_64xn) depend only on
the rows of A those lanes hold (RS atoms) or on the shared tiles (SS), so each
warp's part is exact on its own.

* **Issue** (`WgmmaCta.issue`): the warp's input registers are recorded (their
  words, as mma.sync's, `cutec.cpu.collective`); the shared bytes the
  descriptors name are located (`SharedWindow`), checked (bounds; with the
  shared-memory shadow: written in this CTA, landed, fenced to the async proxy)
  and copied aside. The results are *poisoned* (0xFF bytes: NaN) until the wait.
* **Commit / wait**: groups per warp, as cp.async's per thread; a wait for N
  completes all but the newest N groups, in issue order. A group is one
  instruction of the warpgroup, so it completes for its four warps at once, at
  the first of their waits that finds all four committed it (a warp whose peers
  have not yet waits, as at an mbarrier): each wgmma then reads its shared bytes
  (a change since the issue is an *early stage release*) and computes its D
  words, which land in a warp's accumulator registers at that warp's wait.
* **Accumulator registers** (`AccumulatorWebs`): a wgmma updates its
  accumulator in place, and the loop-carried values, region results and later
  wgmmas that hand it on are the same registers (tied, as the lowering must
  allocate them). One *web* is such a set of values; a non-tied value defined
  into it (a constant, an arith result yielded to it) is copied into its
  registers. Per warp and web the model keeps whether a wgmma in flight writes
  it (any other access is an *accumulator read before the wait*) and whether
  anything but a wgmma accessed it since the warp's last ``thread.wgmma_fence``
  (then a wgmma on it is reported: PTX requires the fence).
* **Values.** D = A·B (+ C where scale-d) per instruction: products and sums in
  float64, rounded to f32; an f16 accumulator is that f32 result rounded to f16
  (the instruction accumulates at least in f32; its order is not modelled). A
  tf32 operand ignores its low 13 mantissa bits, as mma.sync's (emulate.py).

The backends turn a `WgmmaError` into their located `AccessError` (the op, a
thread of the warp, the block).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from cutec.atoms.emulate import from_bits, mma_tables, pack_registers, unpack_registers
from cutec.atoms.family import Family
from cutec.atoms.gmma_desc import (
    SWIZZLE_WIDTH,
    GmmaDescriptor,
    Swizzle,
    canonical_gmma_layout,
)
from cutec.atoms.mma_record import MmaAtom
from cutec.cpu import checks
from cutec.cpu.mbarrier import Waiting
from cutec.dtypes import dtype as dtype_row
from cutec.ir.attributes import IntegerAttr
from cutec.ir.core import Operation, Value
from cutec.ir.dialects import builtin, scf, thread

WARPGROUP = 128
WINDOW_ALIGN = 1024  # each shared buffer's window base: a 128B-swizzle repeat
WINDOW_LIMIT = 16 << 14  # a descriptor's 14-bit start address field, in 16-byte units
POISON = 0xFF  # the byte of a pending accumulator register (NaN), as pending cp.async bytes


class WgmmaError(Exception):
    """A failed wgmma check: the message, the op it is reported at and the lane
    (linear thread index) it names."""

    def __init__(self, message: str, op: Operation, thread: int) -> None:
        super().__init__(message)
        self.op, self.thread = op, thread


def is_wgmma(op: Operation) -> bool:
    return isinstance(op, thread.AtomOp) and op.family() is Family.WGMMA


SYNC_OPS = (thread.WgmmaFenceOp, thread.WgmmaCommitOp, thread.WgmmaWaitOp)


def uses_wgmma(kernel: builtin.KernelOp) -> bool:
    return any(is_wgmma(op) or isinstance(op, SYNC_OPS) for op in kernel.walk())


def _where(op: Operation) -> str:
    return str(op.location or op.parsed_at)


# ------------------------------------------------------------------------ the window


@dataclass(frozen=True)
class WindowEntry:
    """One shared buffer in the CTA's shared window: its alloc op (None: dynamic)."""

    op: Operation | None
    base: int
    size: int


def shared_window(kernel: builtin.KernelOp) -> tuple[WindowEntry, ...]:
    """Where each shared buffer sits in the CTA's shared window, as the descriptors
    address it: the `thread.alloc_shared` ops in walk order, then the dynamic shared
    memory, each at the next multiple of 1024 bytes (so a buffer's swizzle pattern
    starts at its base, as the shared-memory plan aligns stage buffers)."""
    entries, at = [], 0
    ops: list[Operation | None] = list(kernel.walk_type(thread.AllocSharedOp))
    ops.append(None)
    for op in ops:
        if op is None:
            attr = kernel.attributes.get("dynamic_smem")
            size = attr.value if isinstance(attr, IntegerAttr) else 0
        else:
            size = op.bytes.value  # type: ignore[attr-defined]
        at = -(-at // WINDOW_ALIGN) * WINDOW_ALIGN
        entries.append(WindowEntry(op, at, size))
        at += size
    return tuple(entries)


def descriptor(op: thread.GmmaDescOp, window_address: int) -> int:
    """The 64-bit value of `op` for a tile at `window_address`; ValueError saying why
    there is none (misaligned, or past the 14-bit field)."""
    if window_address % 16 or not 0 <= window_address < WINDOW_LIMIT:
        raise ValueError(descriptor_error(window_address))
    return op.descriptor(window_address).encode()


def descriptor_error(window_address: int) -> str:
    return (
        f"gmma_desc of shared-window address {window_address}: the start address must be a "
        f"multiple of 16 below {WINDOW_LIMIT}"
    )


def not_shared_error(buffer: str) -> str:
    return f"gmma_desc of {buffer}, which is not shared memory"


@dataclass
class SharedWindow:
    """A CTA's shared buffers as a wgmma reads them: `entries` (window layout),
    `data(i)` the bytes of entry i, `name(i)`, `shadow(i)` its shared-memory shadow
    (None without the checks)."""

    entries: tuple[WindowEntry, ...]
    data: Callable[[int], np.ndarray]
    name: Callable[[int], str]
    shadow: Callable[[int], checks.SharedShadow | None]

    def locate(self, first: int, last: int) -> int | None:
        """The entry holding window bytes first..last, or None."""
        for i, e in enumerate(self.entries):
            if e.base <= first and last < e.base + e.size:
                return i
        return None


# ------------------------------------------------------------------------ operands


@functools.cache
def _element_offsets(major: str, swizzle: Swizzle, bits: int, mn: int, lbo: int, sbo: int
                     ) -> np.ndarray:  # fmt: skip
    """(MN, K) element offsets of the canonical layout a descriptor names (linear in
    each mode, so one evaluation per coordinate of each mode)."""
    layout = canonical_gmma_layout(major, swizzle, bits, mn, lbo, sbo)  # type: ignore[arg-type]
    rows = np.array([layout[0](i) for i in range(mn)], dtype=np.int64)
    cols = np.array([layout[1](j) for j in range(256 // bits)], dtype=np.int64)
    return rows[:, None] + cols[None, :]


@dataclass
class SharedOperand:
    """The shared bytes of one wgmma operand: entry, byte offsets (MN, K, bytes) in it,
    and the bytes when issued."""

    name: str  # "A" or "B"
    entry: int
    offsets: np.ndarray
    snapshot: np.ndarray


def _operand(window: SharedWindow, op: Operation, lane: int, name: str, desc: int, major: str,
             dtype: str, mn: int) -> SharedOperand:  # fmt: skip
    d = GmmaDescriptor.decode(desc)
    bits = dtype_row(dtype).bits
    step = bits // 8
    offs = _element_offsets(major, d.swizzle, bits, mn, d.lbo, d.sbo)
    addr = d.start_address + offs * step
    # Swizzle<log2 W, 4, 3> of the absolute address (the hardware's, base offset 0).
    mask = SWIZZLE_WIDTH[d.swizzle] - 1
    addr = addr ^ (((addr >> 7) & mask) << 4)
    first, last = int(addr.min()), int(addr.max()) + step - 1
    entry = window.locate(first, last)
    if entry is None:
        raise WgmmaError(
            f"out-of-bounds wgmma read: operand {name} (descriptor {desc:#x}) covers shared-"
            f"window bytes {first}..{last}, which no one shared buffer holds",
            op, lane,
        )  # fmt: skip
    offsets = addr[:, :, None] - window.entries[entry].base + np.arange(step)
    return SharedOperand(name, entry, offsets, window.data(entry)[offsets].copy())


def _values(raw: np.ndarray, dtype: str) -> np.ndarray:
    """Element values from their little-endian bytes (..., bytes)."""
    words = np.zeros(raw.shape[:-1], dtype=np.uint64)
    for k in range(raw.shape[-1]):
        words |= raw[..., k].astype(np.uint64) << np.uint64(8 * k)
    values = from_bits(words, dtype).astype(np.float64)
    if dtype == "tf32":  # the tensor cores ignore the low 13 mantissa bits (emulate.py)
        bits = values.astype(np.float32).view(np.uint32) & np.uint32(0xFFFFE000)
        values = bits.view(np.float32).astype(np.float64)
    return values


# ------------------------------------------------------------------------ one warp's part


def d_words(atom: MmaAtom, warp: int, words: np.ndarray, a: np.ndarray | None, b: np.ndarray
            ) -> np.ndarray:  # fmt: skip
    """D's register words (32 lanes, registers) of warp `warp` (0..3 in its warpgroup)
    from its input words (32, inputs: C, A, B, scale-d in template order) and the A
    (64 x K, SS atoms; None: A from the words) and B (N x K) tiles, in float64."""
    m = atom.shape_mnk[0]
    nc = atom.fragment("d").count
    lanes = slice(32 * warp, 32 * warp + 32)
    tables = mma_tables(atom)
    if a is None:  # RS: this warp's rows of A from its lanes' registers
        frags = unpack_registers(atom, "a", words[:, nc : nc + 4]).astype(np.float64)
        if atom.a_type == "tf32":
            frags = _values(_bytes_of(frags.astype(np.float32)), "tf32")
        a = np.zeros((m, atom.shape_mnk[2]))
        at = tables.a[lanes]
        a[at % m, at // m] = frags
    product = a @ b.T
    at = tables.c[lanes]
    c = unpack_registers(atom, "c", words[:, :nc]).astype(np.float64)
    scale = (words[:, -1] & np.uint64(1)).astype(bool)[:, None]
    d = (product[at % m, at // m] + np.where(scale, c, 0.0)).astype(np.float32)
    if atom.d_type == "f16":
        d = d.astype(np.float16)
    return pack_registers(atom, "d", d)


def _bytes_of(values: np.ndarray) -> np.ndarray:
    return values.reshape(*values.shape, 1).view(np.uint8)


# ------------------------------------------------------------------------ accumulator webs


class AccumulatorWebs:
    """The accumulator registers of a kernel's wgmmas as sets of tied values (webs).

    A wgmma's i-th accumulator input and output, a loop's init, block argument,
    result and yielded value, an scf.if's result and its yielded values (scf.while's
    alike) are one register. `web` maps each value of a web holding a wgmma output
    to its web; `tied` (per web) are the values that live in the web's registers
    (wgmma results, block arguments, region results); the others are copied in.
    `accesses` maps an op to the webs it reads (a non-wgmma use that is not a
    region's hand-over) and `writes` to the webs it defines a copied-in value of
    (at its definition: a constant hoisted out of a loop writes once).
    """

    def __init__(self, kernel: builtin.KernelOp) -> None:
        parent: dict[Value, Value] = {}
        copied: list[tuple[Value, Value]] = []  # (a non-tied value, the value it is copied to)

        def find(v: Value) -> Value:
            while parent.get(v, v) is not v:
                v = parent[v]
            return v

        def union(*vs: Value) -> None:
            tied = [v for v in vs if self.is_tied(v)]
            copied.extend((v, tied[0]) for v in vs if tied and not self.is_tied(v))
            roots = [find(v) for v in tied]
            for r in roots[1:]:
                if r is not roots[0]:
                    parent[r] = roots[0]

        outputs: list[Value] = []
        for op in kernel.walk():
            if is_wgmma(op):
                count = op.library_atom().fragment("d").count  # type: ignore[attr-defined]
                outs = list(op.results)
                outputs += outs
                for i in range(count):
                    union(outs[i], op.operands[i])
            elif isinstance(op, scf.ForOp):
                term = op.body.terminator
                assert term is not None
                for init, arg, res, y in zip(op.inits, op.body.args[1:], op.results,
                                             term.operands, strict=True):  # fmt: skip
                    union(arg, init, res, y)
            elif isinstance(op, scf.IfOp):
                for block in (op.then_block, op.else_block):
                    if block is not None and op.results:
                        term = block.terminator
                        assert term is not None
                        for res, y in zip(op.results, term.operands, strict=True):
                            union(res, y)
            elif isinstance(op, scf.WhileOp):
                cond, after_yield = op.before.terminator, op.after.terminator
                assert cond is not None and after_yield is not None
                for init, arg, y in zip(op.inits, op.before.args, after_yield.operands,
                                        strict=True):  # fmt: skip
                    union(arg, init, y)
                for v, arg, res in zip(cond.operands[1:], op.after.args, op.results,
                                       strict=True):  # fmt: skip
                    union(arg, v, res)
        numbers: dict[Value, int] = {}  # web roots, numbered in walk order (deterministic)
        for v in outputs:
            numbers.setdefault(find(v), len(numbers))
        # value -> its web, for the tied values of webs that hold a wgmma output
        self.web: dict[Value, int] = {}
        for v in dict.fromkeys([*outputs, *parent, *parent.values()]):
            r = find(v)
            if r in numbers:
                self.web[v] = numbers[r]
        self.count = len(numbers)
        self.tied: list[list[Value]] = [[] for _ in range(self.count)]
        for v, w in self.web.items():
            self.tied[w].append(v)
        into: dict[Value, set[int]] = {}  # a non-tied value -> the webs it is copied into
        for v, t in copied:
            if t in self.web:
                into.setdefault(v, set()).add(self.web[t])
        self.accesses: dict[Operation, tuple[int, ...]] = {}
        self.writes: dict[Operation, tuple[int, ...]] = {}
        for op in kernel.walk():
            handing = is_wgmma(op) or isinstance(
                op, scf.ForOp | scf.IfOp | scf.WhileOp | scf.YieldOp | scf.ConditionOp
            )
            read = {self.web[v] for v in op.operands if v in self.web}
            if read and not handing:
                self.accesses[op] = tuple(sorted(read))
            written = {w for v in op.results for w in into.get(v, ())}
            if written:
                self.writes[op] = tuple(sorted(written))

    @staticmethod
    def is_tied(v: Value) -> bool:
        """Whether `v` lives in its web's registers (else it is copied in)."""
        owner = v.owner
        return (
            not isinstance(owner, Operation)
            or is_wgmma(owner)
            or isinstance(owner, scf.ForOp | scf.IfOp | scf.WhileOp)
        )


# ------------------------------------------------------------------------ the state


@dataclass
class Issued:
    """One wgmma in flight: its op, warp (in the CTA), input words, shared operands."""

    op: thread.AtomOp
    warp: int
    words: np.ndarray
    operands: list[SharedOperand]
    chained: list[int]  # accumulator registers whose input is an earlier wgmma's D
    out_webs: list[int]


@dataclass
class _Warp:
    open: list[Issued] = field(default_factory=list)
    groups: list[list[Issued]] = field(default_factory=list)
    pending: dict[int, Issued] = field(default_factory=dict)  # web -> the last wgmma writing it
    touched: set[int] = field(default_factory=set)  # webs accessed since the last fence
    words: dict[int, np.ndarray] = field(default_factory=dict)  # web -> its lanes' last D word
    log: list[Operation] = field(default_factory=list)  # warpgroup ops since the last check
    done: int = 0  # groups completed (by this warp's waits or a peer's)
    landed: list[tuple[Issued, np.ndarray]] = field(default_factory=list)  # D not yet delivered


@dataclass(frozen=True)
class WgmmaWaiting(Waiting):
    """A warp at a wgmma_wait whose group the rest of its warpgroup has not issued yet."""

    def describe(self) -> str:
        return (f"the thread.wgmma_wait at {_where(self.op)} (for the other warps of its "
                "warpgroup to commit the group)")  # fmt: skip


class WgmmaCta:
    """The wgmma state of one CTA's run: groups, pending and touched webs per warp."""

    def __init__(self, webs: AccumulatorWebs, window: SharedWindow, nthreads: int) -> None:
        self.webs, self.window, self.nthreads = webs, window, nthreads
        self.warps: dict[int, _Warp] = {}
        self.fenced: dict[int, np.ndarray] = {}  # entry -> W words at each byte's last fence
        self.start = 0  # the CTA's first barrier interval (the backend sets it)
        self.block: tuple[int, int, int] = (1, 1, 1)  # the CTA shape (the backend sets it)

    def warp(self, w: int) -> _Warp:
        found = self.warps.get(w)
        if found is None:
            found = self.warps[w] = _Warp(touched=set(range(self.webs.count)))
        return found

    # -------------------------------------------------------------- registers
    def access(self, op: Operation, warp: int, lane: int) -> None:
        """`op` (in `webs.accesses` / `webs.writes`) reads or writes accumulator webs."""
        state = self.warp(warp)
        for what, webs in (("read", self.webs.accesses.get(op, ())),
                           ("written", self.webs.writes.get(op, ()))):  # fmt: skip
            for web in webs:
                issued = state.pending.get(web)
                if issued is not None:
                    raise WgmmaError(
                        f"accumulator {what} before the wait: {op.name} accesses a register "
                        f"that the wgmma at {_where(issued.op)} writes, before a "
                        "thread.wgmma_wait completes it",
                        op, lane,
                    )  # fmt: skip
                state.touched.add(web)

    def fence(self, op: Operation, warp: int) -> None:
        state = self.warp(warp)
        state.touched.clear()
        state.log.append(op)

    # -------------------------------------------------------------- issue
    def issue(self, op: thread.AtomOp, warp: int, words: np.ndarray) -> None:
        """Warp `warp` issues `op` with its lanes' input words (32, inputs)."""
        atom = op.library_atom()
        assert isinstance(atom, MmaAtom)
        first = 32 * warp
        group_end = (warp // 4 + 1) * WARPGROUP
        if group_end > self.nthreads:
            raise WgmmaError(
                f"{atom.name} runs on a warpgroup of {WARPGROUP} threads; this warpgroup has "
                f"{self.nthreads - group_end + WARPGROUP}",
                op, first,
            )  # fmt: skip
        state = self.warp(warp)
        nc = atom.fragment("d").count
        webs = [self.webs.web[r] for r in op.results]
        if any(w in state.touched for w in webs):
            raise WgmmaError(
                "wgmma without a thread.wgmma_fence since its accumulator registers were last "
                "accessed (PTX requires wgmma.fence before the first wgmma and after any "
                "other access to its registers)",
                op, first,
            )  # fmt: skip
        operands = []
        at = nc + (1 if atom.a_in_smem else 4)
        for name, k, major, dtype, mn, smem in (
            ("A", nc, atom.a_major, atom.a_type, atom.shape_mnk[0], atom.a_in_smem),
            ("B", at, atom.b_major, atom.b_type, atom.shape_mnk[1], True),
        ):
            if not smem:
                continue
            column = words[:, k]
            if (column != column[0]).any():
                lane = int(np.flatnonzero(column != column[0])[0])
                raise WgmmaError(
                    f"the lanes of a warp pass different {name} descriptors to the wgmma "
                    f"({int(column[0]):#x} and {int(column[lane]):#x})",
                    op, first + lane,
                )  # fmt: skip
            operand = _operand(self.window, op, first, name, int(column[0]), major, dtype, mn)
            self._check_written(op, first, operand)
            operands.append(operand)
        chained = [i for i, w in enumerate(webs) if w in state.pending]
        issued = Issued(op, warp, words.copy(), operands, chained, webs)
        for w in webs:
            state.pending[w] = issued
        state.open.append(issued)
        state.log.append(op)

    def _check_written(self, op: Operation, lane: int, operand: SharedOperand) -> None:
        """The operand's bytes were written in this CTA, landed, and their writers
        fenced them to the async proxy after the write (with the shadow)."""
        shadow = self.window.shadow(operand.entry)
        if shadow is None:
            return
        units = np.unique(operand.offsets.reshape(-1) // shadow.unit)
        w = shadow.words[units, 0]
        name = self.window.name(operand.entry)
        start = self.start
        for code, bad in ((checks.UNINIT, (w >> 32) < start),
                          (checks.PENDING_ACCESS, (w & checks.PENDING) != 0)):  # fmt: skip
            if bad.any():
                k = int(np.flatnonzero(bad)[0])
                byte, other = int(units[k]) * shadow.unit, int(w[k] & checks.TID_MASK)
                message = checks.shared_message(code, checks.WGMMA, byte, name, other,
                                                self.block)  # fmt: skip
                raise WgmmaError(message, op, lane)
        fenced = self.fenced.get(operand.entry)
        unfenced = w != (fenced[units] if fenced is not None else 0)
        if unfenced.any():
            k = int(np.flatnonzero(unfenced)[0])
            writer = checks.tid3(int(w[k] & checks.TID_MASK) - 1, self.block)
            raise WgmmaError(
                f"missing proxy fence: the wgmma reads byte {int(units[k]) * shadow.unit} of "
                f"{name}, which thread {writer} wrote through the generic proxy and did not "
                "fence (thread.fence_proxy_async) after the write",
                op, lane,
            )  # fmt: skip

    def async_written(self, entry: int, first: int, n: int) -> None:
        """Bytes first..first+n-1 of window entry `entry` were written by the async proxy
        (a TMA load that landed): a wgmma reads them with no proxy fence."""
        shadow = self.window.shadow(entry)
        if shadow is None:
            return
        w = shadow.words[:, 0]
        fenced = self.fenced.get(entry)
        if fenced is None:
            fenced = self.fenced[entry] = np.zeros_like(w)
        units = slice(first // shadow.unit, -(-(first + n) // shadow.unit))
        fenced[units] = w[units]

    def proxy_fence(self, threads: Sequence[int]) -> None:
        """`threads` (linear indices) fence their generic-proxy shared writes so far."""
        mine = np.asarray(threads, dtype=np.int64) + 1
        for i in range(len(self.window.entries)):
            shadow = self.window.shadow(i)
            if shadow is None:
                continue
            w = shadow.words[:, 0]
            fenced = self.fenced.get(i)
            if fenced is None:
                fenced = self.fenced[i] = np.zeros_like(w)
            hit = np.isin(w & checks.TID_MASK, mine) & (w != 0)
            fenced[hit] = w[hit]

    # -------------------------------------------------------------- commit and wait
    def commit(self, op: Operation, warp: int) -> None:
        state = self.warp(warp)
        state.groups.append(state.open)
        state.open = []
        state.log.append(op)

    def wait(self, op: thread.WgmmaWaitOp, warp: int) -> list[tuple[Issued, np.ndarray]] | None:
        """All but the newest `pending` groups of `warp` complete: None while another warp
        of the warpgroup has not committed them (a group is one instruction of the
        warpgroup: it completes for all four warps at once, reading its shared bytes then
        and computing D); else (wgmma, D words (32, registers)) of `warp`'s completed
        groups, in issue order, which the caller writes into their webs' registers."""
        state = self.warp(warp)
        target = state.done + len(state.groups) - op.pending.value
        if target > state.done:
            base = warp - warp % 4
            peers = [self.warp(base + k) for k in range(4) if 32 * (base + k) < self.nthreads]
            if any(p.done + len(p.groups) < target for p in peers):
                return None
            for p in peers:
                while p.done < target:
                    p.done += 1
                    p.landed += [(i, self._complete(op, p, i)) for i in p.groups.pop(0)]
        state.log.append(op)
        landed, state.landed = state.landed, []
        for issued, _ in landed:
            for w in issued.out_webs:
                if state.pending.get(w) is issued:
                    del state.pending[w]
        return landed

    def _complete(self, op: Operation, state: _Warp, issued: Issued) -> np.ndarray:
        atom = issued.op.library_atom()
        assert isinstance(atom, MmaAtom)
        tiles: dict[str, np.ndarray] = {}
        for operand in issued.operands:
            now = self.window.data(operand.entry)[operand.offsets]
            changed = now != operand.snapshot
            if changed.any():
                byte = int(operand.offsets.reshape(-1)[np.flatnonzero(changed.reshape(-1))[0]])
                raise WgmmaError(
                    f"early stage release: byte {byte} of {self.window.name(operand.entry)}, "
                    f"which the wgmma at {_where(issued.op)} reads (operand {operand.name}), was "
                    "written before the thread.wgmma_wait that completes it",
                    op, 32 * issued.warp,
                )  # fmt: skip
            dtype = atom.a_type if operand.name == "A" else atom.b_type
            tiles[operand.name] = _values(now, dtype)
        words = issued.words.copy()
        for i in issued.chained:  # the accumulator an earlier wgmma of the chain wrote
            words[:, i] = state.words[issued.out_webs[i]]
        d = d_words(atom, issued.warp % 4, words, tiles.get("A"), tiles["B"])
        for i, w in enumerate(issued.out_webs):
            state.words[w] = d[:, i]
        return d

    # -------------------------------------------------------------- convergence
    def converged(self) -> None:
        """At the end of a barrier round: the warps of each warpgroup executed the same
        warpgroup ops (``.sync.aligned``), else a divergent warpgroup collective."""
        for w in sorted(self.warps):
            base = w - w % 4
            logs = [self.warp(base + k).log for k in range(4) if 32 * (base + k) < self.nthreads]
            for k, log in enumerate(logs):
                if log != logs[0]:
                    self._divergent(base, logs[0], base + k, log)
        for state in self.warps.values():
            state.log = []

    def _divergent(self, w0: int, log0: list[Operation], w1: int, log1: list[Operation]
                   ) -> None:  # fmt: skip
        i = next((i for i, (a, b) in enumerate(zip(log0, log1, strict=False)) if a is not b),
                 min(len(log0), len(log1)))  # fmt: skip
        here, away = (w0, w1) if i < len(log0) else (w1, w0)
        op = (log0 if here == w0 else log1)[i]
        raise WgmmaError(
            f"divergent warpgroup-collective {op.name}: warp {away} (threads "
            f"{32 * away}..{32 * away + 31}) does not reach it while warp {here} of its "
            "warpgroup does",
            op, 32 * away,
        )  # fmt: skip


def poison_value_bytes(nbytes: int) -> np.ndarray:
    """The bytes of a pending accumulator register."""
    return np.full(nbytes, POISON, dtype=np.uint8)
