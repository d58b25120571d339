"""Bad launch arguments (issue 26): what the launch refuses, by name, and what it must run.

Each case is run on the CPU backend where it can be (device="cpu" runs the kernel and
checks it), else through the GPU launch function with the driver replaced by a
recorder (tests/runtime/test_jit_cpu.py's `_fake_gpu`): the same generated code a GPU
launch runs, up to cuLaunchKernel. The C launcher's share is in test_fast_launch.py;
tests/gpu/test_launch_args_gpu.py runs the torch cases on a GPU.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import cutec.runtime as rt
from cutec.driver import Options, Source, Stage, compile
from cutec.ir.signature import KernelSignature
from cutec.runtime import overlap
from tests.runtime.test_jit_cpu import _fake_gpu, _FakeCai

EXAMPLES = Path(__file__).parents[2] / "examples"


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test its own disk cache, and no kernel object shared with another test."""
    monkeypatch.setenv("CUTEC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(sys.modules["cutec.runtime.jit"], "_KERNELS", {})


# --------------------------------------------------------------------------- outputs
# Written through a view made in a loop and by an atomic only; read by an atomic load.
ACCESSES = """
kernel k(A: f32[N] : (1), B: f32[N] : (1), H: s32[N] : (1), F: s32[N] : (1),
         P: s32[N] : (1))
  grid 1 threads 32
{
  for i in range(2) {
    t = local_tile(B, 16, i)
    t[thread.x % 16] = A[thread.x]
  }
  atomic_add(H, thread.x, 1)
  x = atomic_load(F, 0)
  atomic_store(P, 0, x)
}
"""


def test_the_signature_says_which_parameters_the_kernel_writes() -> None:
    """A parameter is written when an op writes global memory through a view of it:
    `write`, or `atomic` when only atomics write it; an atomic load only reads."""
    result = compile(Source(ACCESSES, "a.cute"), Stage.CUTE, Options())
    sig = result.signatures["k"]
    access = {p.name: p.access for p in sig.params}
    assert access == {"A": "read", "B": "write", "H": "atomic", "F": "read", "P": "atomic"}
    assert KernelSignature.from_json(sig.to_json()) == sig
    data = sig.to_json()
    data["params"][0]["access"] = "sometimes"
    with pytest.raises(ValueError, match=r"params\[0\]\.access: 'sometimes' is none of"):
        KernelSignature.from_json(data)
    tn = compile(Source.from_file(EXAMPLES / "gemm_auto.cute"), Stage.CUTE,
                 Options(kernel="gemm_tn", pipeline=""))  # fmt: skip
    assert [p.access for p in tn.signatures["gemm_tn"].params[:3]] == ["read", "read", "write"]


# In the thread dialect: the store's pointer is chosen at run time between x and y.
PICK = """
module {
  kernel @pick(%x: !gpu.ptr<f32, global>, %y: !gpu.ptr<f32, global>,
               %z: !gpu.ptr<f32, global>, %c: i1) attributes {reqntid = array<i32: 32, 1, 1>} {
    %v = thread.load %z : !gpu.ptr<f32, global> -> f32
    %q = scf.if %c -> (!gpu.ptr<f32, global>) {
      scf.yield %x : !gpu.ptr<f32, global>
    } else {
      scf.yield %y : !gpu.ptr<f32, global>
    }
    thread.store %v, %q : f32, !gpu.ptr<f32, global>
    return
  }
}
"""


def test_a_pointer_chosen_at_run_time_writes_each_choice() -> None:
    result = compile(Source(PICK, "p.mlir", "mlir"), Stage.CUTE, Options())
    access = {p.name: p.access for p in result.signatures["pick"].params if hasattr(p, "access")}
    assert access == {"x": "write", "y": "write", "z": "read"}


def _col_major(rows: int, cols: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.asfortranarray(rng.standard_normal((rows, cols)).astype(np.float32))


def _memmap(tmp_path: Path, a: np.ndarray) -> np.ndarray:
    """A read-only memory map of `a`'s values, in `a`'s order."""
    path = tmp_path / "a.bin"
    a.ravel(order="K").tofile(path)
    order = "F" if a.flags.f_contiguous and not a.flags.c_contiguous else "C"
    return np.memmap(path, a.dtype, "r", shape=a.shape, order=order)


def test_a_read_only_output_is_refused(tmp_path: Path) -> None:
    """A read-only memory map as the output crashed the process (SIGSEGV); as the input
    it is fine. np.broadcast_to's views, read-only too, likewise."""
    k = rt.jit(EXAMPLES / "transpose.cute", device="cpu")
    s = _col_major(64, 32, 1)
    mapped = _memmap(tmp_path, _col_major(32, 64, 2))
    assert not mapped.flags.writeable
    with pytest.raises(rt.ArgumentError, match="parameter 'D' is written by the kernel; "
                       "got a read-only numpy array"):  # fmt: skip
        k(s, mapped)
    d = np.full((32, 64), np.nan, np.float32, order="F")
    k(_memmap(tmp_path, s), d)
    assert np.array_equal(d, s.T)
    row = np.broadcast_to(np.float32(1.0), (32, 64))
    with pytest.raises(ValueError, match="parameter 'D' is written by the kernel"):
        k(s, row)


def test_a_read_only_device_array_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """__cuda_array_interface__ says an array is read-only (CuPy, numba): not as C."""
    k = rt.jit(EXAMPLES / "sgemm_2.cute", kernel="sgemm_nt")
    calls = _fake_gpu(monkeypatch, k)
    a, b = _FakeCai((64, 16), (1, 64), 0x10000), _FakeCai((64, 16), (1, 64), 0x20000)
    with pytest.raises(ValueError, match="parameter 'C' is written by the kernel; got a "
                       "read-only cuda_array_interface array"):  # fmt: skip
        k(a, b, _FakeCai((64, 64), (1, 64), 0x30000, readonly=True), 1.0, 0.0)
    k(_FakeCai((64, 16), (1, 64), 0x10000, readonly=True), b,
      _FakeCai((64, 64), (1, 64), 0x30000), 1.0, 0.0)  # fmt: skip
    assert len(calls) == 1


# --------------------------------------------------------------------------- aliasing
def test_an_output_sharing_memory_with_an_input_is_refused() -> None:
    """k(S, S) of the transpose ran and gave a wrong D (CTAs read tiles others had
    already written); C overlapping A was taken too."""
    t = rt.jit(EXAMPLES / "transpose.cute", device="cpu")
    s = _col_major(64, 64, 3)
    with pytest.raises(ValueError, match="parameter 'D' is written by the kernel and shares "
                       "memory with 'S'"):  # fmt: skip
        t(s, s)
    k = rt.jit(EXAMPLES / "sgemm_2.cute", kernel="sgemm_nt", device="cpu")
    buf, b = _col_major(36, 48, 4), _col_major(40, 8, 5)
    a = buf[:, :8]
    with pytest.raises(ValueError, match=r"parameter 'C' .* shares memory with 'A'"):
        k(a, b, buf[:, 4:44], 1.0, 0.0)  # columns 4..7 in both
    c = buf[:, 8:48]  # A's neighbour columns: apart, so it runs
    want = a.astype(np.float64) @ b.astype(np.float64).T
    k(a, b, c, 1.0, 0.0)
    assert np.linalg.norm(c - want) / np.linalg.norm(want) < 1e-6


def test_allow_alias_lets_a_kernel_run_in_place() -> None:
    """axpy is correct in place (z = y): allow_alias names the output; anything but the
    kernel's outputs there is an error at the call."""
    k = rt.jit(EXAMPLES / "elementwise.cute", device="cpu")
    rng = np.random.default_rng(7)
    x = rng.standard_normal(2048).astype(np.float16)
    y = rng.standard_normal(2048).astype(np.float32)
    want = 0.5 * x.astype(np.float32) + y
    with pytest.raises(ValueError, match=r"parameter 'z' .* shares memory with 'y'"):
        k(x, y, y, 0.5)
    k(x, y, y, 0.5, allow_alias=("z",))
    np.testing.assert_allclose(y, want, rtol=1e-6)
    for wrong in (("y",), "x", 3):
        with pytest.raises(ValueError, match=r"allow_alias=.* must name parameters the kernel "
                           r"writes \(z\)"):  # fmt: skip
            k(x, y, y, 0.5, allow_alias=wrong)
    k(x, y, y, 0.5, allow_alias=True)


def test_interleaved_views_that_share_no_element_are_not_overlaps(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Spans that meet but elements that do not: the top and bottom rows of one
    column-major matrix (A's rows 0..63 and C's 64..127 of a 128-row buffer) launch; one
    row in both is refused."""
    k = rt.jit(EXAMPLES / "sgemm_2.cute", kernel="sgemm_nt")
    calls = _fake_gpu(monkeypatch, k)
    base, ld = 0x100000, 128  # f32 elements: 4 bytes each
    a = _FakeCai((64, 16), (1, ld), base)
    b = _FakeCai((64, 16), (1, 64), 0x900000)
    k(a, b, _FakeCai((64, 64), (1, ld), base + 64 * 4), 1.0, 0.0)
    assert len(calls) == 1
    with pytest.raises(ValueError, match=r"'C' .* shares memory with 'A'"):
        k(a, b, _FakeCai((64, 64), (1, ld), base + 60 * 4), 1.0, 0.0)


def test_overlaps_is_exact_where_it_decides() -> None:
    """overlap.overlaps against a count of shared bytes, over small strided views."""
    cases = [  # (base, extents, strides, bytes) pairs
        ((0, (8,), (2,), 4), (4, (8,), (2,), 4)),  # real and imaginary parts: apart
        ((0, (8,), (2,), 4), (8, (8,), (2,), 4)),  # the same parts, shifted: meet
        ((0, (4, 5), (1, 10), 4), (16, (6, 5), (1, 10), 4)),  # row blocks: apart
        ((0, (4, 5), (1, 10), 4), (12, (6, 5), (1, 10), 4)),  # one row in both
        ((0, (4, 5), (1, 10), 4), (160, (4, 5), (1, 10), 4)),  # column blocks: apart
        ((0, (4,), (1,), 8), (4, (4,), (1,), 4)),  # misaligned halves: meet
        ((0, (0, 5), (1, 10), 4), (0, (4, 5), (1, 10), 4)),  # empty: never
    ]

    def shared(a: tuple, b: tuple) -> bool:
        def bytes_of(x: tuple) -> set[int]:
            base, extents, strides, n = x
            out = set()
            for index in np.ndindex(*extents):
                start = base + n * sum(i * s for i, s in zip(index, strides, strict=True))
                out |= set(range(start, start + n))
            return out

        return bool(bytes_of(a) & bytes_of(b))

    for a, b in cases:
        assert overlap.overlaps(a, b) == shared(a, b), (a, b)
        assert overlap.overlaps(b, a) == shared(a, b), (b, a)
    # Where neither test decides (strides that are not digits of a number), "may meet":
    # a false alarm, never a missed overlap.
    a, b = (0, (3, 3), (3, 4), 4), (4, (2,), (1,), 4)
    assert overlap.overlaps(a, b) and not shared(a, b)


def test_injective_layouts() -> None:
    assert overlap.injective((4, 5), (1, 10)) and overlap.injective((4, 5), (5, 1))
    assert overlap.injective((3, 3), (3, 4))  # not nested, yet one element per coordinate
    assert overlap.injective((1, 5), (0, 2))  # a stride of an extent-1 mode is never used
    assert not overlap.injective((4, 5), (1, 0))  # broadcast
    assert not overlap.injective((4, 5), (1, 2))  # the rows overlap
    assert not overlap.injective((2048, 2048), (1, 1000))  # too many to count: not shown


def test_a_non_injective_output_is_refused_unless_atomics_write_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A C with a stride 0 (an expanded tensor) or rows that overlap has several
    coordinates per element: the kernel's stores race. Only atomics may share them."""
    k = rt.jit(EXAMPLES / "sgemm_2.cute", kernel="sgemm_nt")
    calls = _fake_gpu(monkeypatch, k)
    a, b = _FakeCai((64, 16), (1, 64), 0x10000), _FakeCai((64, 16), (1, 64), 0x20000)
    for strides in ((1, 0), (1, 32)):
        layout = rf"\(64, 64\):\({strides[0]}, {strides[1]}\)"
        with pytest.raises(ValueError, match=rf"parameter 'C' is written by the kernel, but "
                           rf"its layout {layout} gives"):  # fmt: skip
            k(a, b, _FakeCai((64, 64), strides, 0x30000), 1.0, 0.0)
    assert not calls
    h = rt.jit(HISTOGRAM)
    calls = _fake_gpu(monkeypatch, h)
    h(_FakeCai((64,), (1,), 0x10000, "<i4"), _FakeCai((64,), (0,), 0x20000, "<i4"))
    assert len(calls) == 1


HISTOGRAM = """
kernel count(V: s32[N] : (1), H: s32[N] : (s))
  grid ceil_div(N, 32) threads 32
{
  i = block.x * 32 + thread.x
  if i < N {
    atomic_add(H, i, V[i])
  }
}
"""


# --------------------------------------------------------------------------- empty arrays
SMALL = {"BM": 32, "BN": 32, "BK": 32, "BP": 2}


def _empty(rows: int, strides: tuple[int, int]) -> np.ndarray:
    """An empty (rows, 0) f16 array with the given strides in elements."""
    return np.lib.stride_tricks.as_strided(np.empty(0, np.float16), (rows, 0),
                                           tuple(2 * s for s in strides))  # fmt: skip


@pytest.mark.parametrize("kernel", ["gemm_nt", "gemm_tn"])
def test_a_gemm_with_k_0_scales_c(kernel: str) -> None:
    """K = 0: C = alpha * (nothing) + beta * C. The empty A and B were refused: numpy
    gives an empty array strides 0 ("stride 0 is declared 1; got 0"), torch compact
    ones, (1, 1) for a K-major (M, 0), so "ldA = 1 is not divisible by 8"."""
    k = rt.jit(EXAMPLES / "gemm_auto.cute", kernel, device="cpu", **SMALL)
    rng = np.random.default_rng(8)
    m, n = 64, 96
    c0 = rng.integers(-3, 4, (m, n)).astype(np.float32)
    assert np.count_nonzero(c0) > m * n // 2
    torch_like = ((1, m), (1, n)) if kernel == "gemm_nt" else ((1, 1), (1, 1))
    for sa, sb in [((0, 0), (0, 0)), torch_like]:
        c = np.asfortranarray(c0)
        k(_empty(m, sa), _empty(n, sb), c, 2.0, -0.5)
        np.testing.assert_array_equal(c, -0.5 * c0)


def test_an_empty_output_launches_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """M = 0 or N = 0: every output is empty, so nothing is compiled or launched."""
    k = rt.jit(EXAMPLES / "gemm_auto.cute", "gemm_nt", device="cpu", **SMALL)
    compiled: list[int] = []
    monkeypatch.setattr(k, "_variant", lambda key, dev: compiled.append(key))
    rng = np.random.default_rng(9)
    a = np.asfortranarray(rng.standard_normal((64, 40)).astype(np.float16))
    b = np.asfortranarray(rng.standard_normal((96, 40)).astype(np.float16))
    k(np.empty((0, 40), np.float16, order="F"), b, np.empty((0, 96), np.float32, order="F"),
      1.0, 1.0)  # fmt: skip
    k(a, np.empty((0, 40), np.float16, order="F"), np.empty((64, 0), np.float32, order="F"),
      1.0, 1.0)  # fmt: skip
    assert compiled == []


# --------------------------------------------------------------------------- grid, block
def test_grid_and_block_are_checked_at_the_call() -> None:
    k = rt.jit(EXAMPLES / "sgemm_2.cute", kernel="sgemm_nt", device="cpu")
    a, b, c = _col_major(36, 8, 1), _col_major(40, 8, 2), _col_major(36, 40, 3)
    cases = [
        ({"block": (7, 1, 1)}, ValueError,
         r"block=\(7, 1, 1\), but the kernel is compiled for blocks of \(256, 1, 1\)"),
        ({"grid": "abc"}, TypeError, "grid= takes 1 to 3 integers; got 'abc'"),
        ({"grid": (1.5, 1)}, TypeError, r"grid= takes 1 to 3 integers; got \(1.5, 1\)"),
        ({"grid": (1, 1, 1, 1)}, TypeError, "grid= takes 1 to 3 integers"),
        ({"grid": (1, 70000)}, ValueError, r"grid=\(1, 70000\): y is 70000, not in \[0, 65535\]"),
        ({"grid": -1}, ValueError, r"grid=-1: x is -1, not in \[0, 2147483647\]"),
        ({"block": (256, 0)}, ValueError, r"block=\(256, 0\): y is 0, not in \[1, 1024\]"),
        ({"block": True}, TypeError, "block= takes 1 to 3 integers; got True"),
        ({"smem": -4}, ValueError, "smem=-4: a number of bytes is not negative"),
        ({"smem": "x"}, TypeError, "smem= takes 1 to 3 integers"),
    ]  # fmt: skip
    for keywords, kind, message in cases:
        with pytest.raises(kind, match=message) as info:
            k(a, b, c, 1.0, 0.0, **keywords)
        assert isinstance(info.value, rt.ArgumentError) and "sgemm_nt: " in str(info.value)
    k(a, b, c, 1.0, 0.0, block=256, grid=(1, 1))  # as declared; a grid may be chosen


# A kernel in the thread dialect with an upper bound on its block (maxntid), no grid.
IDS = """
module {
  kernel @ids(%y: !gpu.ptr<i32, global>) attributes {maxntid = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x : index
    %p = thread.ptr_add %y, %tid : !gpu.ptr<i32, global>, index
    %v = arith.index_cast %tid : index to i32
    thread.store %v, %p : i32, !gpu.ptr<i32, global>
    return
  }
}
"""


def test_a_block_is_within_cudas_limits_and_the_kernels_bound() -> None:
    k = rt.jit(IDS, device="cpu")
    y = np.full(64, -1, np.int32)
    with pytest.raises(ValueError, match=r"block=\(64, 32\): 2048 threads; a block has at most"):
        k(y, grid=1, block=(64, 32))
    with pytest.raises(ValueError, match=r"block=\(65, 1\): 65 threads, but the kernel is "
                       r"compiled for at most \(64, 1, 1\)"):  # fmt: skip
        k(y, grid=1, block=(65, 1))
    with pytest.raises(TypeError, match="the kernel declares no grid: pass grid="):
        k(y, block=64)
    k(y, grid=1, block=64)
    np.testing.assert_array_equal(y, np.arange(64))


# --------------------------------------------------------------------------- scalars
def test_a_scalar_beyond_its_type_is_an_error() -> None:
    """alpha = 1e300 became inf in f32 and ran; 10**400 raised a bare OverflowError."""
    k = rt.jit(EXAMPLES / "sgemm_2.cute", kernel="sgemm_nt", device="cpu")
    a, b, c0 = _col_major(36, 8, 1), _col_major(40, 8, 2), _col_major(36, 40, 3)
    for alpha in (1e300, -3.5e38, 10**400, np.float64(1e39)):
        with pytest.raises(ValueError, match=r"parameter 'alpha': .* is beyond the range of f32"):
            k(a, b, c0.copy(order="F"), alpha, 0.0)
    c = c0.copy(order="F")
    k(a, b, c, 3.4028235e38, 0.0)  # rounds to the largest f32, not to inf
    assert np.isfinite(c).any()
    c = c0.copy(order="F")
    k(a, b, c, 1.0, float("inf"))  # inf passed is inf meant
    assert np.isinf(c).any()


def test_f16_scalars_are_checked_too() -> None:
    source = """
kernel k(Y: f16[N] : (1), s: f16)
  grid 1 threads 32
{
  if thread.x == 0 {
    Y[0] = s
  }
}
"""
    k = rt.jit(source, device="cpu")
    y = np.zeros(4, np.float16)
    with pytest.raises(ValueError, match="parameter 's': 70000 is beyond the range of f16"):
        k(y, 70000)
    k(y, 65504)
    assert y[0] == 65504


# --------------------------------------------------------------------------- host memory
def test_a_view_beyond_its_buffer_is_refused_on_the_cpu() -> None:
    """as_strided makes a view longer than its memory: the kernel read and wrote past it."""
    k = rt.jit(EXAMPLES / "transpose.cute", device="cpu")
    small = _col_major(64, 16, 1)
    s = np.lib.stride_tricks.as_strided(small, (64, 32), (4, 256))  # twice its memory
    d = np.full((32, 64), np.nan, np.float32, order="F")
    with pytest.raises(ValueError, match="parameter 'S': the array's shape and strides reach "
                       "8192 bytes past its base, but its memory holds 4096"):  # fmt: skip
        k(s, d)
    d_small = np.full((32, 32), np.nan, np.float32, order="F")
    long_d = np.lib.stride_tricks.as_strided(d_small, (32, 64), (4, 128))
    with pytest.raises(ValueError, match="parameter 'D': the array's shape"):
        k(_col_major(64, 32, 2), long_d)
