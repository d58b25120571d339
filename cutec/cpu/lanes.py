"""LLVM text for 32-lane values: types, constants and the intrinsics the warp code declares.

Every SSA value of the thread IR is, per warp, a vector of 32 lanes: `<32 x T>`.
A `vector<NxT>` value is N such lane vectors (its components). Pointers are
i64 lanes holding ``buffer id << 48 | byte offset`` (the offset sign-extended
from 48 bits), so one number carries what the bounds check needs.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from cutec.ir.dialects.gpu import PointerType
from cutec.ir.types import FloatType, IndexType, IntegerType, Type, VectorType

LANES = 32
OFFSET_BITS = 48  # a pointer's low bits: its byte offset in its buffer

# err[4] of a failed check: what failed.
ERR_LOAD, ERR_STORE, ERR_BARRIER, ERR_DIVIDE = 1, 2, 3, 4
ERR_SHARED, ERR_SRC_SIZE, ERR_HOOK = 5, 6, 7  # a shared-memory check, cp.async src-size, a hook
ERR_COLLECTIVE = 8  # a warp-collective op reached with a lane not live
ERR_ATOMIC = 9  # an atomic read-modify-write out of bounds or misaligned
ERR_DESC = 10  # a gmma_desc of an address no descriptor holds
ERR_MAPA = 11  # a mapa to a rank outside the cluster (err[2]: the rank, err[5]: its CTAs)
ERR_REMOTE = 12  # another CTA's shared byte raced (err[5]: the access's checks kind)

# The i64 words of a warp's ``info``: block id, block dim, grid dim (3 each), the warp's
# index, the barrier interval and the CTA's first (cutec.cpu.checks), the cp.async hook,
# the shadow check, the warp-op hook (mma.sync, cutec.cpu.native_collective).
INFO_EPOCH, INFO_START, INFO_HOOK, INFO_SHADOW, INFO_WARP_HOOK = 10, 11, 12, 13, 14
# bytes per buffer in ``bufs``: base, size, shadow (0: none), and for another CTA's
# buffer its remote-check record (cutec.cpu.codegen_ops._remote_check; 0: none)
BUF_ENTRY = 32


@dataclass
class Loc:
    """Where a value's component lives: a frame slot (byte offset) or a constant."""

    slot: int | None = None
    const: str | None = None
    ty: str = "i64"


class Unsupported(Exception):
    """The kernel uses something the native backend does not run (the caller falls back)."""


# tf32 values are f32 values, as in the interpreter (which stores, loads and rounds them
# as f32): only the mma.sync that consumes them knows the type (docs/cpu-backend.md).
_FLOATS = {"f16": "half", "bf16": "bfloat", "f32": "float", "tf32": "float", "f64": "double"}


def scalar_type(t: Type) -> str:
    """The LLVM scalar type of a thread-IR scalar type."""
    if isinstance(t, IndexType | PointerType):
        return "i64"
    if isinstance(t, IntegerType) and t.width in (1, 8, 16, 32, 64):
        return f"i{t.width}"
    if isinstance(t, FloatType) and t.kind in _FLOATS:
        return _FLOATS[t.kind]
    raise Unsupported(f"type {t}")


def components(t: Type) -> tuple[Type, int]:
    """(element type, number of lane vectors) of a value type."""
    if isinstance(t, VectorType):
        if len(t.shape) != 1:
            raise Unsupported(f"type {t}")
        return t.element, t.shape[0]
    return t, 1


def vec(t: str) -> str:
    return f"<{LANES} x {t}>"


def suffix(t: str) -> str:
    """The overload suffix of an intrinsic on `<32 x t>`: v32f32, v32i64 ..."""
    short = {"half": "f16", "bfloat": "bf16", "float": "f32", "double": "f64"}.get(t, t)
    return f"v{LANES}{short}"


def slot_bytes(t: str) -> int:
    """Frame bytes of one `<32 x t>` slot (64-byte aligned)."""
    size = {"i1": 1, "i8": 1, "i16": 2, "half": 2, "bfloat": 2, "i32": 4, "float": 4}.get(t, 8)
    return max(64, LANES * size)


def scalar_literal(value: int | float, t: str) -> str:
    if t == "i1":
        return "true" if value else "false"
    if t.startswith("i"):
        return str(int(value))
    if t == "half":
        bits = int(np.array([value], dtype=np.float16).view(np.uint16)[0])
        return f"0xH{bits:04X}"
    if t == "bfloat":  # a bf16 value: the high half of its f32 bits
        bits = int(np.array([value], dtype=np.float32).view(np.uint32)[0])
        if bits & 0xFFFF and value == value:
            raise ValueError(f"{value} is not a bf16 value")
        return f"0xR{bits >> 16:04X}"
    # float and double take a double's hex; a float's value is exact in a double.
    return "0x" + struct.pack(">d", float(value)).hex().upper()


def splat(value: int | float, t: str) -> str:
    """A `<32 x t>` constant of `value` in every lane."""
    return f"splat ({t} {scalar_literal(value, t)})"


def lane_ids() -> str:
    """The constant <0, 1, ..., 31> as i64."""
    return "<" + ", ".join(f"i64 {i}" for i in range(LANES)) + ">"
