"""What a kernel takes at launch, read from its IR: the runtime's view of a kernel.

A `.cute` kernel ``k(A: f32[M, K] : (1, ldA) align 16, alpha: f32)`` has the
IR arguments ``(%A: !gpu.ptr<f32, global>, %M, %K, %ldA: index, %alpha: f32)``
(docs/abi.md). A caller passes two things, a tensor and a scalar; the runtime
must know that the tensor supplies M, K and ldA, that its first stride is the
static 1, that its base is 16-byte aligned and what the kernel's ``assume``
clauses promised. All of that is in the cute-level IR — in the
``cute.make_tensor`` ops over the kernel's pointer arguments, whose type holds
the static leaves and whose operands are the dynamic ones — and the lowering
erases it. `signature_of` reads it before the lowering; the launch facts the
lowering adds (block, grid, dynamic shared memory, 32-bit offsets) are read by
`launch_of` from the lowered kernel. Together (with a stream-K tail's) they are a
kernel's launch record, `KernelLaunch`, which round-trips through JSON, so a kernel
loaded from the disk cache needs no compile; what is read back is checked
(`from_json`, `check_launch`): the launch function is generated from it. Each kind
of parameter is one registered record class (`Param`, `param_kind`).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from cutec.atoms import tma
from cutec.dtypes import DTYPES, dtype
from cutec.ir import json_read as jr
from cutec.ir.dialects.builtin import KernelOp
from cutec.ir.dialects.cute_tensor import MakeTensorOp
from cutec.ir.dialects.cute_tma import MakeTmaAtomOp
from cutec.ir.dialects.cute_types import fill_dynamic
from cutec.ir.dialects.gpu import PointerType
from cutec.ir.layout_of import LayoutAnalysis
from cutec.ir.param_access import ACCESSES, READ, param_access
from cutec.ir.types import Type, bit_width, dtype_name, element_type_named, index
from cutec.ir.value import BlockArgument
from cutec.layout.inttuple import leaves
from cutec.layout.symbolic import evaluate, parse_expr, sym
from cutec.target import AddressSpace

# A shape or stride as the kernel declares it: a nested tuple whose leaves are
# static ints or the names of run-time values (``((1, "ldM"), "ldK")``).
Pattern = Any


class Param:
    """A parameter of a kernel's launch record: one kind of thing a caller passes (a
    tensor, a scalar) or the runtime supplies.

    Each kind is one frozen dataclass registered by `param_kind` under the JSON key
    that holds its name (``{"tensor": "A", ...}``, ``{"scalar": "alpha", ...}``). It
    writes itself (`to_json`), reads and checks itself (`read`: a
    `json_read.RecordError` for anything it would not write), and says which
    `.param`s it supplies and which run-time values it makes known, so that a record
    is read and checked (`KernelSignature.from_json`, `_check_abi`) without naming
    any kind. A new kind (the Hopper path's tensor maps, built at launch) is one
    more class here; the readers do not change.
    """

    kind: ClassVar[str]
    # Whether a caller passes it (an argument of the launch function); else the runtime
    # builds it from the arguments (a tensor map).
    passed: ClassVar[bool] = True
    # The `.param` kinds of this parameter kind beyond "ptr", "index" and scalar types
    # (what a signature's `abi` may name for it).
    abi_kinds: ClassVar[tuple[str, ...]] = ()
    name: str

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def read(cls, data: dict[str, Any], where: str) -> Param:
        """The parameter `to_json` wrote, checked (`json_read.RecordError` if not)."""
        raise NotImplementedError

    def binds(self) -> set[str]:
        """The run-time values a launch knows from this parameter before launching."""
        return set()

    def supplies(self, arg: str, abi_kind: str) -> bool:
        """Whether `.param` `arg` of `abi_kind` ("ptr", "index", f32 ...) is this one's."""
        raise NotImplementedError

    def check(self, known: set[str], kernel: str) -> None:
        """That what the parameter reads at launch is among the `known` run-time values."""

    def pointers(self) -> set[str]:
        """The pointer parameters whose value this one is built from at launch."""
        return set()


# Each parameter kind by its JSON key (`param_kind`).
PARAM_KINDS: dict[str, type[Param]] = {}

P = TypeVar("P", bound=type[Param])


def param_kind(cls: P) -> P:
    """Register a parameter kind under its `kind` key."""
    assert cls.kind not in PARAM_KINDS, cls.kind
    PARAM_KINDS[cls.kind] = cls
    return cls


@param_kind
@dataclass(frozen=True)
class TensorParam(Param):
    """A global tensor argument: its pointer and the layout pattern it must have."""

    kind = "tensor"
    name: str  # the pointer argument's name, the parameter's name in the .cute file
    element: str  # the element type's atom-library name (f32, f16, bf16, s8 ...)
    shape: Pattern | None  # None: a bare pointer (thread-level IR has no make_tensor)
    stride: Pattern | None
    align: int  # bytes the base pointer promises (the element's size by default)
    # How the kernel writes it (cutec.ir.param_access): "read" (never), "write", or
    # "atomic" (only by atomics). The launch checks an output's memory by it.
    access: str = READ

    @property
    def flat(self) -> list[tuple[Any, Any]]:
        """(extent, stride) per mode of the flattened layout: one per array dimension."""
        assert self.shape is not None and self.stride is not None
        return list(zip(leaves(self.shape), leaves(self.stride), strict=True))

    def to_json(self) -> dict[str, Any]:
        return {"tensor": self.name, "element": self.element, "shape": self.shape,
                "stride": self.stride, "align": self.align, "access": self.access}  # fmt: skip

    @classmethod
    def read(cls, data: dict[str, Any], where: str) -> TensorParam:
        """Identifiers for names, a known element type, a shape and a stride of one
        nesting (ints, names, expressions the symbolic parser reads), a power-of-2
        alignment, a known access."""
        name = jr.name(data["tensor"], f"{where}.tensor")
        element = jr.text(jr.field(data, "element", where), f"{where}.element")
        if element not in DTYPES or DTYPES[element].ir is None:
            raise jr.RecordError(f"{where}.element: no element type {element!r:.80}")
        shape, stride = jr.field(data, "shape", where), jr.field(data, "stride", where)
        if shape is not None or stride is not None:
            shape = jr.pattern(shape, f"{where}.shape")
            stride = jr.pattern(stride, f"{where}.stride")
            if jr.profile(shape) != jr.profile(stride):
                raise jr.RecordError(
                    f"{where}: shape {shape} and stride {stride} differ in nesting"
                )
        align = jr.integer(jr.field(data, "align", where), f"{where}.align", 1, 1 << 16)
        if align & (align - 1):
            raise jr.RecordError(f"{where}.align: {align} is not a power of 2")
        access = jr.field(data, "access", where)
        if access not in ACCESSES:
            raise jr.RecordError(f"{where}.access: {access!r:.80} is none of {ACCESSES}")
        return cls(name, element, shape, stride, align, access)

    def binds(self) -> set[str]:
        """The leaves of its layout that are plain names."""
        if self.shape is None:
            return set()
        return {
            x for pair in self.flat for x in pair if isinstance(x, str) and jr.NAME.fullmatch(x)
        }

    def supplies(self, arg: str, abi_kind: str) -> bool:
        """Its pointer, and the run-time values its layout binds."""
        if abi_kind == "ptr":
            return arg == self.name
        return arg in self.binds()

    def check(self, known: set[str], kernel: str) -> None:
        """Expressions in its layout read run-time values only."""
        if self.shape is None:
            return
        for leaf in (x for pair in self.flat for x in pair if isinstance(x, str)):
            if not jr.expression_names(leaf) <= known:
                raise jr.RecordError(f"signature of {kernel}: {self.name}'s layout reads "
                                     f"{leaf!r}, which no argument gives")  # fmt: skip


@param_kind
@dataclass(frozen=True)
class ScalarParam(Param):
    """A scalar argument passed by value: ``alpha: f32``, ``n: int``."""

    kind = "scalar"
    name: str
    type: str  # the IR type's printed name: f32, i32, index, i1, f16 ...

    def to_json(self) -> dict[str, Any]:
        return {"scalar": self.name, "type": self.type}

    @classmethod
    def read(cls, data: dict[str, Any], where: str) -> ScalarParam:
        """An identifier and a scalar type."""
        name = jr.name(data["scalar"], f"{where}.scalar")
        kind = _abi_kind(jr.field(data, "type", where), f"{where}.type")
        if kind == "ptr" or kind in _own_abi_kinds():
            raise jr.RecordError(f"{where}: a scalar of type {kind}")
        return cls(name, kind)

    def binds(self) -> set[str]:
        return {self.name}

    def supplies(self, arg: str, abi_kind: str) -> bool:
        return arg == self.name and abi_kind == self.type


@param_kind
@dataclass(frozen=True)
class TensorMapParam(Param):
    """A TMA tensor map the runtime builds at launch (cutec.runtime.tensor_map) and passes
    by value, ``.param .align 64 .b8 name[128]`` (docs/abi.md, *Tensor-map parameters*).

    The record holds its recipe, never the map (which holds a device address): the
    pointer parameter whose memory it maps (the map's base is that tensor's base), and
    the arguments of ``cuTensorMapEncodeTiled`` in the driver's order (index 0 the
    innermost, contiguous dimension). Extents and strides are ints or expressions over
    the launch's run-time names (a slice of a batched tensor is a 3-D view whose third
    extent is the batch); strides are in elements, of dims 1..rank-1, and become bytes
    (times the element's size) when the map is built (`describe`).
    """

    kind = "tensor_map"
    passed = False
    abi_kinds = ("tensor_map",)
    name: str  # its .param's name
    tensor: str  # the pointer parameter it maps
    dtype: tma.TmaDataType
    dims: tuple[int | str, ...]  # extents, innermost first
    strides: tuple[int | str, ...]  # element strides of dims 1..rank-1
    box: tuple[int, ...]
    element_strides: tuple[int, ...]
    interleave: tma.TmaInterleave = tma.TmaInterleave.NONE
    swizzle: tma.TmaSwizzle = tma.TmaSwizzle.NONE
    l2_promotion: tma.TmaL2Promotion = tma.TmaL2Promotion.NONE
    oob_fill: tma.TmaOobFill = tma.TmaOobFill.NONE
    # A TMA store writes through it: its innermost extent must be whole 16-byte chunks
    # (`tma.store_overrun`), which the launch checks.
    store: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "tensor_map": self.name, "maps": self.tensor, "dtype": self.dtype.name,
            "dims": list(self.dims), "strides": list(self.strides), "box": list(self.box),
            "element_strides": list(self.element_strides),
            "interleave": self.interleave.name, "swizzle": self.swizzle.name,
            "l2_promotion": self.l2_promotion.name, "oob_fill": self.oob_fill.name,
            "store": self.store,
        }  # fmt: skip

    @classmethod
    def read(cls, data: dict[str, Any], where: str) -> TensorMapParam:
        """Identifiers for its name and its tensor, the enums' names, extents and strides
        (positive ints, names, expressions) of one rank, and a box that keeps the driver's
        rules whatever the extents (`tma.check_box`)."""
        name = jr.name(data["tensor_map"], f"{where}.tensor_map")
        # Not under "tensor", the key of a tensor parameter (`_param_of_json`).
        tensor = jr.name(jr.field(data, "maps", where), f"{where}.maps")
        dtype = _member(tma.TmaDataType, data, "dtype", where)
        box = tuple(_ints(jr.field(data, "box", where), f"{where}.box", tma.MAX_BOX_DIM))
        rank = len(box)
        if not 1 <= rank <= tma.MAX_RANK:
            raise jr.RecordError(f"{where}.box: a TMA box has 1..{tma.MAX_RANK} dims, got {rank}")
        dims = _extents(jr.field(data, "dims", where), f"{where}.dims", rank)
        strides = _extents(jr.field(data, "strides", where), f"{where}.strides", rank - 1)
        element_strides = tuple(
            _ints(jr.field(data, "element_strides", where), f"{where}.element_strides",
                  tma.MAX_ELEMENT_STRIDE)
        )  # fmt: skip
        param = cls(
            name, tensor, dtype, dims, strides, box, element_strides,  # type: ignore[arg-type]
            _member(tma.TmaInterleave, data, "interleave", where),
            _member(tma.TmaSwizzle, data, "swizzle", where),
            _member(tma.TmaL2Promotion, data, "l2_promotion", where),
            _member(tma.TmaOobFill, data, "oob_fill", where),
            _flag(data, "store", where),
        )  # fmt: skip
        try:
            tma.check_box(param.dtype, param.box, param.element_strides, param.interleave,
                          param.swizzle, param.oob_fill)  # fmt: skip
        except tma.TmaDescriptorError as e:
            raise jr.RecordError(f"{where}: {e}") from None
        return param

    def supplies(self, arg: str, abi_kind: str) -> bool:
        return arg == self.name and abi_kind == "tensor_map"

    def check(self, known: set[str], kernel: str) -> None:
        """Its extents and strides read run-time values only."""
        for leaf in (x for x in (*self.dims, *self.strides) if isinstance(x, str)):
            if not jr.expression_names(leaf) <= known:
                raise jr.RecordError(f"signature of {kernel}: {self.name}'s view reads "
                                     f"{leaf!r}, which no argument gives")  # fmt: skip

    def pointers(self) -> set[str]:
        return {self.tensor}

    def describe(self, values: Mapping[str, int]) -> tma.TmaTensorMap:
        """The map's description at a launch's run-time `values` (`tma.TmaDescriptorError`
        if the view breaks a driver rule there: a stride that is no multiple of 16 bytes)."""

        def value(x: int | str) -> int:
            return x if isinstance(x, int) else evaluate(parse_expr(x), values)

        return tma.TmaTensorMap(
            self.dtype,
            tuple(value(d) for d in self.dims),
            tuple(value(s) * self.dtype.nbytes for s in self.strides),
            self.box,
            self.element_strides,
            self.interleave,
            self.swizzle,
            self.l2_promotion,
            self.oob_fill,
        )


