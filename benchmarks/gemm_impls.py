"""The GEMM implementations gemm.py compares, each behind one interface.

An implementation is prepared for one problem's torch tensors and returns a
launch function (no arguments, launches on torch's current stream), or raises
`Unsupported` when it does not run that problem (a tutorial that does not
predicate, on a shape its tiles do not divide). Every implementation computes
C = A @ B^T with C M-major, in cutec's conventions: A is (M,K), B is (N,K),
C is (M,N) with strides (1, ldC); NT: A and B M-/N-major; TN: both K-major.
alpha = 1 and beta = 0 everywhere (cuBLAS through torch.matmul has no alpha or beta).

The cutec-specific code is `cutec_launcher` (and `raw_launch_args` for the
launch-overhead comparison): the rest does not know cutec's API.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
Launch = Callable[[], None]

# dtype keys: inputs and output element types
# "tf32": f32 tensors multiplied with tf32 inputs (the tensor cores read the top 19
# bits): cuBLAS with TF32 allowed, Triton with input_precision="tf32".
DTYPES = {"f32": ("float32", "float32"), "f16": ("float16", "float16"),
          "f16f32": ("float16", "float32"), "bf16f32": ("bfloat16", "float32"),
          "tf32": ("float32", "float32")}  # fmt: skip
# Normwise relative error allowed, by output dtype. f16 output: CuTe's f16
# tutorials and cutec's f16 examples accumulate in f16, whose error grows
# with K (a simulation of chunked f16 accumulation gives about 3e-3 at K = 8192).
TOLERANCE = {"float32": 1e-5, "float16": 1e-2}
# By dtype key where the inputs lose precision: tf32 keeps 10 mantissa bits (2^-11
# relative per product, about 1e-3 normwise against float64).
TOLERANCE_BY_KEY = {"tf32": 5e-3}


class Unsupported(Exception):
    """This implementation does not run this problem (not a failure)."""


@dataclass(frozen=True)
class Problem:
    dtype: str  # a key of DTYPES
    layout: str  # "NT", "TN", "NN" or "TT" (A's majorness, then B's: N = MN-major)
    m: int
    n: int
    k: int


@dataclass(frozen=True)
class CutecKernel:
    """One kernel of one example; `cute` names CuTe's tutorial that it transcribes."""

    example: str
    kernel: str
    dtype: str
    layout: str
    cute: str | None
    defines: tuple[tuple[str, str], ...] = ()  # compile-time parameters (T = bf16)
    variant: tuple[tuple[str, str], ...] = ()  # parameters set over these (--define)

    @property
    def label(self) -> str:
        """``example.kernel``, and ``[BN=128,...]`` when --define changed the kernel (so the
        rows are not taken for the kernel's own configuration)."""
        extra = ",".join(f"{k}={v}" for k, v in self.variant)
        return f"{self.example}.{self.kernel}" + (f"[{extra}]" if extra else "")

    def with_defines(self, extra: tuple[tuple[str, str], ...]) -> CutecKernel:
        """This kernel with compile-time parameters `extra` set over its own."""
        merged = tuple({**dict(self.defines), **dict(extra)}.items())
        return replace(self, defines=merged, variant=extra)


# gemm_auto's tiles per element type (compile-time parameters). On an H100/H200 the
# 16-bit kernels and tf32 TN, NN and TT compile to the warp-specialised TMA + wgmma body,
# at 128x256x64 (tf32: x32) in 4 stages (192 KB); tf32 NT keeps mma.sync at 3 stages.
# The mma.sync body with its stream-K tail is the gemm_stream_k rows.
F32_ACC = (("BN", "256"), ("BK", "64"), ("BP", "4"))
TF32 = (("T", "tf32"), ("BN", "256"))  # 128x256x32
TF32_WS = (*TF32, ("BP", "4"))  # the Hopper body's 4 stages
F16_ACC = (("TC", "f16"), ("TACC", "f16"), ("BK", "64"))  # f16 accumulation, 128x128x64

