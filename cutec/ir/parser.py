"""The textual IR parser: generic op form plus each op's custom form.

Helpers come in pairs: ``parse_optional_x`` returns None when the next token
does not start an x; ``parse_x`` raises a located `CompileError`. Ops with a
custom form implement ``parse_custom(parser, result_names)`` and use these
helpers; everything else is read in the generic form::

    %r:2 = "dialect.op"(%a, %b) ({ ... }) {attr = 1 : i32} : (i32, i32) -> (i32, i32)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from cutec.diagnostics import SOURCES, CompileError, Location
from cutec.ir import attributes as A
from cutec.ir import types as T
from cutec.ir.core import Block, Operation, Region, Value
from cutec.ir.dialect import Registry, registry
from cutec.ir.lexer import Tok, Token, tokenize, unescape_string

if TYPE_CHECKING:
    from cutec.ir.dialects.builtin import ModuleOp

X = TypeVar("X")

_INT_TYPE_NAMES = {f"i{w}": w for w in (1, 8, 16, 32, 64, 128)}
_VECTOR_REST = re.compile(r"x((?:[0-9]+x)*)([A-Za-z_][A-Za-z0-9_]*)")


def _scalar_type_named(text: str) -> T.Type | None:
    """The builtin scalar type spelled `text`, or None."""
    if text in _INT_TYPE_NAMES:
        return T.IntegerType(_INT_TYPE_NAMES[text])
    if text == "index":
        return T.IndexType()
    if text in T.FLOAT_KINDS:
        return T.FloatType(text)
    return None


@dataclass
class ResultName:
    """The left-hand side of an op: ``%name`` or ``%name:count``."""

    name: str
    count: int
    loc: Location


class Parser:
    """A recursive-descent parser over the token list of one source text."""

    def __init__(self, text: str, file: str = "<input>", reg: Registry | None = None) -> None:
        SOURCES.add(file, text)
        self.text = text
        self.file = file
        self.tokens = tokenize(text, file)
        self.pos = 0
        self.registry = reg or registry()
        # Value scopes: one dict per region being parsed; name → value(s).
        self.scopes: list[dict[str, list[Value]]] = [{}]

    # ------------------------------------------------------------------ tokens
    @property
    def tok(self) -> Token:
        return self.tokens[self.pos]

    def peek(self, ahead: int = 1) -> Token:
        return self.tokens[min(self.pos + ahead, len(self.tokens) - 1)]

    def advance(self) -> Token:
        tok = self.tokens[self.pos]
        if tok.kind is not Tok.EOF:
            self.pos += 1
        return tok

    def error(self, message: str, loc: Location | None = None) -> CompileError:
        return CompileError(message, loc or self.tok.loc)

    def expected(self, what: str) -> CompileError:
        return self.error(f"expected {what}, found {self.tok.describe()}")

    def parse_optional_punct(self, text: str) -> bool:
        if self.tok.kind is Tok.PUNCT and self.tok.text == text:
            self.advance()
            return True
        return False

    def parse_punct(self, text: str) -> None:
        if not self.parse_optional_punct(text):
            raise self.expected(f"'{text}'")

    def parse_optional_keyword(self, word: str) -> bool:
        if self.tok.kind is Tok.BARE_ID and self.tok.text == word:
            self.advance()
            return True
        return False

    def parse_keyword(self, word: str) -> None:
        if not self.parse_optional_keyword(word):
            raise self.expected(f"'{word}'")

    def parse_identifier(self, what: str = "an identifier") -> str:
        if self.tok.kind is not Tok.BARE_ID:
            raise self.expected(what)
        return self.advance().text

    def parse_comma_list(self, item: Callable[[], X], close: str | None = None) -> list[X]:
        """Items separated by commas, up to (not consuming) `close` if given."""
        if close is not None and self.tok.kind is Tok.PUNCT and self.tok.text == close:
            return []
        items = [item()]
        while self.parse_optional_punct(","):
            items.append(item())
        return items

    def parse_delimited(self, open_: str, item: Callable[[], X], close: str) -> list[X]:
        self.parse_punct(open_)
        items = self.parse_comma_list(item, close)
        self.parse_punct(close)
        return items

    # ------------------------------------------------------------------ literals
    def parse_optional_integer(self) -> int | None:
        neg = self.tok.kind is Tok.PUNCT and self.tok.text == "-"
        if neg and self.peek().kind is not Tok.INTEGER:
            return None
        if not neg and self.tok.kind is not Tok.INTEGER:
            return None
        if neg:
            self.advance()
        value = int(self.advance().text, 0)
        return -value if neg else value

    def parse_integer(self, what: str = "an integer") -> int:
        value = self.parse_optional_integer()
        if value is None:
            raise self.expected(what)
        return value

    def parse_string(self) -> str:
        if self.tok.kind is not Tok.STRING:
            raise self.expected("a string")
        tok = self.advance()
        try:
            return unescape_string(tok.text)
        except (ValueError, IndexError):
            raise self.error("invalid escape in string", tok.loc) from None

    def parse_symbol_name(self) -> str:
        if self.tok.kind is not Tok.SYMBOL:
            raise self.expected("a symbol name (@name)")
        text = self.advance().text[1:]
        return unescape_string(text) if text.startswith('"') else text

    def parse_balanced_body(self) -> str:
        """Raw source text up to (not including) the '>' that closes an open '<'."""
        start = self.tok.offset
        depth = 1
        while True:
            tok = self.tok
            if tok.kind is Tok.EOF:
                raise self.expected("'>'")
            if tok.kind is Tok.PUNCT and tok.text == "<":
                depth += 1
            elif tok.kind is Tok.PUNCT and tok.text == ">":
                depth -= 1
                if depth == 0:
                    return self.text[start : tok.offset].strip()
            self.advance()

    # ------------------------------------------------------------------ types
    def parse_optional_type(self) -> T.Type | None:
        tok = self.tok
        if tok.kind is Tok.BARE_ID:
            scalar = _scalar_type_named(tok.text)
            if scalar is not None:
                self.advance()
                return scalar
            if tok.text == "vector":
                self.advance()
                return self._parse_vector_body()
            return None
        if tok.kind is Tok.TYPE_ALIAS:
            return self._parse_dialect_type()
        if tok.kind is Tok.PUNCT and tok.text == "(":
            return self.parse_function_type()
        return None

    def parse_type(self) -> T.Type:
        t = self.parse_optional_type()
        if t is None:
            raise self.expected("a type")
        return t

    def parse_colon_type(self) -> T.Type:
        self.parse_punct(":")
        return self.parse_type()

    def parse_type_list(self) -> list[T.Type]:
        return self.parse_comma_list(self.parse_type)

    def parse_function_type(self) -> T.FunctionType:
        inputs = self.parse_delimited("(", self.parse_type, ")")
        self.parse_punct("->")
        return T.FunctionType(tuple(inputs), tuple(self.parse_result_types()))

    def parse_result_types(self) -> list[T.Type]:
        """``t`` or ``(t1, t2)`` after an arrow."""
        if self.tok.kind is Tok.PUNCT and self.tok.text == "(":
            # A parenthesised list, unless it is itself a function type.
            save = self.pos
            self.advance()
            items = self.parse_comma_list(self.parse_type, ")")
            self.parse_punct(")")
            if self.tok.kind is Tok.PUNCT and self.tok.text == "->":
                self.pos = save
                return [self.parse_function_type()]
            return items
        return [self.parse_type()]

    def _parse_vector_body(self) -> T.VectorType:
        """``<4x2xf32>``: lexes as ``4`` then the identifier ``x2xf32``."""
        self.parse_punct("<")
        first = self.tok
        if first.kind is Tok.INTEGER and first.text[:2] in ("0x", "0X"):
            # "0xf32" lexes as a hex literal; it is a zero-sized vector.
            raise self.error("vector dimensions must be positive", first.loc)
        if first.kind is not Tok.INTEGER or self.peek().kind is not Tok.BARE_ID:
            raise self.expected("a vector shape like 4xf32")
        self.advance()
        rest_tok = self.advance()
        m = _VECTOR_REST.fullmatch(rest_tok.text)
        if m is None:
            raise self.error("expected a vector shape like 4x2xf32", rest_tok.loc)
        dims = [int(first.text)] + [int(d) for d in m.group(1).split("x") if d]
        element = _scalar_type_named(m.group(2))
        if element is None:
            raise self.error(f"unknown vector element type '{m.group(2)}'", rest_tok.loc)
        if any(d <= 0 for d in dims):
            raise self.error("vector dimensions must be positive", first.loc)
        self.parse_punct(">")
        return T.VectorType(tuple(dims), element)

    def _parse_dialect_type(self) -> T.DialectType:
        tok = self.advance()
        name = tok.text[1:]
        cls = self.registry.types.get(name)
        if cls is None:
            raise self.error(f"unknown type '!{name}'", tok.loc)
        try:
            if cls.has_body:
                self.parse_punct("<")
                t = cls.parse_body(self)
                self.parse_punct(">")
            else:
                t = cls.parse_body(self)
        except CompileError:
            raise
        except (ValueError, TypeError) as e:
            raise self.error(f"invalid '!{name}' type: {e}", tok.loc) from None
        return t

    # ------------------------------------------------------------------ attributes
    def parse_optional_attribute(self) -> A.Attribute | None:
        tok = self.tok
        if tok.kind is Tok.STRING:
            return A.StringAttr(self.parse_string())
        if tok.kind is Tok.SYMBOL:
            return A.SymbolRefAttr(self.parse_symbol_name())
        if tok.kind is Tok.BARE_ID and tok.text in ("true", "false"):
            self.advance()
            return A.bool_attr(tok.text == "true")
        if tok.kind is Tok.BARE_ID and tok.text == "unit":
            self.advance()
            return A.UnitAttr()
        if tok.kind is Tok.BARE_ID and tok.text == "array":
            return self._parse_dense_array()
        if tok.kind is Tok.PUNCT and tok.text == "[":
            return A.ArrayAttr(tuple(self.parse_delimited("[", self.parse_attribute, "]")))
        if tok.kind is Tok.PUNCT and tok.text == "{":
            return A.DictAttr(tuple(self.parse_attr_dict().items()))
        if tok.kind is Tok.ATTR_ALIAS:
            return self._parse_dialect_attribute()
        number = self._parse_optional_number()
        if number is not None:
            if self.parse_optional_punct(":"):
                t = self.parse_type()
            else:
                t = T.f64 if isinstance(number, float) else T.i64
            return self._number_attr(number, t, tok.loc)
        t = self.parse_optional_type()
        if t is not None:
            return A.TypeAttr(t)
        return None

    def parse_attribute(self) -> A.Attribute:
        attr = self.parse_optional_attribute()
        if attr is None:
            raise self.expected("an attribute")
        return attr

    def _parse_optional_number(self) -> int | float | None:
        tok = self.tok
        if tok.kind is Tok.FLOAT:
            self.advance()
            return float(tok.text)
        if tok.kind is Tok.BARE_ID and tok.text in ("inf", "nan"):
            self.advance()
            return float(tok.text)
        if tok.kind is Tok.PUNCT and tok.text == "-" and self.peek().text == "inf":
            self.advance()
            self.advance()
            return float("-inf")
        return self.parse_optional_integer()

    def _number_attr(self, number: int | float, t: T.Type, loc: Location) -> A.Attribute:
        if isinstance(t, T.FloatType):
            return A.FloatAttr(float(number), t)
        if isinstance(number, float):
            raise self.error(f"float literal with non-float type {t}", loc)
        if isinstance(t, T.IntegerType | T.IndexType):
            return A.IntegerAttr(number, t)
        raise self.error(f"number with non-numeric type {t}", loc)

    def _parse_dense_array(self) -> A.DenseArrayAttr:
        self.parse_keyword("array")
        self.parse_punct("<")
        et = self.parse_type()
        values: list[int] = []
        if self.parse_optional_punct(":"):
            values = self.parse_comma_list(self.parse_integer)
        self.parse_punct(">")
        return A.DenseArrayAttr(et, tuple(values))

    def _parse_dialect_attribute(self) -> A.DialectAttribute:
        tok = self.advance()
        name = tok.text[1:]
        cls = self.registry.attributes.get(name)
        if cls is None:
            raise self.error(f"unknown attribute '#{name}'", tok.loc)
        self.parse_punct("<")
        try:
            attr = cls.parse_body(self)
        except (ValueError, TypeError) as e:
            raise self.error(f"invalid '#{name}' attribute: {e}", tok.loc) from None
        self.parse_punct(">")
        return attr

    def parse_attr_dict(self) -> dict[str, A.Attribute]:
        """``{key = attr, flag, ...}``."""
        result: dict[str, A.Attribute] = {}
        self.parse_punct("{")

        def entry() -> None:
            tok = self.tok
            if tok.kind is Tok.STRING:
                key = self.parse_string()
            elif tok.kind is Tok.BARE_ID:
                key = self.advance().text
            else:
                raise self.expected("an attribute name")
            if key in result:
                raise self.error(f"duplicate attribute '{key}'", tok.loc)
            result[key] = self.parse_attribute() if self.parse_optional_punct("=") else A.UnitAttr()

        self.parse_comma_list(entry, "}")
        self.parse_punct("}")
        return result

    def parse_optional_attr_dict(self) -> dict[str, A.Attribute]:
        if self.tok.kind is Tok.PUNCT and self.tok.text == "{":
            return self.parse_attr_dict()
        return {}

    def parse_optional_attr_dict_with_keyword(self) -> dict[str, A.Attribute]:
        """``attributes {...}`` as ops with a region print their extra attributes."""
        if self.parse_optional_keyword("attributes"):
            return self.parse_attr_dict()
        return {}

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

    def parse_trailing_operands(self) -> list[Value]:
        """Optional ``%a, %b : t1, t2``; the written types must be the operands' types."""
        values = self.parse_operand_list()
        if values:
            loc = self.tok.loc
            self.parse_punct(":")
            self.check_types(values, self.parse_type_list(), loc)
        return values

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
        from cutec.ir.dialects.builtin import ModuleOp

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
