"""predicate: guard accesses of tiles that may run past their tensor's bounds.

A kernel over an (M, K) tensor tiled by (BM, BK) reads past the end of the
last tile in a mode unless the facts say the tile divides the extent
(``assume M % BM == 0``). CuTe's way, which this pass writes for the user, is
an identity tensor of the same shape viewed through the same ops: element i of
the mirrored view is the coordinate of element i of the data view, and
``coordinate < extent`` in every mode that may be partial is the predicate:

    %cA  = cute.make_identity_tensor %M, %K            (once per root tensor)
    %cgA = cute.local_tile %cA, ... (the data view's chain, op by op)
    %p   = cute.make_fragment : !cute.tensor<i1, rmem, ...>
    cute.store (coord_m < M && coord_k < K), %p, i      (for each element i)
    cute.copy_if %p, %src, %dst {zfill}

A mode is full, and is not tested, when every tiler the root tensor is cut by
divides its extent (`div` facts and `assume`); a copy none of whose global
modes is partial is left alone. Loads into registers or shared memory are
zero-filled where the predicate is false (``zfill``): they feed a gemm, where
the K residue must add nothing (a cp.async reads 0 bytes there, `src-size` 0,
and fills zeros). Stores to global memory are skipped there; an
`axpby` into global memory gets the predicate too and neither reads nor writes
a masked element.

The copy_if this pass makes is marked ``{residue}``: its predicate is an
in-bounds test, so select-atoms may move a vector of an unnamed copy under its
first element's predicate where the vectors of its global side cannot straddle
an end (the unit-stride extent a known multiple of the width, as for axpby).

A named UniversalCopy atom moves V elements per instruction under one
predicate (CuTe's copy_if): the V elements must lie in one mode whose extent
is a known multiple of V, or the last vector could straddle the end — a
located error asks for the fact.
"""

from __future__ import annotations

from dataclasses import dataclass

from cutec.diagnostics import CompileError
from cutec.ir.attributes import UnitAttr
from cutec.ir.builder import Builder
from cutec.ir.core import Operation, OpResult, Value
from cutec.ir.dialects import arith
from cutec.ir.dialects.builtin import KernelOp, ModuleOp
from cutec.ir.dialects.cute_attrs import LayoutAttr
from cutec.ir.dialects.cute_compute import AxpbyOp, CopyAsyncOp, CopyIfOp, CopyOp, StoreOp
from cutec.ir.dialects.cute_coord import (
    COORD_RADIX,
    CoordTensorType,
    LoadCoordOp,
    MakeIdentityTensorOp,
    identity_layout,
)
from cutec.ir.dialects.cute_infer import spec_of
from cutec.ir.dialects.cute_tensor import (
    DivideOp,
    LocalTileOp,
    MakeFragmentOp,
    MakeTensorOp,
    RecastOp,
    _ViewOp,
)
from cutec.ir.dialects.cute_types import LayoutSpec, TensorType
from cutec.ir.layout_of import LayoutAnalysis
from cutec.ir.types import IndexType, IntegerType
from cutec.layout import ComposedLayout, Layout, X, make_layout, size
from cutec.layout.symbolic import Integer, is_static, known_divisible
from cutec.passes.manager import Pass, working_on
from cutec.target import AddressSpace


@dataclass
class Predicate(Pass):
    """Guard the accesses of tiles that may be partial (see the module docstring)."""

    name = "predicate"
    summary = "guard accesses past a tensor's bounds with identity-tensor predicates"

    def run(self, module: ModuleOp) -> None:
        la = LayoutAnalysis()
        for kernel in list(module.walk_type(KernelOp)):
            _KernelPredicates(kernel, la).run()


