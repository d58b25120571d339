"""Coordinate tensors: CuTe's identity tensors, whose element at a position is its coordinate.

CuTe's ``make_identity_tensor(shape)`` is a tensor over an ArithmeticTuple
iterator with basis strides ``E<0>, E<1>, ...``: views of it (local_tile,
partition_S, slices) compose its layout like any other, and element ``i`` of a
view is ``base + layout(i)`` summed as tuples. cutec's layout algebra has
integer strides, so a basis stride ``a * E<k>`` (CuTe prints ``a@k``) is encoded
as the integer ``a * R**k`` with the radix ``R = 2**32``: mode k of the coordinate is
digit k of the encoded value. Because the digits never carry into each other
for any coordinate a kernel can name (extents are 32-bit), the encoding keeps
what basis strides guarantee and a compact column-major layout does not: a
coordinate outside the shape — the tail of a residue tile, exactly where
``elem_less`` predicates are needed — never aliases a coordinate inside it,
and the algebra never merges two coordinate modes (``coalesce`` sees unrelated
strides, as CuTe's does with ``E<0>`` and ``E<1>``).

The type prints the strides as ``E0``, ``128*E1`` (CuTe's ``_1@0``, ``_128@1``), so the
encoded integers never appear in IR text; a lowering reads each digit as the
stride of one coordinate component and never materialises the encoded value::

    !cute.coord_tensor<2, (128,64):(E0,E1)>

The ops: `cute.make_identity_tensor` (the dynamic extents as index operands)
and `cute.load_coord` (one component of the coordinate at a linear index). The
view ops (local_tile, partition, slice, divide) take coordinate tensors as they
take tensors.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from cutec.ir.attributes import IntegerAttr
from cutec.ir.core import Value
from cutec.ir.dialects.cute_base import CuteOp
from cutec.ir.dialects.cute_types import DYN, LayoutSpec
from cutec.ir.opdef import attr_def, operand_def, result_def, var_operand_def
from cutec.ir.traits import Pure
from cutec.ir.types import DialectType, IndexType, i64
from cutec.layout import Layout
from cutec.layout.inttuple import format_tuple
from cutec.layout.symbolic import Integer, SymInt

if TYPE_CHECKING:
    from cutec.ir.layout_of import LayoutAnalysis
    from cutec.ir.parser import Parser

COORD_RADIX = 2**32
"""The radix R of the basis encoding: ``a*Ek`` is the integer ``a * R**k``."""


def basis(k: int, a: int = 1) -> int:
    """The encoded stride ``a * E<k>``, printed ``a*Ek``."""
    return a * COORD_RADIX**k


def decode(value: int, rank: int) -> tuple[int, ...]:
    """The coordinate whose encoding is `value`: its base-R digits, mode 0 first."""
    return tuple((value // COORD_RADIX**k) % COORD_RADIX for k in range(rank))


def identity_layout(shape: Any) -> Layout:
    """CuTe's make_identity_layout(shape) for a flat shape: stride E<k> on mode k."""
    modes = shape if isinstance(shape, tuple) else (shape,)
    if any(isinstance(m, tuple) for m in modes):
        raise ValueError(f"an identity tensor takes a flat shape, not {shape}")
    strides = tuple(basis(k) for k in range(len(modes)))
    return Layout(shape, strides if isinstance(shape, tuple) else strides[0])


def _fmt_stride(t: Any) -> str:
    if isinstance(t, tuple):
        return "(" + ",".join(_fmt_stride(x) for x in t) + ")"
    if t is DYN:
        return "?"
    if t == 0:
        return "0"
    terms, k = [], 0
    while t:
        t, d = divmod(t, COORD_RADIX)
        if d:
            terms.append(f"E{k}" if d == 1 else f"{d}*E{k}")
        k += 1
    return "+".join(terms)


_TERM = r"(?:\d+\*)?E\d+"
_BASIS = re.compile(rf"{_TERM}(?:\+{_TERM})*")


def _encode_text(text: str) -> str:
    def value(m: re.Match[str]) -> str:
        total = 0
        for term in m.group().split("+"):
            a, _, k = term.rpartition("E")
            total += basis(int(k), int(a.rstrip("*") or 1))
        return str(total)

    return _BASIS.sub(value, text)


