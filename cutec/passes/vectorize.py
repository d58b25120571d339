"""vectorize: the widest legal access of each copy, from layouts, alignment and facts.

The pass writes the width the contiguity analysis allows
(`cutec.analysis.contiguity`: contiguous, aligned vectors of at most 128 bits on
both sides) on copies without a named atom (``{vector = 4 : i64}``), and on each
``axpby`` (an epilogue: the same rules on x and y; under a predicate, only a width
whose vectors cannot straddle the end of y). A copy by a named UniversalCopy atom
is checked, never changed: an atom wider than the layouts allow is a located
error naming what is not known. Copies by other named atoms (ldmatrix, cp.async,
TMA) follow their instructions' own rules.
"""

from __future__ import annotations

from dataclasses import dataclass

from cutec.analysis.contiguity import axpby_width, uniform_predicate, vector_width
from cutec.atoms.copy import copy_family
from cutec.atoms.family import Family
from cutec.diagnostics import CompileError
from cutec.ir.attributes import IntegerAttr
from cutec.ir.dialects.builtin import ModuleOp
from cutec.ir.dialects.cute_atom_types import AUTO
from cutec.ir.dialects.cute_compute import AxpbyOp, CopyOp
from cutec.ir.layout_of import LayoutAnalysis
from cutec.ir.types import i64
from cutec.passes.manager import Pass


@dataclass
class Vectorize(Pass):
    """Choose the access width of every copy (see the module docstring)."""

    name = "vectorize"
    summary = "the widest legal access of each copy, from layouts, alignment and facts"
    # It only sets the `vector` attribute of copies and axpbys, which no layout reads.
    preserves = (LayoutAnalysis,)

    def run(self, module: ModuleOp) -> None:
        analyses = self.analyses
        for axpby in module.walk_type(AxpbyOp):
            la = analyses.get(LayoutAnalysis, axpby)
            width = axpby_width(la, axpby.x, axpby.y)
            if axpby.pred is not None and not uniform_predicate(la, axpby.y, width):
                width = 1  # a vector could straddle the end of C
            axpby.attributes["vector"] = IntegerAttr(width, i64)
        for op in module.walk_type(CopyOp):
            if op.atom is not None:
                continue  # a specific instruction (ldmatrix ...): its own rules apply
            la = analyses.get(LayoutAnalysis, op)
            tiled = op.tiled_type()
            if tiled is None or tiled.atom == AUTO:
                op.attributes["vector"] = IntegerAttr(
                    vector_width(la, op.src, op.dst).elements, i64
                )
            elif copy_family(tiled.atom) is Family.UNIVERSAL_COPY:
                _check_named(op, tiled.atom, int(tiled.library().atom.num_val_src), la)


def _check_named(op: CopyOp, atom: str, values: int, la: LayoutAnalysis) -> None:
    """A named atom moving more elements at once than the layouts allow is an error."""
    width = vector_width(la, op.src, op.dst)
    if values > width.elements:
        why = width.limits[-1].split(": ", 1)[-1] if width.limits else ""
        raise CompileError(
            f"{atom} moves {values} elements at once, but this copy allows {width.elements}: {why}",
            op.location,
        )
