"""The greedy worklist driver: visiting order, re-queueing of what a rewrite
touched, dead code decided by traits, benefit order, folding and the
convergence limit."""

from __future__ import annotations

import pytest

from cutec.ir.attributes import StringAttr, UnitAttr
from cutec.ir.core import Operation
from cutec.ir.dialects import arith
from cutec.ir.parser import parse_module
from cutec.ir.printer import print_op
from cutec.ir.rewrite import (
    ConvergenceError,
    GreedyConfig,
    PatternRewriter,
    PatternSet,
    RewritePattern,
    apply_patterns_greedily,
)
from cutec.transforms.constants import materialize


class Record(RewritePattern):
    """Matches every op, changes nothing: records the order ops are visited in."""

    op_type = Operation
    benefit = 100

    def __init__(self) -> None:
        self.seen: list[str] = []

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        self.seen.append(op.results[0].name_hint if op.results else op.name)
        return False


class MulToAdd(RewritePattern):
    """``muli(x, y) → addi(x, x)`` (a rewrite that makes a new op and kills `y`)."""

    op_type = arith.MulIOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        x = op.operands[0]
        add = rewriter.insert_before(op, arith.AddIOp(x, x))
        add.result.name_hint = "new"
        rewriter.replace_op(op, [add.result])
        return True


NO_FOLD = GreedyConfig(fold=False)

CHAIN = """
func @f(%x: i32) -> i32 {
  %two = arith.constant 2 : i32
  %a = arith.addi %x, %x : i32
  %m = arith.muli %a, %two : i32
  %s = arith.subi %m, %x : i32
  %o = arith.ori %s, %s : i32
  return %o : i32
}
"""


def test_ops_are_visited_in_program_order_once_when_nothing_changes() -> None:
    text = """
    func @f(%x: i32, %n: index) -> i32 {
      %a = arith.addi %x, %x : i32
      %c0 = arith.constant 0 : index
      %r = scf.for %i = %c0 to %n step %n iter_args(%acc = %x) -> (i32) {
        %in = arith.muli %acc, %acc : i32
        scf.yield %in : i32
      }
      %b = arith.subi %a, %r : i32
      return %b : i32
    }
    """
    module = parse_module(text, "t.mlir")
    record = Record()
    assert not apply_patterns_greedily(module, [record], NO_FOLD)
    # Pre-order, then a region's ops before what follows its op; the module
    # (the root) itself is not visited.
    assert record.seen == [
        "builtin.func",
        "a",
        "c0",
        "r",
        "in",
        "scf.yield",
        "b",
        "builtin.return",
    ]


def test_a_rewrite_requeues_the_new_op_the_users_and_the_dead_producers() -> None:
    module = parse_module(CHAIN, "t.mlir")
    record = Record()
    assert apply_patterns_greedily(module, [record, MulToAdd()], NO_FOLD)
    # After %m is rewritten, the driver pops (last pushed first) the
    # producers of the erased %m: %two, now dead and erased (dead ops never
    # reach the patterns), and %a, then the new op; the user %s was still
    # waiting for its turn. Untouched ops are visited once per sweep.
    assert record.seen[:9] == [
        "builtin.func",
        "two",
        "a",
        "m",
        "a",
        "new",
        "s",
        "o",
        "builtin.return",
    ]
    # The second sweep confirms the fixpoint.
    assert record.seen[9:] == ["builtin.func", "a", "new", "s", "o", "builtin.return"]
    out = print_op(module, print_locations=False)
    assert "arith.constant" not in out and "arith.muli" not in out
    assert "%new = arith.addi %a, %a" in out and "arith.subi %new, %x" in out


def test_a_user_already_visited_is_visited_again() -> None:
    # The pattern on %m2 replaces a value that %s used before it, in program
    # order, so %s must come back.
    text = """
    func @f(%x: i32) -> i32 {
      %m = arith.muli %x, %x : i32
      %s = arith.subi %m, %x : i32
      return %s : i32
    }
    """

    class Late(RewritePattern):
        """``subi(a, b)`` is looked at; ``muli`` turns into ``addi`` only after it."""

        op_type = arith.MulIOp

        def __init__(self) -> None:
            self.armed = False

        def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
            if not self.armed:
                self.armed = True
                rewriter.modify(op)  # comes back after everything pushed before
                return True
            return MulToAdd().match_and_rewrite(op, rewriter)

    module = parse_module(text, "t.mlir")
    record = Record()
    apply_patterns_greedily(module, [record, Late()], NO_FOLD)
    assert record.seen[:6] == ["builtin.func", "m", "m", "new", "s", "builtin.return"]


DEAD = """
kernel @k(%g: !gpu.ptr<f32, global>, %s: !gpu.ptr<f32, shared>, %x: i32) {
  %v = thread.load %g : !gpu.ptr<f32, global> -> f32
  %dead_load = thread.load %s : !gpu.ptr<f32, shared> -> f32
  %a = arith.addi %x, %x : i32
  %b = arith.muli %a, %a : i32
  thread.store %v, %s : f32, !gpu.ptr<f32, shared>
  gpu.barrier
  %tok = thread.cp_async %s, %g {bytes = 16 : i32}
      : !gpu.ptr<f32, shared>, !gpu.ptr<f32, global>
  return
}
"""


