"""The PTX emitter's tables: how an IR type lives in PTX, and op → instruction template.

Every type fact comes from cutec/dtypes.py (the PTX suffix and the register
class of each element type); this module only says which row an IR type is and
which suffix an instruction takes. A template names the suffix it needs:
``{s}`` signed integer (``s32``), ``{u}`` unsigned (``u32``), ``{b}`` untyped
bits (``b32``, ``pred`` for i1) and ``{f}`` float (``f32``). A type without the
suffix a template asks for cannot be emitted by it (``add.{s}`` on i1).

Widths (docs/abi.md): ``index`` is 64-bit (``s64`` in ``%rd`` registers), as
`cutec.ir.types.bit_width` says; every pointer, global or shared, is a 64-bit
address of its own state space (``u64``).
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from functools import cache

from cutec.dtypes import REGISTER_PREFIX, DType, UnknownDTypeError, dtype
from cutec.ir.dialects import arith
from cutec.ir.dialects import math as math_ops
from cutec.ir.dialects.gpu import PointerType
from cutec.ir.types import FloatType, IndexType, IntegerType, Type, dtype_of
from cutec.target import AddressSpace

# The element-type rows index and pointers are held as (see the module docstring).
INDEX_DTYPE = dtype("s64")
POINTER_DTYPE = dtype("u64")

# Floats the emitter computes with directly; f16 and bf16 are widened to f32 first
# (legalize.py), tf32 and the fp8 types are storage only.
ARITH_FLOATS = frozenset({"f32", "f64"})
# Floats cvt converts from and to (the fp8 types need sm_89's packed forms).
CVT_FLOATS = frozenset({"f16", "bf16", "f32", "f64"})


@dataclass(frozen=True)
class PtxType:
    """How values of one IR type live in PTX.

    `reg` is the register class (``.reg .b32``); `s`, `u`, `b`, `f` the suffixes
    the templates ask for (None where the type has none), `c` a float's suffix in
    ``cvt`` (f16 and bf16 too); `mem` the ``ld``/``st`` suffix and `nbytes` the
    bytes one value takes in memory.
    """

    ir: str
    reg: str
    b: str
    s: str | None
    u: str | None
    f: str | None
    mem: str
    nbytes: int
    c: str | None = None

    @property
    def prefix(self) -> str:
        """The register-name prefix of the class (``%r`` for b32)."""
        return REGISTER_PREFIX[self.reg]


def _from_dtype(ir: str, d: DType) -> PtxType:
    nbytes = d.bits // 8
    if d.ptx == "pred":  # a predicate register; one byte in memory
        return PtxType(ir, "pred", "pred", None, None, None, "u8", nbytes)
    bits = f"b{d.bits}"
    if d.is_float:
        arith_suffix = d.ptx if d.ptx in ARITH_FLOATS else None
        mem = d.ptx if d.ptx in ARITH_FLOATS else bits
        cvt = d.ptx if d.ptx in CVT_FLOATS else None
        return PtxType(ir, d.reg, bits, None, None, arith_suffix, mem, nbytes, cvt)
    width = d.ptx[1:]
    return PtxType(ir, d.reg, bits, f"s{width}", f"u{width}", None, d.ptx, nbytes)


@cache
def ptx_type(t: Type) -> PtxType | None:
    """The PTX form of a scalar IR type; None for a type PTX holds in no register."""
    if isinstance(t, IndexType):
        return _from_dtype(str(t), INDEX_DTYPE)
    if isinstance(t, PointerType):
        return _from_dtype(str(t), POINTER_DTYPE)
    if isinstance(t, IntegerType | FloatType):
        try:
            return _from_dtype(str(t), dtype_of(t))
        except UnknownDTypeError:
            return None
    return None


# --------------------------------------------------------------------------- parameters


@dataclass(frozen=True)
class Param:
    """One kernel parameter (docs/abi.md): its PTX type, byte size and buffer offset."""

    ptx: str
    size: int
    offset: int


def param_type(t: Type) -> str | None:
    """The ``.param`` type of a kernel argument of type `t`, or None if it cannot be one.

    Global pointers are ``u64``, i1 a ``u8`` byte (PTX has no predicate
    parameters), integers and index signed (``s32``, ``s64``), f32/f64 as
    themselves, f16 and bf16 their ``b16`` bits.
    """
    if isinstance(t, PointerType):
        return "u64" if t.space is AddressSpace.GLOBAL else None
    p = ptx_type(t)
    if p is None:
        return None
    if p.reg == "pred":
        return "u8"
    return p.s or p.f or p.b


# A TMA tensor map passed by value (docs/abi.md, *Tensor-map parameters*), CUDA's
# ``__grid_constant__ const CUtensorMap``: ``.param .align 64 .b8 name[128]``. No IR type
# holds one: a signature's `.param` kind "tensor_map" stands for it in `param_layout`.
TENSOR_MAP = "tensor_map"
TENSOR_MAP_BYTES = 128  # sizeof(CUtensorMap)
TENSOR_MAP_ALIGN = 64  # the alignment the driver demands of a map


def param_layout(types: tuple[Type | str, ...]) -> list[Param] | None:
    """The parameter buffer of a kernel taking `types`: each naturally aligned, in order;
    a `TENSOR_MAP` is 128 bytes (PTX type ``b8``) at a multiple of 64."""
    params, offset = [], 0
    for t in types:
        if t == TENSOR_MAP:
            ptx, size, align = "b8", TENSOR_MAP_BYTES, TENSOR_MAP_ALIGN
        else:
            found = param_type(t) if isinstance(t, Type) else None
            if found is None:
                return None
            ptx = found
            size = align = 1 if ptx == "u8" else int(ptx[1:]) // 8
        offset = -(-offset // align) * align
        params.append(Param(ptx, size, offset))
        offset += size
    return params


# --------------------------------------------------------------------------- arith

# One instruction `<template> %d, %a, %b;` per binary op. Floats round to nearest
# even (`.rn`), which also keeps ptxas from fusing a mul and an add into an fma.
BINARY: dict[type, str] = {
    arith.AddIOp: "add.{s}",
    arith.SubIOp: "sub.{s}",
    arith.MulIOp: "mul.lo.{s}",
    arith.DivSIOp: "div.{s}",
    arith.DivUIOp: "div.{u}",
    arith.RemSIOp: "rem.{s}",
    arith.RemUIOp: "rem.{u}",
    arith.AndIOp: "and.{b}",
    arith.OrIOp: "or.{b}",
    arith.XOrIOp: "xor.{b}",
    arith.MaxSIOp: "max.{s}",
    arith.MinSIOp: "min.{s}",
    arith.MaxUIOp: "max.{u}",
    arith.MinUIOp: "min.{u}",
    arith.AddFOp: "add.rn.{f}",
    arith.SubFOp: "sub.rn.{f}",
    arith.MulFOp: "mul.rn.{f}",
    arith.DivFOp: "div.rn.{f}",
    # arith's maximumf/minimumf propagate NaN, as PTX's .NaN form (f32 only).
    arith.MaximumFOp: "max.NaN.{f}",
    arith.MinimumFOp: "min.NaN.{f}",
}

# PTX's shifts take the amount as a u32 register whatever the value's width.
SHIFT: dict[type, str] = {
    arith.ShLIOp: "shl.{b}",
    arith.ShRSIOp: "shr.{s}",
    arith.ShRUIOp: "shr.{u}",
}

UNARY: dict[type, str] = {arith.NegFOp: "neg.{f}"}
TERNARY: dict[type, str] = {arith.FmaOp: "fma.rn.{f}"}

# Templates valid for some suffixes only (PTX has max.NaN for f32, not f64).
ONLY: dict[type, frozenset[str]] = {
    arith.MaximumFOp: frozenset({"f32"}),
    arith.MinimumFOp: frozenset({"f32"}),
}

# The math dialect (docs/language.md, *Fragment arithmetic*, has their accuracy):
# `<template> %d, %a;`, f32 only but sqrt (f32 and f64, IEEE); flush-to-zero off.
# exp and log are ex2/lg2 and a multiplication (rules.py, `_exp_log`), as CUDA's
# __expf and __logf.
MATH: dict[type, str] = {
    math_ops.SqrtOp: "sqrt.rn.{f}",
    math_ops.RsqrtOp: "rsqrt.approx.{f}",
    math_ops.Exp2Op: "ex2.approx.{f}",
    math_ops.Log2Op: "lg2.approx.{f}",
    math_ops.ExpOp: "ex2.approx.{f}",
    math_ops.LogOp: "lg2.approx.{f}",
}
MATH_TYPES: dict[type, frozenset[str]] = {
    cls: frozenset({"f32", "f64"} if cls is math_ops.SqrtOp else {"f32"}) for cls in MATH
}
# log2(e) and ln(2), rounded to f32: exp(x) = ex2(x * log2(e)), log(x) = lg2(x) * ln(2).
LOG2_E_F32 = "0f3FB8AA3B"
LN_2_F32 = "0f3F317218"

# `setp.<cmp> %p, %a, %b;` per predicate.
CMPI: dict[str, str] = {
    "eq": "eq.{s}",
    "ne": "ne.{s}",
    "slt": "lt.{s}",
    "sle": "le.{s}",
    "sgt": "gt.{s}",
    "sge": "ge.{s}",
    "ult": "lo.{u}",
    "ule": "ls.{u}",
    "ugt": "hi.{u}",
    "uge": "hs.{u}",
}
CMPF: dict[str, str] = {
    "oeq": "eq.{f}",
    "one": "ne.{f}",
    "olt": "lt.{f}",
    "ole": "le.{f}",
    "ogt": "gt.{f}",
    "oge": "ge.{f}",
    "ord": "num.{f}",
    "ueq": "equ.{f}",
    "une": "neu.{f}",
    "ult": "ltu.{f}",
    "ule": "leu.{f}",
    "ugt": "gtu.{f}",
    "uge": "geu.{f}",
    "uno": "nan.{f}",
}

# `<template> %d, %a;` per cast: {d} is the result's PtxType, {a} the operand's.
# Integer casts between equal widths (index_cast of an i64) are a mov instead.
CAST: dict[type, str] = {
    arith.ExtSIOp: "cvt.{d.s}.{a.s}",
    arith.ExtUIOp: "cvt.{d.u}.{a.u}",
    arith.TruncIOp: "cvt.{d.u}.{a.u}",
    arith.IndexCastOp: "cvt.{d.s}.{a.s}",
    arith.IndexCastUIOp: "cvt.{d.u}.{a.u}",
    arith.SIToFPOp: "cvt.rn.{d.c}.{a.s}",
    arith.UIToFPOp: "cvt.rn.{d.c}.{a.u}",
    arith.FPToSIOp: "cvt.rzi.{d.s}.{a.c}",
    arith.FPToUIOp: "cvt.rzi.{d.u}.{a.c}",
    arith.ExtFOp: "cvt.{d.c}.{a.c}",
    arith.TruncFOp: "cvt.rn.{d.c}.{a.c}",
    arith.BitcastOp: "mov.{d.b}",
}


def fill(template: str, t: PtxType) -> str | None:
    """`template` with its suffix filled from `t`, or None if `t` lacks that suffix.

    8-bit integers live in 16-bit registers, and no arithmetic, logic or setp
    instruction takes ``.s8`` (only ld, st and cvt do): they have none.
    """
    if t.nbytes == 1 and t.reg != "pred":
        return None
    needed = {k: getattr(t, k) for k in ("s", "u", "b", "f") if "{" + k + "}" in template}
    if any(v is None for v in needed.values()):
        return None
    return template.format(**needed)


def fill_cast(template: str, d: PtxType, a: PtxType) -> str | None:
    """A cast template filled from result type `d` and operand type `a`, or None."""
    for name, t in (("d", d), ("a", a)):
        for k in ("s", "u", "b", "f", "c"):
            if "{" + f"{name}.{k}" + "}" in template and getattr(t, k) is None:
                return None
    return template.format(d=d, a=a)


# --------------------------------------------------------------------------- immediates


def float_immediate(value: float, t: PtxType) -> str | None:
    """PTX's exact spelling of a float constant held in `t`'s register, or None.

    f32 and f64 have PTX's hex float forms (``0f3F800000``, ``0d3FF0...``); f16
    and bf16 are moved as their bit patterns (``0x3C00``) into a b16 register, tf32
    (an f32 with a 10-bit mantissa, in a b32 register) as its f32 pattern
    (``0x3F800000``: the zero a residue's zero-fill writes).
    The value is already rounded to the type (arith constants are).
    """
    if t.f == "f64":
        return "0d" + _bits(">d", value)
    if t.f == "f32":
        return "0f" + _bits(">f", value)
    if t.ir == "f16":
        return "0x" + _bits(">e", value)
    if t.ir == "bf16":
        return "0x" + _bits(">f", value)[:4]
    if t.ir == "tf32":
        return "0x" + _bits(">f", value)
    return None


def _bits(code: str, value: float) -> str:
    """The bits of `value` packed by struct `code`, in hex. A finite value too large for
    the format (unverified IR: the verifier refuses `1.0e39 : f32`) is its infinity, what
    rounding it to the type gives, rather than struct's OverflowError."""
    try:
        return struct.pack(code, value).hex().upper()
    except OverflowError:
        return struct.pack(code, math.copysign(math.inf, value)).hex().upper()
