"""Thread IR -> LLVM IR text: one function that runs one warp of a kernel.

    i32 @warp(ptr %frame, ptr %bufs, ptr %info, ptr %err)

* **Lanes.** Each SSA value is a `<32 x T>` per warp (cutec/cpu/lanes.py); ops
  run on all 32 lanes, and an execution mask (`<32 x i1>`) says which lanes are
  live. Memory ops, checks and loop-carried values honour the mask; pure ops
  compute garbage in dead lanes, which nothing live reads.
* **Structured control flow under masks.** `scf.if` runs its then-region under
  ``mask & cond`` and its else-region under ``mask & !cond``, each only if some
  lane is live, and merges results with a select. `scf.for` / `scf.while` loop
  until no lane is live; a lane's carried values stop changing when it leaves.
* **The frame.** Every value lives in a slot of the warp's frame (a `noalias`
  byte array): an op loads its operands and stores its result. So a barrier
  needs no saving: ``gpu.barrier`` stores its state number in the frame's first
  word and returns 1; on the next call the entry `switch` jumps to the code
  after it. LLVM forwards stored values to later loads, so the slots cost
  little more than the stores.
* **Buffers.** ``bufs`` holds (base address, size) per buffer: the pointer
  arguments, then one per `thread.alloc_shared`, then the dynamic shared
  memory, each with its shadow words (`cutec.cpu.checks`; 0 for global
  memory); with ``thread.mapa``, then the shared buffers (alloc_shared ones, then
  the dynamic one) of each CTA of the cluster, rank 0 first, with no shadow words
  but their owner's record (``codegen_ops._remote_check``). ``info``
  holds block id, block dim, grid dim (i64 x 3 each), the warp's index, the
  barrier interval, the CTA's first interval and the cp.async hook
  (`cutec.cpu.native_async`). A failed check writes (op number, lane,
  buffer, offset, kind, bytes, shadow code, other thread) to ``err`` and
  returns 2; finishing returns 0.
* **Checks.** With ``bounds_check`` every access is checked for bounds and
  alignment; with ``check_shared`` every shared access also calls
  ``@shadow_check`` (races, uninitialised loads, pending cp.async bytes;
  compiled apart, at -O2, its address in ``info``). Off, they generate no code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from cutec.atoms.copy_record import CopyAtom
from cutec.atoms.emulate import copy_tables
from cutec.atoms.family import Family
from cutec.atoms.mma_record import MmaAtom
from cutec.cpu import wgmma
from cutec.cpu.cluster import cluster_size
from cutec.cpu.codegen_async import ASYNC_HANDLERS
from cutec.cpu.codegen_atomic import ATOMIC_HANDLERS
from cutec.cpu.codegen_collective import collective_atom, elect_one, is_collective, scratch_rows
from cutec.cpu.codegen_control import CONTROL_HANDLERS
from cutec.cpu.codegen_mbarrier import MBARRIER_HANDLERS, ROWS
from cutec.cpu.codegen_ops import OP_HANDLERS
from cutec.cpu.codegen_tma import TMA_ATOM_CODE, TMA_HANDLERS, tma_rows
from cutec.cpu.codegen_wgmma import WGMMA_HANDLERS, access, assign_web_slots
from cutec.cpu.lanes import (
    LANES,
    Loc,
    Unsupported,
    components,
    lane_ids,
    scalar_type,
    slot_bytes,
    vec,
)
from cutec.ir.core import Block, Operation, Value
from cutec.ir.dialects import builtin, gpu, scf, thread
from cutec.ir.traits import AddressSpace

FRAME_HEADER = 64  # bytes before the first slot: the state number


@dataclass
class WarpProgram:
    """The LLVM text of a kernel's warp function and what running it needs."""

    text: str
    frame_bytes: int
    ops: list[Operation]  # op number (in err) -> op
    barriers: list[Operation]  # state number - 1 -> the barrier or mbarrier wait op
    param_slots: list[list[int]]  # kernel argument -> frame offsets of its components
    shared: list[tuple[Operation, int]]  # one buffer per alloc_shared op: (op, bytes)
    num_pointer_args: int
    uses_dynamic_shared: bool
    uses_async: bool  # calls the cp.async hook
    uses_warp_hook: bool  # calls the warp-op hook (mma.sync, mbarriers, TMA: native_collective)
    check_shared: bool  # checks shared accesses against the buffers' shadows
    shadow_unit: int  # bytes per shadow entry: every shared access covers whole entries
    # per accumulator web, its (slot, LLVM type) components (codegen_wgmma); None: no wgmma
    web_slots: list[list[tuple[int, str]]] | None = None
    remote_ranks: int = 0  # with thread.mapa, the cluster's CTAs (whose buffers follow)


