"""The builtin dialect: module, func, kernel and return.

A `kernel` is a GPU entry point; its launch facts are attributes that the PTX
emitter turns into directives (``.reqntid``, ``.maxntid``, ``.minnctapersm``,
``.maxnreg``, ``.reqnctapercluster``) and that the runtime reads
(``dynamic_smem`` bytes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from cutec.ir.attributes import (
    ArrayAttr,
    Attribute,
    DenseArrayAttr,
    DictAttr,
    IntegerAttr,
    StringAttr,
    TypeAttr,
)
from cutec.ir.core import Block, Operation, Region, Value
from cutec.ir.dialect import Dialect
from cutec.ir.opdef import opt_attr_def, region_def, var_operand_def
from cutec.ir.traits import (
    HasParent,
    IsolatedFromAbove,
    NoTerminator,
    Pure,
    SymbolOp,
    Terminator,
)
from cutec.ir.types import FunctionType, Type
from cutec.layout.errors import LayoutError
from cutec.layout.symbolic import parse_expr
from cutec.target import UnknownTargetError
from cutec.target import target as lookup_target

if TYPE_CHECKING:
    from cutec.ir.parser import Parser, ResultName
    from cutec.ir.printer import Printer


class ModuleOp(Operation):
    """The top-level container.

    ``module { ... }`` or ``module @name attributes {target = "sm_90a"} { ... }``
    """

    name = "builtin.module"
    traits = (IsolatedFromAbove(), NoTerminator())
    sym_name = opt_attr_def(StringAttr)
    region = region_def()

    def __init__(
        self,
        ops: list[Operation] | None = None,
        sym_name: str | None = None,
        target: str | None = None,
    ) -> None:
        attrs: dict[str, Attribute] = {}
        if sym_name is not None:
            attrs["sym_name"] = StringAttr(sym_name)
        if target is not None:
            attrs["target"] = StringAttr(target)
        super().__init__(regions=[Region([Block()])], attributes=attrs)
        for op in ops or ():
            self.body.append(op)

    @property
    def body(self) -> Block:
        return self.region.block

    @property
    def target(self) -> str | None:
        """The target the module is compiled for (`cutec.target`), if it names one."""
        attr = self.attributes.get("target")
        return attr.value if isinstance(attr, StringAttr) else None

    def lookup(self, name: str) -> Operation | None:
        """The op directly in this module whose symbol is `name`."""
        for op in self.body.ops:
            sym = op.attributes.get("sym_name")
            if isinstance(sym, StringAttr) and sym.value == name:
                return op
        return None

    def verify_(self) -> None:
        if len(self.region.blocks) != 1:
            raise self.error("must have exactly one block")
        if self.body.args:
            raise self.error("body may not have arguments")
        if "target" in self.attributes:
            name = self.attributes["target"]
            if not isinstance(name, StringAttr):
                raise self.error('target must be a string such as "sm_90a"')
            try:
                lookup_target(name.value)
            except UnknownTargetError as e:
                raise self.error(str(e)) from None
        seen: set[str] = set()
        for op in self.body.ops:
            sym = op.attributes.get("sym_name")
            if isinstance(sym, StringAttr):
                if sym.value in seen:
                    raise op.error(f"redefines symbol '@{sym.value}'")
                seen.add(sym.value)

    def print_custom(self, p: Printer) -> None:
        p.print("module")
        if self.sym_name is not None:
            p.print(" @", self.sym_name.value)
        p.print_attr_dict_with_keyword(self.attributes, elided=("sym_name",))
        p.print(" ")
        p.print_region(self.region)

    @classmethod
    def parse_custom(cls, parser: Parser, results: list[ResultName]) -> ModuleOp:
        attrs: dict[str, Attribute] = {}
        if parser.tok.text.startswith("@"):
            attrs["sym_name"] = StringAttr(parser.parse_symbol_name())
        attrs.update(parser.parse_optional_attr_dict_with_keyword())
        return cls.create(attributes=attrs, regions=[parser.parse_region()])


class _FunctionLike(Operation):
    """Shared form of `func` and `kernel`: ``@name(%a: t, ...) -> t attributes {...} {body}``."""

    region = region_def()
    keyword: ClassVar[str]

    # The symbol and the signature are read as plain values (`k.sym_name == "gemm"`),
    # so these two attributes are properties, not attribute fields.
    @property
    def sym_name(self) -> str:
        attr = self.attributes["sym_name"]
        assert isinstance(attr, StringAttr)
        return attr.value

    @property
    def function_type(self) -> FunctionType:
        attr = self.attributes["function_type"]
        assert isinstance(attr, TypeAttr) and isinstance(attr.value, FunctionType)
        return attr.value

    @property
    def body(self) -> Block:
        return self.region.blocks[0]

    @property
    def args(self) -> list:
        return self.body.args

    def add_arg(self, type: Type, name_hint: str) -> Value:
        """Append an argument to the signature and the entry block."""
        fn = self.function_type
        self.attributes["function_type"] = TypeAttr(FunctionType((*fn.inputs, type), fn.results))
        return self.body.add_arg(type, name_hint)

    def _build(
        self,
        sym_name: str,
        arg_types: list[Type],
        result_types: list[Type],
        attrs: dict[str, Attribute] | None,
    ) -> None:
        fn = FunctionType(tuple(arg_types), tuple(result_types))
        all_attrs: dict[str, Attribute] = {
            "sym_name": StringAttr(sym_name),
            "function_type": TypeAttr(fn),
        }
        all_attrs.update(attrs or {})
        Operation.__init__(self, regions=[Region([Block(arg_types)])], attributes=all_attrs)

    def verify_(self) -> None:
        if not isinstance(self.attributes.get("sym_name"), StringAttr):
            raise self.error("needs a 'sym_name' string attribute")
        fn = self.attributes.get("function_type")
        if not (isinstance(fn, TypeAttr) and isinstance(fn.value, FunctionType)):
            raise self.error("needs a 'function_type' attribute holding a function type")
        if not self.region.blocks:
            raise self.error("needs a body")
        arg_types = tuple(a.type for a in self.body.args)
        if arg_types != fn.value.inputs:
            raise self.error(
                f"entry block arguments ({', '.join(map(str, arg_types))}) do not match "
                f"the signature {fn.value}"
            )

    def print_custom(self, p: Printer) -> None:
        p.print(self.keyword, " @", self.sym_name, "(")
        p.define_block_args(self.body)
        p.print_list(self.body.args, p.print_argument)
        p.print(")")
        results = self.function_type.results
        if results:
            p.print(" -> ")
            p.print_result_types(results)
        p.print_attr_dict_with_keyword(self.attributes, elided=("sym_name", "function_type"))
        p.print(" ")
        p.print_region(self.region, print_entry_args=False)

    @classmethod
    def parse_custom(cls, parser: Parser, results: list[ResultName]) -> Operation:
        name = parser.parse_symbol_name()
        args = parser.parse_delimited("(", parser.parse_argument, ")")
        result_types: list[Type] = []
        if parser.parse_optional_punct("->"):
            result_types = parser.parse_result_types()
        attrs: dict[str, Attribute] = {
            "sym_name": StringAttr(name),
            "function_type": TypeAttr(
                FunctionType(tuple(t for _, _, t in args), tuple(result_types))
            ),
        }
        attrs.update(parser.parse_optional_attr_dict_with_keyword())
        region = parser.parse_region(entry_args=args)
        return cls.create(attributes=attrs, regions=[region])


class FuncOp(_FunctionLike):
    """A device function (inlined into kernels before emission).

    ``func @axpy(%a: f32, %x: f32, %y: f32) -> f32 { ... return %r : f32 }``
    """

    name = "builtin.func"
    keyword = "func"
    traits = (IsolatedFromAbove(), SymbolOp(), HasParent(("builtin.module",)))

    def __init__(
        self,
        sym_name: str,
        arg_types: list[Type],
        result_types: list[Type],
        attributes: dict[str, Attribute] | None = None,
    ) -> None:
        self._build(sym_name, arg_types, result_types, attributes)


# Kernel attributes: name → (attribute kind, element count for arrays).
KERNEL_ATTRIBUTES: dict[str, tuple[str, int]] = {
    "reqntid": ("array", 3),  # exact block size, .reqntid
    "maxntid": ("array", 3),  # upper bound on block size, .maxntid
    "minnctapersm": ("int", 1),  # .minnctapersm
    "maxnreg": ("int", 1),  # .maxnreg
    "cluster_dim": ("array", 3),  # .reqnctapercluster
    "dynamic_smem": ("int", 1),  # bytes of dynamic shared memory at launch
    "dynamic_smem_align": ("int", 1),  # its alignment in bytes, where more than 16
    "grid": ("exprs", 3),  # grid (x, y, z) over the run-time parameters, for the launcher
    "params": ("dict", 0),  # the compile-time parameters' values: the specialisation
    # Set by lower-to-thread, checked by the runtime at each launch (docs/abi.md):
    "offsets": ("int", 1),  # bits of element-offset arithmetic (32: every tensor < 2^31)
    "arg_align": ("dict", 0),  # pointer argument -> the alignment in bytes it promised
    "arg_div": ("dict", 0),  # index argument -> what it is known to be divisible by
    # Set by the frontend for a stream-K gemm (`stream_k = true`, docs/abi.md):
    "implicit": ("names", 0),  # the trailing arguments the runtime supplies, by name
    "then": ("name", 0),  # the kernel the runtime launches after this one (its tail)
    # Its TMA tensor maps, the .params after its arguments (cutec/ir/dialects/thread_tma.py):
    "tensor_maps": ("map_names", 0),
}


class KernelOp(_FunctionLike):
    """A GPU entry point (a PTX ``.entry``); returns nothing.

    ``kernel @gemm(%A: !gpu.ptr<f32, global>) attributes {reqntid = array<i32: 256, 1, 1>}``
    """

    name = "builtin.kernel"
    keyword = "kernel"
    traits = (IsolatedFromAbove(), SymbolOp(), HasParent(("builtin.module",)))

    def __init__(
        self, sym_name: str, arg_types: list[Type], attributes: dict[str, Attribute] | None = None
    ) -> None:
        self._build(sym_name, arg_types, [], attributes)

    def verify_(self) -> None:
        super().verify_()
        if self.function_type.results:
            raise self.error("a kernel returns no values")
        for key, (kind, count) in KERNEL_ATTRIBUTES.items():
            attr = self.attributes.get(key)
            if attr is None:
                continue
            if kind == "exprs":
                self._verify_grid(attr, count)
                continue
            if kind == "dict":
                if not isinstance(attr, DictAttr):
                    raise self.error(f"'{key}' must be a dictionary attribute")
                continue
            if kind == "name":
                if not isinstance(attr, StringAttr):
                    raise self.error(f"'{key}' must be a string (a kernel's name)")
                continue
            if kind == "names":
                self._verify_implicit(attr)
                continue
            if kind == "map_names":
                self._verify_map_names(attr)
                continue
            if kind == "array":
                if not (isinstance(attr, DenseArrayAttr) and len(attr.values) == count):
                    raise self.error(f"'{key}' must be an array of {count} integers")
                values = list(attr.values)
            else:
                if not isinstance(attr, IntegerAttr):
                    raise self.error(f"'{key}' must be an integer")
                values = [attr.value]
            lowest = 0 if key == "dynamic_smem" else 1
            if any(v < lowest for v in values):
                raise self.error(f"'{key}' must be >= {lowest}, got {values}")
        if "reqntid" in self.attributes and "maxntid" in self.attributes:
            raise self.error("'reqntid' and 'maxntid' are exclusive")

    def _verify_implicit(self, attr: Attribute) -> None:
        """`implicit` names the kernel's last arguments, in order."""
        entries = attr.elements if isinstance(attr, ArrayAttr) else None
        if entries is None or not all(isinstance(e, StringAttr) for e in entries):
            raise self.error("'implicit' must be an array of argument names")
        names = [e.value for e in entries]  # type: ignore[attr-defined]
        last = [a.name_hint for a in self.args[len(self.args) - len(names) :]]
        if len(names) > len(self.args) or names != last:
            raise self.error(f"'implicit' names {names}, but the last arguments are {last}")

    def _verify_map_names(self, attr: Attribute) -> None:
        """`tensor_maps` names the tensor-map parameters: distinct identifiers, none an
        argument's name."""
        entries = attr.elements if isinstance(attr, ArrayAttr) else None
        if entries is None or not all(isinstance(e, StringAttr) for e in entries):
            raise self.error("'tensor_maps' must be an array of parameter names")
        names = [e.value for e in entries]  # type: ignore[attr-defined]
        args = {a.name_hint for a in self.args}
        if len(set(names)) != len(names) or not all(n.isidentifier() for n in names):
            raise self.error(f"'tensor_maps' must name distinct identifiers, got {names}")
        if args & set(names):
            raise self.error(f"'tensor_maps' reuses argument names {sorted(args & set(names))}")

    def _verify_grid(self, attr: Attribute, count: int) -> None:
        """`grid` holds `count` integer expressions in `symbolic.parse_expr` syntax."""
        entries = attr.elements if isinstance(attr, ArrayAttr) else ()
        if len(entries) != count or not all(isinstance(e, StringAttr) for e in entries):
            raise self.error(f"'grid' must be an array of {count} expression strings")
        for e in entries:
            assert isinstance(e, StringAttr)
            try:
                parse_expr(e.value)
            except LayoutError as err:
                raise self.error(f"'grid' entry {e}: {err}") from None


class ReturnOp(Operation):
    """Return from a func or kernel: ``return %a, %b : f32, i32``."""

    name = "builtin.return"
    traits = (Terminator(), Pure(), HasParent(("builtin.func", "builtin.kernel")))
    values = var_operand_def()
    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, values: list[Value] | None = None) -> None:
        super().__init__(operands=values or [])

    def verify_(self) -> None:
        parent = self.parent_op
        assert isinstance(parent, _FunctionLike)
        expected = parent.function_type.results
        got_types = tuple(v.type for v in self.values)
        if got_types != expected:
            got = ", ".join(map(str, got_types)) or "nothing"
            raise self.error(
                f"returns ({got}) but '@{parent.sym_name}' returns "
                f"({', '.join(map(str, expected))})"
            )


DIALECT = Dialect("builtin", ops=(ModuleOp, FuncOp, KernelOp, ReturnOp))
