"""Copy atom records: CuTe's Copy_Traits exactly, coverage of the copied bits, lookup errors."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from cutec.atoms.copy import (
    GLOBAL,
    REG,
    SHARED,
    SHARED_CLUSTER,
    CopyAtom,
    CopyAtomError,
    copy_atom,
    copy_atoms,
    universal_copy,
)
from cutec.atoms.copy_sm80 import cp_async
from cutec.atoms.copy_sm90 import tma_atom, tma_load, tma_store
from cutec.layout import Layout, size

REFERENCE = Path(__file__).parent / "data" / "cute_copy_traits.tsv"
TMA_SAMPLE_BITS = (128, 1024)  # coverage is size-independent; keep the scans small


def _reference_rows() -> list[dict[str, str]]:
    with REFERENCE.open() as f:
        return list(csv.DictReader(f, delimiter="\t"))


def _atoms_for(name: str) -> list[CopyAtom]:
    """The cutec atoms a reference row stands for (a TMA row: one per rank)."""
    if name.startswith("SM90_TMA_"):
        kind, bits = name[len("SM90_TMA_") :].rstrip(">").split("<")
        return [tma_atom(kind, rank, int(bits)) for rank in range(1, 6)]
    return [copy_atom(name)]


def _image(layout: Layout) -> list[int]:
    return [layout(i) for i in range(size(layout))]


def _all_atoms() -> list[CopyAtom]:
    tma = [f(r, b) for f in (tma_load, tma_store) for r in range(1, 6) for b in TMA_SAMPLE_BITS]
    return list(copy_atoms()) + tma


ALL = _all_atoms()


def test_reference_covers_every_atom() -> None:
    names = {row["name"] for row in _reference_rows()}
    assert {a.name for a in copy_atoms()} <= names
    assert len(copy_atoms()) == 25  # 5 UniversalCopy, 8 cp.async, 6 ldmatrix, 6 stmatrix


@pytest.mark.parametrize("row", _reference_rows(), ids=lambda r: r["name"])
def test_layouts_equal_cute_copy_traits(row: dict[str, str]) -> None:
    for atom in _atoms_for(row["name"]):
        assert str(atom.thr_id) == row["thr_id"]
        assert str(atom.src_layout) == row["src_layout"]
        assert str(atom.dst_layout) == row["dst_layout"]
        assert str(atom.ref_layout) == row["ref_layout"]


@pytest.mark.parametrize("atom", ALL, ids=lambda a: f"{a.name}-{a.total_bits}")
def test_src_and_dst_cover_the_same_bits(atom: CopyAtom) -> None:
    n = atom.total_bits
    # Both sides are (thread, value) layouts over the same threads.
    assert size(atom.src_layout, 0) == size(atom.dst_layout, 0) == atom.num_threads
    assert sorted(set(_image(atom.src_layout))) == list(range(n))
    assert sorted(set(_image(atom.dst_layout))) == list(range(n))
    # The reference (register) side is a bijection onto [0, n).
    assert sorted(_image(atom.ref_layout)) == list(range(n))


@pytest.mark.parametrize("atom", ALL, ids=lambda a: f"{a.name}-{a.total_bits}")
def test_registers_hold_the_value_bits(atom: CopyAtom) -> None:
    """The register side's CuTe registers hold exactly one thread's reference bits."""
    if atom.dst_spaces == (REG,):
        sides = [atom.dst_regs]
    elif atom.src_spaces == (REG,):
        sides = [atom.src_regs]
    else:  # one-thread memory copies: both sides are one value of the copied width
        sides = [atom.src_regs, atom.dst_regs] if atom.src_regs is not None else []
    for regs in sides:
        assert regs is not None
        assert regs.bits * regs.count == atom.value_bits


def test_warp_atoms_broadcast_only_on_the_memory_side() -> None:
    x1 = copy_atom("SM75_U32x1_LDSM_N")
    # lanes 8..31 repeat lanes 0..7's rows: only 8 row addresses are read.
    assert size(x1.src_layout) == 4 * x1.total_bits == 4096
    assert x1.src_layout(8, 0) == x1.src_layout(0, 0) == 0
    assert x1.src_layout(7, 127) == 1023
    st = copy_atom("SM90_U16x2_STSM_T")
    assert st.src_layout == copy_atom("SM75_U16x2_LDSM_T").dst_layout
    assert st.dst_layout == copy_atom("SM75_U16x2_LDSM_T").src_layout


@pytest.mark.parametrize(
    ("name", "bits", "regs"),
    [
        ("SM75_U32x1_LDSM_N", 32, "uint32_t[1]"),
        ("SM75_U32x4_LDSM_N", 128, "uint32_t[4]"),
        ("SM75_U16x4_LDSM_T", 64, "uint32_t[2]"),
        ("SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", 128, "uint128_t[1]"),
        ("UniversalCopy<uint8_t>", 8, "uint8_t[1]"),
    ],
)
def test_value_bits_and_cute_register_types(name: str, bits: int, regs: str) -> None:
    atom = copy_atom(name)
    assert atom.value_bits == bits
    assert str(atom.dst_regs) == regs


def test_address_spaces_and_completion() -> None:
    assert copy_atom("SM80_CP_ASYNC_CACHEALWAYS<uint32_t>").src_spaces == (GLOBAL,)
    assert copy_atom("SM80_CP_ASYNC_CACHEALWAYS<uint32_t>").dst_spaces == (SHARED,)
    assert copy_atom("SM80_CP_ASYNC_CACHEALWAYS<uint32_t>").async_completion == "cp.async.group"
    assert copy_atom("SM75_U32x4_LDSM_N").dst_spaces == (REG,)
    assert copy_atom("SM90_U32x4_STSM_N").src_spaces == (REG,)
    load = copy_atom("SM90_TMA_LOAD_2D", bits=65536)
    assert (load.src_spaces, load.dst_spaces) == ((GLOBAL,), (SHARED_CLUSTER,))
    assert load.async_completion == "mbarrier"
    assert copy_atom("SM90_TMA_STORE_2D", bits=65536).async_completion == "bulk_group"
    assert universal_copy(32).async_completion is None
    assert [
        copy_atom("SM90_U32x1_STSM_N").target(),
        copy_atom("SM75_U32x1_LDSM_N").target(),
        cp_async(128, "cg").target(),
    ] == ["sm_90", "sm_75", "sm_80"]


def test_cp_async_lookup_matches_names() -> None:
    assert cp_async(32).name == "SM80_CP_ASYNC_CACHEALWAYS<uint32_t>"
    assert cp_async(128, "cg", zfill=True).name == "SM80_CP_ASYNC_CACHEGLOBAL_ZFILL<uint128_t>"
    assert universal_copy(128).name == "UniversalCopy<uint128_t>"


@pytest.mark.parametrize(
    ("make", "needle"),
    [
        (lambda: cp_async(64, "cg"), "cp.async.cg copies 128 bits (16 bytes); got 64 bits"),
        (lambda: cp_async(16), "cp.async.ca copies 32 bits (4 bytes), 64 bits (8 bytes), 128"),
        (lambda: cp_async(128, "cs"), "must be 'ca' or 'cg'"),
        (lambda: universal_copy(48), "UniversalCopy moves 8, 16, 32, 64, 128 bits; got 48"),
        (lambda: copy_atom("SM75_U32x8_LDSM_N"), "known: UniversalCopy<uint8_t>"),
        (lambda: copy_atom("SM90_TMA_LOAD_2D"), "needs bits="),
        (lambda: copy_atom("SM75_U32x1_LDSM_N", bits=32), "bits= applies only to TMA"),
        (lambda: tma_load(6, 8192), "rank 1..5; got 6"),
        (lambda: tma_store(2, 100), "multiple of 128 bits; got 100"),
        (lambda: tma_atom("PREFETCH", 2, 8192), "kind must be one of"),
        (lambda: universal_copy(32).template("ld.param"), "has no 'ld.param' instruction"),
    ],
)
def test_invalid_requests_name_what_is_supported(make, needle: str) -> None:
    with pytest.raises(CopyAtomError) as info:
        make()
    assert needle in str(info.value)


def test_atoms_are_frozen_and_hashable() -> None:
    atom = copy_atom("SM75_U32x4_LDSM_N")
    assert hash(atom) == hash(copy_atom("SM75_U32x4_LDSM_N"))
    with pytest.raises(AttributeError):
        atom.name = "x"  # type: ignore[misc]
