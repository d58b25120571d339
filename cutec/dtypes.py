"""Element types: one row per type, every fact cutec needs about it in one place.

A row is keyed by its atom-library name (CuTe's MMA names: ``f16``, ``s8``,
``e4m3`` ...). `ir` is the printed name of the IR type (``f8E4M3FN``, ``i8``;
None where the IR has none: its integers are signless, so ``u8`` has no type of
its own), and cutec/ir/types.py maps it to the type object. `bits` is CuTe's
``sizeof_bits``: the storage, so a bool takes 8 and tf32 takes 32. `ptx` is the
PTX type suffix (``ld.global.<ptx>``, ``cvt.rn.<ptx>.f32``) and `reg` the
register class a lone value lives in: PTX has no 8-bit registers, so 8-bit
values sit in ``b16`` ones. `numpy` names the numpy / ml_dtypes dtype that
holds the value (tf32 is kept as float32); `llvm` the LLVM IR type.

This module sits in the bottom layer: it imports nothing of cutec, and numpy
only when a dtype object is asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class UnknownDTypeError(ValueError):
    """An element type cutec does not know; the message lists the known ones."""


@dataclass(frozen=True)
class DType:
    """One element type."""

    name: str  # the atom library's name, as in CuTe's MMA names: f16, s8, e4m3
    ir: str | None  # printed IR type; None: the IR has no such type
    cute: str  # CuTe's C++ type
    bits: int  # sizeof_bits: storage bits
    ptx: str  # PTX type suffix
    reg: str  # PTX register class one value is held in
    numpy: str | None  # numpy / ml_dtypes dtype name; None: numpy has none
    llvm: str  # LLVM IR type
    aliases: tuple[str, ...] = ()  # other names a kernel may write

    @property
    def is_float(self) -> bool:
        return self.ptx in ("f64", "f32", "tf32", "f16", "bf16", "e4m3", "e5m2")

    @property
    def is_signed(self) -> bool:
        return self.ptx.startswith("s")


def _row(
    name: str,
    ir: str | None,
    cute: str,
    bits: int,
    reg: str,
    numpy: str | None,
    llvm: str,
    *aliases: str,
    ptx: str | None = None,
) -> DType:
    return DType(name, ir, cute, bits, ptx or name, reg, numpy, llvm, aliases)


DTYPES: dict[str, DType] = {
    d.name: d
    for d in (
        _row("f64", "f64", "double", 64, "f64", "float64", "double", "double"),
        _row("f32", "f32", "float", 32, "f32", "float32", "float", "float"),
        _row("tf32", "tf32", "tfloat32_t", 32, "b32", "float32", "float"),
        _row("f16", "f16", "half_t", 16, "b16", "float16", "half", "half"),
        _row("bf16", "bf16", "bfloat16_t", 16, "b16", "bfloat16", "bfloat"),
        _row("e4m3", "f8E4M3FN", "float_e4m3_t", 8, "b16", "float8_e4m3fn", "i8", "f8e4m3"),
        _row("e5m2", "f8E5M2", "float_e5m2_t", 8, "b16", "float8_e5m2", "i8", "f8e5m2"),
        _row("s64", "i64", "int64_t", 64, "b64", "int64", "i64", "i64", "int64"),
        _row("s32", "i32", "int32_t", 32, "b32", "int32", "i32", "i32", "int32"),
        _row("s16", "i16", "int16_t", 16, "b16", "int16", "i16", "i16", "int16"),
        _row("s8", "i8", "int8_t", 8, "b16", "int8", "i8", "i8", "int8"),
        _row("u64", None, "uint64_t", 64, "b64", "uint64", "i64", "uint64_t"),
        _row("u32", None, "uint32_t", 32, "b32", "uint32", "i32", "uint32_t"),
        _row("u16", None, "uint16_t", 16, "b16", "uint16", "i16", "uint16_t"),
        _row("u8", None, "uint8_t", 8, "b16", "uint8", "i8", "uint8_t"),
        _row("u128", None, "uint128_t", 128, "b32", None, "i128", "uint128_t", ptx="b128"),
        # A predicate is one bit in a register, a byte in memory (CuTe's sizeof_bits<bool>).
        _row("bool", "i1", "bool", 8, "pred", "bool", "i1", "i1", ptx="pred"),
    )
}

# PTX register class -> the register-name prefix cutec declares it with.
REGISTER_PREFIX: dict[str, str] = {
    "pred": "%p",
    "b16": "%rs",
    "b32": "%r",
    "b64": "%rd",
    "f32": "%f",
    "f64": "%fd",
}

# Operand types of PTX templates that are no element type's suffix: untyped bits,
# and the packed pairs mma.sync and cvt read from one 32-bit register.
_OTHER_REGISTER_TYPES = {
    "b16": "b16",
    "b32": "b32",
    "b64": "b64",
    "f16x2": "b32",
    "bf16x2": "b32",
}

_BY_IR = {d.ir: d for d in DTYPES.values() if d.ir is not None}
_BY_ALIAS = {a: d for d in DTYPES.values() for a in (d.name, *d.aliases)}


def dtype(name: str) -> DType:
    """The row called `name` (or one of its aliases: ``half``, ``int8``, ``uint32_t``)."""
    found = _BY_ALIAS.get(name)
    if found is None:
        raise UnknownDTypeError(f"unknown element type {name!r}; known: {', '.join(DTYPES)}")
    return found


def dtype_of_ir(ir_name: str) -> DType:
    """The row of the IR type printed `ir_name` (``f8E4M3FN`` -> e4m3)."""
    found = _BY_IR.get(ir_name)
    if found is None:
        raise UnknownDTypeError(f"IR type {ir_name} is no element type; known: {', '.join(_BY_IR)}")
    return found


def register_class(ptx_type: str) -> str:
    """The register class holding a PTX operand of type `ptx_type` (``s32`` -> ``b32``)."""
    if ptx_type in _OTHER_REGISTER_TYPES:
        return _OTHER_REGISTER_TYPES[ptx_type]
    for d in DTYPES.values():
        if d.ptx == ptx_type:
            return d.reg
    known = sorted({d.ptx for d in DTYPES.values()} | _OTHER_REGISTER_TYPES.keys())
    raise UnknownDTypeError(f"no register holds PTX type {ptx_type!r}; known: {', '.join(known)}")


def numpy_dtype(d: DType) -> Any:
    """The numpy dtype of a row (ml_dtypes for bf16 and the fp8 types)."""
    # Imported here, not at the top: start-up time (numpy is only needed for data).
    import ml_dtypes
    import numpy as np

    if d.numpy is None:
        raise UnknownDTypeError(f"numpy has no {d.bits}-bit type for {d.name}")
    if hasattr(ml_dtypes, d.numpy) and not hasattr(np, d.numpy):
        return np.dtype(getattr(ml_dtypes, d.numpy))
    return np.dtype(d.numpy)