def _flag(data: Any, key: str, where: str) -> bool:
    """Field `key`, a bool (absent: False)."""
    value = data.get(key, False) if isinstance(data, dict) else False
    if not isinstance(value, bool):
        raise jr.RecordError(f"{where}.{key}: {value!r:.80} is not true or false")
    return value


def _own_abi_kinds() -> set[str]:
    """The `.param` kinds the registered parameter kinds declare (`Param.abi_kinds`)."""
    return {k for p in PARAM_KINDS.values() for k in p.abi_kinds}


E = TypeVar("E", bound=enum.Enum)


def _member(enum_type: type[E], data: Any, key: str, where: str) -> E:
    """The member of `enum_type` that field `key` names."""
    value = jr.text(jr.field(data, key, where), f"{where}.{key}")
    if value not in enum_type.__members__:
        raise jr.RecordError(f"{where}.{key}: {value!r:.80} is none of "
                             f"{list(enum_type.__members__)}")  # fmt: skip
    return enum_type[value]


def _ints(value: Any, where: str, largest: int) -> list[int]:
    return [
        jr.integer(v, f"{where}[{i}]", 1, largest) for i, v in enumerate(jr.items(value, where))
    ]


def _extents(value: Any, where: str, length: int) -> tuple[int | str, ...]:
    """`length` positive ints (below 2^40, the driver's bound on byte strides), names or
    expressions."""
    out: list[int | str] = []
    for i, v in enumerate(jr.items(value, where, length)):
        at = f"{where}[{i}]"
        if isinstance(v, str):
            out.append(v if jr.NAME.fullmatch(v) else jr.expression(v, at))
        else:
            out.append(jr.integer(v, at, 1, tma.MAX_GLOBAL_STRIDE - 1))
    return tuple(out)


