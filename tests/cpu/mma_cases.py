"""The single-warp tensor-core kernel (tests/cpu/data/mma_atom.cute) and its cases:
one mma.sync atom fed by ldmatrix, per dtype family, ldmatrix width and majorness.

Shared by the interpreter tests (tests/cpu/test_collective.py), the ptxas tests
(tests/ptx/test_tensor_core_kernels.py) and the GPU test
(tests/gpu/test_mma_gpu.py). Inputs are small integers, so every product and sum
is exact in every type and all three (emulator, interpreter, GPU) must agree bit
for bit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from cutec.atoms.mma import MmaAtom, mma_atom_named

MMA_ATOM_KERNEL = Path(__file__).parent / "data" / "mma_atom.cute"
# f64's mma.sync with fragments copied from global memory (no ldmatrix).
MMA_REGISTERS_KERNEL = Path(__file__).parent / "data" / "mma_registers.cute"

# name -> compile-time parameters (the kernel's defaults: 16x8x16 f16 -> f32, A by
# ldmatrix x4, B by x2, both K-major in shared memory).
MMA_CASES: dict[str, dict[str, Any]] = {
    "f16_f32acc_x4_x2": {},
    "f16_f16acc": {"MMA": "SM80_16x8x16_F16F16F16F16_TN", "TC": "f16"},
    "bf16_f32acc": {"MMA": "SM80_16x8x16_F32BF16BF16F32_TN", "T": "bf16"},
    "f16_k8_x2_x1": {
        "MMA": "SM80_16x8x8_F32F16F16F32_TN",
        "LDSM_A": "SM75_U32x2_LDSM_N",
        "LDSM_B": "SM75_U32x1_LDSM_N",
        "BK": 8,
        "sA_layout": "(16, 8) : (8, 1)",
        "sB_layout": "(8, 8) : (8, 1)",
    },
    # MN-major shared tiles, read by ldmatrix .trans (x4 and x2).
    "f16_trans_x4_x2": {
        "LDSM_A": "SM75_U16x8_LDSM_T",
        "LDSM_B": "SM75_U16x4_LDSM_T",
        "sA_layout": "(16, 16) : (1, 16)",
        "sB_layout": "(8, 16) : (1, 8)",
    },
    "f16_f16acc_k8_trans_x2_x1": {
        "MMA": "SM80_16x8x8_F16F16F16F16_TN",
        "TC": "f16",
        "LDSM_A": "SM75_U16x4_LDSM_T",
        "LDSM_B": "SM75_U16x2_LDSM_T",
        "BK": 8,
        "sA_layout": "(16, 8) : (1, 16)",
        "sB_layout": "(8, 8) : (1, 8)",
    },
    # 32-bit and 8-bit elements: ldmatrix without .trans reads K-major tiles.
    "tf32_k8": {
        "MMA": "SM80_16x8x8_F32TF32TF32F32_TN",
        "T": "tf32",
        "BK": 8,
        "sA_layout": "(16, 8) : (8, 1)",
        "sB_layout": "(8, 8) : (8, 1)",
    },
    "s8_k32": {
        "MMA": "SM80_16x8x32_S32S8S8S32_TN",
        "T": "s8",
        "TC": "s32",
        "BK": 32,
        "sA_layout": "(16, 32) : (32, 1)",
        "sB_layout": "(8, 32) : (32, 1)",
    },
}

# Element type -> the numpy type an argument array of it has.
_HOST = {"f16": np.float16, "tf32": np.float32, "f32": np.float32, "s8": np.int8, "s32": np.int32}


def case_atom(case: str) -> MmaAtom:
    atom = mma_atom_named(MMA_CASES[case].get("MMA", "SM80_16x8x16_F32F16F16F32_TN"))
    assert atom is not None
    return atom


def host_type(dtype: str) -> Any:
    if dtype == "bf16":
        import ml_dtypes  # only the bf16 case needs it

        return ml_dtypes.bfloat16
    return _HOST[dtype]


def case_inputs(case: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A (M,K) and B (N,K) row-major (K-major), C (M,N) column-major: small integers."""
    atom = case_atom(case)
    m, n, k = atom.shape_mnk
    rng = np.random.default_rng(seed)
    a = rng.integers(-4, 5, (m, k)).astype(host_type(atom.a_type))
    b = rng.integers(-4, 5, (n, k)).astype(host_type(atom.b_type))
    c = np.asfortranarray(rng.integers(-8, 9, (m, n)).astype(host_type(atom.c_type)))
    return a, b, c
