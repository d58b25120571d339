"""Parsing types and attributes (builtin ones, and dialect ones through the registry)."""

from __future__ import annotations

import re

from cutec.diagnostics import CompileError, Location
from cutec.ir import attributes as A
from cutec.ir import types as T
from cutec.ir.dialect import Registry, registry
from cutec.ir.lexer import Tok
from cutec.ir.parser_base import TokenParser

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


class TypeAttrParser(TokenParser):
    """Types and attributes; dialect ones are looked up in `registry`."""

    def __init__(self, text: str, file: str = "<input>", reg: Registry | None = None) -> None:
        super().__init__(text, file)
        self.registry = reg or registry()

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
