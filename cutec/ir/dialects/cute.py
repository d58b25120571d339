"""The cute dialect: layout-typed tensors and CuTe's operations on them.

Types live in `cute_types`; the ops (local_tile, partition, copy, gemm ...)
join with the frontend's IR builder.
"""

from __future__ import annotations

from cutec.ir.dialect import Dialect
from cutec.ir.dialects.cute_types import CUTE_TYPES, LayoutSpec, LayoutType, TensorType

__all__ = ["DIALECT", "LayoutSpec", "LayoutType", "TensorType"]

DIALECT = Dialect("cute", ops=(), types=CUTE_TYPES)
