"""order-shared-loads: keep ptxas from sinking shared-memory fragment loads in a loop.

A SIMT GEMM's k-loop reads each k-block's A and B fragments from shared
memory and then runs that k-block's FMAs. Given plain ``ld.shared``, ptxas
13.0 moves each load down next to its first FMA: the 16 loads of a k-block
sit in a clump just before (or among the first of) its FMAs, each a
back-to-back ``LDS`` with a 4-cycle stall, and the FMAs wait out the load
latency. (Reordering the PTX does not help: ptxas re-sinks the loads wherever
they are written, even past a branch.) The same loads written
``ld.relaxed.cta.shared`` are left where the PTX puts them relative to each
other, and ptxas's scheduler then spreads the loads of k-block k+1 among the
FMAs of k-block k, which is the register double-buffering of CUTLASS's
mainloops (docs/notes/2026-11-24-simt-sass-against-cute.md has
the SASS of both).

So this pass marks a ``thread.load`` from shared memory directly in an
``scf.for`` body ``{ordered}``, which the emitter writes as
``ld.relaxed.cta.shared`` — except where ptxas could merge the load with a
neighbour into a wider one (it merges four scalar loads of sgemm_1 TN into
one ``LDS.128``; it cannot merge relaxed loads). A load is left alone when
another shared load of the same body reads the elements just before or just
after it, and the pair together is 2 or 4 elements of at most 16 bytes whose
first address is known to be aligned to the pair's size.

Why the values cannot change: a relaxed load at CTA scope is a strengthening
of a weak load (the PTX memory model allows replacing one with the other in a
program without data races), and it reads the same address. The loads of a
k-loop read a tile that barriers publish, so there is no race to observe.

Alignment is a known-power-of-two analysis of the address: a
``thread.alloc_shared`` has its ``align``; ``thread.ptr_add`` of an offset
that is a multiple of 2^t elements keeps 2^t * (element bytes); offsets are
multiples of constants, of ``muli``/``shli`` by constants, ``andi`` with a
constant mask, sums of multiples; anything else is a multiple of 1.
"""

from __future__ import annotations

from dataclasses import dataclass

from cutec.ir.attributes import IntegerAttr, UnitAttr
from cutec.ir.core import Operation
from cutec.ir.dialects import arith, scf, thread
from cutec.ir.dialects.builtin import ModuleOp
from cutec.ir.dialects.gpu import PointerType
from cutec.ir.traits import AddressSpace
from cutec.ir.types import VectorType, bit_width
from cutec.ir.value import OpResult, Value
from cutec.passes.manager import Pass, working_on

ORDERED = thread.LoadOp.ordered.name  # a declared field of thread.load
_MAX_FACTOR = 1 << 16


def _constant(v: Value) -> int | None:
    if isinstance(v, OpResult) and isinstance(v.owner, arith.ConstantOp):
        attr = v.owner.value
        if isinstance(attr, IntegerAttr):
            return attr.value
    return None


def _lowbit(n: int) -> int:
    return _MAX_FACTOR if n == 0 else min(n & -n, _MAX_FACTOR)


def pow2_factor(v: Value, depth: int = 0) -> int:
    """The largest power of two (at most 2^16) that integer `v` is known to be a multiple of."""
    c = _constant(v)
    if c is not None:
        return _lowbit(c)
    if depth > 16 or not isinstance(v, OpResult):
        return 1
    op = v.owner
    if not op.operands:
        return 1
    a, b = op.operands[0], (op.operands[1] if len(op.operands) > 1 else None)
    if op.name in ("arith.addi", "arith.subi", "arith.ori") and b is not None:
        return min(pow2_factor(a, depth + 1), pow2_factor(b, depth + 1))
    if op.name == "arith.muli" and b is not None:
        return min(pow2_factor(a, depth + 1) * pow2_factor(b, depth + 1), _MAX_FACTOR)
    if op.name == "arith.andi" and b is not None:
        return max(pow2_factor(a, depth + 1), pow2_factor(b, depth + 1))
    if op.name == "arith.shli" and b is not None:
        shift = _constant(b)
        if shift is not None and 0 <= shift < 32:
            return min(pow2_factor(a, depth + 1) << shift, _MAX_FACTOR)
    if op.name in ("arith.extsi", "arith.extui", "arith.index_cast"):
        return pow2_factor(a, depth + 1)
    return 1


