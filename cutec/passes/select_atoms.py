"""select-atoms: give every copy that names no atom the instruction it will run.

On the SIMT path a copy without an atom (``copy(src, dst)``) or with
``auto`` is a UniversalCopy of the widest access vectorize allowed: the pass
writes ``{atom = "UniversalCopy<uint128_t>"}`` and a remark at the copy's
line saying what it chose and what stopped a wider access::

    sgemm_1.cute:47:5: remark: copy by UniversalCopy<uint32_t> (32-bit accesses);
        64-bit accesses not used: 32 consecutive elements of ... are not contiguous

A predicated copy without an atom moves one element per access (its predicate
is per element). A named atom is left as written (vectorize checked it). The
tensor-core choices (ldmatrix, mma.sync, wgmma, TMA) come with their paths.
"""

from __future__ import annotations

from dataclasses import dataclass

from cutec.ir.attributes import IntegerAttr, StringAttr
from cutec.ir.dialects.builtin import ModuleOp
from cutec.ir.dialects.cute_atom_types import AUTO
from cutec.ir.dialects.cute_compute import CopyIfOp, CopyOp
from cutec.ir.dialects.cute_types import TensorType
from cutec.ir.layout_of import LayoutAnalysis
from cutec.ir.types import dtype_of, i64
from cutec.passes.manager import Pass
from cutec.passes.vectorize import vector_width

# CuTe's unsigned integer types by width, the value types of UniversalCopy.
_UINT = {8: "uint8_t", 16: "uint16_t", 32: "uint32_t", 64: "uint64_t", 128: "uint128_t"}


@dataclass
class SelectAtoms(Pass):
    """Resolve unnamed and ``auto`` copy atoms (see the module docstring)."""

    name = "select-atoms"
    summary = "choose the copy instruction of copies that name none (with --remarks saying why)"

    def run(self, module: ModuleOp) -> None:
        la = LayoutAnalysis()
        for op in list(module.walk()):
            if not isinstance(op, CopyOp | CopyIfOp) or "atom" in op.attributes:
                continue
            tiled = op.tiled_type()
            if tiled is not None and tiled.atom != AUTO:
                continue
            t = op.src.type
            assert isinstance(t, TensorType)
            bits = dtype_of(t.element).bits
            found = vector_width(la, op.src, op.dst)
            why = found.limits[-1] if found.limits else ""
            if isinstance(op, CopyIfOp):
                if found.elements > 1:
                    why = "a predicated copy moves one element per access"
                width = 1
            else:
                attr = op.attributes.get("vector")
                width = attr.value if isinstance(attr, IntegerAttr) else found.elements
            if width * bits not in _UINT:
                continue  # sub-byte elements: no UniversalCopy value type
            atom = f"UniversalCopy<{_UINT[width * bits]}>"
            op.attributes["atom"] = StringAttr(atom)
            op.attributes["vector"] = IntegerAttr(width, i64)
            message = f"copy by {atom} ({width * bits}-bit accesses)"
            self.remark(message + (f"; {why}" if why else ""), op.location)
