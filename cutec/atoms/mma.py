"""MMA atoms: lookup by name or by what an atom computes.

The record is `MmaAtom` (mma_record.py); the tables are mma_universal, mma_sm70,
mma_sm80 and mma_sm90. This module imports them all and builds the table; the
record's names are re-exported so `from cutec.atoms.mma import MmaAtom` keeps working.
"""

from __future__ import annotations

import difflib
import functools

from cutec.atoms import mma_sm70, mma_sm80, mma_sm90, mma_universal
from cutec.atoms.mma_record import Major, MmaAtom, UnsupportedMmaError
from cutec.target import target as lookup_target

__all__ = [
    "Major",
    "MmaAtom",
    "UnsupportedMmaError",
    "find_mma_atoms",
    "lookup_mma_atom",
    "mma_atom_named",
    "mma_atoms",
]


def _family_tables() -> tuple[MmaAtom, ...]:
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


@functools.cache
def _named_without_wgmma() -> dict[str, MmaAtom]:
    return {a.name: a for a in mma_universal.ATOMS + mma_sm70.ATOMS + mma_sm80.ATOMS}


@functools.cache
def _named_wgmma() -> dict[str, MmaAtom]:
    return {a.name: a for a in mma_sm90.atoms()}


def mma_atom_named(name: str) -> MmaAtom | None:
    """The MMA atom called `name`, or None. Unlike ``mma_atoms()[name]`` it builds the
    1,152 generated wgmma atoms only for an ``SM90_`` name (compile start-up time)."""
    table = _named_wgmma() if name.startswith("SM90_") else _named_without_wgmma()
    return table.get(name)


def _describe(atoms: list[MmaAtom]) -> str:
    combos = sorted(
        {f"{a.d_type}<-{a.a_type}*{a.b_type}+{a.c_type} on {a.min_target}" for a in atoms}
    )
    return "; ".join(combos)


def find_mma_atoms(
    *,
    target: str | None = None,
    shape_mnk: tuple[int, int, int] | None = None,
    a_type: str | None = None,
    b_type: str | None = None,
    c_type: str | None = None,
    d_type: str | None = None,
) -> list[MmaAtom]:
    """All atoms that run on `target` (sm_80, sm_90a ...) and match every constraint given."""
    on = None if target is None else lookup_target(target)
    found = []
    for atom in mma_atoms().values():
        if on is not None and not atom.supports_target(on):
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
    target: str | None = None,
    shape_mnk: tuple[int, int, int] | None = None,
    a_type: str | None = None,
    b_type: str | None = None,
    c_type: str | None = None,
    d_type: str | None = None,
) -> MmaAtom:
    """The one atom called `name` (checked against `target`), or the one atom matching the rest.

    Raises UnsupportedMmaError naming what is supported when nothing, or more
    than one atom, matches.
    """
    if name is not None:
        atom = mma_atom_named(name)
        if atom is None:
            close = difflib.get_close_matches(name, list(mma_atoms()), n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            families = "UniversalFMA_*, SM70_8x8x4_*, SM80_*, SM90_64xNxK_*"
            raise UnsupportedMmaError(f"no MMA atom named {name!r} (atoms: {families}){hint}")
        if target is not None and not atom.supports_target(lookup_target(target)):
            low = atom.min_target
            need = low.name if low.arch_specific else f"{low} or newer"
            raise UnsupportedMmaError(f"MMA atom {name} needs {need}, target is {target}")
        return atom
    found = find_mma_atoms(
        target=target,
        shape_mnk=shape_mnk,
        a_type=a_type,
        b_type=b_type,
        c_type=c_type,
        d_type=d_type,
    )
    request = ", ".join(
        f"{k}={v}"
        for k, v in (
            ("target", target),
            ("shape_mnk", shape_mnk),
            ("a", a_type),
            ("b", b_type),
            ("c", c_type),
            ("d", d_type),
        )
        if v is not None
    )
    if not found:
        on_arch = find_mma_atoms(target=target)
        same_types = find_mma_atoms(
            target=target, a_type=a_type, b_type=b_type, c_type=c_type, d_type=d_type
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
