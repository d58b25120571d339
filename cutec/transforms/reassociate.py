"""Reassociation: group the loop-invariant terms of index math in ``scf.for`` bodies
(the reassociate pass; simplify's step 3, after licm).

lower-to-thread writes an address as the sum its layout gives, in the order of
the layout's modes, so a k-loop's offset mixes invariant and varying terms:

    %o1 = arith.muli %k, %ld : i32          // %k varies, %ld is invariant
    %o2 = arith.shli %o1, %c3 : i32
    %a = arith.addi %base, %o2 : i32        // %base, %t, %v are invariant
    %b = arith.addi %a, %t : i32
    %c = arith.addi %b, %v : i32

licm cannot hoist any of it: every add has a varying operand. Two rewrites
make the invariant part one value computed before the loop:

* a tree of single-use ``arith.addi`` and ``arith.subi`` in the body whose
  leaves include at least two invariant values and one varying value added
  becomes ``varying-sum + invariant-sum``, the invariant sum built before the
  loop (``%c = arith.addi %o2, %inv`` with ``%inv = (%base + %t) + %v``
  hoisted). A subtracted leaf is a term of sign -1: a swizzled ldmatrix
  address, ``((%stage + c) - %x) - %y``, becomes ``(%stage - %xy) + c`` with
  ``%xy = %x + %y`` hoisted, so the reads of one stage share ``%stage - %xy``.
  Constant leaves stay out of the invariant sum and are added last,
  ``(varying-sum + invariant-sum) + c``: the addresses of a thread's copies
  that differ by a constant then share one sum (CSE) and the constant becomes
  the instruction's address offset (thread.ptr_add's `ConstantOffsetLast`),
  where a hoisted ``%inv + c`` would take a register per copy;
* ``shli (muli x, a), c`` with `a` and `c` invariant, `x` varying and the
  multiply used once, becomes ``muli x, (shli a, c)``, the shift before the
  loop;
* ``cmpi p, (t + c), r`` on `index` values, with `c` a constant, `r` not one
  and `p` signed or (in)equality, becomes ``cmpi p, c, (r - t)`` where two or
  more compares of the body share ``(t, r)``: the residue
  predicates of a thread's copies (``k + c_i < K``, one per row it copies)
  then share ``K - k`` and compare it with constants, where each compared a
  64-bit sum of its own (four instructions a copy in gemm_auto's k-loop, two
  after). Exact because index math is assumed not to overflow (the lowering's
  assumption, docs/passes.md).

All are exact: ``arith.addi``, ``arith.subi`` and ``arith.muli`` wrap, so sums
and products are associative and commutative modulo 2^width, and ``(x * a) << c`` and
``x * (a << c)`` are both ``x * a * 2^c`` modulo 2^width for a shift amount
`c` below the width, the only one whose result is defined. Only integer
scalars are rewritten; loops are visited innermost first.
"""

from __future__ import annotations

from cutec.ir.attributes import IntegerAttr
from cutec.ir.core import BlockArgument, Operation, Value
from cutec.ir.dialects import arith, scf
from cutec.ir.rewrite import constant_value
from cutec.ir.types import IndexType, IntegerType


def _varies_in(value: Value, loop: scf.ForOp) -> bool:
    """True if `value` is defined by `loop` or inside it."""
    if isinstance(value, BlockArgument):
        block_op = value.block.parent_op
        return block_op is not None and loop.is_ancestor_of(block_op)
    return loop.is_ancestor_of(value.owner)  # type: ignore[arg-type]


def _single_use_in(value: Value, op_type: type[Operation], loop: scf.ForOp) -> Operation | None:
    """The op of `op_type` directly in `loop`'s body that defines `value`, if `value` has
    exactly one use."""
    owner = value.owner
    if isinstance(value, BlockArgument) or not isinstance(owner, op_type):
        return None
    if owner.parent is not loop.body or len(value.uses) != 1:
        return None
    return owner


def _hoisted_add(value: Value, loop: scf.ForOp) -> Operation | None:
    """The ``arith.addi`` defining `value` outside `loop` when its add tree there has a
    constant leaf (one use or several: it stays for its other users), else None."""
    owner = value.owner
    if isinstance(value, BlockArgument) or not isinstance(owner, arith.AddIOp):
        return None
    if _varies_in(value, loop) or not _has_constant_leaf(owner):
        return None
    return owner


