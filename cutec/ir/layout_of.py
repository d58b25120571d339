"""layout_of: the symbolic layout of any tensor value, rebuilt from the IR alone.

A tensor type keeps only the static part of its layout (``?`` for a dynamic
leaf). The full layout, with symbolic leaves, is a function of the IR: a base
tensor's layout is its type with the ``?`` leaves replaced by the integers its
index operands hold, and every view op computes its result layout from its
source's. Ops take part through four methods: `result_layout(la)` (the layout
of the op's tensor result), `result_address(la)` (a view's root, offset and
layout at its run-time coordinates: `address_of`), `result_integer(la)` (the
value of an index result, as `cute.size`) and `leaf_divisor(operand_index)`
(what a dynamic leaf operand is known to be divisible by, as
`cute.make_tensor`'s `div`). This analysis
replays that chain with memoisation, so a pass asks for the layout of any
value without the frontend:

    la = LayoutAnalysis()
    la.layout_of(tAgA)      # ((_4,_1),_1,_1,K//8):((_1,_0),_0,_0,8*ldA)

Index values become symbolic integers (`integer_of`): constants are ints,
``arith`` integer arithmetic is replayed on the symbols (but a division or
remainder by a run-time value, which is a symbol of its own: replayed, every
address using it would divide again), `cute.size` is the size
of a layout, and a kernel argument is a symbol of the same name whose facts
(divisibility, ``>= 1``) come from the `div` facts of the `cute.make_tensor`
ops that take it as a leaf — the facts the frontend computed with. Any other
value is an opaque symbol: its layout role is honest (nothing is assumed of
it), and two uses of the same value share the symbol.

The frontend seeds the analysis with its own symbols (`bind`), so the builder,
the verifier and the lowering all compute layouts through these same methods.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NamedTuple

from cutec.ir.attributes import IntegerAttr
from cutec.ir.core import BlockArgument, Operation, OpResult, Value
from cutec.ir.dialects import arith
from cutec.ir.traits import IsolatedFromAbove
from cutec.layout import ComposedLayout, Layout
from cutec.layout.symbolic import Integer, Symbol, SymInt, bounds, ceil_div, sym

AnyLayout = Layout | ComposedLayout


class TensorAddress(NamedTuple):
    """Element i of a tensor is element ``offset + layout(i)`` of `root`.

    For a swizzled layout (Sw o off o B) the offsets of the views in between sit
    inside the composition, where the swizzle acts on them.
    """

    root: Value
    offset: Integer
    layout: AnyLayout


class UnknownLayout(Exception):
    """A strict analysis met a tensor whose layout the IR does not determine."""


def _floordiv(a: Integer, b: Integer) -> Integer:
    # Index arithmetic of the language: extents are non-negative, where C's
    # truncating division and the algebra's floor division agree.
    return a // b


def _shift_left(a: Integer, b: Integer) -> Integer:
    if not isinstance(b, int) or not 0 <= b < 63:
        raise ValueError("a shift by a run-time amount")
    return a * (1 << b)


def _shift_right(a: Integer, b: Integer) -> Integer:
    # Logical shift: floor division where a >= 0 (the materialiser's only use of it).
    if not isinstance(b, int) or not 0 <= b < 63 or not bounds(a)[0] >= 0:
        raise ValueError("a logical shift of a possibly negative value")
    return a // (1 << b)


def _mask(a: Integer, b: Integer) -> Integer:
    # a & (2^k - 1) is a mod 2^k for every a (two's complement).
    if not isinstance(b, int) or b < 0 or b & (b + 1):
        raise ValueError("a mask that is not 2^k - 1")
    return a % (b + 1)


def _unsigned(fn: Callable[[Integer, Integer], Integer]) -> Callable[[Integer, Integer], Integer]:
    # divui/remui agree with floor division and mod for a >= 0, b >= 1.
    def rule(a: Integer, b: Integer) -> Integer:
        if not (bounds(a)[0] >= 0 and bounds(b)[0] >= 1):
            raise ValueError("an unsigned division of possibly negative values")
        return fn(a, b)

    return rule


_BINARY: dict[type[Operation], Callable[[Integer, Integer], Integer]] = {
    arith.AddIOp: lambda a, b: a + b,
    arith.SubIOp: lambda a, b: a - b,
    arith.MulIOp: lambda a, b: a * b,
    arith.DivSIOp: _floordiv,
    arith.FloorDivSIOp: _floordiv,
    arith.RemSIOp: lambda a, b: a % b,
    arith.CeilDivSIOp: ceil_div,
    # What IntegerMaterializer writes for powers of two and non-negative operands.
    arith.ShLIOp: _shift_left,
    arith.ShRUIOp: _shift_right,
    arith.AndIOp: _mask,
    arith.DivUIOp: _unsigned(_floordiv),
    arith.RemUIOp: _unsigned(lambda a, b: a % b),
}
_DIVISIONS = (
    arith.DivSIOp,
    arith.FloorDivSIOp,
    arith.RemSIOp,
    arith.CeilDivSIOp,
    arith.DivUIOp,
    arith.RemUIOp,
)
_CASTS: tuple[type[Operation], ...] = (arith.IndexCastOp, arith.ExtSIOp)


class LayoutAnalysis:
    """Memoised `layout_of` / `integer_of` over one IR (the IR must not change meanwhile).

    `strict`: raise `UnknownLayout` for a tensor with no defining rule (a block
    argument of tensor type) instead of reading its type with fresh symbols.
    """

    def __init__(
        self, bindings: Mapping[Value, Integer] | None = None, *, strict: bool = False
    ) -> None:
        self.strict = strict
        self._ints: dict[Value, Integer] = dict(bindings or {})
        self._layouts: dict[Value, AnyLayout] = {}
        self._addresses: dict[Value, TensorAddress] = {}
        # Symbol names in use, per kernel (symbols of two kernels never meet).
        self._names: dict[Operation | None, set[str]] = {}
        # The value each index symbol stands for, per kernel (for materialisation).
        self._symbol_values: dict[Operation | None, dict[str, Value]] = {}

    # ------------------------------------------------------------------ seeding
    def bind(self, value: Value, integer: Integer) -> None:
        """Use `integer` (a frontend symbol, say) for `value` from now on."""
        self._ints[value] = integer
        atom = _symbol_name(integer)
        if atom is not None:
            self._symbol_values.setdefault(_isolating_op(value), {}).setdefault(atom, value)

    def symbol_values(self, kernel: Operation | None) -> Mapping[str, Value]:
        """The index value each symbol of `kernel` stands for (symbols met so far).

        `cutec.ir.materialize` reads symbols back as these values. Symbols made
        for the unknown leaves of a tensor's type stand for no value and are absent.
        """
        return self._symbol_values.get(kernel, {})

    # ------------------------------------------------------------------ integers
    def integer_of(self, value: Value) -> Integer:
        """The symbolic integer an index value holds."""
        found = self._ints.get(value)
        if found is None:
            found = self._ints[value] = self._compute_integer(value)
            name = _symbol_name(found)
            if name is not None:
                self._symbol_values.setdefault(_isolating_op(value), {}).setdefault(name, value)
        return found

    def _compute_integer(self, value: Value) -> Integer:
        if isinstance(value, OpResult):
            op = value.op
            if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
                return op.value.value
            fn = _BINARY.get(type(op))
            if fn is not None:
                a, b = (self.integer_of(v) for v in op.operands)
                if isinstance(op, _DIVISIONS) and not isinstance(b, int):
                    # A division by a run-time value stays the value it is: replayed,
                    # it would be materialised again at every use (a CTA coordinate
                    # of a grouped launch order, divided anew in each address).
                    return sym(self._fresh(value), min_value=0)
                try:
                    return fn(a, b)
                except (ArithmeticError, ValueError):
                    pass  # a division by a zero constant: leave it to run time
            elif isinstance(op, _CASTS):
                return self.integer_of(op.operands[0])
            elif hasattr(op, "result_integer"):
                return op.result_integer(self)
        elif isinstance(value, BlockArgument) and _is_entry_argument(value):
            divisor = self._leaf_divisor(value)
            if divisor is not None:
                # An extent or stride of a kernel tensor: >= 1, with its divisor.
                return sym(self._fresh(value), divisibility=divisor)
        return sym(self._fresh(value), min_value=0)

    @staticmethod
    def _leaf_divisor(arg: BlockArgument) -> int | None:
        """The divisor of a kernel argument that some make_tensor takes as a leaf, else None."""
        found: int | None = None
        for use in arg.uses:
            leaf_divisor = getattr(use.owner, "leaf_divisor", None)
            d = leaf_divisor(use.index) if leaf_divisor is not None else None
            if d is not None:
                found = max(found or 1, d)
        return found

    def _fresh(self, value: Value) -> str:
        """A symbol name for `value`: its name hint, made unique in its kernel."""
        hint = value.name_hint
        base = hint if hint and hint.isidentifier() else "v"
        used = self._names.setdefault(_isolating_op(value), set())
        name, n = base, 0
        while name in used:
            n += 1
            name = f"{base}_{n}"
        used.add(name)
        return name

    # ------------------------------------------------------------------ layouts
    def layout_of(self, value: Value) -> AnyLayout:
        """The symbolic layout of a tensor, coordinate-tensor or layout value."""
        found = self._layouts.get(value)
        if found is None:
            found = self._layouts[value] = self._compute_layout(value)
        return found

    def address_of(self, value: Value) -> TensorAddress:
        """Where a tensor's elements are: element i is element ``offset + layout(i)`` of
        `root` (a make_tensor, allocation or identity tensor), with the run-time
        coordinates and thread indices of the views in between as symbols."""
        found = self._addresses.get(value)
        if found is None:
            found = self._addresses[value] = self._compute_address(value)
        return found

    def _compute_address(self, value: Value) -> TensorAddress:
        if isinstance(value, OpResult):
            rule = getattr(value.op, "result_address", None)
            if rule is not None:
                return TensorAddress(*rule(self))
        # A base tensor (or one only its type describes) is its own root.
        return TensorAddress(value, 0, self.layout_of(value))

    def _compute_layout(self, value: Value) -> AnyLayout:
        if isinstance(value, OpResult):
            rule = getattr(value.op, "result_layout", None)
            if rule is not None:
                return rule(self)
        if self.strict:
            raise UnknownLayout(f"the layout of {value} is not determined by the IR")
        spec = getattr(value.type, "spec", None)
        if spec is None:
            raise TypeError(f"layout_of: {value.type} is not a tensor or layout type")
        leaves = [sym(self._fresh(value)) for _ in range(spec.dynamic_count)]
        return spec.with_values(leaves)


def _symbol_name(integer: Integer) -> str | None:
    """The name of `integer` when it is one bare symbol."""
    if isinstance(integer, SymInt) and not integer.const and len(integer.terms) == 1:
        ((monomial, coeff),) = integer.terms
        if coeff == 1 and len(monomial) == 1 and monomial[0][1] == 1:
            atom = monomial[0][0]
            if isinstance(atom, Symbol):
                return atom.name
    return None


def _isolating_op(value: Value) -> Operation | None:
    """The nearest op above `value` that is isolated from above (its kernel or function)."""
    op = value.op if isinstance(value, OpResult) else value.owner.parent_op
    while op is not None and not op.has_trait(IsolatedFromAbove):
        op = op.parent_op
    return op


def _is_entry_argument(value: BlockArgument) -> bool:
    """An argument of a function's or kernel's body (not a loop's induction variable)."""
    parent = value.block.parent_op
    return parent is not None and parent.has_trait(IsolatedFromAbove)


def layout_of(value: Value) -> AnyLayout:
    """The symbolic layout of `value`, computed afresh (use a LayoutAnalysis for many)."""
    return LayoutAnalysis().layout_of(value)
