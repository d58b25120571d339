"""carry-vectors: a loop carries a vector, not its elements one by one.

promote-registers gives every element of a register fragment its own SSA
value, so a loop that refills a fragment from an ldmatrix or mma.sync result
carries the result's elements as separate iter_args, and its body packs them
again for the next tensor-core instruction::

    %r:4 = scf.for ... iter_args(%a0 = .., %a1 = .., ...) {
      %v = thread.from_elements %a0, %a1 : vector<2xf16>
      ... thread.atom "SM80_16x8x16_F32F16F16F32_TN"(%v, ...) ...
      %w:4 = thread.atom "SM75_U32x4_LDSM_N"(...)
      %e0 = thread.extract %w#0 {pos = 0} : vector<2xf16>
      %e1 = thread.extract %w#0 {pos = 1} : vector<2xf16>
      scf.yield %e0, %e1, ...
    }

When the yielded values of some iter_args are all the elements of one vector,
in order, and the body builds that vector back from the arguments, the loop
carries the vector instead: its init is ``from_elements`` of the old inits,
the body and the code after the loop ``extract`` the elements they read, and
the canonicalizer folds ``from_elements(extract(v, 0), extract(v, 1))`` to
``v``. The PTX then carries each fragment register as the one b32 register
that ldmatrix wrote and mma.sync reads (emitter.py, *packed pairs*) instead of
two 16-bit halves that ptxas copies and re-pairs at the back edge (24 PRMTs per
k-tile of gemm_auto's 128x256x64 f32-accumulation kernel).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cutec.ir.core import Block, OpResult, Value
from cutec.ir.dialects import scf, thread
from cutec.ir.dialects.builtin import ModuleOp
from cutec.ir.types import VectorType
from cutec.passes.manager import Pass, working_on


@dataclass
class CarryVectors(Pass):
    """Carry whole vectors through scf.for loops (see the module docstring)."""

    name = "carry-vectors"
    summary = "scf.for carries a vector instead of its elements where the body rebuilds it"

    def run(self, module: ModuleOp) -> None:
        loops = [op for op in module.walk() if isinstance(op, scf.ForOp | scf.WhileOp)]
        for loop in reversed(loops):  # inner loops first: their results feed the outer yields
            with working_on(loop):
                if isinstance(loop, scf.WhileOp):
                    pairs = _while_groups(loop)
                    if pairs:
                        _rewrite_while(loop, pairs)
                    continue
                groups = _groups(loop)
                if groups:
                    _rewrite(loop, groups)


def _groups(loop: scf.ForOp) -> list[list[int]]:
    """Iter_arg positions, one list per vector: position k of a list is yielded as
    element k of that vector, and the body rebuilds the vector from the list's arguments
    with ``from_elements`` somewhere."""
    term = loop.body.terminator
    assert term is not None
    slots: dict[Value, dict[int, int]] = {}  # vector -> {element position: iter_arg}
    for i, y in enumerate(term.operands):
        owner = y.op if isinstance(y, OpResult) else None
        if isinstance(owner, thread.ExtractOp):
            slots.setdefault(owner.vector, {}).setdefault(owner.pos.value, i)
    args = loop.body.args[1:]
    groups = []
    for vector, at in slots.items():
        t = vector.type
        assert isinstance(t, VectorType)
        if sorted(at) != list(range(t.shape[0])):
            continue
        group = [at[k] for k in range(t.shape[0])]
        if len(set(group)) == len(group) and _rebuilt(group, args):
            groups.append(group)
    return groups


def _rebuilt(group: list[int], args: list[Value]) -> bool:
    """Whether some ``from_elements`` takes exactly the group's arguments, in order."""
    elements = [args[i] for i in group]
    return any(
        isinstance(use.owner, thread.FromElementsOp) and list(use.owner.elements) == elements
        for use in elements[0].uses
    )


