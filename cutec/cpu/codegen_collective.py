"""Warp code of the warp-collective atoms: ldmatrix and mma.sync.

The warp function already holds all 32 lanes of every value, so a collective op
is one step of it, run under a full mask (a lane that is not live, or a warp of
fewer than 32 threads, is reported as the interpreter reports it). Both follow
the atom's record through `cutec.cpu.collective`, as the interpreter does:

* **ldmatrix** (copy atoms into registers): the lanes that supply a row
  (`copy_tables(atom).readers`) have their addresses checked as loads of the row
  (bounds, alignment, the shared-memory shadow), and their rows are gathered
  into the warp's scratch area. Each destination register of each lane is then
  gathered from the scratch at addresses fixed at compile time:
  `collective.copy_sources` runs the atom's emulator on sources that hold their
  own lane and byte numbers, so the bytes move exactly as `emulate_copy` moves
  them. All native, no call-out.
* **wgmma** (`cutec.cpu.codegen_wgmma`): each warp's part of the warpgroup's
  instruction: its input words go to the hook as mma.sync's (the issue), and
  its results hold 0xFF bytes until the wait lands D in their registers.
* **mma.sync**: each input register becomes its 32-bit or 64-bit word (the
  value's bytes, components little-endian, as the PTX register holds them) in a
  row of the scratch area, and the warp calls the runner's hook
  (`cutec.cpu.native_collective`), which runs `collective.mma_words` (the atom's
  emulator, as the interpreter) and writes D's words back. The emulator adds the
  products in float64 through numpy; computing that here would need numpy's
  summation order to be bit-identical, so the warp calls out instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from cutec.atoms.copy_record import CopyAtom
from cutec.atoms.emulate import copy_tables
from cutec.atoms.family import Family
from cutec.atoms.mma_record import MmaAtom
from cutec.cpu import checks
from cutec.cpu.codegen_mbarrier import call_warp_hook
from cutec.cpu.codegen_ops import _address_parts, _gather
from cutec.cpu.codegen_wgmma import call_hook, poison
from cutec.cpu.collective import copy_sources, warp_threads
from cutec.cpu.lanes import (
    ERR_COLLECTIVE,
    ERR_LOAD,
    LANES,
    Unsupported,
    components,
    splat,
    vec,
)
from cutec.ir.core import Operation, Value
from cutec.ir.dialects import thread
from cutec.ir.types import bit_width

if TYPE_CHECKING:
    from cutec.cpu.codegen import _Gen

ROW = LANES * 8  # bytes of one scratch row: a <32 x i64>


def is_collective(op: Operation) -> bool:
    """Whether `op` is a warp-collective ``thread.atom`` (its atom's size(ThrID) > 1)."""
    return isinstance(op, thread.AtomOp) and warp_threads(op) > 1


def scratch_rows(op: Operation) -> int:
    """Rows (`<32 x i64>`) of the warp's scratch area that collective `op` uses."""
    atom = op.library_atom()  # type: ignore[attr-defined]
    return max(len(op.operands), len(op.results)) if isinstance(atom, MmaAtom) else 0


def collective_atom(g: _Gen, op: thread.AtomOp) -> None:
    atom = op.library_atom()
    rule = _WARP_CODE.get(atom.family)
    if rule is None:
        raise Unsupported(f"atom {atom.name} ({op.role.value})")
    require_full_warp(g, op)
    rule(g, op, atom)


def require_full_warp(g: _Gen, op: Operation) -> None:
    """Every lane of the warp must be at `op`: report the first that is not. A mask
    register checked before in this straight-line code (a label that is not a check's
    reloads the mask) needs no second check."""
    mask = g.mask_now()
    if mask not in g.full_masks:
        dead = g.op(f"xor {vec('i1')} {mask}, {splat(1, 'i1')}")
        g.fail_if(dead, g.op_index(op), ERR_COLLECTIVE)
        g.full_masks.add(mask)


def elect_one(g: _Gen, op: thread.ElectOneOp) -> None:
    """elect_one: lane 0 of the converged warp (the interpreter's leader too)."""
    require_full_warp(g, op)
    lane = g.op(f"and {vec('i64')} {g.linear_tid()}, {splat(31, 'i64')}")
    g.define(op.result, 0, g.op(f"icmp eq {vec('i64')} {lane}, {splat(0, 'i64')}"))


def _row(g: _Gen, k: int) -> str:
    return g.op(f"getelementptr [{g.collective_rows} x {vec('i64')}], ptr %wscratch, i64 0, "
                f"i64 {k}")  # fmt: skip


def _int_type(v: Value) -> tuple[str, int, int]:
    """(LLVM integer type of one component, component bits, components) of a register."""
    elem, n = components(v.type)
    bits = bit_width(elem)
    return f"i{bits}", bits, n


def _word(g: _Gen, v: Value) -> str:
    """The register's word as `<32 x i64>`: component i at bits ``i * width`` up."""
    ity, bits, n = _int_type(v)
    ty = g.ty(v)
    word = "zeroinitializer"
    for i in range(n):
        x = g.get(v, i)
        if ty != ity:
            x = g.op(f"bitcast {vec(ty)} {x} to {vec(ity)}")
        if bits < 64:
            x = g.op(f"zext {vec(ity)} {x} to {vec('i64')}")
        if i:
            x = g.op(f"shl {vec('i64')} {x}, {splat(i * bits, 'i64')}")
        word = x if i == 0 else g.op(f"or {vec('i64')} {word}, {x}")
    return word


def _define_from_word(g: _Gen, v: Value, word: str) -> None:
    """Define register `v`'s components from its word (the inverse of `_word`)."""
    ity, bits, n = _int_type(v)
    ty = g.ty(v)
    for i in range(n):
        x = word
        if i:
            x = g.op(f"lshr {vec('i64')} {x}, {splat(i * bits, 'i64')}")
        if bits < 64:
            x = g.op(f"trunc {vec('i64')} {x} to {vec(ity)}")
        if ty != ity:
            x = g.op(f"bitcast {vec(ity)} {x} to {vec(ty)}")
        g.define(v, i, x)


def _mma(g: _Gen, op: thread.AtomOp, atom: MmaAtom) -> None:
    i64 = vec("i64")
    for k, v in enumerate(op.args):
        g.emit(f"store {i64} {_word(g, v)}, ptr {_row(g, k)}, align 64")
    call_warp_hook(g, op)  # an MMA's hook returns 0 or 1 (failed)
    for k, r in enumerate(op.outs):
        _define_from_word(g, r, g.op(f"load {i64}, ptr {_row(g, k)}, align 64"))


def _wgmma(g: _Gen, op: thread.AtomOp, atom: MmaAtom) -> None:
    i64 = vec("i64")
    for k, v in enumerate(op.args):
        g.emit(f"store {i64} {_word(g, v)}, ptr {_row(g, k)}, align 64")
    call_hook(g, op)
    poison(g, op)


def _ldmatrix(g: _Gen, op: thread.AtomOp, atom: CopyAtom) -> None:
    tables = copy_tables(atom)
    nbytes = tables.src.shape[1]
    if nbytes != 16:  # two rows of i64 lanes: what one shufflevector picks from
        raise Unsupported(f"atom {atom.name}: {nbytes}-byte source values")
    readers = set(tables.readers)
    bits = "<" + ", ".join(f"i1 {'true' if t in readers else 'false'}" for t in range(LANES)) + ">"
    mask = g.op(f"and {vec('i1')} {g.mask_now()}, {bits}")
    addr = _address_parts(g, op, op.args[0], mask, nbytes, ERR_LOAD, checks.LOAD)[0]
    high = g.op(f"getelementptr i8, {vec('ptr')} {addr}, i64 8")
    rows = [_gather(g, at, "i64", mask, 8) for at in (addr, high)]
    # Lane t's source byte b in the two rows side by side, as bytes: 8 t + b % 8 + 256 (b // 8).
    lane, byte = copy_sources(atom)
    where = (byte // 8) * ROW + 8 * lane + byte % 8  # (lanes, destination bytes)
    at = 0
    for r in op.outs:
        ity, width, n = _int_type(r)
        step = width // 8
        ty = g.ty(r)
        for i in range(n):
            x = _pick(g, rows, where[:, at : at + step], ity)
            g.define(r, i, x if ty == ity else g.op(f"bitcast {vec(ity)} {x} to {vec(ty)}"))
            at += step


def _pick(g: _Gen, rows: list[str], where: np.ndarray, ity: str) -> str:
    """`<32 x ity>` whose lane t holds the row bytes at ``where[t]`` (little-endian), by
    shufflevectors: the bytes are cut into the widest units u (8, 4, 2, 1 bytes) that
    are each consecutive and u-aligned in every lane (ldmatrix's 32-bit registers are
    one unit, .trans's are two 16-bit halves from different rows), and each unit is
    one shuffle of the two rows viewed as `<256/u x iu>`."""
    step = where.shape[1]
    unit = step
    while unit > 1:
        parts = where.reshape(LANES, step // unit, unit)
        consecutive = (parts == parts[:, :, :1] + np.arange(unit)).all()
        if consecutive and (parts[:, :, 0] % unit == 0).all():
            break
        unit //= 2
    uty = f"i{8 * unit}"
    count = ROW // unit
    halves = [g.op(f"bitcast {vec('i64')} {r} to <{count} x {uty}>") for r in rows]
    word = "zeroinitializer"
    for j in range(step // unit):
        index = "<" + ", ".join(f"i32 {int(w) // unit}" for w in where[:, j * unit]) + ">"
        x = g.op(f"shufflevector <{count} x {uty}> {halves[0]}, <{count} x {uty}> {halves[1]}, "
                 f"<{LANES} x i32> {index}")  # fmt: skip
        if unit == step:
            return x
        x = g.op(f"zext {vec(uty)} {x} to {vec(ity)}")
        if j:
            x = g.op(f"shl {vec(ity)} {x}, {splat(8 * unit * j, ity)}")
        word = x if j == 0 else g.op(f"or {vec(ity)} {word}, {x}")
    return word


# The warp code of each warp-collective atom family (the atom's family picks it, never
# its name): the interpreter's families (`collective.WARP_RULES`), each run natively.
_WARP_CODE: dict[Family, Callable[[_Gen, thread.AtomOp, Any], None]] = {
    Family.MMA_SYNC: _mma,
    Family.LDMATRIX: _ldmatrix,
    Family.WGMMA: _wgmma,
}
