"""``cutec atoms``: list the MMA and copy atoms, or show one with its layouts.

cutec atoms                       every atom; wgmma rows grouped over N
cutec atoms --all                 every atom, one row each
cutec atoms show SM80_16x8x16_F32F16F16F32_TN
cutec atoms show SM75_U32x4_LDSM_N --svg ldsm.svg
cutec atoms show SM90_TMA_LOAD_2D --bits 8192
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Iterator

from cutec.atoms.copy import (
    UNIVERSAL_SPACES,
    CopyAtom,
    CopyAtomError,
    box_copy_names,
    copy_atom,
    copy_atoms,
    copy_family,
)
from cutec.atoms.family import Family
from cutec.atoms.mma import MmaAtom, mma_atoms
from cutec.atoms.mma_sm90 import name_over_n
from cutec.atoms.tiled import svg_panels
from cutec.atoms.tiled_mma import mma_atom_text
from cutec.commands.common import write_output
from cutec.layout import Layout, LayoutError, recast_layout, size
from cutec.layout.visual import layout_table

# A per-box atom (TMA) is listed with a box of this many bits: the least it moves.
_LISTED_BOX_BITS = 128


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``atoms`` verb."""
    p = subparsers.add_parser(
        "atoms",
        help="list the MMA and copy atoms, or show one atom's layouts",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("action", nargs="?", choices=("list", "show"), default="list")
    p.add_argument("name", nargs="?", help="the atom to show (CuTe's name)")
    p.add_argument("--all", action="store_true", help="list every wgmma N as its own row")
    p.add_argument("--svg", metavar="FILE", help="draw the atom's TV layouts to FILE")
    p.add_argument("--bits", type=int, help="bits one TMA box moves (TMA atoms only)")
    p.set_defaults(run=run)


# -- listing --------------------------------------------------------------------------


def _arch(atom: MmaAtom) -> str:
    return "any" if atom.traits.portable else atom.min_target.name


def _instruction(atom: MmaAtom | CopyAtom) -> str:
    """The family's instruction, UniversalFMA's own opcode (fma or mad)."""
    if isinstance(atom, MmaAtom) and atom.family is Family.UNIVERSAL_FMA:
        return atom.ptx.text.split(".")[0]
    return atom.traits.instruction


def _mma_kind(atom: MmaAtom) -> str:
    return f"{_instruction(atom)}, {atom.traits.group.value}"


def _mma_rows(grouped: bool) -> Iterator[tuple[str, str, str, str]]:
    families: dict[str, list[MmaAtom]] = {}
    for atom in mma_atoms().values():
        key = name_over_n(atom) if grouped and atom.family is Family.WGMMA else atom.name
        families.setdefault(key, []).append(atom)
    for key, atoms in families.items():
        first = atoms[0]
        shape = "x".join(map(str, first.shape_mnk))
        if len(atoms) > 1:
            ns = [a.shape_mnk[1] for a in atoms]
            step = ns[1] - ns[0]
            m, _, k = first.shape_mnk
            shape = f"{m}xNx{k}, N={ns[0]}..{ns[-1]} step {step} ({len(atoms)} atoms)"
        yield key, _arch(first), shape, _mma_kind(first)


def _spaces(spaces: tuple[str, ...]) -> str:
    return "any" if spaces == UNIVERSAL_SPACES else "|".join(spaces)


def _copy_kind(atom: CopyAtom) -> str:
    spaces = f"{_spaces(atom.src_spaces)}->{_spaces(atom.dst_spaces)}"
    return f"{_instruction(atom)} {spaces}, {atom.traits.group.value}"


def _copy_rows() -> Iterator[tuple[str, str, str, str]]:
    boxes = [copy_atom(name, bits=_LISTED_BOX_BITS) for name in box_copy_names()]
    for atom in (*copy_atoms(), *boxes):
        shape = "a box (--bits)" if atom.traits.per_box else f"{atom.total_bits} bits"
        yield atom.name, atom.target(), shape, _copy_kind(atom)


def _table(rows: list[tuple[str, str, str, str]]) -> str:
    header = ("NAME", "ARCH", "SHAPE", "KIND")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(3)]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(r[:3], widths, strict=True)) + "  " + r[3]
        for r in [header, *rows]
    ]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def list_atoms(show_all: bool = False) -> str:
    """The listing: MMA atoms then copy atoms; wgmma grouped over N unless show_all."""
    mma = list(_mma_rows(grouped=not show_all))
    copies = list(_copy_rows())
    return (
        f"MMA atoms ({len(mma_atoms())})\n{_table(mma)}\n"
        f"Copy atoms ({len(copies)})\n{_table(copies)}"
    )


# -- one atom -------------------------------------------------------------------------


# Larger tables (a 64x256 wgmma accumulator, a TMA box) are unreadable; the text form stays.
MAX_TABLE_CELLS = 4096


