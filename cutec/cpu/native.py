"""Compile a kernel's warp function with llvmlite and run a grid of CTAs on the host.

`run_kernel(kernel, grid, args, block=..., bounds_check=True, check_shared=True)`
takes what the reference interpreter takes (`cutec.cpu.reference.run_kernel`):
numpy arrays for pointer arguments (updated in place) and Python numbers. Each
CTA gets fresh shared memory filled with 0xFF bytes (NaN as floats), as the
reference; its warps run one after another up to the next barrier (each warp
function call runs to a barrier or the end), until all are done (else a
deadlock report). The CTAs of a cluster run together, clusters one after another
(`cutec.cpu.cluster.run_cluster`: each CTA rank is a `_Cta`). A check that fails
becomes the reference's `AccessError` / `InterpreterError` with the reference's
text, naming the op's location, the thread and the block.
"""

from __future__ import annotations

import ctypes
import hashlib
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import llvmlite.binding as llvm
import numpy as np

from cutec.cpu import checks, elf, wgmma
from cutec.cpu.cluster import cluster_barrier, cluster_blocks, cluster_dim, run_cluster
from cutec.cpu.codegen import WarpProgram, generate
from cutec.cpu.lanes import (
    ERR_ATOMIC,
    ERR_BARRIER,
    ERR_COLLECTIVE,
    ERR_DESC,
    ERR_DIVIDE,
    ERR_HOOK,
    ERR_LOAD,
    ERR_MAPA,
    ERR_REMOTE,
    ERR_SHARED,
    ERR_SRC_SIZE,
    ERR_STORE,
    INFO_EPOCH,
    INFO_HOOK,
    INFO_SHADOW,
    INFO_START,
    INFO_WARP_HOOK,
    LANES,
    Unsupported,
)
from cutec.cpu.mbarrier import Waiting
from cutec.cpu.native_async import AsyncCopies
from cutec.cpu.native_collective import WarpOps
from cutec.cpu.native_mbarrier import NativeMbarriers
from cutec.cpu.native_tma import NativeTma
from cutec.cpu.native_wgmma import NativeWgmma
from cutec.cpu.reference import bind_arguments, bind_maps, block_dim, dim3
from cutec.cpu.reference_memory import AccessError, Dim3, InterpreterError
from cutec.cpu.warp_barriers import WARP_BARRIER_OPS, BarrierError, ClusterBarrier, WarpBarriers
from cutec.ir.attributes import IntegerAttr
from cutec.ir.core import Operation
from cutec.ir.dialects import builtin, thread
from cutec.ir.dialects.gpu import PointerType
from cutec.ir.dialects.thread_tma import tensor_map_names
from cutec.ir.types import FloatType, IndexType, IntegerType, Type

__all__ = ["NativeKernel", "ObjectCache", "Unsupported", "compile_kernel", "run_kernel"]

_WARP_FN = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                            ctypes.c_void_p)  # fmt: skip
_LOCK = threading.RLock()
_INITIALIZED = False


def _target_machine(opt: int = 0) -> Any:
    """A new target machine for the host: an execution engine owns (and frees) its own."""
    global _INITIALIZED
    with _LOCK:
        if not _INITIALIZED:
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            _INITIALIZED = True
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(),
        opt=opt, jit=True,
    )  # fmt: skip


_SHADOW: list[Any] = []  # [engine, address] of the compiled shadow check


def shadow_check_address() -> int:
    """The host address of ``@shadow_check`` (cutec.cpu.checks), compiled once per process
    at -O2: it loops over lanes and bytes, which -O0 code would run several times slower."""
    with _LOCK:
        if not _SHADOW:
            module = llvm.parse_assembly(checks.SHADOW_CHECK_LLVM)
            module.verify()
            engine = llvm.create_mcjit_compiler(module, _target_machine(opt=2))
            engine.finalize_object()
            _SHADOW[:] = [engine, engine.get_function_address("shadow_check")]
        return int(_SHADOW[1])


@dataclass
class NativeKernel:
    """One kernel compiled to a warp function (keep it alive while `fn` is used)."""

    kernel: builtin.KernelOp
    program: WarpProgram
    engine: Any
    fn: Any


class ObjectCache(Protocol):
    """Where compiled warp code is kept between processes (cutec.runtime's disk cache):
    object code by the key `compile_kernel` computes. What `load` returns is data from
    disk: `compile_kernel` hands LLVM only an object `elf.problem` finds nothing wrong
    with (LLVM aborts the process on a malformed one), and compiles otherwise."""

    def load(self, key: str) -> bytes | None: ...

    def store(self, key: str, code: bytes) -> None: ...


