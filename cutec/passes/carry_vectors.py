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

from cutec.ir.core import OpResult, Value
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
        loops = [op for op in module.walk() if isinstance(op, scf.ForOp)]
        for loop in reversed(loops):  # inner loops first: their results feed the outer yields
            with working_on(loop):
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
