"""The generic verifier: the invariants every op shares, then each op's `verify_`.

Checked once here: the declared fields of ops that have them (arity, operand
and result type constraints, attributes: `cutec.ir.opdef.verify_fields`),
arity (fixed operand/result/region counts), terminators
(present where required, only at the end of a block), `HasParent`, SSA
dominance (a value is defined before its use, in the same block or an
enclosing one) and isolation (`IsolatedFromAbove` ops use no outer values).
"""

from __future__ import annotations

from cutec.diagnostics import CompileError
from cutec.ir.core import Block, BlockArgument, Operation, OpResult, Value, VerifyError
from cutec.ir.opdef import verify_fields
from cutec.ir.traits import HasParent, IsolatedFromAbove, NoTerminator, Terminator


def verify(op: Operation) -> None:
    """Raise `VerifyError` (a `CompileError`) at the first broken invariant under `op`."""
    _verify_op(op, visible=set())


def _verify_op(op: Operation, visible: set[Value]) -> None:
    cls = type(op)
    if cls.op_def is not None:
        verify_fields(op)  # arity included
        if cls.num_regions is not None and cls.num_regions != len(op.regions):
            raise op.error(f"expects {cls.num_regions} regions, got {len(op.regions)}")
    else:
        for what, fixed, actual in (
            ("operands", cls.num_operands, len(op.operands)),
            ("results", cls.num_results, len(op.results)),
            ("regions", cls.num_regions, len(op.regions)),
        ):
            if fixed is not None and fixed != actual:
                raise op.error(f"expects {fixed} {what}, got {actual}")

    for i, v in enumerate(op.operands):
        if v not in visible:
            raise op.error(f"operand #{i} {_describe(v)} does not dominate this use")

    parent_trait = op.get_trait(HasParent)
    if parent_trait is not None:
        parent = op.parent_op
        if parent is None or parent.name not in parent_trait.parents:
            want = " or ".join(f"'{p}'" for p in parent_trait.parents)
            raise op.error(f"must be directly inside {want}")

    if op.has_trait(Terminator):
        block = op.parent
        if block is not None and block.last_op is not op:
            raise op.error("must be the last op of its block")

    inner_visible = set() if op.has_trait(IsolatedFromAbove) else visible
    for region in op.regions:
        if region.parent is not op:
            raise op.error("region's parent link is broken")
        for block in region.blocks:
            _verify_block(op, block, set(inner_visible))

    try:
        op.verify_()
    except VerifyError:
        raise
    except CompileError:
        raise
    except (AssertionError, AttributeError, IndexError, KeyError, TypeError) as e:
        # The op's own checks tripped over malformed structure: report it, located.
        raise op.error(f"is malformed ({type(e).__name__}: {e})") from None


def _verify_block(owner: Operation, block: Block, visible: set[Value]) -> None:
    visible.update(block.args)
    for op in block.ops:
        if op.parent is not block:
            raise op.error("parent link is broken")
        _verify_op(op, visible)
        visible.update(op.results)
    if not owner.has_trait(NoTerminator):
        last = block.terminator
        if last is None or not last.has_trait(Terminator):
            raise owner.error("region block must end with a terminator")


def _describe(v: Value) -> str:
    if isinstance(v, OpResult):
        return f"(result #{v.index} of '{v.op.name}')"
    if isinstance(v, BlockArgument):
        return f"(block argument #{v.index})"
    return ""
