"""bf16 lanes in the warp code: the conversions LLVM cannot lower on the host.

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
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cutec.cpu.lanes import splat, vec

if TYPE_CHECKING:
    from cutec.cpu.codegen import _Gen


def f32_to_bf16(g: _Gen, x: str) -> str:
    """`<32 x float>` lanes rounded to nearest even: `<32 x bfloat>`."""
    i32 = vec("i32")
    bits = g.op(f"bitcast {vec('float')} {x} to {i32}")
    return _round_bits(g, bits, g.op(f"fcmp uno {vec('float')} {x}, {x}"))


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