CUTEC_KERNELS = (
    CutecKernel("sgemm_1", "sgemm_nt", "f32", "NT", "sgemm_1"),
    CutecKernel("sgemm_1", "sgemm_tn", "f32", "TN", "sgemm_1"),
    CutecKernel("sgemm_2", "sgemm_nt", "f32", "NT", "sgemm_2"),
    CutecKernel("sgemm_2", "sgemm_tn", "f32", "TN", "sgemm_2"),
    CutecKernel("sgemm_2_shared", "sgemm_nt", "f32", "NT", "sgemm_2"),
    CutecKernel("sgemm_pipelined", "sgemm_nt", "f32", "NT", "sgemm_2"),
    CutecKernel("sgemm_pipelined", "sgemm_tn", "f32", "TN", "sgemm_2"),
    # The same mainloop written as one stage, pipelined by the `pipeline` pass.
    CutecKernel("sgemm_pipeline_pass", "sgemm_nt", "f32", "NT", "sgemm_2"),
    CutecKernel("sgemm_pipeline_pass", "sgemm_tn", "f32", "TN", "sgemm_2"),
    CutecKernel("sgemm_pipeline_pass", "sgemm_nt_any", "f32", "NT", "sgemm_2"),
    CutecKernel("sgemm_pipeline_pass", "sgemm_tn_any", "f32", "TN", "sgemm_2"),
    CutecKernel("sgemm_sm80", "hgemm_tn", "f16", "TN", "sgemm_sm80"),
    CutecKernel("hgemm_pipeline_pass", "hgemm_tn", "f16", "TN", "sgemm_sm80"),
    CutecKernel("wgmma_sm90", "hgemm_nt", "f16", "NT", "wgmma_sm90"),
    CutecKernel("wgmma_sm90", "hgemm_tn", "f16", "TN", "wgmma_sm90"),
    CutecKernel("wgmma_tma_sm90", "hgemm_nt", "f16", "NT", "wgmma_tma_sm90"),
    CutecKernel("wgmma_tma_sm90", "hgemm_tn", "f16", "TN", "wgmma_tma_sm90"),
    # A warp-specialised TMA + wgmma kernel (issue 29's body, by hand): f16 -> f32.
    CutecKernel("gemm_ws_sm90", "gemm_ws_tn", "f16f32", "TN", None),
    CutecKernel("auto_atoms", "gemm_tn", "f16f32", "TN", None),
    # The whole-tensor gemm: body, tiles, staging and atoms chosen by the compiler, at
    # the tile sizes above (the example's defaults, 128x128x32, are for smaller
    # problems).
    CutecKernel("gemm_auto", "gemm_nt", "f16f32", "NT", None, F32_ACC),
    CutecKernel("gemm_auto", "gemm_tn", "f16f32", "TN", None, F32_ACC),
    CutecKernel("gemm_auto", "gemm_nn", "f16f32", "NN", None, F32_ACC),
    CutecKernel("gemm_auto", "gemm_tt", "f16f32", "TT", None, F32_ACC),
    CutecKernel("gemm_auto", "gemm_nt", "bf16f32", "NT", None, (("T", "bf16"), *F32_ACC)),
    CutecKernel("gemm_auto", "gemm_tn", "bf16f32", "TN", None, (("T", "bf16"), *F32_ACC)),
    CutecKernel("gemm_auto", "gemm_nn", "bf16f32", "NN", None, (("T", "bf16"), *F32_ACC)),
    CutecKernel("gemm_auto", "gemm_tt", "bf16f32", "TT", None, (("T", "bf16"), *F32_ACC)),
    CutecKernel("gemm_auto", "gemm_nt", "tf32", "NT", None, TF32),
    CutecKernel("gemm_auto", "gemm_tn", "tf32", "TN", None, TF32_WS),
    CutecKernel("gemm_auto", "gemm_nn", "tf32", "NN", None, TF32_WS),
    CutecKernel("gemm_auto", "gemm_tt", "tf32", "TT", None, TF32_WS),
    # The same kernels with a stream-K tail (the full waves, then the tiles after them
    # split into shares of k-tiles over one wave: cutec_launcher launches the pair).
    *(
        CutecKernel("gemm_stream_k", f"gemm_{lay.lower()}", dt, lay, None, defines)
        for dt, defines in (("f16f32", ()), ("bf16f32", (("T", "bf16"),)))
        for lay in ("NT", "TN", "NN", "TT")
    ),
    # f16 accumulation and output (acc_dtype = f16): the instruction of CuTe's
    # sgemm_sm80 tutorial, and its BK.
    CutecKernel("gemm_auto", "gemm_tn", "f16", "TN", "sgemm_sm80", F16_ACC),
    CutecKernel("gemm_auto", "gemm_nt", "f16", "NT", None, F16_ACC),
)


# ---- cutec -------------------------------------------------------------------------------


_JITTED: dict[tuple, object] = {}


def jit_kernel(example: str, kernel: str, defines: tuple[tuple[str, str], ...] = ()):
    """cutec.jit of one example's kernel, once per process; a compile error is re-raised."""
    key = (example, kernel, defines)
    if key not in _JITTED:
        try:
            import cutec

            path = str(ROOT / "examples" / f"{example}.cute")
            _JITTED[key] = cutec.jit(path, kernel=kernel, **dict(defines))
        except Exception as exc:
            _JITTED[key] = exc
    if isinstance(_JITTED[key], Exception):
        raise _JITTED[key]
    return _JITTED[key]


def cutec_launcher(spec: CutecKernel, a, b, c) -> Launch:
    """cutec's kernel on a, b, c: k(A, B, C, alpha, beta) on torch's current stream; a
    stream-K pair (examples/gemm_stream_k.cute) with a wave of the GPU's SMs, its
    workspace and flags made here."""
    k = jit_kernel(spec.example, spec.kernel, spec.defines)
    if spec.example != "gemm_stream_k":
        return lambda: k(a, b, c, 1.0, 0.0)
    import torch

    tail = jit_kernel(spec.example, spec.kernel + "_tail", spec.defines)
    sms = torch.cuda.get_device_properties(c.device).multi_processor_count
    # a (BM*BN) column per CTA of the tail's wave (one per SM at the example's tiles;
    # room for 2); BM and BN as --define may set them, else the example's defaults
    defines = dict(spec.defines)
    bm, bn = int(defines.get("BM", 128)), int(defines.get("BN", 256))
    ws = torch.empty(2 * sms, bm * bn, device=c.device).t()
    flags = torch.zeros(2 * sms, dtype=torch.int32, device=c.device)

    def launch() -> None:
        k(a, b, c, 1.0, 0.0, sms)
        tail(a, b, c, 1.0, 0.0, sms, ws, flags)

    return launch


