"""Declarative ops: named operand, result, attribute and region fields.

An op class declares its fields once, as class attributes, in order::

    class PtrAddOp(Operation):
        name = "thread.ptr_add"
        ptr = operand_def(PointerType)
        offset = operand_def((IndexType, IntegerType))
        result = result_def(PointerType)
        assembly_format = "$ptr `,` $offset attr-dict `:` type($ptr) `,` type($offset)"

`define_op` (called from ``Operation.__init_subclass__``) collects them into
an `OpDef` and gives the class:

* accessors: ``op.ptr`` is the operand's `Value` (a tuple for a variadic
  field, a `Value` or None for an optional one), ``op.result`` the `OpResult`,
  and an attribute field returns **the attribute itself** (``op.dim`` is a
  `StringAttr`; ``op.dim.value`` its string), or None when an optional one is
  absent. One rule for every attribute: the accessor never unwraps.
* a generic verifier step (`verify_fields`, run before the op's `verify_`):
  arity, operand and result type constraints, attribute presence, kind and
  value constraint, each failure naming the field
  (``'thread.load' op operand 'ptr' must be !gpu.ptr, got i32``);
* ``Op.build(field=..., ...)``, a keyword constructor over the fields;
* with an ``assembly_format``, ``print_custom`` / ``parse_custom`` generated
  from it (see `cutec.ir.opformat`).

A type constraint is a `Type` class, a tuple of classes, a `Type` instance
(the type must equal it), a `TypeConstraint` (a predicate with a name) or
`AnyType`. At most one operand field may be variadic or optional (and at most
one result field variadic): the others' positions follow from the total count,
so no segment-size attribute is needed. An op that needs two variadic groups
is written by hand (none does today).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from cutec.ir.attributes import Attribute
from cutec.ir.core import Operation, OpResult, Region, Value
from cutec.ir.traits import SameOperandsAndResultType
from cutec.ir.types import DialectType, FloatType, IndexType, IntegerType, Type, VectorType

if TYPE_CHECKING:
    from cutec.ir.opformat import Format
    from cutec.ir.parser import Parser, ResultName
    from cutec.ir.printer import Printer

AttrT = TypeVar("AttrT", bound=Attribute)


class OpDefError(TypeError):
    """An op class declares its fields or its format wrongly (raised at class creation)."""


# --------------------------------------------------------------------------- type constraints


@dataclass(frozen=True)
class TypeConstraint:
    """A named predicate on types: ``TypeConstraint(is_float_like, "float-like")``."""

    check: Callable[[Type], bool]
    text: str

    def __call__(self, t: Type) -> bool:
        return self.check(t)

    def __str__(self) -> str:
        return self.text


AnyType = TypeConstraint(lambda t: True, "any type")

_CLASS_NAMES: dict[type, str] = {
    IntegerType: "an integer",
    IndexType: "index",
    FloatType: "a float",
    VectorType: "a vector",
}

ConstraintSpec = type[Type] | tuple[type[Type], ...] | Type | TypeConstraint


def _class_text(cls: type) -> str:
    if issubclass(cls, DialectType):
        return "!" + str(cls.name)
    return _CLASS_NAMES.get(cls, cls.__name__)


def to_constraint(spec: ConstraintSpec) -> TypeConstraint:
    """The `TypeConstraint` a field declaration's constraint stands for."""
    if isinstance(spec, TypeConstraint):
        return spec
    if isinstance(spec, Type):
        return TypeConstraint(lambda t: t == spec, str(spec))
    if isinstance(spec, type) and issubclass(spec, Type):
        return TypeConstraint(lambda t: isinstance(t, spec), _class_text(spec))
    if isinstance(spec, tuple) and spec and all(isinstance(c, type) for c in spec):
        text = " or ".join(_class_text(c) for c in spec)
        return TypeConstraint(lambda t: isinstance(t, spec), text)
    raise OpDefError(f"not a type constraint: {spec!r}")


