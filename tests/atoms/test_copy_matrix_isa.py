"""ldmatrix / stmatrix layouts against the PTX ISA's fragment figures, written out as tables.

The PTX ISA ("Warp-level matrix load instruction: ldmatrix", and stmatrix,
which uses the same fragments) says:

* row addresses: for ``.x1`` lanes 0-7 give rows 0-7 of matrix 0; ``.x2`` adds
  lanes 8-15 for matrix 1; ``.x4`` lanes 16-23 and 24-31 for matrices 2 and 3;
* fragments: register ``i`` of each lane holds two 16-bit elements of matrix
  ``i``; which lane and which half hold element (row, col) of a matrix as it
  lies in memory is the figure below (``t.h`` = lane t, half h; half 0 is the
  low 16 bits of the register).

The tables are typed from the figure, not computed from cutec's layouts; the
test reads each (lane, register, half) back through the atom's layouts.
"""

from __future__ import annotations

import pytest

from cutec.atoms.copy import CopyAtom, copy_atom
from cutec.layout import size

# Memory row r (the row one lane's address points at), column c -> "lane.half".
FRAGMENT_FIGURE = """
0.0  0.1  1.0  1.1  2.0  2.1  3.0  3.1
4.0  4.1  5.0  5.1  6.0  6.1  7.0  7.1
8.0  8.1  9.0  9.1  10.0 10.1 11.0 11.1
12.0 12.1 13.0 13.1 14.0 14.1 15.0 15.1
16.0 16.1 17.0 17.1 18.0 18.1 19.0 19.1
20.0 20.1 21.0 21.1 22.0 22.1 23.0 23.1
24.0 24.1 25.0 25.1 26.0 26.1 27.0 27.1
28.0 28.1 29.0 29.1 30.0 30.1 31.0 31.1
"""

# With .trans the lanes receive the transposed matrix: the same figure applied
# to the matrix's transpose, shown here against the matrix as it lies in memory.
FRAGMENT_FIGURE_TRANS = """
0.0  4.0  8.0  12.0 16.0 20.0 24.0 28.0
0.1  4.1  8.1  12.1 16.1 20.1 24.1 28.1
1.0  5.0  9.0  13.0 17.0 21.0 25.0 29.0
1.1  5.1  9.1  13.1 17.1 21.1 25.1 29.1
2.0  6.0  10.0 14.0 18.0 22.0 26.0 30.0
2.1  6.1  10.1 14.1 18.1 22.1 26.1 30.1
3.0  7.0  11.0 15.0 19.0 23.0 27.0 31.0
3.1  7.1  11.1 15.1 19.1 23.1 27.1 31.1
"""

# .num -> lanes whose addresses are read; lane l addresses row l % 8 of matrix l // 8.
ADDRESS_LANES = {1: range(0, 8), 2: range(0, 16), 4: range(0, 32)}


def _figure(text: str) -> dict[tuple[int, int], tuple[int, int]]:
    """(lane, half) -> (row, col) of one 8x8 matrix."""
    owner: dict[tuple[int, int], tuple[int, int]] = {}
    for r, line in enumerate(text.strip().splitlines()):
        for c, cell in enumerate(line.split()):
            lane, half = cell.split(".")
            owner[(int(lane), int(half))] = (r, c)
    assert len(owner) == 64
    return owner


def _row_owner(atom: CopyAtom, mem_side: str) -> dict[int, tuple[int, int]]:
    """bit -> (address lane, bit within its 128-bit row) from the memory-side layout."""
    layout = getattr(atom, mem_side)
    owner: dict[int, tuple[int, int]] = {}
    for lane in range(32):
        for k in range(128):
            owner.setdefault(layout(lane, k), (lane, k))  # first lane wins (broadcast lanes repeat)
    return owner


CASES = [
    (op, num, trans) for op in ("LDSM", "STSM") for trans in (False, True) for num in (1, 2, 4)
]


def _name(op: str, num: int, trans: bool) -> str:
    arch = "SM75" if op == "LDSM" else "SM90"
    return f"{arch}_U16x{2 * num}_{op}_T" if trans else f"{arch}_U32x{num}_{op}_N"


@pytest.mark.parametrize(("op", "num", "trans"), CASES, ids=[_name(*c) for c in CASES])
def test_fragments_match_the_isa_figure(op: str, num: int, trans: bool) -> None:
    atom = copy_atom(_name(op, num, trans))
    reg_side, mem_side = (
        ("dst_layout", "src_layout") if op == "LDSM" else ("src_layout", "dst_layout")
    )
    frag = getattr(atom, reg_side)
    assert size(frag, 1) == 32 * num  # num 32-bit registers per lane
    figure = _figure(FRAGMENT_FIGURE_TRANS if trans else FRAGMENT_FIGURE)
    rows = _row_owner(atom, mem_side)
    for lane in range(32):
        for reg in range(num):
            for half in range(2):
                value = 32 * reg + 16 * half  # first bit of this element in the lane's registers
                bit = frag(lane, value)
                # the element's 16 bits are contiguous in the block
                assert [frag(lane, value + k) for k in range(16)] == list(range(bit, bit + 16))
                addr_lane, k = rows[bit]
                assert addr_lane in ADDRESS_LANES[num]
                matrix, row, col = addr_lane // 8, addr_lane % 8, k // 16
                assert matrix == reg
                assert figure[(lane, half)] == (row, col)


@pytest.mark.parametrize("num", [1, 2, 4])
def test_only_the_isa_address_lanes_are_read(num: int) -> None:
    atom = copy_atom(_name("LDSM", num, False))
    read = {lane for lane in range(32) if atom.src_layout(lane, 0) == 128 * lane}
    assert read == set(ADDRESS_LANES[num])