@dataclass(frozen=True)
class KernelSignature:
    """What a caller passes (`params`), what the runtime adds (`implicit`) and what the
    kernel receives (`abi`)."""

    kernel: str
    # In declaration order, as a caller passes them; a tensor map, which the runtime
    # builds (`Param.passed` False), among them.
    params: tuple[Param, ...]
    abi: tuple[tuple[str, str], ...]  # (argument name, "ptr" or a scalar type) per .param
    facts: tuple[tuple[str, int], ...]  # run-time name -> the divisor the kernel assumed
    # The trailing arguments the runtime supplies (the kernel's `implicit` attribute:
    # a stream-K gemm's wave and workspace, docs/abi.md), by their names.
    implicit: tuple[Param, ...] = ()

    def abi_types(self) -> tuple[Type | str, ...]:
        """The IR type of each `.param`, for `cutec.ptx.tables.param_layout`; a tensor
        map, which no IR type holds, as its kind ("tensor_map", `tables.TENSOR_MAP`)."""
        out: list[Type | str] = []
        pointers = {p.name: p for p in (*self.params, *self.implicit) if isinstance(p, TensorParam)}
        for name, kind in self.abi:
            if kind == "ptr":
                element = element_type_named(_ir_name(pointers[name].element))
                out.append(PointerType(element, AddressSpace.GLOBAL))
            elif kind in TensorMapParam.abi_kinds:
                out.append(kind)
            else:
                out.append(index if kind == "index" else element_type_named(kind))
        return tuple(out)

    def to_json(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "params": [p.to_json() for p in self.params],
            "abi": [list(a) for a in self.abi],
            "facts": [list(f) for f in self.facts],
            "implicit": [p.to_json() for p in self.implicit],
        }

    @classmethod
    def from_json(cls, data: Any) -> KernelSignature:
        """A signature `to_json` wrote, checked: each parameter by its kind's `read`,
        identifiers for names, known types, and each `.param` a parameter's
        (`_check_abi`); else `json_read.RecordError`."""
        where = "signature"
        signature = cls(
            jr.name(jr.field(data, "kernel", where), f"{where}.kernel"),
            _params_of_json(jr.field(data, "params", where), f"{where}.params"),
            _pairs(jr.field(data, "abi", where), f"{where}.abi", _abi_kind),
            _pairs(jr.field(data, "facts", where), f"{where}.facts", _divisor),
            _params_of_json(jr.field(data, "implicit", where), f"{where}.implicit"),
        )
        _check_abi(signature)
        return signature


