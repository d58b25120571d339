"""The scf dialect: structured control flow — for (with loop-carried values),
if (with results), while, and their terminators yield and condition.

Region ops have no effects of their own; passes look at the ops inside
(`cutec.ir.traits.effects_of`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cutec.diagnostics import Location
from cutec.ir.attributes import Attribute, IntegerAttr, UnitAttr
from cutec.ir.core import Block, Operation, Region, Value
from cutec.ir.dialect import Dialect
from cutec.ir.lexer import Tok
from cutec.ir.opdef import (
    operand_def,
    opt_attr_def,
    region_def,
    var_operand_def,
    var_result_def,
)
from cutec.ir.rewrite import PatternRewriter, RewritePattern
from cutec.ir.traits import ConstantLike, HasParent, MemoryEffects, Pure, Terminator
from cutec.ir.types import IndexType, IntegerType, Type

if TYPE_CHECKING:
    from cutec.ir.parser import Parser, ResultName
    from cutec.ir.printer import Printer

NO_OWN_EFFECTS = MemoryEffects(())

# The values a terminator passes on, with their types: `` %a, %b : f32, i32`` or nothing.
TRAILING_VALUES = "($values^ `:` type($values))? attr-dict"


def _constant_int(value: Value) -> int | None:
    """The integer a value is known to hold, if it comes from a constant op."""
    owner = value.owner
    if isinstance(owner, Operation) and owner.has_trait(ConstantLike):
        attr = owner.attributes.get("value")
        if isinstance(attr, IntegerAttr):
            return attr.value
    return None


class YieldOp(Operation):
    """Ends a region of for / if / while, passing values out: ``scf.yield %a : f32``."""

    name = "scf.yield"
    traits = (Terminator(), Pure(), HasParent(("scf.for", "scf.if", "scf.while")))
    values = var_operand_def()
    assembly_format = TRAILING_VALUES

    def __init__(self, values: list[Value] | None = None) -> None:
        super().__init__(operands=values or [])


class ConditionOp(Operation):
    """Ends the `before` region of a while: ``scf.condition(%go) %a : i32``."""

    name = "scf.condition"
    traits = (Terminator(), Pure(), HasParent(("scf.while",)))
    cond = operand_def(IntegerType(1))
    values = var_operand_def()
    assembly_format = "`(` $cond `)` " + TRAILING_VALUES

    def __init__(self, cond: Value, values: list[Value] | None = None) -> None:
        super().__init__(operands=[cond, *(values or [])])


def _check_yield(op: Operation, region: Region, expected: tuple[Type, ...], what: str) -> None:
    term = region.blocks[0].terminator if region.blocks else None
    if not isinstance(term, YieldOp):
        raise op.error(f"{what} must end with scf.yield")
    if term.operand_types != expected:
        got = ", ".join(map(str, term.operand_types)) or "nothing"
        want = ", ".join(map(str, expected)) or "nothing"
        raise op.error(f"{what} yields ({got}) but ({want}) is expected")


# A request to the `pipeline` pass (``pipeline(stages = N)`` in the language):
# software-pipeline the loop's cp.async copies over N shared-memory stages.
PIPELINE_STAGES = "pipeline_stages"


class ForOp(Operation):
    """A counted loop with loop-carried values.

    ``%r = scf.for %i = %lb to %ub step %s iter_args(%acc = %init) -> (f32) {...}``

    The body's arguments are the induction variable and the carried values; its
    scf.yield gives the next carried values; the results are the final ones.
    A `unroll` attribute (integer factor, 0 = fully) is a request to the unroller;
    ``pipeline_stages = N : i32`` (N >= 2) one to the `pipeline` pass.
    """

    name = "scf.for"
    traits = (NO_OWN_EFFECTS,)
    lb = operand_def((IndexType, IntegerType))
    ub = operand_def((IndexType, IntegerType))
    step = operand_def((IndexType, IntegerType))
    inits = var_operand_def()
    results_ = var_result_def()
    region = region_def()

    def __init__(
        self,
        lb: Value,
        ub: Value,
        step: Value,
        inits: list[Value] | None = None,
        attributes: dict[str, Attribute] | None = None,
    ) -> None:
        inits = inits or []
        body = Block([lb.type, *(v.type for v in inits)])
        super().__init__(
            operands=[lb, ub, step, *inits],
            result_types=[v.type for v in inits],
            regions=[Region([body])],
            attributes=attributes,
        )

    @property
    def body(self) -> Block:
        return self.region.blocks[0]

    @property
    def induction_var(self) -> Value:
        return self.body.args[0]

    def verify_(self) -> None:
        t = self.lb.type
        if self.ub.type != t or self.step.type != t:
            raise self.error("bounds and step must share one integer or index type")
        inits = tuple(v.type for v in self.inits)
        if self.result_types != inits:
            raise self.error("result types must match the iter_args types")
        if len(self.region.blocks) != 1:
            raise self.error("body must be one block")
        if tuple(a.type for a in self.body.args) != (t, *inits):
            raise self.error("body arguments must be the induction variable and the iter_args")
        _check_yield(self, self.region, inits, "body")
        step = _constant_int(self.step)
        if step is not None and step <= 0:
            raise self.error(f"step must be positive, got {step}")
        stages = self.attributes.get(PIPELINE_STAGES)
        if stages is not None and (not isinstance(stages, IntegerAttr) or stages.value < 2):
            raise self.error(f"'{PIPELINE_STAGES}' must be an integer of at least 2, not {stages}")

    def print_custom(self, p: Printer) -> None:
        p.define_block_args(self.body)
        p.print("scf.for ")
        p.print_operand(self.induction_var)
        p.print(" = ")
        p.print_operand(self.lb)
        p.print(" to ")
        p.print_operand(self.ub)
        p.print(" step ")
        p.print_operand(self.step)
        if self.inits:
            p.print(" iter_args")
            p.print_assignment_list(self.body.args[1:], self.inits)
            p.print(" -> (")
            p.print_types(self.result_types)
            p.print(")")
        if not isinstance(self.lb.type, IndexType):
            p.print(" : ", self.lb.type)
        p.print_attr_dict_with_keyword(self.attributes)
        p.print(" ")
        p.print_region(self.region, print_entry_args=False)

    @classmethod
    def parse_custom(cls, parser: Parser, results: list[ResultName]) -> Operation:
        iv_tok = parser.tok
        if iv_tok.kind is not Tok.VALUE_ID:
            raise parser.expected("the induction variable (%i)")
        parser.advance()
        parser.parse_punct("=")
        lb = parser.parse_operand()
        parser.parse_keyword("to")
        ub = parser.parse_operand()
        parser.parse_keyword("step")
        step = parser.parse_operand()
        names: list[tuple[str, Location]] = []
        inits: list[Value] = []
        result_types: list[Type] = []
        if parser.parse_optional_keyword("iter_args"):
            names, inits = parser.parse_assignment_list()
            parser.parse_punct("->")
            result_types = parser.parse_result_types()
            if len(result_types) != len(inits):
                raise parser.error(f"{len(inits)} iter_args but {len(result_types)} result types")
        iv_type: Type = IndexType()
        if parser.parse_optional_punct(":"):
            iv_type = parser.parse_type()
        parser.check_types([lb, ub, step], [iv_type] * 3, iv_tok.loc)
        parser.check_types(inits, result_types, iv_tok.loc)
        attrs = parser.parse_optional_attr_dict_with_keyword()
        entry = [(iv_tok.text[1:], iv_tok.loc, iv_type)]
        entry += [(n, loc, t) for (n, loc), t in zip(names, result_types, strict=True)]
        region = parser.parse_region(entry_args=entry)
        return cls.create(
            operands=[lb, ub, step, *inits],
            result_types=result_types,
            attributes=attrs,
            regions=[region],
        )


class IfOp(Operation):
    """``%r = scf.if %cond -> (i32) { ... } else { ... }``; no else when there are no results."""

    name = "scf.if"
    traits = (NO_OWN_EFFECTS,)
    cond = operand_def(IntegerType(1))
    results_ = var_result_def()
    residue = opt_attr_def(UnitAttr)  # `cond` is the predicate pass's in-bounds test
    num_regions = None  # then, and else when present

    def __init__(
        self, cond: Value, result_types: list[Type] | None = None, with_else: bool = False
    ) -> None:
        regions = [Region([Block()])]
        if with_else or result_types:
            regions.append(Region([Block()]))
        super().__init__(operands=[cond], result_types=result_types or [], regions=regions)

    @property
    def then_block(self) -> Block:
        return self.regions[0].blocks[0]

    @property
    def else_block(self) -> Block | None:
        return self.regions[1].blocks[0] if len(self.regions) > 1 else None

    def verify_(self) -> None:
        if len(self.regions) not in (1, 2):
            raise self.error("has a then region and an optional else region")
        if self.results and len(self.regions) != 2:
            raise self.error("with results needs an else region")
        for region, what in zip(self.regions, ("then region", "else region"), strict=False):
            if len(region.blocks) != 1 or region.blocks[0].args:
                raise self.error(f"{what} must be one block without arguments")
            _check_yield(self, region, self.result_types, what)

    def print_custom(self, p: Printer) -> None:
        p.print("scf.if ")
        p.print_operand(self.cond)
        if self.results:
            p.print(" -> (")
            p.print_types(self.result_types)
            p.print(")")
        p.print_attr_dict_with_keyword(self.attributes)
        p.print(" ")
        p.print_region(self.regions[0])
        if len(self.regions) > 1:
            p.print(" else ")
            p.print_region(self.regions[1])

    @classmethod
    def parse_custom(cls, parser: Parser, results: list[ResultName]) -> Operation:
        cond = parser.parse_operand()
        result_types: list[Type] = []
        if parser.parse_optional_punct("->"):
            result_types = parser.parse_result_types()
        attrs = parser.parse_optional_attr_dict_with_keyword()
        regions = [parser.parse_region()]
        if parser.parse_optional_keyword("else"):
            regions.append(parser.parse_region())
        return cls.create(
            operands=[cond], result_types=result_types, attributes=attrs, regions=regions
        )


class WhileOp(Operation):
    """A general loop: `before` computes the condition and the values it forwards,
    `after` computes the next iteration's inputs.

    ``%r = scf.while (%a = %init) : (i32) -> i32 { ... scf.condition(%c) %a : i32 }
    do { ^bb0(%x: i32): ... scf.yield %x : i32 }``
    """

    name = "scf.while"
    traits = (NO_OWN_EFFECTS,)
    inits = var_operand_def()
    results_ = var_result_def()
    before_region = region_def()
    after_region = region_def()

    def __init__(self, inits: list[Value], result_types: list[Type]) -> None:
        before = Block([v.type for v in inits])
        after = Block(result_types)
        super().__init__(
            operands=inits, result_types=result_types, regions=[Region([before]), Region([after])]
        )

    @property
    def before(self) -> Block:
        return self.before_region.blocks[0]

    @property
    def after(self) -> Block:
        return self.after_region.blocks[0]

    def verify_(self) -> None:
        inits = tuple(v.type for v in self.inits)
        if tuple(a.type for a in self.before.args) != inits:
            raise self.error("'before' arguments must match the initial values")
        cond = self.before.terminator
        if not isinstance(cond, ConditionOp):
            raise self.error("'before' region must end with scf.condition")
        if tuple(v.type for v in cond.values) != self.result_types:
            raise self.error("scf.condition must forward values of the result types")
        if tuple(a.type for a in self.after.args) != self.result_types:
            raise self.error("'after' arguments must match the result types")
        _check_yield(self, self.after_region, inits, "'after' region")

    def print_custom(self, p: Printer) -> None:
        p.define_block_args(self.before)
        p.print("scf.while ")
        p.print_assignment_list(self.before.args, self.inits)
        p.print(" : (")
        p.print_types([v.type for v in self.inits])
        p.print(") -> (")
        p.print_types(self.result_types)
        p.print(")")
        p.print_attr_dict_with_keyword(self.attributes)
        p.print(" ")
        p.print_region(self.before_region, print_entry_args=False)
        p.print(" do ")
        p.print_region(self.after_region)

    @classmethod
    def parse_custom(cls, parser: Parser, results: list[ResultName]) -> Operation:
        names, inits = parser.parse_assignment_list()
        loc = parser.tok.loc
        parser.parse_punct(":")
        types = parser.parse_delimited("(", parser.parse_type, ")")
        parser.check_types(inits, types, loc)
        parser.parse_punct("->")
        result_types = parser.parse_result_types()
        attrs = parser.parse_optional_attr_dict_with_keyword()
        before = parser.parse_region(
            entry_args=[(n, nl, t) for (n, nl), t in zip(names, types, strict=True)]
        )
        parser.parse_keyword("do")
        after = parser.parse_region()
        return cls.create(
            operands=inits, result_types=result_types, attributes=attrs, regions=[before, after]
        )


# --------------------------------------------------------------------------- canonicalization


class InlineConstantIf(RewritePattern):
    """``scf.if true {A} else {B} → A`` and ``scf.if false {A} else {B} → B``."""

    op_type = IfOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        assert isinstance(op, IfOp)
        cond = _constant_int(op.cond)
        if cond is None:
            return False
        block = op.then_block if cond else op.else_block
        if block is None:
            rewriter.erase_op(op)
            return True
        term = block.terminator
        assert isinstance(term, YieldOp)
        values = list(term.operands)
        rewriter.erase_op(term)
        rewriter.inline_block_before(block, op, [])
        rewriter.replace_op(op, values)
        return True


class RemoveZeroTripFor(RewritePattern):
    """``scf.for %i = c0 to c1 … with c0 >= c1 → its iter_args' initial values``."""

    op_type = ForOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        assert isinstance(op, ForOp)
        lb, ub = _constant_int(op.lb), _constant_int(op.ub)
        if lb is None or ub is None or lb < ub:
            return False
        rewriter.replace_op(op, list(op.inits))
        return True


