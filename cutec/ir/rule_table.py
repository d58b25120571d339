"""Tables keyed by op class, looked up along the class hierarchy.

The PTX emitter's rules, its instruction templates and PTX legalisation's rewrites
are each a table from an op class to what to do with an op of it. An op whose
class has no row takes the row of its nearest base class that has one: one row for
`FloatBinaryOp` serves addf, subf, mulf ... (the order is Python's method
resolution order, so a subclass's own row wins).

    RULES: RuleTable[Rule] = RuleTable({arith.FloatBinaryOp: _binary})
    rule = RULES.lookup(op)          # None: no row for the op's class or its bases
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from cutec.ir.core import Operation

V = TypeVar("V")


def lookup(table: Mapping[type, V], op: Operation) -> V | None:
    """The row of `op`'s class in `table`, or of its nearest base class that has one."""
    for cls in type(op).__mro__:
        if cls in table:
            return table[cls]
    return None


class RuleTable(dict[type[Operation], V]):
    """A dict from op classes to rules whose `lookup` follows the class hierarchy."""

    def lookup(self, op: Operation) -> V | None:
        return lookup(self, op)