def _tables(layouts: list[tuple[str, Layout]]) -> str:
    out = []
    for label, layout in layouts:
        cells = size(layout)
        if isinstance(cells, int) and cells > MAX_TABLE_CELLS:
            out.append(f"{label}: {layout} (table omitted: {cells} cells)\n")
            continue
        try:
            out.append(f"{label}: {layout_table(layout)}")
        except LayoutError as exc:  # not rank 2 or not static: its text form was printed
            out.append(f"{label}: {layout} (no table: {exc})\n")
    return "\n".join(out)


def show_mma(atom: MmaAtom) -> str:
    """CuTe's print(MMA_Atom), the record's other fields, and the TV layout tables."""
    types = f"D={atom.d_type} A={atom.a_type} B={atom.b_type} C={atom.c_type}"
    head = [
        mma_atom_text(atom),
        f"  arch:       {_arch(atom)}",
        f"  types:      {types}",
        f"  ptx:        {atom.ptx.text}",
    ]
    if atom.family is Family.WGMMA:
        a_src = "smem descriptor" if atom.a_in_smem else "registers"
        head.append(f"  majors:     A {atom.a_major}, B {atom.b_major}; A from {a_src}")
    tables = [("LayoutA_TV", atom.a_layout), ("LayoutB_TV", atom.b_layout)]
    tables.append(("LayoutC_TV", atom.c_layout))
    return "\n".join(head) + "\n\n" + _tables(tables)


def show_copy(atom: CopyAtom) -> str:
    """CuTe's Copy_Traits (layouts in bits), the record's other fields, and the tables."""
    head = [
        "Copy_Traits",
        f"  ThrID:     {atom.thr_id}",
        f"  SrcLayout: {atom.src_layout}",
        f"  DstLayout: {atom.dst_layout}",
        f"  RefLayout: {atom.ref_layout}",
        f"  target:    {atom.target()}, PTX {atom.min_ptx[0]}.{atom.min_ptx[1]}",
        f"  spaces:    {'|'.join(atom.src_spaces)} -> {'|'.join(atom.dst_spaces)}",
        f"  registers: src {atom.src_regs or '-'}, dst {atom.dst_regs or '-'}",
    ]
    if atom.async_completion:
        head.append(f"  completes: {atom.async_completion}")
    head += [f"  ptx {role}: {tpl.text}" for role, tpl in atom.templates]
    tables = [("SrcLayout", atom.src_layout), ("DstLayout", atom.dst_layout)]
    return "\n".join(head) + "\n\n" + _tables(tables)


def mma_svg(atom: MmaAtom) -> str:
    """The atom's A (MxK), B (NxK) and C (MxN) tiles labelled by thread and value.

    wgmma operands read through a shared-memory descriptor are left out.
    """
    m, n, k = atom.shape_mnk
    panels = [("A", atom.a_layout, (m, k)), ("B", atom.b_layout, (n, k))]
    # A wgmma operand in shared memory is one descriptor every thread passes: no TV picture.
    smem = {"A": atom.a_in_smem, "B": atom.b_in_smem}
    panels = [p for p in panels if not smem[p[0]]]
    return svg_panels([*panels, ("C", atom.c_layout, (m, n))])


def copy_svg(atom: CopyAtom) -> str:
    """Src and dst of the atom in 16-bit values (8-bit below 16 bits), 8 values a row."""
    bits = 16 if atom.total_bits >= 16 else 8
    total = atom.total_bits // bits
    rows = min(total, 8)
    tile = (rows, total // rows)
    # (thr, value) -> value index, drawn column-major over the tile.
    src = recast_layout(atom.src_layout, 1, bits)
    dst = recast_layout(atom.dst_layout, 1, bits)
    return svg_panels([(f"Src ({bits}b values)", src, tile), (f"Dst ({bits}b values)", dst, tile)])


def _find(name: str, bits: int | None) -> MmaAtom | CopyAtom:
    if name in mma_atoms():
        return mma_atoms()[name]
    family = copy_family(name)
    if family is None:
        names = [*mma_atoms(), *(a.name for a in copy_atoms()), *box_copy_names()]
        close = difflib.get_close_matches(name, names, n=4, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else "; `cutec atoms` lists them"
        raise CopyAtomError(f"no atom named {name!r}{hint}")
    if family.traits.per_box and bits is None:
        raise CopyAtomError(f"{name} moves a whole box: give --bits, the bits one box moves")
    return copy_atom(name, bits=bits)


def run(args: argparse.Namespace) -> int:
    """List the atoms or show one; an unknown atom is ``error: ...`` with exit code 1."""
    try:
        if args.action == "list":
            if args.name or args.svg or args.bits:
                raise CopyAtomError("`cutec atoms` lists; use `cutec atoms show NAME` for one")
            sys.stdout.write(list_atoms(args.all))
            return 0
        if not args.name:
            raise CopyAtomError("`cutec atoms show` needs an atom name")
        atom = _find(args.name, args.bits)
        if isinstance(atom, MmaAtom):
            sys.stdout.write(show_mma(atom))
            svg = mma_svg(atom) if args.svg else ""
        else:
            sys.stdout.write(show_copy(atom))
            svg = copy_svg(atom) if args.svg else ""
        if args.svg:
            write_output(args.svg, svg)  # an unwritable file is a located CompileError
    except (CopyAtomError, LayoutError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0