def _host_arch() -> str:
    """The host's architecture as LLVM names it (x86_64, aarch64 ...)."""
    return str(llvm.get_process_triple()).split("-")[0]


def object_key(text: str) -> str:
    """The key of the object code of LLVM text `text` for this host: the text, LLVM's
    version, the host CPU and its features (the code is compiled for them)."""
    host = f"{llvm.llvm_version_info}|{llvm.get_host_cpu_name()}|{llvm.get_host_cpu_features()}"
    return hashlib.sha256(f"{host}|O0\n{text}".encode()).hexdigest()


def compile_kernel(
    kernel: builtin.KernelOp,
    bounds_check: bool = True,
    check_shared: bool = True,
    objects: ObjectCache | None = None,
) -> NativeKernel:
    """The kernel's warp function, compiled; raises `Unsupported` for what it cannot run.
    `bounds_check` and `check_shared` (races, uninitialised shared loads, pending
    cp.async bytes) add their checks to the code; off, they cost nothing. With
    `objects`, object code compiled before for the same LLVM text is loaded instead
    of compiled (the text is still generated: it also gives the program's tables)."""
    program = generate(kernel, bounds_check, check_shared)
    tm = _target_machine()
    module = llvm.parse_assembly(program.text)
    module.verify()
    # No IR passes and instruction selection at -O0: the warp code is already lean
    # (results in registers between branches), and sgemm_2 runs in about 10 ms at
    # any level while compiling takes 0.5 s at -O0 and 2 s at -O2 (docs/cpu-backend.md).
    engine = llvm.create_mcjit_compiler(module, tm)
    if objects is not None:
        key = object_key(program.text)
        found = objects.load(key)
        if found is not None and elf.problem(found, _host_arch()) is not None:
            found = None  # compiled again, and stored over it

        def compiled(_: Any, code: bytes) -> None:
            if elf.problem(code, _host_arch()) is None:  # else it could not be loaded back
                objects.store(key, code)

        # MCJIT asks for the module's object first and compiles only without one.
        engine.set_object_cache(compiled, lambda _: found)
    engine.finalize_object()
    fn = _WARP_FN(engine.get_function_address("warp"))
    return NativeKernel(kernel, program, engine, fn)


# Compiled kernels by kernel op (the op kept alive with its entry, so its id is not reused).
_CACHE: dict[tuple[int, bool, bool], NativeKernel] = {}


def cached(
    kernel: builtin.KernelOp, bounds_check: bool = True, check_shared: bool = True
) -> NativeKernel:
    key = (id(kernel), bounds_check, check_shared)
    found = _CACHE.get(key)
    if found is None or found.kernel is not kernel:
        found = _CACHE[key] = compile_kernel(kernel, bounds_check, check_shared)
    return found


def _lanes(value: Any, t: Type) -> np.ndarray:
    """A scalar argument as the 32 lanes of its frame slot."""
    if isinstance(t, FloatType) and t.kind == "bf16":  # the high half of the f32 bits
        return np.full(LANES, np.float32(value).view(np.uint32) >> 16, dtype=np.uint16)
    if isinstance(t, FloatType):
        host = {"f16": np.float16, "f32": np.float32, "tf32": np.float32}
        return np.full(LANES, value, dtype=host.get(t.kind, np.float64))
    if isinstance(t, IntegerType | IndexType):
        width = 64 if isinstance(t, IndexType) else t.width
        dtype = {1: np.bool_, 8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}[width]
        return np.full(LANES, value, dtype=dtype)
    raise Unsupported(f"an argument of type {t}")


def _aligned_zeros(nbytes: int) -> np.ndarray:
    raw = np.zeros(nbytes + 64, dtype=np.uint8)
    start = -raw.ctypes.data % 64
    return raw[start : start + nbytes]


