"""MMA atom layouts: exact CuTe traits, bijective TV maps, and the seed's worked examples."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cutec.atoms.emulate import mma_tables, tile_shape
from cutec.atoms.mma import MmaAtom, lookup_mma_atom, mma_atoms
from cutec.layout import size

REFERENCE = Path(__file__).parent / "data" / "mma_reference.txt"
ATOMS = list(mma_atoms().values())


def _reference() -> dict[str, list[str]]:
    rows = {}
    for line in REFERENCE.read_text().splitlines():
        if line and not line.startswith("#"):
            name, *fields = line.split("|")
            rows[name] = fields
    return rows


def test_atom_names_match_reference() -> None:
    assert set(mma_atoms()) == set(_reference())
    assert len(ATOMS) == 1174


def test_every_atom_prints_as_cute_traits() -> None:
    ref = _reference()
    mismatches = []
    for atom in ATOMS:
        shape = "(" + ",".join(f"_{x}" for x in atom.shape_mnk) + ")"
        mine = [shape, str(atom.thr_id), str(atom.a_layout), str(atom.b_layout), str(atom.c_layout)]
        if mine != ref[atom.name]:
            mismatches.append((atom.name, mine, ref[atom.name]))
    assert mismatches == []


def _check_tv_bijection(atom: MmaAtom, operand: str) -> None:
    rows, cols = tile_shape(atom, operand)
    table = mma_tables(atom).table(operand)
    layout = {"a": atom.a_layout, "b": atom.b_layout, "c": atom.c_layout}[operand]
    assert table.shape == (atom.num_threads, int(size(layout[1])))
    if all(d == 0 for d in np.ravel(layout.stride[0])):
        # Stride-0 threads (wgmma smem operands): every thread names the whole tile, so
        # the value mode alone must be a bijection onto it.
        assert (table == table[0]).all()
        assert sorted(table[0].tolist()) == list(range(rows * cols))
    else:
        assert sorted(table.ravel().tolist()) == list(range(rows * cols))


@pytest.mark.parametrize("operand", ["a", "b", "c"])
def test_tv_layouts_cover_tiles_exactly(operand: str) -> None:
    for atom in ATOMS:
        _check_tv_bijection(atom, operand)


def test_thread_ids_are_distinct_lanes() -> None:
    for atom in ATOMS:
        lanes = [atom.thr_id(t) for t in range(atom.num_threads)]
        assert len(set(lanes)) == len(lanes), atom.name


def test_seed_volta_8x8x4_layouts() -> None:
    nt = lookup_mma_atom("SM70_8x8x4_F32F16F16F32_NT")
    tn = lookup_mma_atom("SM70_8x8x4_F32F16F16F32_TN")
    assert str(nt.thr_id) == "(_4,_2):(_1,_16)"
    assert str(nt.c_layout) == "((_2,_2,_2),(_2,_2,_2)):((_1,_16,_4),(_8,_2,_32))"
    assert str(nt.a_layout) == str(nt.b_layout) == "((_4,_2),_4):((_8,_4),_1)"
    assert str(tn.a_layout) == str(tn.b_layout) == "(_8,_4):(_1,_8)"
    assert str(lookup_mma_atom("SM70_8x8x4_F16F16F16F16_TN").c_layout) == "(_8,_8):(_1,_8)"
    # The seed's value-by-value derivation: (T0..T7, V0) and (T0, V0..V7) -> m + 8n.
    assert [nt.c_layout(t, 0) for t in range(8)] == [0, 1, 16, 17, 4, 5, 20, 21]
    assert [nt.c_layout(0, v) for v in range(8)] == [0, 8, 2, 10, 32, 40, 34, 42]
    # Logical threads 4..7 are lanes 16..19.
    assert [nt.thr_id(t) for t in range(8)] == [0, 1, 2, 3, 16, 17, 18, 19]


def test_seed_hopper_64x128_accumulator() -> None:
    atom = lookup_mma_atom("SM90_64x128x16_F16F16F16_SS_TN")
    assert str(atom.c_layout) == ("((_4,_8,_4),(_2,_2,_16)):((_128,_1,_16),(_64,_8,_512))")
    assert str(atom.a_layout) == "(_128,(_64,_16)):(_0,(_1,_64))"
    assert str(atom.thr_id) == "_128:_1"


def test_sm80_m16n8k16_matches_ptx_isa_fragments() -> None:
    # PTX ISA, mma.m16n8k16 f16: lane = 4*groupID + tid_in_group; a_i sits at
    # row = g + 8*((i//2) % 2), col = 2*q + (i % 2) + 8*(i // 4); c_i at
    # row = g + 8*(i // 2), col = 2*q + (i % 2); b_i at k = 2*q + (i % 2) + 8*(i // 2), n = g.
    atom = lookup_mma_atom("SM80_16x8x16_F32F16F16F32_TN")
    for lane in range(32):
        g, q = lane // 4, lane % 4
        for i in range(8):
            m, k = g + 8 * ((i // 2) % 2), 2 * q + (i % 2) + 8 * (i // 4)
            assert atom.a_layout(lane, i) == m + 16 * k
        for i in range(4):
            m, n = g + 8 * (i // 2), 2 * q + (i % 2)
            assert atom.c_layout(lane, i) == m + 16 * n
            assert atom.b_layout(lane, i) == g + 8 * (2 * q + (i % 2) + 8 * (i // 2))


def test_wgmma_family_covers_every_n() -> None:
    ns = {a.shape_mnk[1] for a in ATOMS if a.min_target.name == "sm_90a"}
    assert ns == set(range(8, 257, 8))
    atom = lookup_mma_atom("SM90_64x200x16_F32BF16BF16_SS_NT")
    assert (atom.a_major, atom.b_major, atom.a_in_smem) == ("MN", "MN", True)
    assert atom.fragment("d").count == 100
    assert atom.fragment("c") is atom.fragment("d")