def _pairs(data: Any, where: str, second: Callable[[Any, str], Any]) -> tuple[Any, ...]:
    """``[[name, value], ...]``: each name an identifier, each value read by `second`."""
    out = []
    for i, pair in enumerate(jr.items(data, where)):
        n, value = jr.items(pair, f"{where}[{i}]", 2)
        out.append((jr.name(n, f"{where}[{i}]"), second(value, f"{where}[{i}]")))
    return tuple(out)


def _divisor(value: Any, where: str) -> int:
    return jr.integer(value, where, 1, 1 << 31)


def _params_of_json(data: Any, where: str) -> tuple[Param, ...]:
    return tuple(_param_of_json(p, f"{where}[{i}]") for i, p in enumerate(jr.items(data, where)))


def _param_of_json(p: Any, where: str) -> Param:
    """A parameter of the one kind whose key `p` holds (`PARAM_KINDS`), read by its kind."""
    if not isinstance(p, dict):
        raise jr.RecordError(f"{where}: expected an object, got {type(p).__name__}")
    kinds = [kind for kind in PARAM_KINDS if kind in p]
    if len(kinds) != 1:
        raise jr.RecordError(f"{where}: not one parameter kind of {sorted(PARAM_KINDS)}")
    return PARAM_KINDS[kinds[0]].read(p, where)


