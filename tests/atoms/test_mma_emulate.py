"""CPU emulation of every MMA atom from its gather/scatter tables equals numpy's matmul."""

from __future__ import annotations

import numpy as np
import pytest

from cutec.atoms.emulate import (
    emulate_mma,
    gather,
    mma_tables,
    numpy_dtype,
    pack_registers,
    row_major_table,
    scatter,
    tile_shape,
    unpack_registers,
)
from cutec.atoms.mma import MmaAtom, lookup_mma_atom, mma_atoms

ATOMS = list(mma_atoms().values())


def random_tile(rng: np.random.Generator, atom: MmaAtom, operand: str, dtype: str) -> np.ndarray:
    """Small integers, exact in every dtype (e5m2 holds the integers up to 8 exactly)."""
    lo, hi = (-128, 128) if dtype == "s8" else (-3, 4)
    return rng.integers(lo, hi, size=tile_shape(atom, operand)).astype(numpy_dtype(dtype))


@pytest.mark.parametrize("family", ["UniversalFMA", "SM70", "SM80", "SM90"])
def test_emulation_equals_matmul(family: str) -> None:
    rng = np.random.default_rng(7)
    for atom in (a for a in ATOMS if a.name.startswith(family)):
        a = random_tile(rng, atom, "a", atom.a_type)
        b = random_tile(rng, atom, "b", atom.b_type)
        c = random_tile(rng, atom, "c", atom.c_type)
        d_frags = emulate_mma(
            atom, gather(atom, "a", a), gather(atom, "b", b), gather(atom, "c", c)
        )
        expected = a.astype(np.float64) @ b.astype(np.float64).T + c
        np.testing.assert_array_equal(scatter(atom, "c", d_frags), expected, err_msg=atom.name)


def test_tables_are_integer_data() -> None:
    tables = mma_tables(lookup_mma_atom("SM80_16x8x8_F16F16F16F16_TN"))
    assert tables.a.dtype == np.int32 and tables.a.shape == (32, 4)
    # Lane 5 (group 1, thread 1) holds A rows 1 and 9, columns 2 and 3.
    assert tables.a[5].tolist() == [1 + 16 * 2, 1 + 16 * 3, 9 + 16 * 2, 9 + 16 * 3]
    row_major = row_major_table(lookup_mma_atom("SM80_16x8x8_F16F16F16F16_TN"), "a")
    assert row_major[5].tolist() == [1 * 8 + 2, 1 * 8 + 3, 9 * 8 + 2, 9 * 8 + 3]
    with pytest.raises(ValueError):
        tables.a[0, 0] = 1


def test_scatter_rejects_disagreeing_threads() -> None:
    atom = lookup_mma_atom("SM90_64x8x16_F32F16F16_SS_TN")
    frags = gather(atom, "b", np.ones((8, 16), dtype=np.float16)).copy()
    frags[3, 0] = 2
    with pytest.raises(ValueError, match="disagree"):
        scatter(atom, "b", frags)


@pytest.mark.parametrize(
    ("name", "operand", "words"),
    [
        ("SM80_16x8x16_F16F16F16F16_TN", "a", 4),
        ("SM80_16x8x32_S32S8S8S32_TN", "a", 4),
        ("SM80_8x8x4_F64F64F64F64_TN", "c", 2),
        ("SM90_64x8x32_F32E4M3E5M2_RS_TN", "a", 4),
        ("SM80_16x8x8_F32BF16BF16F32_TN", "b", 1),
        ("SM90_64x16x16_F16F16F16_SS_TN", "d", 4),
    ],
)
def test_register_packing_round_trips(name: str, operand: str, words: int) -> None:
    atom = lookup_mma_atom(name)
    dtype = {"a": atom.a_type, "b": atom.b_type, "c": atom.c_type, "d": atom.d_type}[operand]
    side = "c" if operand == "d" else operand
    tile = random_tile(np.random.default_rng(1), atom, side, dtype)
    frags = gather(atom, side, tile)
    regs = pack_registers(atom, operand, frags)
    assert regs.shape == (atom.num_threads, words)
    np.testing.assert_array_equal(unpack_registers(atom, operand, regs), frags)


def test_register_packing_puts_value_zero_low() -> None:
    atom = lookup_mma_atom("SM80_16x8x16_F16F16F16F16_TN")
    frags = np.zeros((32, 8), dtype=np.float16)
    frags[0, 0], frags[0, 1] = 1.0, 2.0  # f16 1.0 = 0x3c00, 2.0 = 0x4000
    assert int(pack_registers(atom, "a", frags)[0, 0]) == 0x4000_3C00
    fp8 = lookup_mma_atom("SM90_64x8x32_F32E4M3E4M3_RS_TN")
    frags = np.zeros((128, 16), dtype=np.float32)
    frags[0, :4] = [1.0, -1.0, 0.5, 448.0]  # e4m3: 0x38, 0xb8, 0x30, 0x7e
    assert int(pack_registers(fp8, "a", frags)[0, 0]) == 0x7E30_B838


def test_tf32_operands_lose_their_low_13_bits() -> None:
    """The emulator reads tf32 A and B as the tensor cores do (truncated; measured on
    an H100, tests/atoms/gpu/test_mma_gpu.py): A times an identity B is A truncated."""
    atom = lookup_mma_atom("SM80_16x8x8_F32TF32TF32F32_TN")
    a = np.random.default_rng(1).standard_normal(tile_shape(atom, "a")).astype(np.float32)
    b = np.eye(*tile_shape(atom, "b"), dtype=np.float32)
    c = np.zeros(tile_shape(atom, "c"), np.float32)
    d = emulate_mma(atom, *(gather(atom, op, t) for op, t in (("a", a), ("b", b), ("c", c))))
    want = (a.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    np.testing.assert_array_equal(scatter(atom, "c", d), want)
