"""Casts of the arith dialect: ``%b = arith.<cast> %a : from to to``.

Each cast states which kinds of types it connects and, for integer and float
resizes, which way the width must move.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from typing import ClassVar

from cutec.ir.attributes import Attribute, FloatAttr, IntegerAttr
from cutec.ir.core import Operation, Value
from cutec.ir.dialects.arith_fold import (
    FoldResult,
    int_value,
    round_float,
    round_tf32,
    to_signed,
    to_unsigned,
)
from cutec.ir.opdef import AnyType, operand_def, result_def
from cutec.ir.traits import Pure
from cutec.ir.types import (
    FloatType,
    IndexType,
    IntegerType,
    Type,
    VectorType,
    bit_width,
    element_type,
)


def _kind(t: Type) -> str:
    t = element_type(t)
    if isinstance(t, IntegerType):
        return "int"
    if isinstance(t, IndexType):
        return "index"
    if isinstance(t, FloatType):
        return "float"
    return "other"


class CastOp(Operation):
    """One operand, one result; `source`/`target` name the allowed type kinds and
    `widths` says whether the element width must grow ('>'), shrink ('<') or either."""

    traits = (Pure(),)
    input = operand_def(AnyType)
    result = result_def(AnyType)
    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"
    source: ClassVar[tuple[str, ...]]
    target: ClassVar[tuple[str, ...]]
    widths: ClassVar[str | None] = None

    def __init__(self, value: Value, to: Type) -> None:
        super().__init__(operands=[value], result_types=[to])

    def verify_(self) -> None:
        src, dst = self.input.type, self.result.type
        if getattr(src, "shape", None) != getattr(dst, "shape", None):
            raise self.error(f"cannot cast {src} to {dst}: shapes differ")
        if _kind(src) not in self.source or _kind(dst) not in self.target:
            raise self.error(
                f"casts {'/'.join(self.source)} to {'/'.join(self.target)}, not {src} to {dst}"
            )
        if self.widths is not None:
            ws, wd = bit_width(element_type(src)), bit_width(element_type(dst))
            if (self.widths == ">" and not wd > ws) or (self.widths == "<" and not wd < ws):
                word = "wider" if self.widths == ">" else "narrower"
                raise self.error(f"result {dst} must be {word} than operand {src}")

    def fold(self, constants: Sequence[Attribute | None]) -> FoldResult:
        (a,) = constants
        if a is None or isinstance(self.result.type, VectorType):
            return None
        value = self.convert(a)
        return None if value is None else [value]

    def convert(self, a: Attribute) -> Attribute | None:
        return None


def _int_attr(value: int, t: Type) -> IntegerAttr:
    return IntegerAttr(int_value(value, t), t)


class ExtSIOp(CastOp):
    """Sign-extend: ``%b = arith.extsi %a : i16 to i32``."""

    name = "arith.extsi"
    source = target = ("int",)
    widths = ">"

    def convert(self, a: Attribute) -> Attribute | None:
        assert isinstance(a, IntegerAttr)
        return _int_attr(to_signed(a.value, bit_width(a.type)), self.result.type)


class ExtUIOp(CastOp):
    """Zero-extend: ``%b = arith.extui %a : i1 to i32``."""

    name = "arith.extui"
    source = target = ("int",)
    widths = ">"

    def convert(self, a: Attribute) -> Attribute | None:
        assert isinstance(a, IntegerAttr)
        return _int_attr(to_unsigned(a.value, bit_width(a.type)), self.result.type)


class TruncIOp(CastOp):
    """Keep the low bits: ``%b = arith.trunci %a : i32 to i16``."""

    name = "arith.trunci"
    source = target = ("int",)
    widths = "<"

    def convert(self, a: Attribute) -> Attribute | None:
        assert isinstance(a, IntegerAttr)
        return _int_attr(a.value, self.result.type)


class IndexCastOp(CastOp):
    """Signed conversion between index and an integer: ``arith.index_cast %a : i32 to index``."""

    name = "arith.index_cast"
    source = target = ("int", "index")

    def verify_(self) -> None:
        super().verify_()
        kinds = {_kind(self.input.type), _kind(self.result.type)}
        if kinds != {"int", "index"}:
            raise self.error("casts between index and an integer type")

    def convert(self, a: Attribute) -> Attribute | None:
        assert isinstance(a, IntegerAttr)
        return _int_attr(to_signed(a.value, bit_width(a.type)), self.result.type)


class IndexCastUIOp(IndexCastOp):
    """Unsigned conversion between index and an integer: ``arith.index_castui``."""

    name = "arith.index_castui"

    def convert(self, a: Attribute) -> Attribute | None:
        assert isinstance(a, IntegerAttr)
        return _int_attr(to_unsigned(a.value, bit_width(a.type)), self.result.type)


class SIToFPOp(CastOp):
    """Signed integer to float, rounding to nearest: ``arith.sitofp %a : i32 to f32``."""

    name = "arith.sitofp"
    source = ("int",)
    target = ("float",)

    def convert(self, a: Attribute) -> Attribute | None:
        assert isinstance(a, IntegerAttr)
        t = self.result.type
        return FloatAttr(round_float(float(to_signed(a.value, bit_width(a.type))), t), t)


class UIToFPOp(CastOp):
    """Unsigned integer to float: ``arith.uitofp %a : i32 to f32``."""

    name = "arith.uitofp"
    source = ("int",)
    target = ("float",)

    def convert(self, a: Attribute) -> Attribute | None:
        assert isinstance(a, IntegerAttr)
        t = self.result.type
        return FloatAttr(round_float(float(to_unsigned(a.value, bit_width(a.type))), t), t)


def _float_to_int(value: float, t: Type, signed: bool) -> IntegerAttr | None:
    """Truncation toward zero; out of range or NaN is poison and not folded."""
    if math.isnan(value) or math.isinf(value):
        return None
    v = math.trunc(value)
    w = bit_width(t)
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)
    if not lo <= v <= hi:
        return None
    return _int_attr(v, t)


class FPToSIOp(CastOp):
    """Float to signed integer, toward zero: ``arith.fptosi %a : f32 to i32``."""

    name = "arith.fptosi"
    source = ("float",)
    target = ("int",)

    def convert(self, a: Attribute) -> Attribute | None:
        assert isinstance(a, FloatAttr)
        return _float_to_int(a.value, self.result.type, signed=True)


class FPToUIOp(CastOp):
    """Float to unsigned integer, toward zero: ``arith.fptoui %a : f32 to i32``."""

    name = "arith.fptoui"
    source = ("float",)
    target = ("int",)

    def convert(self, a: Attribute) -> Attribute | None:
        assert isinstance(a, FloatAttr)
        return _float_to_int(a.value, self.result.type, signed=False)


class ExtFOp(CastOp):
    """Widen a float exactly: ``%b = arith.extf %a : f16 to f32``."""

    name = "arith.extf"
    source = target = ("float",)
    widths = ">"

    def convert(self, a: Attribute) -> Attribute | None:
        assert isinstance(a, FloatAttr)
        return FloatAttr(a.value, self.result.type)


class TruncFOp(CastOp):
    """Narrow a float, rounding to nearest even: ``%b = arith.truncf %a : f32 to f16``.

    f32 → tf32 has equal storage width and is allowed: it rounds the mantissa to tf32's
    10 bits and clears the 13 below them (a NaN becomes 0x7FFFE000; `round_tf32`).
    """

    name = "arith.truncf"
    source = target = ("float",)

    def verify_(self) -> None:
        super().verify_()
        src, dst = element_type(self.input.type), element_type(self.result.type)
        if bit_width(dst) > bit_width(src) or src == dst:
            raise self.error(f"result {dst} must be narrower than operand {src}")

    def convert(self, a: Attribute) -> Attribute | None:
        assert isinstance(a, FloatAttr)
        t = self.result.type
        if isinstance(t, FloatType) and t.kind == "tf32":
            return FloatAttr(round_tf32(a.value), t)
        return FloatAttr(round_float(a.value, t), t)


class BitcastOp(CastOp):
    """Reinterpret bits between types of equal width: ``arith.bitcast %a : f32 to i32``."""

    name = "arith.bitcast"
    source = target = ("int", "float")

    def verify_(self) -> None:
        super().verify_()
        src, dst = element_type(self.input.type), element_type(self.result.type)
        if bit_width(src) != bit_width(dst):
            raise self.error(f"{src} and {dst} differ in width")

    def convert(self, a: Attribute) -> Attribute | None:
        bits = _bits_of(a)
        return None if bits is None else _from_bits(bits, self.result.type)


# struct codes of the scalar types a bitcast folds between (tf32 is stored as an f32).
_FLOAT_CODES = {"f16": "<e", "f32": "<f", "tf32": "<f", "f64": "<d"}
_UINT_CODES = {16: "<H", 32: "<I", 64: "<Q"}


def _bits_of(a: Attribute) -> int | None:
    """The stored bits of a scalar constant, or None for a type not folded (bf16, fp8)."""
    t = a.type
    if isinstance(a, IntegerAttr):
        return to_unsigned(a.value, bit_width(t))
    if isinstance(a, FloatAttr) and isinstance(t, FloatType) and t.kind in _FLOAT_CODES:
        code = _FLOAT_CODES[t.kind]
        return struct.unpack(_UINT_CODES[bit_width(t)], struct.pack(code, a.value))[0]
    return None


def _from_bits(bits: int, t: Type) -> Attribute | None:
    if isinstance(t, IntegerType):
        return _int_attr(bits, t)
    if isinstance(t, FloatType) and t.kind in _FLOAT_CODES:
        code = _FLOAT_CODES[t.kind]
        return FloatAttr(struct.unpack(code, struct.pack(_UINT_CODES[bit_width(t)], bits))[0], t)
    return None


CAST_OPS: tuple[type[Operation], ...] = (
    ExtSIOp,
    ExtUIOp,
    TruncIOp,
    IndexCastOp,
    IndexCastUIOp,
    SIToFPOp,
    UIToFPOp,
    FPToSIOp,
    FPToUIOp,
    ExtFOp,
    TruncFOp,
    BitcastOp,
)
