"""``auto`` atoms in the IR builder: the MMA and MMA-operand copies chosen at build time.

The atoms are `cutec.heuristics.select`'s choices (docs/passes.md, select-atoms, says
why they are made here and not in the pass): an auto MMA's when its element
types are known, an operand copy's (``tiled_copy_A/B(auto, mma)``) when the
tensor its first partition_S reads is. Each make op carries ``{auto}`` and the
choice's reasons (its ``choice`` field), which select-atoms reports.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from cutec.atoms.copy import copy_atom
from cutec.atoms.mma import mma_atom_named
from cutec.atoms.tiled_copy import (
    make_copy_atom,
    make_tiled_copy_A,
    make_tiled_copy_B,
    make_tiled_copy_C,
)
from cutec.frontend import ast
from cutec.frontend import scope as S
from cutec.frontend.static_eval import algebra_errors, bits_of, error, loc_of
from cutec.heuristics.select import (
    AUTO,
    Choice,
    SelectionError,
    select_mma,
    select_operand_copy,
)
from cutec.ir import types as T
from cutec.ir.attributes import ArrayAttr, StringAttr, UnitAttr
from cutec.ir.dialects import cute as C
from cutec.ir.dialects.cute_atom_types import TiledCopyType
from cutec.ir.dialects.cute_compute import dtype_name
from cutec.ir.dialects.cute_infer import spec_of
from cutec.layout import size
from cutec.target import AddressSpace

if TYPE_CHECKING:
    from cutec.frontend.context import BuildContext


def num_threads(obj: S.TiledCopy | S.TiledMma) -> int:
    if isinstance(obj, S.TiledCopy):
        return int(size(obj.type.layout_tv.with_values(()), 0))
    return int(obj.type.library().num_threads)


def check_threads(
    ctx: BuildContext, obj: S.TiledCopy | S.TiledMma, what: str, node: ast.Node
) -> None:
    """A tiled object needs no more threads than the kernel's block has: thread indices
    past it would own parts of the tile no thread runs (fewer is fine: the others idle,
    or specialise)."""
    block = ctx.num_threads
    have = num_threads(obj)
    if block is not None and have > block:
        raise error(
            f"this {what} has {have} threads but the kernel runs {block} (threads {block}): "
            f"{have - block} threads' parts of each tile would never be touched",
            node,
        )


def select_auto_mma(
    ctx: BuildContext, m: S.TiledMma, d: T.Type, a: T.Type, b: T.Type, c: T.Type, node: ast.Node
) -> S.TiledMma:
    """The auto MMA typed with the atom `select_mma` chooses for these element types.

    The choice is made here, not in select-atoms, because every fragment and
    partition of the MMA depends on its atom; the make op says ``{auto}`` and why,
    which select-atoms reports (docs/passes.md, select-atoms)."""
    where = m.origin if m.origin is not None else node
    names = (dtype_name(d), dtype_name(a), dtype_name(b), dtype_name(c))
    try:
        choice = select_mma(ctx.target, *names, m.type.atom_layout.with_values(()), ctx.num_threads)
    except SelectionError as e:
        raise error(str(e), where) from None
    t = replace(m.type, atom=choice.atom, d_type=d, a_type=a, b_type=b, c_type=c)
    rec = mma_atom_named(choice.atom)
    typed = S.TiledMma(None, t, rec, m.origin)
    with algebra_errors(where, "tiled_mma"):
        t.library()
    check_threads(ctx, typed, "TiledMMA", where)
    op = C.MakeTiledMmaOp(t)
    _record(op, choice)
    ctx.emit_at_entry(op, where)
    return S.TiledMma(op.result, t, rec, m.origin)


def _record(op: C.MakeTiledMmaOp | C.MakeTiledCopyOp, choice: Choice) -> None:
    """Mark `op`'s atom as the compiler's (``{auto}``) and record why, in its declared
    ``choice`` field: the summary, then the better options ruled out."""
    op.attributes["auto"] = UnitAttr()
    reasons = (choice.summary, *choice.ruled_out)
    op.attributes["choice"] = ArrayAttr(tuple(StringAttr(r) for r in reasons))


def operand_copy(
    ctx: BuildContext, tc: S.TiledCopy, name: str | None, t: S.Tensor | None, node: ast.Node
) -> S.TiledCopy:
    """The typed ``tiled_copy_A/B/C(auto, mma)``: its atom is chosen from the tensor its
    first partition_S reads (ldmatrix where the layout allows, else plain loads)."""
    key = tc.origin.span
    which = tc.operand
    assert which is not None and tc.mma is not None
    lib = tc.mma.type.library()
    element = tc.type.element
    bits = bits_of(element)
    found = ctx.operand_copies.get(key)
    if name != "partition_S" or t is None:
        if found is None:
            raise error(
                f"the atom of this auto copy of the MMA's {which} is chosen from the tensor it "
                "reads: partition_S that tensor with it first",
                node,
            )
        return found[0]
    choice = select_operand_copy(
        ctx.target, lib, which, bits, t.layout, t.space is AddressSpace.SHARED
    )
    if found is not None:
        if choice.atom != found[0].type.atom:
            raise error(
                f"this auto copy of the MMA's {which} was chosen as {found[0].type.atom} for "
                f"the tensor of line {found[1].span.line}; this tensor needs {choice.atom} "
                f"({choice.remark()}): make one tiled copy per layout",
                node,
            )
        return found[0]
    if choice.atom == AUTO:
        typed_t, record = tc.type, None
    else:
        record = copy_atom(choice.atom)
        make = {"A": make_tiled_copy_A, "B": make_tiled_copy_B, "C": make_tiled_copy_C}[which]
        with algebra_errors(node, f"tiled_copy_{which}"):
            tiled = make(make_copy_atom(record, bits), lib)
        typed_t = TiledCopyType(
            choice.atom,
            element,
            spec_of(tiled.layout_tv),
            tuple(int(x) for x in tiled.tiler_mn),
        )
    op = C.MakeTiledCopyOp(typed_t, tc.mma.value)
    _record(op, choice)
    op.attributes["operand"] = StringAttr(which)
    op.location = loc_of(tc.origin)
    maker = tc.mma.value.owner  # a named MMA is made where it is written, not at the entry
    assert maker.parent is not None
    maker.parent.insert_after(maker, op)
    typed = S.TiledCopy(op.result, typed_t, record)
    ctx.operand_copies[key] = (typed, node)
    return typed
