"""The `tile` pass: reports the choices of a whole-tensor GEMM's expansion.

``gemm(A, B, C, alpha, beta, tile = (BM, BN, BK), stages = S)`` on global tensors
is expanded into CTA tiles (local_tile by block index), swizzled shared-memory
stages, copies and a pipelined k-loop when the frontend builds it (the fragments'
types depend on the choices; docs/passes.md, *tile*). The choices of the
heuristic (`cutec.heuristics.tile_plan`) are recorded in the TiledMMA's make op's
declared ``tile_plan`` field; this pass says them as remarks at the user's call and
drops the field, so the IR after it is what a hand-written kernel gives.
"""

from __future__ import annotations

from dataclasses import dataclass

from cutec.ir.attributes import StringAttr
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
                if not isinstance(op, MakeTiledMmaOp) or op.tile_plan is None:
                    continue
                with working_on(op):
                    reasons = op.tile_plan
                    del op.attributes["tile_plan"]
                    for r in reasons.elements:
                        assert isinstance(r, StringAttr)
                        self.remark(f"tile: {r.value}", op.location)
