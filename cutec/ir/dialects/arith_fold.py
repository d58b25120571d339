"""Value helpers for folding arith ops: wrapping integers and rounding floats."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

from cutec.dtypes import numpy_dtype
from cutec.ir.attributes import Attribute
from cutec.ir.core import Value
from cutec.ir.types import FloatType, IntegerType, Type, bit_width, dtype_of

# Floats whose rounding the struct module does (f16 'e', f32 'f'), without numpy.
_STRUCT_CODES = {"f32": "<f", "f16": "<e"}

# One entry per result: a constant to materialise or an existing value.
FoldResult = Sequence[Attribute | Value] | None


def to_signed(value: int, width: int) -> int:
    """The two's-complement reading of the low `width` bits of `value`."""
    if width == 1:
        return value & 1  # i1 reads as 0/1: true is 1, not -1
    value &= (1 << width) - 1
    return value - (1 << width) if value >> (width - 1) else value


def to_unsigned(value: int, width: int) -> int:
    """The unsigned reading of the low `width` bits of `value`."""
    return value & ((1 << width) - 1)


def int_value(value: int, type: Type) -> int:
    """`value` wrapped to `type` in the stored (signed) form."""
    return to_signed(value, bit_width(type))


def round_float(value: float, type: Type) -> float:
    """`value` rounded to nearest-even in the precision of `type`."""
    if not isinstance(type, FloatType) or type.kind == "f64":
        return value
    code = _STRUCT_CODES.get(type.kind)
    if code is not None:
        try:  # struct rounds to nearest-even; it refuses values that overflow to inf
            return struct.unpack(code, struct.pack(code, value))[0]
        except OverflowError:
            pass
    # Imported here, not at the top: start-up time (only folding floats needs numpy).
    import numpy as np

    dtype = numpy_dtype(dtype_of(type))
    with np.errstate(over="ignore", invalid="ignore"):
        return float(np.asarray(value, dtype=np.float64).astype(dtype))


# tf32 keeps f32's sign and exponent and the top 10 of its 23 mantissa bits: rounding
# clears the low 13 bits of the f32 pattern. A NaN becomes 0x7FFFE000, the canonical NaN
# with those bits clear, which is what cvt.rn.tf32.f32 writes on an H200.
TF32_DROPPED_BITS = 13
TF32_NAN_BITS = 0x7FFFE000


def tf32_words(bits: Any) -> Any:
    """f32 patterns (a uint32 array) rounded to tf32 precision, to nearest even, the low 13
    bits zero: ``(bits + 0xFFF + lsb) & ~0x1FFF``, lsb the kept part's lowest bit; the carry
    moves into the exponent, up to infinity, as rounding should. A NaN becomes
    TF32_NAN_BITS. The interpreter's `round_tf32` and the CPU model of a TFLOAT32 map's
    TMA load (cutec/cpu/tma.py) both round through it."""
    import numpy as np

    bits = np.asarray(bits, dtype=np.uint32)
    wide = bits.astype(np.uint64)
    lsb = (wide >> TF32_DROPPED_BITS) & 1
    half = (1 << (TF32_DROPPED_BITS - 1)) - 1
    dropped = np.uint64((1 << TF32_DROPPED_BITS) - 1)
    rounded = ((wide + half + lsb) & ~dropped).astype(np.uint32)
    nan = ((bits >> 23) & 0xFF == 0xFF) & (bits & 0x7FFFFF != 0)
    return np.where(nan, np.uint32(TF32_NAN_BITS), rounded).astype(np.uint32)


def round_tf32(value: float) -> float:
    """`value` rounded to f32 (nearest even), then to tf32 precision (nearest even):
    what ``arith.truncf %x : f32 to tf32`` computes (PTX ``cvt.rn.tf32.f32`` on sm_90)."""
    (bits,) = struct.unpack("<I", struct.pack("<f", round_float(value, FloatType("f32"))))
    return struct.unpack("<f", struct.pack("<I", int(tf32_words(bits))))[0]


def is_int_type(t: Type) -> bool:
    return isinstance(t, IntegerType)