@dataclass
class _State:
    lines: list[str] = field(default_factory=list)
    cache: dict[int, str] = field(default_factory=dict)  # slot -> register, this block


class _Gen:
    def __init__(self, kernel: builtin.KernelOp, bounds_check: bool, check_shared: bool) -> None:
        self.kernel = kernel
        self.bounds_check = bounds_check
        self.check_shared = check_shared
        self.uses_async = any(True for _ in kernel.walk_type(thread.CpAsyncOp))
        collectives = [op for op in kernel.walk_type(thread.AtomOp) if is_collective(op)]
        self.collective_rows = max((scratch_rows(op) for op in collectives), default=0)
        self.full_masks: set[str] = set()  # mask registers checked to be full (collectives)
        self.uses_warp_hook = any(isinstance(op.library_atom(), MmaAtom) for op in collectives)
        if any(op.name in MBARRIER_HANDLERS for op in kernel.walk()):
            self.collective_rows = max(self.collective_rows, ROWS)
            self.uses_warp_hook = True
        rows = tma_rows(kernel)
        if rows:  # TMA loads call the hook (codegen_tma)
            self.collective_rows = max(self.collective_rows, rows)
            self.uses_warp_hook = True
        self.shadow_shift = _shadow_shift(kernel)
        self.st = _State()
        self.decls: set[str] = set()
        self.locs: dict[tuple[Value, int], Loc] = {}
        self.frame = FRAME_HEADER
        self.tmp = 0
        self.labels = 0
        self.ops: list[Operation] = []
        self.barriers: list[Operation] = []
        self.shared: list[tuple[Operation, int]] = []
        self.shared_ids: dict[Operation, int] = {}
        params = kernel.body.args
        self.num_ptr = sum(isinstance(a.type, gpu.PointerType) for a in params)
        self.uses_dynamic = any(True for _ in kernel.walk_type(thread.DynamicSharedOp))
        for op in kernel.walk_type(thread.AllocSharedOp):
            self.shared_ids[op] = self.num_ptr + len(self.shared)
            self.shared.append((op, op.bytes.value))
        self.dynamic_id = self.num_ptr + len(self.shared)
        self.num_bufs = self.dynamic_id + 1
        # With thread.mapa, the shared buffers of each CTA of the cluster, rank by rank,
        # follow (`remote_buffer_ids`): a shared::cluster pointer names one of them.
        self.num_local_bufs = self.num_bufs
        if any(True for _ in kernel.walk_type(thread.MapaOp)):
            self.num_bufs += cluster_size(kernel) * (self.num_bufs - self.num_ptr)
        # Lazy stores: a result's slot is written only if a use is still to be generated
        # when control leaves the straight-line code (a temporary used only nearby
        # stays in a register). slot -> (type, register); slot -> the values it holds.
        self.dirty: dict[int, tuple[str, str]] = {}
        self.slot_values: dict[int, list[Value]] = {}
        self.done: set[Operation] = set()
        # Pointer values whose buffer is known at compile time -> its buffer id.
        self.roots: dict[Value, int] = {}
        ptr_args = [a for a in kernel.body.args if isinstance(a.type, gpu.PointerType)]
        self.roots.update({a: k for k, a in enumerate(ptr_args)})
        self.mask = self.new_slot("i1")  # the current execution mask's slot
        self.full_mask = self.mask
        # wgmma: accumulator webs share slots; ops that access them call the hook.
        self.web_slots: list[list[tuple[int, str]]] | None = None
        self.web_ops: set[Operation] = set()
        self.window = wgmma.shared_window(kernel)
        if wgmma.uses_wgmma(kernel):
            webs = wgmma.AccumulatorWebs(kernel)
            self.web_slots = assign_web_slots(self, webs)
            self.web_ops = {*webs.accesses, *webs.writes}
            self.collective_rows = max(self.collective_rows, 1)
            self.uses_warp_hook = True

    # ------------------------------------------------------------------ emission
    def emit(self, line: str) -> None:
        self.st.lines.append("  " + line)

    def reg(self) -> str:
        self.tmp += 1
        return f"%t{self.tmp}"

    def op(self, text: str) -> str:
        r = self.reg()
        self.emit(f"{r} = {text}")
        return r

    def label(self, name: str, keep_cache: bool = False) -> None:
        assert keep_cache or not self.dirty, "flush before leaving straight-line code"
        self.st.lines.append(f"{name}:")
        if not keep_cache:
            self.st.cache = {}

    def flush(self) -> None:
        """Store the pending results that an op not yet generated still reads."""
        for off, (ty, value) in self.dirty.items():
            needed = any(
                use.owner not in self.done for v in self.slot_values[off] for use in v.uses
            )
            if needed:
                p = self.op(f"getelementptr i8, ptr %frame, i64 {off}")
                self.emit(f"store {vec(ty)} {value}, ptr {p}, align 64")
        self.dirty = {}

    def branch(self, text: str) -> None:
        """A branch out of straight-line code (pending results stored first)."""
        self.flush()
        self.emit(text)

    def fresh(self, stem: str) -> str:
        self.labels += 1
        return f"{stem}{self.labels}"

    def declare(self, text: str) -> None:
        self.decls.add(f"declare {text}")

    # ------------------------------------------------------------------ values
    def new_slot(self, ty: str) -> int:
        off = self.frame
        self.frame += slot_bytes(ty)
        return off

    def load_slot(self, off: int, ty: str) -> str:
        found = self.st.cache.get(off)
        if found is not None:
            return found
        p = self.op(f"getelementptr i8, ptr %frame, i64 {off}")
        r = self.op(f"load {vec(ty)}, ptr {p}, align 64")
        self.st.cache[off] = r
        return r

    def store_slot(self, off: int, ty: str, value: str) -> None:
        p = self.op(f"getelementptr i8, ptr %frame, i64 {off}")
        self.emit(f"store {vec(ty)} {value}, ptr {p}, align 64")
        self.st.cache[off] = value

    def loc(self, v: Value, i: int = 0) -> Loc:
        found = self.locs.get((v, i))
        if found is None:
            raise Unsupported(f"a value of {v.type} defined where the backend cannot see it")
        return found

    def get(self, v: Value, i: int = 0) -> str:
        loc = self.loc(v, i)
        if loc.const is not None:
            return loc.const
        assert loc.slot is not None
        return self.load_slot(loc.slot, loc.ty)

    def ty(self, v: Value) -> str:
        return scalar_type(components(v.type)[0])

    def define(self, v: Value, i: int, value: str) -> None:
        """Store `value` as component `i` of `v` (a new slot on first definition)."""
        ty = self.ty(v)
        loc = self.locs.get((v, i))
        if loc is None or loc.slot is None:  # a fresh result: stored lazily
            loc = self.locs[(v, i)] = Loc(self.new_slot(ty), None, ty)
            assert loc.slot is not None
            self.slot_values[loc.slot] = [v]
            self.dirty[loc.slot] = (ty, value)
            self.st.cache[loc.slot] = value
            return
        assert loc.slot is not None
        self.store_slot(loc.slot, ty, value)

    def alias(self, v: Value, i: int, src: Loc) -> None:
        self.locs[(v, i)] = src
        if src.slot is not None and src.slot in self.slot_values:
            self.slot_values[src.slot].append(v)

    def slots_for(self, v: Value) -> None:
        """Give every component of `v` its own slot (block arguments, results)."""
        elem, n = components(v.type)
        ty = scalar_type(elem)
        if (v, 0) in self.locs:  # an accumulator register: its web's slot (codegen_wgmma)
            return
        for i in range(n):
            self.locs[(v, i)] = Loc(self.new_slot(ty), None, ty)

    def mask_now(self) -> str:
        return self.load_slot(self.mask, "i1")

    def splat_reg(self, scalar: str, ty: str) -> str:
        one = self.op(f"insertelement {vec(ty)} poison, {ty} {scalar}, i64 0")
        return self.op(f"shufflevector {vec(ty)} {one}, {vec(ty)} poison, "
                       f"<{LANES} x i32> zeroinitializer")  # fmt: skip

    def any_lane(self, m: str) -> str:
        bits = self.op(f"bitcast {vec('i1')} {m} to i{LANES}")
        return self.op(f"icmp ne i{LANES} {bits}, 0")

    def fail_if(self, bad: str, op_index: int, kind: int, fields: list[str] | None = None,
                nbytes: int = 0) -> None:  # fmt: skip
        """Return 2 with the first bad lane's details in ``err`` if any lane of `bad` is set.
        `fields`: `<32 x i64>` buffer ids and offsets to report, or None."""
        bits = self.op(f"bitcast {vec('i1')} {bad} to i{LANES}")
        anyb = self.op(f"icmp ne i{LANES} {bits}, 0")

        def details() -> list[str]:
            self.declare("i32 @llvm.cttz.i32(i32, i1)")
            lane = self.op(f"call i32 @llvm.cttz.i32(i32 {bits}, i1 true)")
            values = [str(op_index), self.op(f"zext i32 {lane} to i64"), "0", "0", str(kind),
                      str(nbytes)]  # fmt: skip
            if fields is not None:
                values[2] = self.op(f"extractelement {vec('i64')} {fields[0]}, i32 {lane}")
                values[3] = self.op(f"extractelement {vec('i64')} {fields[1]}, i32 {lane}")
            return values

        self.fail_when(anyb, details)

    def fail_when(self, cond: str, details: Callable[[], list[str]]) -> None:
        """If `cond` (an i1), store the values `details` generates (in the failing branch)
        to ``err[0..]`` and return 2."""
        fail, ok = self.fresh("fail"), self.fresh("ok")
        self.emit(f"br i1 {cond}, label %{fail}, label %{ok}, !prof !0")
        saved = dict(self.st.cache)
        self.label(fail, keep_cache=True)
        for k, value in enumerate(details()):
            p = self.op(f"getelementptr i64, ptr %err, i64 {k}")
            self.emit(f"store i64 {value}, ptr {p}")
        self.emit("ret i32 2")
        self.label(ok, keep_cache=True)
        self.st.cache = saved

    def op_index(self, op: Operation) -> int:
        self.ops.append(op)
        return len(self.ops) - 1

    def info(self, k: int) -> str:
        p = self.op(f"getelementptr i64, ptr %info, i64 {k}")
        return self.op(f"load i64, ptr {p}")

    # ------------------------------------------------------------------ the function
    def generate(self) -> WarpProgram:
        body = self.kernel.body
        param_slots: list[list[int]] = []
        for arg in body.args:
            self.slots_for(arg)
            n = components(arg.type)[1]
            param_slots.append([self.locs[(arg, i)].slot for i in range(n)])  # type: ignore[misc]
        self.label("start")
        lin = self.linear_tid()
        count = self.op(f"mul i64 {self.info(3)}, {self.info(4)}")
        count = self.op(f"mul i64 {count}, {self.info(5)}")
        live = self.op(f"icmp slt {vec('i64')} {lin}, {self.splat_reg(count, 'i64')}")
        self.store_slot(self.mask, "i1", live)
        self.block(body)
        self.dirty = {}
        self.emit("ret i32 0")
        if self.check_shared:  # where a failed shadow check (err filled) goes
            self.label("failed")
            self.emit("ret i32 2")
        cases = " ".join(f"i32 {k + 1}, label %resume{k + 1}" for k in range(len(self.barriers)))
        scratch = f"  %wscratch = alloca [{self.collective_rows} x <32 x i64>], align 64"
        head = [
            "define i32 @warp(ptr noalias align 64 %frame, ptr noalias %bufs, "
            "ptr noalias %info, ptr noalias %err) {",
            "entry:",
            *(["  %scratch = alloca [6 x <32 x i64>], align 64"] if self.uses_async else []),
            *(["  %shlanes = alloca [4 x <32 x i64>], align 64"] if self.check_shared else []),
            *([scratch] if self.collective_rows else []),
            "  %state = load i32, ptr %frame, align 64",
            f"  switch i32 %state, label %start [{cases}]",
        ]
        weights = '!0 = !{!"branch_weights", i32 1, i32 1000}'  # checks rarely fail
        text = "\n".join([*sorted(self.decls), *head, *self.st.lines, "}", weights, ""])
        local = self.num_local_bufs - self.num_ptr
        remote = (self.num_bufs - self.num_local_bufs) // local
        return WarpProgram(text, self.frame, self.ops, self.barriers, param_slots, self.shared,
                           self.num_ptr, self.uses_dynamic, self.uses_async, self.uses_warp_hook,
                           self.check_shared, 1 << self.shadow_shift, self.web_slots,
                           remote)  # fmt: skip

    def linear_tid(self) -> str:
        w = self.op(f"mul i64 {self.info(9)}, {LANES}")
        return self.op(f"add {vec('i64')} {self.splat_reg(w, 'i64')}, {lane_ids()}")

    def block(self, block: Block) -> Operation | None:
        """Generate the ops of `block`; returns its terminator (not generated)."""
        for op in block.ops:
            if isinstance(op, scf.YieldOp | scf.ConditionOp | builtin.ReturnOp):
                self.done.add(op)  # the caller reads its operands before any branch
                return op
            self.operation(op)
            self.done.add(op)
        return None

    def operation(self, op: Operation) -> None:
        if op in self.web_ops:
            access(self, op)
        if is_collective(op):
            collective_atom(self, op)  # type: ignore[arg-type]
            return
        if isinstance(op, thread.ElectOneOp):
            elect_one(self, op)
            return
        if isinstance(op, thread.AtomOp) and op.family() in TMA_ATOM_CODE:
            TMA_ATOM_CODE[op.family()](self, op)
            return
        handler = (OP_HANDLERS.get(op.name) or CONTROL_HANDLERS.get(op.name)
                   or ASYNC_HANDLERS.get(op.name) or MBARRIER_HANDLERS.get(op.name)
                   or ATOMIC_HANDLERS.get(op.name) or WGMMA_HANDLERS.get(op.name)
                   or TMA_HANDLERS.get(op.name))  # fmt: skip
        if handler is None:
            raise Unsupported(f"op {op.name}")
        handler(self, op)


