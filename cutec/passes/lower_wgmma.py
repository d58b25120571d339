"""lower-to-thread's warpgroup MMAs: ``gemm`` by a wgmma atom (family WGMMA, sm_90a).

``gemm(mma, A, B, C)`` with CuTe's ``(V,M,K) x (V,N,K) => (V,M,N)``. The 128
threads of a warpgroup issue each ``wgmma.mma_async`` together; every thread
names the whole 64xNxK operand tiles, so a shared-memory operand's V mode is
the tile itself, (MN, K) -> element, and the instruction reads it through a
64-bit matrix descriptor (`cutec.atoms.gmma_desc`)::

    %da = thread.gmma_desc %sA {lbo = 0 : i32, sbo = 1024 : i32, swizzle = "128B"}
    %d:16 = thread.atom "SM90_64x64x16_F16F16F16_SS_NT"(%c0, .., %c15, %da, %db, %true)
        {role = "mma"} : (vector<2xf16>, ..., i64, i64, i1) -> (vector<2xf16>, ...)

*Descriptors.* An operand tile is a view of a swizzled buffer, ``Sw o off o L``:
element (v, i, k) sits at ``Sw(off + L(v, i, k))``. The hardware applies the
swizzle to the address bits, so a descriptor names the unswizzled start
``root + off + L(0, i, k)`` and the canonical layout of ``L``'s V mode, which
`make_gmma_desc` reads LBO and SBO off. That agrees with the software swizzle
when the buffer starts on a multiple of the swizzle's repeat (the shared-memory
plan aligns it: 1024 bytes for 128B) and `off` is a multiple of it. One
``thread.gmma_desc`` per operand view; the tile of (i, k) adds its byte offset
/ 16 to the start-address field (CuTe's descriptor iterator), which cannot carry
out of it: shared addresses are below 2^18.

*Accumulators* are read once per C block before the first k-block, each wgmma
updates them in place (the PTX emitter gives its result the registers of its
input), and they are written back once after the last.

*Batches.* Where the kernel names no warpgroup op (``warpgroup_arrive``, ...),
the gemm is its own batch: ``wgmma.fence`` before the first wgmma, then
``commit_group`` and ``wait_group 0`` after the last. Where it names any, the
author places them and `check_batches` refuses a gemm outside a batch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from cutec.analysis.fragments import element_of, space_of
from cutec.analysis.shared_plan import smem_root
from cutec.atoms.family import Family
from cutec.atoms.gmma_desc import SWIZZLE_WIDTH, GmmaLayoutError, make_gmma_desc
from cutec.atoms.mma import MmaAtom, mma_atom_named
from cutec.diagnostics import CompileError
from cutec.ir.dialects import arith, scf, thread
from cutec.ir.dialects import cute_sync as S
from cutec.ir.dialects.cute_compute import GemmOp
from cutec.ir.dialects.thread_atom import atom_family
from cutec.ir.types import IntegerType, dtype_name, dtype_of
from cutec.layout import ComposedLayout, Layout, Swizzle
from cutec.layout.symbolic import evaluated, known_divisible
from cutec.passes.lower_atoms import Lowering, _coord, _extract, _pack, atom_gemm_shapes
from cutec.target import AddressSpace

if TYPE_CHECKING:
    from collections.abc import Iterator

    from cutec.ir.core import Block, Operation, Value
    from cutec.ir.dialects.builtin import KernelOp
    from cutec.ir.dialects.cute_tensor import AllocSmemOp
    from cutec.layout.symbolic import Integer

# Swizzle<B, 4, 3> on byte addresses -> the descriptor's swizzle mode (PTX ISA: the
# 32B, 64B and 128B modes XOR address bits [4, 4 + B) with bits [7, 7 + B)).
_SWIZZLE_MODE = {1: "32B", 2: "64B", 3: "128B"}
DESCRIPTOR_ALIGN = 128 * SWIZZLE_WIDTH["128B"]
_BATCH_OPS = (S.WarpgroupArriveOp, S.WarpgroupCommitBatchOp, S.WarpgroupWaitOp)


class WgmmaLowering(Lowering, Protocol):
    """What the wgmma rule uses of lower-to-thread's kernel lowering."""

    names_batches: bool  # the kernel places its wgmma batches itself (`check_batches`)

    def root_pointer(self, root: Value, scope: Any) -> Value: ...

    def ptr_add(self, ptr: Value, offset: Integer, scope: Any) -> Value: ...