class _KernelPredicates:
    def __init__(self, kernel: KernelOp, la: LayoutAnalysis) -> None:
        self.kernel = kernel
        self.la = la
        self.identities: dict[Value, Value] = {}  # root tensor → its identity tensor
        self.mirrors: dict[Value, Value] = {}  # data view → its coordinate view

    def run(self) -> None:
        for op in list(self.kernel.walk()):
            with working_on(op):
                if isinstance(op, CopyOp):
                    self.copy(op)
                elif isinstance(op, CopyAsyncOp) and op.pred is None:
                    self.copy_async(op)
                elif isinstance(op, AxpbyOp) and op.pred is None:
                    self.axpby(op)

    # ------------------------------------------------------------------ ops
    def copy(self, op: CopyOp) -> None:
        partial: dict[int, Value] = {}
        view = None
        for operand in (op.src, op.dst):
            modes = self.partial_modes(operand)
            if modes:
                partial, view = modes, operand
        if view is None:
            return
        step = self._check_vectors(op, view, partial)
        pred = self.predicate(op, view, partial, step)
        guarded = Builder.before(op).insert(CopyIfOp(pred, op.src, op.dst, op.tiled))
        guarded.location = op.location
        guarded.attributes.update(op.attributes)
        # The predicate is this pass's: in-bounds tests, so select-atoms may move a
        # vector under its first element's where no vector straddles an end.
        guarded.attributes["residue"] = UnitAttr()
        if _space(op.dst) is not AddressSpace.GLOBAL:
            guarded.attributes["zfill"] = UnitAttr()
        op.erase()

    def copy_async(self, op: CopyAsyncOp) -> None:
        """A cp.async from a partial tile: src-size 0 past the end, zeros in shared memory."""
        partial = self.partial_modes(op.src)
        if not partial:
            return
        step = self._check_vectors(op, op.src, partial)
        pred = self.predicate(op, op.src, partial, step)
        operands = list(op.operands)
        operands.insert(1, pred)  # tiled, pred, src, dst
        op.set_operands(operands)
        op.attributes["zfill"] = UnitAttr()

    def axpby(self, op: AxpbyOp) -> None:
        partial = self.partial_modes(op.y)
        if partial:
            op.set_operands([*op.operands, self.predicate(op, op.y, partial)])

    # ------------------------------------------------------------------ which modes
    def partial_modes(self, view: Value) -> dict[int, Value]:
        """The modes of `view`'s global root whose last tile may be partial, with
        the values of their extents; empty for a tensor that is not global."""
        t = view.type
        if not isinstance(t, TensorType) or t.space is not AddressSpace.GLOBAL:
            return {}
        root = self.la.address_of(view).root
        if isinstance(root, OpResult) and isinstance(root.op, RecastOp):
            if self.partial_modes(root.op.source):
                raise CompileError(
                    "a recast of a tile that may run past its tensor cannot be guarded: "
                    "guard the copy yourself (copy(..., pred = p)) or assume the tile full",
                    root.op.location,
                )
            return {}
        if not (isinstance(root, OpResult) and isinstance(root.op, MakeTensorOp)):
            return {}
        shape = self.la.layout_of(root).shape
        modes = shape if isinstance(shape, tuple) else (shape,)
        partial: dict[int, Value] = {}
        for use in root.uses:
            tiler = use.owner.attributes.get("tiler")
            if isinstance(use.owner, LocalTileOp | DivideOp) and isinstance(tiler, LayoutAttr):
                # A layout tiler cuts the tensor's elements in its own order: full only
                # when the tensor is static and the tiler's size divides it.
                n, per = size(Layout(shape)), size(tiler.layout)
                if not (is_static(n) and int(n) % int(per) == 0):
                    raise CompileError(
                        f"the layout tiler {tiler.layout} may cut {self.la.layout_of(root)} "
                        "past its end, which the predicate pass cannot guard: give the "
                        "tensor static extents the tiler's size divides, or tile it by "
                        "integers",
                        use.owner.location,
                    )
                continue
            tiles = _tiles_of(use.owner)
            for k, tile in enumerate(tiles):
                if tile is None or k >= len(modes) or known_divisible(modes[k], tile):
                    continue
                if isinstance(modes[k], tuple):
                    raise CompileError(
                        f"the nested mode {modes[k]} may be cut past its end; the predicate "
                        "pass handles flat modes only: assume the tile divides it",
                        use.owner.location,
                    )
                partial[k] = self._extent(root.op, k)
        return partial

    def _extent(self, make: MakeTensorOp, k: int) -> Value:
        """The value of extent k of `make`'s tensor (an operand, or a constant)."""
        t = make.result.type
        assert isinstance(t, TensorType)
        shape = t.spec.shape if isinstance(t.spec.shape, tuple) else (t.spec.shape,)
        dynamic = [j for j, s in enumerate(shape) if not isinstance(s, int)]
        if k in dynamic:
            return make.leaves[dynamic.index(k)]
        c = Builder.after(make).insert(arith.constant(shape[k], IndexType()))
        return c.result

    def _check_vectors(
        self, op: CopyOp | CopyAsyncOp, view: Value, partial: dict[int, Value]
    ) -> int:
        """The elements one access of the copy's atom moves (1 without a named atom),
        checked to lie in one mode whose extent they divide."""
        tiled = op.tiled_type()
        if tiled is None or not tiled.atom.startswith(("UniversalCopy<", "SM80_CP_ASYNC_")):
            return 1
        values = int(tiled.library().atom.num_val_src)
        if values == 1:
            return 1
        layout = self.la.layout_of(self.mirror(view))
        step = layout(1) - layout(0)
        shape = self.la.layout_of(self.la.address_of(view).root).shape
        modes = shape if isinstance(shape, tuple) else (shape,)
        for k in partial:
            moves = (step // COORD_RADIX**k) % COORD_RADIX if isinstance(step, int) else 1
            if moves and not known_divisible(modes[k], values):
                raise CompileError(
                    f"{tiled.atom} moves {values} elements under one predicate along mode {k}, "
                    f"whose extent {modes[k]} is not known to be a multiple of {values}: "
                    f"assume it is, or copy with a narrower atom",
                    op.location,
                )
        return values

    # ------------------------------------------------------------------ coordinates
    def identity(self, root: OpResult) -> Value:
        found = self.identities.get(root)
        if found is None:
            make = root.op
            assert isinstance(make, MakeTensorOp)
            layout = identity_layout(self.la.layout_of(root).shape)
            t = CoordTensorType(_rank(layout), spec_of(layout))
            extents = [self._extent(make, k) for k in _dynamic_modes(t.spec)]
            op = Builder.after(make).insert(MakeIdentityTensorOp(extents, t))
            op.location = make.location
            found = self.identities[root] = op.result
        return found

    def mirror(self, view: Value) -> Value:
        """The coordinate tensor viewed through the same ops as `view`."""
        found = self.mirrors.get(view)
        if found is not None:
            return found
        assert isinstance(view, OpResult)
        op = view.op
        if isinstance(op, MakeTensorOp):
            found = self.identity(view)
        elif isinstance(op, _ViewOp):
            source = self.mirror(op.source)
            clone = op.clone({op.source: source})
            layout = clone.inferred_layout(
                self.la.layout_of(source), clone.attributes, clone.atom_type()
            )
            clone.results[0].type = CoordTensorType(_coord_rank(source), spec_of(layout))
            Builder.after(op).insert(clone)
            found = clone.results[0]
        else:
            raise CompileError(
                f"cannot predicate a view made by '{op.name}'; assume the tile is full",
                op.location,
            )
        self.mirrors[view] = found
        return found

    def predicate(
        self, op: Operation, view: Value, partial: dict[int, Value], step: int = 1
    ) -> Value:
        """An i1 fragment: element i is ``coord_k(i) < extent_k`` for every partial mode k.

        With `step` > 1 (an atom moving that many elements under one predicate, the
        first one's) only every step-th element is computed: the others are never read.
        """
        coords = self.mirror(view)
        layout = self.la.layout_of(view)
        n = size(layout)
        if not is_static(n):
            raise CompileError(f"cannot predicate a tensor of dynamic size {n}", op.location)
        b = Builder.before(op)
        pred = b.insert(MakeFragmentOp(mask_type(layout))).result
        for i in range(0, int(n), step):
            index = b.insert(arith.constant(i, IndexType())).result
            inside: Value | None = None
            for k, extent in sorted(partial.items()):
                c = b.insert(LoadCoordOp(coords, index, k)).result
                less = b.insert(arith.CmpIOp("slt", c, extent)).result
                inside = less if inside is None else b.insert(arith.AndIOp(inside, less)).result
            assert inside is not None
            b.insert(StoreOp(inside, pred, index))
        return pred


# --------------------------------------------------------------------------- helpers


def _tiles_of(op: Operation) -> list[Integer | None]:
    """Per source mode, the tile size `op` cuts it by (None: not cut)."""
    if isinstance(op, LocalTileOp):
        tiler = _as_tuple(op.tiler.value)
        proj = op.proj
        if proj is not None:
            keep = _as_tuple(proj.value)
            tiler = tuple(t for t, p in zip(tiler, keep, strict=True) if p is not X)
        return [t if isinstance(t, int) else None for t in tiler]
    if isinstance(op, DivideOp):
        return [t if isinstance(t, int) else None for t in _as_tuple(op.tiler.value)]
    return []


def _as_tuple(value: object) -> tuple:
    return value if isinstance(value, tuple) else (value,)


def _rank(layout: Layout) -> int:
    return len(layout.shape) if isinstance(layout.shape, tuple) else 1


def _coord_rank(v: Value) -> int:
    t = v.type
    assert isinstance(t, CoordTensorType)
    return t.rank


def _dynamic_modes(spec: LayoutSpec) -> list[int]:
    shape = spec.shape if isinstance(spec.shape, tuple) else (spec.shape,)
    return [k for k, s in enumerate(shape) if not isinstance(s, int)]


def _space(v: Value) -> AddressSpace:
    t = v.type
    assert isinstance(t, TensorType)
    return t.space


def mask_type(layout: Layout | ComposedLayout) -> TensorType:
    """The i1 register fragment that predicates a copy of a tensor laid out as `layout`:
    its shape, compact (a swizzled layout's inner shape)."""
    shape = layout.shape if isinstance(layout, Layout) else layout.layout_b.shape
    return TensorType(IntegerType(1), AddressSpace.REGISTER, LayoutSpec.of(make_layout(shape)))