def run_kernel(
    kernel: builtin.KernelOp,
    grid: Sequence[int] | int,
    args: Sequence[Any] | Mapping[str, Any],
    *,
    block: Sequence[int] | int | None = None,
    bounds_check: bool = True,
    check_shared: bool = True,
    native: NativeKernel | None = None,
) -> None:
    """Run `kernel` on `grid` CTAs natively (see the module docstring); `native`, a
    compiled kernel, overrides `bounds_check` and `check_shared` with its own."""
    nk = native or cached(kernel, bounds_check, check_shared)
    prog = nk.program
    params = kernel.body.args
    bound_args = bind_arguments(kernel, args)
    maps = bind_maps(kernel, args, bound_args)
    grid3, block3 = dim3(grid), block_dim(kernel, block)
    clusters = cluster_blocks(grid3, cluster_dim(kernel))

    names: list[str] = []
    arrays: list[np.ndarray] = []
    frame0 = _aligned_zeros(prog.frame_bytes)
    for i, (bound, p) in enumerate(zip(bound_args, params, strict=True)):
        slots = prog.param_slots[i]
        if isinstance(p.type, PointerType):
            names.append(bound.buffer.name)
            arrays.append(bound.buffer.data)
            lanes = np.full(LANES, len(arrays) - 1 << 48, dtype=np.int64)
        else:
            lanes = _lanes(bound, p.type)
        raw = lanes.view(np.uint8)
        frame0[slots[0] : slots[0] + raw.size] = raw
    kernel_maps = [maps[name] for name in tensor_map_names(kernel)]
    ctas: list[_Cta] = []
    barrier = cluster_barrier(ctas)
    epoch = 1  # barrier intervals, numbered across CTAs (cutec.cpu.checks)
    for blocks in clusters:
        if not ctas:  # one CTA per rank of the cluster, each run by that rank's CTAs
            ctas += [_Cta(kernel, nk, arrays, names, frame0, block3, grid3, barrier, rank,
                          kernel_maps) for rank in range(len(blocks))]  # fmt: skip
            for cta in ctas:
                cta.link(ctas)
        for cta, block_id in zip(ctas, blocks, strict=True):
            cta.begin(block_id, epoch)
        run_cluster(ctas, ctas[0].nthreads)
        epoch = max(cta.epoch for cta in ctas) + 1


