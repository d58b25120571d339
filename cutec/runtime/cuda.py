"""A thin layer over the CUDA driver API (``cuda.bindings.driver``).

Every call goes through `check`, which turns a `CUresult` other than success
into a `CudaError` naming what was being done. Importing this module touches
no driver: `driver()` loads the bindings on first use, and on a machine
without a CUDA driver it raises `NoDriverError`, which says so and points at
``device="cpu"``.

Kernel faults (an illegal address, a trap) are reported by CUDA
asynchronously, at some later call, and leave the context unusable. The
launches since the last synchronisation are remembered, so a fault names the
kernels that may have caused it; with ``CUTEC_LAUNCH_BLOCKING=1`` every launch
is followed by a synchronisation and a fault names its kernel exactly.
"""

from __future__ import annotations

import os
from collections import deque
from dataclasses import dataclass
from functools import cache
from typing import Any

# Errors after which the context is unusable: a kernel faulted.
_STICKY = frozenset(
    {
        "CUDA_ERROR_ILLEGAL_ADDRESS",
        "CUDA_ERROR_ILLEGAL_INSTRUCTION",
        "CUDA_ERROR_MISALIGNED_ADDRESS",
        "CUDA_ERROR_INVALID_ADDRESS_SPACE",
        "CUDA_ERROR_INVALID_PC",
        "CUDA_ERROR_LAUNCH_FAILED",
        "CUDA_ERROR_HARDWARE_STACK_ERROR",
        "CUDA_ERROR_ASSERT",
        "CUDA_ERROR_LAUNCH_TIMEOUT",
        "CUDA_ERROR_TENSOR_MEMORY_LEAK",
    }
)

NO_DRIVER_HINT = (
    'cutec.jit(..., device="cpu") runs kernels on the CPU without a GPU, and '
    "cutec compile writes PTX without one"
)


class CudaError(RuntimeError):
    """A CUDA driver call failed; `code` is the CUresult's name."""

    def __init__(self, message: str, code: str = "") -> None:
        super().__init__(message)
        self.code = code


class NoDriverError(CudaError):
    """No CUDA driver (or no cuda-python bindings, or no such GPU) on this machine."""


class KernelFault(CudaError):
    """A kernel faulted; the CUDA context cannot be used again in this process."""


def launch_blocking() -> bool:
    """CUTEC_LAUNCH_BLOCKING=1: synchronise after every launch (faults named exactly)."""
    return os.environ.get("CUTEC_LAUNCH_BLOCKING", "0") not in ("", "0")


@cache
def driver() -> Any:
    """The ``cuda.bindings.driver`` module, initialised; `NoDriverError` without one."""
    try:
        from cuda.bindings import driver as cu  # heavy; only launching needs it
    except ImportError as e:
        raise NoDriverError(
            f"the CUDA driver bindings are not installed ({e}); {NO_DRIVER_HINT}"
        ) from None
    try:
        (err,) = cu.cuInit(0)
    except Exception as e:  # the bindings raise when libcuda.so cannot be loaded
        raise NoDriverError(f"no CUDA driver was found ({e}); {NO_DRIVER_HINT}") from None
    if err != cu.CUresult.CUDA_SUCCESS:
        raise NoDriverError(
            f"no usable CUDA driver or GPU: cuInit failed with {_name(cu, err)}; {NO_DRIVER_HINT}",
            _name(cu, err),
        )
    return cu


def _name(cu: Any, err: Any) -> str:
    return getattr(err, "name", str(err))


# The kernels launched since the last synchronisation through cutec (the most
# recent 64): the suspects when a fault surfaces. Shared by all threads.
PENDING: deque[str] = deque(maxlen=64)


def check(result: Any, doing: str) -> Any:
    """The values of a driver call's result tuple; raise `CudaError` on failure."""
    cu = driver()
    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != cu.CUresult.CUDA_SUCCESS:
        raise error(err, doing)
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else tuple(rest)


def error(err: Any, doing: str) -> CudaError:
    """The exception for driver error `err` while `doing` something."""
    cu = driver()
    code = _name(cu, err)
    _, text = cu.cuGetErrorString(err)
    text = text.decode() if isinstance(text, bytes) else str(text)
    if code in _STICKY:
        pending = list(PENDING)
        if launch_blocking() and pending:
            where = f"kernel '{pending[-1]}' faulted (CUTEC_LAUNCH_BLOCKING=1 named it)"
        elif pending:
            names = ", ".join(dict.fromkeys(pending))
            where = (
                "a kernel faulted; faults are reported asynchronously, so it is one of the "
                f"kernels cutec launched since its last synchronisation: {names} (or work "
                "launched outside cutec; set CUTEC_LAUNCH_BLOCKING=1 to name it exactly)"
            )
        else:
            where = "a kernel faulted (launched outside cutec, or before the last check)"
        return KernelFault(
            f"{where}: {code}: {text}, seen while {doing}; the CUDA context is unusable "
            "for the rest of this process",
            code,
        )
    return CudaError(f"{doing}: {code}: {text}", code)


