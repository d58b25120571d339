"""A block's op list: O(1) insertion and erasure, iteration while erasing,
order queries, and use lists that stay right through it all."""

from __future__ import annotations

import pytest

from cutec.ir import types as T
from cutec.ir.builder import Builder
from cutec.ir.core import Block, Operation
from cutec.ir.dialects import arith, builtin, scf
from cutec.ir.printer import print_op
from cutec.ir.verifier import verify


def _constants(block: Block, values: list[int]) -> list[Operation]:
    return [block.append(arith.constant(v, T.i32)) for v in values]


def _values(ops) -> list[int]:
    return [op.attributes["value"].value for op in ops]


def test_append_prepend_insert_before_and_after() -> None:
    block = Block()
    c1, c3 = _constants(block, [1, 3])
    block.insert_after(c1, arith.constant(2, T.i32))
    block.prepend(arith.constant(0, T.i32))
    block.insert_before(c3, arith.constant(22, T.i32))
    block.insert_after(c3, arith.constant(4, T.i32))
    assert _values(block.ops) == [0, 1, 2, 22, 3, 4]
    assert _values(reversed(block.ops)) == [4, 3, 22, 2, 1, 0]
    assert len(block.ops) == 6 and bool(block.ops)
    assert _values([block.first_op, block.last_op]) == [0, 4]
    assert block.ops.first is block.first_op and block.ops.last is block.terminator
    assert c1.next_op is not None and _values([c1.prev_op, c1.next_op]) == [0, 2]


def test_an_op_in_another_block_or_a_foreign_anchor_is_refused() -> None:
    a, b = Block(), Block()
    (c,) = _constants(a, [1])
    with pytest.raises(ValueError, match="already in a block"):
        b.append(c)
    with pytest.raises(ValueError, match="not in this block"):
        b.insert_before(c, arith.constant(2, T.i32))


def test_detach_and_erase_relink_the_neighbours() -> None:
    block = Block()
    c0, c1, c2, c3 = _constants(block, [0, 1, 2, 3])
    c1.erase()
    assert _values(block.ops) == [0, 2, 3] and c1.parent is None and c1.next_op is None
    c0.detach()
    c3.detach()
    assert _values(block.ops) == [2] and block.first_op is c2 is block.last_op
    assert c2.prev_op is None and c2.next_op is None and len(block.ops) == 1
    c2.erase()
    assert not block.ops and len(block.ops) == 0 and block.terminator is None
    block.append(c3)  # a detached op can go back in
    assert _values(block.ops) == [3]


def test_move_before_and_after() -> None:
    block = Block()
    c0, c1, c2 = _constants(block, [0, 1, 2])
    c0.move_after(c2)
    assert _values(block.ops) == [1, 2, 0]
    c0.move_before(c1)
    assert _values(block.ops) == [0, 1, 2]


def test_iterating_while_erasing_the_current_op() -> None:
    block = Block()
    _constants(block, list(range(10)))
    for op in block.ops:
        if op.attributes["value"].value % 2:
            op.erase()
    assert _values(block.ops) == [0, 2, 4, 6, 8]
    for op in reversed(block.ops):
        if op.attributes["value"].value > 3:
            op.erase()
    assert _values(block.ops) == [0, 2]


def test_ops_inserted_ahead_are_visited_those_just_after_the_current_op_are_not() -> None:
    block = Block()
    c0, c1, _ = _constants(block, [0, 1, 2])
    seen = []
    for op in block.ops:
        seen.append(op.attributes["value"].value)
        if op is c0:
            block.insert_after(c0, arith.constant(10, T.i32))  # skipped: right after c0
            block.insert_after(c1, arith.constant(11, T.i32))  # visited
    assert seen == [0, 1, 11, 2]


def test_erasing_the_next_op_during_iteration_is_an_error() -> None:
    block = Block()
    _, c1, _ = _constants(block, [0, 1, 2])
    with pytest.raises(RuntimeError, match="next op was removed"):
        for _op in block.ops:
            c1.detach()


def test_is_before_in_block_survives_many_insertions_at_one_place() -> None:
    block = Block()
    first, _ = _constants(block, [0, 1])
    inserted = [block.insert_after(first, arith.constant(2, T.i32)) for _ in range(100)]
    order = list(block.ops)
    for i, a in enumerate(order):
        for b in order[i + 1 :: 7]:
            assert a.is_before_in_block(b) and not b.is_before_in_block(a)
    assert inserted[-1].is_before_in_block(inserted[0])  # each went right after `first`
    assert not first.is_before_in_block(first)
    other = Block()
    (foreign,) = _constants(other, [5])
    with pytest.raises(ValueError, match="not in one block"):
        first.is_before_in_block(foreign)


def test_use_lists_stay_right_through_replacement_and_erasure() -> None:
    block = Block([T.i32])
    x = block.args[0]
    c = block.append(arith.constant(7, T.i32)).result
    adds = [block.append(arith.AddIOp(c, x if i % 2 else c)) for i in range(6)]
    assert len(c.uses) == 9 and len(x.uses) == 3
    adds[0].erase()  # used c twice
    adds[3].set_operand(0, x)
    assert sorted((adds.index(u.owner), u.index) for u in x.uses) == [
        (1, 1),
        (3, 0),
        (3, 1),
        (5, 1),
    ]
    assert len(c.uses) == 6
    for use in c.uses + x.uses:
        assert use.owner.operands[use.index] is (c if use in c.uses else x)
    c.replace_all_uses_with(x)
    assert not c.uses and len(x.uses) == 10
    assert all(v is x for op in adds[1:] for v in op.operands)


def test_clone_copies_the_op_list_and_remaps_uses() -> None:
    func = builtin.FuncOp("f", [T.index], [])
    b = Builder.at_end(func.body)
    n = func.body.args[0]
    loop = b.insert(scf.ForOp(n, n, n))
    with b.at_end_of(loop.body):
        b.insert(arith.AddIOp(loop.body.args[0], n))
        b.insert(scf.YieldOp())
    b.insert(builtin.ReturnOp())
    module = builtin.ModuleOp([func])
    copy = func.clone()
    assert print_op(copy) == print_op(func)
    new_loop = copy.body.first_op
    assert isinstance(new_loop, scf.ForOp) and new_loop is not loop
    add = new_loop.body.first_op
    assert add.operands == (new_loop.body.args[0], copy.body.args[0])
    assert len(new_loop.body.ops) == 2 and new_loop.body.terminator.parent is new_loop.body
    verify(module)


def test_builder_points_are_ops_not_positions() -> None:
    block = Block()
    (c1,) = _constants(block, [1])
    b = Builder.before(c1)
    b.insert(arith.constant(0, T.i32))
    block.prepend(arith.constant(-1, T.i32))  # does not move b's point
    b.insert(arith.constant(0, T.i32))
    Builder.after(c1).insert(arith.constant(2, T.i32))
    Builder.at_start(block).insert(arith.constant(-2, T.i32))
    assert _values(block.ops) == [-2, -1, 0, 0, 1, 2]
