"""Attributes: compile-time constant data attached to ops; frozen and hashable.

Textual forms (MLIR's): ``42 : i32``, ``1.5 : f32``, ``true``, ``"text"``,
``[a, b]``, ``array<i64: 1, 2>``, a type, ``@symbol``, and dialect attributes
``#dialect.name<body>``. A unit attribute is printed as its bare key.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from cutec.ir.types import IndexType, IntegerType, Type, i64

if TYPE_CHECKING:
    from cutec.ir.parser import Parser


class Attribute:
    """Base of all attributes."""

    def __str__(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class IntegerAttr(Attribute):
    """An integer of a given integer or index type."""

    value: int
    type: Type = i64

    def __str__(self) -> str:
        if self.type == IntegerType(1):
            return "true" if self.value else "false"
        return f"{self.value} : {self.type}"


@dataclass(frozen=True)
class FloatAttr(Attribute):
    """A floating-point constant of a float type."""

    value: float
    type: Type

    def __str__(self) -> str:
        return f"{format_float(self.value)} : {self.type}"

    def __eq__(self, other: object) -> bool:
        # Bitwise identity, so that NaN constants are equal (CSE may merge them)
        # and 0.0 / -0.0 stay distinct.
        if not isinstance(other, FloatAttr):
            return NotImplemented
        return self.type == other.type and _float_key(self.value) == _float_key(other.value)

    def __hash__(self) -> int:
        return hash((self.type, _float_key(self.value)))


def _float_key(v: float) -> tuple[str, float | None]:
    return ("nan", None) if math.isnan(v) else (str(math.copysign(1.0, v)), v)


def format_float(v: float) -> str:
    """Shortest text that reads back as the same double."""
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    text = repr(float(v))
    if "." in text:
        return text
    mantissa, e, exponent = text.partition("e")
    return f"{mantissa}.0{e}{exponent}"  # the IR lexer needs a '.' in a float


@dataclass(frozen=True)
class StringAttr(Attribute):
    value: str

    def __str__(self) -> str:
        return quote_string(self.value)


def quote_string(s: str) -> str:
    """A double-quoted string with ``\\``, ``"`` and control characters escaped."""
    out = []
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\{ord(ch):02X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


@dataclass(frozen=True)
class UnitAttr(Attribute):
    """Presence-only flag; prints as its bare key in an attribute dictionary."""

    def __str__(self) -> str:
        return "unit"


@dataclass(frozen=True)
class ArrayAttr(Attribute):
    elements: tuple[Attribute, ...]

    def __str__(self) -> str:
        return "[" + ", ".join(str(e) for e in self.elements) + "]"


@dataclass(frozen=True)
class DenseArrayAttr(Attribute):
    """A flat list of integers of one type: ``array<i32: 128, 1, 1>``."""

    element_type: Type
    values: tuple[int, ...]

    def __str__(self) -> str:
        if not self.values:
            return f"array<{self.element_type}>"
        return f"array<{self.element_type}: " + ", ".join(str(v) for v in self.values) + ">"


@dataclass(frozen=True)
class TypeAttr(Attribute):
    value: Type

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True)
class SymbolRefAttr(Attribute):
    name: str

    def __str__(self) -> str:
        return "@" + (self.name if _is_bare_identifier(self.name) else quote_string(self.name))


@dataclass(frozen=True)
class DictAttr(Attribute):
    entries: tuple[tuple[str, Attribute], ...]

    def __str__(self) -> str:
        return format_attr_dict(dict(self.entries), braces=True)

    def get(self, key: str) -> Attribute | None:
        return dict(self.entries).get(key)


class DialectAttribute(Attribute):
    """An attribute of some dialect: ``#<name><body>``."""

    name: ClassVar[str]

    def print_body(self) -> str:
        return ""

    @classmethod
    def parse_body(cls, parser: Parser) -> DialectAttribute:
        return cls()

    def __str__(self) -> str:
        return f"#{self.name}<{self.print_body()}>"


def _is_bare_identifier(s: str) -> bool:
    return bool(s) and (s[0].isalpha() or s[0] == "_") and all(c.isalnum() or c in "_$." for c in s)


def format_attr_key(key: str) -> str:
    return key if _is_bare_identifier(key) else quote_string(key)


def format_attr_dict(attrs: dict[str, Attribute], *, braces: bool = True) -> str:
    """``{a = 1 : i32, flag}`` with keys in insertion order."""
    items = []
    for k, v in attrs.items():
        key = format_attr_key(k)
        items.append(key if isinstance(v, UnitAttr) else f"{key} = {v}")
    body = ", ".join(items)
    return "{" + body + "}" if braces else body


def int_attr(value: int, type: Type = i64) -> IntegerAttr:
    return IntegerAttr(value, type)


def index_attr(value: int) -> IntegerAttr:
    return IntegerAttr(value, IndexType())


def bool_attr(value: bool) -> IntegerAttr:
    return IntegerAttr(int(value), IntegerType(1))
