"""An MMA atom's thread-level semantics as data: gather/scatter index tables and their emulation.

For an operand with TV layout L (CuTe's ALayout, BLayout or CLayout), the table is
``T[t, v] = L(t, v)``: the column-major index (``row + col*rows``) into the MxK,
NxK or MxN tile of value v of logical thread t. Because a layout is linear in its
modes, ``L(t, v) = L[0](t) + L[1](v)``, so a table costs size(L[0]) + size(L[1])
layout evaluations. The tables are plain integer arrays so that a backend that
cannot call Python (the llvmlite CPU backend) can embed them; `emulate_mma` is
the numpy reference that uses them, and `pack_registers` turns values into the
32/64-bit register words each thread passes to the instruction. A copy atom's
SrcLayout and DstLayout (in bits) give byte tables the same way (`copy_tables`),
and `emulate_copy` moves a warp's bytes with them (ldmatrix in the CPU backend).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Literal

import numpy as np

from cutec.atoms.copy_record import CopyAtom
from cutec.atoms.mma_record import MmaAtom
from cutec.dtypes import dtype as dtype_row
from cutec.layout import Layout, size

Operand = Literal["a", "b", "c"]


@functools.cache
def tv_index_table(layout: Layout) -> np.ndarray:
    """T[t, v] = L(t, v) for the rank-2 TV layout L, as an int32 (threads, values) array."""
    if layout.rank != 2:
        raise ValueError(f"a TV layout has rank 2 (thread, value), got {layout}")
    thr, val = layout[0], layout[1]
    t = np.array([thr(i) for i in range(int(size(thr)))], dtype=np.int64)
    v = np.array([val(i) for i in range(int(size(val)))], dtype=np.int64)
    table = (t[:, None] + v[None, :]).astype(np.int32)
    table.flags.writeable = False
    return table


@dataclass(frozen=True)
class MmaTables:
    """Gather/scatter tables of one atom: column-major tile index per (thread, value)."""

    a: np.ndarray  # (T, Va): m + k*M into A (MxK)
    b: np.ndarray  # (T, Vb): n + k*N into B (NxK)
    c: np.ndarray  # (T, Vc): m + n*M into C and D (MxN)

    def table(self, operand: Operand) -> np.ndarray:
        """The table of `operand` ('a', 'b' or 'c')."""
        return {"a": self.a, "b": self.b, "c": self.c}[operand]


def mma_tables(atom: MmaAtom) -> MmaTables:
    """The gather/scatter tables of `atom`, derived from its A/B/C layouts alone."""
    return MmaTables(
        tv_index_table(atom.a_layout), tv_index_table(atom.b_layout), tv_index_table(atom.c_layout)
    )


def tile_shape(atom: MmaAtom, operand: Operand) -> tuple[int, int]:
    """(rows, cols) of the operand's tile: A is MxK, B is NxK, C and D are MxN."""
    m, n, k = atom.shape_mnk
    return {"a": (m, k), "b": (n, k), "c": (m, n)}[operand]


@functools.cache
def _threads_share_values(layout: Layout) -> bool:
    """Whether every thread holds the same values (wgmma's stride-0 smem operands)."""
    table = tv_index_table(layout)
    return table.shape[0] > 1 and bool((table == table[0]).all())


def _layout(atom: MmaAtom, operand: Operand) -> Layout:
    return {"a": atom.a_layout, "b": atom.b_layout, "c": atom.c_layout}[operand]


def row_major_table(atom: MmaAtom, operand: Operand) -> np.ndarray:
    """The operand's table as row-major indices ``row*cols + col`` instead of column-major."""
    rows, cols = tile_shape(atom, operand)
    table = mma_tables(atom).table(operand)
    return (table % rows) * cols + table // rows


def gather(atom: MmaAtom, operand: Operand, tile: np.ndarray) -> np.ndarray:
    """frag[t, v] = tile[row, col] of the coordinate that (t, v) owns."""
    if tile.shape != tile_shape(atom, operand):
        raise ValueError(
            f"{atom.name}: {operand} tile is {tile_shape(atom, operand)}, got {tile.shape}"
        )
    table = mma_tables(atom).table(operand)
    flat = tile.reshape(-1, order="F")
    if _threads_share_values(_layout(atom, operand)):
        return np.broadcast_to(flat[table[0]], table.shape)  # a read-only view, not a copy
    return flat[table]


def scatter(atom: MmaAtom, operand: Operand, frags: np.ndarray) -> np.ndarray:
    """The tile whose gather is `frags`; values that several threads hold must agree."""
    table = mma_tables(atom).table(operand)
    if frags.shape != table.shape:
        raise ValueError(f"{atom.name}: {operand} fragments are {table.shape}, got {frags.shape}")
    rows, cols = tile_shape(atom, operand)
    flat = np.zeros(rows * cols, dtype=frags.dtype)
    if _threads_share_values(_layout(atom, operand)):
        flat[table[0]] = frags[0]
        agree = bool((frags == frags[0]).all())
    else:
        flat[table.reshape(-1)] = frags.reshape(-1)
        agree = np.array_equal(flat[table], frags)
    if not agree:
        raise ValueError(f"{atom.name}: threads disagree on a shared {operand} value")
    return flat.reshape((rows, cols), order="F")