@dataclass(frozen=True)
class Device:
    """One GPU with its primary context."""

    ordinal: int
    handle: Any
    context: Any
    capability: tuple[int, int]
    name: str

    @property
    def arch(self) -> str:
        """ptxas's name of this GPU's architecture: sm_90a for Hopper, else sm_XY."""
        major, minor = self.capability
        return "sm_90a" if (major, minor) == (9, 0) else f"sm_{major}{minor}"

    def make_current(self) -> None:
        check(driver().cuCtxSetCurrent(self.context), "making the CUDA context current")

    def synchronize(self) -> None:
        """Wait for all work on this device; faults surface here."""
        self.make_current()
        check(driver().cuCtxSynchronize(), "synchronising the device")
        PENDING.clear()


_DEVICES: dict[int, Device] = {}


def device(ordinal: int = 0) -> Device:
    """The GPU `ordinal` with its primary context retained and current (cached)."""
    found = _DEVICES.get(ordinal)
    if found is not None:
        return found
    cu = driver()
    count = check(cu.cuDeviceGetCount(), "counting GPUs")
    if count == 0:
        raise NoDriverError(f"the CUDA driver sees no GPU; {NO_DRIVER_HINT}")
    if not 0 <= ordinal < count:
        raise NoDriverError(f"there is no GPU {ordinal}: this machine has {count}")
    handle = check(cu.cuDeviceGet(ordinal), f"getting GPU {ordinal}")
    attr = cu.CUdevice_attribute
    major = check(
        cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, handle),
        "reading the compute capability",
    )
    minor = check(
        cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, handle),
        "reading the compute capability",
    )
    raw = check(cu.cuDeviceGetName(256, handle), "reading the GPU's name")
    name = raw.split(b"\0", 1)[0].decode() if isinstance(raw, bytes) else str(raw)
    context = check(cu.cuDevicePrimaryCtxRetain(handle), "retaining the primary context")
    found = Device(ordinal, handle, context, (int(major), int(minor)), name)
    found.make_current()
    _DEVICES[ordinal] = found
    return found


@dataclass
class Function:
    """A kernel of a loaded module."""

    name: str
    handle: Any
    module: Any  # kept so that the module outlives its functions
    device: Device

    def resident_ctas(self, threads: int, smem: int) -> int:
        """CTAs of `threads` threads and `smem` bytes of dynamic shared memory the GPU
        holds at once: its SMs times the CTAs the driver's occupancy calculator fits
        on one (registers, shared memory, block size)."""
        cu = driver()
        per_sm = check(
            cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(self.handle, threads, smem),
            f"computing the occupancy of kernel '{self.name}'",
        )
        count = check(
            cu.cuDeviceGetAttribute(
                cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                self.device.handle,
            ),
            "reading the GPU's SM count",
        )
        return int(per_sm) * int(count)

    def sibling(self, name: str) -> Function:
        """Kernel `name` of the same module."""
        handle = check(
            driver().cuModuleGetFunction(self.module, name.encode()), f"finding kernel '{name}'"
        )
        return Function(name, handle, self.module, self.device)

    def allow_dynamic_smem(self, nbytes: int) -> None:
        """Let launches pass `nbytes` of dynamic shared memory (past the 48 KiB default)."""
        cu = driver()
        attr = cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        check(
            cu.cuFuncSetAttribute(self.handle, attr, nbytes),
            f"allowing kernel '{self.name}' {nbytes} bytes of dynamic shared memory",
        )


def load_function(dev: Device, image: bytes, name: str, *, ptx: bool) -> Function:
    """Load a cubin (or PTX, compiled by the driver's JIT) and look up kernel `name`.

    A PTX image the driver's JIT rejects raises with the JIT's error log.
    """
    cu = driver()
    dev.make_current()
    if ptx:
        module = _load_ptx(cu, image, name)
    else:
        module = check(cu.cuModuleLoadData(image), f"loading the cubin of kernel '{name}'")
    handle = check(cu.cuModuleGetFunction(module, name.encode()), f"finding kernel '{name}'")
    return Function(name, handle, module, dev)


def _load_ptx(cu: Any, image: bytes, name: str) -> Any:
    size = 1 << 14
    log = bytearray(size)
    opt = cu.CUjit_option
    options = [opt.CU_JIT_ERROR_LOG_BUFFER, opt.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES]
    err, module = cu.cuModuleLoadDataEx(image + b"\0", len(options), options, [log, size])
    if err != cu.CUresult.CUDA_SUCCESS:
        text = log.split(b"\0", 1)[0].decode(errors="replace").strip()
        raise CudaError(
            f"the CUDA driver's JIT could not load the PTX of kernel '{name}': "
            f"{_name(cu, err)}" + (f"\n{text}" if text else ""),
            _name(cu, err),
        )
    return module


