"""Which pointer parameters a kernel writes, and how: read from its IR for the launch.

The runtime refuses a read-only array where the kernel writes, an output that
overlaps another array argument, and an output whose layout gives two coordinates
one element (docs/runtime.md, *What is checked at launch*). So the signature
records, per pointer parameter, its `access`:

* ``read``: nothing writes through it;
* ``atomic``: only atomic read-modify-writes and atomic stores write it (a
  counter, a histogram, stream-K's flags): elements shared between coordinates
  are then meant;
* ``write``: anything else writes it (a copy into it, a gemm's or axpby's C, a
  store, clear or fill).

An op writes the parameters its written operand is a view of: that operand is
followed back through the ops that made it (view ops, `cute.make_tensor`, pointer
arithmetic: every operand that is global memory) to the kernel's pointer
arguments. A value that cannot be followed to one (none found) makes every
pointer parameter written: a false "written" refuses a launch, a false "read"
would let one corrupt memory.
"""

from __future__ import annotations

from collections.abc import Iterator

from cutec.ir.core import Operation, Value
from cutec.ir.dialects import cute_atomic, thread_atomic
from cutec.ir.dialects.builtin import KernelOp
from cutec.ir.dialects.cute_compute import AxpbyOp, CopyAsyncOp, CopyIfOp, CopyOp, GemmOp
from cutec.ir.dialects.cute_types import TensorType
from cutec.ir.dialects.gpu import PointerType
from cutec.ir.traits import EffectKind
from cutec.ir.value import BlockArgument, OpResult
from cutec.target import AddressSpace

READ, WRITE, ATOMIC = "read", "write", "atomic"
ACCESSES = (READ, WRITE, ATOMIC)

# Address spaces through which a kernel's pointer argument may be reached.
_GLOBAL = frozenset({AddressSpace.GLOBAL, AddressSpace.GENERIC})
# The atomics that write (an atomic load reads, though it is modelled as a write too,
# to keep it in place).
_ATOMIC_WRITES = (
    cute_atomic.AtomicRmwOp, cute_atomic.AtomicStoreOp,
    thread_atomic.AtomicRmwOp, thread_atomic.AtomicStoreOp,
)  # fmt: skip
_ATOMIC_READS = (cute_atomic.AtomicLoadOp, thread_atomic.AtomicLoadOp)


def param_access(kernel: KernelOp) -> dict[str, str]:
    """`READ`, `WRITE` or `ATOMIC` per pointer argument of `kernel`, by name."""
    args = {a: _name(a) for a in kernel.args if isinstance(a.type, PointerType)}
    access = dict.fromkeys(args.values(), READ)
    memo: dict[Value, frozenset[str]] = {}
    for op in kernel.walk():
        kind = ATOMIC if isinstance(op, _ATOMIC_WRITES) else WRITE
        for value in _written(op):
            roots = _roots(value, args, memo, set()) or frozenset(args.values())
            for name in roots:
                if access[name] != WRITE:
                    access[name] = kind
    return access


def _is_global(value: Value) -> bool:
    t = value.type
    return isinstance(t, TensorType | PointerType) and t.space in _GLOBAL


def _written(op: Operation) -> list[Value]:
    """The operands of global memory that `op` writes through."""
    if isinstance(op, _ATOMIC_READS):
        return []
    effects = op.memory_effects()  # None: unknown, so possibly any
    if effects is not None and not any(
        e.kind is EffectKind.WRITE and e.space in _GLOBAL for e in effects
    ):
        return []
    if isinstance(op, CopyOp | CopyIfOp | CopyAsyncOp):
        candidates = [op.dst]
    elif isinstance(op, GemmOp):
        candidates = [op.c]
    elif isinstance(op, AxpbyOp):
        candidates = [op.y]
    else:  # a store, clear, fill, atomic, or an op not known here: each operand
        candidates = list(op.operands)
    return [v for v in candidates if _is_global(v)]


def _roots(
    value: Value, args: dict[Value, str], memo: dict[Value, frozenset[str]], active: set[Value]
) -> frozenset[str]:
    """The pointer arguments `value` is a view of."""
    found = memo.get(value)
    if found is not None:
        return found
    if value in args:
        return frozenset({args[value]})
    if value in active:  # a loop-carried value: its other sources are followed elsewhere
        return frozenset()
    active.add(value)
    out: set[str] = set()
    for source in _sources(value):
        if _is_global(source):
            out |= _roots(source, args, memo, active)
    active.discard(value)
    memo[value] = found = frozenset(out)
    return found


def _sources(value: Value) -> Iterator[Value]:
    """The values `value` is made from: its op's operands and what its regions yield;
    for a block argument of a region (a loop's carried value), the region op's operands."""
    if isinstance(value, OpResult):
        op = value.op
        yield from op.operands
        for region in op.regions:
            for block in region.blocks:
                if block.last_op is not None:
                    yield from block.last_op.operands
    elif isinstance(value, BlockArgument):
        parent = value.block.parent
        owner = parent.parent if parent is not None else None
        if owner is not None:
            yield from owner.operands


def _name(arg: BlockArgument) -> str:
    # As cutec.ir.signature names it: an unnamed argument (%0) by its position.
    return arg.name_hint or f"arg{arg.index}"
