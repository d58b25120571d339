"""Warp-collective atoms in the reference interpreter: ldmatrix and mma.sync.

A warp-collective ``thread.atom`` (its atom's ``size(ThrID)`` is 32) is one
instruction of 32 lanes: each lane's thread stops there (the interpreter's
threads are generators, `cutec.cpu.reference`), and when every lane of the warp
has arrived at the same op, `run_warp_atom` runs it once on the 32 lanes'
registers and gives each lane its results. Nothing here knows an instruction:
the atom's record is the one source of truth.

* **MMA atoms** (mma.sync): each lane's register values are turned into register
  words (their bytes, little-endian, as the PTX registers hold them), unpacked
  into the atom's fragments (`cutec.atoms.emulate.unpack_registers`), multiplied
  by `emulate_mma` (the atom's A/B/C layouts as gather/scatter tables) and packed
  back into each lane's D registers.
* **wgmma** (a warpgroup's atom, run per warp: `cutec.cpu.wgmma`): the issue
  records the lanes' input words and poisons the accumulator registers; the
  batch ops ``thread.wgmma_fence / commit / wait`` are warp steps too
  (`run_warp_op`), and a wait sets each completed wgmma's D in the registers of
  its accumulator webs.
* **Copy atoms** (ldmatrix): lane t's source value is the bytes at its address,
  read only for the lanes the instruction reads (`copy_tables(atom).readers`:
  ldmatrix's first 8 * num lanes); `emulate_copy` moves them through the atom's
  SrcLayout/DstLayout byte tables into each lane's destination registers. Each
  read is checked (bounds, alignment to the 16-byte row, races, trace) as the
  lane's own load.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from cutec.atoms.copy_record import CopyAtom
from cutec.atoms.emulate import (
    copy_tables,
    emulate_copy,
    emulate_mma,
    pack_registers,
    unpack_registers,
)
from cutec.atoms.family import Family
from cutec.atoms.mma_record import MmaAtom
from cutec.cpu import checks, wgmma
from cutec.cpu.reference_memory import Pointer, decode, encode, scalar_bytes
from cutec.ir.core import Operation, Value
from cutec.ir.dialects import thread
from cutec.ir.types import Type, VectorType

if TYPE_CHECKING:
    from cutec.cpu.reference import _Thread

WARP = 32


def warp_threads(op: thread.AtomOp) -> int:
    """How many threads execute `op` together: its atom's size(ThrID) (1 for UniversalFMA)."""
    return op.library_atom().num_threads


# The non-atom ops a warp runs as one step: the wgmma batch ops and elect_one.
WARP_STEPS = (*wgmma.SYNC_OPS, thread.ElectOneOp)


def run_warp_op(op: Operation, lanes: Sequence[_Thread]) -> bool:
    """Run the warp step `op` (a warp-collective atom, a wgmma batch op or elect_one) for the warp
    whose threads are `lanes`; False when it cannot yet (a wgmma_wait whose group the
    rest of the warpgroup has not committed: the warp waits and tries again)."""
    if isinstance(op, thread.AtomOp):
        run_warp_atom(op, lanes)
        return True
    if len(lanes) != WARP:
        raise checks.short_warp(op, op.name, len(lanes))
    if isinstance(op, thread.ElectOneOp):  # lane 0: the same leader every time
        for i, lane in enumerate(lanes):
            lane.env[op.result] = int(i == 0)
        return True
    cta = lanes[0].cta
    warp = lanes[0].linear // WARP
    try:
        if isinstance(op, thread.WgmmaWaitOp):
            landed = cta.wgmma.wait(op, warp)
            if landed is None:
                return False
            for issued, words in landed:
                _land_accumulators(cta.wgmma, lanes, issued, words)
        elif isinstance(op, thread.WgmmaCommitOp):
            cta.wgmma.commit(op, warp)
        else:
            cta.wgmma.fence(op, warp)
    except wgmma.WgmmaError as e:
        raise cta.wgmma_error(e) from None
    return True


def run_warp_atom(op: thread.AtomOp, lanes: Sequence[_Thread]) -> None:
    """Run `op` once for the warp whose threads are `lanes` (lane order), setting each
    lane's results."""
    atom = op.library_atom()
    rule = WARP_RULES.get(atom.family)
    if rule is None:
        raise NotImplementedError(f"the reference interpreter does not run atom {atom.name} yet")
    if len(lanes) != WARP:
        raise checks.short_warp(op, atom.name, len(lanes))
    rule(op, atom, lanes)


# --------------------------------------------------------------------------- words


def _bytes_of(value: Any, t: Type) -> np.ndarray:
    if isinstance(t, VectorType):
        return np.concatenate([encode(v, t.element) for v in value])
    return encode(value, t)


def _value_of(raw: np.ndarray, t: Type) -> Any:
    if isinstance(t, VectorType):
        step = scalar_bytes(t.element)
        return tuple(decode(raw[i * step : (i + 1) * step], t.element) for i in range(t.shape[0]))
    return decode(raw, t)


def _words(lanes: Sequence[_Thread], values: Sequence[Value]) -> np.ndarray:
    """(lanes, registers) uint64 words: each register value's bytes, little-endian."""
    out = np.zeros((len(lanes), len(values)), dtype=np.uint64)
    for i, lane in enumerate(lanes):
        for j, v in enumerate(values):
            raw = _bytes_of(lane.env[v], v.type)
            out[i, j] = int.from_bytes(raw.tobytes(), "little")
    return out


