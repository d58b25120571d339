"""lower-to-thread: cute ops → one thread's program in the thread dialect.

Every tensor is a root plus a layout (`LayoutAnalysis.address_of`): element i
of a view is element ``offset + layout(i)`` of its root. Roots become pointers:

    cute.make_tensor    its global pointer operand
    cute.alloc_smem     thread.alloc_shared (static; the dynamic array past 48 KiB)
    cute.make_fragment  thread.alloc_local, which promote-registers turns into SSA
    cute.map_shared_rank  thread.mapa of its source's root pointer (another CTA's
                        shared memory, addressed at the source's offset and layout)

and each access computes its address from the symbolic offset, materialised as
arith ops (`IntegerMaterializer`): the part that depends on run-time values
once per scope and view offset (``base = root + offset``, shared by every
element), the layout's part per element (``base + layout(i)``). View
ops (tile, partition, slice, divide) emit nothing: only the accesses they
lead to do, and they are erased at the end.

Offsets are 32-bit (``mad.wide.s32`` into the 64-bit address) unless the pass
is run with ``offset-bits=64``: the kernel records ``offsets = 32`` and the
runtime checks at each launch that every tensor argument spans fewer than
2^31 elements (docs/abi.md), so no valid element's offset, nor any partial sum
of its non-negative terms, can wrap.

The compute ops, on fragments whose shapes are static (their loops unrolled):

    copy / copy_if  loads and stores of the access width: a named UniversalCopy
                    atom's, or the `vector` attribute vectorize chose; under a
                    predicate, load_if / store_if (a register destination keeps
                    its old value where the predicate is false; with ``zfill``
                    the destination is written zero there instead)
    gemm            C(v,m,n) += A(v,m,k) * B(v,n,k) by arith.fma, k outermost
    fill / clear    stores of the value / zero
    map             its scalar body once per element (fragment arithmetic)
    axpby           y = alpha*x + beta*y, in an scf.if on beta == 0 whose true
                    side never reads y (CuTe's isBetaZero: y may hold NaN);
                    under its predicate, masked elements are not touched (a
                    vector moves under its first element's predicate: vectorize
                    gives one only where no vector straddles the end)
    load / store    one element at a static or run-time index
    atomic_*        the thread atomic on one element's pointer (an index, or one
                    coordinate per mode)
    mbarrier_*      the thread mbarrier op(s) on one element's pointer (lower_mbarrier.py)
    load_coord      the coordinate component, as index arithmetic
    size            its value, as index arithmetic

An op the SIMT path cannot lower yet (a tensor-core atom, cp.async through a
tiled copy, TMA) is a located error naming it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cutec.analysis.fragments import element_of, space_of, static_modes, static_size
from cutec.analysis.shared_plan import plan_shared, round_up
from cutec.atoms.copy import copy_atom, copy_family
from cutec.atoms.family import Family
from cutec.atoms.mma import mma_atom_named
from cutec.diagnostics import CompileError, Location
from cutec.ir.attributes import ArrayAttr, DictAttr, IntegerAttr, StringAttr
from cutec.ir.builder import Builder
from cutec.ir.core import Block, Operation, OpResult, Value
from cutec.ir.dialects import arith, scf, thread
from cutec.ir.dialects.builtin import KernelOp, ModuleOp
from cutec.ir.dialects.cute_atom_types import AUTO
from cutec.ir.dialects.cute_atomic import AtomicLoadOp, AtomicRmwOp, AtomicStoreOp
from cutec.ir.dialects.cute_base import CuteOp
from cutec.ir.dialects.cute_cluster import MapSharedRankOp
from cutec.ir.dialects.cute_compute import (
    AxpbyOp,
    ClearOp,
    CopyAsyncOp,
    CopyIfOp,
    CopyOp,
    FillOp,
    GemmOp,
    LoadOp,
    MakeTiledCopyOp,
    MakeTiledMmaOp,
    StoreOp,
)
from cutec.ir.dialects.cute_coord import LoadCoordOp, MakeIdentityTensorOp, coordinate_component
from cutec.ir.dialects.cute_map import MapOp
from cutec.ir.dialects.cute_tensor import (
    AllocSmemOp,
    MakeFragmentOp,
    MakeTensorOp,
    RecastOp,
    SizeOp,
    ViewOp,
    _ViewOp,
)
from cutec.ir.dialects.cute_tma import GetTmaTensorOp, MakeTmaAtomOp, TmaCopyOp, TmaStoreOp
from cutec.ir.dialects.cute_types import TensorType
from cutec.ir.dialects.thread_atom import atom_family
from cutec.ir.layout_of import LayoutAnalysis
from cutec.ir.materialize import IntegerMaterializer, offset_of
from cutec.ir.types import FloatType, IndexType, IntegerType, Type, dtype_of, i64
from cutec.layout import ComposedLayout, cosize
from cutec.layout.symbolic import Integer
from cutec.passes.lower_atoms import lower_ldmatrix, lower_mma_gemm
from cutec.passes.lower_mbarrier import MBARRIER_OPS, thread_ops
from cutec.passes.lower_tma import lower_tma_copy, lower_tma_store, tma_aligns, tma_map_names
from cutec.passes.lower_wgmma import (
    SYNC_RULES,
    check_batches,
    descriptor_aligns,
    lower_wgmma_gemm,
)
from cutec.passes.manager import Pass, working_on
from cutec.target import DEFAULT_TARGET, KIB, AddressSpace, target

SHARED_ALIGN = 128  # every shared buffer starts on a 128-byte boundary (vectorize assumes it)
LOCAL_ALIGN = 16
_EXTERN_ALIGN = 16  # the dynamic shared array's alignment unless a buffer needs more


@dataclass
class LowerToThread(Pass):
    """Lower every kernel's cute ops to the thread dialect (see the module docstring)."""

    name = "lower-to-thread"
    summary = "cute ops to one thread's program: addresses from layouts, loads, stores, FMAs"
    offset_bits: int = 32

    def run(self, module: ModuleOp) -> None:
        if self.offset_bits not in (32, 64):
            raise CompileError(f"lower-to-thread: offset-bits is 32 or 64, not {self.offset_bits}")
        for kernel in list(module.walk_type(KernelOp)):
            la = self.analyses.get(LayoutAnalysis, kernel)
            _KernelLowering(kernel, la, IntegerType(self.offset_bits), module, self.remark).run()


