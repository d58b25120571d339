"""The `tile` pass: reports the choices of a whole-tensor GEMM's expansion.

``gemm(A, B, C, alpha, beta, tile = (BM, BN, BK), stages = S)`` on global tensors
is expanded into CTA tiles (local_tile by block index), swizzled shared-memory
stages, copies and a pipelined k-loop when the frontend builds it (the fragments'
types depend on the choices; docs/passes.md, *tile*). The choices of the
heuristic (`cutec.heuristics.tile_plan`) are recorded on the TiledMMA's make op as
``tile_plan``; this pass says them as remarks at the user's call and drops the
attribute, so the IR after it is what a hand-written kernel gives.
"""

from __future__ import annotations

from dataclasses import dataclass

from cutec.heuristics.tile_plan import TILE_PLAN_ATTR
from cutec.ir.attributes import ArrayAttr, StringAttr
from cutec.ir.dialects.builtin import KernelOp, ModuleOp
from cutec.ir.dialects.cute import MakeTiledMmaOp
from cutec.passes.manager import Pass, working_on


@dataclass
class Tile(Pass):
    name = "tile"
    summary = "whole-tensor gemm: report the tiling heuristic's choices"

    def run(self, module: ModuleOp) -> None:
        for kernel in module.walk_type(KernelOp):
            for op in kernel.walk():
                if not isinstance(op, MakeTiledMmaOp) or TILE_PLAN_ATTR not in op.attributes:
                    continue
                with working_on(op):
                    reasons = op.attributes.pop(TILE_PLAN_ATTR)
                    assert isinstance(reasons, ArrayAttr)
                    for r in reasons.elements:
                        assert isinstance(r, StringAttr)
                        self.remark(f"tile: {r.value}", op.location)
