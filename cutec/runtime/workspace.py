"""The memory a stream-K gemm's tail kernel needs, owned by the runtime.

A whole-tensor gemm with ``stream_k = true`` is two kernels (docs/abi.md, *Implicit
arguments*). The second, ``<kernel>__tail``, takes a workspace, one column of BM * BN
partial sums per CTA, and a flag per CTA, zero before the launch (each launch leaves
them zero). Launches on one stream run one after another and may share them; two
streams may run at once and must not. So a tail's loaded variant owns one workspace
per stream, allocated at the stream's first launch with its flags zeroed in that
stream's order, and kept as long as the variant (about 17 MB for 132 CTAs of 128x256
f32 tiles). On the CPU, where launches run one at a time, there is one, in numpy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cutec.dtypes import DTYPES, numpy_dtype
from cutec.ir.signature import (
    IMPLICIT_CTAS,
    IMPLICIT_FLAGS,
    IMPLICIT_WORKSPACE,
    KernelSignature,
    TensorParam,
)
from cutec.runtime import arrays, cuda


@dataclass
class Workspace:
    """A tail kernel's workspace (`IMPLICIT_WORKSPACE`) and flags (`IMPLICIT_FLAGS`) for
    `ctas` CTAs; `device` None for the CPU."""

    element: str  # the partial sums' element type (the accumulators')
    per_cta: int  # elements of one CTA's column: BM * BN
    ctas: int  # columns and flags: the tail's resident CTAs
    device: int | None
    _by_stream: dict[int, tuple[Any, Any]] = field(default_factory=dict)

    @classmethod
    def of(cls, signature: KernelSignature, ctas: int, device: int | None) -> Workspace | None:
        """The workspace `signature`'s implicit arguments ask for, or None if they ask for
        none. Its column's extents are static but the CTA count (`IMPLICIT_CTAS`)."""
        found = {p.name: p for p in signature.implicit if isinstance(p, TensorParam)}
        ws = found.get(IMPLICIT_WORKSPACE)
        if ws is None:
            return None
        assert IMPLICIT_FLAGS in found and ws.shape is not None
        per_cta = math.prod(e for e, _ in ws.flat if e != IMPLICIT_CTAS)
        return cls(ws.element, per_cta, ctas, device)

    def get(self, stream: int) -> tuple[Any, Any]:
        """(workspace, flags) for launches on `stream`: device pointers on a GPU, numpy
        arrays on the CPU."""
        found = self._by_stream.get(stream)
        if found is None:
            found = self._by_stream[stream] = self._allocate(stream)
        if self.device is None:
            return found
        return found[0].ptr, found[1].ptr

    def _allocate(self, stream: int) -> tuple[Any, Any]:
        n = self.per_cta * self.ctas
        if self.device is None:
            ws = np.empty(n, numpy_dtype(DTYPES[self.element]))
            return ws, np.zeros(self.ctas, np.int32)
        ws = arrays.DeviceArray.empty((n,), self.element, self.device)
        flags = arrays.DeviceArray.empty((self.ctas,), "s32", self.device)
        cuda.check(
            cuda.driver().cuMemsetD32Async(flags.ptr, 0, self.ctas, stream),
            "zeroing a stream-K kernel's flags",
        )
        return ws, flags