def _abi_kind(value: Any, where: str) -> str:
    """A `.param`'s kind: "ptr", "index", an element type's IR name (f32, i32 ...) or a
    kind a parameter kind declares (`Param.abi_kinds`)."""
    if isinstance(value, str) and (value in ("ptr", "index") or value in _own_abi_kinds()):
        return value
    try:
        element_type_named(jr.text(value, where))
    except ValueError:
        raise jr.RecordError(f"{where}: no scalar type {value!r:.80}") from None
    return str(value)


def runtime_names(signature: KernelSignature) -> set[str]:
    """The run-time values a launch knows before it launches: the names its arguments'
    layouts bind and its scalar parameters (what a grid or a stride expression may read)."""
    return set().union(*(p.binds() for p in signature.params))


def _check_abi(signature: KernelSignature) -> None:
    """Each `.param` is a parameter's (the one of its name, else one that binds it) and
    each parameter has one; the runtime's own `.param`s are the implicit arguments it
    knows; each parameter reads run-time values only (its kind's `check`)."""
    everything = (*signature.params, *signature.implicit)
    by_name = {p.name: p for p in everything}
    names = [n for n, _ in signature.abi]
    if len(by_name) != len(everything) or len(set(names)) != len(names):
        raise jr.RecordError(f"signature of {signature.kernel}: a name is used twice")
    for n, kind in signature.abi:
        owner = by_name.get(n)
        owners = [owner] if owner is not None else everything
        if not any(p.supplies(n, kind) for p in owners):
            raise jr.RecordError(f"signature of {signature.kernel}: .param {n} ({kind}) is no "
                                 "parameter's")  # fmt: skip
    unpassed = by_name.keys() - set(names)
    if unpassed:
        raise jr.RecordError(f"signature of {signature.kernel}: no .param for {sorted(unpassed)}")
    _check_implicit(signature)
    known = runtime_names(signature)
    for p in signature.params:
        p.check(known, signature.kernel)
        for pointer in p.pointers():
            if not any(q.supplies(pointer, "ptr") for q in signature.params):
                raise jr.RecordError(f"signature of {signature.kernel}: {p.name} is built "
                                     f"from {pointer!r}, no pointer parameter")  # fmt: skip


def _check_implicit(signature: KernelSignature) -> None:
    """The implicit arguments are the runtime's (docs/abi.md): named as it names them, a
    workspace with its flags, their layouts of sizes (< 2^31) and the CTA count only."""
    own = {p.name for p in signature.implicit}
    if not own <= set(IMPLICIT_NAMES) or own & runtime_names(signature):
        raise jr.RecordError(f"signature of {signature.kernel}: implicit arguments "
                             f"{sorted(own)} are not the runtime's")  # fmt: skip
    if (IMPLICIT_WORKSPACE in own) != (IMPLICIT_FLAGS in own):
        raise jr.RecordError(f"signature of {signature.kernel}: a workspace without flags")
    for p in signature.implicit:
        if not isinstance(p, TensorParam):
            continue
        flat = [] if p.shape is None else [x for pair in p.flat for x in pair]
        if p.shape is None or not all(
            x == IMPLICIT_CTAS or (type(x) is int and 0 <= x < 1 << 31) for x in flat
        ):
            raise jr.RecordError(f"signature of {signature.kernel}: the layout of {p.name} "
                                 "is not the runtime's")  # fmt: skip


