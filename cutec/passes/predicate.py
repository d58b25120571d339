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

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from cutec.analysis.bounds import ROOT_OPS, Bounds, BoundsAnalysis, mask_type, root_name
from cutec.atoms.copy import copy_family
from cutec.diagnostics import CompileError, Location
from cutec.ir.attributes import UnitAttr
from cutec.ir.builder import Builder
from cutec.ir.core import Operation, OpResult, Value
from cutec.ir.dialects import arith, scf
from cutec.ir.dialects.builtin import KernelOp, ModuleOp
from cutec.ir.dialects.cute_atomic import _AtomicOp
from cutec.ir.dialects.cute_attrs import LayoutAttr
from cutec.ir.dialects.cute_compute import (
    AxpbyOp,
    ClearOp,
    CopyAsyncOp,
    CopyIfOp,
    CopyOp,
    FillOp,
    GemmOp,
    LoadOp,
    StoreOp,
)
from cutec.ir.dialects.cute_coord import (
    COORD_RADIX,
    CoordTensorType,
    LoadCoordOp,
    MakeIdentityTensorOp,
    identity_layout,
)
from cutec.ir.dialects.cute_infer import spec_of
from cutec.ir.dialects.cute_tensor import (
    MakeFragmentOp,
    RecastOp,
    SliceOp,
    ViewOp,
    _ViewOp,
)
from cutec.ir.dialects.cute_types import LayoutSpec, TensorType
from cutec.ir.layout_of import LayoutAnalysis
from cutec.ir.types import IndexType
from cutec.layout import ComposedLayout, Layout, size
from cutec.layout.inttuple import flatten_to_tuple
from cutec.layout.symbolic import is_static, known_divisible
from cutec.passes.manager import Pass, working_on
from cutec.target import AddressSpace


@dataclass
class Predicate(Pass):
    """Guard the accesses of tiles that may be partial (see the module docstring)."""

    name = "predicate"
    summary = "guard accesses past a tensor's bounds with identity-tensor predicates"

    def run(self, module: ModuleOp) -> None:
        for kernel in list(module.walk_type(KernelOp)):
            # The guards add ops and rewire accesses, never a view's ops or operands:
            # the layouts stay valid through them, for the check as well.
            la = self.analyses.get(LayoutAnalysis, kernel)
            _KernelPredicates(kernel, la, self.remark).run()
            # The pass's promise, checked: nothing it could not guard was left silent.
            left = unguarded_accesses(kernel, BoundsAnalysis(la))
            assert not left, f"predicate left unguarded global accesses: {left}"


