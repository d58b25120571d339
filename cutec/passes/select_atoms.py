"""select-atoms: give every ``auto`` atom its instruction, and say why (``--remarks``).

The choices are `cutec.heuristics.select`'s, each made once (docs/passes.md,
select-atoms, says where):

* An ``auto`` MMA and an ``auto`` copy of an MMA operand (``tiled_copy_A(auto,
  mma)``) are chosen and typed by the frontend, since their fragments and
  partitions depend on the atom; their make ops carry ``{auto}`` and the choice's
  reasons (``choice``). This pass reports them, the MMA's at its make op and a
  copy's at each copy by it, and drops ``choice``: it never chooses them again.
* A global → shared copy whose tiled copy is ``auto`` becomes a cp.async
  (``cute.copy_async``, its token added to the ``cp_async_fence`` after it) of 16
  bytes where both sides allow it, else 8 or 4 (`vectorize`'s contiguity test),
  a ``_ZFILL`` atom where masked elements become zeros.
* Every other copy that names no instruction is a UniversalCopy of the widest
  access vectorize allowed::

    sgemm_1.cute:47:5: remark: copy by UniversalCopy<uint32_t> (32-bit accesses);
        64-bit accesses not used: 32 consecutive elements of ... are not contiguous

  A predicated copy without an atom moves one element per access (its
  predicate is per element), except the predicate pass's in-bounds guards
  (``{residue}``): those move the widest vector whose elements share one
  predicate, the first's (none straddles the global side's end). A named atom is
  left as written (vectorize checked it).
"""

from __future__ import annotations

from dataclasses import dataclass

from cutec.analysis.contiguity import contiguity_problem, uniform_predicate, vector_width
from cutec.diagnostics import CompileError
from cutec.heuristics.select import AUTO as SELECT_AUTO
from cutec.heuristics.select import select_global_copy, shorten
from cutec.ir.attributes import ArrayAttr, IntegerAttr, StringAttr
from cutec.ir.core import Operation, OpResult
from cutec.ir.dialects.builtin import KernelOp, ModuleOp
from cutec.ir.dialects.cute_atom_types import AUTO, TiledMmaType
from cutec.ir.dialects.cute_compute import (
    CopyAsyncOp,
    CopyIfOp,
    CopyOp,
    MakeTiledCopyOp,
    MakeTiledMmaOp,
)
from cutec.ir.dialects.cute_types import TensorType
from cutec.ir.dialects.thread_async import CpAsyncCommitOp, CpAsyncWaitOp
from cutec.ir.layout_of import LayoutAnalysis
from cutec.ir.types import dtype_of, i64
from cutec.passes.manager import Pass
from cutec.target import DEFAULT_TARGET, AddressSpace, Target, target

assert SELECT_AUTO == AUTO  # one spelling in the atom library and the IR

# CuTe's unsigned integer types by width, the value types of UniversalCopy.
_UINT = {8: "uint8_t", 16: "uint16_t", 32: "uint32_t", 64: "uint64_t", 128: "uint128_t"}