# --------------------------------------------------------------------------- scopes


@dataclass
class _Scope:
    """What one block being lowered shares: a materialiser and the base pointers made."""

    builder: Builder
    offsets: IntegerMaterializer  # the offset type (i32 or i64)
    indices: IntegerMaterializer  # index values (sizes, coordinates)
    bases: dict[tuple[Value, Any], Value] = field(default_factory=dict)
    elements: dict[tuple[Value, Any], Value] = field(default_factory=dict)

    def nested(self, block: Block, before: Operation | None) -> _Scope:
        """A scope inserting into `block` (before `before`) that reuses what this one made.
        Its ops take the location of the op being lowered (an axpby's branches): a
        diagnostic about them, the emitter's included, points at the user's line."""
        here = self.builder.location
        builder = (
            Builder.before(before, here) if before is not None else Builder.at_end(block, here)
        )
        return _Scope(
            builder,
            self.offsets.nested(builder),
            self.indices.nested(builder),
            dict(self.bases),
            dict(self.elements),
        )


class _KernelLowering:
    def __init__(
        self,
        kernel: KernelOp,
        la: LayoutAnalysis,
        offset_type: IntegerType,
        module: ModuleOp,
        remark: Callable[[str, Location | None], None] = lambda message, location: None,
    ) -> None:
        self.kernel = kernel
        self.remark = remark
        self.la = la
        self.offset_type = offset_type
        self.target = target(module.target or DEFAULT_TARGET)
        self.roots: dict[Value, Value] = {}  # root tensor → its pointer
        self.lowered: list[Operation] = []  # cute ops to erase, in program order
        self.dynamic_smem = 0

    def symbol(self, name: str) -> Value:
        return self.la.symbol_values(self.kernel)[name]

    # ------------------------------------------------------------------ walk
    def run(self) -> None:
        body = self.kernel.body
        first = body.first_op
        builder = Builder.before(first) if first is not None else Builder.at_end(body)
        scope = _Scope(
            builder,
            IntegerMaterializer(builder, self.symbol, self.offset_type),
            IntegerMaterializer(builder, self.symbol, IndexType()),
        )
        self._check_atoms()
        self.names_batches = check_batches(self.kernel)
        self._record_launch_facts()
        self._plan_shared()
        self.lower_block(body, scope)
        for op in reversed(self.lowered):
            op.erase()
        if self.offset_type.width == 32:
            self.kernel.attributes["offsets"] = IntegerAttr(32, i64)
        if self.dynamic_smem:
            self.kernel.attributes["dynamic_smem"] = IntegerAttr(self.dynamic_smem, i64)

    def _record_launch_facts(self) -> None:
        """What the code assumes of the arguments, for the runtime to check at launch:
        each tensor pointer's declared alignment and each extent's or stride's divisor
        (the `align` and `div` of the make_tensor ops, which the lowering erases)."""
        align: dict[str, int] = {}
        div: dict[str, int] = {}
        for op in self.kernel.walk_type(MakeTensorOp):
            name = op.ptr.name_hint
            if op.align is not None and name:
                align[name] = max(align.get(name, 1), op.align.value)
            for i, leaf in enumerate(op.leaves, start=1):
                d = op.leaf_divisor(i)
                if d and d > 1 and leaf.name_hint and leaf in self.kernel.args:
                    div[leaf.name_hint] = max(div.get(leaf.name_hint, 1), d)
        for key, facts in (("arg_align", align), ("arg_div", div)):
            if facts:
                entries = tuple((k, IntegerAttr(v, i64)) for k, v in sorted(facts.items()))
                self.kernel.attributes[key] = DictAttr(entries)
        maps = tma_map_names(self.kernel)
        if maps:
            self.kernel.attributes["tensor_maps"] = ArrayAttr([StringAttr(m) for m in maps])

    def lower_block(self, block: Block, scope: _Scope) -> None:
        for op in list(block.ops):
            scope.builder.point.before = op  # type: ignore[union-attr]
            with scope.builder.located(op.location), working_on(op):
                self.lower_op(op, scope)

    def lower_op(self, op: Operation, scope: _Scope) -> None:
        if isinstance(op, CuteOp):
            rule = _RULES.get(type(op))
            if rule is None:
                if isinstance(op, _NO_CODE):
                    self.lowered.append(op)  # a view or an atom value: nothing to emit
                    return
                raise CompileError(
                    f"'{op.name}' cannot be lowered to the thread dialect yet "
                    "(the SIMT path lowers copies, UniversalFMA gemms, fills and axpby)",
                    op.location,
                )
            rule(self, op, scope)
            self.lowered.append(op)
            return
        for region in op.regions:
            for block in region.blocks:
                self.lower_block(block, scope.nested(block, block.first_op))

    def _check_atoms(self) -> None:
        """One located error for the first atom the SIMT path cannot lower, at its
        definition, before any code is made."""
        for op in self.kernel.walk():
            if isinstance(op, MakeTiledMmaOp):
                atom = op.result.type.atom  # type: ignore[union-attr]
                if atom == AUTO or atom_family(atom) not in _MMA_RULES:
                    raise CompileError(
                        f"the MMA atom {'auto' if atom == AUTO else atom} cannot be lowered "
                        "yet: lower-to-thread lowers UniversalFMA, SM80's mma.sync and "
                        "SM90's wgmma",
                        op.location,
                    )
                record = mma_atom_named(atom)
                if record is not None and not self.target.runs(record.min_target):
                    raise CompileError(
                        f"the MMA atom {atom} needs {record.min_target}, and this kernel is "
                        f"compiled for {self.target} (choose the target with --arch)",
                        op.location,
                    )
            atom = _copy_atom_of(op)
            if atom is not None and not _lowerable_copy(atom):
                raise CompileError(
                    f"the copy atom {atom} cannot be lowered yet: lower-to-thread lowers "
                    "UniversalCopy, cp.async and ldmatrix (TMA and stmatrix come with the "
                    "Hopper path)",
                    op.location,
                )

    # ------------------------------------------------------------------ roots
    def _plan_shared(self) -> None:
        """Static shared arrays up to the target's static limit; past it, one dynamic
        array, its buffers placed by shared_plan (a dead buffer's bytes reused)."""
        sizes = {op: _alloc_bytes(op) for op in self.kernel.walk_type(AllocSmemOp)}
        aligns = descriptor_aligns(self.kernel, dict.fromkeys(sizes, SHARED_ALIGN))
        self.smem_aligns = tma_aligns(self.kernel, aligns)
        total = sum(round_up(n, self.smem_aligns[op]) for op, n in sizes.items())
        self.smem_offsets: dict[AllocSmemOp, int] | None = None
        if total <= self.target.static_smem_per_cta:
            return
        plan = plan_shared(self.kernel, sizes, self.smem_aligns)
        align = max(self.smem_aligns.values())
        if align > _EXTERN_ALIGN:
            self.kernel.attributes["dynamic_smem_align"] = IntegerAttr(align, i64)
        limit = self.target.smem_per_cta
        if plan.total > limit:
            last = max(sizes, key=lambda op: plan.offsets[op] + sizes[op])
            raise CompileError(
                f"shared memory use reaches {plan.total} bytes with this {sizes[last]}-byte "
                f"buffer (a pipelined buffer holds all its stages); the limit on "
                f"{self.target} is {limit} ({limit // KIB} KiB per CTA)",
                last.location,
            )
        self.smem_offsets = plan.offsets
        self.dynamic_smem = plan.total
        for op in plan.reusing:
            self.remark(
                f"shared memory: this {sizes[op]}-byte buffer reuses the bytes of one "
                f"no thread touches any more ({plan.total} bytes per CTA, {total} "
                "without the reuse)",
                op.location,
            )

    def root_pointer(self, root: Value, scope: _Scope) -> Value:
        found = self.roots.get(root)
        if found is not None:
            return found
        assert isinstance(root, OpResult)
        op = root.op
        if isinstance(op, MakeTensorOp):
            found = op.ptr
        else:
            raise CompileError(
                f"a tensor rooted at '{op.name}' has no memory to address", op.location
            )
        self.roots[root] = found
        return found

    def alloc_smem(self, op: AllocSmemOp, scope: _Scope) -> None:
        element = element_of(op.result)
        b = scope.builder
        if self.smem_offsets is None:
            align = self.smem_aligns[op]
            ptr = b.insert(thread.AllocSharedOp(element, _alloc_bytes(op), align)).result
        else:
            base = b.insert(thread.DynamicSharedOp(element)).result
            at = self.smem_offsets[op] // _bytes(element)
            ptr = self.ptr_add(base, at, scope) if at else base
        self.roots[op.result] = ptr

    def recast(self, op: RecastOp, scope: _Scope) -> None:
        """A recast tensor is a root: the source's element 0, its pointer cast."""
        first = self.element_ptr(op.source, 0, scope)
        cast = thread.PtrCastOp(first, element_of(op.result))
        self.roots[op.result] = scope.builder.insert(cast).result

    def map_shared_rank(self, op: MapSharedRankOp, scope: _Scope) -> None:
        """Another CTA's copy of a shared tensor is a root: the source's root pointer
        mapped to that CTA (``thread.mapa``), addressed at the source's offset and
        layout (`MapSharedRankOp.result_address`)."""
        root = self.root_pointer(self.la.address_of(op.source).root, scope)
        self.roots[op.result] = scope.builder.insert(thread.MapaOp(root, op.rank)).result

    def make_fragment(self, op: MakeFragmentOp, scope: _Scope) -> None:
        element = element_of(op.result)
        nbytes = max(1, _alloc_bytes(op))
        self.roots[op.result] = scope.builder.insert(
            thread.AllocLocalOp(element, nbytes, LOCAL_ALIGN)
        ).result

    # ------------------------------------------------------------------ addresses
    def ptr_add(self, ptr: Value, offset: Integer, scope: _Scope) -> Value:
        value = scope.offsets(offset)
        return scope.builder.insert(thread.PtrAddOp(ptr, value)).result

    def element_ptr(self, tensor: Value, coord: Any, scope: _Scope) -> Value:
        """A pointer to element `coord` (a linear index or a coordinate tuple) of `tensor`."""
        key = (tensor, coord)
        found = scope.elements.get(key)
        if found is None:
            found = scope.elements[key] = self._element_ptr(tensor, coord, scope)
        return found

    def _element_ptr(self, tensor: Value, coord: Any, scope: _Scope) -> Value:
        address = self.la.address_of(tensor)
        root = self.root_pointer(address.root, scope)
        layout = address.layout
        if isinstance(layout, ComposedLayout):
            value = offset_of(layout, coord, scope.offsets)
            if address.offset != 0:
                value = scope.offsets.binary(arith.AddIOp, scope.offsets(address.offset), value)
            return scope.builder.insert(thread.PtrAddOp(root, value)).result
        base = root
        if address.offset != 0:  # the view's offset: once per scope for all its elements
            key = (root, address.offset)
            base = scope.bases.get(key)  # type: ignore[assignment]
            if base is None:
                base = scope.bases[key] = self.ptr_add(root, address.offset, scope)
        x = layout(coord)
        return self.ptr_add(base, x, scope) if x != 0 else base

    def load(self, tensor: Value, coord: Any, scope: _Scope, width: int = 1) -> Value:
        ptr = self.element_ptr(tensor, coord, scope)
        return scope.builder.insert(thread.LoadOp(ptr, width)).result

    def store(self, value: Value, tensor: Value, coord: Any, scope: _Scope) -> None:
        ptr = self.element_ptr(tensor, coord, scope)
        scope.builder.insert(thread.StoreOp(value, ptr))

    def constant(self, value: float | int, t: Type, scope: _Scope, width: int = 1) -> Value:
        c = scope.builder.insert(arith.constant(value, t)).result
        if width == 1:
            return c
        return scope.builder.insert(thread.FromElementsOp([c] * width)).result

    # ------------------------------------------------------------------ copies
    def copy(self, op: CopyOp | CopyIfOp, scope: _Scope) -> None:
        atom = _named_atom(op)
        if atom is None:
            self.copy_elements(op, atom, scope)
            return
        rule = _COPY_RULES.get(copy_family(atom))
        if rule is None:
            raise CompileError(
                f"a copy by the atom {atom} cannot be lowered yet (the SIMT path lowers "
                "UniversalCopy)",
                op.location,
            )
        rule(self, op, atom, scope)

    def copy_elements(self, op: CopyOp | CopyIfOp, atom: str | None, scope: _Scope) -> None:
        """Loads and stores of `width` elements (a UniversalCopy atom's, or vectorize's)."""
        src, dst = op.src, op.dst
        n = static_size(self.la, src, op)
        width = _access_width(op, atom)
        pred = op.pred if isinstance(op, CopyIfOp) else None
        if pred is not None and atom is None:
            width = 1  # element i moves where pred[i] is: one element per access
        element = element_of(src)
        dst_in_registers = space_of(dst) is AddressSpace.REGISTER
        for g in range(0, n, width):
            if pred is None:
                value = self.load(src, g, scope, width)
                self.store(value, dst, g, scope)
                continue
            # A named atom moves `width` elements per call: its predicate is the call's
            # first element's (CuTe's copy_if tests one predicate per atom call).
            p = self.load(pred, g, scope)
            zfill = isinstance(op, CopyIfOp) and op.zfill is not None
            if space_of(src) is AddressSpace.REGISTER:
                value = self.load(src, g, scope, width)
            else:
                keep = dst_in_registers and not zfill  # copy_if keeps a masked element
                default = (
                    self.load(dst, g, scope, width)
                    if keep
                    else self.constant(_zero(element), element, scope, width)
                )
                src_ptr = self.element_ptr(src, g, scope)
                value = scope.builder.insert(thread.LoadIfOp(p, src_ptr, default)).result
            if dst_in_registers or zfill:
                # Registers take the selected value; zfill writes zero where masked.
                self.store(value, dst, g, scope)
            else:
                dst_ptr = self.element_ptr(dst, g, scope)
                scope.builder.insert(thread.StoreIfOp(p, value, dst_ptr))

    def copy_async(self, op: CopyAsyncOp, scope: _Scope) -> None:
        """cp.async of the atom's width per access; a _ZFILL atom's false predicate
        reads nothing and writes zeros (src-size 0), another atom's skips the access."""
        atom = _named_atom(op)
        assert atom is not None
        if copy_family(atom) is not Family.CP_ASYNC:
            raise CompileError(f"copy_async by {atom}: not a cp.async atom", op.location)
        record = copy_atom(atom)
        element = element_of(op.src)
        nbytes = record.value_bits // 8
        width = nbytes // _bytes(element)
        cache = record.cache
        assert cache is not None
        zfill = record.zfill or op.zfill is not None
        n = static_size(self.la, op.src, op)
        b = scope.builder
        tokens: list[Value] = []
        for g in range(0, n, width):
            src = self.element_ptr(op.src, g, scope)
            dst = self.element_ptr(op.dst, g, scope)
            if op.pred is None:
                tokens.append(b.insert(thread.CpAsyncOp(dst, src, nbytes, cache=cache)).result)
                continue
            p = self.load(op.pred, g, scope)
            if zfill:
                full = self.constant(nbytes, IntegerType(32), scope)
                none = self.constant(0, IntegerType(32), scope)
                size = b.insert(arith.SelectOp(p, full, none)).result
                copy = thread.CpAsyncOp(dst, src, nbytes, cache=cache, src_size=size)
                tokens.append(b.insert(copy).result)
            else:
                guard = b.insert(scf.IfOp(p))
                guard.then_block.append(thread.CpAsyncOp(dst, src, nbytes, cache=cache))
                guard.then_block.append(scf.YieldOp())
        # The cute token stood for all of these copies: a commit groups each of them.
        for use in list(op.token.uses):
            owner = use.owner
            if isinstance(owner, thread.CpAsyncCommitOp):
                rest = [v for v in owner.operands if v is not op.token]
                owner.set_operands([*rest, *tokens])
            else:
                raise CompileError(f"a copy_async token used by '{owner.name}'", op.location)

    # ------------------------------------------------------------------ math
    def gemm(self, op: GemmOp, scope: _Scope) -> None:
        mma = op.mma
        if mma is not None:
            atom = mma.type.atom  # type: ignore[union-attr]
            # auto: its type stands in a UniversalFMA (cute_atom_types._tiled_mma).
            rule = _MMA_RULES.get(Family.UNIVERSAL_FMA if atom == AUTO else atom_family(atom))
            if rule is None:
                raise CompileError(
                    f"gemm by the MMA atom {atom} cannot be lowered yet "
                    "(lower-to-thread lowers UniversalFMA, SM80's mma.sync and SM90's wgmma)",
                    op.location,
                )
            rule(self, op, atom, scope)
            return
        self.fma_gemm(op, None, scope)

    def fma_gemm(self, op: GemmOp, atom: str | None, scope: _Scope) -> None:
        """C(m,n) += A(m,k) · B(n,k) by one arith.fma per (m, n, k), k outermost."""
        c_rank = len(static_modes(self.la, op.c, op))
        a, b, c = (_vmk(self.la, v, op, c_rank) for v in (op.a, op.b, op.c))
        (va, m_a, k_a), (vb, n_b, k_b), (vc, m_c, n_c) = (x[1] for x in (a, b, c))
        if not (va == vb == vc == 1 and m_a == m_c and n_b == n_c and k_a == k_b):
            raise CompileError(
                f"gemm shapes do not agree: A (V,M,K) = {(va, m_a, k_a)}, "
                f"B (V,N,K) = {(vb, n_b, k_b)}, C (V,M,N) = {(vc, m_c, n_c)} "
                "(an FMA gemm has V = 1)",
                op.location,
            )
        b_ = scope.builder
        # Each C element is read once and written once; the k loop runs on its value.
        coords = {(m, n): c[0](m, n) for m in range(m_a) for n in range(n_b)}
        acc = {mn: self.load(op.c, crd, scope) for mn, crd in coords.items()}
        for k in range(k_a):
            avals = [self.load(op.a, a[0](m, k), scope) for m in range(m_a)]
            bvals = [self.load(op.b, b[0](n, k), scope) for n in range(n_b)]
            for m in range(m_a):
                for n in range(n_b):
                    acc[m, n] = b_.insert(arith.FmaOp(avals[m], bvals[n], acc[m, n])).result
        for mn, crd in coords.items():
            self.store(acc[mn], op.c, crd, scope)

    def fill(self, op: FillOp | ClearOp, scope: _Scope) -> None:
        t = op.tensor
        element = element_of(t)
        if isinstance(op, FillOp):
            value = op.value
        else:
            value = self.constant(_zero(element), element, scope)
        for i in range(static_size(self.la, t, op)):
            self.store(value, t, i, scope)

    def axpby(self, op: AxpbyOp, scope: _Scope) -> None:
        """y = alpha x + beta y in x's element type (the accumulator's), converted to y's
        on the store; `vector` elements per access (vectorize), under a predicate the
        predicate of each vector's first element (vectorize's `uniform_predicate`)."""
        n = static_size(self.la, op.x, op)
        element, compute = element_of(op.y), element_of(op.x)
        if not (isinstance(element, FloatType) and isinstance(compute, FloatType)):
            raise CompileError(
                f"axpby computes in floating point, not {compute} to {element}", op.location
            )
        attr = op.vector  # under a predicate: the vector's first element's
        width = attr.value if attr is not None else 1
        b = scope.builder
        zero = self.constant(0.0, compute, scope)
        beta_zero = b.insert(arith.CmpFOp("oeq", op.beta, zero)).result
        branch = b.insert(scf.IfOp(beta_zero, with_else=True))
        for block, read_y in ((branch.then_block, False), (branch.else_block, True)):
            assert block is not None
            block.append(scf.YieldOp())
            inner = scope.nested(block, block.last_op)
            ib = inner.builder
            for g in range(0, n, width):
                xs = self._lanes(self.load(op.x, g, inner, width), width, inner)
                out = [ib.insert(arith.MulFOp(op.alpha, x)).result for x in xs]
                ptr = self.element_ptr(op.y, g, inner)
                p = self.load(op.pred, g, inner) if op.pred is not None else None
                if read_y:
                    if p is not None:
                        zero_y = self.constant(0.0, element, inner, width)
                        y = ib.insert(thread.LoadIfOp(p, ptr, zero_y)).result
                    else:
                        y = ib.insert(thread.LoadOp(ptr, width)).result
                    ys = [self._convert(v, compute, inner) for v in self._lanes(y, width, inner)]
                    pairs = zip(ys, out, strict=True)
                    out = [ib.insert(arith.FmaOp(op.beta, v, a)).result for v, a in pairs]
                out = [self._convert(v, element, inner) for v in out]
                value = out[0] if width == 1 else ib.insert(thread.FromElementsOp(out)).result
                if p is None:
                    ib.insert(thread.StoreOp(value, ptr))
                else:
                    ib.insert(thread.StoreIfOp(p, value, ptr))

    def _lanes(self, value: Value, width: int, scope: _Scope) -> list[Value]:
        """The elements of a vector of `width` (a scalar is its own one element)."""
        if width == 1:
            return [value]
        return [scope.builder.insert(thread.ExtractOp(value, i)).result for i in range(width)]

    def _convert(self, value: Value, to: Type, scope: _Scope) -> Value:
        """A float converted exactly (wider) or to nearest even (narrower)."""
        t = value.type
        if t == to:
            return value
        assert isinstance(t, FloatType) and isinstance(to, FloatType)
        cast = arith.ExtFOp if dtype_of(to).bits > dtype_of(t).bits else arith.TruncFOp
        return scope.builder.insert(cast(value, to)).result

    def map(self, op: MapOp, scope: _Scope) -> None:
        """The body once per element, its arguments the inputs' elements."""
        b = scope.builder
        terminator = op.body.last_op
        for i in range(static_size(self.la, op.out, op)):
            mapping = {
                arg: self.load(v, i, scope) for arg, v in zip(op.body.args, op.inputs, strict=True)
            }
            for inner in op.body.ops:
                if inner is terminator:
                    break
                b.insert(inner.clone(mapping))
            self.store(
                mapping.get(terminator.operands[0], terminator.operands[0]), op.out, i, scope
            )

    # ------------------------------------------------------------------ elements
    def load_element(self, op: LoadOp, scope: _Scope) -> None:
        value = self.load(op.tensor, self.index_of(op.index, scope), scope)
        op.result.replace_all_uses_with(value)

    def store_element(self, op: StoreOp, scope: _Scope) -> None:
        self.store(op.value, op.tensor, self.index_of(op.index, scope), scope)

    def atomic(self, op: AtomicRmwOp | AtomicLoadOp | AtomicStoreOp, scope: _Scope) -> None:
        """The thread atomic on the element's pointer (a linear index, or a coordinate of
        one index per mode)."""
        coord = [self.index_of(i, scope) for i in op.indices]
        ptr = self.element_ptr(op.tensor, coord[0] if len(coord) == 1 else tuple(coord), scope)
        sem, where = op.sem.value, op.scope.value
        b = scope.builder
        if isinstance(op, AtomicRmwOp):
            rmw = b.insert(thread.AtomicRmwOp(op.kind.value, ptr, op.value, sem, where))
            op.result.replace_all_uses_with(rmw.result)
        elif isinstance(op, AtomicLoadOp):
            op.result.replace_all_uses_with(b.insert(thread.AtomicLoadOp(ptr, sem, where)).result)
        else:
            b.insert(thread.AtomicStoreOp(op.value, ptr, sem, where))

    def mbarrier(self, op: Operation, scope: _Scope) -> None:
        """The thread mbarrier op(s) on the element's pointer (lower_mbarrier.py)."""
        coord = [self.index_of(i, scope) for i in op.indices]  # type: ignore[attr-defined]
        tensor = op.tensor  # type: ignore[attr-defined]
        ptr = self.element_ptr(tensor, coord[0] if len(coord) == 1 else tuple(coord), scope)
        for made in thread_ops(op, ptr):
            scope.builder.insert(made)

    def index_of(
        self, index: Value, scope: _Scope, into: IntegerMaterializer | None = None
    ) -> Any:
        """A linear index as the algebra takes it: an int, or for a run-time one a symbol
        of the materializer `into` that builds what it is used in (default: the offsets')."""
        integer = self.la.integer_of(index)
        m = scope.offsets if into is None else into
        return integer if isinstance(integer, int) else m.coordinate(index)

    def load_coord(self, op: LoadCoordOp, scope: _Scope) -> None:
        address = self.la.address_of(op.tensor)
        # The coordinate is an index value, built by scope.indices (not an offset).
        x = address.offset + address.layout(self.index_of(op.index, scope, scope.indices))
        value = scope.indices(coordinate_component(x, op.mode.value))
        op.result.replace_all_uses_with(value)

    def size(self, op: SizeOp, scope: _Scope) -> None:
        op.result.replace_all_uses_with(scope.indices(self.la.integer_of(op.result)))