# A grid expression's name for the kernel's CTAs the GPU holds at once (its SMs times
# the CTAs one SM fits at the kernel's registers, shared memory and block): the
# frontend binds it in a grid clause, the launcher asks the driver for it.
RESIDENT_CTAS = "resident_ctas"


# The arguments a stream-K gemm (`stream_k = true`) adds to its kernels, which the
# runtime supplies (docs/abi.md, *Implicit arguments*): the wave (the first kernel's
# resident CTAs), and the tail's workspace of partial tiles, its column count (CTAs)
# and the flags, zero before each launch and left zero by it.
IMPLICIT_WAVE = "stream_k_wave"
IMPLICIT_WORKSPACE = "stream_k_workspace"
IMPLICIT_CTAS = "stream_k_ctas"
IMPLICIT_FLAGS = "stream_k_flags"
IMPLICIT_NAMES = (IMPLICIT_WAVE, IMPLICIT_WORKSPACE, IMPLICIT_CTAS, IMPLICIT_FLAGS)


def names_resident_ctas(expr: str) -> bool:
    """Whether a grid expression names `RESIDENT_CTAS`."""
    return re.search(rf"\b{RESIDENT_CTAS}\b", expr) is not None


@dataclass(frozen=True)
class LaunchInfo:
    """The launch facts of a lowered kernel (docs/abi.md, "Launch facts")."""

    block: tuple[int, int, int] | None  # reqntid; None: the caller must give one
    max_block: tuple[int, int, int] | None  # maxntid, an upper bound
    grid: tuple[str, str, str] | None  # `symbolic.parse_expr` texts over run-time names
    cluster: tuple[int, int, int] | None
    dynamic_smem: int  # bytes passed at launch
    offset_bits: int  # 32: every tensor's largest element offset must be below 2^31
    then: str | None = None  # the kernel launched after this one, with the same arguments

    def to_json(self) -> dict[str, Any]:
        return {
            "block": self.block, "max_block": self.max_block, "grid": self.grid,
            "cluster": self.cluster, "dynamic_smem": self.dynamic_smem,
            "offset_bits": self.offset_bits, "then": self.then,
        }  # fmt: skip

    @classmethod
    def from_json(cls, data: Any) -> LaunchInfo:
        """Launch facts `to_json` wrote, checked: a block and a cluster of ints within
        the hardware's limits, grid expressions the symbolic parser reads, the tail an
        identifier; else `json_read.RecordError`."""
        where = "launch"
        grid = jr.field(data, "grid", where)
        if grid is not None:
            grid = tuple(jr.expression(e, f"{where}.grid") for e in jr.items(grid, where, 3))
        then = jr.field(data, "then", where)
        smem = jr.integer(jr.field(data, "dynamic_smem", where), f"{where}.dynamic_smem", 0,
                          _MAX_SMEM)  # fmt: skip
        offset_bits = jr.field(data, "offset_bits", where)
        if offset_bits not in (32, 64) or type(offset_bits) is not int:
            raise jr.RecordError(f"{where}.offset_bits: expected 32 or 64, got {offset_bits!r:.80}")
        return cls(
            _block(jr.field(data, "block", where), f"{where}.block"),
            _block(jr.field(data, "max_block", where), f"{where}.max_block"),
            grid,  # type: ignore[arg-type]
            _dim3(jr.field(data, "cluster", where), f"{where}.cluster", _MAX_CLUSTER),
            smem,
            offset_bits,
            None if then is None else jr.name(then, f"{where}.then"),
        )


# Bounds of what a kernel's launch facts can be on any target (cutec.target's limits):
# threads and cluster CTAs, and dynamic shared memory bytes with room to spare.
_MAX_THREADS = 1024
_MAX_CLUSTER = 16
_MAX_SMEM = 1 << 24


def _dim3(value: Any, where: str, largest: int) -> tuple[int, int, int] | None:
    if value is None:
        return None
    x, y, z = (jr.integer(v, where, 1, largest) for v in jr.items(value, where, 3))
    return (x, y, z)


def _block(value: Any, where: str) -> tuple[int, int, int] | None:
    block = _dim3(value, where, _MAX_THREADS)
    if block is not None and block[0] * block[1] * block[2] > _MAX_THREADS:
        raise jr.RecordError(f"{where}: {block} is more than {_MAX_THREADS} threads")
    return block


