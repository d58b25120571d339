"""TMA loads on the CPU (the model is cutec/cpu/tma.py; both backends run it, each case
on each, with the same reports): tests/ptx/data/tma_tile.mlir launched through the JIT
with the launch record of tests/gpu/test_launch_maps_gpu.py (a tensor-map parameter
whose value on the CPU is its description) gives the boxes the GPU test expects, at
ragged and whole sizes; the swizzle, the element strides and the NaN fill on their
own; and one planted bug per check: an expect_tx too small or too large for the box, a
read of the box before its phase completes, a map over memory the array does not have,
a box other than the atom's, a map the driver's rules reject; and a wgmma reading a
landed box with no proxy fence (the async proxy wrote it)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cutec.atoms.tma import TmaDataType, TmaOobFill, TmaSwizzle, TmaTensorMap
from cutec.cpu import native, reference, tma
from cutec.cpu.reference import AccessError, InterpreterError
from cutec.cpu.reference_memory import argument
from cutec.driver import Source
from cutec.ir import types as T
from cutec.ir.dialects.builtin import KernelOp
from cutec.ir.dialects.gpu import PointerType
from cutec.ir.parser import parse_module
from cutec.ir.signature import KernelLaunch
from cutec.ir.verifier import verify
from cutec.runtime import cache
from cutec.runtime.jit import Kernel
from cutec.runtime.tensor_map import TensorMapError
from cutec.target import AddressSpace
from tests.cpu.wgmma_cases import Case
from tests.runtime.launch_ptx import TMA_TILE

TMA_TILE_MLIR = Path(__file__).parents[1] / "ptx" / "data" / "tma_tile.mlir"
WAIT = "thread.mbarrier_wait %bar, %c0 : !gpu.ptr<i64, shared>, i32"
BACKENDS = [reference, native]


def _operands(m: int, n: int) -> tuple[np.ndarray, np.ndarray, int]:
    """A column-major m x n f32 matrix with a padded leading dimension (16-byte
    strides), and the boxes the kernel stores (as tests/gpu/test_launch_maps_gpu.py)."""
    ld = -(-m // 4) * 4 + 4
    a = np.random.default_rng(m * n).standard_normal((n, ld)).astype(np.float32).T[:m]
    tiles_m, tiles_n = -(-m // 16), -(-n // 8)
    padded = np.zeros((tiles_m * 16, tiles_n * 8), np.float32)  # out of bounds: zeros
    padded[:m, :n] = a
    want = np.concatenate([
        padded[16 * bx:16 * bx + 16, 8 * by:8 * by + 8].flatten(order="F")
        for by in range(tiles_n) for bx in range(tiles_m)
    ])  # fmt: skip
    return a, want, ld


def _jit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str | None = None) -> Kernel:
    """The JIT's kernel of tma_tile.mlir (or `text`) with the GPU test's launch record
    (a .mlir kernel has no map recipe of its own: the record comes from the cache)."""
    monkeypatch.setenv("CUTEC_CACHE_DIR", str(tmp_path))
    source = (Source.from_file(TMA_TILE_MLIR) if text is None
              else Source.from_file("tma.mlir", text))  # fmt: skip
    k = Kernel(source, "tma_tile", {}, "sm_90a", "cpu", True)
    cache.store(k._key("signature", "sm_90a"), cache.Entry(KernelLaunch(*TMA_TILE).to_json(), {}))
    return k


@pytest.mark.parametrize("m, n", [(40, 20), (64, 32), (17, 9)])
def test_the_tma_tile_kernel_loads_each_box(
    m: int, n: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, want, _ = _operands(m, n)
    k = _jit(tmp_path, monkeypatch)
    d = np.full(want.size, np.nan, np.float32)
    k(a, d)
    np.testing.assert_array_equal(d, want)
    assert k.cpu_backend == "native"  # no fallback to the interpreter


def _kernel(text: str) -> KernelOp:
    module = parse_module(text, "tma.mlir")
    verify(module)
    (kernel,) = module.walk_type(KernelOp)
    return kernel


def _run(text: str, m: int = 40, n: int = 20, desc: TmaTensorMap | None = None,
         backend: Any = reference) -> np.ndarray:  # fmt: skip
    """tma_tile (or a variant, `text`) in `backend`, with the map `desc` (by default the
    launch's: dims (m, n), box (16, 8))."""
    a, want, ld = _operands(m, n)
    if desc is None:
        desc = TmaTensorMap(TmaDataType.FLOAT32, (m, n), (4 * ld,), (16, 8))
    d = np.full(want.size, np.nan, np.float32)
    base = a.T.base if a.T.base is not None else a
    grid = (-(-m // 16), -(-n // 8))
    backend.run_kernel(_kernel(text), grid, [base, m, n, ld, d, d.size,
                                             tma.TensorMapArgument(desc, "A")])  # fmt: skip
    return d


def _report(text: str, desc: TmaTensorMap | None = None) -> tuple[type, str]:
    """The error both backends raise for tma_tile (or `text`) with map `desc`: the same
    type and text, returned."""
    found = []
    for backend in BACKENDS:
        with pytest.raises((AccessError, InterpreterError)) as info:
            _run(text, desc=desc, backend=backend)
        found.append((type(info.value), str(info.value)))
    assert found[0] == found[1]
    return found[0]


def _variant(old: str, new: str) -> str:
    text = TMA_TILE_MLIR.read_text()
    assert old in text
    return text.replace(old, new)


@pytest.mark.parametrize("backend", BACKENDS, ids=["interpreter", "native"])
@pytest.mark.parametrize("m, n", [(40, 20), (17, 9)])
def test_each_backend_takes_the_map_after_the_arguments(m: int, n: int, backend: Any) -> None:
    _, want, _ = _operands(m, n)
    np.testing.assert_array_equal(_run(TMA_TILE_MLIR.read_text(), m, n, backend=backend), want)


def test_a_destination_off_the_boxs_alignment_is_a_located_error() -> None:
    """The box into byte 64 of the 512-byte tile: not 128-byte aligned, and too short."""
    text = _variant('"SM90_TMA_LOAD_2D"(%tile,', '"SM90_TMA_LOAD_2D"(%at64,')
    text = text.replace("      %map = ", "      %at64 = thread.ptr_add %tile, %c16 : "
                        "!gpu.ptr<f32, shared>, i32\n      %map = ")  # fmt: skip
    kind, message = _report(text)
    assert kind is AccessError
    assert re.match(
        r"tma.mlir:38:\d+: the TMA destination, byte 64 of shared@tma.mlir:11:\d+ "
        r"\(512 bytes\), must be 128-byte aligned and hold the 512-byte box",
        message,
    )


def test_an_expect_tx_short_of_the_box_never_completes_the_phase() -> None:
    """512 bytes land, 1024 were announced: the wait is a deadlock, located at it."""
    text = _variant("%c512 = arith.constant 512", "%c512 = arith.constant 1024")
    kind, message = _report(text)
    assert kind is InterpreterError
    assert re.match(r"tma.mlir:40:5: deadlock.*wait on the mbarrier .*parity 0", message)


def test_an_expect_tx_below_the_box_is_reported_at_the_wait() -> None:
    text = _variant("%c512 = arith.constant 512", "%c512 = arith.constant 128")
    kind, message = _report(text)
    assert kind is AccessError
    assert re.match(r"tma.mlir:40:5: 384 bytes more landed on this mbarrier's phase .*than "
                    r"its expect_tx announced.*thread.mbarrier_wait", message)  # fmt: skip


def test_a_read_of_the_box_before_its_phase_completes_is_reported() -> None:
    text = _variant(WAIT, "")
    kind, message = _report(text)
    assert kind is AccessError
    assert re.match(
        r"tma.mlir:42:\d+: load of byte 0 of shared@.*which the TMA load at "
        r"tma.mlir:37:\d+ writes, before its mbarrier phase completes",
        message,
    )
    # Without the checks, the box's bytes read as poison (NaN) before they land.
    kernel = _kernel(text)
    a, want, ld = _operands(16, 8)
    for backend in BACKENDS:
        d = np.zeros(want.size, np.float32)
        backend.run_kernel(kernel, (1, 1), [a.T.base, 16, 8, ld, d, d.size,
                           tma.TensorMapArgument(TmaTensorMap(TmaDataType.FLOAT32, (16, 8),
                                                              (4 * ld,), (16, 8)), "A")],
                           check_shared=False)  # fmt: skip
        assert np.isnan(d).all()


def test_a_map_beyond_its_array_is_a_located_error() -> None:
    _, _, ld = _operands(40, 20)
    desc = TmaTensorMap(TmaDataType.FLOAT32, (40, 64), (4 * ld,), (16, 8))  # 64 columns, not 20
    kind, message = _report(TMA_TILE_MLIR.read_text(), desc)
    assert kind is AccessError
    assert re.match(r"tma.mlir:37:\d+: tensor map 'A_map' .*reaches byte \d+ of A", message)


def test_a_box_other_than_the_atoms_is_a_located_error() -> None:
    desc = TmaTensorMap(TmaDataType.FLOAT32, (40, 20), (4 * 44,), (16, 4))
    kind, message = _report(TMA_TILE_MLIR.read_text(), desc)
    assert kind is AccessError
    assert re.match(r"tma.mlir:37:\d+: the atom moves 512 bytes but the box \(16, 4\) of "
                    r"tensor map 'A_map' is 256 bytes.*thread.atom", message)  # fmt: skip


def test_a_map_the_drivers_rules_reject_is_refused_at_launch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A leading dimension that is no multiple of 16 bytes (ld 41 f32): the launch names
    the parameter, as on the GPU."""
    k = _jit(tmp_path, monkeypatch)
    a = np.zeros((20, 41), np.float32).T[:40]
    with pytest.raises(TensorMapError, match=r"tma_tile: parameter 'A_map'.*global_strides"):
        k(a, np.zeros(3 * 128 * 3, np.float32))


# ------------------------------------------------------------------ the box on its own
def _bound(desc: TmaTensorMap, array: np.ndarray) -> tma.BoundMap:
    base = argument(array, PointerType(T.f32, AddressSpace.GLOBAL), "X")
    return tma.BoundMap("X_map", desc, base)


def test_element_strides_and_the_nan_fill() -> None:
    x = np.arange(8 * 16, dtype=np.float32).reshape(8, 16)  # row-major 8 x 16: dims (16, 8)
    desc = TmaTensorMap(TmaDataType.FLOAT32, (16, 8), (64,), (8, 4), (2, 1),
                        oob_fill=TmaOobFill.NAN_REQUEST_ZERO_FMA)  # fmt: skip
    got = tma.box(_bound(desc, x), [4, 6]).view(np.float32).reshape(4, 4)
    want = np.full((4, 4), np.nan, np.float32)
    want[:2] = x[6:8, 4:12:2]  # rows 8 and 9 are out of bounds
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("swizzle", list(TmaSwizzle))
def test_the_swizzle_permutes_16_byte_chunks_by_the_row(swizzle: TmaSwizzle) -> None:
    """CuTe's Swizzle<B,4,3> on byte offsets: chunk c of 128-byte row r goes to chunk
    c ^ (r % 2^B)."""
    offsets = np.arange(1024)
    got = tma.swizzle(offsets, swizzle.span_bytes)
    b = swizzle.cute_swizzle[0]
    row, chunk, byte = offsets // 128, (offsets // 16) % 8, offsets % 16
    want = row * 128 + (chunk ^ (row % (1 << b))) * 16 + byte
    np.testing.assert_array_equal(got, want)
    assert sorted(got.tolist()) == offsets.tolist()


@pytest.mark.parametrize("backend", BACKENDS, ids=["interpreter", "native"])
@pytest.mark.parametrize("swizzle", [TmaSwizzle.B64, TmaSwizzle.B128])
def test_a_swizzled_map_lands_the_box_swizzled(swizzle: TmaSwizzle, backend: Any) -> None:
    """The kernel stores the tile as it lies in shared memory: byte o of the box at byte
    swizzle(o). (The box's 64-byte inner dimension is too wide for the 32B swizzle.)"""
    m, n = 40, 20
    _, want, ld = _operands(m, n)
    desc = TmaTensorMap(TmaDataType.FLOAT32, (m, n), (4 * ld,), (16, 8), swizzle=swizzle)
    got = _run(TMA_TILE_MLIR.read_text(), m, n, desc, backend)
    boxes = want.reshape(-1, 128).view(np.uint8)
    placed = np.empty_like(boxes)
    placed[:, tma.swizzle(np.arange(512), swizzle.span_bytes)] = boxes
    assert not np.array_equal(placed, boxes)
    np.testing.assert_array_equal(got.view(np.uint8).reshape(-1, 512), placed)


def test_a_load_no_one_waits_for_is_dropped_with_its_cta() -> None:
    """Each CTA issues its load and never waits (nor reads the tile): the next CTA's load
    into the same shared bytes is no access of pending bytes (the natively kept shadow
    forgets the dropped load, as the interpreter's fresh one per CTA does)."""
    text = _variant(WAIT, "").replace(
        "%v = thread.load %src : !gpu.ptr<f32, shared> -> f32", "%v = arith.constant 1.0 : f32"
    )
    for backend in BACKENDS:
        np.testing.assert_array_equal(_run(text, backend=backend), 1.0)


# ------------------------------------------------------------------ a box a wgmma reads
def _wgmma_after_tma(case: Case) -> str:
    """tests/cpu/wgmma_cases.py's kernel with its image landed by one TMA load (a 2-D u32
    map of 1024-byte rows, the whole image one box) and no proxy fence: the async proxy
    wrote it, so the wgmma may read it as it is."""
    text = case.kernel()
    words = case.image(*case.inputs()).size
    start, end = text.index("    scf.for %i = %first"), text.index("    gpu.barrier\n")
    tma_load = f"""\
    %bar = thread.alloc_shared {{bytes = 8 : i64, align = 8 : i64}} : !gpu.ptr<i64, shared>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %cbytes = arith.constant {4 * words} : i32
    %is0 = arith.cmpi eq, %t, %c0 : i32
    scf.if %is0 {{
      thread.mbarrier_init %bar, %c1 : !gpu.ptr<i64, shared>, i32
      thread.fence_proxy_async
      scf.yield
    }}
    gpu.barrier
    scf.if %is0 {{
      thread.mbarrier_arrive_expect_tx %bar, %cbytes : !gpu.ptr<i64, shared>, i32
      %map = thread.tensor_map "img_map" : i64
      thread.atom "SM90_TMA_LOAD_2D"(%s, %map, %c0, %c0, %bar) {{role = "copy", bits = \
{32 * words} : i64}} : (!gpu.ptr<i32, shared>, i64, i32, i32, !gpu.ptr<i64, shared>) -> ()
      scf.yield
    }}
    thread.mbarrier_wait %bar, %c0 : !gpu.ptr<i64, shared>, i32
"""
    text = text[:start] + tma_load + text[end + len("    gpu.barrier\n") :]
    return text.replace("{reqntid = array<i32: 128, 1, 1>}",
                        '{reqntid = array<i32: 128, 1, 1>, tensor_maps = ["img_map"]}')  # fmt: skip


@pytest.mark.parametrize("backend", BACKENDS, ids=["interpreter", "native"])
def test_a_wgmma_reads_a_landed_box_with_no_proxy_fence(backend: Any) -> None:
    """The box is async-proxy data: no missing-proxy-fence report, and D is right."""
    case = Case(8, kblocks=1)
    a, b = case.inputs()
    img = case.image(a, b)
    rows = img.size // 256
    desc = TmaTensorMap(TmaDataType.UINT32, (256, rows), (1024,), (256, rows))
    out = np.zeros(case.threads * case.atom.fragment("d").count, np.float32)
    kernel = _kernel(_wgmma_after_tma(case))
    backend.run_kernel(kernel, 1, [img, np.zeros(1, np.int32), out,
                                   tma.TensorMapArgument(desc, "img")])  # fmt: skip
    np.testing.assert_allclose(case.tile(out), case.reference(a, b))
