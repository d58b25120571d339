"""Copy atoms: one frozen record per CuTe copy operation, and their lookup.

A copy atom is CuTe's ``Copy_Traits<Op>`` plus the instruction that does it.
Its layouts are functions in *bits*, exactly as CuTe writes them:

* ``thr_id``:     logical thread id -> thread index in the group that issues it
  (``_1:_0`` for one thread, ``_32:_1`` for a warp-collective atom);
* ``src_layout``: (src-thread, src-value-bit) -> bit index of the copied block;
* ``dst_layout``: (dst-thread, dst-value-bit) -> bit index;
* ``ref_layout``: the (thread, value-bit) view partitioning is done in
  (CuTe's RefLayout: the register side for ldmatrix/stmatrix, else the source).

Source and destination cover the same bits: for every atom
``image(src_layout) == image(dst_layout) == range(N)``; the register side is a
bijection onto that range, the memory side of a warp-collective atom may
broadcast (stride 0) because only some lanes supply row addresses.

Each record also carries its PTX as `PtxTemplate`s keyed by role (``"copy"``,
or ``"ld.global"``/``"st.shared"``/... for UniversalCopy, whose instruction
depends on the address spaces it is used between). The tables live in
``copy_sm75.py`` (ldmatrix), ``copy_sm80.py`` (cp.async), ``copy_sm90.py``
(stmatrix, TMA); UniversalCopy, valid everywhere, is defined here.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from cutec.atoms.ptx_template import Operand, PtxTemplate
from cutec.layout import Layout, size

# Address spaces, named as PTX names state spaces. "reg" is the register file.
GLOBAL = "global"
SHARED = "shared"  # shared::cta, the CTA's own window
SHARED_CLUSTER = "shared::cluster"
LOCAL = "local"
REG = "reg"

# The oldest target ptxas 13 still assembles for; atoms without an arch
# requirement of their own (UniversalCopy) carry it.
BASE_ARCH = 75


class CopyAtomError(ValueError):
    """An unknown copy atom, or a request no copy atom serves (message names what is supported)."""


@dataclass(frozen=True)
class Registers:
    """CuTe's ``SRegisters``/``DRegisters``: ``uint<bits>_t[count]``."""

    bits: int
    count: int

    def __str__(self) -> str:
        return f"uint{self.bits}_t[{self.count}]"


@dataclass(frozen=True)
class CopyAtom:
    """One copy atom: CuTe's Copy_Traits layouts (in bits) and its PTX.

    `async_completion` names what makes the copy's result visible:
    ``None`` (synchronous), ``"cp.async.group"`` (cp.async.commit/wait_group),
    ``"mbarrier"`` (TMA load: complete_tx on an mbarrier) or ``"bulk_group"``
    (TMA store: cp.async.bulk.commit/wait_group).
    """

    name: str
    min_arch: int
    min_ptx: tuple[int, int]
    src_spaces: tuple[str, ...]
    dst_spaces: tuple[str, ...]
    thr_id: Layout
    src_layout: Layout
    dst_layout: Layout
    ref_layout: Layout
    src_regs: Registers | None
    dst_regs: Registers | None
    templates: tuple[tuple[str, PtxTemplate], ...]
    async_completion: str | None = None
    arch_specific: bool = False  # True: needs the "a" target (sm_90a)

    @property
    def num_threads(self) -> int:
        """Threads that issue one atom together: size(ThrID)."""
        return int(size(self.thr_id))

    @property
    def value_bits(self) -> int:
        """Bits each thread holds in the reference layout: size<1>(RefLayout)."""
        return int(size(self.ref_layout, 1))

    @property
    def total_bits(self) -> int:
        """Bits one atom moves: size of the register-side (bijective) layout."""
        return int(size(self.ref_layout))

    @property
    def roles(self) -> tuple[str, ...]:
        """The template roles this atom has."""
        return tuple(role for role, _ in self.templates)

    def template(self, role: str = "copy") -> PtxTemplate:
        """The PTX template for `role`; raises naming the roles there are."""
        for r, t in self.templates:
            if r == role:
                return t
        raise CopyAtomError(
            f"copy atom {self.name} has no {role!r} instruction; it has {list(self.roles)}"
        )

    def target(self) -> str:
        """The lowest ``.target`` this atom assembles for, e.g. ``sm_90a``."""
        return f"sm_{self.min_arch}{'a' if self.arch_specific else ''}"


def one_thread_layouts(bits: int) -> tuple[Layout, Layout, Layout, Layout]:
    """ThrID, Src, Dst, Ref of a one-thread atom moving `bits` bits.

    CuTe: ``ThrID = Layout<_1>``, ``Src = Dst = Ref = Layout<Shape<_1, Int<bits>>>``,
    i.e. ``(t, b) -> b`` with the size-1 thread mode given stride 0.
    """
    thr = Layout(1, 0)
    val = Layout((1, bits), (0, 1))
    return thr, val, val, val