# Numpy type the emulator computes and rounds in, per dtype. Products of the narrow
# float types are exact in f64; the hardware's accumulation order is not modelled.
_NP_DTYPE = {
    "f16": np.float16,
    "bf16": np.float32,
    "tf32": np.float32,
    "f32": np.float32,
    "f64": np.float64,
    "e4m3": np.float32,
    "e5m2": np.float32,
    "s8": np.int8,
    "s32": np.int32,
}


def numpy_dtype(dtype: str) -> type[np.generic]:
    """The numpy type that holds values of `dtype` in the emulator."""
    return _NP_DTYPE[dtype]


def emulate_mma(
    atom: MmaAtom, a_frags: np.ndarray, b_frags: np.ndarray, c_frags: np.ndarray
) -> np.ndarray:
    """d[t, v] for D = A·Bᵀ + C, from per-thread fragments (threads, values) of A, B and C."""
    a = _as_operand(scatter(atom, "a", a_frags), atom.a_type)
    b = _as_operand(scatter(atom, "b", b_frags), atom.b_type)
    c = scatter(atom, "c", c_frags)
    if atom.d_type == "s32":
        # Integer MMA wraps modulo 2^32, like the hardware without .satfinite.
        d = (a.astype(np.int64) @ b.astype(np.int64).T + c.astype(np.int64)).astype(np.int32)
    else:
        d = a.astype(np.float64) @ b.astype(np.float64).T + c.astype(np.float64)
        d = d.astype(_NP_DTYPE[atom.d_type])
    return gather(atom, "c", d)


def _as_operand(tile: np.ndarray, dtype: str) -> np.ndarray:
    """An A or B tile as the tensor cores read it: a tf32 operand is an f32 register of
    which the low 13 mantissa bits are ignored (truncated toward zero; measured on an
    H100 with mma.sync m16n8k8: truncation matched every D word, rounding 56%)."""
    if dtype != "tf32":
        return tile
    bits = np.ascontiguousarray(tile, dtype=np.float32).view(np.uint32)
    return (bits & np.uint32(0xFFFFE000)).view(np.float32)


# ------------------------------------------------------------------------------ registers


def _minifloat_codes(exp_bits: int, man_bits: int, finite_top: bool) -> dict[float, int]:
    """Finite value -> 8-bit code of a float8 format (e4m3fn when finite_top, else e5m2)."""
    bias = (1 << (exp_bits - 1)) - 1
    codes: dict[float, int] = {}
    for code in range(255, -1, -1):  # descending, so +0.0 keeps code 0
        sign = -1.0 if code & 0x80 else 1.0
        e = (code >> man_bits) & ((1 << exp_bits) - 1)
        m = code & ((1 << man_bits) - 1)
        if e == (1 << exp_bits) - 1 and (not finite_top or m == (1 << man_bits) - 1):
            continue  # inf / NaN
        if e == 0:
            value = m / (1 << man_bits) * 2.0 ** (1 - bias)
        else:
            value = (1 + m / (1 << man_bits)) * 2.0 ** (e - bias)
        codes[sign * value] = code
    return codes


_FP8_CODES = {"e4m3": _minifloat_codes(4, 3, True), "e5m2": _minifloat_codes(5, 2, False)}


def to_bits(values: np.ndarray, dtype: str) -> np.ndarray:
    """The bit patterns (uint64) of `values` stored as `dtype`; narrow floats must be exact."""
    values = np.asarray(values)
    if dtype in ("f16",):
        return values.astype(np.float16).view(np.uint16).astype(np.uint64)
    if dtype in ("f32", "tf32", "bf16"):
        bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
        if dtype == "bf16":
            if np.any(bits & 0xFFFF):
                raise ValueError("value not exactly representable in bf16")
            return bits >> 16
        return bits  # tf32 is the top 19 bits of an f32 register
    if dtype == "f64":
        return values.astype(np.float64).view(np.uint64)
    if dtype in ("s8", "s32"):
        width = dtype_row(dtype).bits
        return values.astype(np.int64).astype(np.uint64) & np.uint64((1 << width) - 1)
    if dtype in _FP8_CODES:
        codes = _FP8_CODES[dtype]
        try:
            return np.array([codes[float(x)] for x in values.reshape(-1)], dtype=np.uint64).reshape(
                values.shape
            )
        except KeyError as e:
            raise ValueError(f"value {e.args[0]} not exactly representable in {dtype}") from e
    raise ValueError(f"no bit encoding for dtype {dtype!r}")


