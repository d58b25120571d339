"""Where each shared buffer of a kernel lives: byte offsets that let a buffer reuse
the bytes of one that is no longer touched.

lower-to-thread places a kernel's ``cute.alloc_smem`` buffers in one dynamic
array when they do not fit the static limit; this module chooses the offsets.
A whole-tensor gemm's epilogue chunk of C, for one, is touched only after the
k-loop, when the pipeline's stages are dead: it takes their bytes instead of
its own (gemm_auto at 128x256x64 with 3 stages: 147,456 bytes instead of
181,248), as CUTLASS's kernels put their mainloop and epilogue storage in one
union.

*Live ranges.* Positions are the kernel body's top-level ops. A buffer is
touched at the position of every top-level op that contains an access to it
(an op with a shared-memory effect on a tensor viewing it). Its range runs
from the first such position to the last.

*When two buffers may overlap.* X before Y (X's last touch precedes Y's
first), and between them, at the top level, a ``gpu.barrier`` that every
thread reaches after its last access to X; if X is written by cp.async, a
``cp_async_wait {pending = 0}`` after the last such copy and before that
barrier, so no copy into X lands after it. (The pipeline pass puts both after
its loop when shared memory is touched after it, and commits every copy it
issues; gemm_tiled's epilogue begins with them. A copy never committed is not
covered by any wait: a race the CPU backend reports as a missing wait, with or
without the reuse.) Then every access
to X happens before every access to Y, in every thread. A buffer some access
reaches through a value the analysis cannot follow back to its
``alloc_smem`` (a loop-carried tensor) turns reuse off for the kernel, and a
buffer read by an MMA through shared-memory descriptors (wgmma reads
asynchronously) never shares its bytes.

*In a loop over tiles.* When every touch of every buffer is inside one
top-level ``scf.for`` (a persistent kernel's loop over tiles, which
gemm_tiled's is), positions are the ops of that loop's body, and the body
repeats: X before Y in one iteration, as above, and also Y before X of the
next iteration, through a barrier in the body after Y's last access (or
before X's first), after a wait for any cp.async into Y. The loop's bounds
are the same in every thread of the CTA (a barrier inside it needs that
anyway).

*In a branch.* When every touch is inside one top-level ``scf.if``, in one of
its branches (gemm_tiled's CTAs past the full waves skip the work), positions
are the ops of that branch: a thread that takes it runs them in order, one
that does not touches nothing. The rules apply again inside (a loop in the
branch, a branch in the loop body; inside a loop body the back-edge rule
stays).

*A buffer touched outside that op too* (a stream-K share's bounds, written before
gemm_tiled's loop over the share's pieces and read in it) does not stop the
descent into the op that alone touches the most bytes: it is pinned, live through
all of it, and shares no bytes. A pinned buffer may cost a reuse the outer level
allowed, so each level makes a plan and the smallest is kept (an inner one on a
tie).

*Placement.* First fit, in order of first touch: the lowest offset on the
buffer's alignment (lower-to-thread's: 128 bytes, 1024 for a buffer a wgmma
reads through descriptors) that overlaps no earlier buffer it may not overlap. The total is the
largest end; lower-to-thread reports a total past the target's limit at the
buffer that ends last.
"""

from __future__ import annotations

from dataclasses import dataclass

from cutec.atoms.mma import mma_atom_named
from cutec.ir.core import Block, Operation, Value
from cutec.ir.dialects import cute as C
from cutec.ir.dialects import gpu, scf, thread
from cutec.ir.dialects.builtin import KernelOp
from cutec.ir.dialects.cute_types import TensorType
from cutec.ir.traits import AddressSpace

_SHARED = (AddressSpace.SHARED, AddressSpace.GENERIC)

# The ops that make a view of their first operand (a shared tensor's views keep its root).
VIEW_OPS = (C.SliceOp, C.PartitionOp, C.LocalTileOp, C.LocalPartitionOp, C.DivideOp,
            C.ComposeOp, C.RetileOp, C.ViewOp, C.RecastOp, C.GroupModesOp,
            C.TmaPartitionOp)  # fmt: skip


def smem_root(value: Value) -> C.AllocSmemOp | None:
    """The `cute.alloc_smem` a shared tensor is a view of (through view ops), if any."""
    while True:
        owner = value.owner
        if isinstance(owner, C.AllocSmemOp):
            return owner
        if not isinstance(owner, VIEW_OPS):
            return None
        value = owner.operands[0]


