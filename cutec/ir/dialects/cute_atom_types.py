"""Types of the cute dialect's atom objects: TiledCopy and TiledMMA as values.

A tiled copy or MMA is a compile-time object; making it a typed SSA value (its
whole description in the type, the making op pure) lets partition, copy and
gemm ops name the object they use, lets CSE merge two identical ones, and
keeps every fact the partition pass needs in the IR text:

    !cute.tiled_copy<"UniversalCopy<uint128_t>", f32, ((32,8),4):((4,128),1), (128,8)>
    !cute.tiled_copy<auto, f32, ((32,8),4):((4,128),1), (128,8)>
    !cute.tiled_mma<"UniversalFMA_F32F32F32F32", f32, f32, f32, f32, (16,16,1):(1,16,0)>
    !cute.tiled_mma<auto, f32, f16, f16, f32, (2,2,1):(1,2,0), (32,32,16)>

A tiled copy is CuTe's (Copy_Atom, LayoutCopy_TV, Tiler_MN): the atom name (or
``auto`` for select-atoms to choose), the element type, the (thread, value) →
tile-coordinate layout and the tile shape. A tiled MMA is (MMA_Atom,
AtomLayoutMNK, PermutationMNK): the atom (or ``auto``), the D, A, B, C element
types, the layout of atoms over (M, N, K) and an optional permutation tile.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar

from cutec.atoms.copy import CopyAtom, copy_atom
from cutec.atoms.mma import mma_atom_named
from cutec.atoms.tiled_copy import TiledCopy, make_copy_atom, make_tiled_copy_tv
from cutec.atoms.tiled_mma import TiledMMA, make_tiled_mma
from cutec.ir.attributes import quote_string
from cutec.ir.dialects.cute_attrs import parse_tuple
from cutec.ir.dialects.cute_types import LayoutSpec
from cutec.ir.lexer import Tok
from cutec.ir.types import DialectType, Type, dtype_name, dtype_of
from cutec.layout import Layout, size
from cutec.layout.inttuple import format_tuple
from cutec.layout.text import format_layout, parse_layout

if TYPE_CHECKING:
    from cutec.ir.parser import Parser

AUTO = "auto"


def _print_atom(atom: str) -> str:
    return AUTO if atom == AUTO else quote_string(atom)


def _parse_atom(parser: Parser) -> str:
    if parser.tok.kind is Tok.STRING:
        return parser.parse_string()
    parser.parse_keyword(AUTO)
    return AUTO


def split_top_level(text: str) -> list[str]:
    """Split at commas outside (), <> — the fields of a raw type body."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "(<":
            depth += 1
        elif ch in ")>":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


def format_permutation(perm: tuple[Any, ...]) -> str:
    """A TiledMMA's (M, N, K) tile: ``(32,32,16)`` or ``((16,4,2):(4,1,64),128,1)``."""
    return "(" + ",".join(
        format_layout(p, static_marks=False) if isinstance(p, Layout) else format_tuple(p)
        for p in perm
    ) + ")"  # fmt: skip


def parse_permutation(text: str) -> tuple[Any, ...]:
    """The inverse of `format_permutation`."""
    text = text.strip()
    if ":" not in text:
        return parse_tuple(text)
    if not (text.startswith("(") and text.endswith(")")):
        raise ValueError(f"expected a parenthesised (M, N, K) tile, got '{text}'")
    out: list[Any] = []
    for field in split_top_level(text[1:-1]):
        if ":" in field:
            layout = parse_layout(field)
            if not isinstance(layout, Layout):
                raise ValueError(f"an MMA tile mode is a plain layout, got '{field}'")
            out.append(layout)
        else:
            out.append(parse_tuple(field))
    return tuple(out)


def _static(spec: LayoutSpec, what: str) -> LayoutSpec:
    if spec.dynamic_count:
        raise ValueError(f"the {what} of a tiled atom must be static, not {spec}")
    return spec


@dataclass(frozen=True)
class TiledCopyType(DialectType):
    """A TiledCopy: ``!cute.tiled_copy<ATOM, f32, TV-layout, tiler>``."""

    name: ClassVar[str] = "cute.tiled_copy"
    atom: str
    element: Type
    layout_tv: LayoutSpec
    tiler: Any  # a static shape tuple, e.g. (128, 8)

    def __post_init__(self) -> None:
        _static(self.layout_tv, "TV layout")

    def print_body(self) -> str:
        return (
            f"{_print_atom(self.atom)}, {self.element}, {self.layout_tv}, "
            f"{format_tuple(self.tiler)}"
        )

    @classmethod
    def parse_body(cls, parser: Parser) -> TiledCopyType:
        atom = _parse_atom(parser)
        parser.parse_punct(",")
        element = parser.parse_type()
        parser.parse_punct(",")
        fields = split_top_level(parser.parse_balanced_body())
        if len(fields) != 2:
            raise ValueError("expected a TV layout and a tiler after the element type")
        tiler = parse_tuple(fields[1])
        return cls(atom, element, LayoutSpec.parse(fields[0]), tiler)

    def library(self) -> TiledCopy:
        """The atom library's TiledCopy this type describes (an auto atom: a placeholder)."""
        return _tiled_copy(self)


@dataclass(frozen=True)
class TiledMmaType(DialectType):
    """A TiledMMA: ``!cute.tiled_mma<ATOM, D, A, B, C, atom-layout[, permutation]>``."""

    name: ClassVar[str] = "cute.tiled_mma"
    atom: str
    d_type: Type
    a_type: Type
    b_type: Type
    c_type: Type
    atom_layout: LayoutSpec
    # The (M, N, K) tile (CuTe's PermutationMNK), or None: per mode an extent, or a
    # static layout that also permutes the mode, e.g. (16,4,2):(4,1,64).
    permutation: Any = None

    def __post_init__(self) -> None:
        _static(self.atom_layout, "atom layout")

    def print_body(self) -> str:
        types = ", ".join(str(t) for t in (self.d_type, self.a_type, self.b_type, self.c_type))
        text = f"{_print_atom(self.atom)}, {types}, {self.atom_layout}"
        if self.permutation is not None:
            text += f", {format_permutation(self.permutation)}"
        return text

    @classmethod
    def parse_body(cls, parser: Parser) -> TiledMmaType:
        atom = _parse_atom(parser)
        types = []
        for _ in range(4):
            parser.parse_punct(",")
            types.append(parser.parse_type())
        parser.parse_punct(",")
        fields = split_top_level(parser.parse_balanced_body())
        if len(fields) not in (1, 2):
            raise ValueError("expected an atom layout and an optional permutation tile")
        perm = parse_permutation(fields[1]) if len(fields) == 2 else None
        d, a, b, c = types
        return cls(atom, d, a, b, c, LayoutSpec.parse(fields[0]), perm)

    def library(self) -> TiledMMA:
        """The atom library's TiledMMA this type describes (an auto atom: a placeholder)."""
        return _tiled_mma(self)


# The library objects are pure functions of the (frozen, hashable) types.
@functools.cache
def _tiled_copy(t: TiledCopyType) -> TiledCopy:
    layout_tv = t.layout_tv.with_values(())
    bits = dtype_of(t.element).bits
    if t.atom == AUTO:
        record = auto_copy_record(int(size(layout_tv, 1)), bits)
    else:
        record = copy_atom(t.atom)
    return make_tiled_copy_tv(make_copy_atom(record, bits), layout_tv, t.tiler)


def clear_library_caches() -> None:
    _tiled_copy.cache_clear()
    _tiled_mma.cache_clear()


def auto_copy_record(values: int, bits: int) -> CopyAtom:
    """The placeholder of an auto copy atom: one thread moving `values` elements at once.

    select-atoms replaces it; until then it lets the algebra partition with the
    value count the TV layout gives.
    """
    whole = Layout((1, values * bits), (0, 1))
    return replace(
        copy_atom("UniversalCopy<uint8_t>"),
        name=AUTO,
        src_layout=whole,
        dst_layout=whole,
        ref_layout=whole,
    )


@functools.cache
def _tiled_mma(t: TiledMmaType) -> TiledMMA:
    if t.atom == AUTO:
        # The universal FMA with this type's element types stands in until select-atoms.
        fma = mma_atom_named("UniversalFMA_F32F32F32F32")
        assert fma is not None
        record = replace(
            fma,
            name=AUTO,
            d_type=dtype_name(t.d_type),
            a_type=dtype_name(t.a_type),
            b_type=dtype_name(t.b_type),
            c_type=dtype_name(t.c_type),
        )
    else:
        found = mma_atom_named(t.atom)
        if found is None:
            raise KeyError(t.atom)
        record = found
    perm = tuple(t.permutation) if t.permutation is not None else None
    return make_tiled_mma(record, t.atom_layout.with_values(()), perm)


CUTE_ATOM_TYPES: tuple[type[DialectType], ...] = (TiledCopyType, TiledMmaType)
