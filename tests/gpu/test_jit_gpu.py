"""On a GPU, through `cutec.jit`: every lowered example on random data at several
sizes (tiles that divide and that do not), outputs poisoned with NaN first and
compared with float64 by normwise relative error; the array kinds (torch, CuPy,
cutec.DeviceArray); streams, CUDA-graph capture, the disk cache, and faults.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import cutec.runtime as rt
from cutec.ptx.sass import find_disassembler

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

ROOT = Path(__file__).parents[2]
EXAMPLES = ROOT / "examples"
torch.backends.cuda.matmul.allow_tf32 = False


def normwise(out: torch.Tensor, ref: torch.Tensor) -> float:
    """||out - ref|| / ||ref|| in float64 (NaN anywhere gives NaN)."""
    out64, ref64 = out.double(), ref.double()
    return float(torch.linalg.norm(out64 - ref64) / torch.linalg.norm(ref64))


def operand(rows: int, cols: int, major: str, gen: torch.Generator) -> torch.Tensor:
    """A (rows, cols) f32 matrix, column-major ("m": stride (1, rows)) or row-major."""
    if major == "m":
        return torch.randn(cols, rows, generator=gen, device="cuda").t()
    return torch.randn(rows, cols, generator=gen, device="cuda")


def check_sgemm(k: rt.Kernel, m: int, n: int, kk: int, nt: bool, gen: torch.Generator) -> None:
    """k(A, B, C, 1.25, beta) against float64, beta 0 (C poisoned with NaN) and 0.5;
    A and B M/N-major for NT kernels, K-major for TN ones."""
    a = operand(m, kk, "m" if nt else "k", gen)
    b = operand(n, kk, "m" if nt else "k", gen)
    for beta in (0.0, 0.5):
        c0 = operand(m, n, "m", gen)
        c = c0.clone() if beta else torch.full_like(c0, float("nan"))
        k(a, b, c, 1.25, beta)
        ref = 1.25 * (a.double() @ b.double().t()) + (beta * c0.double() if beta else 0)
        err = normwise(c, ref)
        assert err < 1e-5, (m, n, kk, beta, err)


GEMMS = [
    ("sgemm_1", "sgemm_nt"), ("sgemm_1", "sgemm_tn"), ("sgemm_2", "sgemm_nt"),
    ("sgemm_2", "sgemm_tn"), ("sgemm_2_shared", "sgemm_nt"),
]  # fmt: skip
SIZES = [(128, 128, 8), (256, 384, 64), (132, 260, 45), (300, 140, 29), (1024, 512, 256), (4, 4, 1)]


@pytest.mark.parametrize(("example", "kernel"), GEMMS)
def test_gemm_examples(example: str, kernel: str) -> None:
    k = rt.jit(EXAMPLES / f"{example}.cute", kernel=kernel)
    gen = torch.Generator(device="cuda").manual_seed(1)
    nt = kernel.endswith("nt")
    for m, n, kk in SIZES:
        if nt and (m % 4 or n % 4):
            continue  # the NT kernels assume M % 4 == 0 and N % 4 == 0
        check_sgemm(k, m, n, kk, nt, gen)


@pytest.mark.parametrize("kernel", ["sgemm_nt", "sgemm_tn"])
def test_sgemm_pipelined(kernel: str) -> None:
    """The multistage kernel assumes its tiles divide the sizes: divisible ones only, with
    more k-tiles than stages and fewer (K = 16: the prologue reloads the last tile)."""
    k = rt.jit(EXAMPLES / "sgemm_pipelined.cute", kernel=kernel)
    gen = torch.Generator(device="cuda").manual_seed(2)
    nt = kernel.endswith("nt")
    for m, n, kk in ((128, 128, 16), (256, 384, 160), (1024, 512, 512)):
        check_sgemm(k, m, n, kk, nt, gen)


@pytest.mark.parametrize("kernel", ["sgemm_nt", "sgemm_tn", "sgemm_nt_any", "sgemm_tn_any"])
def test_sgemm_pipeline_pass(kernel: str) -> None:
    """The loop pipelined by the `pipeline` pass (4 stages of 16-deep k-tiles): more
    k-tiles than stages and fewer (K = 16, 48); the `_any` kernels also at sizes the
    tiles do not divide."""
    k = rt.jit(EXAMPLES / "sgemm_pipeline_pass.cute", kernel=kernel)
    gen = torch.Generator(device="cuda").manual_seed(3)
    nt = "_nt" in kernel
    sizes = [(128, 128, 16), (256, 384, 48), (256, 384, 160), (1024, 512, 512)]
    if kernel.endswith("_any"):
        sizes += [(132, 260, 45), (300, 140, 29), (4, 4, 1)] if nt else [(131, 259, 45), (3, 5, 1)]
        sizes = [s for s in sizes if not nt or (s[0] % 4 == 0 and s[1] % 4 == 0)]
    for m, n, kk in sizes:
        check_sgemm(k, m, n, kk, nt, gen)


@pytest.mark.parametrize(
    "kernel", ["copy_kernel", "copy_kernel_vectorized", "copy_if_kernel_vectorized"]
)
def test_tiled_copy(kernel: str) -> None:
    k = rt.jit(EXAMPLES / "tiled_copy.cute", kernel=kernel)
    sizes = [(512, 256), (1024, 128)]
    if kernel == "copy_if_kernel_vectorized":
        sizes += [(528, 300), (4, 1)]
    for m, n in sizes:
        s = torch.randn(n, m, device="cuda").t()  # (M, N) column-major
        d = torch.full_like(s, float("nan"))
        k(s, d)
        assert torch.equal(s, d)


def test_elementwise_and_transpose() -> None:
    axpy = rt.jit(EXAMPLES / "elementwise.cute")
    for m in (1 << 16, 5000):
        x = torch.randn(m, device="cuda", dtype=torch.float16)
        y = torch.randn(m, device="cuda")
        z = torch.full_like(y, float("nan"))
        axpy(x, y, z, 0.75)
        assert torch.equal(z, 0.75 * x.float() + y)  # exactly the f32 arithmetic written
    transpose = rt.jit(EXAMPLES / "transpose.cute")
    for m, n in ((256, 512), (96, 64)):
        s = torch.randn(n, m, device="cuda").t()  # (M, N) column-major
        d = torch.full((m, n), float("nan"), device="cuda").t()  # (N, M) column-major
        transpose(s, d)
        assert torch.equal(d, s.t())


def test_device_array_and_cupy() -> None:
    """No torch involved: cutec's own DeviceArray, and CuPy arrays."""
    k = rt.jit(EXAMPLES / "sgemm_2.cute", kernel="sgemm_nt")
    rng = np.random.default_rng(2)
    m, n, kk = 260, 132, 40
    a = np.asfortranarray(rng.standard_normal((m, kk), dtype=np.float32))
    b = np.asfortranarray(rng.standard_normal((n, kk), dtype=np.float32))
    c = rt.DeviceArray.from_numpy(np.asfortranarray(np.full((m, n), np.nan, np.float32)))
    k(rt.DeviceArray.from_numpy(a), rt.DeviceArray.from_numpy(b), c, 1.0, 0.0)
    rt.synchronize()
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    out = c.numpy()
    assert np.linalg.norm(out - ref) / np.linalg.norm(ref) < 1e-5
    cupy = pytest.importorskip("cupy")
    ca, cb = cupy.asarray(a, order="F"), cupy.asarray(b, order="F")
    cc = cupy.full((m, n), np.nan, np.float32, order="F")
    k(ca, cb, cc, 1.0, 0.0)
    cupy.cuda.runtime.deviceSynchronize()
    out = cupy.asnumpy(cc)
    assert np.linalg.norm(out - ref) / np.linalg.norm(ref) < 1e-5


