"""The thread dialect's register reallocation: ``thread.setmaxnreg`` (sm_90a).

``thread.setmaxnreg {action = "inc", count = 240 : i32}`` is
``setmaxnreg.inc.sync.aligned.u32 240``: the warpgroup executing it asks the CTA's
register pool for registers up to `count` per thread (``inc``, which blocks until the
pool has them) or gives back those above it (``dec``). A warp-specialised kernel's
producer warpgroup, which only issues TMA, gives registers to its consumer warpgroups,
which hold the accumulators (CUTLASS's ``warpgroup_reg_dealloc`` / ``warpgroup_reg_alloc``).

Every warp of a warpgroup executes the same one (a warpgroup collective); `count` is a
multiple of 8 in 24..256 (`cutec.atoms.sync`'s range, which the verifier applies). What
the whole kernel must keep — a path of the warpgroup index, ``dec`` not above and
``inc`` not below the count it holds, the pool's 64K registers — is
`cutec.analysis.register_budget`'s check.
"""

from __future__ import annotations

from cutec.atoms.sync import SyncOpError, sync_op
from cutec.ir.attributes import IntegerAttr, StringAttr
from cutec.ir.core import Operation
from cutec.ir.opdef import attr_def
from cutec.ir.traits import Collective, Scope
from cutec.ir.types import IntegerType

ACTIONS = ("inc", "dec")


class SetMaxNRegOp(Operation):
    """Set the warpgroup's registers per thread to `count` (`action` inc or dec):
    ``thread.setmaxnreg {action = "dec", count = 40 : i32}``."""

    name = "thread.setmaxnreg"
    # A warpgroup collective; it reads and writes no memory, and is never moved or
    # deleted (unknown effects would pin it too; the collective trait says why).
    traits = (Collective(Scope.WARPGROUP),)
    action = attr_def(StringAttr)
    count = attr_def(IntegerAttr)
    assembly_format = "attr-dict"

    def __init__(self, action: str, count: int) -> None:
        super().__init__(
            attributes={"action": StringAttr(action), "count": IntegerAttr(count, IntegerType(32))}
        )

    def verify_(self) -> None:
        if self.action.value not in ACTIONS:
            raise self.error(f"'action' is inc or dec, not {self.action.value!r}")
        try:
            sync_op(self.instruction).render({"n": str(self.count.value)})
        except SyncOpError as e:
            raise self.error(str(e)) from None

    @property
    def instruction(self) -> str:
        """Its row of `cutec.atoms.sync`."""
        return f"setmaxnreg.{self.action.value}"
