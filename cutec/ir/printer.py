"""The textual IR printer.

Every op prints in the generic form unless its class defines
``print_custom(printer)``, which writes everything after ``%r = `` (starting
with the op name). The output parses back to the same IR, and printing that
again gives the same text.

Value names: a value keeps the name it was parsed or built with
(``%acc``), uniqued with a ``_N`` suffix; other values are numbered ``%0, %1…``
in print order.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence

from cutec.diagnostics import Location
from cutec.ir import attributes as A
from cutec.ir.attributes import format_attr_dict
from cutec.ir.core import Block, Operation, Region, Value
from cutec.ir.traits import IsolatedFromAbove
from cutec.ir.types import FunctionType, Type


class Printer:
    """Writes ops to a text stream with consistent value names."""

    def __init__(
        self,
        stream: io.TextIOBase | None = None,
        *,
        print_locations: bool = True,
        generic: bool = False,
    ) -> None:
        self.stream = stream if stream is not None else io.StringIO()
        self.print_locations = print_locations
        self.generic = generic
        self.indent = 0
        self._names: dict[Value, str] = {}
        self._used: set[str] = set()
        self._next_number = 0

    # ------------------------------------------------------------------ output
    def print(self, *parts: object) -> None:
        for p in parts:
            self.stream.write(str(p))

    def newline(self) -> None:
        self.stream.write("\n" + "  " * self.indent)

    def print_list(self, items: Iterable[object], each=None, sep: str = ", ") -> None:
        first = True
        for item in items:
            if not first:
                self.print(sep)
            first = False
            if each is None:
                self.print(item)
            else:
                each(item)

    # ------------------------------------------------------------------ names
    def _fresh(self, hint: str | None) -> str:
        if hint:
            name, n = hint, 0
            while name in self._used:
                n += 1
                name = f"{hint}_{n}"
        else:
            while str(self._next_number) in self._used:
                self._next_number += 1
            name = str(self._next_number)
            self._next_number += 1
        self._used.add(name)
        return name

    def _name_results(self, op: Operation) -> str | None:
        if not op.results:
            return None
        base = self._fresh(op.results[0].name_hint)
        if len(op.results) == 1:
            self._names[op.results[0]] = base
        else:
            for r in op.results:
                self._names[r] = f"{base}#{r.index}"
        return base

    def name_of(self, value: Value) -> str:
        name = self._names.get(value)
        if name is None:
            # A use printed before its definition (invalid IR, still printable).
            name = self._fresh(value.name_hint)
            self._names[value] = name
        return "%" + name

    def define_block_args(self, block: Block) -> None:
        for a in block.args:
            if a not in self._names:
                self._names[a] = self._fresh(a.name_hint)

    # ------------------------------------------------------------------ pieces
    def print_operand(self, value: Value) -> None:
        self.print(self.name_of(value))

    def print_operands(self, values: Sequence[Value]) -> None:
        self.print_list(values, self.print_operand)

    def print_type(self, t: Type) -> None:
        self.print(t)

    def print_types(self, types: Sequence[Type]) -> None:
        self.print_list(types, self.print_type)

    def print_result_types(self, types: Sequence[Type]) -> None:
        """``t`` or ``(t1, t2)`` after an arrow."""
        if len(types) == 1 and not isinstance(types[0], FunctionType):
            self.print(types[0])
        else:
            self.print("(")
            self.print_types(types)
            self.print(")")

    def print_attr_dict(self, attrs: dict[str, A.Attribute], elided: Iterable[str] = ()) -> None:
        """`` {k = v}`` (leading space) for the attributes not in `elided`."""
        skip = set(elided)
        rest = {k: v for k, v in attrs.items() if k not in skip}
        if rest:
            self.print(" ", format_attr_dict(rest))

    def print_attr_dict_with_keyword(
        self, attrs: dict[str, A.Attribute], elided: Iterable[str] = ()
    ) -> None:
        skip = set(elided)
        rest = {k: v for k, v in attrs.items() if k not in skip}
        if rest:
            self.print(" attributes ", format_attr_dict(rest))

    def print_argument(self, arg: Value) -> None:
        """``%name: type`` for a block argument shown in an op header."""
        self.print(self.name_of(arg), ": ", arg.type)

    def print_assignment_list(self, lhs: Sequence[Value], rhs: Sequence[Value]) -> None:
        """``(%a = %x, %b = %y)``: block arguments and the values they start from."""
        self.print("(")
        for i, (a, v) in enumerate(zip(lhs, rhs, strict=True)):
            self.print(", " if i else "", self.name_of(a), " = ", self.name_of(v))
        self.print(")")

    def print_region(self, region: Region, *, print_entry_args: bool = True) -> None:
        self.print("{")
        self.indent += 1
        for i, block in enumerate(region.blocks):
            self.define_block_args(block)
            if i > 0 or (print_entry_args and block.args):
                self.indent -= 1
                self.newline()
                self.print(f"^bb{i}")
                if block.args:
                    self.print("(")
                    self.print_list(block.args, self.print_argument)
                    self.print(")")
                self.print(":")
                self.indent += 1
            for op in block.ops:
                self.newline()
                self.print_op(op)
        self.indent -= 1
        self.newline()
        self.print("}")

    def print_location(self, loc: Location | None) -> None:
        if self.print_locations and loc is not None:
            self.print(" ", format_location(loc))

    # ------------------------------------------------------------------ ops
    def print_op(self, op: Operation) -> None:
        base = self._name_results(op)
        if base is not None:
            self.print("%", base)
            if len(op.results) > 1:
                self.print(":", len(op.results))
            self.print(" = ")
        # Names restart inside an op isolated from above (as in MLIR): no outer
        # value is visible there, so nothing can clash.
        saved = (self._used, self._next_number)
        if op.has_trait(IsolatedFromAbove):
            self._used, self._next_number = set(), 0
        custom = getattr(op, "print_custom", None)
        if custom is not None and not self.generic:
            custom(self)
        else:
            self.print_generic(op)
        self._used, self._next_number = saved
        self.print_location(op.location)

    def print_generic(self, op: Operation) -> None:
        self.print(A.quote_string(op.name), "(")
        self.print_operands(op.operands)
        self.print(")")
        if op.regions:
            self.print(" (")
            self.print_list(op.regions, self.print_region)
            self.print(")")
        self.print_attr_dict(op.attributes)
        self.print(" : ", FunctionType(op.operand_types, op.result_types))


def format_location(loc: Location) -> str:
    return f"loc({A.quote_string(loc.file)}:{loc.line}:{loc.col})"


def print_op(op: Operation, *, print_locations: bool = True, generic: bool = False) -> str:
    """The text of `op` (a module prints as a whole file), ending in a newline."""
    printer = Printer(print_locations=print_locations, generic=generic)
    printer.print_op(op)
    printer.print("\n")
    stream = printer.stream
    assert isinstance(stream, io.StringIO)
    return stream.getvalue()
