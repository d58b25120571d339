"""The reference interpreter of the thread dialect: one kernel, every thread, in Python.

`run_kernel(kernel, grid, args)` runs a `builtin.kernel` of gpu / thread /
arith / scf ops for every thread of every CTA of a (small) grid. It is the
oracle the lowering's value tests compare against, and later the CPU
backend's: slow, simple and strict.

* **Memory.** A pointer argument is bound to a numpy array, which is the
  global memory behind it and is updated in place. Each CTA has its own
  shared memory: one buffer per `thread.alloc_shared` op and one for
  `thread.dynamic_shared` (the kernel's ``dynamic_smem`` bytes), filled with
  0xFF bytes (a NaN for floats, -1 for integers), as uninitialised memory.
  A pointer value is (buffer, byte offset, element type, space); every
  access is checked against its buffer's bounds and for natural alignment,
  and a violation raises `AccessError` naming the op's location, the
  thread and the block.
* **Threads.** Each thread is a Python generator over the kernel body that
  yields at ``gpu.barrier``; a CTA's threads run round-robin from barrier to
  barrier, so every write before a barrier is seen by every read after it. The
  CTAs of a cluster run together (`cutec.cpu.cluster.run_cluster`), so a
  cluster barrier is a rendezvous of all their threads; clusters run one after
  another.
  With ``check_shared`` (the default) shared memory is checked as in
  `cutec.cpu.checks`: two threads touching one shared byte between two
  barriers, one of them writing (a race), a load of a byte not written in this
  CTA, and an access of a cp.async destination before its wait are each an
  `AccessError` (``check_shared=False`` lets the run go on: a missing barrier
  then shows as a wrong result). A warp whose threads stop at different
  barriers, and warps that wait at a barrier others never reach, are reported
  (a divergent barrier, a deadlock naming who waits on what).
* **Values.** Integers are Python ints in the stored (two's-complement)
  form, floats Python floats rounded to their type: arith ops are evaluated
  by their own folders (`Operation.fold`), so the interpreter has the
  hardware semantics the folder has, with no second copy of them. Vectors
  are tuples. The math ops (``math.exp`` ...) too: each is the function
  computed in double precision and rounded to the type, which the GPU's
  approximate instructions (``ex2.approx.f32``, ``lg2.approx.f32``,
  ``rsqrt.approx.f32``) differ from within their bounds (docs/language.md,
  *Fragment arithmetic*); compare those with a tolerance.
* **cp.async.** A copy reads its source when issued and lands in shared
  memory when a ``cp_async_wait`` covers its group; until then its destination
  holds 0xFF bytes (NaN, or -1 as integers), so a missing or misplaced wait
  shows in the results even with the checks off.
* **TMA loads** (reference_tma.py, cutec/cpu/tma.py): the box is read when issued
  and lands when a wait on its mbarrier counts its bytes toward the phase; until
  then it holds 0xFF bytes, and a read of them is reported as a cp.async's is.
* **TMA stores** (reference_tma_store.py): the box is read from shared memory at the
  ``thread.bulk_wait`` that covers its group (at the CTA's end if none does) and
  its in-bounds elements written at a plain wait (or the end); a write of the box
  before it is read, and a missing proxy fence before the issue, are reported.
* **Trace.** With ``trace=True`` every access is recorded as an `Access`
  (block, thread, op, load/store/atomic, buffer, byte offset, bytes).
* **Atomics** (reference_atomic.py) are a checked read and write with nothing
  between (threads run one at a time); fences do nothing more.

* **Warp-collective atoms** (mma.sync, ldmatrix, each warp's part of a wgmma, and
  the wgmma batch ops): a thread stops at one as at a
  barrier, and when all 32 lanes of its warp are there the atom runs once on
  their registers from its record's layouts (`cutec.cpu.collective`); lanes of
  one warp at different ops, or a lane that finishes, is a divergent collective.
  wgmma's asynchrony and checks are `cutec.cpu.wgmma`'s (reference_wgmma.py).
  The one-thread atoms (UniversalFMA, UniversalCopy's ld/st roles) run in the
  thread; other atoms raise NotImplementedError.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import replace
from fractions import Fraction
from typing import Any

import numpy as np

from cutec.atoms.family import Family
from cutec.cpu import checks, tma, wgmma
from cutec.cpu.cluster import cluster_barrier, cluster_blocks, cluster_dim, run_cluster
from cutec.cpu.collective import WARP_STEPS, run_warp_op, warp_threads
from cutec.cpu.mbarrier import INIT_FENCES, MbarrierError, Mbarriers, Waiting
from cutec.cpu.reference_atomic import ATOMIC_HANDLERS, AtomicOps
from cutec.cpu.reference_memory import (
    Access,
    AccessError,
    Buffer,
    Dim3,
    InterpreterError,
    Pointer,
    RemoteBuffer,
    Run,
    argument,
    decode,
    encode,
    scalar_bytes,
    to_attr,
)
from cutec.cpu.reference_tma import TMA_HANDLERS
from cutec.cpu.reference_tma_store import (
    TMA_STORE_HANDLERS,
    BulkGroups,
    StagedBoxes,
    TmaStoreOps,
)
from cutec.cpu.reference_wgmma import WgmmaOps, cta_state, located
from cutec.cpu.warp_barriers import (
    WARP_BARRIER_OPS,
    BarrierError,
    ClusterBarrier,
    WarpBarriers,
)
from cutec.ir.attributes import DenseArrayAttr, IntegerAttr
from cutec.ir.core import Block, Operation, Value
from cutec.ir.dialects import builtin, gpu, scf, thread
from cutec.ir.dialects.arith_fold import int_value, round_float
from cutec.ir.dialects.gpu import PointerType
from cutec.ir.dialects.thread_tma import tensor_map_names
from cutec.ir.traits import AddressSpace
from cutec.ir.types import FloatType, Type, VectorType

__all__ = ["Access", "AccessError", "InterpreterError", "Run", "run_kernel"]

# --------------------------------------------------------------------------- the run


def dim3(values: Sequence[int] | int) -> Dim3:
    """(x, y, z) of an int or a sequence of up to three (missing sizes are 1)."""
    v = [values] if isinstance(values, int) else list(values)
    v += [1] * (3 - len(v))
    return (int(v[0]), int(v[1]), int(v[2]))


def block_dim(kernel: builtin.KernelOp, block: Sequence[int] | int | None) -> Dim3:
    """The CTA shape: `block` if given, else the kernel's reqntid or maxntid."""
    if block is not None:
        return dim3(block)
    for key in ("reqntid", "maxntid"):
        attr = kernel.attributes.get(key)
        if isinstance(attr, DenseArrayAttr):
            return dim3(list(attr.values))
    raise InterpreterError(f"kernel @{kernel.sym_name} has no reqntid: pass block=(x, y, z)")


