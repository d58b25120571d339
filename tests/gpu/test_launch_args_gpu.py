"""Bad launch arguments on a GPU (issue 26), with torch tensors: each call twice, so that
the second goes through the C launcher (fastlaunch.c) and is refused or run as the
first, the Python launch function's, was. tests/runtime/test_launch_args.py checks the
same on the CPU backend.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import cutec.runtime as rt

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

EXAMPLES = Path(__file__).parents[2] / "examples"


def col_major(rows: int, cols: int, dtype: object = None) -> torch.Tensor:
    """A (rows, cols) column-major tensor of random values (never zeros)."""
    t = torch.randn(cols, rows, device="cuda").t()
    return t if dtype is None else t.to(dtype)


def twice(call: object, kind: type, message: str) -> None:
    """`call()` raises `kind` matching `message`, through both launch paths."""
    for _ in range(2):
        with pytest.raises(kind, match=message):
            call()  # type: ignore[operator]


def test_an_inference_tensor_is_no_output_outside_inference_mode() -> None:
    k = rt.jit(EXAMPLES / "transpose.cute")
    s = col_major(64, 96)
    with torch.inference_mode():
        d = col_major(96, 64)
    twice(lambda: k(s, d), ValueError, "parameter 'D' is written by the kernel; got an "
          r"inference tensor outside torch\.inference_mode\(\)")  # fmt: skip
    with torch.inference_mode():
        for _ in range(2):
            d.fill_(float("nan"))
            k(s, d)
    torch.cuda.synchronize()
    assert torch.equal(d, s.t())


def test_outputs_sharing_memory_are_refused_unless_allowed() -> None:
    t = rt.jit(EXAMPLES / "transpose.cute")
    s = col_major(64, 64)
    twice(lambda: t(s, s), ValueError, "parameter 'D' .* shares memory with 'S'")
    k = rt.jit(EXAMPLES / "sgemm_2.cute", kernel="sgemm_nt")
    buf, b = col_major(256, 144), col_major(128, 16)
    a = buf[:, :16]
    twice(lambda: k(a, b, buf[:, 8:136], 1.0, 0.0), ValueError, "'C' .* shares memory with 'A'")
    # A in rows 0..255 and C in rows 256..511 of one column-major buffer: their spans
    # meet, their elements do not.
    rows = col_major(512, 128)
    top, below = rows[:256, :16], rows[256:]
    for _ in range(2):
        below.fill_(float("nan"))
        k(top, b, below, 1.0, 0.0)
    torch.cuda.synchronize()
    ref = top.double() @ b.double().t()
    assert torch.allclose(below.double(), ref, rtol=1e-4, atol=1e-4)
    axpy = rt.jit(EXAMPLES / "elementwise.cute")
    x, y = torch.randn(4096, device="cuda").half(), torch.randn(4096, device="cuda")
    want = 0.5 * x.float() + y
    twice(lambda: axpy(x, y, y, 0.5), ValueError, "'z' .* shares memory with 'y'")
    axpy(x, y, y, 0.5, allow_alias="z")
    torch.cuda.synchronize()
    assert torch.allclose(y, want)


def test_an_expanded_output_is_refused() -> None:
    k = rt.jit(EXAMPLES / "sgemm_2.cute", kernel="sgemm_nt")
    a, b = col_major(256, 16), col_major(128, 16)
    c = torch.randn(256, 1, device="cuda").expand(256, 128)  # strides (1, 0)
    layout = r"\(256, 128\):\(1, 0\)"
    twice(lambda: k(a, b, c, 1.0, 0.0), ValueError,
          rf"parameter 'C' is written by the kernel, but its layout {layout}")  # fmt: skip


def test_a_k_0_gemm_scales_c_and_an_empty_c_launches_nothing() -> None:
    k = rt.jit(EXAMPLES / "gemm_auto.cute", kernel="gemm_tn")
    m, n = 256, 384
    a = torch.empty(m, 0, dtype=torch.float16, device="cuda")  # strides (1, 1)
    b = torch.empty(n, 0, dtype=torch.float16, device="cuda")
    c0 = col_major(m, n)
    for _ in range(2):
        c = c0.clone()
        k(a, b, c, 2.0, -0.5)
        torch.cuda.synchronize()
        assert torch.equal(c, -0.5 * c0)
    full_a = torch.randn(m, 64, device="cuda").half()
    empty_c = torch.empty(384, 0, device="cuda").t()  # (0, 384): M = 0
    for _ in range(2):
        k(full_a[:0], torch.randn(n, 64, device="cuda").half(), empty_c, 1.0, 0.0)
    torch.cuda.synchronize()


def test_launch_keywords_and_scalars_are_checked() -> None:
    k = rt.jit(EXAMPLES / "sgemm_2.cute", kernel="sgemm_nt")
    a, b, c = col_major(256, 16), col_major(128, 16), col_major(256, 128)
    with pytest.raises(ValueError, match=r"block=\(7, 1, 1\), but the kernel is compiled"):
        k(a, b, c, 1.0, 0.0, block=(7, 1, 1))
    with pytest.raises(TypeError, match="grid= takes 1 to 3 integers; got 'abc'"):
        k(a, b, c, 1.0, 0.0, grid="abc")
    twice(lambda: k(a, b, c, 1e300, 0.0), ValueError,
          r"parameter 'alpha': 1e\+300 is beyond the range of f32")  # fmt: skip


def test_one_argument_too_many_is_counted_as_the_kernels() -> None:
    k = rt.jit(EXAMPLES / "transpose.cute")
    s, d = col_major(64, 96), col_major(96, 64)
    k(s, d)  # a shape seen: the next calls meet the C launcher first
    twice(lambda: k(s, d, s), TypeError, r"transpose\(\) takes 2 arguments \(S, D\), got 3")