# --------------------------------------------------------------------------- field declarations


class _Field:
    """A declared field; `name` and `index` are set when the op class is created."""

    name: str = ""
    index: int = 0

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name


class _ValueField(_Field):
    """An operand or result field: a type constraint and how many values it takes."""

    kind = ""  # "operand" / "result"

    def __init__(self, constraint: ConstraintSpec = AnyType, *, arity: str = "single") -> None:
        self.constraint = to_constraint(constraint)
        self.arity = arity  # "single", "variadic" or "optional"
        self.fixed_type = constraint if isinstance(constraint, Type) else None
        # Where the field's values sit: [start, start + count) counted from the front
        # when `from_front`, else `start` is counted back from the end.
        self.start = 0
        self.from_front = True

    def span(self, values: Sequence[Any]) -> tuple[int, int]:
        """The [begin, end) slice of `values` this field owns."""
        n = len(values)
        begin = self.start if self.from_front else n - self.start
        if self.arity == "single":
            return begin, begin + 1
        return begin, begin + max(n - self._fixed_total, 0)

    _fixed_total = 0


class operand_def(_ValueField):
    """One operand; ``op.<name>`` is its `Value`."""

    kind = "operand"

    @overload
    def __get__(self, op: None, owner: type) -> operand_def: ...
    @overload
    def __get__(self, op: Operation, owner: type) -> Value: ...
    def __get__(self, op: Operation | None, owner: type) -> Any:
        if op is None:
            return self
        ops = op._operands
        return ops[self.start if self.from_front else len(ops) - self.start]


class var_operand_def(_ValueField):
    """Any number of operands; ``op.<name>`` is a tuple of values."""

    kind = "operand"

    def __init__(self, constraint: ConstraintSpec = AnyType) -> None:
        super().__init__(constraint, arity="variadic")

    @overload
    def __get__(self, op: None, owner: type) -> var_operand_def: ...
    @overload
    def __get__(self, op: Operation, owner: type) -> tuple[Value, ...]: ...
    def __get__(self, op: Operation | None, owner: type) -> Any:
        if op is None:
            return self
        begin, end = self.span(op._operands)
        return tuple(op._operands[begin:end])


class opt_operand_def(_ValueField):
    """Zero or one operand; ``op.<name>`` is the value or None."""

    kind = "operand"

    def __init__(self, constraint: ConstraintSpec = AnyType) -> None:
        super().__init__(constraint, arity="optional")

    @overload
    def __get__(self, op: None, owner: type) -> opt_operand_def: ...
    @overload
    def __get__(self, op: Operation, owner: type) -> Value | None: ...
    def __get__(self, op: Operation | None, owner: type) -> Any:
        if op is None:
            return self
        begin, end = self.span(op._operands)
        return op._operands[begin] if end > begin else None


class result_def(_ValueField):
    """One result; ``op.<name>`` is its `OpResult`. A `Type` instance fixes its type."""

    kind = "result"

    @overload
    def __get__(self, op: None, owner: type) -> result_def: ...
    @overload
    def __get__(self, op: Operation, owner: type) -> OpResult: ...
    def __get__(self, op: Operation | None, owner: type) -> Any:
        if op is None:
            return self
        res = op.results
        return res[self.start if self.from_front else len(res) - self.start]


class var_result_def(_ValueField):
    """Any number of results; ``op.<name>`` is a tuple of results."""

    kind = "result"

    def __init__(self, constraint: ConstraintSpec = AnyType) -> None:
        super().__init__(constraint, arity="variadic")

    @overload
    def __get__(self, op: None, owner: type) -> var_result_def: ...
    @overload
    def __get__(self, op: Operation, owner: type) -> tuple[OpResult, ...]: ...
    def __get__(self, op: Operation | None, owner: type) -> Any:
        if op is None:
            return self
        begin, end = self.span(op.results)
        return tuple(op.results[begin:end])