def _set_words(lanes: Sequence[_Thread], results: Sequence[Value], words: np.ndarray) -> None:
    for i, lane in enumerate(lanes):
        for j, r in enumerate(results):
            n = scalar_bytes_of(r.type)
            raw = np.frombuffer(int(words[i, j]).to_bytes(n, "little"), dtype=np.uint8)
            lane.env[r] = _value_of(raw, r.type)


def scalar_bytes_of(t: Type) -> int:
    """Bytes of a register value (a vector's elements together)."""
    if isinstance(t, VectorType):
        return scalar_bytes(t.element) * t.shape[0]
    return scalar_bytes(t)


# --------------------------------------------------------------------------- mma


def _mma(op: thread.AtomOp, atom: MmaAtom, lanes: Sequence[_Thread]) -> None:
    _set_words(lanes, op.outs, mma_words(op, _words(lanes, op.args)))


def mma_words(op: thread.AtomOp, words: np.ndarray) -> np.ndarray:
    """D's register words (lanes, outputs) of an mma.sync from its input register words
    (lanes, inputs; in operand order): unpacked into the atom's fragments, multiplied by
    `emulate_mma`, packed back. The interpreter and the native backend both call this."""
    atom = op.library_atom()
    assert isinstance(atom, MmaAtom)
    frags: dict[str, np.ndarray] = {}
    at = 0
    for o in op.signature().inputs:
        operand = o.name if o.name in "abc" else "c"
        frags[operand] = unpack_registers(atom, operand, words[:, at : at + o.count])  # type: ignore[arg-type]
        at += o.count
    d = emulate_mma(atom, frags["a"], frags["b"], frags["c"])
    return pack_registers(atom, "d", d)


# --------------------------------------------------------------------------- copy


def copy_sources(atom: CopyAtom) -> tuple[np.ndarray, np.ndarray]:
    """(lane, byte) of the source value that each destination byte of `atom` comes from:
    two (lanes, destination bytes) arrays, found by running `emulate_copy` on sources
    that hold their own lane and byte numbers (so the native backend moves bytes exactly
    as the emulator does, with no second copy of its rules)."""
    tables = copy_tables(atom)
    shape = tables.src.shape
    lane = np.broadcast_to(np.arange(shape[0], dtype=np.uint8)[:, None], shape).copy()
    byte = np.broadcast_to(np.arange(shape[1], dtype=np.uint8)[None, :], shape).copy()
    return emulate_copy(atom, lane).astype(np.int64), emulate_copy(atom, byte).astype(np.int64)


def _copy(op: thread.AtomOp, atom: CopyAtom, lanes: Sequence[_Thread]) -> None:
    tables = copy_tables(atom)
    nbytes = tables.src.shape[1]
    src = np.zeros((WARP, nbytes), dtype=np.uint8)
    for t in tables.readers:
        lane = lanes[t]
        p: Pointer = lane.env[op.args[0]]
        lane._check(op, p, nbytes, "load")  # bounds, alignment, races, trace
        src[t] = p.buffer.data[p.offset : p.offset + nbytes]
    dst = emulate_copy(atom, src)
    for i, lane in enumerate(lanes):
        at = 0
        for r in op.outs:
            n = scalar_bytes_of(r.type)
            lane.env[r] = _value_of(dst[i, at : at + n], r.type)
            at += n


# --------------------------------------------------------------------------- wgmma


def _wgmma(op: thread.AtomOp, atom: MmaAtom, lanes: Sequence[_Thread]) -> None:
    """Issue: the state records the lanes' input words; the accumulator registers (the
    results and the webs they tie) hold 0xFF bytes until the wait."""
    cta = lanes[0].cta
    try:
        cta.wgmma.issue(op, lanes[0].linear // WARP, _words(lanes, op.args))
    except wgmma.WgmmaError as e:
        raise cta.wgmma_error(e) from None
    webs = cta.wgmma.webs
    for r in op.outs:
        poison = wgmma.poison_value_bytes(scalar_bytes_of(r.type))
        for lane in lanes:
            lane.env[r] = _value_of(poison, r.type)
            for v in webs.tied[webs.web[r]]:
                if v in lane.env:
                    lane.env[v] = _value_of(poison, v.type)


def _land_accumulators(state: wgmma.WgmmaCta, lanes: Sequence[_Thread], issued: wgmma.Issued,
                       words: np.ndarray) -> None:  # fmt: skip
    """A completed wgmma's D words land in every register of its accumulator webs."""
    for j, web in enumerate(issued.out_webs):
        for i, lane in enumerate(lanes):
            for v in state.webs.tied[web]:
                if v in lane.env:
                    n = scalar_bytes_of(v.type)
                    raw = np.frombuffer(int(words[i, j]).to_bytes(n, "little"), dtype=np.uint8)
                    lane.env[v] = _value_of(raw, v.type)


# The interpreter's rule for each warp-collective atom family (the atom's family picks
# it, never its name); the native backend runs the same families (codegen_collective).
WARP_RULES: dict[Family, Callable[..., None]] = {
    Family.MMA_SYNC: _mma,
    Family.LDMATRIX: _copy,
    Family.WGMMA: _wgmma,  # a warpgroup's instruction, each warp's part on its own
}
