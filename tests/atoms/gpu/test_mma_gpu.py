"""On a GPU, MMA atoms compute exactly what the emulator computes from their layouts.

Each atom runs once in a fragment kernel (tests/atoms/ptx_harness.py): the host
gathers A, B and C into per-thread register words with the atom's tables, the
kernel runs the instruction, and the D words it stores must equal the emulator's,
bit for bit, on small-integer inputs. wgmma operands in shared memory are laid
out in the canonical no-swizzle GMMA layout of the atom's majors, and described
by descriptors from cutec.atoms.gmma_desc.
"""

from __future__ import annotations

import dataclasses
import zlib

import numpy as np
import pytest

from cutec.atoms.emulate import (
    emulate_mma,
    gather,
    numpy_dtype,
    pack_registers,
    tile_shape,
    to_bits,
)
from cutec.atoms.gmma_desc import canonical_gmma_layout, make_gmma_desc
from cutec.atoms.mma import MmaAtom, lookup_mma_atom, mma_atoms
from cutec.dtypes import dtype as dtype_row
from cutec.runtime import cuda
from tests.atoms.ptx_harness import fragment_kernel
from tests.atoms.test_mma_ptxas import WGMMA_AFTER, WGMMA_BEFORE

pytestmark = pytest.mark.gpu
pytest.importorskip("cuda.bindings.driver")

GPU_ATOMS = [
    *(
        a.name
        for a in mma_atoms().values()
        if a.min_target.name in ("sm_75", "sm_80") and a.num_threads > 1
    ),
    "SM90_64x8x16_F16F16F16_SS_TN",
    "SM90_64x64x16_F32F16F16_SS_TN",
    "SM90_64x16x16_F32F16F16_SS_NT",
    "SM90_64x24x16_F32BF16BF16_SS_TN",
    "SM90_64x32x16_F32BF16BF16_RS_TT",
    "SM90_64x16x16_F16F16F16_RS_TN",
    "SM90_64x8x8_F32TF32TF32_SS_TN",
    "SM90_64x16x8_F32TF32TF32_RS_TN",
    "SM90_64x8x32_F32E4M3E4M3_SS_TN",
    "SM90_64x16x32_F32E5M2E4M3_RS_TN",
    "SM90_64x256x16_F32F16F16_SS_TN",
]


@pytest.fixture(scope="module")
def context() -> int:
    """The GPU's major compute capability (the test skips without a GPU)."""
    try:
        return cuda.device(0).capability[0]
    except cuda.NoDriverError as e:
        pytest.skip(str(e))


def _launch(
    ptx: str, name: str, threads: int, buffers: list[np.ndarray], out_index: int
) -> np.ndarray:
    """Run kernel `name` with one pointer argument per buffer; return buffers[out_index]."""
    copies = [b.copy() for b in buffers]
    cuda.run_ptx(ptx, name, copies, block=(threads, 1, 1))
    return copies[out_index]


