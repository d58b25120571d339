"""Passes, registered by CLI name in `PASSES`.

A new pass adds its class to `_ALL` below; its `name` is its CLI name.
"""

from __future__ import annotations

from cutec.passes.bank_conflicts import BankConflicts
from cutec.passes.canonicalize import Canonicalize
from cutec.passes.carry_vectors import CarryVectors
from cutec.passes.cse import CSE
from cutec.passes.licm import LICM
from cutec.passes.lower_to_thread import LowerToThread
from cutec.passes.manager import Instrumentation, Pass, PassManager, parse_pipeline
from cutec.passes.order_shared_loads import OrderSharedLoads
from cutec.passes.partition import Partition
from cutec.passes.predicate import Predicate
from cutec.passes.promote_registers import PromoteRegisters
from cutec.passes.reassociate import Reassociate
from cutec.passes.select_atoms import SelectAtoms
from cutec.passes.simplify import Simplify
from cutec.passes.sink_barriers import SinkBarriers
from cutec.passes.software_pipeline import Pipeline
from cutec.passes.specialize_args import SpecializeArgs
from cutec.passes.tile import Tile
from cutec.passes.vectorize import Vectorize

_ALL: tuple[type[Pass], ...] = (
    BankConflicts,
    Canonicalize,
    CarryVectors,
    CSE,
    LICM,
    LowerToThread,
    OrderSharedLoads,
    Partition,
    Pipeline,
    Predicate,
    PromoteRegisters,
    Reassociate,
    SelectAtoms,
    Simplify,
    SinkBarriers,
    SpecializeArgs,
    Tile,
    Vectorize,
)

PASSES: dict[str, type[Pass]] = {p.name: p for p in _ALL}

__all__ = ["PASSES", "Instrumentation", "Pass", "PassManager", "parse_pipeline"]
