"""Types of the cute dialect: layouts and layout-typed tensors.

The type holds the static part of a layout; a dynamic leaf prints as ``?``
and its value is an SSA operand of the op that makes the value, as MLIR's
memref does with dynamic sizes::

    !cute.layout<(4,8):(1,4)>
    !cute.layout<Sw<3,4,3> o 0 o (8,64):(64,1)>
    !cute.tensor<f32, gmem, (?,?):(1,?)>

Dynamic leaves are numbered in reading order, shape before stride; that is
the order of the operands carrying them (`LayoutSpec.with_values`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from cutec.ir.types import DialectType, Type
from cutec.layout import ComposedLayout, Layout, Swizzle
from cutec.layout.inttuple import congruent, format_tuple, leaves, transform_leaf
from cutec.layout.symbolic import is_static
from cutec.target import MEMORIES, AddressSpace

if TYPE_CHECKING:
    from cutec.ir.parser import Parser


class Dynamic:
    """The marker of a leaf known only at run time; prints as ``?``."""

    _instance: ClassVar[Dynamic | None] = None

    def __new__(cls) -> Dynamic:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "?"

    __str__ = __repr__


DYN = Dynamic()

# A leaf of a layout type: a static int or DYN.
SpecTuple = Any


def _erase(t: Any) -> SpecTuple:
    """A layout IntTuple with every dynamic leaf replaced by DYN."""
    return transform_leaf(t, lambda x: x if is_static(x) else DYN)


def fill_dynamic(t: SpecTuple, values: Iterator[Any]) -> Any:
    """`t` with each DYN leaf replaced by the next of `values`, in reading order."""
    return transform_leaf(t, lambda x: next(values) if x is DYN else x)


@dataclass(frozen=True)
class LayoutSpec:
    """The static view of a layout: shape and stride with DYN leaves, and for a
    swizzled (composed) layout the swizzle and its static offset."""

    shape: SpecTuple
    stride: SpecTuple
    swizzle: Swizzle | None = None
    offset: int = 0

    @classmethod
    def of(cls, layout: Layout | ComposedLayout) -> LayoutSpec:
        """The spec of an algebra layout (its SymInt leaves become DYN)."""
        if isinstance(layout, ComposedLayout):
            if not isinstance(layout.layout_a, Swizzle) or not is_static(layout.offset):
                raise ValueError(f"only Sw<B,M,S> o offset o layout can be typed, not {layout}")
            inner = cls.of(layout.layout_b)
            return cls(inner.shape, inner.stride, layout.layout_a, layout.offset)
        return cls(_erase(layout.shape), _erase(layout.stride))

    @property
    def dynamic_count(self) -> int:
        """How many leaves are dynamic (the number of operands that carry them)."""
        return sum(1 for x in (*leaves(self.shape), *leaves(self.stride)) if x is DYN)

    def with_values(self, values: Sequence[Any]) -> Layout | ComposedLayout:
        """The algebra layout with the dynamic leaves taken from `values`, in order."""
        if len(values) != self.dynamic_count:
            raise ValueError(
                f"{self} has {self.dynamic_count} dynamic leaves, got {len(values)} values"
            )
        it = iter(values)
        layout = Layout(fill_dynamic(self.shape, it), fill_dynamic(self.stride, it))
        if self.swizzle is None:
            return layout
        return ComposedLayout(self.swizzle, self.offset, layout)

    def __str__(self) -> str:
        body = f"{format_tuple(self.shape)}:{format_tuple(self.stride)}"
        if self.swizzle is not None:
            return f"{self.swizzle} o {self.offset} o {body}"
        return body

    @classmethod
    def parse(cls, text: str) -> LayoutSpec:
        """Read ``(4,?):(1,4)`` or ``Sw<B,M,S> o OFFSET o shape:stride``."""
        text = text.replace(" ", "")
        swizzle, offset = None, 0
        m = _COMPOSED.fullmatch(text)
        if m is not None:
            swizzle = Swizzle(int(m["b"]), int(m["m"]), int(m["s"]))
            offset, text = int(m["offset"]), m["rest"]
        shape_text, colon, stride_text = text.partition(":")
        if not colon:
            raise ValueError(f"expected a layout 'shape:stride', got '{text}'")
        shape = _SpecReader(shape_text).read()
        stride = _SpecReader(stride_text).read()
        if not congruent(shape, stride):
            raise ValueError(
                f"shape {format_tuple(shape)} and stride {format_tuple(stride)} are not congruent"
            )
        return cls(shape, stride, swizzle, offset)


_COMPOSED = re.compile(r"Sw<(?P<b>\d+),(?P<m>\d+),(?P<s>\d+)>o(?P<offset>\d+)o(?P<rest>.*)")


class _SpecReader:
    """Nested tuples of non-negative integers and ``?``."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def read(self) -> SpecTuple:
        value = self._item()
        if self.pos != len(self.text):
            raise ValueError(f"unexpected '{self.text[self.pos :]}' in layout '{self.text}'")
        return value

    def _item(self) -> SpecTuple:
        text = self.text
        if text.startswith("(", self.pos):
            self.pos += 1
            items = [self._item()]
            while text.startswith(",", self.pos):
                self.pos += 1
                items.append(self._item())
            if not text.startswith(")", self.pos):
                raise ValueError(f"expected ',' or ')' at column {self.pos + 1} of '{text}'")
            self.pos += 1
            return tuple(items)
        if text.startswith("?", self.pos):
            self.pos += 1
            return DYN
        m = re.compile(r"\d+").match(text, self.pos)
        if m is None:
            raise ValueError(
                f"expected an integer, '?' or '(' at column {self.pos + 1} of '{text}'"
            )
        self.pos = m.end()
        return int(m.group())


@dataclass(frozen=True)
class LayoutType(DialectType):
    """A layout value: ``!cute.layout<(4,8):(1,?)>``."""

    name: ClassVar[str] = "cute.layout"
    spec: LayoutSpec

    def print_body(self) -> str:
        return str(self.spec)

    @classmethod
    def parse_body(cls, parser: Parser) -> LayoutType:
        return cls(LayoutSpec.parse(parser.parse_balanced_body()))


@dataclass(frozen=True)
class TensorType(DialectType):
    """A tensor: element type, memory and layout: ``!cute.tensor<f32, smem, (8,4):(1,8)>``."""

    name: ClassVar[str] = "cute.tensor"
    element: Type
    space: AddressSpace  # global, shared, shared::cluster or reg: gmem, smem, dsmem, rmem
    spec: LayoutSpec

    def __post_init__(self) -> None:
        if not isinstance(self.space, AddressSpace) or self.space.memory_or_none is None:
            raise ValueError(f"a tensor lives in {', '.join(MEMORIES)} memory, not {self.space!r}")

    def print_body(self) -> str:
        return f"{self.element}, {self.space.memory}, {self.spec}"

    @classmethod
    def parse_body(cls, parser: Parser) -> TensorType:
        element = parser.parse_type()
        parser.parse_punct(",")
        loc = parser.tok.loc
        memory = parser.parse_identifier("a memory (gmem, smem, dsmem or rmem)")
        if memory not in MEMORIES:
            raise parser.error(
                f"unknown memory '{memory}'; expected one of {', '.join(MEMORIES)}", loc
            )
        parser.parse_punct(",")
        space = AddressSpace.from_memory(memory)
        return cls(element, space, LayoutSpec.parse(parser.parse_balanced_body()))


CUTE_TYPES: tuple[type[DialectType], ...] = (LayoutType, TensorType)