class _KernelPredicates:
    def __init__(
        self, kernel: KernelOp, la: LayoutAnalysis, remark: Callable[[str, Location | None], None]
    ) -> None:
        self.kernel = kernel
        self.remark = remark
        self.la = la
        self.bounds = BoundsAnalysis(la)
        self.identities: dict[Value, Value] = {}  # root tensor → its identity tensor
        self.mirrors: dict[Value, Value] = {}  # data view → its coordinate view

    def run(self) -> None:
        for op in list(self.kernel.walk()):
            with working_on(op):
                self.report(op)
                if isinstance(op, CopyOp):
                    self.copy(op)
                elif isinstance(op, CopyAsyncOp) and op.pred is None:
                    self.copy_async(op)
                elif isinstance(op, AxpbyOp) and op.pred is None:
                    self.axpby(op)
                elif isinstance(op, CopyIfOp | CopyAsyncOp | AxpbyOp):
                    self.users_predicate(op)
                elif isinstance(op, LoadOp | StoreOp):
                    self.element(op)
                elif isinstance(op, GemmOp | ClearOp | FillOp | _AtomicOp):
                    self.refuse_partial(op)

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
        if _space(op.dst) is not AddressSpace.GLOBAL and self._injective(op.dst):
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
        op.attributes["residue"] = UnitAttr()  # this pass's guard (users_predicate)
        if self._injective(op.dst):
            op.attributes["zfill"] = UnitAttr()

    def axpby(self, op: AxpbyOp) -> None:
        partial = self.partial_modes(op.y)
        if partial:
            op.set_operands([*op.operands, self.predicate(op, op.y, partial)])
            op.attributes["residue"] = UnitAttr()  # this pass's guard (users_predicate)

    def _injective(self, dst: Value) -> bool:
        """Whether no two elements of `dst` share storage. Where some do (a stride-0 mode:
        make_fragment_like of a broadcast tile), the zeros of masked elements would
        overwrite the one loaded into the same register, so masked elements are left
        alone instead (CuTe's copy_if)."""
        layout = self.la.layout_of(dst)
        inner = layout.layout_b if isinstance(layout, ComposedLayout) else layout
        shapes = flatten_to_tuple(inner.shape)
        strides = flatten_to_tuple(inner.stride)
        return not any(s != 1 and d == 0 for s, d in zip(shapes, strides, strict=True))

    def users_predicate(self, op: CopyIfOp | CopyAsyncOp | AxpbyOp) -> None:
        """A copy or axpby under the kernel's own predicate whose global side may run past
        its tensor: element i moves where the user's predicate and its in-bounds test
        both hold (the user's predicate need not test bounds; where it does, the two
        tests are the same arithmetic, which CSE merges)."""
        if op.residue is not None:
            return  # this pass's own guard
        users = op.pred
        assert users is not None
        views = [op.y] if isinstance(op, AxpbyOp) else [op.src, op.dst]
        for view in views:
            partial = self.partial_modes(view)
            if not partial:
                continue
            step = 1 if isinstance(op, AxpbyOp) else self._check_vectors(op, view, partial)
            pred = self.predicate(op, view, partial, step, users)
            op.set_operands([pred if v is users else v for v in op.operands])
            return

    def element(self, op: LoadOp | StoreOp) -> None:
        """One element of a view that may run past its tensor: read (zero outside) or
        written under ``scf.if`` of its in-bounds test."""
        partial = self.partial_modes(op.tensor)
        if not partial:
            return
        b = Builder.before(op)
        coords = self.mirror(op.tensor)
        inside = self._inside(b, coords, op.index, partial)
        guard = b.insert(scf.IfOp(inside, [op.result.type] if isinstance(op, LoadOp) else []))
        guard.location = op.location
        guard.attributes["residue"] = UnitAttr()
        op.detach()
        guard.then_block.append(op)
        then = Builder.at_end(guard.then_block)
        if isinstance(op, LoadOp):
            op.result.replace_all_uses_with(guard.results[0])
            then.insert(scf.YieldOp([op.result]))
            other = Builder.at_end(guard.else_block)
            zero = other.insert(arith.constant(0, op.result.type)).result
            other.insert(scf.YieldOp([zero]))
        else:
            then.insert(scf.YieldOp([]))

    def refuse_partial(self, op: Operation) -> None:
        """Ops the pass cannot guard: a located error where one may run past its tensor."""
        for v in op.operands:
            if self.partial_modes(v):
                what = _describe(self.bounds, v)
                raise CompileError(
                    f"'{op.name}' cannot be guarded where {what}: copy the tile to "
                    "registers or shared memory first (copies are predicated), or assume "
                    "the tiles divide the tensor",
                    op.location,
                )

    def report(self, op: Operation) -> None:
        """A remark for each global access: guarded (which modes, and why), in bounds (by
        which facts); what it cannot check (a run-time index, an explicit view's place)
        is said as unchecked."""
        for view, verb in _global_operands(op):
            b = self.bounds.bounds_of(view)
            if b is None or b.layout_cut is not None:
                continue  # partial_modes refuses it
            name = root_name(b.root)
            extents = self.bounds.root_extents(b.root)
            partial = set(range(len(extents))) if b.all_partial else set(b.partial)
            if getattr(op, "pred", None) is not None and getattr(op, "residue", None) is None:
                how = "under the kernel's own predicate"
                if partial:
                    how += " and guarded against " + ", ".join(
                        _why_partial(b, k, extents[k]) for k in sorted(partial)
                    )
            elif partial and isinstance(op, GemmOp | ClearOp | FillOp | _AtomicOp):
                continue  # refuse_partial says why
            elif partial:
                how = "guarded against " + ", ".join(
                    _why_partial(b, k, extents[k]) for k in sorted(partial)
                )
            elif b.proven:
                facts = ", ".join(f"{c.tile} | {c.extent}" for _, c in sorted(b.proven.items()))
                how = f"in bounds: the tiles divide the tensor ({facts})"
            else:
                how = "in bounds: no mode is cut"
            notes = [how]
            index = getattr(op, "index", None) or next(iter(getattr(op, "indices", ())), None)
            if index is not None and not _is_constant(index):
                notes.append("unchecked: user index")
            root = b.root
            if isinstance(root, OpResult) and isinstance(root.op, ViewOp):
                notes.append(self._view_note(root.op, name))
            self.remark(f"global {verb} of {name}: " + "; ".join(notes), op.location)

    def _view_note(self, view: ViewOp, name: str) -> str:
        """What is known of an explicit view's place in its source: inside it where it
        reorders its modes, else unchecked."""
        outer = self.bounds.bounds_of(view.source)
        inside = root_name(outer.root) if outer is not None else "its tensor"
        if self.bounds.reordered(view) is not None:
            return f"{name} is {inside} with its modes reordered"
        return f"unchecked: view {name} (line {_line(view)}) inside {inside}"

    # ------------------------------------------------------------------ which modes
    def partial_modes(self, view: Value) -> dict[int, Value]:
        """The modes of `view`'s bounds root its elements may run past (see
        cutec.analysis.bounds), with the values of their extents; empty for a tensor
        that is not global or whose chain cuts no mode past its end."""
        t = view.type
        if not isinstance(t, TensorType) or t.space is not AddressSpace.GLOBAL:
            return {}
        b = self.bounds.bounds_of(view)
        if b is None:
            raise CompileError(
                "cannot tell which tensor this global view is cut from, so its accesses "
                "cannot be guarded: make it from a kernel parameter",
                _location_of(view),
            )
        modes = self.bounds.root_extents(b.root)
        if b.layout_cut is not None:
            self._refuse_layout_cut(b.layout_cut)
        partial = set(range(len(modes))) if b.all_partial is not None else set(b.partial)
        if not partial:
            return {}
        root = b.root
        assert isinstance(root, OpResult)
        if isinstance(root.op, RecastOp):
            raise CompileError(
                "a recast of a tile that may run past its tensor cannot be guarded: "
                "guard the copy yourself (copy(..., pred = p)) or assume the tile full",
                root.op.location,
            )
        out: dict[int, Value] = {}
        for k in sorted(partial):
            if isinstance(modes[k], tuple):
                cut = b.partial.get(k)
                raise CompileError(
                    f"the nested mode {modes[k]} may be cut past its end; the predicate "
                    "pass handles flat modes only: assume the tile divides it",
                    (cut.op if cut is not None else b.all_partial or root.op).location,
                )
            out[k] = self._extent(root.op, k)
        return out

    def _refuse_layout_cut(self, op: Operation) -> None:
        """A layout (a layout tiler, a composition) may take elements past their source
        in its own order, which identity-tensor predicates do not follow: refused."""
        source = op.operands[0]
        composed = "layout" in op.attributes
        what = "composed layout" if composed else "layout tiler"
        layout = op.attributes["layout" if composed else "tiler"]
        assert isinstance(layout, LayoutAttr)
        raise CompileError(
            f"the {what} {layout.layout} may cut {self.la.layout_of(source)} "
            "past its end, which the predicate pass cannot guard: give the "
            "tensor static extents the layout's size divides, or tile it by "
            "integers",
            op.location,
        )

    def _extent(self, make: Operation, k: int) -> Value:
        """The value of extent k of a bounds root's tensor (an operand, or a constant)."""
        assert isinstance(make, ROOT_OPS)
        t = make.results[0].type
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
        family = copy_family(tiled.atom) if tiled is not None else None
        if family is None or not family.traits.elementwise:
            return 1
        values = int(tiled.library().atom.num_val_src)
        if values == 1:
            return 1
        layout = self.la.layout_of(self.mirror(view))
        step = layout(1) - layout(0)
        root = self.bounds.bounds_of(view)
        assert root is not None
        modes = self.bounds.root_extents(root.root)
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
            assert isinstance(make, ROOT_OPS)
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
        if isinstance(op, ROOT_OPS):
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
        self,
        op: Operation,
        view: Value,
        partial: dict[int, Value],
        step: int = 1,
        users: Value | None = None,
    ) -> Value:
        """An i1 fragment: element i is ``coord_k(i) < extent_k`` for every partial mode k
        (and ``users[i]``, the kernel's own predicate, where given).

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
            inside = self._inside(b, coords, index, partial)
            if users is not None:
                theirs = b.insert(LoadOp(users, index)).result
                inside = b.insert(arith.AndIOp(theirs, inside)).result
            b.insert(StoreOp(inside, pred, index))
        return pred

    @staticmethod
    def _inside(b: Builder, coords: Value, index: Value, partial: dict[int, Value]) -> Value:
        """``coord_k(index) < extent_k`` for every partial mode k, as one i1."""
        inside: Value | None = None
        for k, extent in sorted(partial.items()):
            c = b.insert(LoadCoordOp(coords, index, k)).result
            less = b.insert(arith.CmpIOp("slt", c, extent)).result
            inside = less if inside is None else b.insert(arith.AndIOp(inside, less)).result
        assert inside is not None
        return inside


# --------------------------------------------------------------------------- helpers


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


def _location_of(v: Value) -> Location | None:
    return v.op.location if isinstance(v, OpResult) else None


def _describe(bounds: BoundsAnalysis, view: Value) -> str:
    """Where `view` may run past its tensor, in the user's words."""
    b = bounds.bounds_of(view)
    assert b is not None
    name = root_name(b.root)
    extents = bounds.root_extents(b.root)
    if b.all_partial is not None:
        return f"a view (line {_line(b.all_partial)}) may run past {name}'s extents"
    cuts = ", ".join(_why_partial(b, k, extents[k]) for k in sorted(b.partial))
    return f"a view of {name} may run past its end: {cuts}"


