"""licm: loop-invariant code motion out of ``scf.for``, every loop of the module.

The rewrite and its rules (what moves, how a division that may trap moves, why
an op after the last nested loop stays) are `cutec.transforms.licm`, which
`simplify` applies too.
"""

from __future__ import annotations

from dataclasses import dataclass

from cutec.ir.dialects.builtin import ModuleOp
from cutec.passes.manager import Pass, working_on
from cutec.transforms.licm import hoist_invariants, loops_innermost_first


@dataclass
class LICM(Pass):
    """Hoist pure loop-invariant ops out of scf.for loops."""

    name = "licm"
    summary = "hoist pure loop-invariant ops out of scf.for (never loads, stores, barriers)"

    def run(self, module: ModuleOp) -> None:
        # Inner loops first, so their hoisted ops can leave the outer loop too.
        for loop in loops_innermost_first(module):
            with working_on(loop):
                hoist_invariants(loop)