def braced(name: str, count: int) -> str:
    """``$name`` as a vector operand: PTX wants braces even around one register.

    `PtxTemplate` prints a one-register operand bare, so the braces of a
    one-element vector (``{%r0}``) are written into the instruction text.
    """
    return f"{{${name}}}" if count == 1 else f"${name}"


# --- UniversalCopy --------------------------------------------------------------------------------

UNIVERSAL_BITS = (8, 16, 32, 64, 128)
UNIVERSAL_SPACES = (GLOBAL, SHARED, LOCAL, REG)

# bits -> (PTX vector prefix and type, register type, registers). Wide copies are
# vectors of b32 because fragments (mma operands, f32 accumulators) live in
# 32-bit registers; a .b8 load lands in a 16-bit register (PTX has no 8-bit ones).
_UNIVERSAL_PTX: dict[int, tuple[str, str, int]] = {
    8: ("b8", "b16", 1),
    16: ("b16", "b16", 1),
    32: ("b32", "b32", 1),
    64: ("v2.b32", "b32", 2),
    128: ("v4.b32", "b32", 4),
}

# Address registers: 64-bit for global, 32-bit windows for shared and local.
ADDRESS_TYPE = {GLOBAL: "b64", SHARED: "b32", SHARED_CLUSTER: "b32", LOCAL: "b32"}


def _universal_templates(bits: int) -> tuple[tuple[str, PtxTemplate], ...]:
    ptx_type, reg_type, count = _UNIVERSAL_PTX[bits]
    out: list[tuple[str, PtxTemplate]] = []
    for space in (GLOBAL, SHARED, LOCAL):
        addr = Operand("addr", ADDRESS_TYPE[space], kind="addr")
        val = Operand("v", reg_type, count)
        out.append((f"ld.{space}", PtxTemplate(f"ld.{space}.{ptx_type} $v, $addr;", (val, addr))))
        out.append((f"st.{space}", PtxTemplate(f"st.{space}.{ptx_type} $addr, $v;", (addr, val))))
    return tuple(out)


def _universal_copy(bits: int) -> CopyAtom:
    thr, src, dst, ref = one_thread_layouts(bits)
    return CopyAtom(
        name=f"UniversalCopy<uint{bits}_t>",
        min_arch=BASE_ARCH,
        min_ptx=(6, 3),
        src_spaces=UNIVERSAL_SPACES,
        dst_spaces=UNIVERSAL_SPACES,
        thr_id=thr,
        src_layout=src,
        dst_layout=dst,
        ref_layout=ref,
        src_regs=Registers(bits, 1),
        dst_regs=Registers(bits, 1),
        templates=_universal_templates(bits),
    )


def universal_copy(bits: int) -> CopyAtom:
    """``UniversalCopy<uint<bits>_t>``: one thread, plain ld/st of `bits` bits."""
    if bits not in UNIVERSAL_BITS:
        raise CopyAtomError(
            f"UniversalCopy moves {', '.join(map(str, UNIVERSAL_BITS))} bits; got {bits}"
        )
    return _universal_copy(bits)


# --- lookup -------------------------------------------------------------------------------------


@functools.cache
def _registry() -> dict[str, CopyAtom]:
    # Imported here: the tables import CopyAtom from this module.
    from cutec.atoms import copy_sm75, copy_sm80, copy_sm90

    atoms = [_universal_copy(b) for b in UNIVERSAL_BITS]
    atoms += copy_sm80.ATOMS + copy_sm75.ATOMS + copy_sm90.ATOMS
    table: dict[str, CopyAtom] = {}
    for atom in atoms:
        assert atom.name not in table, f"duplicate copy atom {atom.name}"
        table[atom.name] = atom
    return table


def copy_atoms() -> tuple[CopyAtom, ...]:
    """Every fixed-size copy atom (TMA atoms are made per box size: `copy_atom(..., bits=)`)."""
    return tuple(_registry().values())


def copy_atom(name: str, bits: int | None = None) -> CopyAtom:
    """The copy atom CuTe calls `name`.

    TMA atoms (``SM90_TMA_LOAD_2D``, ``SM90_TMA_STORE_3D``, ...) move a whole
    box, so they need `bits`, CuTe's ``NumBitsPerTMA``.
    """
    from cutec.atoms import copy_sm90

    tma = copy_sm90.parse_tma_name(name)
    if tma is not None:
        kind, rank = tma
        if bits is None:
            raise CopyAtomError(f"{name} needs bits= (the bits one TMA box moves)")
        return copy_sm90.tma_atom(kind, rank, bits)
    if bits is not None:
        raise CopyAtomError(f"{name} has a fixed width; bits= applies only to TMA atoms")
    table = _registry()
    if name not in table:
        raise CopyAtomError(
            f"unknown copy atom {name!r}; known: {', '.join(table)}, "
            f"SM90_TMA_LOAD_<1..5>D, SM90_TMA_STORE_<1..5>D"
        )
    return table[name]
