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
`launch_of` from the lowered kernel. Both round-trip through JSON, so a kernel
loaded from the disk cache needs no compile.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from cutec.dtypes import dtype
from cutec.ir.dialects.builtin import KernelOp
from cutec.ir.dialects.cute_tensor import MakeTensorOp
from cutec.ir.dialects.cute_types import fill_dynamic
from cutec.ir.dialects.gpu import PointerType
from cutec.ir.layout_of import LayoutAnalysis
from cutec.ir.param_access import ACCESSES, READ, param_access
from cutec.ir.types import Type, bit_width, dtype_name, element_type_named, index
from cutec.ir.value import BlockArgument
from cutec.layout.inttuple import leaves
from cutec.layout.symbolic import sym
from cutec.target import AddressSpace

# A shape or stride as the kernel declares it: a nested tuple whose leaves are
# static ints or the names of run-time values (``((1, "ldM"), "ldK")``).
Pattern = Any


@dataclass(frozen=True)
class TensorParam:
    """A global tensor argument: its pointer and the layout pattern it must have."""

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


@dataclass(frozen=True)
class ScalarParam:
    """A scalar argument passed by value: ``alpha: f32``, ``n: int``."""

    name: str
    type: str  # the IR type's printed name: f32, i32, index, i1, f16 ...


Param = TensorParam | ScalarParam


@dataclass(frozen=True)
class KernelSignature:
    """What a caller passes (`params`), what the runtime adds (`implicit`) and what the
    kernel receives (`abi`)."""

    kernel: str
    params: tuple[Param, ...]  # in declaration order, as a caller passes them
    abi: tuple[tuple[str, str], ...]  # (argument name, "ptr" or a scalar type) per .param
    facts: tuple[tuple[str, int], ...]  # run-time name -> the divisor the kernel assumed
    # The trailing arguments the runtime supplies (the kernel's `implicit` attribute:
    # a stream-K gemm's wave and workspace, docs/abi.md), by their names.
    implicit: tuple[Param, ...] = ()

    def abi_types(self) -> tuple[Type, ...]:
        """The IR type of each `.param`, for `cutec.ptx.tables.param_layout`."""
        out: list[Type] = []
        pointers = {p.name: p for p in (*self.params, *self.implicit) if isinstance(p, TensorParam)}
        for name, kind in self.abi:
            if kind == "ptr":
                element = element_type_named(_ir_name(pointers[name].element))
                out.append(PointerType(element, AddressSpace.GLOBAL))
            else:
                out.append(index if kind == "index" else element_type_named(kind))
        return tuple(out)

    def to_json(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "params": [_param_json(p) for p in self.params],
            "abi": [list(a) for a in self.abi],
            "facts": [list(f) for f in self.facts],
            "implicit": [_param_json(p) for p in self.implicit],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> KernelSignature:
        return cls(
            data["kernel"],
            tuple(_param_of_json(p) for p in data["params"]),
            tuple((str(n), str(k)) for n, k in data["abi"]),
            tuple((str(n), int(d)) for n, d in data["facts"]),
            tuple(_param_of_json(p) for p in data.get("implicit", ())),
        )


def _param_json(p: Param) -> dict[str, Any]:
    if isinstance(p, ScalarParam):
        return {"scalar": p.name, "type": p.type}
    return {"tensor": p.name, "element": p.element, "shape": p.shape, "stride": p.stride,
            "align": p.align, "access": p.access}  # fmt: skip


def _param_of_json(p: dict[str, Any]) -> Param:
    if "tensor" not in p:
        return ScalarParam(p["scalar"], p["type"])
    shape, stride = _tuples(p["shape"]), _tuples(p["stride"])
    access = p["access"]
    if access not in ACCESSES:
        raise ValueError(f"parameter {p['tensor']!r}: access {access!r} is none of {ACCESSES}")
    return TensorParam(p["tensor"], p["element"], shape, stride, int(p["align"]), access)


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
    def from_json(cls, data: dict[str, Any]) -> LaunchInfo:
        def dim3(v: Any) -> Any:
            return None if v is None else tuple(v)

        return cls(
            dim3(data["block"]), dim3(data["max_block"]), dim3(data["grid"]),
            dim3(data["cluster"]), int(data["dynamic_smem"]), int(data["offset_bits"]),
            data.get("then"),
        )  # fmt: skip


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


def _tuples(x: Any) -> Any:
    """JSON's lists back to the nested tuples of a pattern."""
    if isinstance(x, list):
        return tuple(_tuples(e) for e in x)
    return x