class attr_def(_Field, Generic[AttrT]):
    """A named attribute of class `kind` (a tuple allows several).

    `check` is an optional value constraint: a predicate with a message
    (``check=(lambda a: a.value in (4, 8, 16), "must be 4, 8 or 16")``).
    `one_of` restricts a `StringAttr` to words; an assembly format then prints
    and parses it as a bare keyword (``gpu.thread_id x``).
    """

    def __init__(
        self,
        kind: type[AttrT] | tuple[type[Attribute], ...],
        *,
        optional: bool = False,
        check: tuple[Callable[[Any], bool], str] | None = None,
        one_of: Sequence[str] | None = None,
    ) -> None:
        self.kinds: tuple[type[Attribute], ...] = kind if isinstance(kind, tuple) else (kind,)
        self.optional = optional
        self.check = check
        self.one_of = tuple(one_of) if one_of is not None else None

    @property
    def kind_text(self) -> str:
        return " or ".join(k.__name__ for k in self.kinds)

    @overload
    def __get__(self, op: None, owner: type) -> attr_def[AttrT]: ...
    @overload
    def __get__(self, op: Operation, owner: type) -> AttrT: ...
    def __get__(self, op: Operation | None, owner: type) -> Any:
        if op is None:
            return self
        return op.attributes.get(self.name)

    def problem(self, attr: Attribute | None) -> str | None:
        """Why `attr` does not fit this field, or None."""
        if attr is None:
            return None if self.optional else f"needs attribute '{self.name}'"
        if not isinstance(attr, self.kinds):
            return f"attribute '{self.name}' must be {self.kind_text}, got {attr}"
        if self.one_of is not None and getattr(attr, "value", None) not in self.one_of:
            return f"attribute '{self.name}' must be one of {', '.join(self.one_of)}"
        if self.check is not None and not self.check[0](attr):
            return f"attribute '{self.name}' {self.check[1]}"
        return None


class opt_attr_def(attr_def[AttrT]):
    """An attribute that may be absent; ``op.<name>`` is then None."""

    def __init__(
        self,
        kind: type[AttrT] | tuple[type[Attribute], ...],
        *,
        check: tuple[Callable[[Any], bool], str] | None = None,
        one_of: Sequence[str] | None = None,
    ) -> None:
        super().__init__(kind, optional=True, check=check, one_of=one_of)

    @overload
    def __get__(self, op: None, owner: type) -> opt_attr_def[AttrT]: ...
    @overload
    def __get__(self, op: Operation, owner: type) -> AttrT | None: ...
    def __get__(self, op: Operation | None, owner: type) -> Any:
        return self if op is None else op.attributes.get(self.name)


class region_def(_Field):
    """One region; ``op.<name>`` is the `Region`."""

    @overload
    def __get__(self, op: None, owner: type) -> region_def: ...
    @overload
    def __get__(self, op: Operation, owner: type) -> Region: ...
    def __get__(self, op: Operation | None, owner: type) -> Any:
        if op is None:
            return self
        return op.regions[self.index]


# ------------------------------------------------------------------------- collected definitions


@dataclass
class OpDef:
    """An op class's fields, in declaration order (base classes' first)."""

    operands: list[_ValueField] = field(default_factory=list)
    results: list[_ValueField] = field(default_factory=list)
    attributes: list[attr_def] = field(default_factory=list)
    regions: list[region_def] = field(default_factory=list)
    format: Format | None = None
    # What the verifier checks, gathered once: fields with a real constraint, and
    # whether the op has the SameOperandsAndResultType trait.
    constrained: list[_ValueField] = field(default_factory=list)
    same_type: bool = False

    def field(self, name: str) -> _Field | None:
        for group in (self.operands, self.results, self.attributes, self.regions):
            for f in group:
                if f.name == name:
                    return f
        return None