def launch_failed(err: Any, fn: Function, grid: Any, block: Any, smem: int, stream: int,
                  params: int, cluster: Any = None) -> None:  # fmt: skip
    """After a failed ``cuLaunchKernel`` (``cuLaunchKernelEx`` where the launch has a
    `cluster`): retry once where the thread had no current context (threads torch made
    never set one), else raise naming the kernel."""
    cu = driver()
    err = cu.CUresult(int(err))  # the C launch (fastlaunch) returns a plain int
    if err == cu.CUresult.CUDA_ERROR_INVALID_CONTEXT:
        fn.device.make_current()
        if cluster is None:
            err = cu.cuLaunchKernel(fn.handle, *grid, *block, smem, stream, params, 0)[0]
        else:
            err = launch_cluster(fn.handle, grid, block, cluster, smem, stream, params)
        if not err:
            return
    shape = "" if cluster is None else f", clusters of {tuple(cluster)}"
    raise error(err, f"launching kernel '{fn.name}' (grid {grid}, block {block}{shape}, {smem} "
                f"bytes of dynamic shared memory)")  # fmt: skip


def launch_cluster(handle: Any, grid: Any, block: Any, cluster: Any, smem: int, stream: int,
                   params: int) -> Any:  # fmt: skip
    """``cuLaunchKernelEx`` through cuda.bindings with one attribute, the cluster's shape
    (``CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION``); the grid is a whole number of clusters.
    Returns the CUresult (the C launcher's `launch_ex` is the fast way)."""
    cu = driver()
    attr = cu.CUlaunchAttribute()
    attr.id = cu.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    dim = attr.value.clusterDim
    dim.x, dim.y, dim.z = cluster
    config = cu.CUlaunchConfig()
    config.gridDimX, config.gridDimY, config.gridDimZ = grid
    config.blockDimX, config.blockDimY, config.blockDimZ = block
    config.sharedMemBytes = smem
    config.hStream = cu.CUstream(stream)
    config.attrs = [attr]
    config.numAttrs = 1
    return cu.cuLaunchKernelEx(config, handle, params, 0)[0]


def synchronize_after(fn: Function, stream: int) -> None:
    """CUTEC_LAUNCH_BLOCKING=1: wait for the launch, so that a fault names its kernel."""
    cu = driver()
    capturing = check(cu.cuStreamIsCapturing(stream), "asking whether a stream captures")
    if capturing == cu.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_NONE:
        check(cu.cuStreamSynchronize(stream), f"running kernel '{fn.name}'")
        PENDING.clear()


def run_ptx(
    ptx: str,
    entry: str,
    arrays: list[Any],
    *,
    grid: tuple[int, int, int] = (1, 1, 1),
    block: tuple[int, int, int] = (32, 1, 1),
    smem: int = 0,
    device_ordinal: int = 0,
) -> None:
    """Run hand-written PTX whose parameters are one global pointer per numpy array.

    Each array is copied to the GPU, `entry` is launched and waited for, and every
    array is copied back in place. For tests of atoms and emitted code, where the
    kernel is PTX rather than a `.cute` kernel with a signature (use `cutec.jit`).
    """
    import numpy as np  # only the callers' arrays need it

    cu = driver()
    dev = device(device_ordinal)
    fn = load_function(dev, ptx.encode(), entry, ptx=True)
    if smem > 48 * 1024:
        fn.allow_dynamic_smem(smem)
    pointers = []
    try:
        for a in arrays:
            p = check(cu.cuMemAlloc(max(a.nbytes, 16)), "allocating device memory")
            pointers.append(p)
            check(cu.cuMemcpyHtoD(p, a.ctypes.data, a.nbytes), "copying an array to the GPU")
        values = np.array([int(p) for p in pointers], dtype=np.uint64)
        params = np.array([values.ctypes.data + 8 * i for i in range(len(pointers))], np.uint64)
        launch_params = params.ctypes.data if pointers else 0
        err = cu.cuLaunchKernel(fn.handle, *grid, *block, smem, 0, launch_params, 0)[0]
        if err:
            launch_failed(err, fn, grid, block, smem, 0, launch_params)
        PENDING.append(entry)
        dev.synchronize()
        for a, p in zip(arrays, pointers, strict=True):
            check(cu.cuMemcpyDtoH(a.ctypes.data, p, a.nbytes), "copying an array back")
    finally:
        for p in pointers:
            cu.cuMemFree(p)
        cu.cuModuleUnload(fn.module)