def _rewrite(loop: scf.ForOp, groups: list[list[int]]) -> None:
    term = loop.body.terminator
    assert term is not None
    carried = loop.body.args[1:]
    grouped = {i: g for g in groups for i in g}
    # The new iter_args: each group in place of its first member, the rest as they were.
    plan: list[int | list[int]] = []
    for i in range(len(carried)):
        g = grouped.get(i)
        if g is None:
            plan.append(i)
        elif g[0] == i:
            plan.append(g)
    block = loop.parent
    assert block is not None
    inits: list[Value] = []
    for p in plan:
        if isinstance(p, int):
            inits.append(loop.inits[p])
        else:
            pack = thread.FromElementsOp([loop.inits[i] for i in p])
            pack.location = loop.location
            block.insert_before(loop, pack)
            inits.append(pack.result)
    new = scf.ForOp(loop.lb, loop.ub, loop.step, inits, dict(loop.attributes))
    new.location = loop.location
    block.insert_before(loop, new)
    body = loop.body
    new.induction_var.name_hint = body.args[0].name_hint
    body.args[0].replace_all_uses_with(new.induction_var)
    for op in list(body.ops):
        op.detach()
        new.body.append(op)
    # Old arguments and results: the new ones, or an element of the new vector.
    after = new
    for j, p in enumerate(plan):
        arg, result = new.body.args[1 + j], new.results[j]
        if isinstance(p, int):
            arg.name_hint = carried[p].name_hint
            carried[p].replace_all_uses_with(arg)
            loop.results[p].replace_all_uses_with(result)
            continue
        for k, i in enumerate(p):
            inside = thread.ExtractOp(arg, k)
            inside.location = loop.location
            new.body.prepend(inside)
            carried[i].replace_all_uses_with(inside.result)
            outside = thread.ExtractOp(result, k)
            outside.location = loop.location
            block.insert_after(after, outside)
            after = outside
            loop.results[i].replace_all_uses_with(outside.result)
    # The yield, read after the replacements (it may pass an argument straight on).
    yields: list[Value] = []
    for p in plan:
        if isinstance(p, int):
            yields.append(term.operands[p])
        else:
            owner = term.operands[p[0]].op  # type: ignore[union-attr]
            assert isinstance(owner, thread.ExtractOp)
            yields.append(owner.vector)
    term.set_operands(yields)
    loop.erase()


# --------------------------------------------------------------------------- scf.while
# A while loop carries a value through two blocks: `before`'s argument i, forwarded by
# its condition to `after`'s argument j (and result j), then yielded back as argument i.
# A group is a vector's elements on both sides: yield positions is (element k yielded
# at is[k]) whose before arguments the condition forwards, unchanged, at positions js.


def _while_groups(loop: scf.WhileOp) -> list[tuple[list[int], list[int]]]:
    """(before positions, after positions) per vector (see above), where the after block
    rebuilds the vector from its arguments with ``from_elements``."""
    term = loop.after.terminator
    condition = loop.before.terminator
    assert term is not None and isinstance(condition, scf.ConditionOp)
    forwarded = {v: j for j, v in enumerate(condition.values)}
    slots: dict[Value, dict[int, int]] = {}
    for i, y in enumerate(term.operands):
        owner = y.op if isinstance(y, OpResult) else None
        if isinstance(owner, thread.ExtractOp):
            slots.setdefault(owner.vector, {}).setdefault(owner.pos.value, i)
    pairs = []
    for vector, at in slots.items():
        t = vector.type
        assert isinstance(t, VectorType)
        if sorted(at) != list(range(t.shape[0])):
            continue
        group = [at[k] for k in range(t.shape[0])]
        js = [forwarded.get(loop.before.args[i]) for i in group]
        if len(set(group)) != len(group) or any(j is None for j in js):
            continue
        after_js = [j for j in js if j is not None]
        if len(set(after_js)) == len(after_js) and _rebuilt(after_js, list(loop.after.args)):
            pairs.append((group, after_js))
    return pairs