def _has_constant_leaf(add: Operation) -> bool:
    stack = list(add.operands)
    while stack:
        v = stack.pop()
        if isinstance(constant_value(v), IntegerAttr):
            return True
        if isinstance(v.owner, arith.AddIOp):
            stack.extend(v.owner.operands)
    return False


def _scalar_int(value: Value) -> bool:
    return isinstance(value.type, (IntegerType, IndexType))


def _add_tree(root: Operation, loop: scf.ForOp) -> tuple[list[tuple[Value, int]], list[Operation]]:
    """The signed leaves of the single-use add/sub tree at `root` (left to right; +1 or
    -1 each) and its adds and subs: those in the loop's body, and invariant adds licm
    hoisted (whose constants may then leave the invariant sum)."""
    leaves: list[tuple[Value, int]] = []
    ops: list[Operation] = [root]
    stack = list(reversed(list(zip(root.operands, _signs(root), strict=True))))
    while stack:
        v, sign = stack.pop()
        inner = (
            _single_use_in(v, arith.AddIOp, loop)
            or _single_use_in(v, arith.SubIOp, loop)
            or _hoisted_add(v, loop)
        )
        if inner is None:
            leaves.append((v, sign))
        else:
            ops.append(inner)
            terms = zip(inner.operands, _signs(inner), strict=True)
            stack.extend(reversed([(w, sign * s) for w, s in terms]))
    return leaves, ops


def _signs(op: Operation) -> tuple[int, int]:
    return (1, -1) if isinstance(op, arith.SubIOp) else (1, 1)


def _is_inner_add(op: Operation, loop: scf.ForOp) -> bool:
    """True if `op` is an operand of another add or sub of the tree (so not its root)."""
    uses = op.results[0].uses
    return (
        len(uses) == 1
        and isinstance(uses[0].owner, (arith.AddIOp, arith.SubIOp))
        and (uses[0].owner.parent is loop.body)
    )


def _add(a: Value, b: Value, before: Operation) -> Value:
    add = arith.AddIOp(a, b)
    add.location = before.location
    before.parent.insert_before(before, add)  # type: ignore[union-attr]
    return add.results[0]


def _sum(values: list[Value], before: Operation) -> Value:
    total = values[0]
    for v in values[1:]:
        total = _add(total, v, before)
    return total


def _signed_sum(plus: list[Value], minus: list[Value], before: Operation) -> Value:
    """``sum(plus) - sum(minus)``, built before `before`; `plus` is not empty."""
    total = _sum(plus, before)
    for v in minus:
        sub = arith.SubIOp(total, v)
        sub.location = before.location
        before.parent.insert_before(before, sub)  # type: ignore[union-attr]
        total = sub.results[0]
    return total


def _group_invariant_addends(op: Operation, loop: scf.ForOp) -> bool:
    if _is_inner_add(op, loop) or not _scalar_int(op.results[0]):
        return False
    leaves, ops = _add_tree(op, loop)
    constants = [(v, s) for v, s in leaves if isinstance(constant_value(v), IntegerAttr)]
    rest = [(v, s) for v, s in leaves if not isinstance(constant_value(v), IntegerAttr)]
    invariant = [(v, s) for v, s in rest if not _varies_in(v, loop)]
    varying = [(v, s) for v, s in rest if _varies_in(v, loop)]
    if not any(s > 0 for _, s in varying):
        return False  # (a varying part that is only subtracted is left as it is)
    # Already ``(varying... + inv) + c``, or nothing to group: leave it.
    constant_last = (
        len(constants) == 1 and op.operands[1] is constants[0][0] and isinstance(op, arith.AddIOp)
    )
    if len(invariant) < 2 and (not constants or constant_last):
        return False
    total = _signed_sum([v for v, s in varying if s > 0], [v for v, s in varying if s < 0], op)
    plus, minus = [v for v, s in invariant if s > 0], [v for v, s in invariant if s < 0]
    if plus:  # varying + (plus - minus), the invariant sum before the loop
        total = _add(total, _signed_sum(plus, minus, loop), op)
    elif minus:  # varying - (minus...)
        total = _signed_sum([total], [_sum(minus, loop)], op)
    c = sum(s * constant_value(v).value for v, s in constants)  # type: ignore[union-attr]
    if c:
        const = arith.constant(c, op.results[0].type)
        const.location = op.location
        op.parent.insert_before(op, const)  # type: ignore[union-attr]
        total = _add(total, const.results[0], op)
    op.results[0].replace_all_uses_with(total)
    for inner in ops:  # root first: an op is erased once its users in the tree are
        if not inner.results[0].uses:
            inner.erase()
    return True


