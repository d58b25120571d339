"""lower-to-thread's warp-collective atoms: ldmatrix copies and mma.sync gemms.

`lower_to_thread`'s rule tables (keyed by the atom's family) hand these two cute
ops here; each becomes ``thread.atom`` ops that name the atom, so its record stays
the one source of truth: the PTX emitter renders the atom's `PtxTemplate`, the CPU
interpreter runs it from the atom's layouts (`cutec.cpu.collective`), and the
verifier checks the values against the template's operands.

Register packing is CuTe's ``recast<uint32_t>`` of a fragment: value ``v`` of
the atom's per-thread fragment (its linear index in the fragment's first mode,
the atom's value mode) sits in register ``v // p``, the ``v % p``-th of the p
values a register holds (little-endian: ``recast`` of a register array). A
register of p > 1 values is a ``vector<p x T>`` built by ``from_elements``
(the PTX emitter packs it with one ``mov.b32``); its results are unpacked by
``extract``. After promote-registers all of it is register renaming.

ldmatrix (family LDMATRIX: ``SM75_U32x{1,2,4}_LDSM_N``, ``SM75_U16x{2,4,8}_LDSM_T``)
    ``copy(atom, tXsA, tXrA)``: each lane's source value is one 16-byte row of
    shared memory (the atom's memory side: 128 bits per lane, broadcast for
    lanes past 8 * num), so the source's first mode is 128 / bits contiguous,
    16-byte-aligned elements (checked as vectorize checks a vector access); the
    destination's first mode is the lane's registers (num x 32 bits). One
    ``thread.atom`` per source row group::

        %r:4 = thread.atom "SM75_U32x4_LDSM_N"(%p) {role = "copy"} :
            (!gpu.ptr<f16, shared>) -> (vector<2xf16>, vector<2xf16>, vector<2xf16>, vector<2xf16>)

    ``.trans`` exists for 16-bit elements only (the PTX ISA): a located error
    otherwise.

mma.sync (family MMA_SYNC: the ``SM80_*`` MMA atoms)
    ``gemm(mma, A, B, C)`` with CuTe's ``(V,M,K) x (V,N,K) => (V,M,N)`` (also
    ``(V,M) x (V,N)`` and ``(V) x (V) => (V)``): each C block's registers are
    read once, every k-block's atom updates them (k outermost), and they are
    written once::

        %d:4 = thread.atom "SM80_16x8x16_F32F16F16F32_TN"(%a0, .., %b1, %c0, .., %c3)
            {role = "mma"} : (vector<2xf16>, ..., f32, f32, f32, f32) -> (f32, f32, f32, f32)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from cutec.analysis.contiguity import contiguity_problem
from cutec.analysis.fragments import element_of, space_of, static_modes, static_size
from cutec.atoms.copy import copy_atom
from cutec.atoms.mma import MmaAtom, mma_atom_named
from cutec.diagnostics import CompileError
from cutec.ir.core import Operation, Value
from cutec.ir.dialects import thread
from cutec.ir.types import Type, VectorType, dtype_name, dtype_of
from cutec.layout import ComposedLayout, size
from cutec.target import AddressSpace

if TYPE_CHECKING:
    from cutec.ir.dialects.cute_compute import CopyIfOp, CopyOp, GemmOp
    from cutec.ir.layout_of import LayoutAnalysis

REGISTER_BITS = 32  # ldmatrix and mma.sync fragments are .b32 registers (f64 mma: .f64)
LDMATRIX_ROW_BITS = 128  # each lane's row address names 16 bytes


class Lowering(Protocol):
    """What these rules use of lower-to-thread's kernel lowering."""

    la: LayoutAnalysis

    def element_ptr(self, tensor: Value, coord: Any, scope: Any) -> Value: ...

    def load(self, tensor: Value, coord: Any, scope: Any, width: int = 1) -> Value: ...

    def store(self, value: Value, tensor: Value, coord: Any, scope: Any) -> None: ...


# --------------------------------------------------------------------------- ldmatrix