@dataclass
class SelectAtoms(Pass):
    """Resolve ``auto`` atoms and copies that name none (see the module docstring)."""

    name = "select-atoms"
    summary = "choose the instructions of auto atoms (with --remarks saying why)"

    def run(self, module: ModuleOp) -> None:
        tgt = target(module.target or DEFAULT_TARGET)
        for kernel in module.walk_type(KernelOp):
            la = self.analyses.get(LayoutAnalysis, kernel)
            made: list[MakeTiledMmaOp | MakeTiledCopyOp] = []
            for op in list(kernel.walk()):
                if isinstance(op, MakeTiledMmaOp) and op.auto is not None:
                    self._report_mma(op)
                    made.append(op)
                elif isinstance(op, MakeTiledCopyOp) and op.auto is not None:
                    made.append(op)
                elif isinstance(op, CopyOp | CopyIfOp) and op.atom is None:
                    self._copy(op, tgt, la)
            for maker in made:  # reported: the IR is a hand-written kernel's
                maker.attributes.pop("choice", None)

    # ------------------------------------------------------------------ MMA
    def _report_mma(self, op: MakeTiledMmaOp) -> None:
        t = op.result.type
        assert isinstance(t, TiledMmaType)
        if t.atom == AUTO:
            raise CompileError(
                "an {auto} MMA's atom is chosen when the frontend builds it (its fragments "
                "depend on it): name the atom in IR input",
                op.location,
            )
        reasons = _choice(op)
        if reasons:
            self.remark("; ".join(reasons), op.location)

    # ------------------------------------------------------------------ copies
    def _copy(self, op: CopyOp | CopyIfOp, tgt: Target, la: LayoutAnalysis) -> None:
        tiled = op.tiled_type()
        maker = _maker(op)
        if tiled is not None and tiled.atom != AUTO:
            if maker is not None and maker.auto is not None and _choice(maker):
                self.remark("; ".join(_choice(maker)), op.location)
            return
        ruled_out: tuple[str, ...] = ()
        if maker is not None and maker.auto is not None and maker.mma is not None:
            ruled_out = _choice(maker)[1:]  # why no ldmatrix
        elif tiled is not None and _spaces(op) == (AddressSpace.GLOBAL, AddressSpace.SHARED):
            ruled_out = self._cp_async(op, tgt, la)
            if ruled_out is None:
                return
        self._universal(op, la, ruled_out)

    def _cp_async(
        self, op: CopyOp | CopyIfOp, tgt: Target, la: LayoutAnalysis
    ) -> tuple[str, ...] | None:
        """Make `op` a cp.async when one fits (see the module docstring); else say why not."""
        t = op.src.type
        assert isinstance(t, TensorType)
        bits = dtype_of(t.element).bits
        commit = _commit_after(op)
        predicated = isinstance(op, CopyIfOp)
        choice, width = select_global_copy(
            tgt,
            bits,
            lambda p: (
                contiguity_problem(la, op.src, p, bits) or contiguity_problem(la, op.dst, p, bits)
            ),
            predicated=predicated,
            zfill=predicated and op.zfill is not None,  # type: ignore[union-attr]
            waited=commit is not None,
        )
        if choice.atom == AUTO:
            return choice.ruled_out
        assert commit is not None and op.tiled is not None
        pred = op.pred if isinstance(op, CopyIfOp) else None
        new = CopyAsyncOp(op.tiled, op.src, op.dst, pred)
        new.attributes["atom"] = StringAttr(choice.atom)
        new.attributes["vector"] = IntegerAttr(width, i64)  # declared fields of the copy ops
        new.location = op.location
        op.parent.insert_before(op, new)  # type: ignore[union-attr]
        op.erase()
        commit.set_operands([*commit.operands, new.token])
        self.remark(choice.remark(), op.location)
        return None

    def _universal(
        self, op: CopyOp | CopyIfOp, la: LayoutAnalysis, before: tuple[str, ...]
    ) -> None:
        """A UniversalCopy of the width vectorize chose (one element if predicated)."""
        t = op.src.type
        assert isinstance(t, TensorType)
        bits = dtype_of(t.element).bits
        found = vector_width(la, op.src, op.dst)
        why = found.limits[-1] if found.limits else ""
        if isinstance(op, CopyIfOp):
            width = _uniform_width(la, op, found.elements)
            if width < found.elements:
                why = (
                    "a predicated copy moves one element per access"
                    if op.residue is None
                    else f"{found.elements * bits}-bit accesses not used: a vector of "
                    f"{found.elements} elements may straddle the tensor's end (its "
                    "unit-stride extent is not known to be a multiple of it)"
                )
        else:
            width = op.vector.value if op.vector is not None else found.elements
        if width * bits not in _UINT:
            return  # sub-byte elements: no UniversalCopy value type
        atom = f"UniversalCopy<{_UINT[width * bits]}>"
        op.attributes["atom"] = StringAttr(atom)
        op.attributes["vector"] = IntegerAttr(width, i64)
        reasons = shorten([*before, why] if why else list(before))
        self.remark("; ".join([f"copy by {atom} ({width * bits}-bit accesses)", *reasons]),
                    op.location)  # fmt: skip


# --------------------------------------------------------------------------- helpers


def _uniform_width(la: LayoutAnalysis, op: CopyIfOp, widest: int) -> int:
    """Elements per access of a predicated copy: one for a user's predicate (one per
    element); for the predicate pass's in-bounds test (``{residue}``), the widest
    vector none of which straddles its global side's end, so that each moves under
    its first element's predicate (vectorize's `uniform_predicate`, as for axpby)."""
    if op.residue is None:
        return 1
    sides = [
        v
        for v, space in zip((op.src, op.dst), _spaces(op), strict=True)
        if space is AddressSpace.GLOBAL
    ]
    p = widest
    while p > 1 and not all(uniform_predicate(la, v, p) for v in sides):
        p //= 2
    return p


def _maker(op: CopyOp | CopyIfOp) -> MakeTiledCopyOp | None:
    tiled = op.tiled
    if isinstance(tiled, OpResult) and isinstance(tiled.op, MakeTiledCopyOp):
        return tiled.op
    return None


def _spaces(op: CopyOp | CopyIfOp) -> tuple[AddressSpace, AddressSpace]:
    s, d = op.src.type, op.dst.type
    assert isinstance(s, TensorType) and isinstance(d, TensorType)
    return s.space, d.space


def _choice(op: MakeTiledMmaOp | MakeTiledCopyOp) -> tuple[str, ...]:
    """The frontend's recorded choice: its summary, then what better was ruled out; none
    where it was reported already (IR read back after select-atoms)."""
    choice = op.choice
    if not isinstance(choice, ArrayAttr):
        return ()
    return tuple(e.value for e in choice.elements if isinstance(e, StringAttr))


def _commit_after(op: Operation) -> CpAsyncCommitOp | None:
    """The cp_async_fence after `op` (in its block or an enclosing one) that closes its
    group, if a cp_async_wait follows that fence."""
    node: Operation | None = op
    while node is not None and not isinstance(node, KernelOp):
        after = node.next_op
        while after is not None and not isinstance(after, CpAsyncCommitOp):
            after = after.next_op
        if after is not None:
            wait = after.next_op
            while wait is not None and not isinstance(wait, CpAsyncWaitOp):
                wait = wait.next_op
            return after if wait is not None else None
        node = node.parent_op
    return None
