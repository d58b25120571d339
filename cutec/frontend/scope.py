"""What names denote while a kernel is built: compile-time values and IR values.

The builder evaluates every expression to one of these. Compile-time values
are plain Python: ``int`` (CuTe's ``Int<N>``), ``float``, ``bool``, tuples of
them (IntTuples, tilers, coordinates; ``None`` is ``_``, `X` a dropped mode),
algebra `Layout` / `ComposedLayout` / `Swizzle`, IR `Type` for dtypes, and the
records below. Run-time values wrap an IR `Value`; a run-time integer also
carries its symbolic value when the algebra can use it (a tensor extent is the
SymInt ``M`` with its declared divisibility).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cutec.ir.core import Value
from cutec.ir.dialects.cute_atom_types import TiledCopyType, TiledMmaType
from cutec.ir.types import Type
from cutec.target import AddressSpace


class Poisoned(Exception):
    """A name whose defining statement already failed: stop without a second message."""


# The value of a name whose defining statement failed (reading it raises Poisoned).
POISON = object()


@dataclass(frozen=True)
class Runtime:
    """A run-time scalar: an IR value of an integer, index or float type.

    `sym` is its symbolic value (a SymInt) when one is known: extents and
    strides of tensor parameters, sizes of dynamic modes, arithmetic on them.
    """

    value: Value
    sym: Any = None

    @property
    def type(self) -> Type:
        return self.value.type


@dataclass(frozen=True)
class Tensor:
    """A tensor: its IR value and its layout with symbolic leaves (the facts kept)."""

    value: Value
    layout: Any  # Layout | ComposedLayout
    element: Type
    space: AddressSpace
    # > 0 for a coordinate tensor (CuTe's identity tensor and its views): the rank
    # of its coordinates; its layout's strides are basis-encoded (cute_coord).
    coord_rank: int = 0


@dataclass(frozen=True)
class AtomRef:
    """A named atom, not yet placed in a tiled object: ``UniversalCopy[u128]``,
    ``SM80_16x8x8_F32TF32TF32F32_TN`` or ``auto``. `kind` is "copy", "mma",
    "tma" (``SM90_TMA_LOAD``, for make_tma_atom) or "auto" (either, decided by the
    function it is passed to)."""

    kind: str
    name: str
    record: Any = None  # CopyAtom | MmaAtom | None for auto
    element: Any = None  # the element type of a Copy_Atom<ATOM, T>


@dataclass(frozen=True)
class TiledCopy:
    """A TiledCopy value: the IR value making it and its type (which holds everything)."""

    value: Value
    type: TiledCopyType
    record: Any = None  # the CopyAtom, None for auto
    # tiled_copy_A/B/C(auto, mma): the MMA and operand, typed at its first partition_S
    # (the atom is chosen from the tensor it reads) and keyed by the call (origin).
    mma: Any = None
    operand: str | None = None
    origin: Any = None


@dataclass(frozen=True)
class TiledMma:
    """A TiledMMA value and its type."""

    value: Value | None  # None: an auto MMA not typed yet (typed at its first use)
    type: TiledMmaType
    record: Any = None  # the MmaAtom, None for auto
    origin: Any = None  # the call that made it (the key of its typed instance)
    acc: Any = None  # an auto MMA's accumulator type (tiled_mma(auto, acc_dtype = ...))


@dataclass(frozen=True)
class TmaAtom:
    """``make_tma_atom(SM90_TMA_LOAD, A, smem_layout, tile)``: the IR value, its type
    (the box and swizzle) and the tensor it maps."""

    value: Value
    type: Any  # TmaAtomType
    tensor: Tensor


@dataclass(frozen=True)
class TmaCopy:
    """``tma.with(bars[i])``: a TMA atom bound to the mbarrier its copies complete on."""

    atom: TmaAtom
    bar: ElementRef


@dataclass(frozen=True)
class ThrSlice:
    """``tiled.slice(tid)``: CuTe's ThrCopy / ThrMMA, one thread's view of a tiled object."""

    tiled: TiledCopy | TiledMma
    tid: Runtime | int


@dataclass(frozen=True)
class ElementRef:
    """``t[i]`` as the argument of a builtin that takes an element itself, not its
    value (the mbarrier builtins: ``mbarrier_arrive(bars[s])``): the tensor and the
    evaluated indices, with the expression, to locate errors."""

    tensor: Tensor
    indices: tuple[Any, ...]
    node: Any  # ast.Index


@dataclass(frozen=True)
class Builtin:
    """A builtin function or namespace (``local_tile``, ``thread``)."""

    name: str


@dataclass(frozen=True)
class FuncRef:
    """A device helper function, inlined at each call.

    `globals` are the top-level names of the file defining it (its consts, funcs
    and imports), which its body sees wherever it is called from."""

    node: Any  # ast.Func
    globals: Any = field(default=None, compare=False)  # dict[str, Any]


@dataclass(frozen=True)
class Namespace:
    """``import "path.cute" as alias``: the funcs and consts the file defines, as
    ``alias.name``. `module` is the `imports.Module` (for its other names in messages)."""

    alias: str
    module: Any = field(compare=False)
    names: Any = field(compare=False)  # dict[str, Any]


@dataclass
class Binding:
    """A name's value and where it was bound (for 'declared here' notes)."""

    value: Any
    loc: Any = None
    const: bool = False


@dataclass
class Scope:
    """Nested lexical scopes; inner bindings shadow outer ones."""

    frames: list[dict[str, Binding]] = field(default_factory=lambda: [{}])

    def push(self) -> None:
        self.frames.append({})

    def pop(self) -> dict[str, Binding]:
        return self.frames.pop()

    def lookup(self, name: str) -> Binding | None:
        for frame in reversed(self.frames):
            if name in frame:
                return frame[name]
        return None

    def frame_of(self, name: str) -> dict[str, Binding] | None:
        for frame in reversed(self.frames):
            if name in frame:
                return frame
        return None

    def bind(self, name: str, value: Any, loc: Any = None, const: bool = False) -> None:
        self.frames[-1][name] = Binding(value, loc, const)

    def assign(self, name: str, value: Any, loc: Any = None) -> None:
        """Rebind an existing name where it lives, else bind it in the innermost scope."""
        frame = self.frame_of(name)
        if frame is None:
            self.bind(name, value, loc)
        else:
            frame[name] = Binding(value, frame[name].loc, frame[name].const)