@dataclass(frozen=True)
class SharedPlan:
    """Byte offsets of the kernel's shared buffers and the bytes they take in all."""

    offsets: dict[C.AllocSmemOp, int]
    total: int
    reusing: tuple[C.AllocSmemOp, ...] = ()  # placed over an earlier, dead buffer's bytes


@dataclass
class _Buffer:
    alloc: C.AllocSmemOp
    size: int
    first: int  # top-level positions of the first and last touch
    last: int
    last_async_write: int = -1  # the position of the last cp.async into it, if any
    async_read: bool = False  # through an MMA's shared-memory descriptors


def plan_shared(
    kernel: KernelOp, sizes: dict[C.AllocSmemOp, int], aligns: dict[C.AllocSmemOp, int]
) -> SharedPlan:
    """Offsets for the buffers of `sizes` (each `alloc_smem` of `kernel`, in bytes): the
    smallest of the plans made at the kernel's top level and inside each loop or branch
    that holds the buffers' accesses (every plan is safe; an inner one sees more reuse,
    but one that pins a buffer may see less)."""
    reuse = all(a.parent is kernel.body for a in sizes)
    top = list(kernel.body.ops)
    buffers, known = _live_ranges(top, sizes)
    best = _place(buffers, top, reuse and known, False, aligns)
    repeats = False
    pinned: set[C.AllocSmemOp] = set()
    # Every buffer's touches (or, untouched, its alloc) in one op: a loop over tiles, or
    # a branch (the CTAs past a limit skip the work), whose ops are then the positions.
    # A buffer also touched before or after that op is pinned: live through all of it,
    # sharing no bytes (a stream-K share's bounds, written before its loop over pieces
    # and read in it).
    while known:
        inner, outside = _descent(top, buffers, sizes)
        if inner is None:
            break
        top, repeats = list(inner.ops), repeats or isinstance(inner.parent_op, scf.ForOp)
        pinned |= outside
        buffers, known = _live_ranges(top, sizes)
        for a in pinned:
            buffers[a] = _Buffer(a, sizes[a], 0, len(top), async_read=True)
        if known:
            plan = _place(buffers, top, reuse, repeats, aligns)
            best = plan if plan.total <= best.total else best
    return best


def _descent(
    top: list[Operation], buffers: dict[C.AllocSmemOp, _Buffer], sizes: dict[C.AllocSmemOp, int]
) -> tuple[Block | None, set[C.AllocSmemOp]]:
    """The loop body or branch of the top-level op that alone touches the most bytes of
    buffers, and the buffers touched elsewhere too (None: no such op)."""
    alone: dict[int, int] = {}
    for b in buffers.values():
        if b.first == b.last:
            alone[b.first] = alone.get(b.first, 0) + b.size
    if not alone:
        return None, set()
    at = max(alone, key=lambda p: (alone[p], -p))
    inner = _inner_block(top[at], sizes)
    outside = {b.alloc for b in buffers.values() if not b.first == b.last == at}
    return inner, outside


def _place(
    buffers: dict[C.AllocSmemOp, _Buffer],
    top: list[Operation],
    reuse: bool,
    repeats: bool,
    aligns: dict[C.AllocSmemOp, int],
) -> SharedPlan:
    """First fit in order of first touch (ties: the order the allocs come in)."""
    made = {a: i for i, a in enumerate(buffers)}
    order = sorted(buffers.values(), key=lambda b: (b.first, made[b.alloc]))
    offsets: dict[C.AllocSmemOp, int] = {}
    reusing: list[C.AllocSmemOp] = []
    total = 0
    for i, y in enumerate(order):
        taken = [
            (offsets[x.alloc], offsets[x.alloc] + x.size)
            for x in order[:i]
            if not (reuse and _fenced(x, y, top) and (not repeats or _fenced_back(x, y, top)))
        ]
        at = 0
        for start, end in sorted(taken):
            if at + y.size <= start:
                break
            at = max(at, round_up(end, aligns[y.alloc]))
        if any(offsets[x.alloc] < at + y.size and at < offsets[x.alloc] + x.size
               for x in order[:i]):  # fmt: skip
            reusing.append(y.alloc)
        offsets[y.alloc] = at
        total = max(total, at + y.size)
    return SharedPlan(offsets, total, tuple(reusing))


