"""Virtual registers: one PTX register per SSA value, numbered per register class.

PTX registers are virtual; ptxas allocates the hardware ones. So the emitter
gives every value its own register (``%r7``) and declares each class once at
the kernel's top with the count used (``.reg .b32 %r<8>;``). Values that must
share a register — a loop's carried value and the loop's result, an scf.if's
result written in both branches — are bound to one name (`bind`).

A vector value (``vector<4xf32>``) is held in N registers of its element's
class, one per element (`bind_elements`); as an instruction operand it is the
brace list ``{%f0, %f1, %f2, %f3}`` (`of`), PTX's vector operand. Its elements
are registers like any other, so ``thread.extract`` binds its result to
element ``pos`` and ``thread.from_elements`` binds its vector to its
operands' registers: neither costs an instruction.

A pair of 16-bit elements (``vector<2xf16>``: an ldmatrix or mma.sync fragment
register) may also, or instead, live packed in one b32 register (`bind_packed`):
the form the tensor-core instructions read and write, and the one a loop
carries (emitter.py, *packed pairs*).
"""

from __future__ import annotations

from collections.abc import Sequence

from cutec.dtypes import REGISTER_PREFIX
from cutec.ir.core import Value
from cutec.ir.types import VectorType
from cutec.ptx.tables import ptx_type

# Declaration order of the classes at the kernel's top.
_CLASS_ORDER = tuple(REGISTER_PREFIX)


def packs(value: Value) -> bool:
    """Whether `value` is a pair of 16-bit elements, which one b32 register can hold."""
    t = value.type
    if not isinstance(t, VectorType) or t.shape != (2,):
        return False
    p = ptx_type(t.element)  # 8-bit elements live in b16 registers too: not a pair
    return p is not None and p.reg == "b16" and p.nbytes == 2


class Registers:
    """The registers of one kernel: a counter per class and each value's register(s)."""

    def __init__(self) -> None:
        self._count: dict[str, int] = {}
        self._of: dict[Value, str] = {}
        self._elements: dict[Value, tuple[str, ...]] = {}
        self._packed: dict[Value, str] = {}

    def new(self, reg_class: str) -> str:
        """A fresh register of `reg_class` (``b32`` → ``%r3``)."""
        n = self._count.get(reg_class, 0)
        self._count[reg_class] = n + 1
        return f"{REGISTER_PREFIX[reg_class]}{n}"

    def bind(self, value: Value, name: str) -> str:
        """Give `value` the register `name` (which another value may hold too)."""
        assert not self.has_elements(value), f"{value} already has register {self.of(value)}"
        self._of[value] = name
        return name

    def bind_elements(self, value: Value, names: Sequence[str]) -> str:
        """Give vector `value` one register per element; returns its brace list."""
        assert not self.has_elements(value), f"{value} already has register {self.of(value)}"
        self._elements[value] = tuple(names)
        return self.of(value)

    def bind_packed(self, value: Value, name: str) -> str:
        """Give a pair of 16-bit elements its packed b32 register `name`."""
        assert value not in self._packed, f"{value} is already packed in {self._packed[value]}"
        self._packed[value] = name
        return name

    def has(self, value: Value) -> bool:
        return value in self._of or value in self._elements or value in self._packed

    def has_elements(self, value: Value) -> bool:
        return value in self._of or value in self._elements

    def packed(self, value: Value) -> str | None:
        """The packed b32 register of a pair of 16-bit elements, None if it has none."""
        return self._packed.get(value)

    def of(self, value: Value) -> str:
        """The register holding `value` (defined earlier in program order); a vector's
        brace list."""
        assert self.has_elements(value), f"{value} lives only packed, in {self._packed[value]}"
        if value in self._elements:
            return "{" + ", ".join(self._elements[value]) + "}"
        return self._of[value]

    def elements(self, value: Value) -> tuple[str, ...]:
        """A vector's registers, element 0 first; a scalar's one register (none for a token)."""
        assert self.has_elements(value), f"{value} lives only packed, in {self._packed[value]}"
        if value in self._elements:
            return self._elements[value]
        name = self._of[value]
        return (name,) if name else ()

    def declarations(self) -> list[str]:
        """``.reg .b32 %r<N>;`` for each class used."""
        return [
            f".reg .{c} {REGISTER_PREFIX[c]}<{self._count[c]}>;"
            for c in _CLASS_ORDER
            if self._count.get(c)
        ]
