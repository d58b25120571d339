"""Copy atoms: the lookup of every copy atom by CuTe's name.

The record is `CopyAtom` (copy_record.py); the tables are copy_universal.py,
copy_sm75.py (ldmatrix), copy_sm80.py (cp.async) and copy_sm90.py (stmatrix,
TMA). This module imports them all and builds the table; the record's names are
re-exported so `from cutec.atoms.copy import CopyAtom` keeps working.
"""

from __future__ import annotations

import functools

from cutec.atoms import copy_sm75, copy_sm80, copy_sm90, copy_universal
from cutec.atoms.copy_record import (
    BASE_TARGET,
    GLOBAL,
    LOCAL,
    REG,
    SHARED,
    SHARED_CLUSTER,
    CopyAtom,
    CopyAtomError,
    Registers,
    braced,
    one_thread_layouts,
)
from cutec.atoms.copy_universal import UNIVERSAL_BITS, UNIVERSAL_SPACES, universal_copy

__all__ = [
    "BASE_TARGET",
    "GLOBAL",
    "LOCAL",
    "REG",
    "SHARED",
    "SHARED_CLUSTER",
    "UNIVERSAL_BITS",
    "UNIVERSAL_SPACES",
    "CopyAtom",
    "CopyAtomError",
    "Registers",
    "braced",
    "copy_atom",
    "copy_atoms",
    "one_thread_layouts",
    "universal_copy",
]

# --- lookup -------------------------------------------------------------------------------------


@functools.cache
def _registry() -> dict[str, CopyAtom]:
    atoms = copy_universal.ATOMS + copy_sm80.ATOMS + copy_sm75.ATOMS + copy_sm90.ATOMS
    table: dict[str, CopyAtom] = {}
    for atom in atoms:
        assert atom.name not in table, f"duplicate copy atom {atom.name}"
        table[atom.name] = atom
    return table


def copy_atoms() -> tuple[CopyAtom, ...]:
    """Every fixed-size copy atom (TMA atoms are made per box size: `copy_atom(..., bits=)`)."""
    return tuple(_registry().values())


def copy_atom(name: str, bits: int | None = None) -> CopyAtom:
    """The copy atom CuTe calls `name`.

    TMA atoms (``SM90_TMA_LOAD_2D``, ``SM90_TMA_STORE_3D``, ...) move a whole
    box, so they need `bits`, CuTe's ``NumBitsPerTMA``.
    """
    tma = copy_sm90.parse_tma_name(name)
    if tma is not None:
        kind, rank = tma
        if bits is None:
            raise CopyAtomError(f"{name} needs bits= (the bits one TMA box moves)")
        return copy_sm90.tma_atom(kind, rank, bits)
    if bits is not None:
        raise CopyAtomError(f"{name} has a fixed width; bits= applies only to TMA atoms")
    table = _registry()
    if name not in table:
        raise CopyAtomError(
            f"unknown copy atom {name!r}; known: {', '.join(table)}, "
            f"SM90_TMA_LOAD_<1..5>D, SM90_TMA_STORE_<1..5>D"
        )
    return table[name]