def lower_wgmma_gemm(lw: WgmmaLowering, op: GemmOp, name: str, scope: Any) -> None:
    """C(v,m,n) = A(v,m,k) · B(v,n,k) + C by one wgmma per (k, m, n) (k outermost)."""
    atom = mma_atom_named(name)
    assert atom is not None
    _check_operands(lw, op, atom)
    (va, m_a, k_a), (_, n_b, _), (vc, m_c, n_c) = atom_gemm_shapes(lw.la, op, atom)
    b = scope.builder
    a_tiles = _descriptors(lw, op, op.a, atom, "A", m_a, k_a, scope) if atom.a_in_smem else None
    b_tiles = _descriptors(lw, op, op.b, atom, "B", n_b, k_a, scope)
    regs_of = {x: atom.values_per_register(x) for x in ("a", "c")}
    acc = {
        (m, n): _pack(lw, op.c, [(v, m, n) for v in range(vc)], regs_of["c"], scope)
        for m in range(m_c)
        for n in range(n_c)
    }
    # A's registers (RS) are packed before the batch: wgmma.fence orders the writes
    # of registers a wgmma reads before it.
    a_args = {
        (m, k): [a_tiles[m, k]]
        if a_tiles is not None
        else _pack(lw, op.a, [(v, m, k) for v in range(va)], regs_of["a"], scope)
        for k in range(k_a)
        for m in range(m_a)
    }
    d_types = [r.type for r in acc[0, 0]]
    accumulate = b.insert(arith.constant(1, IntegerType(1))).result
    own_batch = not lw.names_batches
    if own_batch:
        b.insert(thread.WgmmaFenceOp())
    for k in range(k_a):
        for m in range(m_a):
            for n in range(n_b):
                args = [*acc[m, n], *a_args[m, k], b_tiles[n, k], accumulate]
                acc[m, n] = list(b.insert(thread.AtomOp(name, "mma", args, d_types)).outs)
    if own_batch:
        b.insert(thread.WgmmaCommitOp())
        b.insert(thread.WgmmaWaitOp(0))
    per = regs_of["c"]
    for (m, n), regs in acc.items():
        for r, value in enumerate(regs):
            for h in range(per):
                elem = _extract(scope, value, h) if per > 1 else value
                lw.store(elem, op.c, _coord(lw, op.c, (r * per + h, m, n)), scope)


def _check_operands(lw: WgmmaLowering, op: GemmOp, atom: MmaAtom) -> None:
    """Where each operand lives and its element type, as the atom takes them."""
    wants = {
        "A": AddressSpace.SHARED if atom.a_in_smem else AddressSpace.REGISTER,
        "B": AddressSpace.SHARED,
        "C": AddressSpace.REGISTER,
    }
    for what, v in (("A", op.a), ("B", op.b), ("C", op.c)):
        space = space_of(v)
        if space is not wants[what]:
            smem = wants[what] is AddressSpace.SHARED
            how = "a shared-memory descriptor" if smem else "registers"
            raise CompileError(
                f"gemm by {atom.name} reads {what} from {how}, but {what} is a "
                f"{space.memory} tensor (partition the {wants[what].memory} tensor with "
                "this TiledMMA)",
                op.location,
            )
        got, want = dtype_name(element_of(v)), getattr(atom, f"{what.lower()}_type")
        if got != want and not (want == "tf32" and got == "f32"):  # tf32 is stored as f32
            raise CompileError(
                f"gemm by {atom.name} takes {what} of {want}, got {got}", op.location
            )