class InlineSingleTripFor(RewritePattern):
    """``scf.for %i = %a to %a + c step s`` with ``0 < c <= s`` (or constant bounds
    ``c0 < c1 <= c0 + s``) runs once: its body in its place, with ``%i = %a``.

    The whole-tensor gemm's loop over tiles, ``range(cta, cta + 1)`` when the grid
    has a CTA per tile, so builds what one tile by block index did.
    """

    op_type = ForOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        assert isinstance(op, ForOp)
        step = _constant_int(op.step)
        if step is None or step <= 0:
            return False
        lb, ub = _constant_int(op.lb), _constant_int(op.ub)
        if lb is not None and ub is not None:
            trip = ub - lb
        else:
            add = op.ub.owner
            if not (isinstance(add, Operation) and add.name == "arith.addi"):
                return False
            lhs, rhs = add.operands
            trip = _constant_int(rhs) if lhs is op.lb else None
            if trip is None and rhs is op.lb:
                trip = _constant_int(lhs)
        if trip is None or not 0 < trip <= step:
            return False
        term = op.body.terminator
        assert isinstance(term, YieldOp)
        # A yielded body argument (the iteration variable or an iter_arg yielded
        # unchanged) is replaced by the value it stands for, as its other uses are.
        entry = [op.lb, *op.inits]
        given = dict(zip(op.body.args, entry, strict=True))
        values = [given.get(v, v) for v in term.operands]
        rewriter.erase_op(term)
        rewriter.inline_block_before(op.body, op, entry)
        rewriter.replace_op(op, values)
        return True


