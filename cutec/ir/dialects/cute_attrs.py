"""Attributes of the cute dialect: the static parameters of tensor ops.

* ``#cute.tuple<(128,?,_)>`` — an IntTuple as CuTe spells tilers, coordinates and
  steps: static integers, ``?`` (a run-time leaf, carried by the op's next index
  operand), ``_`` (CuTe's Underscore: keep this mode) and ``X`` (a step that
  drops a mode). A flat leaf prints bare: ``#cute.tuple<?>``.
* ``#cute.layout<(32,8):(1,32)>`` — a static layout (thread and value layouts,
  an atom layout of a TiledMMA).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from cutec.ir.attributes import DialectAttribute
from cutec.ir.dialects.cute_types import DYN, LayoutSpec, fill_dynamic
from cutec.layout import Layout, X
from cutec.layout.inttuple import format_tuple, leaves

if TYPE_CHECKING:
    from cutec.ir.parser import Parser

# A leaf of a TupleAttr: an int, DYN, UNDERSCORE or X.
UNDERSCORE = None


_LEAF = re.compile(r"\d+|\?|_|X")


def parse_tuple(text: str) -> Any:
    """Read ``(128,?,(_,X))``; raises ValueError with the column of the mistake."""
    text = text.replace(" ", "")
    pos = 0

    def item() -> Any:
        nonlocal pos
        if text.startswith("(", pos):
            pos += 1
            items = [item()]
            while text.startswith(",", pos):
                pos += 1
                items.append(item())
            if not text.startswith(")", pos):
                raise ValueError(f"expected ',' or ')' at column {pos + 1} of '{text}'")
            pos += 1
            return tuple(items)
        m = _LEAF.match(text, pos)
        if m is None:
            raise ValueError(
                f"expected an integer, '?', '_', 'X' or '(' at column {pos + 1} of '{text}'"
            )
        pos = m.end()
        leaf = m.group()
        if leaf == "?":
            return DYN
        if leaf == "_":
            return UNDERSCORE
        return X if leaf == "X" else int(leaf)

    value = item()
    if pos != len(text):
        raise ValueError(f"unexpected '{text[pos:]}' in '{text}'")
    return value


@dataclass(frozen=True)
class TupleAttr(DialectAttribute):
    """An IntTuple with ``?``, ``_`` and ``X`` leaves: ``#cute.tuple<(128,?,_)>``."""

    name: ClassVar[str] = "cute.tuple"
    value: Any

    @property
    def dynamic_count(self) -> int:
        """How many ``?`` leaves (index operands) the tuple takes."""
        return sum(1 for x in leaves(self.value) if x is DYN)

    def with_values(self, values: Sequence[Any]) -> Any:
        """The tuple with each ``?`` replaced by the next of `values` (``_`` → None)."""
        it = iter(values)
        out = fill_dynamic(self.value, it)
        if next(it, None) is not None:
            raise ValueError("too many values for the tuple's dynamic leaves")
        return out

    def print_body(self) -> str:
        return format_tuple(self.value)

    @classmethod
    def parse_body(cls, parser: Parser) -> TupleAttr:
        return cls(parse_tuple(_raw_until_close(parser)))


@dataclass(frozen=True)
class LayoutAttr(DialectAttribute):
    """A static layout: ``#cute.layout<(32,8):(1,32)>``."""

    name: ClassVar[str] = "cute.layout"
    spec: LayoutSpec

    def __post_init__(self) -> None:
        if self.spec.dynamic_count:
            raise ValueError(f"a layout attribute must be static, not {self.spec}")

    @classmethod
    def of(cls, layout: Any) -> LayoutAttr:
        return cls(LayoutSpec.of(layout))

    @property
    def layout(self) -> Layout:
        return self.spec.with_values(())  # type: ignore[return-value]

    def print_body(self) -> str:
        return str(self.spec)

    @classmethod
    def parse_body(cls, parser: Parser) -> LayoutAttr:
        return cls(LayoutSpec.parse(_raw_until_close(parser)))


def _raw_until_close(parser: Parser) -> str:
    """The attribute body up to its closing '>' (the caller consumes the '>')."""
    # parse_balanced_body stops before the '>' that closes the '<' already read.
    return parser.parse_balanced_body()


CUTE_ATTRIBUTES: tuple[type[DialectAttribute], ...] = (TupleAttr, LayoutAttr)