@dataclass(frozen=True)
class Address:
    """A pointer as `root` + `offset` elements; `root` is aligned to `align` bytes."""

    root: Value
    offset: int
    align: int


def _element_bytes(ptr: Value) -> int:
    t = ptr.type
    assert isinstance(t, PointerType)
    return max(bit_width(t.element) // 8, 1)


def _root_align(ptr: Value, depth: int = 0) -> int:
    """Bytes `ptr` is known to be aligned to (the element size when nothing better is known)."""
    size = _element_bytes(ptr)
    if not isinstance(ptr, OpResult) or depth > 16:
        return size
    op = ptr.owner
    if isinstance(op, thread.AllocSharedOp):
        return max(op.align.value, size)
    if isinstance(op, thread.PtrAddOp):
        return min(_root_align(op.ptr, depth + 1), pow2_factor(op.offset) * size)
    return size


def address(ptr: Value) -> Address:
    """Peel constant ``ptr_add``s off `ptr`: its root pointer and constant element offset."""
    offset = 0
    while isinstance(ptr, OpResult) and isinstance(ptr.owner, thread.PtrAddOp):
        c = _constant(ptr.owner.offset)
        if c is None:
            break
        offset += c
        ptr = ptr.owner.ptr
    return Address(ptr, offset, _root_align(ptr))


def _width(load: thread.LoadOp) -> int:
    t = load.result.type
    return t.shape[0] if isinstance(t, VectorType) else 1


def _is_shared(load: Operation) -> bool:
    t = load.operands[0].type if isinstance(load, thread.LoadOp) else None
    return isinstance(t, PointerType) and t.space is AddressSpace.SHARED


def _mergeable(first: tuple[Address, int], second: tuple[Address, int], size: int) -> bool:
    """`first` then `second` (address, width) could be one aligned vector load of ptxas's."""
    (a, wa), (b, wb) = first, second
    if a.root is not b.root or a.offset + wa != b.offset:
        return False
    n = wa + wb
    if n not in (2, 4) or n * size > 16:
        return False
    start_align = min(a.align, _lowbit(a.offset) * size)
    return start_align % (n * size) == 0


def order_loop_loads(loop: scf.ForOp) -> int:
    """Mark the shared loads of `loop`'s body that ptxas could not merge; how many."""
    loads = [op for op in loop.body.ops if isinstance(op, thread.LoadOp) and _is_shared(op)]
    placed = {op: (address(op.ptr), _width(op)) for op in loads}
    # A partner starts where a load ends, or ends where it starts (same root): found
    # by lookup, not by trying every pair (sgemm_2's k-loop has 128 shared loads).
    starting: dict[tuple[Value, int], list[Operation]] = {}
    ending: dict[tuple[Value, int], list[Operation]] = {}
    for op, (a, w) in placed.items():
        starting.setdefault((a.root, a.offset), []).append(op)
        ending.setdefault((a.root, a.offset + w), []).append(op)
    marked = 0
    for op in loads:
        here, size = placed[op], _element_bytes(op.ptr)
        (a, w) = here
        after = starting.get((a.root, a.offset + w), ())
        before = ending.get((a.root, a.offset), ())
        if any(o is not op and _mergeable(here, placed[o], size) for o in after) or any(
            o is not op and _mergeable(placed[o], here, size) for o in before
        ):
            continue
        if ORDERED not in op.attributes:
            op.attributes[ORDERED] = UnitAttr()
            marked += 1
    return marked


@dataclass
class OrderSharedLoads(Pass):
    """Emit a loop's shared-memory loads as ``ld.relaxed.cta`` so ptxas keeps them early."""

    name = "order-shared-loads"
    summary = "mark shared loads in loop bodies {ordered} (ld.relaxed.cta.shared)"

    def run(self, module: ModuleOp) -> None:
        for loop in list(module.walk_type(scf.ForOp)):
            with working_on(loop):
                order_loop_loads(loop)