@dataclass(frozen=True)
class CoordTensorType(DialectType):
    """A tensor of `rank`-mode coordinates: ``!cute.coord_tensor<2, (?,?):(E0,E1)>``."""

    name: ClassVar[str] = "cute.coord_tensor"
    rank: int
    spec: LayoutSpec

    def __post_init__(self) -> None:
        if self.rank < 1:
            raise ValueError(f"a coordinate tensor has coordinates of rank >= 1, not {self.rank}")
        if self.spec.swizzle is not None:
            raise ValueError("a coordinate tensor is never swizzled")

    def print_body(self) -> str:
        return f"{self.rank}, {format_tuple(self.spec.shape)}:{_fmt_stride(self.spec.stride)}"

    @classmethod
    def parse_body(cls, parser: Parser) -> CoordTensorType:
        loc = parser.tok.loc
        text = parser.parse_balanced_body()
        rank_text, comma, layout_text = text.partition(",")
        if not comma or not rank_text.strip().isdigit():
            raise parser.error("expected 'RANK, shape:stride' in a !cute.coord_tensor", loc)
        try:
            return cls(int(rank_text), LayoutSpec.parse(_encode_text(layout_text)))
        except ValueError as e:
            raise parser.error(str(e), loc) from None


class MakeIdentityTensorOp(CuteOp):
    """CuTe's make_identity_tensor: the element at coordinate c is c.

    ``%cS = cute.make_identity_tensor %M, %N : !cute.coord_tensor<2, (?,?):(E0,E1)>``

    The operands are the shape's dynamic extents in reading order.
    """

    name = "cute.make_identity_tensor"
    traits = (Pure(),)
    extents = var_operand_def(IndexType)
    result = result_def(CoordTensorType)

    def __init__(self, extents: list[Value], result: CoordTensorType) -> None:
        super().__init__(operands=extents, result_types=[result])

    def verify_(self) -> None:
        t = self.result.type
        assert isinstance(t, CoordTensorType)
        if len(self.extents) != t.spec.dynamic_count:
            raise self.error(
                f"layout {t.spec} has {t.spec.dynamic_count} dynamic extents, "
                f"got {len(self.extents)} index operands"
            )
        modes = t.spec.shape if isinstance(t.spec.shape, tuple) else (t.spec.shape,)
        want = tuple(basis(k) for k in range(len(modes)))
        have = t.spec.stride if isinstance(t.spec.stride, tuple) else (t.spec.stride,)
        if len(modes) != t.rank or have != want:
            raise self.error(
                f"an identity tensor of rank {t.rank} has strides "
                f"{_fmt_stride(want)}, not {_fmt_stride(have)}"
            )

    def result_layout(self, la: LayoutAnalysis) -> Layout:
        """The identity layout over the extents the operands hold."""
        t = self.results[0].type
        assert isinstance(t, CoordTensorType)
        layout = t.spec.with_values([la.integer_of(v) for v in self.extents])
        assert isinstance(layout, Layout)
        return layout


class LoadCoordOp(CuteOp):
    """Component `mode` of the coordinate at a linear index of a coordinate tensor.

    ``%m = cute.load_coord %tC, %i {mode = 0 : i64} : !cute.coord_tensor<2, ...> -> index``

    Pure: a coordinate is computed from the index, never read from memory.
    """

    name = "cute.load_coord"
    traits = (Pure(),)
    tensor = operand_def(CoordTensorType)
    index = operand_def(IndexType)
    mode = attr_def(IntegerAttr)
    result = result_def(IndexType())

    def __init__(self, t: Value, index: Value, mode: int) -> None:
        super().__init__(
            operands=[t, index],
            result_types=[IndexType()],
            attributes={"mode": IntegerAttr(mode, i64)},
        )

    def verify_(self) -> None:
        t = self.tensor.type
        assert isinstance(t, CoordTensorType)
        if not 0 <= self.mode.value < t.rank:
            raise self.error(f"needs 'mode' in [0, {t.rank}) for rank-{t.rank} coordinates")


CUTE_COORD_TYPES: tuple[type[DialectType], ...] = (CoordTensorType,)


def coordinate_component(x: Integer, mode: int) -> Integer:
    """Component `mode` of an encoded coordinate (``a*Ek`` is ``a * R**k``).

    The encoding adds ``c_m * R**m`` for each mode's component c_m, a SymInt of
    monomials with integer coefficients; like monomials of different modes merge
    into one coefficient ``sum_m a_m * R**m``. Its balanced base-R digits (in
    [-R/2, R/2)) give back each a_m, signs included: a component may hold negative
    coefficients, as ``a % b`` does (``a - b*(a//b)``), and any |a_m| is far below
    R/2 (offsets are below 2^31), so the digits are exact.
    """
    if isinstance(x, int):
        return _balanced_digit(x, mode)
    out: Integer = _balanced_digit(x.const, mode)
    for monomial, k in x.terms:
        digit = _balanced_digit(k, mode)
        if digit:
            out = out + digit * SymInt(((monomial, 1),))
    return out


def _balanced_digit(k: int, mode: int) -> int:
    """Digit `mode` of k in base R with digits in [-R/2, R/2)."""
    half = COORD_RADIX // 2
    for _ in range(mode):
        k = (k - ((k + half) % COORD_RADIX - half)) // COORD_RADIX
    return (k + half) % COORD_RADIX - half
