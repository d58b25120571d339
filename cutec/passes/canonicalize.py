"""canonicalize: fold constants, apply each op's canonicalization patterns and
remove dead code, to a fixpoint, with the greedy worklist driver
(`cutec.ir.rewrite.apply_patterns_greedily`).

Deletion asks the traits, never op names: an op goes only if its results are
unused and it (with everything nested in it) has no write, no unknown effect,
is not collective and starts no asynchronous work (`is_trivially_dead`). So
stores, barriers, cp.async with an unused token and mbarrier arrives stay.
"""

from __future__ import annotations

from dataclasses import dataclass

from cutec.ir.dialects.builtin import ModuleOp
from cutec.ir.rewrite import GreedyConfig, PatternSet, apply_patterns_greedily
from cutec.passes.manager import Pass, working_on
from cutec.transforms.constants import materialize


@dataclass
class Canonicalize(Pass):
    """Fold, canonicalize and remove dead ops to a fixpoint."""

    name = "canonicalize"
    summary = "fold constants, apply canonicalization patterns, remove dead code"
    max_iterations: int = 10

    def run(self, module: ModuleOp) -> None:
        config = GreedyConfig(
            max_iterations=self.max_iterations, materialize=materialize, context=working_on
        )
        apply_patterns_greedily(module, PatternSet(canonicalization=True), config)
