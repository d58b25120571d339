"""`ptxas -v` output → ResourceUsage records."""

from __future__ import annotations

from cutec.ptx.ptxas import ResourceUsage, parse_resource_usage

# ptxas 13.0 for sm_90a (tests/ptx/cases/smem.mlir).
SM90A = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'smem' for 'sm_90a'
ptxas info    : Function properties for smem
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, used 1 barriers, 1024 bytes smem
ptxas info    : Compile time = 3.018 ms
"""

# Two kernels for sm_80, the second spilling (the form ptxas prints with -maxrregcount).
TWO_KERNELS = """ptxas warning : For profile sm_80 adjusting per thread register count of 16 to 24
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'vadd' for 'sm_80'
ptxas info    : Function properties for vadd
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 22 registers, used 0 barriers, 380 bytes cmem[0]
ptxas info    : Compiling entry function 'gemm' for 'sm_80'
ptxas info    : Function properties for gemm
    48 bytes stack frame, 44 bytes spill stores, 40 bytes spill loads
ptxas info    : Used 24 registers, used 1 barriers, 48 bytes cumulative stack size, \
8192 bytes smem, 368 bytes cmem[0]
"""


def test_one_kernel() -> None:
    assert parse_resource_usage(SM90A) == {
        "smem": ResourceUsage("smem", "sm_90a", registers=12, shared_bytes=1024, barriers=1)
    }


def test_kernels_and_spills() -> None:
    usage = parse_resource_usage(TWO_KERNELS)
    assert list(usage) == ["vadd", "gemm"]
    assert usage["vadd"] == ResourceUsage("vadd", "sm_80", registers=22)
    assert not usage["vadd"].spills
    gemm = usage["gemm"]
    assert gemm == ResourceUsage(
        "gemm",
        "sm_80",
        registers=24,
        shared_bytes=8192,
        stack_frame=48,
        spill_stores=44,
        spill_loads=40,
        barriers=1,
    )
    assert gemm.spills
    assert str(gemm) == (
        "gemm (sm_80): 24 registers, 8192 bytes smem, 48 bytes stack, "
        "44 bytes spill stores, 40 bytes spill loads, 1 barriers"
    )


def test_no_verbose_output_is_no_kernels() -> None:
    assert parse_resource_usage("ptxas fatal   : Unresolved extern function 'f'\n") == {}