def test_dead_code_is_decided_by_traits() -> None:
    module = parse_module(DEAD, "t.mlir")
    assert apply_patterns_greedily(module, [])
    names = [op.name for op in module.body.first_op.body.ops]
    # The unused load and the dead arithmetic chain go (%b first, then %a, its
    # producer, re-queued); the store, the barrier and the cp.async whose token
    # nobody uses stay.
    assert names == [
        "thread.load",
        "thread.store",
        "gpu.barrier",
        "thread.cp_async",
        "builtin.return",
    ]
    assert not apply_patterns_greedily(module, [])


def test_folding_materialises_constants_through_the_hook() -> None:
    text = """
    func @f(%x: i32) -> i32 {
      %one = arith.constant 1 : i32
      %two = arith.addi %one, %one : i32
      %y = arith.muli %x, %one : i32
      %z = arith.addi %y, %two : i32
      return %z : i32
    }
    """
    module = parse_module(text, "t.mlir")
    assert apply_patterns_greedily(module, [], GreedyConfig(materialize=materialize))
    out = print_op(module, print_locations=False)
    assert "%two = arith.constant 2 : i32" in out
    assert "%z = arith.addi %x, %two : i32" in out and "muli" not in out and "%one" not in out
    # Without a materializer a fold that needs a new constant is not applied.
    module = parse_module(text, "t.mlir")
    apply_patterns_greedily(module, [])
    out = print_op(module, print_locations=False)
    assert "%two = arith.addi %one, %one" in out and "muli" not in out


class Tag(RewritePattern):
    """Sets ``{tag = NAME}`` on an untagged op."""

    op_type = arith.AddIOp

    def __init__(self, tag: str, benefit: int, op_type: type[Operation] = arith.AddIOp) -> None:
        self.tag, self.benefit, self.op_type = tag, benefit, op_type  # type: ignore[misc]

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        if "tag" in op.attributes:
            return False
        op.attributes["tag"] = StringAttr(self.tag)
        rewriter.modify(op)
        return True


def test_patterns_are_tried_by_benefit_and_match_subclasses() -> None:
    text = "func @f(%x: i32) -> i32 {\n  %a = arith.addi %x, %x : i32\n  return %a : i32\n}\n"
    module = parse_module(text, "t.mlir")
    low, high = Tag("low", 1), Tag("high", 5)
    apply_patterns_greedily(module, PatternSet([low, high]), NO_FOLD)
    (add, _) = module.body.first_op.body.ops
    assert add.attributes["tag"].value == "high"
    # A pattern on a base class applies to its subclasses (all ops, here).
    module = parse_module(text, "t.mlir")
    apply_patterns_greedily(module, [Tag("any", 1, Operation)], NO_FOLD)
    (add, _) = module.body.first_op.body.ops
    assert add.attributes["tag"].value == "any"


class Swap(RewritePattern):
    """``addi(a, b) → addi(b, a)``, forever."""

    op_type = arith.AddIOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        a, b = op.operands
        op.set_operands([b, a])
        rewriter.modify(op)
        return True


def test_patterns_that_never_settle_hit_the_rewrite_limit() -> None:
    text = """
    func @f(%x: i32, %y: i32) -> i32 {
      %a = arith.addi %x, %y : i32 loc("k.cute":3:7)
      return %a : i32
    }
    """
    module = parse_module(text, "t.mlir")
    with pytest.raises(
        ConvergenceError, match=r"did not converge in 50 rewrites .*'arith.addi' at k.cute:3:7"
    ):
        apply_patterns_greedily(module, [Swap()], GreedyConfig(fold=False, max_rewrites=50))


def test_changes_in_every_sweep_hit_the_iteration_limit() -> None:
    class PassTheToken(RewritePattern):
        """Moves a ``{go}`` attribute to the other addi without telling the driver
        (a misbehaving pattern: every sweep finds something to do)."""

        op_type = arith.AddIOp

        def __init__(self) -> None:
            self.count = 0

        def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
            if "go" not in op.attributes:
                return False
            self.count += 1
            other = next(o for o in op.parent.ops if isinstance(o, arith.AddIOp) and o is not op)
            other.attributes["go"] = op.attributes.pop("go")
            return True

    text = """
    func @f(%x: i32) -> i32 {
      %a = arith.addi %x, %x : i32
      %b = arith.addi %a, %x : i32
      return %b : i32
    }
    """
    module = parse_module(text, "t.mlir")
    module.body.first_op.body.first_op.attributes["go"] = UnitAttr()
    pattern = PassTheToken()
    with pytest.raises(ConvergenceError, match="did not converge in 3 iterations"):
        apply_patterns_greedily(module, [pattern], GreedyConfig(fold=False, max_iterations=3))
    assert pattern.count == 8  # %a then %b, in three sweeps and the one that should confirm


def test_a_crash_in_a_pattern_names_the_op_through_the_context() -> None:
    from cutec.passes.manager import working_on

    class Crash(RewritePattern):
        op_type = arith.MulIOp

        def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
            raise KeyError("boom")

    module = parse_module(CHAIN, "t.mlir")
    with pytest.raises(KeyError) as info:
        apply_patterns_greedily(module, [Crash()], GreedyConfig(context=working_on))
    assert info.value.cutec_op.name == "arith.muli"  # type: ignore[attr-defined]