def bind_arguments(kernel: builtin.KernelOp, args: Sequence[Any] | Mapping[str, Any]) -> list[Any]:
    """Each kernel argument's value (`args` in argument order or by name): pointers as
    `Pointer`s over their numpy arrays, scalars rounded or wrapped to their type."""
    params = kernel.body.args
    if isinstance(args, Mapping):
        missing = [p.name_hint for p in params if p.name_hint not in args]
        if missing:
            raise TypeError(f"no value for argument(s) {', '.join(map(str, missing))}")
        values = [args[str(p.name_hint)] for p in params]
    else:
        # The kernel's tensor maps (`bind_maps`) may follow its arguments.
        values = list(args)
        if len(values) - len(params) not in {0, len(tensor_map_names(kernel))}:
            raise TypeError(f"kernel @{kernel.sym_name} takes {len(params)} arguments")
        values = values[: len(params)]
    return [
        argument(v, p.type, p.name_hint or f"#{i}")
        for i, (v, p) in enumerate(zip(values, params, strict=True))
    ]


def bind_maps(
    kernel: builtin.KernelOp, args: Sequence[Any] | Mapping[str, Any], bound: list[Any]
) -> dict[str, tma.BoundMap]:
    """Each of the kernel's tensor maps (`tma.TensorMapArgument`s, in ``tensor_maps``
    order after the arguments, or by name) over its argument's memory in `bound`."""
    names = tensor_map_names(kernel)
    if not names:
        return {}
    params = kernel.body.args
    if isinstance(args, Mapping):
        values = [args.get(n) for n in names]
    else:
        values = list(args)[len(params) :] or [None] * len(names)
    by_name = {str(p.name_hint): b for p, b in zip(params, bound, strict=True)}
    out = {}
    for name, value in zip(names, values, strict=True):
        if not isinstance(value, tma.TensorMapArgument):
            raise TypeError(f"tensor map {name}: pass a TensorMapArgument, got {value!r}")
        base = by_name.get(value.tensor)
        if not isinstance(base, Pointer):
            raise TypeError(f"tensor map {name}: {value.tensor!r} is no pointer argument")
        out[name] = tma.BoundMap(name, value.desc, base)
    return out


def run_kernel(
    kernel: builtin.KernelOp,
    grid: Sequence[int] | int,
    args: Sequence[Any] | Mapping[str, Any],
    *,
    block: Sequence[int] | int | None = None,
    trace: bool = False,
    check_shared: bool = True,
) -> Run:
    """Run `kernel` on every thread of `grid` CTAs; pointer arguments are numpy arrays
    (updated in place), the others Python numbers. `args` is in argument order or by
    argument name; the kernel's tensor maps (`tma.TensorMapArgument`s) follow its
    arguments in ``tensor_maps`` order, or come by name. The CTA shape is `block`, else
    the kernel's ``reqntid``/``maxntid``.
    With `check_shared`, shared-memory races, loads of unwritten shared bytes and
    accesses of cp.async destinations before their wait are `AccessError`s."""
    bound = bind_arguments(kernel, args)
    maps = bind_maps(kernel, args, bound)
    run = Run()
    grid3, block3 = dim3(grid), block_dim(kernel, block)
    nthreads = block3[0] * block3[1] * block3[2]
    epoch = 1  # barrier intervals are numbered across CTAs (cutec.cpu.checks)
    webs = wgmma.AccumulatorWebs(kernel) if wgmma.uses_wgmma(kernel) else None
    for blocks in cluster_blocks(grid3, cluster_dim(kernel)):
        ctas: list[_Cta] = []
        barrier = cluster_barrier(ctas)
        for rank, block_id in enumerate(blocks):
            cta = _Cta(kernel, block_id, grid3, block3, run if trace else None, barrier, rank)
            cta.check_shared, cta.epoch, cta.start, cta.since = check_shared, epoch, epoch, epoch
            cta.maps, cta.cluster = maps, ctas
            if webs is not None:
                cta.wgmma = cta_state(cta, webs, nthreads)
                cta.web_ops = {*webs.accesses, *webs.writes}
            cta.begin(bound)
            ctas.append(cta)
        run_cluster(ctas, nthreads)
        epoch = max(cta.epoch for cta in ctas) + 1
    return run