class DropDeadIterArgs(RewritePattern):
    """Drop each iter_arg that nothing reads: its result has no use and its body argument
    none but its own slot of the yield.

    promote-registers makes every array element a loop body writes an iter_arg, also
    one the body overwrites before reading (a fragment refilled each k-tile). Such a
    value only travels around the back edge: left in, the PTX moves it there every
    iteration (64 b16 moves per k-tile of gemm_auto), which ptxas then deletes as dead.
    """

    op_type = ForOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        assert isinstance(op, ForOp)
        term = op.body.terminator
        carried = op.body.args[1:]
        dead = {
            i
            for i, (arg, result) in enumerate(zip(carried, op.results, strict=True))
            if not result.uses and all(u.owner is term and u.index == i for u in arg.uses)
        }
        if not dead:
            return False
        keep = [i for i in range(len(carried)) if i not in dead]
        assert term is not None
        term.set_operands([term.operands[i] for i in keep])
        new = ForOp(op.lb, op.ub, op.step, [op.inits[i] for i in keep], dict(op.attributes))
        new.location = op.location
        rewriter.insert_before(op, new)
        body = op.body
        body.args[0].replace_all_uses_with(new.induction_var)
        for j, i in enumerate(keep):
            carried[i].replace_all_uses_with(new.body.args[1 + j])
        for inner in list(body.ops):
            inner.detach()
            new.body.append(inner)
        results: list[Value | None] = [None] * len(carried)
        for j, i in enumerate(keep):
            results[i] = new.results[j]
        for i in dead:  # unused: any value of the right type stands in
            results[i] = op.inits[i]
        rewriter.replace_op(op, results)
        return True


IfOp.canonicalization_patterns = (InlineConstantIf(),)
ForOp.canonicalization_patterns = (RemoveZeroTripFor(), InlineSingleTripFor(), DropDeadIterArgs())

DIALECT = Dialect("scf", ops=(ForOp, IfOp, WhileOp, YieldOp, ConditionOp))
