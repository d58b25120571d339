"""Contiguity: how many elements of a view one access may move, and why not more.

A copy moves element i of its source to element i of its destination. It may
move p elements at once (one 2^k-wide load or store) when, on both sides:

- the p elements of each vector are contiguous: the view's layout, divided by p,
  has the first mode ``p:1`` (so p divides the common contiguous run CuTe's
  max_common_vector finds);
- every vector starts p-aligned: the strides of the remaining modes and the
  view's offset from its root (a symbolic integer: block and thread indices,
  extents) are known multiples of p (`assume`, `div` facts);
- the root is aligned to p elements: a kernel tensor's declared ``align``, an
  allocation's alignment (shared buffers are 128-byte aligned, registers are
  free);
- through a swizzle Sw<B,M,S>, p is at most 2^M (the swizzle keeps blocks of 2^M
  elements together);

and p * bits is at most 128 (the widest PTX access), p at most 4 (``.v4``), or 8 for
16-bit elements (the PTX emitter packs them in pairs into ``.v4.b32``; 8-bit ones
move 32 bits at a time until packing them is built).

`contiguity_problem` says why one side cannot move p at a time (the vectorize,
select-atoms and lower-to-thread passes ask it). `vector_width` returns the width
of a copy with why it is not wider ("128-bit accesses not used: ldA is not known
to be a multiple of 4") for `--remarks`. An ``axpby`` (an epilogue) gets a width
by the same rules on x and y (`axpby_width`); a predicated one (a tile that may
run past C) moves a vector under the predicate of its first element, so its
vectors must not straddle the end: the extent of y's unit-stride mode must be a
known multiple of the width (`uniform_predicate`); aligned vectors then start at
coordinates that are multiples of it too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cutec.analysis.bounds import BoundsAnalysis
from cutec.ir.core import OpResult, Value
from cutec.ir.dialects.cute_tensor import MakeTensorOp, ViewOp
from cutec.ir.dialects.cute_types import TensorType
from cutec.ir.dialects.thread import PACKED_WIDTH
from cutec.ir.layout_of import LayoutAnalysis, TensorAddress
from cutec.ir.types import dtype_of
from cutec.layout import (
    ComposedLayout,
    Layout,
    LayoutError,
    coalesce,
    composition,
    logical_divide,
    size,
)
from cutec.layout.inttuple import Integer, flatten_to_tuple
from cutec.layout.symbolic import DynamicValueError, is_static, known_divisible, known_residue
from cutec.target import AddressSpace

MAX_ACCESS_BITS = 128  # ld/st.v4.b32, cp.async 16 bytes
MAX_VECTOR = 4  # elements of one ld/st (.v4)
SHARED_ALIGN_BYTES = 128  # cutec places every shared buffer on a 128-byte boundary


def max_vector(bits: int) -> int:
    """Elements of one ld/st: 4 (``.v4``), or 8 of 16 bits, which the PTX emitter
    packs in pairs into ``.v4.b32``."""
    return PACKED_WIDTH if bits == 16 else MAX_VECTOR


@dataclass
class VectorWidth:
    """How many elements one access may move, and what stopped it being wider."""

    elements: int
    limits: list[str] = field(default_factory=list)


def vector_width(
    la: LayoutAnalysis, src: Value, dst: Value, max_bits: int = MAX_ACCESS_BITS
) -> VectorWidth:
    """The widest power-of-two vector a copy from `src` to `dst` may use (see the module)."""
    t = src.type
    assert isinstance(t, TensorType)
    bits = dtype_of(t.element).bits
    p = max(1, max_bits // bits)
    limits: list[str] = []
    if p > max_vector(bits):
        # ld/st.v4 moves 4 elements; 16-bit ones go in pairs, 8-bit ones not yet.
        limits.append(
            f"{p * bits}-bit accesses not used: a .v4 access of {bits}-bit elements moves "
            f"{max_vector(bits) * bits} bits (packing 8-bit elements is not built yet)"
        )
        p = max_vector(bits)
    while p > 1:
        why = contiguity_problem(la, src, p, bits) or contiguity_problem(la, dst, p, bits)
        if why is None:
            break
        limits.append(f"{p * bits}-bit accesses not used: {why}")
        p //= 2
    return VectorWidth(p, limits)


def axpby_width(la: LayoutAnalysis, x: Value, y: Value) -> int:
    """Elements per access of an epilogue y = alpha x + beta y: contiguous and aligned in
    both x and y, each with its own element type (an f32 x may feed an f16 y)."""
    bits = {side: dtype_of(side.type.element).bits for side in (x, y)}  # type: ignore[union-attr]
    p = min([max_vector(b) for b in bits.values()] + [MAX_ACCESS_BITS // max(bits.values())])
    while p > 1 and any(contiguity_problem(la, v, p, b) for v, b in bits.items()):
        p //= 2
    return p


def uniform_predicate(la: LayoutAnalysis, y: Value, p: int) -> bool:
    """Whether each p-vector of global `y` (aligned, by `axpby_width`) lies wholly inside
    or wholly outside its root tensor: y's root has a unit-stride mode whose extent is a
    known multiple of p (the vectors run along it, starting at multiples of p).

    The root is the one the predicate tests against (cutec.analysis.bounds): a view
    made by make_tensor(t, layout) is bounded by its own shape, whose vectors need
    not start where t's do, so it gets none, unless it is t with its modes reordered
    (`BoundsAnalysis.reordered`: the same elements, the same unit-stride mode)."""
    analysis = BoundsAnalysis(la)
    bounds = analysis.bounds_of(y)
    root = bounds.root if bounds is not None else la.address_of(y).root
    if not isinstance(root, OpResult):
        return False
    reordered = isinstance(root.op, ViewOp) and analysis.reordered(root.op) is not None
    if not (isinstance(root.op, MakeTensorOp) or reordered):
        return False
    layout = la.layout_of(root)
    shape = layout.shape if isinstance(layout.shape, tuple) else (layout.shape,)
    stride = layout.stride if isinstance(layout.stride, tuple) else (layout.stride,)
    unit = [k for k, d in enumerate(stride) if isinstance(d, int) and d == 1]
    return len(unit) == 1 and _multiple(shape[unit[0]], p)


def contiguity_problem(la: LayoutAnalysis, value: Value, p: int, bits: int) -> str | None:
    """Why `value`'s elements cannot be moved p at a time, or None when they can."""
    address = la.address_of(value)
    layout = address.layout
    offset = address.offset
    if isinstance(layout, ComposedLayout):
        if p > 1 << layout.layout_a.base:
            return f"the swizzle {layout.layout_a} moves blocks of {1 << layout.layout_a.base}"
        offset = offset + layout.offset
        layout = layout.layout_b
    try:
        if not is_static(size(layout)) or size(layout) % p:
            return f"{size(layout)} elements do not split into vectors of {p}"
        # Every vector is one like the first only where p divides the first mode (as
        # coalesced): (3,4):(1,s) in 2s puts elements 2 and 3, (2,0) and (0,1), in one;
        # the divide below is then not exact, and its rest stride says nothing.
        first = flatten_to_tuple(coalesce(layout).shape)[0]
        if p > 1 and not (is_static(first) and int(first) % p == 0):
            return f"vectors of {p} would cross the first mode of {layout} ({first} elements)"
        divided = logical_divide(layout, Layout(p))
        vector = coalesce(composition(layout, Layout(p)))
    except (LayoutError, DynamicValueError):
        return f"the layout {layout} cannot be divided into vectors of {p}"
    if vector != Layout(p, 1):
        return f"{p} consecutive elements of {layout} are not contiguous"
    rest = divided.stride[1] if isinstance(divided.stride, tuple) else 0
    for stride in flatten_to_tuple(rest):
        if not _multiple(stride, p):
            return f"{stride} is not known to be a multiple of {p}"
    if not _multiple(offset, p):
        return f"the offset {offset} is not known to be a multiple of {p}"
    root_bytes = _root_alignment(address)
    if root_bytes is not None and root_bytes * 8 < p * bits:
        return f"the base is aligned to {root_bytes} bytes only (declare `align {p * bits // 8}`)"
    return None


def _multiple(x: Integer, p: int) -> bool:
    """x is provably a multiple of p (a swizzled slice's offset is decided bit by bit)."""
    return known_divisible(x, p) or known_residue(x, p) == 0


def _root_alignment(address: TensorAddress) -> int | None:
    """The root's alignment in bytes; None where nothing constrains it (registers)."""
    root = address.root
    t = root.type
    if isinstance(t, TensorType) and t.space is AddressSpace.REGISTER:
        return None
    if isinstance(root, OpResult) and isinstance(root.op, MakeTensorOp):
        return root.op.alignment
    # (a dsmem root, map_shared_rank's, is a shared root's buffer in another CTA, whose
    # shared memory is laid out the same: the same alignment)
    if isinstance(t, TensorType) and t.space in (AddressSpace.SHARED, AddressSpace.SHARED_CLUSTER):
        return SHARED_ALIGN_BYTES
    return max(1, dtype_of(t.element).bits // 8) if isinstance(t, TensorType) else None
