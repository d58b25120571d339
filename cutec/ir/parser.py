"""The textual IR parser: generic op form plus each op's custom form.

Helpers come in pairs: ``parse_optional_x`` returns None when the next token
does not start an x; ``parse_x`` raises a located `CompileError`. Ops with a
custom form implement ``parse_custom(parser, result_names)`` and use these
helpers; everything else is read in the generic form::

    %r:2 = "dialect.op"(%a, %b) ({ ... }) {attr = 1 : i32} : (i32, i32) -> (i32, i32)

The token helpers live in `parser_base`, types and attributes in
`parser_attrs`; this module reads values, regions and operations.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cutec.diagnostics import Location
from cutec.ir import types as T
from cutec.ir.core import Block, Operation, Region, Value
from cutec.ir.dialect import Registry
from cutec.ir.dialects.builtin import ModuleOp
from cutec.ir.lexer import Tok, Token, unescape_string
from cutec.ir.parser_attrs import TypeAttrParser

if TYPE_CHECKING:
    from cutec.ir.dialects.builtin import ModuleOp


@dataclass
class ResultName:
    """The left-hand side of an op: ``%name`` or ``%name:count``."""

    name: str
    count: int
    loc: Location


class Parser(TypeAttrParser):
    """The IR parser: values with scopes, regions, operations, whole modules."""

    def __init__(self, text: str, file: str = "<input>", reg: Registry | None = None) -> None:
        super().__init__(text, file, reg)
        # Value scopes: one dict per region being parsed; name → value(s).
        self.scopes: list[dict[str, list[Value]]] = [{}]

    # ------------------------------------------------------------------ values
    def lookup_value(self, tok: Token) -> Value:
        name, _, index_text = tok.text[1:].partition("#")
        for scope in reversed(self.scopes):
            if name in scope:
                values = scope[name]
                break
        else:
            raise self.error(f"use of undefined value '%{name}'", tok.loc)
        index = int(index_text) if index_text else 0
        if index >= len(values):
            raise self.error(f"'%{name}' has only {len(values)} results", tok.loc)
        if not index_text and len(values) > 1:
            raise self.error(f"'%{name}' has {len(values)} results; use '%{name}#N'", tok.loc)
        return values[index]

    def parse_optional_operand(self) -> Value | None:
        if self.tok.kind is not Tok.VALUE_ID:
            return None
        tok = self.advance()
        if self.tok.kind is Tok.PUNCT and self.tok.text == "#" and self.peek().kind is Tok.INTEGER:
            self.advance()
            idx = self.advance().text
            tok = Token(tok.kind, f"{tok.text}#{idx}", tok.loc, tok.offset)
        return self.lookup_value(tok)

    def parse_operand(self) -> Value:
        value = self.parse_optional_operand()
        if value is None:
            raise self.expected("an SSA value (%name)")
        return value

    def parse_operand_list(self) -> list[Value]:
        """An optional list of operands; stops before the next op's ``%r = ...``."""
        if self.tok.kind is not Tok.VALUE_ID or self._at_result_definition():
            return []
        return self.parse_comma_list(self.parse_operand)

    def check_types(self, values: Sequence[Value], types: Sequence[T.Type], loc: Location) -> None:
        """A custom form's written ``: types`` must be its operands' actual types."""
        if len(values) != len(types):
            raise self.error(f"{len(values)} operands but {len(types)} types", loc)
        for i, (v, t) in enumerate(zip(values, types, strict=True)):
            if v.type != t:
                raise self.error(f"operand #{i} has type {v.type}, but {t} is written", loc)

    def _at_result_definition(self) -> bool:
        """Whether ``%a, %b:2 = `` (the start of an op) follows."""
        i = self.pos
        toks = self.tokens
        while toks[i].kind is Tok.VALUE_ID:
            i += 1
            if toks[i].text in (":", "#") and toks[i + 1].kind is Tok.INTEGER:
                i += 2
            if toks[i].text != ",":
                break
            i += 1
        return toks[i].kind is Tok.PUNCT and toks[i].text == "="

    def define_values(self, name: str, values: Sequence[Value], loc: Location) -> None:
        scope = self.scopes[-1]
        if name in scope:
            raise self.error(f"redefinition of value '%{name}'", loc)
        scope[name] = list(values)
        hint = None if name[:1].isdigit() else name
        for v in values:
            v.name_hint = hint

    def parse_argument(self) -> tuple[str, Location, T.Type]:
        """``%name: type`` — a block argument being defined."""
        if self.tok.kind is not Tok.VALUE_ID:
            raise self.expected("an argument (%name: type)")
        tok = self.advance()
        self.parse_punct(":")
        return tok.text[1:], tok.loc, self.parse_type()

    def parse_assignment_list(self) -> tuple[list[tuple[str, Location]], list[Value]]:
        """``(%a = %x, %b = %y)``: names to define later (with their locations) and values."""
        names: list[tuple[str, Location]] = []
        values: list[Value] = []

        def assignment() -> None:
            if self.tok.kind is not Tok.VALUE_ID:
                raise self.expected("an assignment (%name = %value)")
            tok = self.advance()
            self.parse_punct("=")
            names.append((tok.text[1:], tok.loc))
            values.append(self.parse_operand())

        self.parse_delimited("(", assignment, ")")
        return names, values

    # ------------------------------------------------------------------ regions
    def parse_region(
        self, entry_args: Sequence[tuple[str, Location, T.Type]] | None = None
    ) -> Region:
        """``{ ops }`` or ``{ ^bb0(%a: t): ops }``; `entry_args` come from a custom header."""
        self.parse_punct("{")
        self.scopes.append({})
        region = Region()
        try:
            block = Block()
            explicit_entry = self.tok.kind is Tok.BLOCK_ID
            if explicit_entry and entry_args:
                raise self.error("block label not allowed here; arguments are in the op header")
            if explicit_entry:
                block = self._parse_block_header()
            else:
                for name, loc, t in entry_args or ():
                    arg = block.add_arg(t)
                    self.define_values(name, [arg], loc)
            region.add_block(block)
            while not (self.tok.kind is Tok.PUNCT and self.tok.text == "}"):
                if self.tok.kind is Tok.BLOCK_ID:
                    block = region.add_block(self._parse_block_header())
                    continue
                if self.tok.kind is Tok.EOF:
                    raise self.expected("'}'")
                block.append(self.parse_operation())
            self.advance()
        finally:
            self.scopes.pop()
        return region

    def _parse_block_header(self) -> Block:
        self.advance()  # the ^bbN label; blocks are referenced by position only
        block = Block()
        if self.tok.kind is Tok.PUNCT and self.tok.text == "(":
            for name, loc, t in self.parse_delimited("(", self.parse_argument, ")"):
                self.define_values(name, [block.add_arg(t)], loc)
        self.parse_punct(":")
        return block

    # ------------------------------------------------------------------ operations
    def parse_optional_location(self) -> Location | None:
        if not (self.tok.kind is Tok.BARE_ID and self.tok.text == "loc"):
            return None
        self.advance()
        self.parse_punct("(")
        if self.parse_optional_keyword("unknown"):
            self.parse_punct(")")
            return None
        file = self.parse_string()
        self.parse_punct(":")
        line = self.parse_integer("a line number")
        self.parse_punct(":")
        col = self.parse_integer("a column number")
        self.parse_punct(")")
        return Location(file, line, col)

    def _parse_result_names(self) -> list[ResultName]:
        names: list[ResultName] = []
        if self.tok.kind is not Tok.VALUE_ID:
            return names

        def one() -> ResultName:
            if self.tok.kind is not Tok.VALUE_ID:
                raise self.expected("a result name (%name)")
            tok = self.advance()
            count = 1
            if self.parse_optional_punct(":"):
                count = self.parse_integer("a result count")
                if count < 1:
                    raise self.error("result count must be positive", tok.loc)
            return ResultName(tok.text[1:], count, tok.loc)

        names = self.parse_comma_list(one)
        self.parse_punct("=")
        return names

    def parse_operation(self) -> Operation:
        """One op, custom or generic, with its results defined in the current scope."""
        start = self.tok.loc
        names = self._parse_result_names()
        op_tok = self.tok
        if op_tok.kind is Tok.STRING:
            op = self._parse_generic(unescape_string(op_tok.text))
        elif op_tok.kind is Tok.BARE_ID:
            cls = self.registry.op_class(op_tok.text)
            if cls is None or not hasattr(cls, "parse_custom"):
                what = "unknown operation" if cls is None else "no custom form for operation"
                raise self.error(f"{what} '{op_tok.text}'", op_tok.loc)
            self.advance()
            try:
                op = cls.parse_custom(self, names)  # type: ignore[attr-defined]
            except (ValueError, TypeError) as e:
                raise self.error(f"invalid '{cls.name}': {e}", op_tok.loc) from None
        else:
            raise self.expected("an operation")
        op.parsed_at = op_tok.loc
        loc = self.parse_optional_location()
        if loc is not None:
            op.location = loc
        expected = sum(n.count for n in names)
        if expected != len(op.results):
            raise self.error(
                f"operation defines {len(op.results)} results but {expected} names were given",
                start,
            )
        i = 0
        for n in names:
            self.define_values(n.name, op.results[i : i + n.count], n.loc)
            i += n.count
        return op

    def _parse_generic(self, name: str) -> Operation:
        tok = self.advance()
        cls = self.registry.op_class(name)
        if cls is None or "." not in name:
            raise self.error(f"unknown operation '{name}'", tok.loc)
        operands = self.parse_delimited("(", self.parse_operand, ")")
        regions: list[Region] = []
        if self.tok.kind is Tok.PUNCT and self.tok.text == "(":
            regions = self.parse_delimited("(", self.parse_region, ")")
        attrs = self.parse_optional_attr_dict()
        type_loc = self.tok.loc
        self.parse_punct(":")
        fn = self.parse_function_type()
        if len(fn.inputs) != len(operands):
            raise self.error(
                f"{len(operands)} operands but the type lists {len(fn.inputs)}", type_loc
            )
        for i, (v, t) in enumerate(zip(operands, fn.inputs, strict=True)):
            if v.type != t:
                raise self.error(f"operand #{i} has type {v.type}, but the op says {t}", type_loc)
        return cls.create(
            operands=operands, result_types=fn.results, attributes=attrs, regions=regions
        )

    def parse_module(self) -> ModuleOp:
        """A whole file: one ``module {...}``, or ops that get wrapped in one."""
        ops: list[Operation] = []
        while self.tok.kind is not Tok.EOF:
            ops.append(self.parse_operation())
        if len(ops) == 1 and isinstance(ops[0], ModuleOp):
            return ops[0]
        module = ModuleOp()
        for op in ops:
            if op.results:
                raise self.error(f"top-level '{op.name}' may not produce results", op.location)
            module.body.append(op)
        return module


def parse_module(text: str, file: str = "<input>") -> ModuleOp:
    """Parse IR text into a module (user errors raise `CompileError`)."""
    return Parser(text, file).parse_module()
