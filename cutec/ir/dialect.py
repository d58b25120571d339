"""Dialects and the registry the parser and the passes look ops up in.

Each dialect module ends with one `Dialect(...)` value listing its ops, types
and attributes explicitly; `registry()` gathers the dialects cutec knows.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from functools import cache

from cutec.ir.attributes import DialectAttribute
from cutec.ir.core import Operation
from cutec.ir.types import DialectType

# Dialect modules, in load order. A new dialect adds its module here.
DIALECT_MODULES = (
    "cutec.ir.dialects.builtin",
    "cutec.ir.dialects.arith",
    "cutec.ir.dialects.math",
    "cutec.ir.dialects.scf",
    "cutec.ir.dialects.gpu",
    "cutec.ir.dialects.thread",
    "cutec.ir.dialects.cute",
)


@dataclass(frozen=True)
class Dialect:
    """A named family of ops, types and attributes."""

    name: str
    ops: tuple[type[Operation], ...]
    types: tuple[type[DialectType], ...] = ()
    attributes: tuple[type[DialectAttribute], ...] = ()

    def __post_init__(self) -> None:
        for op in self.ops:
            if not op.name.startswith(self.name + "."):
                raise ValueError(f"op {op.name} does not belong to dialect {self.name}")


@dataclass
class Registry:
    """Name → class for every registered op, dialect type and dialect attribute."""

    ops: dict[str, type[Operation]] = field(default_factory=dict)
    types: dict[str, type[DialectType]] = field(default_factory=dict)
    attributes: dict[str, type[DialectAttribute]] = field(default_factory=dict)
    dialects: dict[str, Dialect] = field(default_factory=dict)

    def add(self, dialect: Dialect) -> None:
        if dialect.name in self.dialects:
            raise ValueError(f"dialect {dialect.name} registered twice")
        self.dialects[dialect.name] = dialect
        for table, classes in (
            (self.ops, dialect.ops),
            (self.types, dialect.types),
            (self.attributes, dialect.attributes),
        ):
            for cls in classes:
                if cls.name in table:
                    raise ValueError(f"{cls.name} registered twice")
                table[cls.name] = cls

    def op_class(self, name: str) -> type[Operation] | None:
        """The class of op `name`; a bare name also finds a builtin op (``module``)."""
        found = self.ops.get(name)
        if found is None and "." not in name:
            found = self.ops.get("builtin." + name)
        return found


@cache
def registry() -> Registry:
    """The registry of every dialect in `DIALECT_MODULES`."""
    reg = Registry()
    for module_name in DIALECT_MODULES:
        reg.add(importlib.import_module(module_name).DIALECT)
    return reg