def lower_ldmatrix(lw: Lowering, op: CopyOp | CopyIfOp, name: str, scope: Any) -> None:
    """One ldmatrix per 16-byte row group of the source (see the module docstring)."""
    if op.name == "cute.copy_if":
        raise CompileError(f"a predicated copy by {name}: ldmatrix has no predicate", op.location)
    atom = copy_atom(name)
    element = element_of(op.src)
    bits = dtype_of(element).bits
    trans = atom.transpose
    if space_of(op.src) is not AddressSpace.SHARED or space_of(op.dst) is not AddressSpace.REGISTER:
        raise CompileError(
            f"{name} copies shared memory to registers, not {space_of(op.src).value} to "
            f"{space_of(op.dst).value}",
            op.location,
        )
    if trans and bits != 16:
        raise CompileError(
            f"{name} transposes 16-bit elements, not {element} ({bits} bits): ldmatrix "
            ".trans exists for 16-bit elements only; read MN-major {element} with ld.shared",
            op.location,
        )
    if bits not in (8, 16, 32):
        raise CompileError(f"{name} cannot move {bits}-bit elements", op.location)
    src_values = LDMATRIX_ROW_BITS // bits
    dst_values = atom.value_bits // bits
    n_src = static_size(lw.la, op.src, op)
    n_dst = static_size(lw.la, op.dst, op)
    calls = n_src // src_values
    if n_src % src_values or n_dst != calls * dst_values:
        raise CompileError(
            f"{name}: the source holds {n_src} elements (rows of {src_values}) and the "
            f"destination {n_dst} (registers of {dst_values} per row group); they do not "
            "pair up (partition the source with partition_S and the fragment with retile_D "
            "of the same tiled copy)",
            op.location,
        )
    why = contiguity_problem(lw.la, op.src, src_values, bits)
    if why is not None:
        raise CompileError(f"{name} reads 16-byte rows of shared memory, but {why}", op.location)
    per = REGISTER_BITS // bits
    reg_type: Type = VectorType((per,), element) if per > 1 else element
    count = atom.template("copy").operand("d").count
    for call in range(calls):
        ptr = lw.element_ptr(op.src, call * src_values, scope)
        regs = scope.builder.insert(thread.AtomOp(name, "copy", [ptr], [reg_type] * count)).outs
        _unpack(lw, regs, op.dst, call * dst_values, per, scope)


# --------------------------------------------------------------------------- mma.sync


def lower_mma_gemm(lw: Lowering, op: GemmOp, name: str, scope: Any) -> None:
    """C(v,m,n) += A(v,m,k) · B(v,n,k) by one mma.sync per (k, m, n) (k outermost)."""
    atom = mma_atom_named(name)
    assert atom is not None
    (va, m_a, k_a), (vb, n_b, _), (vc, m_c, n_c) = atom_gemm_shapes(lw.la, op, atom)
    for v, x in ((op.a, "a"), (op.b, "b"), (op.c, "c")):
        got, want = dtype_name(element_of(v)), getattr(atom, f"{x}_type")
        if got != want:
            raise CompileError(
                f"gemm by {name} takes {x.upper()} of {want}, got {got}", op.location
            )
    regs_of = {x: atom.values_per_register(x) for x in ("a", "b", "c")}
    acc = {
        (m, n): _pack(lw, op.c, [(v, m, n) for v in range(vc)], regs_of["c"], scope)
        for m in range(m_c)
        for n in range(n_c)
    }
    d_types = [r.type for r in acc[0, 0]]
    for k in range(k_a):
        a_regs = [_pack(lw, op.a, [(v, m, k) for v in range(va)], regs_of["a"], scope)
                  for m in range(m_a)]  # fmt: skip
        b_regs = [_pack(lw, op.b, [(v, n, k) for v in range(vb)], regs_of["b"], scope)
                  for n in range(n_b)]  # fmt: skip
        for m in range(m_a):
            for n in range(n_b):
                args = [*a_regs[m], *b_regs[n], *acc[m, n]]
                mma = scope.builder.insert(thread.AtomOp(name, "mma", args, d_types))
                acc[m, n] = list(mma.outs)
    per = regs_of["c"]
    for (m, n), regs in acc.items():
        for r, value in enumerate(regs):
            for h in range(per):
                elem = _extract(scope, value, h) if per > 1 else value
                lw.store(elem, op.c, _coord(lw, op.c, (r * per + h, m, n)), scope)