def _layout(cls_name: str, fields: list[_ValueField], what: str) -> int | None:
    """Place the fields; the fixed count, or None when one field is variadic."""
    variadic = [f for f in fields if f.arity != "single"]
    if len(variadic) > 1:
        names = ", ".join(f"'{f.name}'" for f in variadic)
        raise OpDefError(
            f"{cls_name}: more than one variadic or optional {what} field ({names}); "
            "write the op by hand"
        )
    fixed = len(fields) - len(variadic)
    after = False
    for i, f in enumerate(fields):
        f.index = i
        f._fixed_total = fixed
        if f.arity != "single":
            f.start, f.from_front = i, True
            after = True
        elif after:
            f.start, f.from_front = len(fields) - i, False
        else:
            f.start, f.from_front = i, True
    return None if variadic else fixed


def define_op(cls: type[Operation]) -> None:
    """Collect the fields declared on `cls` (and its bases) into ``cls.op_def``."""
    own = {k: v for k, v in vars(cls).items() if isinstance(v, _Field)}
    has_format = "assembly_format" in vars(cls)
    retraited = cls.op_def is not None and "traits" in vars(cls)
    if not own and not has_format and not retraited:
        return
    inherited: dict[str, _Field] = {}
    for base in reversed(cls.__mro__[1:]):
        for k, v in vars(base).items():
            if isinstance(v, _Field):
                inherited[k] = v
    # A redeclared field keeps its base's position. Inherited fields are copied:
    # their positions may differ from the base's when this class adds fields.
    for k, v in inherited.items():
        if k not in own:
            setattr(cls, k, copy.copy(v))
    inherited.update(own)
    inherited = {k: vars(cls)[k] for k in inherited}
    for k, v in inherited.items():
        if v.name != k:
            raise OpDefError(f"{cls.__name__}: field '{k}' is declared under two names")
    op_def = OpDef()
    for v in inherited.values():
        if isinstance(v, _ValueField):
            (op_def.operands if v.kind == "operand" else op_def.results).append(v)
        elif isinstance(v, attr_def):
            op_def.attributes.append(v)
        elif isinstance(v, region_def):
            op_def.regions.append(v)
    cls.num_operands = _layout(cls.__name__, op_def.operands, "operand")
    cls.num_results = _layout(cls.__name__, op_def.results, "result")
    for i, r in enumerate(op_def.regions):
        r.index = i
    if op_def.regions:
        cls.num_regions = len(op_def.regions)
    op_def.constrained = [
        f for f in (*op_def.operands, *op_def.results) if f.constraint is not AnyType
    ]
    op_def.same_type = cls.has_trait(SameOperandsAndResultType)
    cls.op_def = op_def
    fmt = getattr(cls, "assembly_format", None)
    if fmt is not None:
        # opformat reads the field classes of this module: imported once they exist.
        from cutec.ir.opformat import Format

        try:
            op_def.format = Format.compile(fmt, cls, op_def)
        except OpDefError as e:
            raise OpDefError(f"{cls.__name__}: bad assembly_format: {e}") from None
        # The printer and the parser look for these two methods.
        setattr(cls, "print_custom", _print_custom)  # noqa: B010
        setattr(cls, "parse_custom", classmethod(_parse_custom))  # noqa: B010


def _print_custom(op: Operation, p: Printer) -> None:
    op_def = type(op).op_def
    fmt = op_def.format if op_def is not None else None
    assert fmt is not None
    fmt.print(op, p)


def _parse_custom(cls: type[Operation], parser: Parser, results: list[ResultName]) -> Operation:
    fmt = cls.op_def.format if cls.op_def is not None else None
    assert fmt is not None
    return fmt.parse(cls, parser)


# --------------------------------------------------------------------------- verification