class _Cta:
    """One CTA rank of a cluster, run by every cluster's CTA of that rank in turn: its
    shared memory (filled with 0xFF bytes for each CTA), its warps' frames and infos, its
    asynchronous copies, mbarriers, wgmma state and named barriers, and its part in the
    cluster's barrier. `cutec.cpu.cluster.run_cluster` drives it."""

    def __init__(self, kernel: builtin.KernelOp, nk: NativeKernel, arrays: list[np.ndarray],
                 arg_names: list[str], frame0: np.ndarray, block3: Dim3, grid3: Dim3,
                 barrier: ClusterBarrier, rank: int, maps: list[Any]) -> None:  # fmt: skip
        prog = self.prog = nk.program
        self.fn, self.frame0, self.block3 = nk.fn, frame0, block3
        self.nthreads = nthreads = block3[0] * block3[1] * block3[2]
        self.nwarps = nwarps = -(-nthreads // LANES)
        self.shared = shared = [np.empty(nbytes, np.uint8) for _, nbytes in prog.shared]
        names = [*arg_names, *(f"shared@{op.location or op.parsed_at}" for op, _ in prog.shared)]
        attr = kernel.attributes.get("dynamic_smem")
        self.dynamic = dynamic = np.empty(attr.value if isinstance(attr, IntegerAttr) else 0,
                                          np.uint8)  # fmt: skip
        names.append("dynamic_shared")
        self.names = names
        self.buffers = buffers = [*arrays, *shared, dynamic]
        remote = prog.remote_ranks * (len(shared) + 1)  # filled by `link`
        self.table = table = np.zeros((len(buffers) + remote, 4), dtype=np.int64)
        shadows: dict[int, checks.SharedShadow] = {}
        for k, b in enumerate(buffers):
            table[k, :2] = (b.ctypes.data if b.size else 0, b.size)
            if k >= len(arrays) and prog.check_shared:
                shadows[k] = checks.SharedShadow(b.size, prog.shadow_unit)
                table[k, 2] = shadows[k].words.ctypes.data if b.size else 0
        self.copies = copies = AsyncCopies(buffers, shadows)
        self.shadows = shadows
        # With thread.mapa, per shared buffer the record other CTAs check their accesses
        # with (codegen_ops._remote_check): its shadow and the CTA's interval `since`.
        self.records = [np.zeros(2, np.int64) for _ in (*shared, dynamic)
                        if prog.remote_ranks]  # fmt: skip
        for k, record in enumerate(self.records):
            record[0] = table[len(arrays) + k, 2]

        self.frames = frames = [_aligned_zeros(prog.frame_bytes) for _ in range(nwarps)]
        self.states = [f[:4].view(np.int32) for f in frames]  # each warp's resume state
        self.infos = infos = np.zeros((nwarps, 16), dtype=np.int64)
        infos[:, 3:6] = block3
        infos[:, 6:9] = grid3
        infos[:, 9] = np.arange(nwarps)
        infos[:, INFO_HOOK] = copies.address
        self.mbarriers = mbarriers = NativeMbarriers(buffers, names, copies, infos)
        self.wg = wg = None
        if prog.web_slots is not None:
            first = len(arrays)  # the window's buffers: the shared ones, in `bufs` order
            window = wgmma.SharedWindow(wgmma.shared_window(kernel),
                                        lambda i: buffers[first + i],
                                        lambda i: names[first + i],
                                        lambda i: shadows.get(first + i))  # fmt: skip
            self.wg = wg = NativeWgmma(wgmma.AccumulatorWebs(kernel), window, prog.web_slots,
                                       frames, nthreads, block3, mbarriers)  # fmt: skip
        self.loads = loads = NativeTma(maps, buffers, names, len(arrays), shadows, mbarriers,
                                       wg)  # fmt: skip
        self.warp_ops = warp_ops = WarpOps(prog.ops, mbarriers, wg, loads)
        if prog.uses_warp_hook:
            infos[:, INFO_WARP_HOOK] = warp_ops.address
        if prog.check_shared:
            infos[:, INFO_SHADOW] = shadow_check_address()
        self.err = np.zeros(16, dtype=np.int64)
        self.warp_barriers = WarpBarriers(barrier, rank, self.barrier_completed)
        self.p_table, self.p_err = table.ctypes.data, self.err.ctypes.data
        self.p_frames = [f.ctypes.data for f in frames]
        self.p_infos = [infos[w].ctypes.data for w in range(nwarps)]
        self.block_id: Dim3 = (0, 0, 0)
        self.seen_by: list[tuple[np.ndarray, int, int]] = []  # (table, row, size): `link`
        self.owners: list[tuple[_Cta, int]] = []  # per row past its own: (CTA, its row)
        self.at: list[Operation | Waiting | None] = []  # where each warp stopped
        self.todo: list[int] = []  # the warps to call on the next pass

    def link(self, ctas: list[_Cta]) -> None:
        """With thread.mapa, the shared buffers of each CTA rank of the cluster follow this
        CTA's own in `bufs` (cutec.cpu.codegen's order), with no shadow to check but, in
        the fourth word, the owner's record of that buffer (its shadow and the interval
        since its last cluster barrier), which remote accesses are checked against
        (codegen_ops._remote_check). The owner zeroes their sizes when it exits (`_exit`)."""
        if not self.prog.remote_ranks:
            return
        first = len(self.buffers) - len(self.shared) - 1  # this CTA's shared buffers
        names = self.names[first:]  # (each rank's buffer of one alloc op has its name)
        for rank, cta in enumerate(ctas):
            for k, (local, name) in enumerate(zip((*cta.shared, cta.dynamic), names,
                                                  strict=True)):  # fmt: skip
                row = len(self.buffers)
                base = local.ctypes.data if local.size else 0
                record = cta.records[k]
                self.table[row] = (base, local.size, 0, record.ctypes.data if record[0] else 0)
                cta.seen_by.append((self.table, row, local.size))
                self.owners.append((cta, first + k))
                self.buffers.append(local)
                self.names.append(checks.remote_name(name, rank))

    def _exit(self) -> None:
        """Every warp finished: the other CTAs of the cluster reach none of its shared
        memory any more (a size of 0; `_remote_error` says why)."""
        for table, row, _ in self.seen_by:
            table[row, 1] = 0

    def _remote_error(self, w: int) -> AccessError | None:
        """The report of a failed load or store of an exited CTA's shared memory, or of
        a race with its threads (``ERR_REMOTE``: `checks.remote_conflict`)."""
        kind, buf = int(self.err[4]), int(self.err[2])
        tid = _tid(w * LANES + int(self.err[1]), self.block3)
        op = self.prog.ops[int(self.err[0])]
        if kind == ERR_REMOTE:
            owner, row = self.owners[buf - (len(self.buffers) - len(self.owners))]
            byte, access = int(self.err[3]), int(self.err[5])
            shadow = owner.shadows[row]
            w_word, r_word = (int(x) for x in shadow.words[byte // shadow.unit])
            since = int(owner.records[0][1])  # (each record of a CTA holds its `since`)
            found = checks.remote_conflict(w_word, r_word, access, since)
            assert found is not None, "the warp code and checks.remote_conflict disagree"
            message = checks.remote_race_message(
                found[0], access, byte, self.names[buf], found[1], owner.block3, owner.block_id
            )
            return AccessError(message, op, tid, self.block_id)
        if kind not in (ERR_LOAD, ERR_STORE) or not 0 <= buf < len(self.buffers):
            return None
        if self.table[buf, 1] or not self.buffers[buf].size:
            return None
        what = "load" if kind == ERR_LOAD else "store"
        return AccessError(checks.exited_message(what, self.names[buf]), op, tid, self.block_id)

    @property
    def epoch(self) -> int:
        return int(self.infos[0, INFO_EPOCH])

    def begin(self, block_id: Dim3, epoch: int) -> None:
        """Start CTA `block_id`, its first barrier interval `epoch`."""
        prog, infos = self.prog, self.infos
        self.block_id = block_id
        for s in (*self.shared, self.dynamic):
            s.fill(0xFF)
        for table, row, size in self.seen_by:  # (`_exit` zeroed them)
            table[row, 1] = size
        for record in self.records:
            record[1] = epoch
        infos[:, 0:3] = block_id
        infos[:, INFO_START] = epoch
        infos[:, INFO_EPOCH] = epoch
        if prog.uses_async:
            self.copies.reset(self.nwarps)
        self.mbarriers.reset()
        self.loads.reset()
        self.warp_barriers.reset()
        if self.wg is not None:
            self.wg.reset(block_id, epoch)
        for f in self.frames:
            f[: prog.frame_bytes] = self.frame0  # state 0 and the arguments
        self.at = [None] * self.nwarps
        self.todo = list(range(self.nwarps))
        self.started = False  # (before, `at` says None for warps not yet run)

    def barrier_completed(self, warps: set[int]) -> None:
        """A named or cluster barrier completed (cutec.cpu.warp_barriers): a new interval
        of the race check, and the fenced mbarrier inits of its warps are published."""
        self.infos[:, INFO_EPOCH] += 1
        self.mbarriers.state.barrier(warps)

    def cluster_completed(self, warps: set[int]) -> None:
        """The cluster barrier completed: as `barrier_completed`, and the intervals from
        now on are after it (`checks.remote_conflict`)."""
        self.barrier_completed(warps)
        for record in self.records:
            record[1] = self.epoch

    def live_warps(self) -> set[int]:
        if not self.started:
            return set(range(self.nwarps))
        return {w for w, op in enumerate(self.at) if op is not None}

    def stopped(self) -> list[Operation | Waiting | None]:
        return self.at

    def advance(self) -> bool:
        """Each warp runs to a barrier (1), an mbarrier wait that is not satisfied (3), a
        named or cluster barrier (4) or its end (0). Warps at a wait, and those a named
        or cluster barrier lets go on, run again while any warp made progress; whether
        any did."""
        prog, at, err, mbarriers = self.prog, self.at, self.err, self.mbarriers
        fn, p_frames, p_table, p_infos, p_err = (self.fn, self.p_frames, self.p_table,
                                                 self.p_infos, self.p_err)  # fmt: skip
        states = self.states
        progressed = False
        while True:
            events, moved = mbarriers.state.events, False
            for w in self.todo:
                rc = fn(p_frames[w], p_table, p_infos[w], p_err)
                if rc == 2:
                    if err[4] == ERR_HOOK:
                        raise self.copies.error or self.warp_ops.error  # type: ignore[misc]
                    raise self._remote_error(w) or _error(
                        prog, err, w, self.block_id, self.block3, self.names, self.buffers,
                        self.nthreads, self.loads)  # fmt: skip
                state = int(states[w][0])
                at[w] = (None if rc == 0 else mbarriers.waiting[w] if rc == 3
                         else prog.barriers[state - 1])  # fmt: skip
                moved = moved or rc != 3
            self.started = True
            if self.seen_by and all(a is None for a in at):
                self._exit()
            go = self._released()
            blocked = [w for w in range(self.nwarps) if isinstance(at[w], Waiting)]
            progress = bool(moved or go or mbarriers.state.events != events)
            progressed = progressed or progress
            if (blocked or go) and progress:
                self.todo = sorted(go + blocked)
                continue
            self.todo = []  # until a barrier lets a warp go on (stepped each pass)
            return progressed

    def _released(self) -> list[int]:
        """The warps at a named or cluster barrier that may go on now (each warp's arrival
        is counted at its first step; `cutec.cpu.warp_barriers`)."""
        go = []
        for w, op in enumerate(self.at):
            if isinstance(op, Operation) and type(op) in WARP_BARRIER_OPS:
                try:
                    if self.warp_barriers.step(op, w):
                        go.append(w)
                except BarrierError as e:
                    tid = _tid(w * LANES, self.block3)
                    raise AccessError(str(e), op, tid, self.block_id) from None
        return go

    def close_interval(self) -> None:
        if self.err[12]:  # no race this interval: the uninitialised load is wrong
            raise _uninit(self.prog, self.err, self.block_id, self.block3, self.names)
        self.infos[:, INFO_EPOCH] += 1
        if self.wg is not None:
            self.wg.converged()

    def next_round(self) -> None:
        self.mbarriers.state.barrier()  # every warp passed it: inits are published
        self.todo = list(range(self.nwarps))

    def finish(self) -> None:
        pass  # (TMA stores, the only work a CTA leaves in flight, run in the interpreter)


def _where(op: Any) -> str:
    loc = op.location or op.parsed_at
    return f"{loc}: " if loc is not None else ""


_tid = checks.tid3


def _uninit(prog: WarpProgram, err: np.ndarray, block_id: Dim3, block: Dim3, names: list[str]
            ) -> AccessError:  # fmt: skip
    """The first load of an unwritten shared byte (err[12..15]: op + 1, thread, buffer,
    byte)."""
    op_plus, linear, buf, byte = (int(x) for x in err[12:16])
    op = prog.ops[op_plus - 1]
    message = checks.shared_message(checks.UNINIT, checks.LOAD, byte, names[buf], 0, block)
    return AccessError(message, op, _tid(linear, block), block_id)


def _error(prog: WarpProgram, err: np.ndarray, warp: int, block_id: Dim3, block: Dim3,
           names: list[str], buffers: list[np.ndarray], nthreads: int, loads: NativeTma
           ) -> Exception:  # fmt: skip
    index, lane, buf, off, kind, nbytes = (int(x) for x in err[:6])
    op = prog.ops[index]
    tid = _tid(warp * LANES + lane, block)
    if kind == ERR_BARRIER:
        return checks.divergent_barrier(op, tid, block_id)
    if kind == ERR_COLLECTIVE:
        if warp * LANES + lane >= nthreads:
            name = op.atom.value if isinstance(op, thread.AtomOp) else op.name
            return checks.short_warp(op, name, nthreads - warp * LANES)
        return checks.divergent_collective(op, tid, block_id)
    if kind == ERR_SHARED:
        code, other, access = (int(x) for x in err[6:9])
        message = loads.message(code, access, off, buf, other, warp)  # a TMA load's words
        return AccessError(message, op, tid, block_id)
    if kind == ERR_DESC:
        if buf < prog.num_pointer_args:  # err[2]: the lane's buffer; err[3]: its window address
            return AccessError(wgmma.not_shared_error(names[buf]), op, tid, block_id)
        return AccessError(wgmma.descriptor_error(off), op, tid, block_id)
    if kind == ERR_MAPA:  # err[2]: the rank, err[5]: the cluster's CTAs
        return AccessError(checks.mapa_rank_message(buf, nbytes), op, tid, block_id)
    if kind == ERR_SRC_SIZE:
        return AccessError(f"src-size {off} is outside 0..{nbytes}", op, tid, block_id)
    if kind == ERR_DIVIDE:
        return InterpreterError(f"{_where(op)}{op.name}: division by zero in thread {tid} of "
                                f"block {block_id}")  # fmt: skip
    what = "load" if kind == ERR_LOAD else "atomic" if kind == ERR_ATOMIC else "store"
    if not 0 <= buf < len(buffers):
        return AccessError(f"{what} through a pointer into no buffer", op, tid, block_id)
    size = buffers[buf].size
    if off < 0 or off + nbytes > size:
        message = (f"out-of-bounds {what} of {nbytes} bytes at byte offset {off} of "
                   f"{names[buf]} ({size} bytes)")  # fmt: skip
    else:
        message = f"misaligned {what} of {nbytes} bytes at byte offset {off} of {names[buf]}"
    return AccessError(message, op, tid, block_id)