def _rewrite_while(loop: scf.WhileOp, pairs: list[tuple[list[int], list[int]]]) -> None:
    condition = loop.before.terminator
    term = loop.after.terminator
    assert isinstance(condition, scf.ConditionOp) and term is not None
    plan_i = _plan(len(loop.inits), [g for g, _ in pairs])
    plan_j = _plan(len(loop.results), [js for _, js in pairs])
    block = loop.parent
    assert block is not None
    inits: list[Value] = []
    for p in plan_i:
        if isinstance(p, int):
            inits.append(loop.inits[p])
        else:
            pack = thread.FromElementsOp([loop.inits[i] for i in p])
            pack.location = loop.location
            block.insert_before(loop, pack)
            inits.append(pack.result)
    types = [loop.results[p].type if isinstance(p, int) else _vector_of(loop, p) for p in plan_j]
    new = scf.WhileOp(inits, types)
    new.location = loop.location
    new.attributes.update(loop.attributes)
    block.insert_before(loop, new)
    # The old arguments: the new ones, or an element of the new vector argument.
    _move_args(loop.before, new.before, plan_i, loop.location)
    _move_args(loop.after, new.after, plan_j, loop.location)
    # The condition forwards, and the yield passes back, a group's vector once.
    condition.set_operands([condition.cond, *_packed(plan_j, condition.values)])
    term.set_operands(_packed(plan_i, term.operands))
    after = new
    for j, p in enumerate(plan_j):
        result = new.results[j]
        if isinstance(p, int):
            loop.results[p].replace_all_uses_with(result)
            continue
        for k, old in enumerate(p):
            outside = thread.ExtractOp(result, k)
            outside.location = loop.location
            block.insert_after(after, outside)
            after = outside
            loop.results[old].replace_all_uses_with(outside.result)
    loop.erase()


def _plan(n: int, groups: list[list[int]]) -> list[int | list[int]]:
    """Positions 0..n-1 with each group in place of its first member."""
    grouped = {i: g for g in groups for i in g}
    return [grouped.get(i, i) for i in range(n) if grouped.get(i, [i])[0] == i]


def _vector_of(loop: scf.WhileOp, group: list[int]) -> VectorType:
    element = loop.results[group[0]].type
    return VectorType((len(group),), element)


def _move_args(old: Block, new: Block, plan: list[int | list[int]], location: Any) -> None:
    """`old`'s ops into `new`, whose arguments follow `plan`: a group's elements are
    extracts of its vector argument, made at the top of the block."""
    extracts: list[thread.ExtractOp] = []
    for j, p in enumerate(plan):
        arg = new.args[j]
        if isinstance(p, int):
            arg.name_hint = old.args[p].name_hint
            old.args[p].replace_all_uses_with(arg)
            continue
        for k, i in enumerate(p):
            inside = thread.ExtractOp(arg, k)
            inside.location = location
            extracts.append(inside)
            old.args[i].replace_all_uses_with(inside.result)
    for op in list(old.ops):
        op.detach()
        new.append(op)
    for inside in reversed(extracts):
        new.prepend(inside)


def _packed(plan: list[int | list[int]], values: Any) -> list[Value]:
    """`values` by `plan`, a group's elements as the vector they are extracted from (a
    yield's vector, or the before block's vector argument that its condition forwards)."""
    out: list[Value] = []
    values = list(values)
    for p in plan:
        if isinstance(p, int):
            out.append(values[p])
            continue
        first = values[p[0]]
        assert isinstance(first, OpResult) and isinstance(first.op, thread.ExtractOp)
        vector = first.op.vector
        assert all(_element(values[i], vector, k) for k, i in enumerate(p)), p
        out.append(vector)
    return out


def _element(value: Value, vector: Value, k: int) -> bool:
    """Whether `value` is element `k` of `vector`."""
    owner = value.op if isinstance(value, OpResult) else None
    return isinstance(owner, thread.ExtractOp) and owner.vector is vector and owner.pos.value == k
