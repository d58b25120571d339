"""reassociate: group the loop-invariant terms of index math in ``scf.for`` bodies.

The rewrites and why they are exact are `cutec.transforms.reassociate`, which
`simplify` applies too, loop by loop after licm.
"""

from __future__ import annotations

from dataclasses import dataclass

from cutec.ir.dialects.builtin import ModuleOp
from cutec.passes.manager import Pass, working_on
from cutec.transforms.licm import loops_innermost_first
from cutec.transforms.reassociate import reassociate_loop


@dataclass
class Reassociate(Pass):
    """Group loop-invariant addends and factors of integer math in scf.for bodies."""

    name = "reassociate"
    summary = "group loop-invariant terms of integer adds and shifted products before the loop"

    def run(self, module: ModuleOp) -> None:
        # Inner loops first: an inner loop's invariant sum lands in the outer body.
        for loop in loops_innermost_first(module):
            with working_on(loop):
                reassociate_loop(loop)
