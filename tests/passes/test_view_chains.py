"""Predication is a property of layouts, not of how a view chain is spelled (issue 26).

Every access through a view chain of a global tensor (slices, local_tile with and
without a step, the divides, compositions, local_partition, a TiledCopy's partition,
make_tensor views) reads and writes exactly the elements whose coordinates in the root
lie inside its extents, or the compile refuses with one located error. Random chains
from tests/passes/view_chain_gen.py run on the CPU backend (bounds checks on) against
numpy: a fixed set here, a long run marked slow (CUTEC_VIEW_FUZZ_N cases, unseeded
unless CUTEC_VIEW_FUZZ_SEED); `python -m tests.passes.view_chain_run -n 100000` runs
it from the shell. Each bug the random runs found is also a small kernel below.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

import numpy as np
import pytest

import cutec.runtime as rt
from cutec.cpu.reference_memory import AccessError
from cutec.layout.coords import crd2idx
from tests.passes import view_chain_gen as gen
from tests.passes import view_chain_run as runner

SEED = 26  # the fixed set: kernels 0..KERNELS-1 of this seed
KERNELS = 60
LAUNCHES = 8  # random run-time shapes per compiled kernel
HAND_GUARDED = 16  # of which the first are also run guarded by hand


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test its own disk cache, and no kernel object shared with another test."""
    monkeypatch.setenv("CUTEC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(sys.modules["cutec.runtime.jit"], "_KERNELS", {})


def _check(report: runner.Report) -> None:
    """Fails with each failing kernel's first failure of each kind: the message, the
    kernel and the launch."""
    if report.failures:
        counts = ", ".join(f"{n} {kind}" for kind, n in sorted(report.counts.items()))
        pytest.fail(f"{counts}\n\n" + "\n\n".join(report.failures), pytrace=False)


# --------------------------------------------------------------------------- random chains


@pytest.mark.parametrize("index", range(KERNELS))
def test_random_view_chain(index: int) -> None:
    """Kernel `index` of the fixed set at LAUNCHES run-time shapes: C as numpy says, no
    bounds check fired; a refusal is one error located in the kernel."""
    _check(runner.run(SEED, range(index, index + 1), LAUNCHES))


@pytest.mark.parametrize("index", range(HAND_GUARDED))
def test_hand_guarded_view_chain_agrees_with_the_oracle(index: int) -> None:
    """The same kernels guarded by hand, CuTe's way (an identity tensor viewed through
    the chain, elem_less, copy(..., pred = p)): the oracle's expected C is checked
    against a kernel that needs no predicate pass."""
    _check(runner.run(SEED, range(index, index + 1), LAUNCHES, manual=True))


def test_the_fixed_set_covers_every_kind_of_chain() -> None:
    """The fixed set is not degenerate: every root, step, partition and transfer kind,
    and the chains the bug of issue 26 was about, are in it."""
    seen: set[str] = set()
    for i in range(KERNELS):
        k = gen.random_kernel(np.random.default_rng([SEED, i]))
        seen.update(k.features())
        seen.add(k.root.kind)
        seen.add(k.transfer)
        seen.update(type(s).__name__ for s in k.steps)
        seen.update(s.form for s in k.steps if isinstance(s, gen.Tile))
        seen.update("step" for s in k.steps if getattr(s, "step", None) is not None)
        seen.update("loop" for _ in [k.loop] if k.loop is not None)
        seen.update("assume" for _ in k.assumes[:1])
        seen.update("specialize" for _ in [k] if k.specialize)
        tiles = [s for s in k.steps if isinstance(s, gen.Tile)]
        seen.update(
            "thread tile" for s in tiles if any(getattr(c, "axis", "") == "t" for c in s.coord)
        )
    want = {
        "param", "view", "flat", "slice", "overhang", "elements", "copy", "axpby", "columns",
        "copy_if", "specialize", "thread tile",
        "Slice", "Tile", "Compose", "Partition", "CopyPartition", "local_tile", "logical",
        "zipped", "tiled", "step", "loop", "assume",
    }  # fmt: skip
    assert want <= seen, want - seen


def test_offsets_are_crd2idx() -> None:
    """The oracle's numpy crd2idx (`_offset`, over arrays of coordinates) is the
    algebra's crd2idx at each coordinate, on the layouts the chains slice."""
    rng = np.random.default_rng(0)
    checked = 0
    for i in range(40):
        k = gen.random_kernel(np.random.default_rng([SEED, i]))
        facts = dict(k.assumes)
        env = {e: facts.get(e, 1) * int(rng.integers(1, 9)) for e in k.root.dynamic()}
        for term in k.view.terms:
            shape, stride = gen._subs(term.shape, env), gen._subs(term.stride, env)
            for _ in range(5):
                coord = _random_coord(shape, rng)
                want = crd2idx(coord, shape, stride)
                arrays = gen._map(coord, lambda c: np.array([c, c]))
                assert gen._offset(coord, shape, stride) == want
                assert list(gen._offset(arrays, shape, stride)) == [want, want]
                checked += 1
    assert checked > 400


def _random_coord(shape: object, rng: np.random.Generator) -> object:
    """A coordinate of `shape`: per mode an index (an integer into a nested mode), at
    times one past the mode's size (a tile past the end)."""
    if isinstance(shape, tuple):
        if rng.random() < 0.3:
            return int(rng.integers(0, math.prod(gen._leaves(shape)) + 1))
        return tuple(_random_coord(s, rng) for s in shape)
    return int(rng.integers(0, int(shape) + 1))


@pytest.mark.slow
def test_many_random_view_chains() -> None:
    """CUTEC_VIEW_FUZZ_N cases (default 2,000) of CUTEC_VIEW_FUZZ_SEED (default: a new
    seed, printed), 50 launches per kernel."""
    n = int(os.environ.get("CUTEC_VIEW_FUZZ_N", "2000"))
    seed = os.environ.get("CUTEC_VIEW_FUZZ_SEED")
    s = int(seed) if seed else int(np.random.SeedSequence().entropy % 2**63)
    print(f"view chains: seed {s}, {n} cases")
    _check(runner.run(s, range(-(-n // 50)), 50))


# --------------------------------------------------------------------------- reproducers


def _jit(source: str) -> rt.Kernel:
    return rt.jit(source, device="cpu")


def _values(shape: tuple[int, ...], order: str = "F") -> np.ndarray:
    """Distinct exact values, so that any misplaced element shows."""
    return np.asfortranarray(np.arange(1, math.prod(shape) + 1, dtype=np.float32)).reshape(
        shape, order=order
    )


def _nan(shape: tuple[int, ...], order: str = "F") -> np.ndarray:
    return np.full(shape, np.nan, np.float32, order=order)  # type: ignore[call-overload]


SLICE_AT_BLOCK_Z = """
kernel k(A: f32[M, N, L] : (1, sA1, sA2), C: f32[M, N, L] : (1, sC1, sC2))
  grid (ceil_div(M, 8), ceil_div(N, 4), L) threads 8
{
  mA = A[_, _, block.z]
  mC = C[_, _, block.z]
  tA = local_partition(local_tile(mA, (8, 4), (block.x, block.y)), make_layout((4, 2)), thread.x)
  tC = local_partition(local_tile(mC, (8, 4), (block.x, block.y)), make_layout((4, 2)), thread.x)
  r = make_fragment_like(tA)
  copy(tA, r)
  copy(r, tC)
}
"""


def test_a_tile_of_a_slice_is_guarded() -> None:
    """The issue's first example: mA = A[_, _, block.z]; a tile of it (13 x 7 does not
    divide into 8 x 4 tiles) reads and writes inside A and C only."""
    a, c = _values((13, 7, 2)), _nan((13, 7, 2))
    _jit(SLICE_AT_BLOCK_Z)(A=a, C=c)
    assert np.array_equal(c, a)


SLICE_AT_A_CONSTANT = """
kernel k(A: f32[M, N] : (1, sA1), C: f32[M, N] : (1, sC1))
  grid ceil_div(M, 8) threads 4
{
  tA = local_partition(local_tile(A[_, 3], (8,), (block.x,)), make_layout(4), thread.x)
  tC = local_partition(local_tile(C[_, 3], (8,), (block.x,)), make_layout(4), thread.x)
  r = make_fragment_like(tA)
  copy(tA, r)
  copy(r, tC)
}
"""


@pytest.mark.parametrize("n", [5, 3, 2])
def test_a_slice_at_a_constant_is_guarded(n: int) -> None:
    """Column 3 of A, tiled: copied where it exists (N = 5); with N <= 3 it lies past
    the end and nothing is read or written."""
    a, c = _values((10, n)), _nan((10, n))
    _jit(SLICE_AT_A_CONSTANT)(A=a, C=c)
    want = _nan((10, n))
    want[:, 3:4] = a[:, 3:4]
    assert np.array_equal(c, want, equal_nan=True)


TRANSPOSED_VIEW = """
kernel k(A: f32[M, N] : (1, sA1), C: f32[M, N] : (1, sC1))
  grid (ceil_div(N, 8), ceil_div(M, 4)) threads 8
{
  mA = make_tensor(A, make_layout((N, M), (sA1, 1)))
  mC = make_tensor(C, make_layout((N, M), (sC1, 1)))
  tA = local_partition(local_tile(mA, (8, 4), (block.x, block.y)), make_layout((4, 2)), thread.x)
  tC = local_partition(local_tile(mC, (8, 4), (block.x, block.y)), make_layout((4, 2)), thread.x)
  r = make_fragment_like(tA)
  copy(tA, r)
  copy(r, tC)
}
"""


def test_a_tile_of_a_transposed_make_tensor_view_is_guarded() -> None:
    a, c = _values((13, 7)), _nan((13, 7))
    _jit(TRANSPOSED_VIEW)(A=a, C=c)
    assert np.array_equal(c, a)


PADDED_BUFFER = """
kernel k(A: f32[SA], C: f32[SC], M: int, N: int, ldA: int, ldC: int)
  grid (ceil_div(M, 8), ceil_div(N, 4)) threads 8
{
  mA = make_tensor(A, make_layout((M, N), (1, ldA)))
  mC = make_tensor(C, make_layout((M, N), (1, ldC)))
  tA = local_partition(local_tile(mA, (8, 4), (block.x, block.y)), make_layout((4, 2)), thread.x)
  tC = local_partition(local_tile(mC, (8, 4), (block.x, block.y)), make_layout((4, 2)), thread.x)
  r = make_fragment_like(tA)
  copy(tA, r)
  copy(r, tC)
}
"""


def test_a_tile_of_a_padded_make_tensor_view_is_guarded() -> None:
    """Column-major M x N with leading dimensions 16 and 20 in flat buffers: the
    elements copied, the padding of C untouched."""
    m, n, lda, ldc = 13, 7, 16, 20
    a = np.arange(1, lda * n + 1, dtype=np.float32)
    c = np.full(ldc * n, np.nan, np.float32)
    _jit(PADDED_BUFFER)(A=a, C=c, M=m, N=n, ldA=lda, ldC=ldc)
    want = np.full((ldc, n), np.nan, np.float32)
    want[:m] = a.reshape(n, lda).T[:m]
    assert np.array_equal(c.reshape(n, ldc).T, want, equal_nan=True)


ELEMENTS = """
kernel k(A: f32[M, N] : (1, sA1), C: f32[M, N] : (sC0, 1))
  grid (ceil_div(M, 8), ceil_div(N, 4)) threads 8
{
  tA = local_partition(local_tile(A, (8, 4), (block.x, block.y)), make_layout((4, 2)), thread.x)
  tC = local_partition(local_tile(C, (8, 4), (block.x, block.y)), make_layout((4, 2)), thread.x)
  r = make_fragment_like(tA)
  for i in range(size(r)) unroll { r[i] = tA[i] }
  for i in range(size(r)) unroll { tC[i] = r[i] }
}
"""


def test_elements_of_a_partition_at_static_indices_are_guarded() -> None:
    a, c = _values((13, 7)), _nan((13, 7), "C")
    _jit(ELEMENTS)(A=a, C=c)
    assert np.array_equal(c, a)


OVERHANG = """
kernel k(A: f32[M], C: f32[M])
  assume M % 4 == 0
  grid ceil_div(M, 4) + 1 threads 2
{
  tA = local_partition(local_tile(A, (4,), (block.x,)), make_layout(2), thread.x)
  tC = local_partition(local_tile(C, (4,), (block.x,)), make_layout(2), thread.x)
  r = make_fragment_like(tA)
  copy(tA, r)
  copy(r, tC)
}
"""


def test_a_tile_wholly_past_the_end_is_the_launchs_to_avoid() -> None:
    """M % 4 == 0 makes every tile whole, and tile coordinates are the launch's to keep
    below the number of tiles (as in CuTe; cutec.analysis.bounds): a grid of one block
    more than tiles reads past A, which the CPU backend's bounds check reports."""
    a, c = _values((12,)), _nan((12,))
    with pytest.raises(AccessError, match="out-of-bounds load"):
        _jit(OVERHANG)(A=a, C=c)


RANK3_PARTITION = """
kernel k(A: f32[M, N, L], C: f32[M, N, L])
  grid (1, 1, ceil_div(L, 2)) threads 2
{
  tA = local_partition(local_tile(A, (1, 1, 2), (0, 0, block.z)), make_layout((1, 1, 2)), thread.x)
  tC = local_partition(local_tile(C, (1, 1, 2), (0, 0, block.z)), make_layout((1, 1, 2)), thread.x)
  r = make_fragment_like(tA)
  copy(tA, r)
  copy(r, tC)
}
"""


def test_a_partition_along_mode_2_of_a_rank_3_tile_is_guarded() -> None:
    """L = 3 in tiles of 2, a thread per element: the predicate of thread 1 of block 1
    (l = 3) must say out of bounds."""
    a, c = _values((1, 1, 3)), _nan((1, 1, 3))
    _jit(RANK3_PARTITION)(A=a, C=c)
    assert np.array_equal(c, a)


IDENTITY_PARTITION = """
kernel k(A: f32[M, N, L], D: f32[2], E: f32[2])
  grid 1 threads 1
{
  cA = make_identity_tensor(shape(A))
  tA = local_partition(local_tile(A, (1, 1, 2), (0, 0, 1)), make_layout((1, 1, 1)), 0)
  tC = local_partition(local_tile(cA, (1, 1, 2), (0, 0, 1)), make_layout((1, 1, 1)), 0)
  for i in range(2) unroll {
    c = tC[i]
    D[i] = f32(c[0] + 10 * c[1] + 100 * c[2])
    E[i] = tA[i]
  }
}
"""


def test_an_identity_tensor_partitions_as_its_tensor() -> None:
    """The coordinates of an identity tensor viewed through a chain are those of the
    elements the same chain of the tensor reads (the predicate pass's mirror relies on
    it): here (0, 0, 2) and (0, 0, 3), encoded as m + 10 n + 100 l."""
    m, n, l = np.meshgrid(np.arange(5), np.arange(5), np.arange(5), indexing="ij")
    a = np.asfortranarray((m + 10 * n + 100 * l).astype(np.float32))
    d, e = np.zeros(2, np.float32), np.zeros(2, np.float32)
    _jit(IDENTITY_PARTITION)(A=a, D=d, E=e)
    assert list(e) == [200, 300]
    assert list(d) == list(e)