# Ops that only describe tensors or atoms: the accesses they lead to emit the code.
_NO_CODE = (
    _ViewOp,
    ViewOp,
    MakeTensorOp,
    MakeIdentityTensorOp,
    MakeTiledCopyOp,
    MakeTiledMmaOp,
    MakeTmaAtomOp,
    GetTmaTensorOp,
)

_RULES: dict[type[Operation], Callable[[_KernelLowering, Any, _Scope], None]] = {
    AllocSmemOp: _KernelLowering.alloc_smem,
    MakeFragmentOp: _KernelLowering.make_fragment,
    RecastOp: _KernelLowering.recast,
    MapSharedRankOp: _KernelLowering.map_shared_rank,
    CopyOp: _KernelLowering.copy,
    CopyIfOp: _KernelLowering.copy,
    CopyAsyncOp: _KernelLowering.copy_async,
    GemmOp: _KernelLowering.gemm,
    FillOp: _KernelLowering.fill,
    ClearOp: _KernelLowering.fill,
    AxpbyOp: _KernelLowering.axpby,
    MapOp: _KernelLowering.map,
    LoadOp: _KernelLowering.load_element,
    StoreOp: _KernelLowering.store_element,
    AtomicRmwOp: _KernelLowering.atomic,
    AtomicLoadOp: _KernelLowering.atomic,
    AtomicStoreOp: _KernelLowering.atomic,
    LoadCoordOp: _KernelLowering.load_coord,
    TmaCopyOp: lower_tma_copy,
    TmaStoreOp: lower_tma_store,
    SizeOp: _KernelLowering.size,
    **SYNC_RULES,
    **dict.fromkeys(MBARRIER_OPS, _KernelLowering.mbarrier),
}


