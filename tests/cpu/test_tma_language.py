"""TMA loads written in the language (make_tma_atom, get_tma_tensor, tma_partition,
copy(tma.with(bar), ...); cutec/frontend/build_tma.py, cutec/passes/lower_tma.py) run by
the CPU backend: each CTA of tests/cpu/data/tma_tile.cute loads its tile through the
map the launch builds and stores it to D, so D == A exactly, ragged edges included
(the map's zero fill past A, the predicated stores past D). The three shared layouts
take one box (K-major 128B swizzle, plain) and four (MN-major 128B swizzle). A slice of
a batched tensor goes through a 3-D map of the whole tensor (box (64, 64, 1)), and a
make_tensor view through a map of the view's layout, both with ragged M and K."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import cutec
from cutec.atoms.tma import TmaL2Promotion, TmaSwizzle
from cutec.cpu.reference import AccessError
from cutec.driver import Options, Source, Stage, compile
from cutec.ir.dialects.builtin import KernelOp
from cutec.ir.dialects.cute import AllocSmemOp
from cutec.ir.signature import TensorMapParam
from cutec.passes.lower_tma import tma_aligns

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


def batched_operands(m: int, k: int, batches: int, seed: int = 0):
    """A (M, K, L) k-major with padded rows and batches (-1 in the padding: A is a view
    of ``A.base``, the flat buffer), and D."""
    ld, bs = -(-k // 8) * 8 + 8, m * (-(-k // 8) * 8 + 8) + 64
    buf = np.full(bs * batches, np.float16(-1), np.float16)
    a = np.ndarray((m, k, batches), np.float16, buf, 0, (ld * 2, 2, bs * 2))
    a[...] = np.random.default_rng(seed).standard_normal((m, k, batches)).astype(np.float16)
    d = np.zeros((batches, m, k), np.float16).transpose(1, 2, 0)
    return a, d


def view_operands(m: int, k: int, seed: int = 0):
    """A flat buffer holding an M x K column-major matrix (ld padded), the matrix, and D."""
    ld = -(-m // 8) * 8 + 8
    flat = np.random.default_rng(seed).standard_normal(ld * k).astype(np.float16)
    return flat, flat.reshape(k, ld).T[:m], np.zeros((m, k), np.float16, order="F"), ld


def test_a_slice_of_a_batched_tensor_reads_zeros_past_its_batch() -> None:
    a, d = batched_operands(72, 40, 3)
    cutec.jit(TILE, kernel="tile_batched", device="cpu")(a, d)
    np.testing.assert_array_equal(d, a)


def test_a_make_tensor_view_is_mapped_through_its_layout() -> None:
    flat, mat, d, ld = view_operands(200, 40)
    cutec.jit(TILE, kernel="tile_view", device="cpu")(flat, 200, 40, ld, d)
    np.testing.assert_array_equal(d, mat)
    (view,) = _signature_maps("tile_view")
    assert view.dims == ("M", "K") and view.strides == ("ldA",) and view.box == (64, 8)
    (batched,) = _signature_maps("tile_batched")
    assert batched.dims == ("K", "M", "L") and batched.box == (64, 64, 1)


STORE = Path(__file__).parent / "data" / "tma_store_tile.cute"


def store_operands(m: int, n: int, seed: int = 0):
    """A (M, N) m-major, D's storage (N rows of a padded leading dimension, -7 in all),
    D (its first M elements of each row) and what the storage should then hold."""
    a = np.asfortranarray(np.random.default_rng(seed).standard_normal((m, n)).astype(np.float16))
    storage = np.full((n, -(-m // 8) * 8 + 8), np.float16(-7), np.float16)
    want = storage.copy()
    want.T[:m] = a
    return a, storage, storage.T[:m], want


@pytest.mark.parametrize(("m", "n"), [(128, 16), (200, 72)])
def test_tma_stores_write_the_tile_and_nothing_past_it(m: int, n: int) -> None:
    a, storage, d, want = store_operands(m, n)
    cutec.jit(STORE, kernel="store_tile", device="cpu")(a, d)
    np.testing.assert_array_equal(storage, want)


def test_a_tma_store_without_its_proxy_fence_is_reported_at_the_store(tmp_path: Path) -> None:
    text = STORE.read_text()
    assert "  tma_store_fence()\n" in text
    planted = tmp_path / "planted.cute"
    planted.write_text(text.replace("  tma_store_fence()\n", ""))
    line = next(i for i, t in enumerate(planted.read_text().splitlines(), 1) if "copy(tma," in t)
    a, _, d, _ = store_operands(128, 16)
    with pytest.raises(AccessError) as info:
        cutec.jit(planted, kernel="store_tile", device="cpu")(a, d)
    assert str(info.value).startswith(f"{planted}:{line}:5: missing proxy fence: the TMA store")


def test_a_tma_tile_sits_on_the_swizzle_repeat() -> None:
    """A shared buffer a TMA writes starts on 1024 bytes (the unit swizzles address bits),
    found through the tma_partition and group_modes views of it, though no wgmma reads
    it by descriptor; the mbarrier keeps the default alignment."""
    options = Options(kernel="tile_mn_sw128", target="sm_90a")
    result = compile(Source.from_file(TILE), Stage.CUTE, options)
    assert result.module is not None
    (kernel,) = result.module.walk_type(KernelOp)
    allocs = list(kernel.walk_type(AllocSmemOp))
    aligns = tma_aligns(kernel, dict.fromkeys(allocs, 128))
    by_element = {str(a.results[0].type.element): aligns[a] for a in allocs}
    assert by_element == {"f16": 1024, "i64": 128}
