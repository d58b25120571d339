"""MMA atoms: the record, one frozen `MmaAtom` per instruction.

An atom computes ``D[m,n] = sum_k A[m,k] * B[n,k] + C[m,n]`` over its Shape_MNK tile,
executed together by ``size(thr_id)`` threads. Its layouts are CuTe's MMA_Traits,
unchanged: ``thr_id`` maps the logical thread id to the lane inside the warp (or
warpgroup), and ``a_layout`` / ``b_layout`` / ``c_layout`` map a (logical thread,
value) pair to the column-major index of the coordinate in the MxK, NxK and MxN
tiles (``m + k*M``, ``n + k*N``, ``m + n*M``). The record's PtxTemplate is the one
description of the instruction text; its operands are the register fragments each
thread passes. The tables (mma_universal / mma_sm70 / mma_sm80 / mma_sm90) import
this module; mma.py gathers them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from cutec.atoms.family import Family, FamilyTraits
from cutec.atoms.ptx_template import Operand, PtxTemplate
from cutec.dtypes import dtype
from cutec.layout import Layout, size
from cutec.target import Target

Major = Literal["K", "MN"]


class UnsupportedMmaError(ValueError):
    """No MMA atom matches the request; the message says what is supported."""


@dataclass(frozen=True)
class MmaAtom:
    """One MMA instruction: D(MxN) = A(MxK) · B(NxK)ᵀ + C(MxN) over size(thr_id) threads."""

    name: str
    family: Family  # the instruction family: what lowering dispatches on (family.py)
    min_target: Target  # the lowest target with the instruction (SM70's m8n8k4: sm_75)
    shape_mnk: tuple[int, int, int]
    d_type: str
    a_type: str
    b_type: str
    c_type: str
    thr_id: Layout  # logical thread id -> lane in the warp / warpgroup
    a_layout: Layout  # (thr, val) -> m + k*M
    b_layout: Layout  # (thr, val) -> n + k*N
    c_layout: Layout  # (thr, val) -> m + n*M
    ptx: PtxTemplate
    a_major: Major = "K"  # only wgmma reads these: they set its transpose immediates
    b_major: Major = "K"
    a_in_smem: bool = False  # wgmma: the operand is a shared-memory descriptor
    b_in_smem: bool = False

    def __post_init__(self) -> None:
        for t in (self.a_type, self.b_type, self.c_type, self.d_type):
            dtype(t)  # raises naming the known element types

    @property
    def traits(self) -> FamilyTraits:
        """What every atom of this atom's family shares (family.py)."""
        return self.family.traits

    @property
    def num_threads(self) -> int:
        """Threads that execute one instruction together (1, 8, 32 or 128)."""
        return int(size(self.thr_id))

    @property
    def ptxas_arch(self) -> str:
        """The `ptxas -arch` to check this atom with (ptxas 13 has no sm_70; wgmma is sm_90a)."""
        return self.min_target.name

    def fragment(self, operand: Literal["a", "b", "c", "d"]) -> Operand:
        """The template operand holding this thread's `operand` registers.

        wgmma accumulates in place, so its C fragment is the D operand.
        """
        names = [op.name for op in self.ptx.operands]
        if operand == "c" and "c" not in names:
            operand = "d"
        return self.ptx.operand(operand)

    def values_per_register(self, operand: Literal["a", "b", "c", "d"]) -> int:
        """Values of one thread's fragment packed into one register (f16x2 -> 2, s8x4 -> 4)."""
        frag = self.fragment(operand)
        layout = {"a": self.a_layout, "b": self.b_layout}.get(operand, self.c_layout)
        values = int(size(layout[1]))
        if values % frag.count:
            raise AssertionError(f"{self.name}: {values} values in {frag.count} registers")
        return values // frag.count

    def supports_target(self, t: Target) -> bool:
        """Whether the instruction exists on `t` (wgmma exists only on sm_90a)."""
        return t.runs(self.min_target)