def atom_gemm_shapes(
    la: LayoutAnalysis, op: GemmOp, atom: MmaAtom
) -> tuple[tuple[int, int, int], ...]:
    """(V,M,K), (V,N,K) and (V,M,N) of a gemm by `atom`: each fragment's first mode holds
    the atom's values of that operand (a located error otherwise, as are M, N or K that
    disagree between the operands)."""
    a, b, c = (_vmk(la, v, op, what) for v, what in ((op.a, "A"), (op.b, "B"), (op.c, "C")))
    (va, m_a, k_a), (vb, n_b, k_b), (vc, m_c, n_c) = a, b, c
    values = {x: int(size(getattr(atom, f"{x}_layout")[1])) for x in "abc"}
    if (va, vb, vc) != (values["a"], values["b"], values["c"]):
        raise CompileError(
            f"gemm by {atom.name}: the fragments' first modes hold {va}, {vb}, {vc} values, "
            f"the atom's A, B, C fragments {values['a']}, {values['b']}, {values['c']} "
            "(partition with this TiledMMA)",
            op.location,
        )
    if not (m_a == m_c and n_b == n_c and k_a == k_b):
        raise CompileError(
            f"gemm shapes do not agree: A (V,M,K) = {a}, B (V,N,K) = {b}, C (V,M,N) = {c}",
            op.location,
        )
    return a, b, c


def _pack(
    lw: Lowering, tensor: Value, coords: list[tuple[int, int, int]], per: int, scope: Any
) -> list[Value]:
    """The registers of one fragment: `per` consecutive values each (CuTe's recast)."""
    elems = [lw.load(tensor, _coord(lw, tensor, c), scope) for c in coords]
    if per == 1:
        return elems
    return [
        scope.builder.insert(thread.FromElementsOp(elems[i : i + per])).result
        for i in range(0, len(elems), per)
    ]


def _unpack(lw: Lowering, regs: Any, dst: Value, first: int, per: int, scope: Any) -> None:
    """Store each register's values to elements first, first + 1, ... of `dst`."""
    i = first
    for value in regs:
        for h in range(per):
            lw.store(_extract(scope, value, h) if per > 1 else value, dst, i, scope)
            i += 1


def _extract(scope: Any, vector: Value, pos: int) -> Value:
    return scope.builder.insert(thread.ExtractOp(vector, pos)).result


def _coord(lw: Lowering, tensor: Value, c: tuple[int, int, int]) -> Any:
    """(v, i, j) as a coordinate of `tensor`, whose rank is 1, 2 or 3 (CuTe's gemm forms)."""
    rank = _rank(lw.la, tensor)
    return (c[0], c[1], c[2])[:rank] if rank > 1 else c[0]


def _rank(la: LayoutAnalysis, v: Value) -> int:
    layout = la.layout_of(v)
    shape = layout.layout_b.shape if isinstance(layout, ComposedLayout) else layout.shape
    return len(shape) if isinstance(shape, tuple) else 1


def _vmk(la: LayoutAnalysis, v: Value, op: Operation, what: str) -> tuple[int, int, int]:
    """(V, M, K) of a gemm operand: CuTe's (V), (V,M) and (V,M,K) fragments."""
    sizes = static_modes(la, v, op)
    if len(sizes) > 3:
        raise CompileError(
            f"gemm takes fragments of rank 1 to 3, {what} is {la.layout_of(v)}", op.location
        )
    sizes += [1] * (3 - len(sizes))
    return sizes[0], sizes[1], sizes[2]