def check_launch(
    signature: KernelSignature,
    launch: LaunchInfo,
    then: tuple[KernelSignature, LaunchInfo] | None = None,
) -> None:
    """That launch facts read back fit their signature (else `json_read.RecordError`): the
    grid reads the launch's run-time values (and `resident_ctas`) only; a stream-K tail
    is the one `launch.then` names, has a grid and a block, and takes the kernel's
    arguments and the runtime's own."""
    known = runtime_names(signature)
    _check_grid(launch, known | {RESIDENT_CTAS}, signature.kernel)
    # The kernel itself takes the wave only; the workspace is its tail's.
    if {n for n, _ in signature.abi} & set(IMPLICIT_NAMES) - {IMPLICIT_WAVE}:
        raise jr.RecordError(f"{signature.kernel}: a tail's implicit arguments")
    if (launch.then is None) != (then is None):
        raise jr.RecordError(f"{signature.kernel}: its tail is {launch.then}, but "
                             f"{'one' if then else 'none'} was recorded")  # fmt: skip
    if then is None:
        return
    tail, tail_launch = then
    if tail.kernel != launch.then or tail_launch.grid is None or tail_launch.block is None:
        raise jr.RecordError(f"{signature.kernel}: the tail {tail.kernel} is not launchable")
    _check_grid(tail_launch, known | {IMPLICIT_WAVE, RESIDENT_CTAS}, tail.kernel)
    pointers = {p.name for p in signature.params if isinstance(p, TensorParam)}
    for n, kind in tail.abi:
        if n not in IMPLICIT_NAMES and n not in (pointers if kind == "ptr" else known):
            raise jr.RecordError(f"{tail.kernel}: .param {n} is none of {signature.kernel}'s")


@dataclass(frozen=True)
class KernelLaunch:
    """What the runtime launches a compiled kernel from, and what the disk cache keeps of
    it: the kernel's signature and launch facts, and its tail's (a stream-K gemm's second
    kernel, which `launch.then` names). Read back, it is checked as data (`from_json`)."""

    signature: KernelSignature
    launch: LaunchInfo
    then: tuple[KernelSignature, LaunchInfo] | None = None

    def to_json(self) -> dict[str, Any]:
        tail = None
        if self.then is not None:
            tail = {"signature": self.then[0].to_json(), "launch": self.then[1].to_json()}
        return {"signature": self.signature.to_json(), "launch": self.launch.to_json(),
                "then": tail}  # fmt: skip

    @classmethod
    def from_json(cls, data: Any, where: str = "entry") -> KernelLaunch:
        """The record `to_json` wrote: each part read by its own reader, then
        `check_launch` that they fit together; else `json_read.RecordError`."""
        signature = KernelSignature.from_json(jr.field(data, "signature", where))
        launch = LaunchInfo.from_json(jr.field(data, "launch", where))
        tail = jr.field(data, "then", where)
        then = None
        if tail is not None:
            then = (
                KernelSignature.from_json(jr.field(tail, "signature", f"{where}.then")),
                LaunchInfo.from_json(jr.field(tail, "launch", f"{where}.then")),
            )
        check_launch(signature, launch, then)
        return cls(signature, launch, then)


def _check_grid(launch: LaunchInfo, known: set[str], kernel: str) -> None:
    for expr in launch.grid or ():
        unknown = jr.expression_names(expr) - known
        if unknown:
            raise jr.RecordError(f"{kernel}: the grid {expr!r:.80} reads {sorted(unknown)}, "
                                 "which no argument gives")  # fmt: skip


def signature_of(kernel: KernelOp) -> KernelSignature:
    """The launch signature of a cute-level (not yet lowered) kernel."""
    args: list[BlockArgument] = list(kernel.args)
    tensors: dict[BlockArgument, MakeTensorOp] = {}
    facts: dict[str, int] = {}
    leaf_args: set[BlockArgument] = set()
    for op in kernel.walk_type(MakeTensorOp):
        ptr = op.ptr
        if isinstance(ptr, BlockArgument) and ptr in args and ptr not in tensors:
            tensors[ptr] = op
        for i, leaf in enumerate(op.leaves, start=1):
            if isinstance(leaf, BlockArgument) and leaf in args:
                leaf_args.add(leaf)
                d = op.leaf_divisor(i) or 1
                if d > 1:
                    name = _name(leaf)
                    facts[name] = max(facts.get(name, 1), d)
    params: list[Param] = []
    abi: list[tuple[str, str]] = []
    implicit_attr = kernel.attributes.get("implicit")
    implicit = {e.value for e in implicit_attr.elements} if implicit_attr else set()  # type: ignore[attr-defined]
    access = param_access(kernel)
    la = LayoutAnalysis()
    for arg in args:
        if not isinstance(arg.type, PointerType):
            la.bind(arg, sym(_name(arg)))
    for arg in args:
        name = _name(arg)
        if isinstance(arg.type, PointerType):
            abi.append((name, "ptr"))
            params.append(_tensor_param(name, arg.type, tensors.get(arg), la, access[name]))
        else:
            abi.append((name, str(arg.type)))
            if arg not in leaf_args:
                params.append(ScalarParam(name, str(arg.type)))
    for made in kernel.walk_type(MakeTmaAtomOp):
        params.append(_tensor_map_param(made, la))
        abi.append((made.map.value, "tensor_map"))
    return KernelSignature(
        kernel.sym_name,
        tuple(p for p in params if p.name not in implicit),
        tuple(abi),
        tuple(sorted(facts.items())),
        tuple(p for p in params if p.name in implicit),
    )


