"""specialize-args: facts about a launch's arguments, added to the kernel's tensors.

As Triton does, the JIT compiles a kernel for what it sees of the arguments at
a call — which run-time extents and strides are divisible by 16, which base
pointers are 16-byte aligned — so that a user need not write every ``assume``
and ``align``. This pass writes those facts where the kernel's own declarations
live, on the ``cute.make_tensor`` ops over the kernel's arguments:

    specialize-args{div=M:16 ldA:16, align=A:16}

    %A = cute.make_tensor %ptr, %M, %K, %ldA          {div = array<i64: 4, 1, 4>}
      →  %A = cute.make_tensor %ptr, %M, %K, %ldA     {div = array<i64: 16, 1, 16>, align = 16}

A leaf's divisor becomes lcm(declared, given); a pointer's alignment the larger
of the two. Facts only add knowledge, so every later pass stays sound; the
runtime chose them from the arguments and checks them again at every launch
(a specialisation is only used for arguments that satisfy it). Names the
kernel does not have are ignored: one set of facts serves every kernel of a
module.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from cutec.ir.attributes import DenseArrayAttr, IntegerAttr
from cutec.ir.dialects.builtin import KernelOp, ModuleOp
from cutec.ir.dialects.cute_tensor import MakeTensorOp
from cutec.ir.types import i64
from cutec.ir.value import BlockArgument
from cutec.passes.manager import Pass, PipelineError


def parse_facts(text: str, option: str) -> dict[str, int]:
    """``"M:16 ldA:16"`` → ``{"M": 16, "ldA": 16}`` (positive integers)."""
    facts: dict[str, int] = {}
    for item in text.split():
        name, colon, value = item.partition(":")
        if not colon or not name.isidentifier() or not value.isdigit() or int(value) < 1:
            raise PipelineError(
                f"specialize-args: '{item}' in option '{option}' must read NAME:N with N >= 1"
            )
        facts[name] = int(value)
    return facts


@dataclass
class SpecializeArgs(Pass):
    name = "specialize-args"
    summary = "add launch-time divisibility and alignment facts to the kernel's tensors"

    div: str = ""  # run-time extents and strides: "NAME:N ...", N divides NAME
    align: str = ""  # base pointers: "NAME:BYTES ...", a power of two

    @classmethod
    def of(cls, divisors: Mapping[str, int], alignments: Mapping[str, int]) -> SpecializeArgs:
        """The pass adding `divisors` and `alignments` (by name), as its options say them."""
        return cls(
            div=" ".join(f"{n}:{d}" for n, d in divisors.items()),
            align=" ".join(f"{n}:{a}" for n, a in alignments.items()),
        )

    def run(self, module: ModuleOp) -> None:
        divisors = parse_facts(self.div, "div")
        alignments = parse_facts(self.align, "align")
        for n in alignments.values():
            if n & (n - 1):
                raise PipelineError(f"specialize-args: alignment {n} is not a power of two")
        for kernel in module.walk_type(KernelOp):
            args = set(kernel.args)
            for op in kernel.walk_type(MakeTensorOp):
                self._specialize(op, args, divisors, alignments)

    @staticmethod
    def _specialize(
        op: MakeTensorOp,
        args: set[BlockArgument],
        divisors: dict[str, int],
        alignments: dict[str, int],
    ) -> None:
        ptr = op.ptr
        if isinstance(ptr, BlockArgument) and ptr in args and ptr.name_hint in alignments:
            promised = max(op.alignment, alignments[ptr.name_hint])
            op.attributes["align"] = IntegerAttr(promised, i64)
        div = []
        for i, leaf in enumerate(op.leaves, start=1):
            d = op.leaf_divisor(i) or 1
            if isinstance(leaf, BlockArgument) and leaf in args and leaf.name_hint in divisors:
                d = math.lcm(d, divisors[leaf.name_hint])
            div.append(d)
        if any(d != 1 for d in div):
            op.attributes["div"] = DenseArrayAttr(i64, tuple(div))
