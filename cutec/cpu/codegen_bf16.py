"""bf16 lanes in the warp code: the conversions LLVM cannot lower on the host; and
tf32's rounding, which LLVM has no type for.

Values of type bf16 are `<32 x bfloat>` lanes: loads, stores, selects,
compares and widening (``fpext``, exact) are LLVM's own. Narrowing is not:
``fptrunc`` to bfloat becomes a library call that the JIT cannot resolve on
x86 without AVX512-BF16, so it is written here with integer operations, as
ml-dtypes (and the interpreter, through it) rounds:

* f32 -> bf16: round to nearest even on the bits, ``(u + 0x7FFF + lsb) >> 16``,
  which carries into the exponent (up to infinity) as it should; a NaN keeps
  its sign and top payload bits and is made quiet.
* f64 -> bf16: to f32, then to bf16, each to nearest even. This is how
  ml-dtypes converts a double (so the interpreter's `round_float` too), and
  it differs from rounding once in rare double-rounding cases (a value just
  past a bf16 tie that f32 rounds onto the tie): the issue takes ml-dtypes'
  conversions as the definition.
* f32 -> tf32 (tf32 lanes are f32 lanes): round to nearest even on the bits,
  ``(u + 0xFFF + lsb) & ~0x1FFF``, lsb the kept part's lowest bit; a NaN becomes
  0x7FFFE000 (cutec.ir.dialects.arith_fold.tf32_words, which the interpreter runs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cutec.cpu.lanes import splat, vec
from cutec.ir.dialects.arith_fold import TF32_DROPPED_BITS, TF32_NAN_BITS

if TYPE_CHECKING:
    from cutec.cpu.codegen import _Gen


def f32_to_bf16(g: _Gen, x: str) -> str:
    """`<32 x float>` lanes rounded to nearest even: `<32 x bfloat>`."""
    i32 = vec("i32")
    bits = g.op(f"bitcast {vec('float')} {x} to {i32}")
    return _round_bits(g, bits, g.op(f"fcmp uno {vec('float')} {x}, {x}"))


def f32_to_tf32(g: _Gen, x: str) -> str:
    """`<32 x float>` lanes rounded to tf32 precision, to nearest even, the low 13 bits
    cleared; still `<32 x float>`."""
    i32 = vec("i32")
    bits = g.op(f"bitcast {vec('float')} {x} to {i32}")
    kept = g.op(f"lshr {i32} {bits}, {splat(TF32_DROPPED_BITS, 'i32')}")
    lsb = g.op(f"and {i32} {kept}, {splat(1, 'i32')}")
    half = (1 << (TF32_DROPPED_BITS - 1)) - 1
    biased = g.op(f"add {i32} {bits}, {splat(half, 'i32')}")
    biased = g.op(f"add {i32} {biased}, {lsb}")
    mask = splat(-(1 << TF32_DROPPED_BITS), "i32")
    rounded = g.op(f"and {i32} {biased}, {mask}")
    nan = g.op(f"fcmp uno {vec('float')} {x}, {x}")
    chosen = g.op(f"select {vec('i1')} {nan}, {i32} {splat(TF32_NAN_BITS, 'i32')}, {i32} {rounded}")
    return g.op(f"bitcast {i32} {chosen} to {vec('float')}")


def _round_bits(g: _Gen, bits: str, nan: str) -> str:
    i32 = vec("i32")
    high = g.op(f"lshr {i32} {bits}, {splat(16, 'i32')}")
    lsb = g.op(f"and {i32} {high}, {splat(1, 'i32')}")
    biased = g.op(f"add {i32} {bits}, {splat(0x7FFF, 'i32')}")
    biased = g.op(f"add {i32} {biased}, {lsb}")
    rounded = g.op(f"lshr {i32} {biased}, {splat(16, 'i32')}")
    quiet = g.op(f"or {i32} {high}, {splat(0x40, 'i32')}")
    chosen = g.op(f"select {vec('i1')} {nan}, {i32} {quiet}, {i32} {rounded}")
    half = g.op(f"trunc {i32} {chosen} to {vec('i16')}")
    return g.op(f"bitcast {vec('i16')} {half} to {vec('bfloat')}")


def f64_to_bf16(g: _Gen, x: str) -> str:
    """`<32 x double>` lanes to bf16 as ml-dtypes converts them: to f32, then to bf16
    (each to nearest even; the interpreter's `round_float` goes the same way)."""
    return f32_to_bf16(g, g.op(f"fptrunc {vec('double')} {x} to {vec('float')}"))
