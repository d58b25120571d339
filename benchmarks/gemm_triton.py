"""A matmul in the style of Triton's tutorial (03-matrix-multiplication), for gemm.py.

C[M,N] = A[M,K] @ B[N,K]^T with any strides, so one kernel serves the NT and TN
layouts and writes cutec's M-major C. As in the tutorial: program ids grouped
along M for L2 reuse, a K loop over BLOCK_K slices, an f32 accumulator, the
result cast to C's element type; unlike the tutorial, the K tail is masked on
both operands and the stores are masked (ragged shapes). A few configurations
are autotuned per dtype, shape and layout. For f32 the dot runs with
``input_precision="ieee"``: the default would be TF32.
"""

from __future__ import annotations

import triton
import triton.language as tl


def _configs(blocks: list[tuple[int, int, int, int, int]]) -> list[triton.Config]:
    return [
        triton.Config(
            {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8},
            num_stages=stages,
            num_warps=warps,
        )
        for bm, bn, bk, stages, warps in blocks
    ]


# (BLOCK_M, BLOCK_N, BLOCK_K, stages, warps): the tutorial's first CUDA configs for
# 16-bit inputs; for f32 the same tiles with BLOCK_K 32 (an f32 slice is twice the bytes).
F16_CONFIGS = _configs(
    [(128, 256, 64, 3, 8), (64, 256, 32, 4, 4), (128, 128, 32, 4, 4), (128, 64, 32, 4, 4)]
)
F32_CONFIGS = _configs(
    [(128, 128, 32, 3, 8), (128, 64, 32, 4, 4), (64, 128, 32, 4, 4), (64, 64, 32, 4, 4)]
)
KEY = ["M", "N", "K", "stride_am", "stride_ak", "stride_bn", "stride_bk"]


@triton.jit
def _matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bn, stride_bk, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr, INPUT_PRECISION: tl.constexpr,
):  # fmt: skip
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=offs_k[None, :] < k_left, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < k_left, other=0.0)
        acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(c_ptr.dtype.element_ty)

    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


_f32_kernel = triton.autotune(configs=F32_CONFIGS, key=KEY)(_matmul_kernel)
_f16_kernel = triton.autotune(configs=F16_CONFIGS, key=KEY)(_matmul_kernel)


def matmul(a, b, c, tf32: bool = False) -> None:
    """c = a @ b.T for torch tensors a (M,K), b (N,K), c (M,N), on torch's current stream;
    f32 inputs are multiplied exactly ("ieee"), or as tf32 with `tf32`."""
    import torch

    m, k = a.shape
    n = b.shape[0]
    f32 = a.dtype == torch.float32
    kernel = _f32_kernel if f32 else _f16_kernel

    def grid(meta: dict) -> tuple[int]:
        return (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]),)

    kernel[grid](
        a, b, c, m, n, k,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        # None: tl.dot's default, for 16-bit inputs.
        INPUT_PRECISION=("tf32" if tf32 else "ieee") if f32 else None,
    )  # fmt: skip
