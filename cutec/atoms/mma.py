"""MMA atoms: one frozen record per instruction, and lookup by name or by what it computes.

An atom computes ``D[m,n] = sum_k A[m,k] * B[n,k] + C[m,n]`` over its Shape_MNK tile,
executed together by ``size(thr_id)`` threads. Its layouts are CuTe's MMA_Traits,
unchanged: ``thr_id`` maps the logical thread id to the lane inside the warp (or
warpgroup), and ``a_layout`` / ``b_layout`` / ``c_layout`` map a (logical thread,
value) pair to the column-major index of the coordinate in the MxK, NxK and MxN
tiles (``m + k*M``, ``n + k*N``, ``m + n*M``). The record's PtxTemplate is the one
description of the instruction text; its operands are the register fragments each
thread passes. The tables live in mma_universal / mma_sm70 / mma_sm80 / mma_sm90.
"""

from __future__ import annotations

import difflib
import functools
from dataclasses import dataclass
from typing import Literal

from cutec.atoms.ptx_template import Operand, PtxTemplate
from cutec.layout import Layout, size

Major = Literal["K", "MN"]

# Bits per element of each dtype an atom may take (tf32 is stored in 32 bits).
DTYPE_BITS: dict[str, int] = {
    "f16": 16,
    "bf16": 16,
    "tf32": 32,
    "f32": 32,
    "f64": 64,
    "s8": 8,
    "s32": 32,
    "e4m3": 8,
    "e5m2": 8,
}


class UnsupportedMmaError(ValueError):
    """No MMA atom matches the request; the message says what is supported."""


@dataclass(frozen=True)
class MmaAtom:
    """One MMA instruction: D(MxN) = A(MxK) · B(NxK)ᵀ + C(MxN) over size(thr_id) threads."""

    name: str
    arch: int  # first SM with the instruction, as in CuTe's name (70, 80, 90); 0: any
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
            if t not in DTYPE_BITS:
                raise ValueError(f"{self.name}: unknown dtype {t!r}")

    @property
    def num_threads(self) -> int:
        """Threads that execute one instruction together (1, 8, 32 or 128)."""
        return int(size(self.thr_id))

    @property
    def ptxas_arch(self) -> str:
        """The `ptxas -arch` to check this atom with (ptxas 13 has no sm_70; wgmma is sm_90a)."""
        return {0: "sm_80", 70: "sm_75", 80: "sm_80", 90: "sm_90a"}[self.arch]

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

    def supports_target(self, sm: int) -> bool:
        """Whether the instruction exists on sm_<sm> (wgmma exists only on sm_90a)."""
        return sm == 90 if self.arch == 90 else sm >= self.arch


def _family_tables() -> tuple[MmaAtom, ...]:
    from cutec.atoms import mma_sm70, mma_sm80, mma_sm90, mma_universal

    return mma_universal.ATOMS + mma_sm70.ATOMS + mma_sm80.ATOMS + mma_sm90.atoms()


@functools.cache
def mma_atoms() -> dict[str, MmaAtom]:
    """Every MMA atom by name, in table order."""
    table: dict[str, MmaAtom] = {}
    for atom in _family_tables():
        if atom.name in table:
            raise AssertionError(f"duplicate MMA atom {atom.name}")
        table[atom.name] = atom
    return table


def _describe(atoms: list[MmaAtom]) -> str:
    combos = sorted({f"{a.d_type}<-{a.a_type}*{a.b_type}+{a.c_type} on sm_{a.arch}" for a in atoms})
    return "; ".join(combos)


def find_mma_atoms(
    *,
    arch: int | None = None,
    shape_mnk: tuple[int, int, int] | None = None,
    a_type: str | None = None,
    b_type: str | None = None,
    c_type: str | None = None,
    d_type: str | None = None,
) -> list[MmaAtom]:
    """All atoms that run on sm_<arch> and match every constraint given."""
    found = []
    for atom in mma_atoms().values():
        if arch is not None and not atom.supports_target(arch):
            continue
        if shape_mnk is not None and atom.shape_mnk != tuple(shape_mnk):
            continue
        wanted = (a_type, b_type, c_type, d_type)
        have = (atom.a_type, atom.b_type, atom.c_type, atom.d_type)
        if any(w is not None and w != h for w, h in zip(wanted, have, strict=True)):
            continue
        found.append(atom)
    return found


def lookup_mma_atom(
    name: str | None = None,
    *,
    arch: int | None = None,
    shape_mnk: tuple[int, int, int] | None = None,
    a_type: str | None = None,
    b_type: str | None = None,
    c_type: str | None = None,
    d_type: str | None = None,
) -> MmaAtom:
    """The one atom called `name` (checked against `arch`), or the one atom matching the rest.

    Raises UnsupportedMmaError naming what is supported when nothing, or more
    than one atom, matches.
    """
    if name is not None:
        atom = mma_atoms().get(name)
        if atom is None:
            close = difflib.get_close_matches(name, list(mma_atoms()), n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            families = "UniversalFMA_*, SM70_8x8x4_*, SM80_*, SM90_64xNxK_*"
            raise UnsupportedMmaError(f"no MMA atom named {name!r} (atoms: {families}){hint}")
        if arch is not None and not atom.supports_target(arch):
            need = "sm_90a" if atom.arch == 90 else f"sm_{atom.arch} or newer"
            raise UnsupportedMmaError(f"MMA atom {name} needs {need}, target is sm_{arch}")
        return atom
    found = find_mma_atoms(
        arch=arch, shape_mnk=shape_mnk, a_type=a_type, b_type=b_type, c_type=c_type, d_type=d_type
    )
    request = ", ".join(
        f"{k}={v}"
        for k, v in (
            ("arch", arch),
            ("shape_mnk", shape_mnk),
            ("a", a_type),
            ("b", b_type),
            ("c", c_type),
            ("d", d_type),
        )
        if v is not None
    )
    if not found:
        on_arch = find_mma_atoms(arch=arch)
        same_types = find_mma_atoms(
            arch=arch, a_type=a_type, b_type=b_type, c_type=c_type, d_type=d_type
        )
        if same_types:
            shapes = sorted({"x".join(map(str, a.shape_mnk)) for a in same_types})
            raise UnsupportedMmaError(
                f"no MMA atom for {request}: these types come in shapes {', '.join(shapes)}"
            )
        raise UnsupportedMmaError(f"no MMA atom for {request}; supported: {_describe(on_arch)}")
    if len(found) > 1:
        names = ", ".join(a.name for a in found[:8]) + (" ..." if len(found) > 8 else "")
        raise UnsupportedMmaError(f"{len(found)} MMA atoms match {request}: {names}")
    return found[0]
