"""Broadcast operands (a stride-0 mode: a bias row over M) and padded views run on the
CPU backend: the kernel addresses them through the strides it is passed, over the
memory from their first element to their last."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import cutec
from cutec.cli import main

BIAS = """
kernel add_bias(D: f32[M, N] : (1, ldD), bias: f32[M, N] : (0, 1))
  grid (ceil_div(M, 32), ceil_div(N, 8)) threads 256
{
  gD = local_tile(D, (32, 8), (block.x, block.y))
  gb = local_tile(bias, (32, 8), (block.x, block.y))
  tD = local_partition(gD, make_layout((32, 8)), thread.x)
  tb = local_partition(gb, make_layout((32, 8)), thread.x)
  s = make_fragment_like(tb)
  copy(tb, s)
  axpby(1.0, s, 1.0, tD)
}
"""


def _bias_row(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    row = rng.standard_normal(n).astype(np.float32)
    view = np.lib.stride_tricks.as_strided(row, shape=(70, n), strides=(0, 4), writeable=False)
    return row, view


def test_a_broadcast_input_and_a_padded_output_run_on_the_cpu() -> None:
    rng = np.random.default_rng(2)
    _, bias = _bias_row(13, rng)
    k = cutec.jit(BIAS, device="cpu")
    d = np.asfortranarray(rng.standard_normal((70, 13)).astype(np.float32))
    want = d.astype(np.float64) + bias
    k(d, bias)
    np.testing.assert_allclose(d, want, rtol=1e-6)
    # D a view of a larger buffer (ldD = 80): only its elements change.
    big = np.asfortranarray(rng.standard_normal((80, 20)).astype(np.float32))
    before = big.copy()
    view = big[:70, :13]
    k(view, bias)
    np.testing.assert_allclose(big[:70, :13], before[:70, :13] + bias, rtol=1e-6)
    np.testing.assert_array_equal(big[70:, :], before[70:, :])
    np.testing.assert_array_equal(big[:, 13:], before[:, 13:])


def test_a_negative_stride_is_refused_naming_the_parameter() -> None:
    rng = np.random.default_rng(3)
    d = np.asfortranarray(rng.standard_normal((70, 13)).astype(np.float32))
    _, bias = _bias_row(13, rng)
    with pytest.raises(ValueError, match=r"parameter 'D'.*whole, non-negative"):
        cutec.jit(BIAS, device="cpu")(d[::-1, :], bias)


def test_cutec_run_makes_and_runs_a_broadcast_operand_on_the_cpu(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bias.cute"
    path.write_text(BIAS)
    argv = ["run", str(path), "--shape", "D=70,13", "--shape", "bias=70,13", "--device", "cpu"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "bias: shape (70, 13) strides (0, 1)" in out
