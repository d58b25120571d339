"""Virtual registers: one PTX register per SSA value, numbered per register class.

PTX registers are virtual; ptxas allocates the hardware ones. So the emitter
gives every value its own register (``%r7``) and declares each class once at
the kernel's top with the count used (``.reg .b32 %r<8>;``). Values that must
share a register — a loop's carried value and the loop's result, an scf.if's
result written in both branches — are bound to one name (`bind`).
"""

from __future__ import annotations

from cutec.dtypes import REGISTER_PREFIX
from cutec.ir.core import Value

# Declaration order of the classes at the kernel's top.
_CLASS_ORDER = tuple(REGISTER_PREFIX)


class Registers:
    """The registers of one kernel: a counter per class and each value's register."""

    def __init__(self) -> None:
        self._count: dict[str, int] = {}
        self._of: dict[Value, str] = {}

    def new(self, reg_class: str) -> str:
        """A fresh register of `reg_class` (``b32`` → ``%r3``)."""
        n = self._count.get(reg_class, 0)
        self._count[reg_class] = n + 1
        return f"{REGISTER_PREFIX[reg_class]}{n}"

    def bind(self, value: Value, name: str) -> str:
        """Give `value` the register `name` (which another value may hold too)."""
        assert value not in self._of, f"{value} already has register {self._of[value]}"
        self._of[value] = name
        return name

    def has(self, value: Value) -> bool:
        return value in self._of

    def of(self, value: Value) -> str:
        """The register holding `value` (defined earlier in program order)."""
        return self._of[value]

    def declarations(self) -> list[str]:
        """``.reg .b32 %r<N>;`` for each class used."""
        return [
            f".reg .{c} {REGISTER_PREFIX[c]}<{self._count[c]}>;"
            for c in _CLASS_ORDER
            if self._count.get(c)
        ]