def _shift_into_invariant_factor(op: Operation, loop: scf.ForOp) -> bool:
    x_times_a, c = op.operands
    mul = _single_use_in(x_times_a, arith.MulIOp, loop)
    if mul is None or _varies_in(c, loop) or not _scalar_int(op.results[0]):
        return False
    x, a = mul.operands
    if _varies_in(a, loop):
        x, a = a, x
    if _varies_in(a, loop) or not _varies_in(x, loop):
        return False
    shifted = arith.ShLIOp(a, c)
    shifted.location = op.location
    loop.parent.insert_before(loop, shifted)  # type: ignore[union-attr]
    product = arith.MulIOp(x, shifted.results[0])
    product.location = op.location
    op.parent.insert_before(op, product)  # type: ignore[union-attr]
    op.results[0].replace_all_uses_with(product.results[0])
    op.erase()
    mul.erase()
    return True


# Predicates for which ``t + c p r`` and ``c p r - t`` agree when nothing overflows.
_SHIFTABLE = frozenset({"eq", "ne", "slt", "sle", "sgt", "sge"})


def _compare_split(op: Operation) -> tuple[Value, Value, Value] | None:
    """``(t, c, r)`` for a compare ``cmpi p, (t + c), r`` the rewrite applies to."""
    assert isinstance(op, arith.CmpIOp)
    lhs, rhs = op.lhs, op.rhs
    add = lhs.owner
    if not isinstance(lhs.type, IndexType) or op.predicate.value not in _SHIFTABLE:
        return None
    if not isinstance(add, arith.AddIOp) or isinstance(constant_value(rhs), IntegerAttr):
        return None
    t, c = add.operands
    if not isinstance(constant_value(c), IntegerAttr):
        return None
    if isinstance(constant_value(t), IntegerAttr):
        return None
    return t, c, rhs


def _constants_across_compares(loop: scf.ForOp) -> int:
    """Rewrite the compares of `loop`'s body that share their ``(t, r)`` with another
    (alone, ``c < r - t`` costs what ``t + c < r`` did)."""
    groups: dict[tuple[Value, Value], list[tuple[Operation, Value]]] = {}
    for op in loop.body.ops:
        if isinstance(op, arith.CmpIOp) and (split := _compare_split(op)) is not None:
            t, c, r = split
            groups.setdefault((t, r), []).append((op, c))
    changed = 0
    for (t, r), compares in groups.items():
        if len(compares) < 2:
            continue
        first = compares[0][0]
        diff = arith.SubIOp(r, t)
        diff.location = first.location
        first.parent.insert_before(first, diff)  # type: ignore[union-attr]
        for op, c in compares:
            add = op.operands[0].owner
            op.set_operands([c, diff.results[0]])
            if not add.results[0].uses:  # type: ignore[union-attr]
                add.erase()  # type: ignore[union-attr]
            changed += 1
    return changed


def reassociate_loop(loop: scf.ForOp) -> int:
    """Apply the rewrites to the ops directly in `loop`'s body; the number applied."""
    changed = _constants_across_compares(loop)
    for op in list(loop.body.ops):
        if isinstance(op, arith.ShLIOp) and op.parent is not None:
            changed += _shift_into_invariant_factor(op, loop)
    for op in list(loop.body.ops):
        if isinstance(op, (arith.AddIOp, arith.SubIOp)) and op.parent is not None:
            changed += _group_invariant_addends(op, loop)
    return changed