class _DLPackOnly:
    """A device array known only through DLPack."""

    def __init__(self, array: torch.Tensor) -> None:
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def test_dlpack_arrays() -> None:
    k = rt.jit(EXAMPLES / "transpose.cute")
    s = torch.randn(96, 64, device="cuda").t()
    d = torch.full((64, 96), float("nan"), device="cuda").t()
    k(_DLPackOnly(s), _DLPackOnly(d))
    torch.cuda.synchronize()
    assert torch.equal(d, s.t())


def test_streams_and_graph_capture() -> None:
    k = rt.jit(EXAMPLES / "sgemm_2.cute", kernel="sgemm_nt")
    gen = torch.Generator(device="cuda").manual_seed(3)
    a, b = operand(256, 64, "m", gen), operand(128, 64, "m", gen)
    c = torch.full((128, 256), float("nan"), device="cuda").t()
    s = torch.cuda.Stream()
    k(a, b, c, 1.0, 0.0, stream=s)  # warm up: compile and load outside the capture
    s.synchronize()
    ref = a.double() @ b.double().t()
    assert normwise(c, ref) < 1e-5
    c.fill_(float("nan"))
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        k(a, b, c, 2.0, 0.0)  # on the capturing stream (torch's current one)
    assert torch.isnan(c).all()  # captured, not run
    graph.replay()
    torch.cuda.synchronize()
    assert normwise(c, 2 * ref) < 1e-5


def test_bad_arguments_on_the_gpu() -> None:
    k = rt.jit(EXAMPLES / "sgemm_2.cute", kernel="sgemm_nt")
    a = torch.randn(64, 256, device="cuda").t()
    b = torch.randn(64, 128, device="cuda").t()
    c = torch.randn(128, 256, device="cuda").t()
    with pytest.raises(TypeError, match="parameter 'A' is declared f32; got an array of f16"):
        k(a.half(), b, c, 1.0, 0.0)
    with pytest.raises(ValueError, match="parameter 'B': K is 63 here but 64 in 'A'"):
        k(a, b[:, :63], c, 1.0, 0.0)
    with pytest.raises(ValueError, match="parameter 'A' is in host memory"):
        k(a.cpu(), b, c, 1.0, 0.0)
    with pytest.raises(ValueError, match="not 16-byte aligned"):
        k(torch.randn(64 * 256 + 1, device="cuda")[1:].view(64, 256).t(), b, c, 1.0, 0.0)
    with pytest.raises(TypeError, match="parameter 'alpha' is a scalar of type f32"):
        k(a, b, c, "1", 0.0)