# --------------------------------------------------------------------------- helpers


def _bytes(t: Type) -> int:
    return max(1, dtype_of(t).bits // 8)


def _alloc_bytes(op: AllocSmemOp | MakeFragmentOp) -> int:
    t = op.result.type
    assert isinstance(t, TensorType)
    layout = t.spec.with_values(())
    inner = layout.layout_b if isinstance(layout, ComposedLayout) else layout
    return int(cosize(inner)) * _bytes(t.element)


def _zero(t: Type) -> float | int:
    return 0.0 if isinstance(t, FloatType) else 0


def _copy_atom_of(op: Operation) -> str | None:
    """The copy atom `op` defines or names, if any (auto is resolved by select-atoms)."""
    if isinstance(op, MakeTiledCopyOp):
        atom = op.result.type.atom  # type: ignore[union-attr]
        return None if atom == AUTO else atom
    attr = op.attributes.get("atom") if isinstance(op, CopyOp | CopyIfOp) else None
    return attr.value if isinstance(attr, StringAttr) else None


# lower-to-thread's rule for a gemm, and for a cute.copy, by each atom family it lowers:
# the record's family picks the rule, never the atom's name. cp.async copies are
# cute.copy_async ops (`copy_async`). A family absent here is reported at the atom's
# definition before any code is made (`_check_atoms`).
_MMA_RULES: dict[Family, Callable[[_KernelLowering, GemmOp, str, _Scope], None]] = {
    Family.UNIVERSAL_FMA: _KernelLowering.fma_gemm,
    Family.MMA_SYNC: lower_mma_gemm,
    Family.WGMMA: lower_wgmma_gemm,
}
_COPY_RULES: dict[Family, Callable[[_KernelLowering, Any, str, _Scope], None]] = {
    Family.UNIVERSAL_COPY: _KernelLowering.copy_elements,
    Family.LDMATRIX: lower_ldmatrix,
}


def _lowerable_copy(atom: str) -> bool:
    family = copy_family(atom)
    return family in _COPY_RULES or family is Family.CP_ASYNC


def _named_atom(op: CopyOp | CopyIfOp | CopyAsyncOp) -> str | None:
    """The copy's atom: its tiled copy's, or the one it names (select-atoms' choice)."""
    tiled = op.tiled_type()
    if tiled is not None and tiled.atom != AUTO:
        return tiled.atom
    attr = op.attributes.get("atom")
    return attr.value if isinstance(attr, StringAttr) else None


def _access_width(op: CopyOp | CopyIfOp, atom: str | None) -> int:
    """Elements per access: the UniversalCopy atom's, else the `vector` vectorize chose."""
    if atom is None:
        attr = op.attributes.get("vector")
        return attr.value if isinstance(attr, IntegerAttr) else 1
    return copy_atom(atom).value_bits // dtype_of(element_of(op.src)).bits


def _vmk(
    la: LayoutAnalysis, v: Value, op: Operation, c_rank: int
) -> tuple[Callable[[int, int], tuple[int, ...]], tuple[int, int, int]]:
    """A gemm operand's coordinate function (i, j) → its coordinate, and its (V, I, J).

    CuTe's gemm dispatches on ranks: (V,M,K) x (V,N,K) => (V,M,N); (V,M) x (V,N) =>
    (V,M,N), one k-block (K = 1); (M,K) x (N,K) => (M,N) with V = 1.
    """
    sizes = static_modes(la, v, op)
    if len(sizes) == 2 and c_rank == 3:  # an A or B of one k-block
        return (lambda i, j: (0, i)), (sizes[0], sizes[1], 1)
    if len(sizes) == 2:
        return (lambda i, j: (i, j)), (1, sizes[0], sizes[1])
    if len(sizes) == 3:
        return (lambda i, j: (0, i, j)), (sizes[0], sizes[1], sizes[2])
    raise CompileError(f"gemm takes rank-2 or rank-3 fragments, got {la.layout_of(v)}", op.location)
