"""PTX instruction templates: the one description of an atom's instruction text.

An atom record carries a `PtxTemplate`; the PTX emitter renders it unchanged
with the registers the lowering allocated, and the `ptxas` tests render it with
made-up registers. The text uses `$name` placeholders (``string.Template``), so
PTX's own braces need no escaping::

    PtxTemplate(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 $d, $a, $b, $c;",
        (Operand("d", "f32", 4), Operand("a", "b32", 4),
         Operand("b", "b32", 2), Operand("c", "f32", 4)),
    )

renders ``$d`` as ``{%f0, %f1, %f2, %f3}``, a one-register operand as ``%f0``,
an address operand as ``[%rd0]`` and an immediate as its literal text.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

OperandKind = Literal["reg", "addr", "imm"]

# Register types a template may declare (PTX ISA, "Fundamental types").
PTX_REGISTER_TYPES = frozenset(
    {
        "pred",
        "b16",
        "b32",
        "b64",
        "u16",
        "u32",
        "u64",
        "s16",
        "s32",
        "s64",
        "f16",
        "f16x2",
        "bf16",
        "bf16x2",
        "f32",
        "f64",
    }
)


@dataclass(frozen=True)
class Operand:
    """One operand of a templated instruction.

    `count` registers of PTX type `ptx_type`; `kind` says how it prints:
    a register or brace list, an ``[address]``, or an immediate.
    """

    name: str
    ptx_type: str
    count: int = 1
    kind: OperandKind = "reg"

    def __post_init__(self) -> None:
        if self.ptx_type not in PTX_REGISTER_TYPES:
            raise ValueError(f"operand ${self.name}: unknown PTX register type {self.ptx_type!r}")
        if self.count < 1:
            raise ValueError(f"operand ${self.name}: count must be >= 1, got {self.count}")
        if self.kind != "reg" and self.count != 1:
            raise ValueError(f"operand ${self.name}: a {self.kind} operand has exactly one value")


@dataclass(frozen=True)
class PtxTemplate:
    """Instruction text with `$name` placeholders and the operands that fill them."""

    text: str
    operands: tuple[Operand, ...] = ()

    def __post_init__(self) -> None:
        names = [op.name for op in self.operands]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate operand names in template {self.text!r}")
        used = {
            m.group("named") or m.group("braced")
            for m in string.Template.pattern.finditer(self.text)
            if m.group("named") or m.group("braced")
        }
        if used != set(names):
            raise ValueError(
                f"template {self.text!r} uses {sorted(used)} but declares {sorted(names)}"
            )

    def operand(self, name: str) -> Operand:
        """The operand called `name`."""
        for op in self.operands:
            if op.name == name:
                return op
        raise KeyError(name)

    def render(self, values: Mapping[str, str | Sequence[str]]) -> str:
        """The instruction text with every placeholder filled from `values`.

        A register operand takes a sequence of exactly `count` register names
        (or one name when count is 1); an address or immediate takes one string.
        """
        filled: dict[str, str] = {}
        for op in self.operands:
            if op.name not in values:
                raise ValueError(f"no value for operand ${op.name} of {self.text!r}")
            value = values[op.name]
            regs = [value] if isinstance(value, str) else list(value)
            if len(regs) != op.count:
                raise ValueError(
                    f"operand ${op.name} of {self.text!r} takes {op.count} values, got {len(regs)}"
                )
            if op.kind == "addr":
                filled[op.name] = f"[{regs[0]}]"
            elif op.count == 1:
                filled[op.name] = regs[0]
            else:
                filled[op.name] = "{" + ", ".join(regs) + "}"
        return string.Template(self.text).substitute(filled)
