"""lower-to-thread's rules for ``cute.tma_copy`` and ``cute.tma_store``: one
``SM90_TMA_LOAD_<r>D`` or ``SM90_TMA_STORE_<r>D`` per box.

A TMA moves one box of the map (`!cute.tma_atom`'s extents) between global memory and
shared memory, where the box lies densely in box order and the hardware swizzles the
16-byte chunks of each address (cutec/atoms/tma_box.py). The copy's shared tile is a
view of n elements and its coordinates the matching view of the TMA tensor; box b is
elements [b*B, (b+1)*B) of both (B the box's elements, `tma_partition`'s order):

    smem start  = root + off + inner(b*B)            (unswizzled: the TMA swizzles)
    coordinates = component d of the coordinates' element b*B, for each map dimension d

Before any instruction the rule checks what makes that exact, from the layouts alone:
both views split as (B, n/B) (so element b*B + v is box b's value v for every b), the
shared tile's box values are B consecutive elements, the coordinates' box values walk
the box's extents along E0, E1, ... in order, the shared tile's swizzle is the atom's,
and each box starts on 128 bytes (the instruction's alignment; the buffer itself is
placed on the swizzle's 1024-byte repeat, `tma_aligns`). A view that breaks one is a
located error, never a wrong copy.

The map parameter is the kernel's (`thread.tensor_map`, named by the atom's
`cute.make_tma_atom`). A load's operands are the shared address, the map, the
coordinates and its mbarrier's address, as PTX takes them; a store's the map, the
coordinates and the shared address.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from cutec.analysis.shared_plan import smem_root
from cutec.atoms.copy_sm90 import tma_name
from cutec.diagnostics import CompileError
from cutec.ir.core import Value
from cutec.ir.dialects import arith, thread
from cutec.ir.dialects.builtin import KernelOp
from cutec.ir.dialects.cute import (
    AllocSmemOp,
    MakeTmaAtomOp,
    TmaAtomType,
    TmaCopyOp,
    TmaStoreOp,
)
from cutec.ir.dialects.cute_coord import basis, coordinate_component
from cutec.ir.types import IntegerType, dtype_of
from cutec.layout import ComposedLayout, Layout, LayoutError, coalesce, composition
from cutec.layout.swizzle import downcast_swizzle
from cutec.layout.symbolic import evaluated, known_divisible

TMA_SMEM_ALIGN = 128  # bytes: cp.async.bulk.tensor's shared-memory address
SWIZZLE_REPEAT = 1024  # bytes: the 128B swizzle's pattern repeats every 8 rows of 128 bytes


def tma_map_names(kernel: KernelOp) -> list[str]:
    """The map parameters the kernel's TMA atoms declare, in the order they follow its
    arguments (cutec.ir.signature adds their recipes in the same order)."""
    return [made.map.value for made in kernel.walk_type(MakeTmaAtomOp)]


def lower_tma_copy(lw: Any, op: TmaCopyOp, scope: Any) -> None:
    """A TMA load: one thread.atom per box (module docstring), completing on the mbarrier."""
    bar = lw.element_ptr(op.bars, _index(lw, op.indices, scope), scope)
    for name, smem, tmap, coords, bits in _boxes(lw, op, op.dst, op.src, "LOAD", scope):
        scope.builder.insert(thread.AtomOp(name, "copy", [smem, tmap, *coords, bar], [], bits))


def lower_tma_store(lw: Any, op: TmaStoreOp, scope: Any) -> None:
    """A TMA store: one thread.atom per box of the shared source, in the issuing thread's
    current bulk group."""
    for name, smem, tmap, coords, bits in _boxes(lw, op, op.src, op.dst, "STORE", scope):
        scope.builder.insert(thread.AtomOp(name, "copy", [tmap, *coords, smem], [], bits))


def _boxes(
    lw: Any, op: TmaCopyOp | TmaStoreOp, shared: Value, coords: Value, kind: str, scope: Any
) -> Iterator[tuple[str, Value, Value, list[Value], int]]:
    """Per box of the copy: the atom's name, the box's shared address, the map, its
    coordinates (i32, innermost first) and the box's bits, after the module docstring's
    checks of the shared view and the coordinate view."""
    atom = op.atom.type
    assert isinstance(atom, TmaAtomType)
    made = op.atom.owner
    assert isinstance(made, MakeTmaAtomOp)
    per_box = atom.box.values
    where, at = lw.la.address_of(shared), lw.la.address_of(coords)
    n = where.layout.size()
    if not isinstance(n, int) or n % per_box:
        raise CompileError(
            f"a TMA copy moves whole boxes of {per_box} elements; the shared tile holds {n}",
            op.location,
        )
    boxes = n // per_box
    split = Layout((per_box, boxes), (1, per_box))
    nbytes = dtype_of(atom.element).bits // 8
    inner, off = _unswizzled(where, atom, nbytes, op)
    consecutive = "the shared tile's box values are not consecutive shared-memory elements"
    _check_box(_split(inner, split, op, "shared tile"), Layout(per_box), op, consecutive)
    in_order = (
        "the coordinates' box values are not the box's coordinates in order (partition both "
        "tiles with tma_partition of this atom)"
    )
    want = coalesce(Layout(atom.dims, tuple(basis(d) for d in range(atom.rank))))
    _check_box(_split(at.layout, split, op, "coordinates"), want, op, in_order)
    root = lw.root_pointer(where.root, scope)
    tmap = scope.builder.insert(thread.TensorMapOp(made.map.value)).result
    name = tma_name(kind, atom.rank)
    for box in range(boxes):
        start = off + inner(box * per_box)
        if not known_divisible(evaluated(start) * nbytes, TMA_SMEM_ALIGN):
            raise CompileError(
                f"a TMA box starts {start} elements into its shared buffer, not on the "
                f"{TMA_SMEM_ALIGN} bytes cp.async.bulk.tensor needs",
                op.location,
            )
        smem = lw.ptr_add(root, start, scope) if start != 0 else root
        x = at.offset + at.layout(box * per_box)
        c = [_i32(scope, scope.indices(coordinate_component(x, d))) for d in range(atom.rank)]
        yield name, smem, tmap, c, per_box * nbytes * 8


def _unswizzled(
    shared: Any, atom: TmaAtomType, nbytes: int, op: TmaCopyOp | TmaStoreOp
) -> tuple[Layout, Any]:
    """The shared tile's layout inside its swizzle and its offset there, after checking
    that the swizzle is the one the atom's map applies."""
    layout = shared.layout
    if not isinstance(layout, ComposedLayout):
        if atom.swizzle.span_bytes:
            raise CompileError(
                f"the TMA atom moves {atom.swizzle.span_bytes}-byte swizzled tiles, but the "
                "shared tile is not swizzled",
                op.location,
            )
        return layout, shared.offset
    want = atom.swizzle.cute_swizzle
    sw = downcast_swizzle(layout.layout_a, nbytes)
    if (sw.bits, sw.base, sw.shift) != want or atom.swizzle.span_bytes == 0:
        raise CompileError(
            f"the shared tile's swizzle {layout.layout_a} is not the TMA atom's "
            f"{atom.swizzle.name} (Swizzle<{want[0]},{want[1]},{want[2]}> on bytes)",
            op.location,
        )
    off = shared.offset + layout.offset
    if not known_divisible(evaluated(off) * nbytes, SWIZZLE_REPEAT):
        raise CompileError(
            f"the shared tile starts {off} elements into its swizzled buffer, not on the "
            f"swizzle's {SWIZZLE_REPEAT}-byte repeat",
            op.location,
        )
    return layout.layout_b, off