def from_bits(bits: np.ndarray, dtype: str) -> np.ndarray:
    """Values of `dtype` from their bit patterns (the inverse of to_bits)."""
    bits = np.asarray(bits).astype(np.uint64)
    if dtype == "f16":
        return bits.astype(np.uint16).view(np.float16)
    if dtype in ("f32", "tf32"):
        return bits.astype(np.uint32).view(np.float32)
    if dtype == "bf16":
        return (bits << np.uint64(16)).astype(np.uint32).view(np.float32)
    if dtype == "f64":
        return bits.view(np.float64)
    if dtype == "s32":
        return bits.astype(np.uint32).view(np.int32)
    if dtype == "s8":
        return bits.astype(np.uint8).view(np.int8)
    if dtype in _FP8_CODES:
        decode = {code: value for value, code in _FP8_CODES[dtype].items()}
        return np.vectorize(decode.__getitem__, otypes=[np.float32])(bits)
    raise ValueError(f"no bit encoding for dtype {dtype!r}")


def pack_registers(
    atom: MmaAtom, operand: Literal["a", "b", "c", "d"], frags: np.ndarray
) -> np.ndarray:
    """Register words (threads, count) of a fragment: value v sits in register v // p, bits
    ``(v % p) * width`` up, for p values of `width` bits per register (little-endian, as CuTe's
    recast<uint32_t>)."""
    dtype = {"a": atom.a_type, "b": atom.b_type, "c": atom.c_type, "d": atom.d_type}[operand]
    width = dtype_row(dtype).bits
    per = atom.values_per_register(operand)
    bits = to_bits(frags, dtype).reshape(frags.shape[0], -1, per)
    shifts = (np.arange(per, dtype=np.uint64) * np.uint64(width))[None, None, :]
    return np.bitwise_or.reduce(bits << shifts, axis=2)


def unpack_registers(
    atom: MmaAtom, operand: Literal["a", "b", "c", "d"], words: np.ndarray
) -> np.ndarray:
    """Fragment values (threads, values) from register words: the inverse of pack_registers."""
    dtype = {"a": atom.a_type, "b": atom.b_type, "c": atom.c_type, "d": atom.d_type}[operand]
    width = dtype_row(dtype).bits
    per = atom.values_per_register(operand)
    shifts = (np.arange(per, dtype=np.uint64) * np.uint64(width))[None, None, :]
    mask = np.uint64((1 << width) - 1)
    bits = (np.asarray(words, dtype=np.uint64)[:, :, None] >> shifts) & mask
    return from_bits(bits.reshape(words.shape[0], -1), dtype)


# ------------------------------------------------------------------------------ copy atoms


@dataclass(frozen=True)
class CopyTables:
    """Byte tables of a copy atom, from its bit layouts: ``src[t, j]`` (``dst[t, j]``) is the
    byte of the copied block that byte j of thread t's source (destination) value holds.

    `readers` are the threads whose source value the instruction reads, one per source
    byte of the block: the lowest thread that supplies it (ldmatrix reads the row
    addresses of the first 8 * num lanes; the others repeat them, stride 0 in SrcLayout).
    """

    src: np.ndarray
    dst: np.ndarray
    readers: tuple[int, ...]


def _byte_table(layout: Layout) -> np.ndarray:
    bits = tv_index_table(layout)
    if (
        bits.shape[1] % 8
        or np.any(bits[:, ::8] % 8)
        or not np.array_equal(bits[:, ::8] + 7, bits[:, 7::8])
    ):
        raise ValueError(f"the copy layout {layout} does not move whole bytes")
    return bits[:, ::8] // 8


@functools.cache
def copy_tables(atom: CopyAtom) -> CopyTables:
    """The byte tables of `atom` (its SrcLayout and DstLayout, in bytes)."""
    src, dst = _byte_table(atom.src_layout), _byte_table(atom.dst_layout)
    seen: set[int] = set()
    readers = []
    for t in range(src.shape[0]):
        fresh = set(src[t].tolist()) - seen
        if fresh:
            readers.append(t)
            seen |= fresh
    if seen != set(range(atom.total_bits // 8)):
        raise ValueError(f"{atom.name}: the source side does not cover the block")
    return CopyTables(src, dst, tuple(readers))


def emulate_copy(atom: CopyAtom, src: np.ndarray) -> np.ndarray:
    """dst[t] (uint8, threads x destination bytes) from src[t] (uint8, threads x source
    bytes); rows of threads that are not `readers` are ignored."""
    tables = copy_tables(atom)
    if src.shape != tables.src.shape:
        raise ValueError(f"{atom.name}: source bytes are {tables.src.shape}, got {src.shape}")
    block = np.zeros(atom.total_bits // 8, dtype=np.uint8)
    for t in reversed(tables.readers):  # the lowest thread supplying a byte wins
        block[tables.src[t]] = src[t]
    return block[tables.dst]
