"""Loading and launching compiled kernels: the CUDA driver layer, the JIT API, the cache.

    import cutec
    k = cutec.jit("examples/sgemm_2.cute", kernel="sgemm_nt")
    k(A, B, C, 1.0, 0.0)

Importing this package touches no GPU driver; the first launch does.
"""

from __future__ import annotations

from cutec.ptx.ptxas_warnings import PerformanceWarning
from cutec.runtime.arrays import DeviceArray
from cutec.runtime.cuda import CudaError, KernelFault, NoDriverError
from cutec.runtime.errors import ArgumentError
from cutec.runtime.jit import Kernel, jit, synchronize

__all__ = [
    "ArgumentError",
    "CudaError",
    "DeviceArray",
    "Kernel",
    "KernelFault",
    "NoDriverError",
    "PerformanceWarning",
    "jit",
    "synchronize",
]