def _split(layout: Any, split: Layout, op: TmaCopyOp | TmaStoreOp, what: str) -> Layout:
    """`layout` ∘ (box values, boxes), or a located error when the view does not split so."""
    try:
        return composition(layout, split)
    except (LayoutError, ValueError) as e:
        raise CompileError(
            f"the TMA copy's {what} {layout} does not split into boxes of {split.shape[0]}: {e}",
            op.location,
        ) from None


def _check_box(split: Layout, want: Layout, op: TmaCopyOp | TmaStoreOp, why: str) -> None:
    box = coalesce(split[0])
    if (box.shape, box.stride) != (want.shape, want.stride):
        raise CompileError(f"{why}: box values {box}, expected {want}", op.location)


def _index(lw: Any, indices: Any, scope: Any) -> Any:
    coord = [lw.index_of(i, scope) for i in indices]
    return coord[0] if len(coord) == 1 else tuple(coord)


def _i32(scope: Any, value: Value) -> Value:
    return scope.builder.insert(arith.IndexCastOp(value, IntegerType(32))).result


def tma_aligns(kernel: KernelOp, aligns: dict[AllocSmemOp, int]) -> dict[AllocSmemOp, int]:
    """`aligns` with each shared buffer a TMA writes or reads on the swizzle's 1024-byte
    repeat (a TMA swizzles address bits; the buffer's layout, offsets from its start)."""
    out = dict(aligns)
    tiles = [c.dst for c in kernel.walk_type(TmaCopyOp)]
    tiles += [c.src for c in kernel.walk_type(TmaStoreOp)]
    for tile in tiles:
        root = smem_root(tile)
        if root is not None and root in out:
            out[root] = max(out[root], SWIZZLE_REPEAT)
    return out
