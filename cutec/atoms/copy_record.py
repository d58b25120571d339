"""Copy atoms: the record (one frozen `CopyAtom` per CuTe copy operation) and its parts.

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
depends on the address spaces it is used between). The tables import this
module: ``copy_universal.py``, ``copy_sm75.py`` (ldmatrix), ``copy_sm80.py``
(cp.async), ``copy_sm90.py`` (stmatrix, TMA); ``copy.py`` gathers them.
"""

from __future__ import annotations

from dataclasses import dataclass

from cutec.atoms.family import Completion, Family, FamilyTraits
from cutec.atoms.ptx_template import PtxTemplate
from cutec.layout import Layout, size
from cutec.target import AddressSpace, Target, target

# Address spaces (cutec.target.AddressSpace: PTX's state-space names; "reg" is the register file).
GLOBAL = AddressSpace.GLOBAL
SHARED = AddressSpace.SHARED  # shared::cta, the CTA's own window
SHARED_CLUSTER = AddressSpace.SHARED_CLUSTER
LOCAL = AddressSpace.LOCAL
REG = AddressSpace.REGISTER

# The oldest target ptxas 13 still assembles for; atoms without a target
# requirement of their own (UniversalCopy) carry it.
BASE_TARGET = target("sm_75")


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

    `family` is the instruction family lowering dispatches on (family.py);
    `transpose` (ldmatrix/stmatrix ``.trans``), `cache` (cp.async's ``ca``/``cg``)
    and `zfill` (cp.async's ``src-size`` operand) are the facts that vary inside one.
    """

    name: str
    family: Family
    min_target: Target  # the lowest target the instruction exists on
    min_ptx: tuple[int, int]
    src_spaces: tuple[AddressSpace, ...]
    dst_spaces: tuple[AddressSpace, ...]
    thr_id: Layout
    src_layout: Layout
    dst_layout: Layout
    ref_layout: Layout
    src_regs: Registers | None
    dst_regs: Registers | None
    templates: tuple[tuple[str, PtxTemplate], ...]
    transpose: bool = False
    cache: str | None = None
    zfill: bool = False

    @property
    def traits(self) -> FamilyTraits:
        """What every atom of this atom's family shares (family.py)."""
        return self.family.traits

    @property
    def async_completion(self) -> Completion | None:
        """What makes the copy's result visible: ``None`` (synchronous),
        ``"cp.async.group"`` (cp.async.commit/wait_group), ``"mbarrier"`` (TMA load:
        complete_tx on an mbarrier) or ``"bulk_group"`` (TMA store:
        cp.async.bulk.commit/wait_group). The family's `completion`."""
        return self.traits.completion

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

    def call_values(self, bits: int) -> tuple[int, int]:
        """Elements of `bits` bits one thread passes per call, source and destination side
        (CuTe's size<1> of ValLayoutSrc / ValLayoutDst). They differ only where the memory
        side is one 16-byte row per lane: ldmatrix x1/x2 (8 16-bit elements read, 2 or 4
        received) and stmatrix."""
        src, dst = int(size(self.src_layout, 1)), int(size(self.dst_layout, 1))
        return max(1, src // bits), max(1, dst // bits)

    def target(self) -> str:
        """The lowest ``.target`` this atom assembles for, e.g. ``sm_90a``."""
        return self.min_target.name


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
