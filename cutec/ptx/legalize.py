"""legalize-ptx: rewrite the ops PTX has no instruction for into ops it has.

The last pass before the PTX stage (the driver's PTX_PIPELINE, so
``--print-ir-after-all`` shows what the emitter prints); emitter.py's one printing
loop expects its output. The CPU backend runs the thread stage's IR as the
lowering left it: it computes halves and floor/ceil divisions itself. Each rewrite
is one function on one op family, stated as an equation:

* half-precision arithmetic — ``addf(a, b) : f16 → truncf(addf(extf a, extf b) : f32)``
  (also bf16, and subf, mulf, divf, maximumf, minimumf, negf, fma, cmpf without
  the truncf). PTX's f16 instructions exist but bf16's add/sub/mul need sm_90,
  and max/min with NaN differ per type; computing in f32 is one rule for both
  targets. f32 holds the exact sum, product and quotient of two f16/bf16 values
  to well within the doubled precision plus two bits that makes rounding twice
  equal to rounding once (add, sub, mul, div); fma can differ in the last bit.
* ``floordivsi(a, b) → divsi(a, b) - ((remsi(a, b) != 0) & ((remsi(a, b) ^ b) < 0))``
* ``ceildivsi(a, b) → divsi(a, b) + ((remsi(a, b) != 0) & ((remsi(a, b) ^ b) >= 0))``

Register widths need no rewriting: types map to PTX types and register
classes by table (tables.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cutec.ir.builder import Builder
from cutec.ir.core import Operation, Value
from cutec.ir.dialects import arith
from cutec.ir.dialects import math as math_ops
from cutec.ir.dialects.arith_float import FloatBinaryOp
from cutec.ir.dialects.builtin import ModuleOp
from cutec.ir.rule_table import RuleTable
from cutec.ir.types import FloatType, f32
from cutec.passes.manager import Pass

HALF_TYPES = (FloatType("f16"), FloatType("bf16"))

# Op classes computed in f32 when their operands are f16 or bf16.
PROMOTED: tuple[type[Operation], ...] = (
    FloatBinaryOp,
    arith.NegFOp,
    arith.FmaOp,
    arith.CmpFOp,
    math_ops.UnaryMathOp,  # exp ... rsqrt of a half: the f32 instruction, rounded back
)


def _promote_half(op: Operation, b: Builder) -> list[Value] | None:
    """Compute a half-precision op in f32 and round back (see the module docstring)."""
    if not op.operands or op.operands[0].type not in HALF_TYPES:
        return None
    half = op.operands[0].type
    wide = [b.insert(arith.ExtFOp(v, f32)).result for v in op.operands]
    is_cmp = isinstance(op, arith.CmpFOp)
    new = b.insert(
        type(op).create(
            operands=wide,
            result_types=op.result_types if is_cmp else [f32],
            attributes=dict(op.attributes),
        )
    )
    if is_cmp:
        return [new.results[0]]
    return [b.insert(arith.TruncFOp(new.results[0], half)).result]


def _div_parts(op: Operation, b: Builder) -> tuple[Value, Value, Value]:
    """``q = divsi(a, b)``, ``r != 0`` and ``r ^ b`` (negative when r and b differ in sign)."""
    lhs, rhs = op.operands
    t = lhs.type
    q = b.insert(arith.DivSIOp(lhs, rhs)).result
    r = b.insert(arith.RemSIOp(lhs, rhs)).result
    zero = b.insert(arith.constant(0, t)).result
    nonzero = b.insert(arith.CmpIOp("ne", r, zero)).result
    sign = b.insert(arith.XOrIOp(r, rhs)).result
    return q, nonzero, sign


def _adjust(b: Builder, q: Value, nonzero: Value, sign: Value, pred: str, down: bool) -> Value:
    t = q.type
    zero = b.insert(arith.constant(0, t)).result
    one = b.insert(arith.constant(1, t)).result
    off = b.insert(arith.CmpIOp(pred, sign, zero)).result
    both = b.insert(arith.AndIOp(nonzero, off)).result
    step = b.insert(arith.SelectOp(both, one, zero)).result
    return b.insert(arith.SubIOp(q, step) if down else arith.AddIOp(q, step)).result


def _floordiv(op: Operation, b: Builder) -> list[Value]:
    return [_adjust(b, *_div_parts(op, b), "slt", down=True)]


def _ceildiv(op: Operation, b: Builder) -> list[Value]:
    return [_adjust(b, *_div_parts(op, b), "sge", down=False)]


# Op class → rewrite; a rewrite returns the replacement values, or None to keep the op.
Rewrite = Callable[[Operation, Builder], list[Value] | None]
RULES: RuleTable[Rewrite] = RuleTable(
    {
        **{cls: _promote_half for cls in PROMOTED},
        arith.FloorDivSIOp: _floordiv,
        arith.CeilDivSIOp: _ceildiv,
    }
)


def legalize(module: ModuleOp) -> None:
    """Rewrite every op of `module` that PTX lacks (the module docstring)."""
    for op in list(module.walk()):
        rule = RULES.lookup(op)
        if rule is None:
            continue
        values = rule(op, Builder.before(op))
        if values is not None:
            op.replace_with(values)


@dataclass
class LegalizePtx(Pass):
    name = "legalize-ptx"
    summary = "rewrite ops PTX has no instruction for (half arithmetic, floor/ceil division)"

    def run(self, module: ModuleOp) -> None:
        legalize(module)