def _inner_block(op: Operation, sizes: dict[C.AllocSmemOp, int]) -> Block | None:
    """The block of `op` that holds every access to the buffers: a loop's body, or the
    one branch of an ``scf.if`` that touches them (None: `op` is neither)."""
    if isinstance(op, scf.ForOp):
        return op.body
    if not isinstance(op, scf.IfOp):
        return None
    touching = [
        block
        for block in (op.then_block, op.else_block)
        if block is not None
        and any(_touches(nested) for inner in block.ops for nested in inner.walk())
    ]
    return touching[0] if len(touching) == 1 else None


def _live_ranges(
    top: list[Operation], sizes: dict[C.AllocSmemOp, int]
) -> tuple[dict[C.AllocSmemOp, _Buffer], bool]:
    """Each buffer's first and last touch among `top`'s positions, and whether every
    access could be followed back to its buffer. An untouched buffer sits at the
    position of its alloc (or the op containing it) when that is in `top`."""
    index = {op: i for i, op in enumerate(top)}
    buffers = {a: _Buffer(a, sizes[a], len(top), -1) for a in sizes}
    known = True
    for pos, op in enumerate(top):
        for nested in op.walk():
            for root, how in _touches(nested):
                if root is None:
                    known = False
                    continue
                b = buffers[root]
                b.first, b.last = min(b.first, pos), max(b.last, pos)
                if how == "async-write":
                    b.last_async_write = max(b.last_async_write, pos)
                b.async_read |= how == "async-read"
    for a, b in buffers.items():
        if b.last < 0:
            at = _position(a, index)
            b.first = b.last = at if at is not None else 0
    return buffers, known


def _position(op: Operation, index: dict[Operation, int]) -> int | None:
    """The position of the op of `index` that is or contains `op` (None: none is)."""
    found: Operation | None = op
    while found is not None and found not in index:
        found = found.parent_op
    return None if found is None else index[found]


def _touches(op: Operation) -> list[tuple[C.AllocSmemOp | None, str]]:
    """The buffers `op` accesses (None: one it reaches through a value the analysis
    cannot follow), each with how: "access", "async-write" or "async-read"."""
    effects = op.memory_effects()  # None: unknown, so any shared operand counts
    if effects is not None and not any(e.space in _SHARED for e in effects):
        return []
    out: list[tuple[C.AllocSmemOp | None, str]] = []
    for v in op.operands:
        t = v.type
        if not (isinstance(t, TensorType) and t.space in _SHARED):
            continue
        root = smem_root(v)
        if root is None and t.space is AddressSpace.GENERIC:
            continue  # a global tensor seen through a generic pointer
        out.append((root, _how(op, v)))
    return out


def _how(op: Operation, v: Value) -> str:
    if isinstance(op, C.CopyAsyncOp) and v is op.dst:
        return "async-write"
    if isinstance(op, C.GemmOp) and op.mma is not None:
        atom = mma_atom_named(op.mma.type.atom)
        if atom is not None and (atom.a_in_smem or atom.b_in_smem):
            return "async-read"
    return "access"


def _fenced(x: _Buffer, y: _Buffer, top: list[Operation]) -> bool:
    """Whether every access to `x` happens before every access to `y`: a top-level
    barrier between them, after a wait for every cp.async into `x`."""
    if x.async_read or x.last >= y.first:
        return False
    waited = x.last_async_write < 0
    start = x.last + 1 if waited else x.last_async_write + 1
    for pos in range(start, y.first):
        op = top[pos]
        if isinstance(op, thread.CpAsyncWaitOp) and op.pending.value == 0:
            waited = True
        elif isinstance(op, gpu.BarrierOp) and waited and pos > x.last:
            return True
    return False


def _fenced_back(x: _Buffer, y: _Buffer, top: list[Operation]) -> bool:
    """In a loop body: whether every access to `y` happens before every access to `x`
    in the next iteration: a barrier after `y`'s last access (and a wait for every
    cp.async into `y`) before the body ends or before `x`'s first access."""
    waited = y.last_async_write < 0
    start = y.last + 1 if waited else y.last_async_write + 1
    for pos in [*range(start, len(top)), *range(0, x.first)]:
        op = top[pos]
        if isinstance(op, thread.CpAsyncWaitOp) and op.pending.value == 0:
            waited = True
        elif isinstance(op, gpu.BarrierOp) and waited and (pos > y.last or pos < x.first):
            return True
    return False


def round_up(n: int, m: int) -> int:
    """`n` rounded up to a multiple of `m`."""
    return (n + m - 1) // m * m
