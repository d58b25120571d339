"""TMA loads written in the language (make_tma_atom, get_tma_tensor, tma_partition,
copy(tma.with(bar), ...); cutec/frontend/build_tma.py, cutec/passes/lower_tma.py) run by
the CPU backend: each CTA of tests/cpu/data/tma_tile.cute loads its tile through the
map the launch builds and stores it to D, so D == A exactly, ragged edges included
(the map's zero fill past A, the predicated stores past D). The three shared layouts
take one box (K-major 128B swizzle, plain) and four (MN-major 128B swizzle)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import cutec
from cutec.atoms.tma import TmaL2Promotion, TmaSwizzle
from cutec.driver import Options, Source, Stage, compile
from cutec.ir.signature import TensorMapParam

TILE = Path(__file__).parent / "data" / "tma_tile.cute"
KERNELS = {"tile_k_sw128": "K", "tile_mn_sw128": "MN", "tile_plain": "MN"}


@pytest.mark.parametrize("kernel", list(KERNELS))
@pytest.mark.parametrize(("m", "k"), [(128, 64), (200, 72)])
def test_tma_tiles_land_exactly(kernel: str, m: int, k: int) -> None:
    rng = np.random.default_rng(m * k)
    a = rng.standard_normal((m, k)).astype(np.float16)
    a = np.ascontiguousarray(a) if KERNELS[kernel] == "K" else np.asfortranarray(a)
    d = np.zeros_like(a)
    cutec.jit(TILE, kernel=kernel, device="cpu")(a, d)
    np.testing.assert_array_equal(d, a)


def _signature_maps(kernel: str) -> list[TensorMapParam]:
    result = compile(Source.from_file(TILE), Stage.THREAD, Options(kernel=kernel, target="sm_90a"))
    sig = result.signatures[kernel]
    assert sig.abi[-1] == ("tma_A", "tensor_map")
    return [p for p in sig.params if isinstance(p, TensorMapParam)]


def test_the_launch_record_holds_each_maps_recipe() -> None:
    (k_major,) = _signature_maps("tile_k_sw128")
    assert (k_major.name, k_major.tensor) == ("tma_A", "A")
    assert k_major.dims == ("K", "M") and k_major.strides == ("ldA",)
    assert k_major.box == (64, 64) and k_major.swizzle == TmaSwizzle.B128
    assert k_major.l2_promotion == TmaL2Promotion.L2_128B
    (mn_major,) = _signature_maps("tile_mn_sw128")
    assert mn_major.dims == ("M", "K") and mn_major.strides == ("ldA",)
    assert mn_major.box == (64, 8) and mn_major.swizzle == TmaSwizzle.B128
    (plain,) = _signature_maps("tile_plain")
    assert plain.box == (32, 16) and plain.swizzle == TmaSwizzle.NONE
