"""What the lowering passes ask of a cute tensor value: its element type, its address
space, and its static sizes (lower-to-thread and its atom rules, lower_atoms.py)."""

from __future__ import annotations

from cutec.diagnostics import CompileError
from cutec.ir.core import Operation, Value
from cutec.ir.dialects.cute_types import TensorType
from cutec.ir.layout_of import LayoutAnalysis
from cutec.ir.types import Type
from cutec.layout import ComposedLayout, Layout, size
from cutec.layout.symbolic import is_static
from cutec.target import AddressSpace


def element_of(v: Value) -> Type:
    t = v.type
    assert isinstance(t, TensorType)
    return t.element


def space_of(v: Value) -> AddressSpace:
    t = v.type
    assert isinstance(t, TensorType)
    return t.space


def static_size(la: LayoutAnalysis, v: Value, op: Operation) -> int:
    """size(v), which the lowering unrolls: a located error when it is not static."""
    n = size(la.layout_of(v))
    if not is_static(n):
        raise CompileError(
            f"'{op.name}' needs a tensor of static size to unroll, got {la.layout_of(v)}",
            op.location,
        )
    return int(n)


def static_modes(la: LayoutAnalysis, v: Value, op: Operation) -> list[int]:
    """The size of each top-level mode of a gemm fragment (static, or a located error)."""
    layout = la.layout_of(v)
    shape = layout.layout_b.shape if isinstance(layout, ComposedLayout) else layout.shape
    sizes = []
    for m in shape if isinstance(shape, tuple) else (shape,):
        s = size(Layout(m))
        if not is_static(s):
            raise CompileError(f"gemm needs static fragment shapes, got {shape}", op.location)
        sizes.append(int(s))
    return sizes