def verify_fields(op: Operation) -> None:
    """Check `op` against its class's declared fields (the generic verifier calls this)."""
    op_def = type(op).op_def
    if op_def is None:
        return
    operands, results = op._operands, op.results
    cls = type(op)
    if len(operands) != cls.num_operands:
        _check_count(op, op_def.operands, len(operands), "operand")
    if len(results) != cls.num_results:
        _check_count(op, op_def.results, len(results), "result")
    if op_def.same_type and results:
        t = results[0].type
        if any(v.type != t for v in (*operands, *results)):
            got = ", ".join(str(v.type) for v in operands)
            res = ", ".join(str(r.type) for r in results)
            raise op.error(f"operands ({got}) and result {res} must have one type")
    for f in op_def.constrained:
        values = operands if f.kind == "operand" else results
        if f.arity == "single":
            v = values[f.start if f.from_front else len(values) - f.start]
            if not f.constraint.check(v.type):
                raise op.error(f"{f.kind} '{f.name}' must be {f.constraint}, got {v.type}")
            continue
        begin, end = f.span(values)
        for v in values[begin:end]:
            if not f.constraint.check(v.type):
                raise op.error(f"{f.kind} '{f.name}' must be {f.constraint}, got {v.type}")
    for a in op_def.attributes:
        problem = a.problem(op.attributes.get(a.name))
        if problem is not None:
            raise op.error(problem)


def _check_count(op: Operation, fields: list[_ValueField], n: int, what: str) -> None:
    fixed = len(fields)
    var = None
    for f in fields:
        if f.arity != "single":
            var, fixed = f, fixed - 1
    if var is None:
        if n != fixed:
            raise op.error(f"expects {fixed} {what}s, got {n}")
    elif n < fixed:
        raise op.error(f"expects at least {fixed} {what}s, got {n}")
    elif var.arity == "optional" and n > fixed + 1:
        raise op.error(f"expects at most {fixed + 1} {what}s, got {n}")


# --------------------------------------------------------------------------- building


def build_parts(cls: type[Operation], fields: dict[str, Any]) -> dict[str, Any]:
    """`Operation.create` keywords from field values: operands and attributes by name,
    result types by result name (or fixed by the declaration, or inferred)."""
    op_def = cls.op_def
    if op_def is None:
        raise TypeError(f"{cls.name} declares no fields")
    extra = dict(fields)
    attributes: dict[str, Attribute] = extra.pop("attributes", None) or {}
    operands: list[Value] = []
    for f in op_def.operands:
        v = extra.pop(f.name, None if f.arity == "optional" else ())
        if f.arity == "single":
            if not isinstance(v, Value):
                raise TypeError(f"{cls.name}: operand '{f.name}' needs a Value")
            operands.append(v)
        elif f.arity == "optional":
            operands.extend([] if v is None else [v])
        else:
            operands.extend(v)
    for a in op_def.attributes:
        v = extra.pop(a.name, None)
        if v is not None:
            attributes[a.name] = v
    result_types: list[Type] = []
    missing = False
    for r in op_def.results:
        t = extra.pop(r.name, None)
        if t is None and r.fixed_type is not None:
            t = r.fixed_type
        if t is None:
            missing = True
        elif r.arity == "variadic":
            result_types.extend(t)
        else:
            result_types.append(t)
    if extra:
        raise TypeError(f"{cls.name}: no field named {', '.join(map(repr, extra))}")
    if missing:
        inferred = cls.infer_result_types(field_values(cls, operands, attributes))
        if inferred is None:
            raise TypeError(f"{cls.name}: result types are needed")
        result_types = list(inferred)
    return {"operands": operands, "result_types": result_types, "attributes": attributes}


class FieldValues:
    """Operand values and attributes by field name, for `infer_result_types`."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.__dict__.update(values)

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(name)


def field_values(
    cls: type[Operation], operands: Sequence[Value], attributes: dict[str, Attribute]
) -> FieldValues:
    op_def = cls.op_def
    assert op_def is not None
    values: dict[str, Any] = {}
    for f in op_def.operands:
        begin, end = f.span(operands)
        part = tuple(operands[begin:end])
        values[f.name] = part if f.arity == "variadic" else (part[0] if part else None)
    for a in op_def.attributes:
        values[a.name] = attributes.get(a.name)
    return FieldValues(values)
