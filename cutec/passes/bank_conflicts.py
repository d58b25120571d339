"""bank-conflicts: report the shared-memory wavefronts of every warp access (``--remarks``).

An analysis of thread-level IR; it changes nothing. For each access to shared
memory — ``thread.load``/``load_if`` (an FMA operand, a fragment read),
``thread.store``/``store_if`` (a copy's or epilogue's store), ``thread.cp_async``
(its shared-memory write) and a ``thread.atom`` of ``ldmatrix``/``stmatrix`` —
it computes the byte address every lane of every warp of the CTA uses, by
evaluating the address's integer IR with ``gpu.thread_id`` set to each thread
of the warp, block ids 0 and every enclosing loop at its first iteration, then
counts the wavefronts of that warp request with the bank model of
`cutec.analysis.smem_banks` (32 banks of 4 bytes; phases of 128 bytes).

The addresses are the lowered program's own: swizzles, padding, vector widths
and the partitioning are all in them, so no layout reasoning is repeated here.
Arithmetic is evaluated by each op's constant folder (the ops' one
definition of their semantics). Each buffer is taken to start at bank 0:
lower-to-thread aligns every ``thread.alloc_shared`` to 128 bytes (a bank
row), so the bank of an address depends only on its offset in its buffer (for
a buffer of smaller alignment, the counts are those of its placement at a
128-byte boundary). Where the CTA shape is unknown (no ``reqntid``), one warp
of 32 threads along x is assumed.

One remark per access of the source (the ops one ``copy`` or ``gemm``
lowered to share its location; they are grouped by buffer and access width),
with the worst warp request among them:

    sgemm_2.cute:54:5: remark: shared store of 4 bytes per thread (4 instructions,
    buffer of line 21): 4 wavefronts per warp request, ideal 1 (bank conflicts)

An address the IR does not determine at compile time (it depends on a kernel
argument or a loaded value) gives a remark that says so instead. Lanes that a
predicate (``load_if``, ``store_if``, an enclosing ``scf.if``) switches off do
not count when the predicate is computable, else they count as active.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from cutec.analysis.smem_banks import WARP_SIZE, Request, matrix_request, request
from cutec.atoms.copy import CopyAtom
from cutec.atoms.copy_record import CopyAtomError
from cutec.atoms.copy_sm75 import MATRIX_ROWS_LAYOUT
from cutec.diagnostics import Location
from cutec.ir.attributes import IntegerAttr
from cutec.ir.core import Operation
from cutec.ir.dialects import gpu, scf, thread
from cutec.ir.dialects.builtin import KernelOp, ModuleOp
from cutec.ir.rewrite import constant_value
from cutec.ir.signature import launch_of
from cutec.ir.traits import AddressSpace
from cutec.ir.value import BlockArgument, OpResult, Value
from cutec.passes.manager import Pass, working_on

# A lane-vector value: one int for a warp-uniform value, else one per lane.
Lanes = int | tuple[int, ...]

# ldmatrix's and stmatrix's memory-side layout -> its number of 8x8 matrices.
_MATRICES = {layout: num for num, layout in MATRIX_ROWS_LAYOUT.items()}


class _Unknown(Exception):
    """The value is not known at compile time; the message says which value."""


@dataclass(frozen=True)
class Access:
    """One shared-memory access op: what it does, through which pointer, how wide."""

    op: Operation
    kind: str  # "load", "store", "cp.async store", "ldmatrix", "stmatrix"
    ptr: Value
    width: int  # bytes per lane (16 for a matrix row)
    pred: Value | None = None
    matrices: int = 0  # ldmatrix/stmatrix .x1/.x2/.x4; 0 for a per-lane access


def shared_accesses(kernel: Operation) -> Iterator[Access]:
    """The shared-memory accesses of `kernel`, in program order."""
    for op in kernel.walk():
        access = _access_of(op)
        if access is not None and _is_shared(access.ptr):
            yield access


def _is_shared(ptr: Value) -> bool:
    t = ptr.type
    return isinstance(t, gpu.PointerType) and t.space is AddressSpace.SHARED


def _access_of(op: Operation) -> Access | None:
    if isinstance(op, thread.LoadOp):
        return Access(op, "load", op.ptr, thread.access_bytes(op.result.type))
    if isinstance(op, thread.LoadIfOp):
        return Access(op, "load", op.ptr, thread.access_bytes(op.result.type), op.pred)
    if isinstance(op, thread.StoreOp):
        return Access(op, "store", op.ptr, thread.access_bytes(op.value.type))
    if isinstance(op, thread.StoreIfOp):
        return Access(op, "store", op.ptr, thread.access_bytes(op.value.type), op.pred)
    if isinstance(op, thread.CpAsyncOp):
        # src-size 0 (a false _ZFILL predicate) still writes the zeros: every lane stores.
        return Access(op, "cp.async store", op.dst, op.bytes.value)
    if isinstance(op, thread.AtomOp):
        return _atom_access(op)
    return None


def _atom_access(op: thread.AtomOp) -> Access | None:
    """A copy atom's shared access: ldmatrix/stmatrix, or UniversalCopy's ld/st.shared."""
    role = op.role.value
    if role in ("ld.shared", "st.shared"):
        ptr = next(v for v in op.args if isinstance(v.type, gpu.PointerType))
        moved = op.outs if role == "ld.shared" else [v for v in op.args if v is not ptr]
        width = sum(thread.access_bytes(v.type) for v in moved)
        return Access(op, "load" if role == "ld.shared" else "store", ptr, width)
    return _matrix_access(op)


def _matrix_access(op: thread.AtomOp) -> Access | None:
    try:
        atom = op.library_atom()
    except CopyAtomError:
        return None
    if not isinstance(atom, CopyAtom):
        return None
    for kind, layout, spaces in (
        ("ldmatrix", atom.src_layout, atom.src_spaces),
        ("stmatrix", atom.dst_layout, atom.dst_spaces),
    ):
        num = _MATRICES.get(layout)
        if num is not None and AddressSpace.SHARED in spaces:
            ptr = next(v for v in op.args if isinstance(v.type, gpu.PointerType))
            return Access(op, kind, ptr, 16, matrices=num)
    return None


@dataclass
class WarpValues:
    """Evaluates integer IR for the 32 threads of one warp (memoised per value).

    `block` is the CTA shape; warp `warp` holds the linear thread ids
    ``32 * warp .. 32 * warp + 31`` (x fastest). A thread past the CTA's size
    is not active.
    """

    block: tuple[int, int, int]
    warp: int
    memo: dict[Value, Lanes] = field(default_factory=dict)

    @property
    def threads(self) -> range:
        bx, by, bz = self.block
        first = WARP_SIZE * self.warp
        return range(first, min(first + WARP_SIZE, bx * by * bz))

    def thread_ids(self, dim: str) -> tuple[int, ...]:
        bx, by, _ = self.block
        if dim == "x":
            return tuple(t % bx for t in self.threads)
        if dim == "y":
            return tuple(t // bx % by for t in self.threads)
        return tuple(t // (bx * by) for t in self.threads)

    def lanes(self, v: Lanes) -> tuple[int, ...]:
        """`v` as one value per active thread."""
        return (v,) * len(self.threads) if isinstance(v, int) else v

    def value(self, v: Value) -> Lanes:
        found = self.memo.get(v)
        if found is None:
            found = self.memo[v] = self._compute(v)
        return found

    def address(self, ptr: Value) -> Lanes:
        """The byte offset of a shared pointer in its buffer, per lane."""
        owner = ptr.owner
        if isinstance(owner, thread.AllocSharedOp | thread.DynamicSharedOp):
            return 0
        if isinstance(owner, thread.PtrAddOp):
            t = owner.ptr.type
            assert isinstance(t, gpu.PointerType)
            size = thread.access_bytes(t.element)
            return self._combine(
                lambda p, i: p + i * size, self.address(owner.ptr), self.value(owner.offset)
            )
        if isinstance(owner, thread.PtrCastOp | thread.CvtaOp):
            return self.address(owner.ptr)
        raise _Unknown(_describe(ptr))

    def _combine(self, f: Callable[[int, int], int], a: Lanes, b: Lanes) -> Lanes:
        if isinstance(a, int) and isinstance(b, int):
            return f(a, b)
        return tuple(f(x, y) for x, y in zip(self.lanes(a), self.lanes(b), strict=True))

    def _compute(self, v: Value) -> Lanes:
        if isinstance(v, BlockArgument):
            return self._block_argument(v)
        attr = constant_value(v)
        if isinstance(attr, IntegerAttr):
            return attr.value
        assert isinstance(v, OpResult)
        op = v.op
        if isinstance(op, gpu.ThreadIdOp):
            return self.thread_ids(op.dim.value)
        if isinstance(op, gpu.BlockIdOp):
            return 0  # the first CTA: shared addresses do not depend on it
        if isinstance(op, gpu.BlockDimOp):
            return self.block["xyz".index(op.dim.value)]
        if isinstance(op, gpu.LaneIdOp):
            return tuple(t % WARP_SIZE for t in self.threads)
        if isinstance(op, gpu.WarpIdxOp):
            return tuple(x // WARP_SIZE for x in self.thread_ids("x"))
        if op.regions or not hasattr(op, "fold") or op.memory_effects() != ():
            raise _Unknown(_describe(v))
        return self._fold(op, v.index)

    def _block_argument(self, v: BlockArgument) -> Lanes:
        loop = v.owner.parent_op
        if isinstance(loop, scf.ForOp):
            # The first iteration: the induction variable at its lower bound,
            # the carried values at their initial values.
            return self.value(loop.lb if v.index == 0 else loop.inits[v.index - 1])
        raise _Unknown(_describe(v))

    def _fold(self, op: Operation, index: int) -> Lanes:
        operands = [self.value(x) for x in op.operands]
        if all(isinstance(x, int) for x in operands):
            return self._fold_one(op, index, operands)  # type: ignore[arg-type]
        columns = zip(*(self.lanes(x) for x in operands), strict=True)
        return tuple(self._fold_one(op, index, list(column)) for column in columns)

    @staticmethod
    def _fold_one(op: Operation, index: int, values: list[int]) -> int:
        constants = [IntegerAttr(x, v.type) for x, v in zip(values, op.operands, strict=True)]
        folded = op.fold(constants)  # type: ignore[attr-defined]
        if folded is None:
            raise _Unknown(f"{op.name} on {values}")
        item = folded[index]
        if isinstance(item, Value):  # a fold to an operand (x + 0 -> x)
            return values[op.operands.index(item)]
        if not isinstance(item, IntegerAttr):
            raise _Unknown(f"{op.name} on {values}")
        return int(item.value)


def _describe(v: Value) -> str:
    """Names the value an address depends on, for the remark."""
    if isinstance(v, BlockArgument):
        if isinstance(v.owner.parent_op, KernelOp):
            name = v.name_hint or f"#{v.index}"
            return f"the kernel argument '{name}'"
        return "a block argument"
    assert isinstance(v, OpResult)
    return f"the result of {v.op.name}"


def _active(access: Access, values: WarpValues) -> tuple[bool, ...]:
    """Which threads of the warp make the access: its predicate and enclosing ifs."""
    conditions: list[tuple[Value, bool]] = []
    if access.pred is not None:
        conditions.append((access.pred, True))
    child, parent = access.op, access.op.parent_op
    while parent is not None and not isinstance(parent, KernelOp):
        if isinstance(parent, scf.IfOp):
            conditions.append((parent.cond, child.parent is parent.then_block))
        child, parent = parent, parent.parent_op
    active = [True] * len(values.threads)
    for cond, want in conditions:
        try:
            lanes = values.lanes(values.value(cond))
        except _Unknown:
            continue  # not computable: counted as taken
        active = [a and bool(x) == want for a, x in zip(active, lanes, strict=True)]
    return tuple(active)


def warp_request(access: Access, values: WarpValues) -> Request | None:
    """The wavefronts of `access` by the warp of `values`; None if no thread of it makes it.

    Raises `_Unknown` when the addresses are not known at compile time.
    """
    addresses = values.lanes(values.address(access.ptr))
    if access.matrices:
        rows = 8 * access.matrices
        if len(addresses) < rows:
            return None  # a warp-collective instruction needs the whole warp
        return matrix_request(addresses[:rows])
    active = _active(access, values)
    lanes = [(lane, a) for lane, (a, on) in enumerate(zip(addresses, active, strict=True)) if on]
    return request(lanes, access.width) if lanes else None


def _buffer(ptr: Value) -> Operation | None:
    """The alloc_shared / dynamic_shared a pointer points into."""
    while isinstance(ptr, OpResult):
        op = ptr.op
        if isinstance(op, thread.AllocSharedOp | thread.DynamicSharedOp):
            return op
        if not isinstance(op, thread.PtrAddOp | thread.PtrCastOp | thread.CvtaOp):
            return None
        ptr = op.ptr
    return None


@dataclass
class AccessReport:
    """The accesses of one source location to one buffer, of one kind and width.

    `requests` holds the wavefronts of every (instruction, warp) pair that made
    the access; `unknown` says why an address is not known at compile time
    (what it depends on), and then the report has no counts.
    """

    first: Access
    ops: set[Operation] = field(default_factory=set)
    requests: list[Request] = field(default_factory=list)
    unknown: str | None = None

    @property
    def location(self) -> Location | None:
        return self.first.op.location

    @property
    def worst(self) -> Request:
        """The request furthest from its ideal (the most wavefronts among equals)."""
        return max(self.requests, key=lambda r: (r.wavefronts / r.ideal, r.wavefronts))

    def message(self) -> str:
        a = self.first
        if a.matrices:
            what = f"{a.kind}.x{a.matrices} of shared memory"
        else:
            what = f"shared {a.kind} of {a.width} bytes per thread"
        notes = [f"{len(self.ops)} instructions"] if len(self.ops) > 1 else []
        buffer = _buffer(a.ptr)
        if buffer is not None and buffer.location is not None:
            notes.append(f"buffer of line {buffer.location.line}")
        if notes:
            what += f" ({', '.join(notes)})"
        if self.unknown is not None:
            return f"{what}: bank conflicts not analysed: {self.unknown}"
        least = min(r.wavefronts for r in self.requests)
        most = max(r.wavefronts for r in self.requests)
        count = f"{most}" if least == most else f"{least} to {most}"
        plural = "s" if most > 1 else ""
        if not any(r.conflicted for r in self.requests):
            return f"{what}: {count} wavefront{plural} per warp request (conflict-free)"
        ideal = self.worst.ideal
        return f"{what}: {count} wavefronts per warp request, ideal {ideal} (bank conflicts)"


def analyse(kernel: KernelOp) -> list[AccessReport]:
    """The report of each shared access of `kernel`'s source, in program order."""
    launch = launch_of(kernel)
    block = launch.block or (WARP_SIZE, 1, 1)
    warps = -(-block[0] * block[1] * block[2] // WARP_SIZE)
    reports: dict[tuple, AccessReport] = {}
    accesses = [(a, _report_key(a)) for a in shared_accesses(kernel)]
    for access, key in accesses:
        reports.setdefault(key, AccessReport(access)).ops.add(access.op)
    for warp in range(warps):
        values = WarpValues(block, warp)
        for access, key in accesses:
            report = reports[key]
            if report.unknown is not None:
                continue
            try:
                found = warp_request(access, values)
            except _Unknown as e:
                report.unknown = f"the address depends on {e}"
                continue
            except ValueError as e:  # the model refuses it: a misaligned address
                report.unknown = str(e)
                continue
            if found is not None:
                report.requests.append(found)
    return [r for r in reports.values() if r.unknown is not None or r.requests]


def _report_key(access: Access) -> tuple:
    location = access.op.location
    # Without a location, an op is a group of its own.
    where = access.op if location is None else (location.file, location.line, location.col)
    return (where, access.kind, access.width, access.matrices, _buffer(access.ptr))


@dataclass
class BankConflicts(Pass):
    """Remarks with the wavefronts of each shared-memory access (thread-level IR)."""

    name = "bank-conflicts"
    summary = "report the wavefronts of each warp's shared-memory accesses (--remarks)"

    def run(self, module: ModuleOp) -> None:
        for kernel in module.walk_type(KernelOp):
            with working_on(kernel):
                for report in analyse(kernel):
                    self.remark(report.message(), report.location)
