"""The constants a folder's result becomes: what the greedy rewrite driver inserts
for a folded value (`GreedyConfig.materialize`) in canonicalize and simplify."""

from __future__ import annotations

from cutec.ir.attributes import Attribute, FloatAttr, IntegerAttr
from cutec.ir.core import Operation
from cutec.ir.dialects.arith import ConstantOp


def materialize(attr: Attribute) -> Operation | None:
    """An op producing `attr` (the folders' constants are integers and floats)."""
    if isinstance(attr, IntegerAttr | FloatAttr):
        return ConstantOp(attr)
    return None