def _why_partial(b: Bounds, k: int, extent: object) -> str:
    """``M (a tile of 32, line 9)`` or ``L (a slice coordinate, line 7)``: why root mode k
    is tested."""
    cut = b.partial.get(k)
    if cut is None:
        return f"{extent}"
    if isinstance(cut.op, SliceOp):
        return f"{extent} (a slice coordinate, line {_line(cut.op)})"
    return f"{extent} (a tile of {cut.tile}, line {_line(cut.op)})"


def _line(op: Operation) -> str:
    loc = op.location
    return str(loc.line) if loc is not None else "?"


def _global_operands(op: Operation) -> Iterator[tuple[Value, str]]:
    """The global tensors `op` reads or writes, each with what it does to it."""
    for v in op.operands:
        t = v.type
        if not isinstance(t, TensorType) or t.space is not AddressSpace.GLOBAL:
            continue
        if isinstance(op, CopyOp | CopyIfOp | CopyAsyncOp):
            yield v, "load" if v is op.src else "store"
        elif isinstance(op, AxpbyOp | _AtomicOp):
            yield v, "update"
        elif isinstance(op, LoadOp | GemmOp):
            yield v, "load"
        elif isinstance(op, StoreOp | ClearOp | FillOp):
            yield v, "store"


def _is_constant(v: Value) -> bool:
    return isinstance(v, OpResult) and isinstance(v.op, arith.ConstantOp)


def unguarded_accesses(kernel: Operation, bounds: BoundsAnalysis) -> list[str]:
    """The global accesses of `kernel` that may run past their tensor and have no
    guard: empty after the predicate pass (its invariant; tests check it over every
    example). An access is guarded by a predicate operand or, for one element, by the
    pass's ``scf.if {residue}``."""
    left = []
    for op in kernel.walk():
        if getattr(op, "pred", None) is not None:
            continue
        parent = op.parent_op
        guarded = isinstance(parent, scf.IfOp) and parent.residue is not None
        if isinstance(op, LoadOp | StoreOp) and guarded:
            continue
        for view, _ in _global_operands(op):
            b = bounds.bounds_of(view)
            if b is None or b.partial or b.all_partial or b.layout_cut:
                left.append(f"{op.name} at {op.location}")
    return left