def launch_of(kernel: KernelOp) -> LaunchInfo:
    """The launch facts recorded on a lowered kernel's attributes."""
    attrs = kernel.attributes

    def dim3(key: str) -> tuple[int, int, int] | None:
        attr = attrs.get(key)
        return None if attr is None else tuple(attr.values)  # type: ignore[attr-defined]

    grid = attrs.get("grid")
    offsets = attrs.get("offsets")
    smem = attrs.get("dynamic_smem")
    then = attrs.get("then")
    return LaunchInfo(
        block=dim3("reqntid"),
        max_block=dim3("maxntid"),
        grid=None if grid is None else tuple(e.value for e in grid.elements),  # type: ignore[attr-defined]
        cluster=dim3("cluster_dim"),
        dynamic_smem=0 if smem is None else smem.value,  # type: ignore[attr-defined]
        offset_bits=64 if offsets is None else offsets.value,  # type: ignore[attr-defined]
        then=None if then is None else then.value,  # type: ignore[attr-defined]
    )


def _tensor_param(
    name: str, ptr: PointerType, op: MakeTensorOp | None, la: LayoutAnalysis, access: str
) -> TensorParam:
    element = dtype_name(ptr.element)
    if op is None:
        return TensorParam(name, element, None, None, _element_bytes(ptr.element), access)
    spec = op.tensor_result().spec
    # A leaf is a kernel argument (its name), or computed from them (the default
    # column-major stride of f32[M, N] is M): then the expression, in
    # `symbolic.parse_expr` text over the arguments' names.
    names = iter([_leaf(v, la) for v in op.leaves])
    shape = fill_dynamic(spec.shape, names)
    stride = fill_dynamic(spec.stride, names)
    return TensorParam(name, element, shape, stride, op.alignment, access)


# CuTe's make_tma_copy asks the driver to promote L2 fills to 128-byte sectors.
TMA_L2_PROMOTION = tma.TmaL2Promotion.L2_128B


def _tensor_map_param(made: MakeTmaAtomOp, la: LayoutAnalysis) -> TensorMapParam:
    """The recipe of the map a TMA atom declares: box dimension d walks tensor mode
    ``modes[d]``, so the map's extent and element stride there are that mode's."""
    atom = made.atom()
    address = la.address_of(made.tensor)  # the parameter, or make_tensor of it (offset 0)
    owner = address.root.owner
    assert isinstance(owner, MakeTensorOp) and isinstance(owner.ptr, BlockArgument)
    assert address.offset == 0, address.offset
    layout = address.layout
    shape, stride = (tuple(leaves(x)) for x in (layout.shape, layout.stride))

    def text(x: Any) -> int | str:
        return x if isinstance(x, int) else str(x)

    return TensorMapParam(
        made.map.value,
        _name(owner.ptr),
        tma.map_dtype(dtype_name(atom.element), atom.kind == "store"),
        tuple(text(shape[m]) for m in atom.modes),
        tuple(text(stride[m]) for m in atom.modes[1:]),
        atom.dims,
        (1,) * atom.rank,
        swizzle=atom.swizzle,
        l2_promotion=TMA_L2_PROMOTION,
        store=atom.kind == "store",
    )


def _leaf(value: Any, la: LayoutAnalysis) -> int | str:
    if isinstance(value, BlockArgument):
        return _name(value)
    integer = la.integer_of(value)
    return integer if isinstance(integer, int) else str(integer)


def _name(arg: BlockArgument) -> str:
    # Hand-written IR may leave an argument unnamed (%0): it is then passed by position.
    return arg.name_hint or f"arg{arg.index}"


def _element_bytes(t: Type) -> int:
    return max(1, bit_width(t) // 8)


def _ir_name(element: str) -> str:
    ir = dtype(element).ir
    assert ir is not None
    return ir
