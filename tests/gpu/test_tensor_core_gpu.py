"""On a GPU: the tensor-core path (ldmatrix, mma.sync, swizzled shared memory,
multistage cp.async). The single-warp kernel's output must equal the CPU
interpreter's bit for bit (small-integer inputs: every sum is exact); sgemm_sm80
(f16 in, f16 accumulation) is compared with float64 at 256 and 512, for the
present GPU's target and for sm_80 PTX.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import cutec
import cutec.runtime as rt
from tests.cpu.mma_cases import MMA_ATOM_KERNEL, MMA_CASES, MMA_REGISTERS_KERNEL, case_atom
from tests.cpu.test_collective import run_mma_case

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

EXAMPLES = Path(__file__).parents[2] / "examples"
HOPPER = torch.cuda.get_device_capability() == (9, 0)  # gemm_auto's warp-specialised body

_TORCH = {
    "f16": torch.float16,
    "bf16": torch.bfloat16,
    "tf32": torch.float32,
    "f32": torch.float32,
    "s8": torch.int8,
    "s32": torch.int32,
}


def _on_gpu(x: np.ndarray, dtype: str) -> torch.Tensor:
    """`x` on the GPU as `dtype`, with its strides (a Fortran-order array stays m-major)."""
    host = np.asarray(x, dtype=np.float32 if dtype in ("bf16", "tf32") else x.dtype)
    if host.flags.f_contiguous and host.ndim == 2 and not host.flags.c_contiguous:
        return torch.from_numpy(host.T.copy()).to("cuda", _TORCH[dtype]).t()
    return torch.from_numpy(host.copy()).to("cuda", _TORCH[dtype])


@pytest.mark.parametrize("case", sorted(MMA_CASES))
def test_single_warp_mma_kernel_equals_the_interpreter_bit_for_bit(case: str) -> None:
    atom = case_atom(case)
    a, b, c0, want = run_mma_case(case)  # the interpreter's result on the same inputs
    k = rt.jit(MMA_ATOM_KERNEL, **MMA_CASES[case])
    ga, gb = _on_gpu(a, atom.a_type), _on_gpu(b, atom.b_type)
    gc = _on_gpu(c0, atom.c_type)
    k(ga, gb, gc)
    got = gc.cpu()
    want_t = torch.from_numpy(np.ascontiguousarray(want).astype(want.dtype))
    assert torch.equal(got.contiguous().view(-1), want_t.to(got.dtype).contiguous().view(-1))


def test_f64_mma_kernel_equals_float64() -> None:
    k = rt.jit(MMA_REGISTERS_KERNEL)
    gen = torch.Generator(device="cuda").manual_seed(7)
    a = torch.randint(-4, 5, (8, 4), generator=gen, device="cuda").double()
    b = torch.randint(-4, 5, (8, 4), generator=gen, device="cuda").double()
    c0 = torch.randint(-4, 5, (8, 8), generator=gen, device="cuda").double().t()
    c = c0.clone()
    k(a, b, c)
    assert torch.equal(c, a @ b.t() + c0)


def _normwise(out: torch.Tensor, ref: torch.Tensor) -> float:
    out64, ref64 = out.double(), ref.double()
    return float(torch.linalg.norm(out64 - ref64) / torch.linalg.norm(ref64))


def _check_hgemm_tn(kern: rt.Kernel, m: int, n: int, k: int, gen: torch.Generator) -> None:
    """An f16 TN kernel (K-major A and B, M-major C) against float64, beta 0 (C NaN) and
    0.5: f16 accumulation keeps the normwise error well under 1e-2."""
    a = torch.randn(m, k, generator=gen, device="cuda").half()  # (M,K) k-major
    b = torch.randn(n, k, generator=gen, device="cuda").half()  # (N,K) k-major
    for beta in (0.0, 0.5):
        c0 = torch.randn(n, m, generator=gen, device="cuda").half().t()  # (M,N) m-major
        c = c0.clone() if beta else torch.full_like(c0, float("nan"))
        kern(a, b, c, 1.0, beta)
        ref = a.double() @ b.double().t() + (beta * c0.double() if beta else 0)
        assert torch.isfinite(c).all()
        assert _normwise(c, ref) < 1e-2, (m, n, k, beta)


@pytest.mark.parametrize("arch", [None, "sm_80"])
@pytest.mark.parametrize(("m", "n", "k"), [(256, 256, 256), (512, 512, 512), (256, 512, 128)])
def test_sgemm_sm80_against_float64(m: int, n: int, k: int, arch: str | None) -> None:
    """f16 inputs, f16 accumulation (as CuTe's tutorial): normwise error well under 1e-2
    (a wrong tile or fragment gives an error of order 1); beta = 0 never reads C (NaN)."""
    kern = rt.jit(EXAMPLES / "sgemm_sm80.cute", arch=arch)
    gen = torch.Generator(device="cuda").manual_seed(m + n + k)
    _check_hgemm_tn(kern, m, n, k, gen)
    if arch is not None:
        assert f".target {arch}" in kern.ptx


@pytest.mark.parametrize("arch", [None, "sm_80"])
@pytest.mark.parametrize(("m", "n", "k"), [(256, 256, 64), (256, 256, 128), (512, 512, 512)])
def test_hgemm_pipeline_pass_against_float64(m: int, n: int, k: int, arch: str | None) -> None:
    """sgemm_sm80 with its mainloop pipelined by the `pipeline` pass (3 stages of 64):
    fewer k-tiles than stages (1, 2) and more (8)."""
    kern = rt.jit(EXAMPLES / "hgemm_pipeline_pass.cute", arch=arch)
    gen = torch.Generator(device="cuda").manual_seed(m + n + k + 1)
    _check_hgemm_tn(kern, m, n, k, gen)


@pytest.mark.parametrize("arch", [None, "sm_80"])
@pytest.mark.parametrize("bk", [32, 64])
@pytest.mark.parametrize(("m", "n", "k"), [(256, 256, 512), (200, 136, 72)])
def test_gemm_auto_f16_accumulation_against_float64(m: int, n: int, k: int, bk: int,
                                                     arch: str | None) -> None:  # fmt: skip
    """gemm_auto TN with acc_dtype = f16 (sgemm_sm80's instruction) and an f16 C,
    at sizes the tiles divide and sizes they do not."""
    kern = rt.jit(EXAMPLES / "gemm_auto.cute", "gemm_tn", arch=arch, TC="f16", TACC="f16", BK=bk)
    _check_hgemm_tn(kern, m, n, k, torch.Generator(device="cuda").manual_seed(m + n + k + bk))
    # (the PTX of the variant the launches ran)
    if arch is None and HOPPER:  # the warp-specialised body
        assert "wgmma.mma_async.sync.aligned.m64n128k16.f16.f16.f16" in kern.ptx
    else:
        assert "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16" in kern.ptx


@pytest.mark.parametrize("t", ["f16", "bf16"])
@pytest.mark.parametrize("kernel", ["gemm_nt", "gemm_tn", "gemm_nn", "gemm_tt"])
def test_persistent_gemm_auto_against_float64(kernel: str, t: str) -> None:
    """PERSIST = true at the benchmark's tiles: one wave of CTAs (resident_ctas, from
    the driver's occupancy), each looping over several 128x256 tiles of C, the
    epilogue's chunk in the stages' bytes; sizes the tiles divide and ones they do not."""
    kern = rt.jit(EXAMPLES / "gemm_auto.cute", kernel, T=t, BN=256, BK=64,
                  PERSIST="true")  # fmt: skip
    a_mn, b_mn = kernel[-2] == "n", kernel[-1] == "t"
    for m, n, k in [(4096, 2048, 128), (2056, 2184, 264)]:  # 256 and 153 tiles
        gen = torch.Generator(device="cuda").manual_seed(m + 3 * n + k)
        a = torch.randn(m, k, generator=gen, device="cuda").to(_TORCH[t])
        b = torch.randn(n, k, generator=gen, device="cuda").to(_TORCH[t])
        ga = a.t().contiguous().t() if a_mn else a
        gb = b.t().contiguous().t() if b_mn else b
        for beta in (0.0, -1.0):
            c0 = torch.randn(n, m, generator=gen, device="cuda").t()
            c = c0.clone() if beta else torch.full_like(c0, float("nan"))
            kern(ga, gb, c, 0.5, beta)
            ref = 0.5 * (a.double() @ b.double().t()) + (beta * c0.double() if beta else 0)
            assert torch.isfinite(c).all()
            assert _normwise(c, ref) < 1e-5, (m, n, k, beta)


def test_gemm_auto_with_only_the_tile_against_float64() -> None:
    """gemm_tn_tile: no threads or grid clause; the launch is the whole-tensor gemm's."""
    kern = rt.jit(EXAMPLES / "gemm_auto.cute", "gemm_tn_tile")
    for m, n, k in [(512, 512, 256), (200, 300, 72)]:
        gen = torch.Generator(device="cuda").manual_seed(m + n + k)
        a = torch.randn(m, k, generator=gen, device="cuda").half()
        b = torch.randn(n, k, generator=gen, device="cuda").half()
        c = torch.full((n, m), float("nan"), device="cuda").t()  # (M,N) m-major
        kern(a, b, c, 1.0, 0.0)
        ref = a.double() @ b.double().t()
        assert torch.isfinite(c).all()
        assert _normwise(c, ref) < 1e-5, (m, n, k)
        # 8 warps of mma.sync, or on a Hopper the warp-specialised body's 3 warpgroups
        assert (".reqntid 384, 1, 1" if HOPPER else ".reqntid 256, 1, 1") in kern.ptx


def test_sgemm_sm80_refuses_sizes_its_tiles_do_not_divide() -> None:
    kern = rt.jit(EXAMPLES / "sgemm_sm80.cute")
    a = torch.zeros(300, 128, device="cuda", dtype=torch.float16)
    b = torch.zeros(256, 128, device="cuda", dtype=torch.float16)
    c = torch.zeros(256, 300, device="cuda", dtype=torch.float16).t()
    with pytest.raises(cutec.ArgumentError):
        kern(a, b, c, 1.0, 0.0)


@pytest.mark.parametrize("arch", [None, "sm_80"])
@pytest.mark.parametrize(("m", "n", "k"), [(256, 256, 256), (512, 512, 512), (256, 512, 128)])
def test_auto_atoms_against_float64(m: int, n: int, k: int, arch: str | None) -> None:
    """examples/auto_atoms.cute as written: select-atoms' mma.sync (f16 in, f32
    accumulation), ldmatrix and cp.async; f32 accumulation keeps the normwise error
    far below f16's (a wrong tile or fragment gives an error of order 1)."""
    kern = rt.jit(EXAMPLES / "auto_atoms.cute", arch=arch)
    gen = torch.Generator(device="cuda").manual_seed(m + 2 * n + k)
    a = torch.randn(m, k, generator=gen, device="cuda").half()  # (M,K) k-major
    b = torch.randn(n, k, generator=gen, device="cuda").half()  # (N,K) k-major
    for beta in (0.0, -1.0):
        c0 = torch.randn(n, m, generator=gen, device="cuda").t()  # (M,N) m-major, f32
        c = c0.clone() if beta else torch.full_like(c0, float("nan"))
        kern(a, b, c, 0.5, beta)
        ref = 0.5 * (a.double() @ b.double().t()) + (beta * c0.double() if beta else 0)
        assert torch.isfinite(c).all()
        assert _normwise(c, ref) < 1e-4, (m, n, k, beta)
    for instruction in ("mma.sync.aligned.m16n8k16", "ldmatrix.sync", "cp.async.cg"):
        assert instruction in kern.ptx
    if arch is not None:
        assert f".target {arch}" in kern.ptx


@pytest.mark.parametrize("arch", [None, "sm_80"])
@pytest.mark.parametrize(("t", "tol"), [("f16", 1e-5), ("bf16", 1e-5), ("tf32", 2e-3)])
@pytest.mark.parametrize("kernel", ["gemm_nt", "gemm_tn", "gemm_nn", "gemm_tt"])
def test_gemm_auto_against_float64(kernel: str, t: str, tol: float, arch: str | None) -> None:
    """examples/gemm_auto.cute (the whole-tensor gemm, the tile pass): every
    majorness from the tensors' layouts, f32 accumulation, sizes the 128x128x32
    tiles divide and sizes they do not. f16 and bf16 products are exact in f32, so
    only the sums round; tf32 rounds the inputs to a 10-bit mantissa."""
    kern = rt.jit(EXAMPLES / "gemm_auto.cute", kernel, arch=arch, T=t)
    a_mn, b_mn = kernel[-2] == "n", kernel[-1] == "t"
    for m, n, k in [(256, 256, 256), (512, 384, 96), (200, 136, 72)]:
        gen = torch.Generator(device="cuda").manual_seed(m + 3 * n + k)
        a = torch.randn(m, k, generator=gen, device="cuda").to(_TORCH[t])
        b = torch.randn(n, k, generator=gen, device="cuda").to(_TORCH[t])
        ga = a.t().contiguous().t() if a_mn else a  # (M,K) m-major: stride (1, M)
        gb = b.t().contiguous().t() if b_mn else b
        for beta in (0.0, -1.0):
            c0 = torch.randn(n, m, generator=gen, device="cuda").t()  # (M,N) m-major, f32
            c = c0.clone() if beta else torch.full_like(c0, float("nan"))
            kern(ga, gb, c, 0.5, beta)
            ref = 0.5 * (a.double() @ b.double().t()) + (beta * c0.double() if beta else 0)
            assert torch.isfinite(c).all()
            assert _normwise(c, ref) < tol, (m, n, k, beta)
    # On a Hopper the default target is sm_90a, whose Hopper body (TMA + wgmma) takes
    # 16-bit operands in any majorness and tf32 with a K-major one (all but NT).
    hopper = arch is None and torch.cuda.get_device_capability() == (9, 0)
    if hopper and (t != "tf32" or kernel != "gemm_nt"):
        expected = ("wgmma.mma_async", "cp.async.bulk.tensor")
    else:
        expected = ("mma.sync.aligned", "cp.async.cg")
    for instruction in expected:
        assert instruction in kern.ptx


@pytest.mark.parametrize("t", ["f16", "bf16"])
@pytest.mark.parametrize("lay", ["nt", "tn", "nn", "tt"])
def test_stream_k_pair_against_float64(lay: str, t: str) -> None:
    """examples/gemm_stream_k.cute at its tiles (128x256): the full waves' kernel, then
    the stream-K tail over one wave of CTAs (partials through WS, release/acquire
    flags), with W the GPU's SMs; tails that split and one that does not. The small-K
    cases split with `split_min_k = 0`; the last runs the example as written, with a K
    large enough to split by default."""
    text = (EXAMPLES / "gemm_stream_k.cute").read_text()
    any_k = text.replace("wave = W", "wave = W, split_min_k = 0")
    w = torch.cuda.get_device_properties(0).multi_processor_count
    ws = torch.full((4 * w, 128 * 256), float("nan"), device="cuda").t()  # (BM*BN, P)
    fl = torch.zeros(4 * w, dtype=torch.int32, device="cuda")
    a_mn, b_mn = lay[0] == "n", lay[1] == "t"
    # tiles: w + 8 (8 left: split), 17 x 20 (on 132 SMs two waves and 76 left: split),
    # 2w - 1 (w - 1 left: not split, the tail launches nothing); sizes the tiles do not
    # divide, K not a multiple of 32; then w + 8 with K = 8200 (saves (w - 8) / w of it)
    cases = [(any_k, 128 * (w + 8), 200, 1000), (any_k, 2056, 256 * ((5 * w + 1) // 32), 520),
             (any_k, 128 * (2 * w - 1), 256, 264), (text, 128 * (w + 8), 136, 8200)]  # fmt: skip
    pairs = {src: (rt.jit(src, f"gemm_{lay}", T=t), rt.jit(src, f"gemm_{lay}_tail", T=t))
             for src in (any_k, text)}  # fmt: skip
    for source, m, n, k in cases:
        full, tail = pairs[source]
        gen = torch.Generator(device="cuda").manual_seed(m + 3 * n + k)
        a = torch.randn(m, k, generator=gen, device="cuda").to(_TORCH[t])
        b = torch.randn(n, k, generator=gen, device="cuda").to(_TORCH[t])
        ga = a.t().contiguous().t() if a_mn else a
        gb = b.t().contiguous().t() if b_mn else b
        c0 = torch.randn(n, m, generator=gen, device="cuda").t()
        c = c0.clone()
        full(ga, gb, c, 0.5, -1.0, w)
        tail(ga, gb, c, 0.5, -1.0, w, ws, fl)
        ref = 0.5 * (a.double() @ b.double().t()) - c0.double()
        assert torch.isfinite(c).all()
        assert _normwise(c, ref) < 1e-5, (m, n, k)
        assert not fl.any()


@pytest.mark.parametrize("t", ["f16", "bf16"])
@pytest.mark.parametrize("lay", ["nt", "tn", "nn", "tt"])
def test_stream_k_true_against_float64(lay: str, t: str) -> None:
    """gemm_auto with STREAM_K = true at the benchmark's tiles (128x256x64): one call,
    the kernel and its tail, the wave and the workspace the runtime's. The cases of the
    pair's test (split, split over two waves, unsplit; with `split_min_k = 0`, then the
    example as written with K = 8200), then one on a second stream, which gets a
    workspace of its own."""
    text = (EXAMPLES / "gemm_auto.cute").read_text()
    any_k = text.replace("stream_k = STREAM_K)", "stream_k = STREAM_K, split_min_k = 0)")
    tiles = {"BN": 256, "BK": 64, "STREAM_K": True}
    kernels = {src: rt.jit(src, f"gemm_{lay}", T=t, **tiles) for src in (any_k, text)}
    w = torch.cuda.get_device_properties(0).multi_processor_count
    a_mn, b_mn = lay[0] == "n", lay[1] == "t"
    cases = [(any_k, 128 * (w + 8), 200, 1000), (any_k, 2056, 256 * ((5 * w + 1) // 32), 520),
             (any_k, 128 * (2 * w - 1), 256, 264), (text, 128 * (w + 8), 136, 8200)]  # fmt: skip
    side = torch.cuda.Stream()
    for i, (source, m, n, k) in enumerate([*cases, cases[0]]):
        gen = torch.Generator(device="cuda").manual_seed(m + 3 * n + k)
        a = torch.randn(m, k, generator=gen, device="cuda").to(_TORCH[t])
        b = torch.randn(n, k, generator=gen, device="cuda").to(_TORCH[t])
        ga = a.t().contiguous().t() if a_mn else a
        gb = b.t().contiguous().t() if b_mn else b
        c0 = torch.randn(n, m, generator=gen, device="cuda").t()
        c = c0.clone()
        if i < len(cases):
            kernels[source](ga, gb, c, 0.5, -1.0)
        else:
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                kernels[source](ga, gb, c, 0.5, -1.0)
            torch.cuda.current_stream().wait_stream(side)
        ref = 0.5 * (a.double() @ b.double().t()) - c0.double()
        assert torch.isfinite(c).all()
        assert _normwise(c, ref) < 1e-5, (m, n, k)
    torch.cuda.synchronize()
    # (one workspace per loaded variant: the cases' extents specialise differently)
    workspaces = [v.then.workspace for v in kernels[any_k]._launcher.__variants__.values()]
    assert sorted(len(ws._by_stream) for ws in workspaces)[-1] == 2  # case 0's: 2 streams
    for ws in workspaces:
        for _, flags in ws._by_stream.values():
            assert not torch.as_tensor(flags, device="cuda").any()
