"""CuTe's print form of the reference cases' arguments: parsing, printing, and C++ to build them.

    _8 static leaf (Int<8>{})     8 dynamic leaf (int)      _ or X  Underscore
    (a,b,...) tuple               shape:stride  layout      Sw<B,M,S>  swizzle
    A o O o B  composed layout    identifier  a type (uint16_t) or tag (LayoutRight)

A tuple whose elements include a layout is a tiler (cute::Tile); otherwise an IntTuple.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Int:
    value: int
    static: bool


@dataclass(frozen=True)
class Under:
    pass


@dataclass(frozen=True)
class Tup:
    items: tuple[Arg, ...]


@dataclass(frozen=True)
class Lay:
    shape: Arg
    stride: Arg


@dataclass(frozen=True)
class Swz:
    b: int
    m: int
    s: int


@dataclass(frozen=True)
class Composed:
    inner: Arg
    offset: Arg
    outer: Arg


@dataclass(frozen=True)
class Name:
    name: str


Arg = Int | Under | Tup | Lay | Swz | Composed | Name

_TOKEN = re.compile(
    r"(?P<o>\s+o\s+)|\s*(?:(?P<sw>Sw<-?\d+,-?\d+,-?\d+>)|(?P<sint>_-?\d+)"
    r"|(?P<dint>-?\d+)|(?P<name>[A-Za-z][A-Za-z0-9_:]*)|(?P<under>_)|(?P<p>[(),:]))"
)


class ParseError(ValueError):
    pass


def tokenize(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ParseError(f"cannot tokenize {text!r} at {pos}: {text[pos:]!r}")
        kind = m.lastgroup
        assert kind is not None
        tokens.append((kind, m.group(kind)))
        pos = m.end()
    return tokens


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.pos = 0

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        tok = self.peek()
        if tok is None:
            raise ParseError(f"unexpected end of {self.text!r}")
        self.pos += 1
        return tok

    def expect(self, value: str) -> None:
        tok = self.take()
        if tok[1] != value:
            raise ParseError(f"expected {value!r} in {self.text!r}, got {tok[1]!r}")

    def parse(self) -> Arg:
        parts = [self.term()]
        while self.peek() is not None and self.peek()[0] == "o":  # type: ignore[index]
            self.take()
            parts.append(self.term())
        if self.peek() is not None:
            raise ParseError(f"trailing text in {self.text!r}")
        if len(parts) == 1:
            return parts[0]
        if len(parts) != 3:
            raise ParseError(f"a composed layout is `A o offset o B`: {self.text!r}")
        return Composed(parts[0], parts[1], parts[2])

    def term(self) -> Arg:
        atom = self.atom()
        tok = self.peek()
        if tok is not None and tok[1] == ":":
            self.take()
            return Lay(atom, self.atom())
        return atom

    def atom(self) -> Arg:
        kind, value = self.take()
        if kind == "sint":
            return Int(int(value[1:]), True)
        if kind == "dint":
            return Int(int(value), False)
        if kind == "under" or (kind == "name" and value == "X"):
            return Under()
        if kind == "sw":
            b, m, s = (int(v) for v in value[3:-1].split(","))
            return Swz(b, m, s)
        if kind == "name":
            return Name(value)
        if value == "(":
            items = [self.term()]
            while self.peek() is not None and self.peek()[1] == ",":  # type: ignore[index]
                self.take()
                items.append(self.term())
            self.expect(")")
            return Tup(tuple(items))
        raise ParseError(f"unexpected {value!r} in {self.text!r}")


def parse_arg(text: str) -> Arg:
    return _Parser(text).parse()


def show(arg: Arg) -> str:
    """The canonical (CuTe print) text of an argument."""
    match arg:
        case Int(value, static):
            return f"_{value}" if static else str(value)
        case Under():
            return "_"
        case Tup(items):
            return "(" + ",".join(show(i) for i in items) + ")"
        case Lay(shape, stride):
            return f"{show(shape)}:{show(stride)}"
        case Swz(b, m, s):
            return f"Sw<{b},{m},{s}>"
        case Composed(inner, offset, outer):
            return f"{show(inner)} o {show(offset)} o {show(outer)}"
        case Name(name):
            return name
    raise TypeError(arg)


# C++ spellings of the names an argument may use.
TAGS = {"LayoutLeft": "cute::LayoutLeft{}", "LayoutRight": "cute::LayoutRight{}"}
TYPES = {
    "uint1_t": "cute::uint1_t",
    "uint2_t": "cute::uint2_t",
    "uint4_t": "cute::uint4_t",
    "uint8_t": "uint8_t",
    "uint16_t": "uint16_t",
    "uint32_t": "uint32_t",
    "uint64_t": "uint64_t",
    "uint128_t": "cute::uint128_t",
    "half_t": "cute::half_t",
    "float": "float",
    "double": "double",
}


def cpp(arg: Arg) -> str:
    """A C++ expression constructing the argument."""
    match arg:
        case Int(value, static):
            return f"Int<{value}>{{}}" if static else f"int({value})"
        case Under():
            return "_"
        case Tup(items):
            return "cute::make_tuple(" + ", ".join(cpp(i) for i in items) + ")"
        case Lay(shape, stride):
            return f"make_layout({cpp(shape)}, {cpp(stride)})"
        case Swz(b, m, s):
            return f"Swizzle<{b},{m},{s}>{{}}"
        case Composed(inner, offset, outer):
            return f"make_composed_layout({cpp(inner)}, {cpp(offset)}, {cpp(outer)})"
        case Name(name):
            if name in TAGS:
                return TAGS[name]
            if name in TYPES:
                return TYPES[name]
            raise ParseError(f"unknown name {name!r}")
    raise TypeError(arg)


def cpp_type(arg: Arg) -> str:
    if not isinstance(arg, Name) or arg.name not in TYPES:
        raise ParseError(f"expected an element type, got {show(arg)!r}")
    return TYPES[arg.name]


def cpp_template_int(arg: Arg) -> str:
    if not isinstance(arg, Int):
        raise ParseError(f"expected an integer template argument, got {show(arg)!r}")
    return str(arg.value)