def _lane_to_thread(atom: MmaAtom, lanes: int) -> list[int]:
    """Logical thread of each lane; Volta's four quadpairs all get the same problem."""
    inverse = {atom.thr_id(t): t for t in range(atom.num_threads)}
    return [
        inverse[lane - 4 * ((lane % 16) // 4) if atom.num_threads == 8 else lane]
        for lane in range(lanes)
    ]


def _smem_operand(
    atom: MmaAtom, operand: str, tile: np.ndarray, offset: int
) -> tuple[np.ndarray, int]:
    """The tile's bytes in the canonical no-swizzle layout, and its descriptor (sans base)."""
    dtype = atom.a_type if operand == "a" else atom.b_type
    major = atom.a_major if operand == "a" else atom.b_major
    bits = dtype_row(dtype).bits
    mn, k = tile.shape
    core = 128  # one core matrix: 8 rows of 16 bytes
    if major == "K":
        lbo, sbo = core, 2 * core  # the two K core matrices side by side, then down MN
    else:
        lbo, sbo = core * mn // (128 // bits), core  # MN core matrices first, then K
    layout = canonical_gmma_layout(major, "none", bits, mn, lbo, sbo)
    desc = make_gmma_desc(layout, major=major, bits=bits, start_address=offset)
    image = np.zeros(mn * k * bits // 8, dtype=np.uint8)
    words = to_bits(tile, dtype)
    for i in range(mn):
        for j in range(k):
            at = layout(i, j) * bits // 8
            image[at : at + bits // 8] = np.frombuffer(
                int(words[i, j]).to_bytes(8, "little")[: bits // 8], dtype=np.uint8
            )
    return image, desc.encode()


def _run(atom: MmaAtom) -> tuple[np.ndarray, np.ndarray]:
    """(D words the GPU stored per lane, D words the emulator predicts per lane)."""
    rng = np.random.default_rng(zlib.crc32(atom.name.encode()))
    tiles = {}
    for op, dtype in (("a", atom.a_type), ("b", atom.b_type), ("c", atom.c_type)):
        lo, hi = (-128, 128) if dtype == "s8" else (-3, 4)
        tiles[op] = rng.integers(lo, hi, size=tile_shape(atom, op)).astype(numpy_dtype(dtype))
    frags = {op: gather(atom, op, tiles[op]) for op in "abc"}
    expected_d = pack_registers(atom, "d", emulate_mma(atom, frags["a"], frags["b"], frags["c"]))

    wgmma = atom.min_target.name == "sm_90a"
    lanes = 128 if wgmma else 32
    thread = _lane_to_thread(atom, lanes)
    regs: dict[str, np.ndarray] = {}
    smem = np.zeros(0, dtype=np.uint8)
    smem_ops = []
    for op in ("a", "b"):
        if atom.a_in_smem if op == "a" else atom.b_in_smem:
            image, desc = _smem_operand(atom, op, tiles[op], offset=smem.nbytes)
            smem = np.concatenate([smem, image, np.zeros(-image.nbytes % 1024, np.uint8)])
            regs[op] = np.full((atom.num_threads, 1), desc, dtype=np.uint64)
            smem_ops.append(op)
        else:
            regs[op] = pack_registers(atom, op, frags[op])
    if wgmma:
        regs["d"] = pack_registers(atom, "d", frags["c"])
        regs["scale_d"] = np.ones((atom.num_threads, 1), dtype=np.uint64)
        kernel = fragment_kernel(
            atom.ptx,
            arch=atom.ptxas_arch,
            inputs=["d", "a", "b", "scale_d"],
            outputs=["d"],
            before=WGMMA_BEFORE,
            after=WGMMA_AFTER,
            smem_bytes=smem.nbytes,
            smem_descriptors=smem_ops,
        )
    else:
        regs["c"] = pack_registers(atom, "c", frags["c"])
        kernel = fragment_kernel(
            atom.ptx, arch=atom.ptxas_arch, inputs=["a", "b", "c"], outputs=["d"]
        )
    inputs = np.concatenate([regs[n][thread] for n, _ in kernel.inputs], axis=1)
    out = np.zeros((lanes, expected_d.shape[1]), dtype=np.uint64)
    buffers = [np.ascontiguousarray(inputs, dtype=np.uint64), out]
    if smem.nbytes:
        buffers.append(smem)
    got = _launch(kernel.ptx, kernel.name, lanes, buffers, out_index=1)
    # Only the register's own bits are defined (a 32-bit store leaves the slot's top half).
    width = 64 if atom.fragment("d").ptx_type in ("f64", "b64") else 32
    return got & np.uint64((1 << width) - 1), expected_d[thread]


@pytest.mark.parametrize("name", GPU_ATOMS)
def test_atom_on_gpu_matches_emulator(context: int, name: str) -> None:
    if context < 9:
        pytest.skip("needs a Hopper GPU (sm_90a)")
    got, expected = _run(lookup_mma_atom(name))
    np.testing.assert_array_equal(got, expected, err_msg=name)


def test_gpu_detects_a_wrong_layout(context: int) -> None:
    # Negative control: the NT instruction fed with TN's A layout must not match.
    if context < 9:
        pytest.skip("needs a Hopper GPU (sm_90a)")
    nt = lookup_mma_atom("SM70_8x8x4_F32F16F16F32_NT")
    wrong = dataclasses.replace(nt, a_layout=lookup_mma_atom("SM70_8x8x4_F32F16F16F32_TN").a_layout)
    got, expected = _run(wrong)
    assert not np.array_equal(got, expected)


def test_tf32_operands_are_truncated(context: int) -> None:
    """mma.sync reads a tf32 operand's f32 register without its low 13 mantissa bits
    (truncation): fractional A against an identity B gives A truncated, as the emulator
    (and so both CPU backends) computes."""
    atom = lookup_mma_atom("SM80_16x8x8_F32TF32TF32F32_TN")
    rng = np.random.default_rng(0)
    a = rng.standard_normal(tile_shape(atom, "a")).astype(np.float32)
    b = np.eye(*tile_shape(atom, "b"), dtype=np.float32)  # (N, K): B[n, k] = (n == k)
    c = np.zeros(tile_shape(atom, "c"), np.float32)
    frags = {op: gather(atom, op, t) for op, t in (("a", a), ("b", b), ("c", c))}
    thread = _lane_to_thread(atom, 32)
    kernel = fragment_kernel(atom.ptx, arch=atom.ptxas_arch, inputs=["a", "b", "c"],
                             outputs=["d"])  # fmt: skip
    regs = {op: pack_registers(atom, op, frags[op]) for op in "abc"}
    inputs = np.concatenate([regs[n][thread] for n, _ in kernel.inputs], axis=1)
    out = np.zeros((32, regs["c"].shape[1]), dtype=np.uint64)
    got = _launch(kernel.ptx, kernel.name, 32, [np.ascontiguousarray(inputs), out], 1)
    d = pack_registers(atom, "d", emulate_mma(atom, frags["a"], frags["b"], frags["c"]))
    np.testing.assert_array_equal(got & np.uint64(0xFFFFFFFF), d[thread])
    truncated = (a.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    assert not np.array_equal(truncated, a)  # the inputs do have low bits
