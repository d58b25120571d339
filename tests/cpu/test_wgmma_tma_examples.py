"""CuTe's TMA + wgmma tutorial (examples/wgmma_tma_sm90.cute) run by the CPU backend (native:
TMA loads, mbarriers, clusters of two CTAs and wgmma all run there) against float64, at
the issue's ragged sizes: tiles past M, N and K read zeros through the maps, and the
epilogue is predicated. The TMA maps need 16-byte strides, so TN's K-major operands with
K = 1003 are views of rows padded to 1008 elements (the kernel takes ldA, ldB)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import cutec
from cutec.driver import Options, Source, Stage, compile

EXAMPLE = Path(__file__).parents[2] / "examples" / "wgmma_tma_sm90.cute"
F16_ACC_TOLERANCE = 1e-2  # f16 accumulation, rounded per instruction on the CPU


def _operand(rng: np.random.Generator, rows: int, k: int, mn_major: bool) -> np.ndarray:
    if mn_major:  # (rows, k) with stride (1, rows): rows is a multiple of 8 here
        return np.asfortranarray(rng.standard_normal((rows, k)).astype(np.float16))
    padded = -(-k // 8) * 8
    x = np.zeros((rows, padded), np.float16)
    x[:, :k] = rng.standard_normal((rows, k)).astype(np.float16)
    return x[:, :k]


@pytest.mark.parametrize(
    ("kernel", "mn_major", "m", "n", "k"),
    [("hgemm_nt", True, 200, 136, 72), ("hgemm_tn", False, 200, 136, 72),
     ("hgemm_nt", True, 72, 200, 1003),
     pytest.param("hgemm_tn", False, 72, 200, 1003, marks=pytest.mark.slow)],  # CI time
)  # fmt: skip
def test_wgmma_tma_sm90_on_the_cpu_against_float64(
    kernel: str, mn_major: bool, m: int, n: int, k: int
) -> None:
    rng = np.random.default_rng(m + n + k)
    a, b = _operand(rng, m, k, mn_major), _operand(rng, n, k, mn_major)
    c0 = np.asfortranarray(rng.standard_normal((m, n)).astype(np.float16))
    c = c0.copy(order="F")
    run = cutec.jit(EXAMPLE, kernel=kernel, device="cpu")
    run(a, b, c, 1.0, 0.5)
    assert run.cpu_backend == "native"
    ref = a.astype(np.float64) @ b.astype(np.float64).T + 0.5 * c0.astype(np.float64)
    err = np.linalg.norm(c.astype(np.float64) - ref) / np.linalg.norm(ref)
    assert err < F16_ACC_TOLERANCE, err


def _cute_loop(text: str) -> str:
    """The tutorial with CuTe's own main loop, ``while (k_tile_count > -K_PIPE_MAX)``,
    counting k-tiles down from the prologue's, in place of the example's `for`."""
    for old, new in (
        ("  const K_TILE_MAX = size(tAgA, 1)", "  k_tile_count = size(tAgA, 1)"),
        ("    }\n    k_tile += 1\n", "    }\n    k_tile_count -= 1\n    k_tile += 1\n"),
        ("  for k in range(K_TILE_MAX) unroll(1) {", "  while k_tile_count > -K_PIPE_MAX {"),
    ):
        assert old in text, old
        text = text.replace(old, new)
    return text


def test_cutes_while_loop_keeps_its_accumulators_in_registers(tmp_path: Path) -> None:
    """promote-registers and carry-vectors carry the accumulators through scf.while as
    through scf.for: no local memory, the wgmmas' registers in place, the same values."""
    path = tmp_path / "wgmma_tma_while.cute"
    path.write_text(_cute_loop(EXAMPLE.read_text()))
    ptx = compile(Source.from_file(path), Stage.PTX, Options(target="sm_90a")).ptx
    assert ptx is not None and ".local" not in ptx and ptx.count("$L_while_") >= 4
    rng = np.random.default_rng(7)
    a, b = _operand(rng, 200, 72, True), _operand(rng, 136, 72, True)
    c = np.asfortranarray(np.zeros((200, 136), np.float16))
    cutec.jit(path, kernel="hgemm_nt", device="cpu")(a, b, c, 1.0, 0.0)
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    assert np.linalg.norm(c.astype(np.float64) - ref) / np.linalg.norm(ref) < F16_ACC_TOLERANCE


def test_the_warp_specialised_example_on_the_cpu_against_float64() -> None:
    """examples/gemm_ws_sm90.cute: a producer warpgroup, two consumer warpgroups with
    setmaxnreg, full/empty mbarrier rings (ragged in M, N and K)."""
    rng = np.random.default_rng(3)
    a, b = _operand(rng, 200, 72, False), _operand(rng, 300, 72, False)
    c0 = np.asfortranarray(rng.standard_normal((200, 300)).astype(np.float32))
    c = c0.copy(order="F")
    run = cutec.jit(EXAMPLE.parent / "gemm_ws_sm90.cute", kernel="gemm_ws_tn", device="cpu")
    run(a, b, c, 1.0, 0.5)
    ref = a.astype(np.float64) @ b.astype(np.float64).T + 0.5 * c0.astype(np.float64)
    err = np.linalg.norm(c.astype(np.float64) - ref) / np.linalg.norm(ref)
    assert err < 1e-5, err
