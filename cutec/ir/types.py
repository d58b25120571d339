"""Types: frozen, hashable values that print themselves.

Builtin types print bare (``i32``, ``f16``, ``index``, ``vector<4xf32>``,
``(i32) -> f32``). A dialect type prints as ``!dialect.name<body>``; it owns its
body text through `print_body` / `parse_body`, so a type can carry any
printable parameters (the layout type carries a CuTe layout).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from cutec.dtypes import DType, UnknownDTypeError, dtype_of_ir

if TYPE_CHECKING:
    from cutec.ir.parser import Parser


class Type:
    """Base of all types."""

    def __str__(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class IntegerType(Type):
    """Signless integer of `width` bits (i1 is the boolean)."""

    width: int

    def __str__(self) -> str:
        return f"i{self.width}"


@dataclass(frozen=True)
class IndexType(Type):
    """Integer of the target's address width, for loop bounds and index math."""

    def __str__(self) -> str:
        return "index"


# name → (bit width, numpy-ish description); names follow MLIR's spelling.
FLOAT_KINDS: dict[str, int] = {
    "f16": 16,
    "bf16": 16,
    "f32": 32,
    "f64": 64,
    "tf32": 32,  # stored in 32 bits; the tensor cores read 19 of them
    "f8E4M3FN": 8,
    "f8E5M2": 8,
}


@dataclass(frozen=True)
class FloatType(Type):
    """A floating-point type: f16, bf16, f32, f64, tf32, f8E4M3FN (e4m3), f8E5M2 (e5m2)."""

    kind: str

    def __post_init__(self) -> None:
        if self.kind not in FLOAT_KINDS:
            raise ValueError(f"unknown float type {self.kind!r}")

    @property
    def width(self) -> int:
        return FLOAT_KINDS[self.kind]

    def __str__(self) -> str:
        return self.kind


@dataclass(frozen=True)
class VectorType(Type):
    """A fixed-shape vector of scalars: ``vector<4xf32>``, ``vector<2x2xf16>``."""

    shape: tuple[int, ...]
    element: Type

    def __post_init__(self) -> None:
        if not self.shape or any(d <= 0 for d in self.shape):
            raise ValueError(f"vector shape must be non-empty and positive, got {self.shape}")

    def __str__(self) -> str:
        dims = "x".join(str(d) for d in self.shape)
        return f"vector<{dims}x{self.element}>"


@dataclass(frozen=True)
class FunctionType(Type):
    """The signature of a function or kernel."""

    inputs: tuple[Type, ...]
    results: tuple[Type, ...]

    def __str__(self) -> str:
        ins = ", ".join(str(t) for t in self.inputs)
        if len(self.results) == 1 and not isinstance(self.results[0], FunctionType):
            outs = str(self.results[0])
        else:
            outs = "(" + ", ".join(str(t) for t in self.results) + ")"
        return f"({ins}) -> {outs}"


class DialectType(Type):
    """A type of some dialect: ``!<name><body>``; subclasses are frozen dataclasses."""

    name: ClassVar[str]

    def print_body(self) -> str:
        """The text between the angle brackets ('' for a type without parameters)."""
        return ""

    @classmethod
    def parse_body(cls, parser: Parser) -> DialectType:
        """Read the parameters; the parser stands after '<' (or after the name if none)."""
        return cls()

    has_body: ClassVar[bool] = True

    def __str__(self) -> str:
        return f"!{self.name}<{self.print_body()}>" if self.has_body else f"!{self.name}"


# The builtin singletons, named as in the textual IR.
i1 = IntegerType(1)
i8 = IntegerType(8)
i16 = IntegerType(16)
i32 = IntegerType(32)
i64 = IntegerType(64)
index = IndexType()
f16 = FloatType("f16")
bf16 = FloatType("bf16")
f32 = FloatType("f32")
f64 = FloatType("f64")
tf32 = FloatType("tf32")
e4m3 = FloatType("f8E4M3FN")
e5m2 = FloatType("f8E5M2")


def is_integer_like(t: Type) -> bool:
    """Integer or index, or a vector of them."""
    if isinstance(t, VectorType):
        t = t.element
    return isinstance(t, IntegerType | IndexType)


def is_float_like(t: Type) -> bool:
    """A float type, or a vector of floats."""
    if isinstance(t, VectorType):
        t = t.element
    return isinstance(t, FloatType)


def element_type(t: Type) -> Type:
    """The scalar type of `t` (itself for scalars)."""
    return t.element if isinstance(t, VectorType) else t


def bit_width(t: Type) -> int:
    """Width in bits of a scalar type (index counts as 64)."""
    if isinstance(t, IntegerType):
        return t.width
    if isinstance(t, FloatType):
        return t.width
    if isinstance(t, IndexType):
        return 64
    raise ValueError(f"{t} has no bit width")


# Element types by printed name: the IR side of cutec/dtypes.py's rows.
_ELEMENT_TYPES: dict[str, Type] = {
    str(t): t for t in (i1, i8, i16, i32, i64, f16, bf16, f32, f64, tf32, e4m3, e5m2)
}


def element_type_named(name: str) -> Type:
    """The element type printed `name` (``f32``, ``i32``, ``f8E4M3FN``)."""
    found = _ELEMENT_TYPES.get(name)
    if found is None:
        raise ValueError(f"no element type {name!r}; known: {', '.join(_ELEMENT_TYPES)}")
    return found


def dtype_of(t: Type) -> DType:
    """The element-type row of `t` (raises naming the element types for others)."""
    return dtype_of_ir(str(t))


def ir_type(d: DType) -> Type:
    """The IR type of row `d`; raises for the rows the IR has no type for (u8 ...)."""
    if d.ir is None:
        raise UnknownDTypeError(f"{d.name} has no IR type (the IR's integers are signless)")
    return _ELEMENT_TYPES[d.ir]


def dtype_name(t: Type) -> str:
    """The atom library's name of an element type (f32, tf32, s8, e4m3, ...); else str(t)."""
    try:
        return dtype_of(t).name
    except UnknownDTypeError:
        return str(t)
