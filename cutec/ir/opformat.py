"""Assembly formats: an op's custom textual form, declared as one string.

MLIR's ``assemblyFormat`` in small. A format is a sequence of

* ```lit` `` — a literal: punctuation (``,``, ``:``, ``->``, ``(``) or a keyword (``to``);
* ``$name`` — an operand field (a comma list for a variadic or optional one) or
  an attribute field (its own syntax; a `StringAttr` field with ``one_of``
  words is a bare keyword, as ``slt`` in ``arith.cmpi slt, %a, %b : i32``);
* ``type($name)`` — the type(s) of an operand or result field. A written
  operand type is checked against the value's type; a written result type is
  the result's type. With the `SameOperandsAndResultType` trait the written
  result type is checked against every operand;
* ``attr-dict`` / ``attr-dict-with-keyword`` — the attributes not written
  elsewhere (exactly one of them appears);
* ``(...)?`` — an optional group, printed when its anchor (the field marked
  ``^``, a variadic or optional operand) is non-empty and parsed when its first
  element (an operand or a literal) is next.

Result types not written are fixed by their declaration (``result_def(TokenType())``)
or come from the class's ``infer_result_types``; a variadic result written in
parentheses may be empty (``-> ()``). Spacing: one space between elements, none
before ``,`` ``)`` ``]`` ``(`` (but ``: (`` and ``-> (``) and none after ``(`` ``[``.
Consecutive operands separated by ```,``` are parsed as one comma list, so a
missing comma reads "expected ':'" as in hand-written forms. A format that
names an unknown field, omits an operand, or leaves a result type undetermined
is an `OpDefError` when the class is created.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cutec.ir.attributes import Attribute, StringAttr, format_attr_dict
from cutec.ir.core import Operation, Value
from cutec.ir.lexer import Tok
from cutec.ir.opdef import OpDef, OpDefError, _ValueField, attr_def, field_values
from cutec.ir.traits import SameOperandsAndResultType
from cutec.ir.types import Type

if TYPE_CHECKING:
    from cutec.ir.parser import Parser
    from cutec.ir.printer import Printer


@dataclass(frozen=True)
class Literal:
    text: str

    @property
    def is_keyword(self) -> bool:
        return self.text[:1].isalpha() or self.text[:1] == "_"


@dataclass(frozen=True)
class OperandRun:
    """Operands separated by commas: ``$a `,` $b`` (one element is the common case)."""

    fields: tuple[_ValueField, ...]


@dataclass(frozen=True)
class AttrRef:
    field: attr_def


@dataclass(frozen=True)
class TypeRef:
    field: _ValueField


@dataclass(frozen=True)
class AttrDict:
    with_keyword: bool


@dataclass(frozen=True)
class Group:
    elements: tuple[Any, ...]
    anchor: _ValueField


_TOKEN = re.compile(
    r"\s*(?:(`[^`]*`)|(\$\w+\^?)|type\(\s*(\$\w+)\s*\)|(attr-dict-with-keyword|attr-dict)"
    r"|(\()|(\)\?)|(\S+))"
)
_NO_SPACE_BEFORE = (",", ")", "]", "(")
_NO_SPACE_AFTER = ("(", "[")


class Format:
    """A compiled assembly format: prints and parses ops of one class."""

    def __init__(self, elements: tuple[Any, ...], cls: type[Operation], op_def: OpDef) -> None:
        self.elements = elements
        self.cls = cls
        self.op_def = op_def
        self.written_attrs = frozenset(
            e.field.name for e in _walk(elements) if isinstance(e, AttrRef)
        )
        self.typed_results = {e.field.name for e in _walk(elements) if isinstance(e, TypeRef)}

    # ------------------------------------------------------------------ compile
    @classmethod
    def compile(cls, text: str, op_cls: type[Operation], op_def: OpDef) -> Format:
        stack: list[list[Any]] = [[]]
        anchors: list[_ValueField | None] = [None]
        pos = 0
        text = text.strip()
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            assert m is not None
            pos = m.end()
            lit, ref, type_ref, attr_dict, open_, close, junk = m.groups()
            if junk is not None:
                raise OpDefError(f"unexpected '{junk}'")
            if lit is not None:
                if len(lit) < 3:
                    raise OpDefError("empty literal")
                stack[-1].append(Literal(lit[1:-1]))
            elif ref is not None:
                name = ref[1:].rstrip("^")
                f = op_def.field(name)
                if isinstance(f, attr_def):
                    stack[-1].append(AttrRef(f))
                elif isinstance(f, _ValueField) and f.kind == "operand":
                    stack[-1].append(OperandRun((f,)))
                elif isinstance(f, _ValueField):
                    raise OpDefError(f"result '{name}' is written as type(${name})")
                else:
                    raise OpDefError(f"no field named '{name}'")
                if ref.endswith("^"):
                    if len(stack) == 1 or anchors[-1] is not None:
                        raise OpDefError(f"anchor '{name}^' outside a group or not its only one")
                    if not (isinstance(f, _ValueField) and f.arity != "single"):
                        raise OpDefError(f"anchor '{name}' must be a variadic or optional operand")
                    anchors[-1] = f
            elif type_ref is not None:
                f = op_def.field(type_ref[1:])
                if not isinstance(f, _ValueField):
                    raise OpDefError(f"type({type_ref}) names no operand or result")
                stack[-1].append(TypeRef(f))
            elif attr_dict is not None:
                stack[-1].append(AttrDict(attr_dict == "attr-dict-with-keyword"))
            elif open_ is not None:
                stack.append([])
                anchors.append(None)
            elif close is not None:
                if len(stack) == 1:
                    raise OpDefError("')?' without '('")
                elements, anchor = stack.pop(), anchors.pop()
                if anchor is None:
                    raise OpDefError("optional group without an anchor ('$name^')")
                if not elements or not isinstance(elements[0], Literal | OperandRun):
                    raise OpDefError("an optional group must start with an operand or a literal")
                stack[-1].append(Group(_merge_runs(elements), anchor))
        if len(stack) != 1:
            raise OpDefError("unclosed optional group")
        fmt = cls(_merge_runs(stack[0]), op_cls, op_def)
        fmt._check_complete()
        return fmt

    def _check_complete(self) -> None:
        flat = list(_walk(self.elements))
        written = [f.name for e in flat if isinstance(e, OperandRun) for f in e.fields]
        for f in self.op_def.operands:
            if written.count(f.name) != 1:
                raise OpDefError(
                    f"operand '{f.name}' must appear once, not {written.count(f.name)}"
                )
        dicts = [e for e in flat if isinstance(e, AttrDict)]
        if len(dicts) != 1:
            raise OpDefError("needs exactly one attr-dict directive")
        if self.op_def.regions:
            raise OpDefError("regions cannot be written in a format; write the op by hand")
        infers = any(
            "infer_result_types" in vars(c) for c in self.cls.__mro__ if c is not Operation
        )
        for r in self.op_def.results:
            if r.name not in self.typed_results and r.fixed_type is None and not infers:
                raise OpDefError(
                    f"the type of result '{r.name}' is neither written (type(${r.name})), "
                    "fixed, nor inferred (infer_result_types)"
                )

    # ------------------------------------------------------------------ print
    def print(self, op: Operation, p: Printer) -> None:
        # Builtin ops print without their dialect (``return``), as in MLIR.
        pieces: list[str] = [op.name.removeprefix("builtin.")]
        self._print_elements(self.elements, op, p, pieces)
        out = [pieces[0]]
        for prev, piece in itertools.pairwise(pieces):
            # A parenthesised type list after `:` or `->` is spaced: ``: (f32) -> (f32)``.
            spaced = not piece.startswith(_NO_SPACE_BEFORE) or prev in (":", "->")
            if spaced and not prev.endswith(_NO_SPACE_AFTER):
                out.append(" ")
            out.append(piece)
        p.print("".join(out))

    def _print_elements(
        self, elements: tuple[Any, ...], op: Operation, p: Printer, pieces: list[str]
    ) -> None:
        for e in elements:
            if isinstance(e, Literal):
                pieces.append(e.text)
            elif isinstance(e, OperandRun):
                values = [v for f in e.fields for v in _values(f, op)]
                if values:
                    pieces.append(", ".join(p.name_of(v) for v in values))
            elif isinstance(e, AttrRef):
                attr = op.attributes.get(e.field.name)
                if e.field.one_of is not None and isinstance(attr, StringAttr):
                    pieces.append(attr.value)  # a keyword: ``slt``, ``x``
                elif attr is not None:
                    pieces.append(str(attr))
            elif isinstance(e, TypeRef):
                types = [v.type for v in _values(e.field, op)]
                if types:
                    pieces.append(", ".join(map(str, types)))
            elif isinstance(e, AttrDict):
                rest = {k: v for k, v in op.attributes.items() if k not in self.written_attrs}
                if rest:
                    pieces.append(
                        ("attributes " if e.with_keyword else "") + format_attr_dict(rest)
                    )
            elif isinstance(e, Group) and _values(e.anchor, op):
                self._print_elements(e.elements, op, p, pieces)

    # ------------------------------------------------------------------ parse
    def parse(self, cls: type[Operation], parser: Parser) -> Operation:
        """Read an op of class `cls` (this format's class or a subclass)."""
        state = _ParseState(cls)
        self._parse_elements(self.elements, parser, state)
        operands: list[Value] = []
        for f in self.op_def.operands:
            operands.extend(state.operands.get(f.name, ()))
        result_types: list[Type] = []
        missing = False
        for r in self.op_def.results:
            if r.name in state.types:
                result_types.extend(state.types[r.name])
            elif r.fixed_type is not None:
                result_types.append(r.fixed_type)
            else:
                missing = True
        if missing:
            inferred = cls.infer_result_types(field_values(cls, operands, state.attributes))
            if inferred is None:
                raise parser.error(f"cannot infer the result types of '{cls.name}'")
            result_types = list(inferred)
        return cls.create(operands=operands, result_types=result_types, attributes=state.attributes)

    def _parse_elements(
        self, elements: tuple[Any, ...], parser: Parser, state: _ParseState
    ) -> None:
        for e in elements:
            if isinstance(e, Literal):
                if e.is_keyword:
                    parser.parse_keyword(e.text)
                else:
                    parser.parse_punct(e.text)
            elif isinstance(e, OperandRun):
                self._parse_run(e, parser, state)
            elif isinstance(e, AttrRef):
                self._parse_attr(e.field, parser, state)
            elif isinstance(e, TypeRef):
                self._parse_type(e.field, parser, state)
            elif isinstance(e, AttrDict):
                loc = parser.tok.loc
                attrs = (
                    parser.parse_optional_attr_dict_with_keyword()
                    if e.with_keyword
                    else parser.parse_optional_attr_dict()
                )
                for k, v in attrs.items():
                    if k in state.attributes:
                        raise parser.error(f"attribute '{k}' is given twice", loc)
                    state.attributes[k] = v
            elif isinstance(e, Group) and _group_follows(e, parser):
                self._parse_elements(e.elements, parser, state)

    def _parse_run(self, run: OperandRun, parser: Parser, state: _ParseState) -> None:
        loc = parser.tok.loc
        fixed = sum(1 for f in run.fields if f.arity == "single")
        if fixed == len(run.fields):
            values = parser.parse_comma_list(parser.parse_operand)
        else:
            values = parser.parse_operand_list()
        var = next((f for f in run.fields if f.arity != "single"), None)
        if len(values) < fixed:
            raise parser.expected("','")
        if var is None and len(values) != fixed:
            raise parser.error(f"expected {fixed} operands, found {len(values)}", loc)
        if var is not None and var.arity == "optional" and len(values) > fixed + 1:
            raise parser.error(f"expected at most {fixed + 1} operands, found {len(values)}", loc)
        i = 0
        for f in run.fields:
            n = 1 if f.arity == "single" else len(values) - fixed
            state.operands[f.name] = values[i : i + n]
            i += n

    def _parse_attr(self, f: attr_def, parser: Parser, state: _ParseState) -> None:
        loc = parser.tok.loc
        tok = parser.tok
        if f.one_of is not None:
            if f.optional and not (tok.kind is Tok.BARE_ID and tok.text in f.one_of):
                return
            word = parser.parse_identifier(f"a {f.name}")
            if word not in f.one_of:
                raise parser.error(
                    f"unknown {f.name} '{word}'; expected one of {', '.join(f.one_of)}", loc
                )
            state.attributes[f.name] = StringAttr(word)
            return
        attr = parser.parse_optional_attribute()
        if attr is None and f.optional:
            return
        if attr is None:
            raise parser.expected(f"an attribute for '{f.name}'")
        if not isinstance(attr, f.kinds):
            raise parser.error(f"'{f.name}' must be {f.kind_text}, found {attr}", loc)
        state.attributes[f.name] = attr

    def _parse_type(self, f: _ValueField, parser: Parser, state: _ParseState) -> None:
        loc = parser.tok.loc
        if f.kind == "result":
            if f.arity == "single":
                types = [parser.parse_type()]
            elif parser.tok.kind is Tok.PUNCT and parser.tok.text == ")":
                types = []  # an empty list in parentheses: ``-> ()``
            else:
                types = parser.parse_comma_list(parser.parse_type)
            state.types[f.name] = types
            if state.cls.has_trait(SameOperandsAndResultType):
                ops = [v for g in self.op_def.operands for v in state.operands.get(g.name, ())]
                parser.check_types(ops, types * len(ops), loc)
            return
        values = state.operands.get(f.name, [])
        if f.arity == "single":
            types = [parser.parse_type()]
        else:
            types = parser.parse_comma_list(parser.parse_type) if values else []
        if len(types) != len(values):
            raise parser.error(f"{len(values)} operands but {len(types)} types", loc)
        first = sum(len(state.operands.get(g.name, ())) for g in self.op_def.operands[: f.index])
        for i, (v, t) in enumerate(zip(values, types, strict=True)):
            if v.type != t:
                raise parser.error(
                    f"operand #{first + i} has type {v.type}, but {t} is written", loc
                )


class _ParseState:
    def __init__(self, cls: type[Operation]) -> None:
        self.cls = cls
        self.operands: dict[str, list[Value]] = {}
        self.attributes: dict[str, Attribute] = {}
        self.types: dict[str, list[Type]] = {}


def _walk(elements: tuple[Any, ...]) -> Any:
    for e in elements:
        yield e
        if isinstance(e, Group):
            yield from _walk(e.elements)


def _merge_runs(elements: list[Any]) -> tuple[Any, ...]:
    """Fold ``$a `,` $b`` into one `OperandRun` (at most one variadic field per run)."""
    out: list[Any] = []
    i = 0
    while i < len(elements):
        e = elements[i]
        if isinstance(e, OperandRun):
            fields = list(e.fields)
            while (
                i + 2 < len(elements)
                and elements[i + 1] == Literal(",")
                and isinstance(elements[i + 2], OperandRun)
                and sum(f.arity != "single" for f in (*fields, *elements[i + 2].fields)) <= 1
            ):
                fields.extend(elements[i + 2].fields)
                i += 2
            out.append(OperandRun(tuple(fields)))
        else:
            out.append(e)
        i += 1
    return tuple(out)


def _values(f: _ValueField, op: Operation) -> list[Value]:
    values = op._operands if f.kind == "operand" else op.results
    begin, end = f.span(values)
    return list(values[begin:end])


def _group_follows(group: Group, parser: Parser) -> bool:
    first = group.elements[0]
    tok = parser.tok
    if isinstance(first, OperandRun):
        return tok.kind is Tok.VALUE_ID and not parser._at_result_definition()
    if first.is_keyword:
        return tok.kind is Tok.BARE_ID and tok.text == first.text
    return tok.kind is Tok.PUNCT and tok.text == first.text