# The parameter list of the NT/TN sgemm kernels in docs/abi.md's order: each tensor's
# pointer, then the extent and stride names it introduces, then the scalars; with the
# .param type each has (pointers .u64, extents and strides .s64, f32 scalars .f32).
_ABI = tuple(
    (name, "u64" if name in ("A", "B", "C") else "f32" if name in ("alpha", "beta") else "s64")
    for name in ("A", "M", "K", "ldA", "B", "N", "ldB", "C", "ldC", "alpha", "beta")
)
_ENTRY = re.compile(r"\.entry\s+(\w+)\s*\(([^)]*)\)")
_PARAM = re.compile(r"\.param\s+\.(\w+)\s+\w+")
_REQNTID = re.compile(r"\.reqntid\s+(\d+)")


@dataclass(frozen=True)
class RawLaunch:
    """What launching `k.ptx` by hand takes: entry name, block size, typed arguments."""

    name: str
    threads: int
    params: list[tuple[str, int | float]]  # (PTX .param type, value), in order


def raw_launch_args(spec: CutecKernel, ptx: str, a, b, c) -> RawLaunch:
    """The sgemm kernel's launch on a, b, c, read off its PTX and checked against _ABI."""
    nt = spec.layout == "NT"
    values = {
        "A": a.data_ptr(), "M": a.shape[0], "K": a.shape[1], "ldA": a.stride(1 if nt else 0),
        "B": b.data_ptr(), "N": b.shape[0], "ldB": b.stride(1 if nt else 0),
        "C": c.data_ptr(), "ldC": c.stride(1), "alpha": 1.0, "beta": 0.0,
    }  # fmt: skip
    entry, threads = _ENTRY.search(ptx), _REQNTID.search(ptx)
    if entry is None or threads is None:
        raise RuntimeError("no .entry with .reqntid in the kernel's PTX")
    types = _PARAM.findall(entry.group(2))
    if types != [t for _, t in _ABI]:
        raise RuntimeError(f"{entry.group(1)}'s parameters are {types}, expected {_ABI}")
    params = [(t, values[name]) for name, t in _ABI]
    return RawLaunch(entry.group(1), int(threads.group(1)), params)


# ---- cuBLAS, Triton, CuTe ----------------------------------------------------------------


def cublas_launcher(a, b, c, tf32: bool = False) -> Launch:
    """torch.mm writes C^T = B @ A^T, the (N,M) row-major storage of the M-major C;
    with `tf32`, TF32 is allowed for this call only."""
    import torch

    ct = c.t()
    if tf32:

        def launch() -> None:
            torch.backends.cuda.matmul.allow_tf32 = True
            try:
                torch.mm(b, a.t(), out=ct)
            finally:
                torch.backends.cuda.matmul.allow_tf32 = False

        return launch
    if a.dtype == c.dtype:
        return lambda: torch.mm(b, a.t(), out=ct)
    try:  # f16 inputs, f32 output: torch.mm's out_dtype (recent torch only)
        torch.mm(b, a.t(), out_dtype=c.dtype, out=ct)
    except (TypeError, RuntimeError) as exc:
        raise Unsupported(f"torch.mm with out_dtype: {exc}") from exc
    return lambda: torch.mm(b, a.t(), out_dtype=c.dtype, out=ct)


def triton_launcher(a, b, c, tf32: bool = False) -> Launch:
    import gemm_triton

    return lambda: gemm_triton.matmul(a, b, c, tf32=tf32)


def cute_launcher(library, tutorial, problem: Problem, a, b, c) -> Launch:
    """CuTe's tutorial through its ctypes entry point; checks the tutorial's constraints."""
    import torch

    why = tutorial.supports(problem.dtype, problem.layout, problem.m, problem.n, problem.k)
    if why:
        raise Unsupported(why)
    if not tutorial.uses_stream and torch.cuda.current_stream().cuda_stream != 0:
        raise Unsupported("launches on the legacy default stream only, not torch's current one")
    fn = library.entry(problem.dtype, problem.layout)
    nt = problem.layout == "NT"
    lda, ldb = a.stride(1 if nt else 0), b.stride(1 if nt else 0)
    m, n, k = problem.m, problem.n, problem.k
    args = (m, n, k, 1.0, a.data_ptr(), lda, b.data_ptr(), ldb, 0.0, c.data_ptr(), c.stride(1))

    def launch() -> None:
        err = fn(*args, torch.cuda.current_stream().cuda_stream)
        if err:
            raise RuntimeError(f"CuTe {tutorial.name}: CUDA error {err}")

    return launch