def _descriptors(
    lw: WgmmaLowering,
    op: GemmOp,
    tensor: Value,
    atom: MmaAtom,
    what: str,
    tiles_mn: int,
    tiles_k: int,
    scope: Any,
) -> dict[tuple[int, int], Value]:
    """The descriptor of each (mn, k) tile of a shared-memory operand (module docstring)."""
    address = lw.la.address_of(tensor)
    layout = address.layout
    bits = dtype_of(element_of(tensor)).bits
    nbytes = bits // 8
    swizzle, off, inner = "none", address.offset, layout
    if isinstance(layout, ComposedLayout):
        swizzle, repeat = _swizzle_mode(layout.layout_a, nbytes, op, what)
        inner = layout.layout_b
        off = address.offset + layout.offset
        if not known_divisible(evaluated(off) * nbytes, repeat):  # (through swizzle bits)
            raise CompileError(
                f"gemm by {atom.name}: {what}'s tile starts {off} elements into its "
                f"swizzled buffer, which is not known to be a multiple of the {swizzle} "
                f"swizzle's {repeat}-byte repeat that a wgmma descriptor needs",
                op.location,
            )
    assert isinstance(inner, Layout)
    tile = _tile_layout(inner)
    major = atom.a_major if what == "A" else atom.b_major
    try:
        desc = make_gmma_desc(tile, major=major, bits=bits, swizzle=swizzle)
    except GmmaLayoutError as e:
        only_k = (
            f"; {bits}-bit operands must be K-major in shared memory (wgmma transposes "
            "16-bit types only)"
            if bits != 16
            else ""
        )
        raise CompileError(
            f"gemm by {atom.name}: {what}'s shared-memory tile {tile} is not a "
            f"{major}-major GMMA layout a descriptor describes ({e}); build the buffer from "
            f"GMMA.Layout_{major}_*_Atom{only_k}",
            op.location,
        ) from None
    root = lw.root_pointer(address.root, scope)
    start = lw.ptr_add(root, off, scope) if off != 0 else root
    b = scope.builder
    base = b.insert(thread.GmmaDescOp(start, desc.lbo, desc.sbo, desc.swizzle)).result
    tiles: dict[tuple[int, int], Value] = {}
    for i in range(tiles_mn):
        for k in range(tiles_k):
            shift = inner(_coord(lw, tensor, (0, i, k))) * nbytes
            if shift % 16:
                raise CompileError(
                    f"gemm by {atom.name}: {what}'s tile ({i}, {k}) starts {shift} bytes into "
                    "the operand, not on the 16 bytes a descriptor addresses",
                    op.location,
                )
            if shift == 0:
                tiles[i, k] = base
                continue
            step = b.insert(arith.constant(shift // 16, IntegerType(64))).result
            tiles[i, k] = b.insert(arith.AddIOp(base, step)).result
    return tiles


def _swizzle_mode(swizzle: Any, nbytes: int, op: Operation, what: str) -> tuple[str, int]:
    """The descriptor's swizzle mode of an element swizzle, and its repeat in bytes."""
    if isinstance(swizzle, Swizzle) and swizzle.bits in _SWIZZLE_MODE:
        mode = _SWIZZLE_MODE[swizzle.bits]
        # In elements, Swizzle<B, 4, 3> on bytes is Swizzle<B, 4 - log2(bytes), 3>.
        if swizzle.shift == 3 and (1 << swizzle.base) * nbytes == 16:
            return mode, 128 * SWIZZLE_WIDTH[mode]
    raise CompileError(
        f"{what}'s shared-memory swizzle {swizzle} is not one a wgmma descriptor names "
        "(Swizzle<1|2|3, 4, 3> on byte addresses: the GMMA.Layout_*_SW32/64/128 atoms)",
        op.location,
    )


def _tile_layout(inner: Layout) -> Layout:
    """The V mode of an operand view (MN, K) -> element, as a rank-2 layout."""
    v = inner[0] if isinstance(inner.shape, tuple) and len(inner.shape) == 3 else inner
    return Layout(v.shape, v.stride)


def check_batches(kernel: KernelOp) -> bool:
    """Whether `kernel` places its wgmma batches itself (names a warpgroup op); if so,
    each wgmma gemm must sit in one: a ``warpgroup_arrive()`` before it and a
    ``warpgroup_commit_batch()`` after it in its block, and a ``warpgroup_wait`` after
    that commit (later in the block or an enclosing one, or anywhere in an enclosing
    loop, which waits in the next iteration). A located error otherwise."""
    if not any(isinstance(op, _BATCH_OPS) for op in kernel.walk()):
        return False
    for gemm, atom in _wgmma_gemms(kernel):
        block = gemm.parent
        assert block is not None
        ops = list(block.ops)
        at = ops.index(gemm)
        before = _nearest(reversed(ops[:at]), S.WarpgroupArriveOp, S.WarpgroupCommitBatchOp)
        if before is None:
            raise CompileError(
                f"gemm by {atom} outside a wgmma batch: no warpgroup_arrive() before it "
                "(since the last warpgroup_commit_batch()); a kernel that places "
                "warpgroup ops places them around every wgmma gemm",
                gemm.location,
            )
        commit = _nearest(iter(ops[at + 1 :]), S.WarpgroupCommitBatchOp, S.WarpgroupArriveOp)
        if commit is None:
            raise CompileError(
                f"gemm by {atom}: its wgmma batch is not closed: no "
                "warpgroup_commit_batch() after it in its block",
                gemm.location,
            )
        if not _waited(commit):
            raise CompileError(
                f"gemm by {atom}: no warpgroup_wait(n) after its batch's "
                "warpgroup_commit_batch(): its results would be read before they land",
                commit.location,
            )
    return True


def descriptor_aligns(kernel: KernelOp, aligns: dict[AllocSmemOp, int]) -> dict[AllocSmemOp, int]:
    """`aligns` with each shared buffer a wgmma reads through descriptors aligned to
    1024 bytes, the repeat of the widest (128B) swizzle: a descriptor's swizzle acts on
    address bits, the buffer's layout on offsets from its start (module docstring)."""
    out = dict(aligns)
    for gemm, _ in _wgmma_gemms(kernel):
        for v in (gemm.a, gemm.b):
            root = smem_root(v)
            if root is not None and root in out:
                out[root] = max(out[root], DESCRIPTOR_ALIGN)
    return out


def _wgmma_gemms(kernel: KernelOp) -> Iterator[tuple[GemmOp, str]]:
    """Each gemm of `kernel` by a wgmma atom, with the atom's name."""
    for gemm in kernel.walk_type(GemmOp):
        mma = gemm.mma
        atom = None if mma is None else mma.type.atom  # type: ignore[union-attr]
        if atom is not None and atom_family(atom) is Family.WGMMA:
            yield gemm, atom


def _nearest(ops: Any, want: type[Operation], stop: type[Operation]) -> Operation | None:
    """The first op of `ops` of type `want`, unless one of type `stop` comes first."""
    for op in ops:
        if isinstance(op, want):
            return op
        if isinstance(op, stop):
            return None
    return None


def _waited(op: Operation) -> bool:
    """Whether a warpgroup_wait follows `op` in its block or an enclosing one, or sits
    anywhere in an enclosing loop (waiting in the next iteration)."""
    while op.parent is not None:
        block: Block = op.parent
        ops = list(block.ops)
        if any(isinstance(x, S.WarpgroupWaitOp) for x in ops[ops.index(op) + 1 :]):
            return True
        parent = block.parent_op
        if parent is None:
            return False
        if isinstance(parent, scf.ForOp | scf.WhileOp) and any(
            True for _ in parent.walk_type(S.WarpgroupWaitOp)
        ):
            return True
        op = parent
    return False


# ------------------------------------------------------------------ warpgroup sync ops


def _emit(make: Any) -> Any:
    def rule(lw: Any, op: Operation, scope: Any) -> None:
        scope.builder.insert(make(op))

    return rule


def _no_code(lw: Any, op: Operation, scope: Any) -> None:
    """warpgroup_fence_operand: in CuTe it keeps the compiler from moving accumulator
    accesses across the batch; cutec's passes keep program order around the batch ops
    (they order shared memory and are warpgroup collectives) and the PTX emitter ties a
    wgmma's accumulators to one set of registers, so there is nothing left to emit."""


SYNC_RULES: dict[type[Operation], Any] = {
    S.WarpgroupArriveOp: _emit(lambda op: thread.WgmmaFenceOp()),
    S.WarpgroupCommitBatchOp: _emit(lambda op: thread.WgmmaCommitOp()),
    S.WarpgroupWaitOp: _emit(lambda op: thread.WgmmaWaitOp(op.pending.value)),
    S.WarpgroupFenceOperandOp: _no_code,
    S.FenceViewAsyncSharedOp: _emit(lambda op: thread.FenceProxyAsyncOp()),
}