def _run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": f"{ROOT}:{os.environ.get('PYTHONPATH', '')}", **env}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
        env=full, timeout=300,
    )  # fmt: skip


FAULT = """
import cutec.runtime as rt, numpy as np
k = rt.jit('''module {
  kernel @wild_store(%p: !gpu.ptr<f32, global>, %n: index)
      attributes {reqntid = array<i32: 32, 1, 1>, grid = ["1", "1", "1"]} {
    %one = arith.constant 1.0 : f32
    %q = thread.ptr_add %p, %n : !gpu.ptr<f32, global>, index
    thread.store %one, %q : f32, !gpu.ptr<f32, global>
    return
  }
}''')
a = rt.DeviceArray.from_numpy(np.zeros(4, np.float32))
k(a, 1 << 40)
try:
    rt.synchronize()
except rt.KernelFault as e:
    print("FAULT:", e)
"""


def test_a_fault_names_the_kernels_since_the_last_synchronisation() -> None:
    out = _run_python(FAULT)
    assert "FAULT:" in out.stdout, out.stdout + out.stderr
    assert "wild_store" in out.stdout and "CUTEC_LAUNCH_BLOCKING=1" in out.stdout
    blocking = _run_python(FAULT.replace("k(a, 1 << 40)", "k(a, 1 << 40)  # blocking"),
                           CUTEC_LAUNCH_BLOCKING="1")  # fmt: skip
    text = blocking.stdout + blocking.stderr
    assert "kernel 'wild_store' faulted (CUTEC_LAUNCH_BLOCKING=1 named it)" in text, text


def test_cold_compile_and_the_disk_cache(tmp_path: Path) -> None:
    code = f"""
    import time, torch
    t0 = time.perf_counter()
    import cutec.runtime as rt
    from cutec.runtime import cuda
    cuda.device(0)
    t1 = time.perf_counter()
    k = rt.jit({str(EXAMPLES / "sgemm_2.cute")!r}, kernel="sgemm_nt")
    a = torch.randn(64, 256, device="cuda").t(); b = torch.randn(64, 128, device="cuda").t()
    c = torch.empty(128, 256, device="cuda").t()
    t2 = time.perf_counter()
    k(a, b, c, 1.0, 0.0)
    torch.cuda.synchronize()
    t3 = time.perf_counter()
    print(f"TIMES init={{t1-t0:.3f}} compile_load_launch={{t3-t2:.3f}}")
    """
    cold = _run_python(code, CUTEC_CACHE_DIR=str(tmp_path))
    assert "TIMES" in cold.stdout, cold.stderr
    warm = _run_python(code, CUTEC_CACHE_DIR=str(tmp_path))
    assert "TIMES" in warm.stdout, warm.stderr
    print("cold:", cold.stdout.strip(), "| warm:", warm.stdout.strip())
    entries = list(tmp_path.glob("*/*.json"))
    assert entries and not list(tmp_path.glob("*/.tmp-*"))
    # A corrupt entry is ignored and rebuilt.
    for e in entries:
        e.write_text(e.read_text()[: len(e.read_text()) // 2])
    again = _run_python(code, CUTEC_CACHE_DIR=str(tmp_path))
    assert "TIMES" in again.stdout, again.stderr


def test_an_sm80_kernel_runs_on_the_gpu_present() -> None:
    """arch="sm_80" PTX (mma.sync-era features only) is assembled for this GPU and runs."""
    k = rt.jit(EXAMPLES / "sgemm_2.cute", kernel="sgemm_tn", arch="sm_80")
    gen = torch.Generator(device="cuda").manual_seed(5)
    a, b = operand(200, 40, "k", gen), operand(136, 40, "k", gen)
    c = torch.full((136, 200), float("nan"), device="cuda").t()
    k(a, b, c, 1.0, 0.0)
    assert ".target sm_80" in k.ptx
    assert normwise(c, a.double() @ b.double().t()) < 1e-5


def test_inspection() -> None:
    k = rt.jit(EXAMPLES / "sgemm_2.cute", kernel="sgemm_nt")
    assert ".entry sgemm_nt" in k.ptx
    if find_disassembler():
        assert "FFMA" in k.sass
    assert k.resources is not None and k.resources.registers > 0 and not k.resources.spills
    assert "cute.view" in k.ir("partition")
    assert "thread.load" in k.ir("thread") or "load" in k.ir("thread")