class _Cta:
    """One CTA: its shared memory and its threads, run from barrier to barrier, with
    the other CTAs of its cluster (`cutec.cpu.cluster.run_cluster`)."""

    def __init__(
        self,
        kernel: builtin.KernelOp,
        block_id: Dim3,
        grid: Dim3,
        block: Dim3,
        run: Run | None,
        cluster: ClusterBarrier,
        rank: int,
    ) -> None:
        """`cluster`: the barrier of its cluster, `rank`: its rank in it."""
        self.kernel, self.block_id, self.grid, self.block = kernel, block_id, grid, block
        self.record = run  # where accesses are traced, or None
        self.shared: dict[Operation | None, Buffer] = {}
        self.remote_views: dict[Operation | None, RemoteBuffer] = {}  # `remote`'s
        self.exited = False  # every thread finished: no other CTA may reach its memory
        self.cluster: Sequence[_Cta] = [self]  # the CTAs of its cluster, in rank order
        self.check_shared = True
        self.epoch = self.start = 1  # this barrier interval, the CTA's first
        self.since = 1  # the first interval after its last cluster barrier (checks)
        self.shadows: dict[int, checks.SharedShadow] = {}  # id(buffer) -> its shadow
        self.uninit: AccessError | None = None  # the first load of an unwritten byte
        self.warp_ops: dict[Operation, bool] = {}  # op -> whether it is warp-collective
        self.mbarriers = Mbarriers(self.phase_completed)
        self.warp_barriers = WarpBarriers(cluster, rank, self.barrier_completed)
        self.wgmma: wgmma.WgmmaCta | None = None  # with wgmma ops (cutec.cpu.wgmma)
        self.window = wgmma.shared_window(kernel)  # where gmma_desc finds its buffers
        self.web_ops: set[Operation] = set()  # ops that access accumulator registers
        self.maps: dict[str, tma.BoundMap] = {}  # the kernel's tensor maps, by name
        self.tma_pending = tma.PendingLoads()  # by id(buffer): loads that have not landed
        self.staged = StagedBoxes()  # the boxes of TMA stores not yet read
        self.proxy = checks.ProxyFences()  # generic-proxy writes fenced to the async proxy

    def wgmma_error(self, e: wgmma.WgmmaError) -> AccessError:
        return located(self, e)

    def phase_completed(self) -> None:
        """An mbarrier phase completed: a new interval of the race check (cutec.cpu.mbarrier)."""
        self.epoch += 1

    def barrier_completed(self, warps: set[int]) -> None:
        """A named or cluster barrier completed: a new interval of the race check (coarse,
        as an mbarrier phase), and the fenced mbarrier inits of its warps are published."""
        self.epoch += 1
        self.mbarriers.barrier(warps)

    def note_shared(
        self, t: _Thread, op: Operation, buf: Buffer, first: int, n: int, kind: int
    ) -> None:
        """Check and record an access of shared bytes (`checks.LOAD` ...)."""
        if kind in (checks.STORE, checks.ASYNC):
            rewritten = self.staged.rewritten(buf, first, n, kind)
            if rewritten is not None:
                raise t.error(op, rewritten)
        shadow = self.shadows.get(id(buf))
        if shadow is None:
            shadow = self.shadows[id(buf)] = checks.SharedShadow(buf.size)
        b = self.block
        linear = t.tid[0] + b[0] * (t.tid[1] + b[1] * t.tid[2])
        failed = shadow.access(first, n, linear, kind, self.epoch, self.start)
        if shadow.uninit is not None and self.uninit is None:
            message = checks.shared_message(checks.UNINIT, kind, shadow.uninit, buf.name, 0, b)
            self.uninit = t.error(op, message)
        if failed is not None:
            code, byte, other = failed
            pending = self.tma_pending.message(id(buf), buf.name, byte, checks.kind_name(kind))
            if code == checks.PENDING_ACCESS and pending is not None:
                raise t.error(op, pending)
            raise t.error(op, checks.shared_message(code, kind, byte, buf.name, other, b))

    def cluster_completed(self, warps: set[int]) -> None:
        """The cluster barrier completed: as `barrier_completed`, and the intervals from
        now on are after it (`checks.remote_conflict`)."""
        self.barrier_completed(warps)
        self.since = self.epoch

    def remote_access(self, t: _Thread, op: Operation, view: RemoteBuffer, first: int, n: int,
                      kind: int) -> None:  # fmt: skip
        """Another CTA's thread `t` accesses bytes first..first+n-1 of this CTA's buffer
        through `view` (`checks.remote_conflict`); a store marks them written
        (`checks.remote_stamp`)."""
        buf = view.local
        shadow = self.shadows.get(id(buf))
        if shadow is None:
            shadow = self.shadows[id(buf)] = checks.SharedShadow(buf.size)
        for k, (w, r) in enumerate(shadow.words[first : first + n].tolist()):
            found = checks.remote_conflict(w, r, kind, self.since)
            if found is not None:
                code, other = found
                message = checks.remote_race_message(
                    code, kind, first + k, view.name, other, self.block, self.block_id
                )
                raise t.error(op, message)
        if kind == checks.STORE:
            shadow.words[first : first + n, 0] = checks.remote_stamp(self.since)

    def land(self, buf: Buffer, first: int, data: np.ndarray) -> None:
        """A cp.async's bytes land in shared memory."""
        buf.data[first : first + data.size] = data
        shadow = self.shadows.get(id(buf))
        if shadow is not None:
            shadow.land(first, data.size)

    def shared_buffer(self, op: Operation | None, nbytes: int, name: str) -> Buffer:
        """The buffer of alloc op `op` (None or DynamicSharedOp: the dynamic one)."""
        key = None if isinstance(op, thread.DynamicSharedOp) else op
        if key not in self.shared:
            data = np.full(nbytes, 0xFF, dtype=np.uint8)
            self.shared[key] = Buffer(name, AddressSpace.SHARED, data)
        return self.shared[key]

    def key_of(self, buf: Buffer) -> Operation | None:
        """The alloc op of one of this CTA's shared buffers (None: the dynamic one)."""
        return next(k for k, b in self.shared.items() if b is buf)

    def remote(self, key: Operation | None, local: Buffer, rank: int) -> RemoteBuffer:
        """This CTA's buffer of alloc op `key` as another CTA of the cluster sees it (the
        same bytes, its space shared::cluster; named as `checks.remote_name` says);
        `local` is the other CTA's, for the size and name."""
        found = self.remote_views.get(key)
        if found is None:
            mine = self.shared_buffer(key, local.size, local.name)
            name = checks.remote_name(local.name, rank)
            found = RemoteBuffer(name, AddressSpace.SHARED_CLUSTER, mine.data, mine, self)
            self.remote_views[key] = found
        return found

    def collective(self, op: thread.AtomOp) -> bool:
        """Whether `op` is a warp-collective atom (its lanes meet; `cutec.cpu.collective`)."""
        found = self.warp_ops.get(op)
        if found is None:
            found = self.warp_ops[op] = warp_threads(op) > 1
        return found

    # ------------------------------------------------------------ scheduling
    # `cutec.cpu.cluster.run_cluster` drives the CTAs of a cluster through these.
    def begin(self, arguments: list[Any]) -> None:
        """Start the threads: each a generator that yields at a barrier, at a warp-
        collective atom and at an mbarrier wait that is not satisfied."""
        bx, by, bz = self.block
        self.threads = [
            _Thread(self, (x, y, z)) for z in range(bz) for y in range(by) for x in range(bx)
        ]
        self.gens = [t.start(arguments) for t in self.threads]
        self.at: list[Operation | None] = [None] * len(self.threads)  # where each waits
        self.runnable: Sequence[int] = range(len(self.threads))
        self.warps: list[Operation | Waiting | None] = []  # where each warp stopped
        self.started = False  # (before, `at` says None for threads not yet run)

    def live_warps(self) -> set[int]:
        """The warps that have not finished."""
        if not self.started:
            return set(range(-(-len(self.at) // checks.WARP)))
        return {v // checks.WARP for v, op in enumerate(self.at) if op is not None}

    def stopped(self) -> list[Operation | Waiting | None]:
        return self.warps

    def advance(self) -> bool:
        """Run the threads while any makes progress; a warp-collective atom runs when all
        lanes of its warp have reached it; a thread at an mbarrier wait that is not
        satisfied is resumed (to check again) while any thread makes progress; warps at
        a named or cluster barrier are stepped each pass. Whether any thread moved."""
        at, threads, gens = self.at, self.threads, self.gens
        progressed = False
        while True:
            events = self.mbarriers.events
            moved = False
            for i in self.runnable:
                before = at[i]
                try:
                    at[i] = next(gens[i])
                except StopIteration:
                    at[i] = None  # finished
                moved = moved or at[i] is not before or before is None
            self.started = True
            self.exited = all(op is None for op in at)
            # A warp whose lanes all wait at one warp-collective atom runs it and goes on;
            # lanes of one warp stopped at different places are divergent. A warp with
            # a lane at an mbarrier wait waits for it.
            ran: list[int] = []
            blocked: list[int] = []
            warps: list[Operation | Waiting | None] = []
            for w in range(0, len(at), checks.WARP):
                mine = at[w : w + checks.WARP]
                waits = [w + k for k, op in enumerate(mine) if type(op) is thread.MbarrierWaitOp]
                if waits:
                    blocked += waits
                    warps.append(threads[waits[0]].waiting)
                    continue
                first = next((op for op in mine if op is not None), None)
                if first is not None and any(op is not first for op in mine):
                    k = next(k for k, op in enumerate(mine) if op is not first)
                    if first.name != "gpu.barrier":
                        raise checks.divergent_collective(first, threads[w + k].tid, self.block_id)
                    raise checks.divergent_barrier(first, threads[w + k].tid, self.block_id)
                if first is not None and type(first) in WARP_BARRIER_OPS:
                    try:
                        go = self.warp_barriers.step(first, w // checks.WARP)
                    except BarrierError as e:
                        raise threads[w].error(first, str(e)) from None
                    if go:
                        ran += range(w, w + len(mine))
                    warps.append(None if go else first)
                    continue
                if first is not None and first.name != "gpu.barrier":
                    if not run_warp_op(first, threads[w : w + checks.WARP]):
                        # a wgmma_wait for its warpgroup: tried again on the next pass
                        warps.append(wgmma.WgmmaWaiting(first, "", 0, 0))
                        continue
                    ran += range(w, w + len(mine))
                warps.append(first)
            self.warps = warps
            progress = bool(ran or moved or self.mbarriers.events != events)
            progressed = progressed or progress
            if progress and (ran or blocked):
                self.runnable = ran + blocked
                continue
            self.runnable = []  # until a barrier lets a warp go on (stepped each pass)
            return progressed

    def close_interval(self) -> None:
        if self.uninit is not None:  # no race this interval: the load itself is wrong
            raise self.uninit
        if self.wgmma is not None:
            try:
                self.wgmma.converged()
            except wgmma.WgmmaError as e:
                raise located(self, e) from None

    def next_round(self) -> None:
        self.epoch += 1  # every thread has passed the barrier
        self.mbarriers.barrier()
        self.runnable = [i for i, op in enumerate(self.at) if op is not None]

    def finish(self) -> None:
        for t in self.threads:
            t.bulk_finish()


# Handlers: op class -> method name of _Thread (region ops and barriers are apart).
_HANDLERS: dict[type[Operation], str] = {
    **ATOMIC_HANDLERS,
    **TMA_HANDLERS,
    **TMA_STORE_HANDLERS,
    thread.GmmaDescOp: "gmma_desc",
    thread.FenceProxyAsyncOp: "fence_proxy_async",
    # Registers are the CPU's to spare: a setmaxnreg changes nothing a thread computes
    # (cutec.analysis.register_budget checks its rules when the PTX is written).
    thread.SetMaxNRegOp: "nothing",
}


def _handles(*classes: type[Operation]) -> Callable[[Callable], Callable]:
    def mark(fn: Callable) -> Callable:
        for cls in classes:
            _HANDLERS[cls] = fn.__name__
        return fn

    return mark


class _Thread(AtomicOps, WgmmaOps, TmaStoreOps):
    """One thread's state: its ids, its values, its cp.async groups and its TMA stores (the
    atomics and fences are reference_atomic.py's, gmma_desc and the proxy fence
    reference_wgmma.py's, TMA reference_tma.py's and reference_tma_store.py's)."""

    def nothing(self, op: Operation) -> None:
        """An op with no effect on the CPU (thread.setmaxnreg)."""

    def __init__(self, cta: _Cta, tid: Dim3) -> None:
        self.cta, self.tid = cta, tid
        self.env: dict[Value, Any] = {}
        self.uncommitted: list[tuple[Pointer, np.ndarray]] = []
        self.groups: list[list[tuple[Pointer, np.ndarray]]] = []
        self.waiting: Waiting | None = None  # the mbarrier wait this thread is stopped at
        self.bulk = BulkGroups()  # its TMA stores in flight

    # ------------------------------------------------------------ control
    def start(self, arguments: list[Any]) -> Generator[Operation, None, None]:
        body = self.cta.kernel.body
        for arg, value in zip(body.args, arguments, strict=True):
            self.env[arg] = value
        yield from self.block(body)

    def block(self, block: Block) -> Generator[Operation, None, list[Any]]:
        env = self.env
        web_ops = self.cta.web_ops
        for op in block.ops:
            cls = type(op)
            if web_ops and op in web_ops:
                self.wgmma_access(op)
            if cls is gpu.BarrierOp or cls in WARP_BARRIER_OPS:
                yield op  # the CTA resumes it when the barrier lets its warp go on
            elif cls in (scf.YieldOp, scf.ConditionOp, builtin.ReturnOp):
                return [env[v] for v in op.operands]
            elif cls is scf.ForOp:
                results = yield from self.for_(op)
                env.update(zip(op.results, results, strict=True))
            elif cls is scf.IfOp:
                results = yield from self.if_(op)
                env.update(zip(op.results, results, strict=True))
            elif cls is scf.WhileOp:
                results = yield from self.while_(op)
                env.update(zip(op.results, results, strict=True))
            elif op.name.startswith(("arith.", "math.")):
                self.arith(op)
            elif (cls is thread.AtomOp and self.cta.collective(op)) or cls in WARP_STEPS:
                yield op  # the CTA runs it when the warp's lanes have all arrived
            elif cls is thread.MbarrierWaitOp:
                while not self.mbarrier_ready(op):
                    yield op  # the CTA resumes it to check again
            else:
                handler = _HANDLERS.get(cls)
                if handler is None:
                    raise InterpreterError(f"the reference interpreter cannot run {op.name}")
                getattr(self, handler)(op)
        return []

    def for_(self, op: scf.ForOp) -> Generator[Operation, None, list[Any]]:
        lb, ub, step = (self.env[v] for v in (op.lb, op.ub, op.step))
        carried = [self.env[v] for v in op.inits]
        body = op.body
        i = lb
        while i < ub:
            self.env[body.args[0]] = i
            self.env.update(zip(body.args[1:], carried, strict=True))
            carried = yield from self.block(body)
            i = int_value(i + step, op.lb.type)
        return carried

    def if_(self, op: scf.IfOp) -> Generator[Operation, None, list[Any]]:
        if self.env[op.cond]:
            return (yield from self.block(op.then_block))
        if op.else_block is not None:
            return (yield from self.block(op.else_block))
        return []

    def while_(self, op: scf.WhileOp) -> Generator[Operation, None, list[Any]]:
        carried = [self.env[v] for v in op.inits]
        while True:
            self.env.update(zip(op.before.args, carried, strict=True))
            cond, *values = yield from self.block(op.before)
            if not cond:
                return values
            self.env.update(zip(op.after.args, values, strict=True))
            carried = yield from self.block(op.after)

    # ------------------------------------------------------------ arith and math, by the folders
    def arith(self, op: Operation) -> None:
        operands = [self.env[v] for v in op.operands]
        attrs = [to_attr(x, v.type) for x, v in zip(operands, op.operands, strict=True)]
        folded = op.fold(attrs)
        if folded is None:
            shown = ", ".join(map(str, operands))
            raise InterpreterError(f"cannot evaluate {op.name} on ({shown})")
        for r, f in zip(op.results, folded, strict=True):
            self.env[r] = self.env[f] if isinstance(f, Value) else f.value

    # ------------------------------------------------------------ special registers
    @_handles(gpu.ThreadIdOp, gpu.BlockIdOp, gpu.BlockDimOp, gpu.GridDimOp)
    def dim_register(self, op: Operation) -> None:
        table = {
            gpu.ThreadIdOp: self.tid,
            gpu.BlockIdOp: self.cta.block_id,
            gpu.BlockDimOp: self.cta.block,
            gpu.GridDimOp: self.cta.grid,
        }[type(op)]
        self.env[op.results[0]] = table["xyz".index(op.attributes["dim"].value)]

    @_handles(gpu.ClusterIdOp, gpu.ClusterDimOp, gpu.ClusterBlockIdOp, gpu.ClusterDimBlocksOp)
    def cluster_register(self, op: Operation) -> None:
        d = "xyz".index(op.attributes["dim"].value)
        size, bid, grid = cluster_dim(self.cta.kernel)[d], self.cta.block_id[d], self.cta.grid[d]
        self.env[op.results[0]] = {
            gpu.ClusterIdOp: bid // size,
            gpu.ClusterDimOp: grid // size,  # (the grid is whole clusters)
            gpu.ClusterBlockIdOp: bid % size,
            gpu.ClusterDimBlocksOp: size,
        }[type(op)]

    @_handles(gpu.ClusterBlockRankOp)
    def cluster_rank(self, op: Operation) -> None:
        """``%cluster_ctarank``: the CTA's index in its cluster, x fastest."""
        (cx, cy, cz), b = cluster_dim(self.cta.kernel), self.cta.block_id
        self.env[op.results[0]] = b[0] % cx + cx * (b[1] % cy + cy * (b[2] % cz))

    @_handles(gpu.LaneIdOp)
    def lane_id(self, op: Operation) -> None:
        (x, y, z), (bx, by, _) = self.tid, self.cta.block
        self.env[op.results[0]] = (x + bx * (y + by * z)) % 32

    @_handles(gpu.WarpIdxOp)
    def warp_idx(self, op: Operation) -> None:
        self.env[op.results[0]] = self.tid[0] // 32  # tid.x / 32, as CuTe's canonical_warp_idx

    # ------------------------------------------------------------ pointers
    @_handles(thread.PtrAddOp)
    def ptr_add(self, op: thread.PtrAddOp) -> None:
        p: Pointer = self.env[op.ptr]
        step = scalar_bytes(p.element)
        self.env[op.result] = replace(p, offset=p.offset + self.env[op.offset] * step)

    @_handles(thread.PtrCastOp)
    def ptr_cast(self, op: thread.PtrCastOp) -> None:
        t = op.result.type
        assert isinstance(t, PointerType)
        self.env[op.result] = replace(self.env[op.ptr], element=t.element)

    @_handles(thread.CvtaOp)
    def cvta(self, op: thread.CvtaOp) -> None:
        p: Pointer = self.env[op.ptr]
        t = op.result.type
        assert isinstance(t, PointerType)
        if t.space is not AddressSpace.GENERIC and not p.buffer.space.aliases(t.space):
            raise self.error(op, f"the generic address points into {p.buffer.space.value} memory")
        self.env[op.result] = replace(p, space=t.space)

    @_handles(thread.MapaOp)
    def mapa(self, op: thread.MapaOp) -> None:
        """The same byte of the same buffer in the cluster's CTA `rank` (`_Cta.remote`)."""
        p: Pointer = self.env[op.ptr]
        rank = self.env[op.rank]
        if not 0 <= rank < len(self.cta.cluster):
            raise self.error(op, checks.mapa_rank_message(rank, len(self.cta.cluster)))
        buffer = self.cta.cluster[rank].remote(self.cta.key_of(p.buffer), p.buffer, rank)
        self.env[op.result] = replace(p, buffer=buffer, space=AddressSpace.SHARED_CLUSTER)

    @_handles(thread.AllocSharedOp)
    def alloc_shared(self, op: thread.AllocSharedOp) -> None:
        t = op.result.type
        assert isinstance(t, PointerType)
        name = f"shared@{op.location or op.parsed_at}"
        buffer = self.cta.shared_buffer(op, op.bytes.value, name)
        self.env[op.result] = Pointer(buffer, 0, t.element, AddressSpace.SHARED)

    @_handles(thread.AllocLocalOp)
    def alloc_local(self, op: thread.AllocLocalOp) -> None:
        """A fresh private array each time the op runs (its bytes start as zero)."""
        t = op.result.type
        assert isinstance(t, PointerType)
        data = np.zeros(op.bytes.value, dtype=np.uint8)
        buffer = Buffer(f"local@{op.location or op.parsed_at}", AddressSpace.LOCAL, data)
        self.env[op.result] = Pointer(buffer, 0, t.element, AddressSpace.LOCAL)

    @_handles(thread.DynamicSharedOp)
    def dynamic_shared(self, op: thread.DynamicSharedOp) -> None:
        t = op.result.type
        assert isinstance(t, PointerType)
        attr = self.cta.kernel.attributes.get("dynamic_smem")
        nbytes = attr.value if isinstance(attr, IntegerAttr) else 0
        buffer = self.cta.shared_buffer(op, nbytes, "dynamic_shared")
        self.env[op.result] = Pointer(buffer, 0, t.element, AddressSpace.SHARED)

    # ------------------------------------------------------------ memory
    def error(self, op: Operation, message: str) -> AccessError:
        return AccessError(message, op, self.tid, self.cta.block_id)

    def _check(
        self, op: Operation, p: Pointer, nbytes: int, kind: str, cp_async: bool = False
    ) -> None:
        buf = p.buffer
        if isinstance(buf, RemoteBuffer) and buf.owner.exited:
            raise self.error(op, checks.exited_message(kind, buf.name))
        if p.space is not AddressSpace.GENERIC and not buf.space.aliases(p.space):
            raise self.error(
                op, f"{p.space.value} {kind} of {buf.name}, a {buf.space.value} buffer"
            )
        if p.offset < 0 or p.offset + nbytes > buf.size:
            raise self.error(
                op,
                f"out-of-bounds {kind} of {nbytes} bytes at byte offset {p.offset} of "
                f"{buf.name} ({buf.size} bytes)",
            )
        if p.offset % nbytes:
            raise self.error(
                op, f"misaligned {kind} of {nbytes} bytes at byte offset {p.offset} of {buf.name}"
            )
        if self.cta.check_shared and buf.space is AddressSpace.SHARED:
            code = checks.ASYNC if cp_async else checks.LOAD if kind == "load" else checks.STORE
            self.cta.note_shared(self, op, buf, p.offset, nbytes, code)
        elif self.cta.check_shared and isinstance(buf, RemoteBuffer):
            code = checks.LOAD if kind == "load" else checks.STORE
            buf.owner.remote_access(self, op, buf, p.offset, nbytes, code)
        if self.cta.record is not None:
            access = Access(self.cta.block_id, self.tid, op, kind, buf.name, p.offset, nbytes)
            self.cta.record.trace.append(access)

    def read(self, op: Operation, p: Pointer, t: Type) -> Any:
        nbytes = thread.access_bytes(t)
        self._check(op, p, nbytes, "load")
        raw = p.buffer.data[p.offset : p.offset + nbytes]
        if isinstance(t, VectorType):
            step = scalar_bytes(t.element)
            return tuple(
                decode(raw[i * step : (i + 1) * step], t.element) for i in range(t.shape[0])
            )
        return decode(raw, t)

    def write(self, op: Operation, p: Pointer, t: Type, value: Any) -> None:
        nbytes = thread.access_bytes(t)
        self._check(op, p, nbytes, "store")
        if isinstance(t, VectorType):
            raw = np.concatenate([encode(v, t.element) for v in value])
        else:
            raw = encode(value, t)
        p.buffer.data[p.offset : p.offset + nbytes] = raw

    @_handles(thread.LoadOp)
    def load(self, op: thread.LoadOp) -> None:
        self.env[op.result] = self.read(op, self.env[op.ptr], op.result.type)

    @_handles(thread.StoreOp)
    def store(self, op: thread.StoreOp) -> None:
        self.write(op, self.env[op.ptr], op.value.type, self.env[op.value])

    @_handles(thread.LoadIfOp)
    def load_if(self, op: thread.LoadIfOp) -> None:
        if self.env[op.pred]:
            self.env[op.result] = self.read(op, self.env[op.ptr], op.result.type)
        else:
            self.env[op.result] = self.env[op.default]

    @_handles(thread.StoreIfOp)
    def store_if(self, op: thread.StoreIfOp) -> None:
        if self.env[op.pred]:
            self.write(op, self.env[op.ptr], op.value.type, self.env[op.value])

    @_handles(thread.ExtractOp)
    def extract(self, op: thread.ExtractOp) -> None:
        self.env[op.result] = self.env[op.vector][op.pos.value]

    @_handles(thread.FromElementsOp)
    def from_elements(self, op: thread.FromElementsOp) -> None:
        self.env[op.result] = tuple(self.env[v] for v in op.elements)

    # ------------------------------------------------------------ cp.async
    @_handles(thread.CpAsyncOp)
    def cp_async(self, op: thread.CpAsyncOp) -> None:
        dst, src, nbytes = self.env[op.dst], self.env[op.src], op.bytes.value
        size = nbytes if op.src_size is None else self.env[op.src_size]
        if not 0 <= size <= nbytes:
            raise self.error(op, f"src-size {size} is outside 0..{nbytes}")
        data = np.zeros(nbytes, dtype=np.uint8)
        if size:
            self._check(op, src, nbytes, "load")  # the source must be aligned to cp-size
            data[:size] = src.buffer.data[src.offset : src.offset + size]
        self._check(op, dst, nbytes, "store", cp_async=True)
        dst.buffer.data[dst.offset : dst.offset + nbytes] = 0xFF  # pending: NaN until the wait
        self.uncommitted.append((dst, data))
        self.env[op.token] = None

    @_handles(thread.CpAsyncCommitOp)
    def cp_async_commit(self, op: thread.CpAsyncCommitOp) -> None:
        self.groups.append(self.uncommitted)
        self.uncommitted = []
        self.env[op.group] = None

    @_handles(thread.CpAsyncWaitOp)
    def cp_async_wait(self, op: thread.CpAsyncWaitOp) -> None:
        while len(self.groups) > op.pending.value:
            for dst, data in self.groups.pop(0):
                self.cta.land(dst.buffer, dst.offset, data)

    # ------------------------------------------------------------ mbarriers
    def _mbarrier(self, op: Operation, init: bool = False, operand: Value | None = None
                  ) -> tuple[Pointer, np.ndarray]:  # fmt: skip
        """The mbarrier `op` names (its first operand, or `operand`): its pointer and its
        8 bytes, checked (bounds and alignment; init is a store to the shadow, the others
        are atomic updates that the race check does not see, of an mbarrier whose init
        was published)."""
        p: Pointer = self.env[op.operands[0] if operand is None else operand]
        key = (id(p.buffer), p.offset)
        if init:
            self._check(op, p, 8, "store")
            self.cta.mbarriers.initialised(key, self.tid, self.linear // checks.WARP)
        else:
            saved, self.cta.check_shared = self.cta.check_shared, False
            try:
                self._check(op, p, 8, "load")
            finally:
                self.cta.check_shared = saved
            self._mbarrier_call(op, self.cta.mbarriers.check_published, key, self.tid)
        return p, p.buffer.data[p.offset : p.offset + 8]

    def _mbarrier_call(self, op: Operation, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return fn(*args)
        except MbarrierError as e:
            p: Pointer = self.env[op.operands[-1] if op.name == "thread.atom" else op.operands[0]]
            raise self.error(op, f"{e} (byte {p.offset} of {p.buffer.name})") from None

    @property
    def linear(self) -> int:
        """The thread's linear index in its CTA (x fastest)."""
        (x, y, z), (bx, by, _) = self.tid, self.cta.block
        return x + bx * (y + by * z)

    @_handles(*INIT_FENCES)
    def init_fence(self, op: Operation) -> None:
        self.cta.mbarriers.fence(self.tid)

    @_handles(thread.MbarrierInitOp)
    def mbarrier_init(self, op: thread.MbarrierInitOp) -> None:
        _, raw = self._mbarrier(op, init=True)
        self._mbarrier_call(op, self.cta.mbarriers.init, raw, self.env[op.count])

    @_handles(thread.MbarrierArriveOp)
    def mbarrier_arrive(self, op: thread.MbarrierArriveOp) -> None:
        _, raw = self._mbarrier(op)
        self._mbarrier_call(op, self.cta.mbarriers.arrive, raw)

    @_handles(thread.MbarrierExpectTxOp)
    def mbarrier_expect_tx(self, op: thread.MbarrierExpectTxOp) -> None:
        _, raw = self._mbarrier(op)
        self._mbarrier_call(op, self.cta.mbarriers.expect_tx, raw, self.env[op.tx])

    @_handles(thread.MbarrierArriveExpectTxOp)
    def mbarrier_arrive_expect_tx(self, op: thread.MbarrierArriveExpectTxOp) -> None:
        _, raw = self._mbarrier(op)
        self._mbarrier_call(op, self.cta.mbarriers.arrive_expect_tx, raw, self.env[op.tx])

    @_handles(thread.CpAsyncMbarrierArriveOp)
    def cp_async_mbarrier_arrive(self, op: thread.CpAsyncMbarrierArriveOp) -> None:
        """The thread's copies so far leave its groups (the groups stay, for counting)
        and land with the arrival, when a thread waits on the mbarrier."""
        p, raw = self._mbarrier(op)
        copies = [c for g in self.groups for c in g] + self.uncommitted
        self.groups = [[] for _ in self.groups]
        self.uncommitted = []

        def land() -> None:
            for dst, data in copies:
                self.cta.land(dst.buffer, dst.offset, data)

        key = (id(p.buffer), p.offset)
        self._mbarrier_call(op, self.cta.mbarriers.async_arrival, key, raw, land)

    def mbarrier_ready(self, op: thread.MbarrierWaitOp) -> bool:
        p, raw = self._mbarrier(op)
        parity = self.env[op.parity] & 1
        self.waiting = Waiting(op, p.buffer.name, p.offset, parity)
        key = (id(p.buffer), p.offset)
        return bool(self._mbarrier_call(op, self.cta.mbarriers.ready, key, raw, parity))

    # ------------------------------------------------------------ atoms
    @_handles(thread.AtomOp)
    def atom(self, op: thread.AtomOp) -> None:
        """A one-thread atom, by its family's rule (`_THREAD_ATOM_RULES`)."""
        rule = _THREAD_ATOM_RULES.get(op.family())
        if rule is None:
            name = op.atom.value
            raise NotImplementedError(f"the reference interpreter does not run atom {name} yet")
        rule(self, op)

    def fma(self, op: thread.AtomOp) -> None:
        a, b, c = (self.env[v] for v in op.args)
        t = op.outs[0].type
        if isinstance(t, FloatType):
            # Fused: the exact a*b + c, rounded once to f64 and then to the type.
            exact = Fraction(a) * Fraction(b) + Fraction(c)
            self.env[op.outs[0]] = round_float(float(exact), t)
        else:
            self.env[op.outs[0]] = int_value(a * b + c, t)  # mad.lo: the low bits

    def universal_copy(self, op: thread.AtomOp) -> None:
        """``ld``/``st`` (the role's) of the atom's registers, consecutive in memory from
        the address."""
        load = op.role.value.startswith("ld.")
        p: Pointer = self.env[op.args[0]]
        registers = op.outs if load else op.args[1:]
        nbytes = sum(scalar_bytes(r.type) for r in registers)
        self._check(op, p, nbytes, "load" if load else "store")
        offset = p.offset
        for r in registers:
            step = scalar_bytes(r.type)
            raw = p.buffer.data[offset : offset + step]
            if load:
                self.env[r] = decode(raw, r.type)
            else:
                raw[:] = encode(self.env[r], r.type)
            offset += step


# The interpreter's rule for each one-thread atom family (the atom's family picks it,
# never its name); warp-collective families run in `cutec.cpu.collective`.
_THREAD_ATOM_RULES: dict[Family | None, Callable[[_Thread, thread.AtomOp], None]] = {
    Family.UNIVERSAL_FMA: _Thread.fma,
    Family.UNIVERSAL_COPY: _Thread.universal_copy,
    Family.TMA_LOAD: _Thread.tma_load,
    Family.TMA_STORE: _Thread.tma_store,
}
