"""The thread dialect's one atom-instruction op: ``thread.atom``.

An MMA or copy atom's instruction is not an op class of its own: one op names
the atom (CuTe's name, looked up in `cutec.atoms`) and the role of the
template it runs (``"mma"`` for an MMA atom, ``"copy"`` or UniversalCopy's
``"ld.global"`` / ``"st.shared"`` ... for a copy atom), and carries one SSA
value per register. The atom's `PtxTemplate` is the one source of truth: the
PTX emitter renders it with the registers of these values, the CPU backend
runs the atom from its emulator tables, and the verifier checks the values
against the template's operands (`atom_signature`).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cutec.atoms.copy import CopyAtom, CopyAtomError, copy_atom, copy_atoms, copy_family
from cutec.atoms.copy_sm90 import parse_tma_name
from cutec.atoms.family import Family
from cutec.atoms.mma import MmaAtom, mma_atom_named
from cutec.atoms.ptx_template import Operand, PtxTemplate
from cutec.ir.attributes import IntegerAttr, StringAttr
from cutec.ir.core import Operation, Value
from cutec.ir.dialects.gpu import PointerType
from cutec.ir.opdef import attr_def, opt_attr_def, var_operand_def, var_result_def
from cutec.ir.traits import AddressSpace, Collective, MemoryEffect, Scope, reads, writes
from cutec.ir.types import FloatType, IndexType, IntegerType, Type, VectorType, bit_width

if TYPE_CHECKING:
    from collections.abc import Sequence


@dataclass(frozen=True)
class AtomSignature:
    """How a template's operands map to an atom op's operands and results.

    `inputs` and `outputs` are template operands in template order; each
    register of an operand is one SSA value (a ``count``-register operand takes
    ``count`` consecutive values), an ``addr`` operand one pointer value.
    An operand may be both (wgmma's accumulator, updated in place).
    """

    template: PtxTemplate
    inputs: tuple[Operand, ...]
    outputs: tuple[Operand, ...]

    @property
    def num_inputs(self) -> int:
        return sum(op.count for op in self.inputs)

    @property
    def num_outputs(self) -> int:
        return sum(op.count for op in self.outputs)


# The first operand after the opcode, written bare (``$d``, ``{$d}``, ``${d}``): PTX's
# destination. A bracketed first operand (``[$addr]``, ``[$tmap, ...]``) is an address
# the instruction writes through (st, cp.async, TMA store): no register result.
_DESTINATION = re.compile(r"^\S+\s+\{?\$\{?(\w+)")


def atom_signature(atom: MmaAtom | CopyAtom, role: str) -> AtomSignature:
    """The inputs and outputs of `atom`'s `role` template (raises CopyAtomError for a bad role).

    The destination is PTX's first operand when it is a register; an MMA atom
    without a ``c`` operand (wgmma) accumulates into ``d`` in place, so ``d`` is
    an input too.
    """
    if isinstance(atom, MmaAtom):
        if role != "mma":
            raise CopyAtomError(f"MMA atom {atom.name} has one role, 'mma', not {role!r}")
        template = atom.ptx
    else:
        template = atom.template(role)
    m = _DESTINATION.match(template.text)
    dest = m.group(1) if m else None
    outputs = tuple(op for op in template.operands if op.name == dest and op.kind == "reg")
    in_place = isinstance(atom, MmaAtom) and "c" not in {op.name for op in template.operands}
    inputs = tuple(op for op in template.operands if op not in outputs or in_place)
    return AtomSignature(template, inputs, outputs)


def lookup_atom(name: str, bits: int | None = None) -> MmaAtom | CopyAtom:
    """The MMA or copy atom CuTe calls `name` (`bits` for TMA atoms); CopyAtomError if none."""
    atom = mma_atom_named(name)
    if atom is not None:
        return atom
    if parse_tma_name(name) is None and name not in {a.name for a in copy_atoms()}:
        raise CopyAtomError(f"no MMA or copy atom named {name!r}")
    return copy_atom(name, bits)


@functools.cache
def atom_family(name: str) -> Family | None:
    """The family of the MMA or copy atom CuTe calls `name` (None if there is none):
    what the back ends dispatch a ``thread.atom`` on, looked up once per name."""
    atom = mma_atom_named(name)
    return atom.family if atom is not None else copy_family(name)


# PTX register type -> whether an IR type may live in such a register. Bit types (b32)
# take any type of their width (PTX's bit-size types are compatible with all of them).
def _bits_of(t: Type) -> int | None:
    if isinstance(t, VectorType):
        if len(t.shape) != 1:
            return None
        inner = _bits_of(t.element)
        return None if inner is None else inner * t.shape[0]
    if isinstance(t, IntegerType | FloatType | IndexType):
        return bit_width(t)
    return None


def register_fits(ptx_type: str, t: Type) -> bool:
    """Whether a value of IR type `t` fits a PTX register of `ptx_type` (``f32``, ``b32`` ...)."""
    if ptx_type == "pred":
        return t == IntegerType(1)
    width = int(re.sub(r"\D", "", ptx_type) or 0)
    if ptx_type.endswith("x2"):  # f16x2 / bf16x2: a packed pair, or its 32 bits
        kind = ptx_type[:-2]
        return t == IntegerType(32) or t == VectorType((2,), FloatType(kind))
    if ptx_type[0] == "b":
        return _bits_of(t) == width
    if ptx_type[0] in "us":
        return isinstance(t, IntegerType | IndexType) and bit_width(t) == width
    if ptx_type == "f32":
        return t in (FloatType("f32"), FloatType("tf32"))
    return isinstance(t, FloatType) and t.kind == ptx_type


# Address operands: 64-bit registers hold global (or generic) addresses, 32-bit ones
# the shared and local windows (cutec.atoms.copy_universal.ADDRESS_TYPE).
_ADDRESS_SPACES = {
    "b64": (AddressSpace.GLOBAL, AddressSpace.GENERIC),
    "b32": (AddressSpace.SHARED, AddressSpace.SHARED_CLUSTER, AddressSpace.LOCAL),
}


class AtomOp(Operation):
    """One instruction of an MMA or copy atom, with one value per register.

    ``%d = thread.atom "UniversalFMA_F32F32F32F32"(%a, %b, %c) {role = "mma"} :
    (f32, f32, f32) -> (f32)``

    ``%r:4 = thread.atom "SM75_U32x4_LDSM_N"(%p) {role = "copy"} :
    (!gpu.ptr<f16, shared>) -> (i32, i32, i32, i32)``

    Operands are the template's inputs in template order (`atom_signature`),
    results its outputs; `bits` names a TMA atom's box size. Conservatively
    warp-collective: the class cannot tell a one-thread atom (UniversalFMA)
    from a warp-wide one (mma.sync, ldmatrix), so none is moved into divergent
    code or deleted as dead.
    """

    name = "thread.atom"
    traits = (Collective(Scope.WARP),)
    atom = attr_def(StringAttr)
    role = attr_def(StringAttr)
    bits = opt_attr_def(IntegerAttr)
    args = var_operand_def()
    outs = var_result_def()
    assembly_format = (
        "$atom `(` $args `)` attr-dict `:` `(` type($args) `)` `->` `(` type($outs) `)`"
    )

    def __init__(
        self,
        atom: str,
        role: str,
        args: Sequence[Value],
        result_types: Sequence[Type],
        bits: int | None = None,
    ) -> None:
        attributes: dict = {"atom": StringAttr(atom), "role": StringAttr(role)}
        if bits is not None:
            attributes["bits"] = IntegerAttr(bits, IntegerType(64))
        super().__init__(
            operands=list(args), result_types=list(result_types), attributes=attributes
        )

    def library_atom(self) -> MmaAtom | CopyAtom:
        """The atom record this op names."""
        return lookup_atom(self.atom.value, None if self.bits is None else self.bits.value)

    def family(self) -> Family | None:
        """The family of the atom this op names (what the back ends dispatch on)."""
        return atom_family(self.atom.value)

    def signature(self) -> AtomSignature:
        """The template's inputs and outputs (what the emitter renders)."""
        return atom_signature(self.library_atom(), self.role.value)

    def memory_effects(self) -> tuple[MemoryEffect, ...] | None:
        try:
            atom = self.library_atom()
        except CopyAtomError:
            return None
        effects: list[MemoryEffect] = []
        if isinstance(atom, MmaAtom):
            if atom.a_in_smem or atom.b_in_smem:  # wgmma reads shared memory by descriptor
                effects += reads(AddressSpace.SHARED)
            return tuple(effects)
        role = self.role.value
        for v in self.args:
            t = v.type
            if not isinstance(t, PointerType):
                continue
            loads, stores = role.startswith("ld."), role.startswith("st.")
            read = not stores and t.space in atom.src_spaces
            write = not loads and t.space in atom.dst_spaces
            if not (read or write):  # an mbarrier or an unclassified address: both
                read = write = True
            effects += reads(t.space) if read else ()
            effects += writes(t.space) if write else ()
        if atom.family.traits.per_box:
            # A TMA atom's global tensor is named by its map (an i64), not by a pointer.
            effects += reads(*(s for s in atom.src_spaces if s is AddressSpace.GLOBAL))
            effects += writes(*(s for s in atom.dst_spaces if s is AddressSpace.GLOBAL))
        return tuple(effects)

    def verify_(self) -> None:
        try:
            signature = self.signature()
        except CopyAtomError as e:
            raise self.error(str(e)) from None
        name = self.atom.value
        if any(op.kind == "imm" for op in signature.template.operands):
            raise self.error(f"atom {name} has immediate operands, which thread.atom cannot carry")
        _check_values(self, "operand", self.args, signature.inputs, name)
        _check_values(self, "result", self.outs, signature.outputs, name)


def _check_values(
    op: Operation, what: str, values: Sequence[Value], operands: Sequence[Operand], atom: str
) -> None:
    want = sum(o.count for o in operands)
    if len(values) != want:
        names = ", ".join(f"${o.name} x{o.count}" for o in operands) or "none"
        raise op.error(f"atom {atom} takes {want} {what}s ({names}), got {len(values)}")
    i = 0
    for o in operands:
        for _ in range(o.count):
            t = values[i].type
            i += 1
            if o.kind == "addr":
                spaces = _ADDRESS_SPACES.get(o.ptx_type, ())
                if not (isinstance(t, PointerType) and t.space in spaces):
                    where = " or ".join(s.value for s in spaces)
                    raise op.error(
                        f"{what} #{i - 1} (${o.name}) of atom {atom} must be a {where} "
                        f"pointer, got {t}"
                    )
            elif not register_fits(o.ptx_type, t):
                raise op.error(
                    f"{what} #{i - 1} (${o.name}) of atom {atom} is a .{o.ptx_type} register, "
                    f"not {t}"
                )