def _shared_access_bytes(op: Operation) -> tuple[Value, int] | None:
    """(pointer, bytes) of a memory access op, or None."""
    if isinstance(op, thread.LoadOp | thread.LoadIfOp):
        return op.ptr, thread.access_bytes(op.result.type)
    if isinstance(op, thread.StoreOp | thread.StoreIfOp):
        return op.ptr, thread.access_bytes(op.value.type)
    if isinstance(op, thread.CpAsyncOp):
        return op.dst, op.bytes.value
    if isinstance(op, thread.MbarrierInitOp):  # the other mbarrier ops skip the shadow
        return op.bar, 8
    if is_collective(op):  # ldmatrix: each reading lane's row
        atom = op.library_atom()  # type: ignore[attr-defined]
        return (op.operands[0], copy_tables(atom).src.shape[1]) if isinstance(atom, CopyAtom) \
            else None  # fmt: skip
    if isinstance(op, thread.AtomOp) and op.family() is Family.UNIVERSAL_COPY:
        load = op.role.value.startswith("ld.")
        registers = op.outs if load else op.args[1:]
        return op.args[0], sum(thread.access_bytes(r.type) for r in registers)
    return None


def _shadow_shift(kernel: builtin.KernelOp) -> int:
    """log2 of the shadow's unit: the largest power of two (up to 16) dividing the size of
    every access that may touch shared memory. Accesses are aligned to their size, so each
    covers whole units, and a unit's record is each of its bytes' record: an f32 kernel
    checks a word at a time, four times fewer entries than bytes."""
    unit = 16
    for op in kernel.walk():
        found = _shared_access_bytes(op)
        t = found[0].type if found else None
        if found and not (isinstance(t, gpu.PointerType) and t.space is AddressSpace.GLOBAL):
            unit = min(unit, found[1] & -found[1])
    return unit.bit_length() - 1


def generate(
    kernel: builtin.KernelOp, bounds_check: bool = True, check_shared: bool = True
) -> WarpProgram:
    """The warp function of `kernel`; raises `Unsupported` naming what it cannot run."""
    return _Gen(kernel, bounds_check, check_shared).generate()


__all__ = ["WarpProgram", "generate"]
