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
from cutec.atoms.family import Family

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
    "box_copy_names",
    "braced",
    "copy_atom",
    "copy_atoms",
    "copy_family",
    "is_copy_template",
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


def box_copy_names() -> tuple[str, ...]:
    """The names of the atoms made per box size (`copy_atom(name, bits=...)`): TMA's."""
    return tuple(copy_sm90.TMA_FAMILIES)


def copy_family(name: str) -> Family | None:
    """The family of the copy atom CuTe calls `name` (a TMA atom's without its box
    size), or None for a name that is no copy atom."""
    atom = _registry().get(name)
    return atom.family if atom is not None else copy_sm90.TMA_FAMILIES.get(name)


@functools.cache
def _templates() -> frozenset[str]:
    return frozenset(a.name.partition("<")[0] for a in copy_atoms() if "<" in a.name)


def is_copy_template(name: str) -> bool:
    """Whether `name` is CuTe's copy op templated on its value type (``UniversalCopy``,
    ``SM80_CP_ASYNC_CACHEALWAYS`` ...), whose atoms are ``name<uint<bits>_t>``."""
    return name in _templates()
