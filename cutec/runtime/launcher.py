"""The launch function of a kernel: argument checks, specialisation key, packing.

A call of a compiled kernel must cost little more than the ``cuLaunchKernel``
it makes (within 1.5x of a raw launch through cuda.bindings). So, as Triton
does, cutec writes one Python function per kernel signature, straight-line
code with the signature's facts as constants, compiles it once, and makes it
the kernel object's ``__call__``. For ``A: f32[M, K] : (1, ldA) align 16`` it reads:

    def launch(self, a_0, ..., *, grid=None, block=None, stream=None, smem=None,
               allow_alias=None):
        if grid is not None: grid = _dims(_err, 'grid', grid)   # keywords, checked
        if type(a_0) is _Tensor:                  # torch: its fields, read directly
            if a_0.dtype is not _dt_a_0: raise _err.dtype('A', 'f32', ...)
            p_a_0 = a_0.data_ptr(); d_a_0 = a_0.get_device() ...
            e_a_0_0, e_a_0_1, = a_0.shape         # a wrong rank fails to unpack
            t_a_0_0, t_a_0_1, = a_0.stride()
        else:
            v_a_0 = _view(a_0) ...                 # CuPy, DLPack, DeviceArray: slower
        n_M = e_a_0_0; n_K = e_a_0_1; n_ldA = t_a_0_1   # run-time names
        _sk = (e_a_0_0, e_a_0_1, t_a_0_0, t_a_0_1, ...)
        _hit = _checked.get(_sk)                  # the checks below, once per shape
        if _hit is None:
            if n_M % 4: raise _err.fact('A', 'M', n_M, 4)   # assume M % 4 == 0
            if t_a_0_0 != 1 and e_a_0_0 != 1: raise ...     # the static stride 1
            ...                                   # same names equal, offsets < 2^31,
                                                  # outputs injective, byte spans w_*
            _hit = _checked[_sk] = (key bits of the extents, spans, default grid)
        if p_a_2 < p_a_0 + w_a_0 and p_a_0 < p_a_2 + w_a_2: _overlap(...)   # C apart from A
        if not _live: return                      # every output empty
        if (p_a_0 | ...) & 15 == 0: _key = ...    # alignment: promised and specialised
        _var = _variants.get(_key << 8 | _dev) or a compile
        _m0 = _md0.get((p_a_0, n_M, n_K, n_ldA))  # a TMA map's 128 bytes, if it has one
        _pack(_buf, 0, p_a_0, n_M, n_K, n_ldA, ...)     # the .param buffer (docs/abi.md)
        _cu_launch(_var.address, grid..., block..., smem, stream, _params)   # C (fastlaunch)

A kernel with a cluster clause rounds its grid up to whole clusters and launches
with ``_cu_launch_ex`` (cuLaunchKernelEx with the cluster's shape).

Every mistake raises a TypeError or ValueError naming the parameter, what was
declared and what was passed (`cutec.runtime.errors.ArgumentErrors`).
"""

from __future__ import annotations

import ctypes
import keyword
import math
import numbers
import re
import struct
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from types import MethodType
from typing import TYPE_CHECKING, Any

import numpy as np

from cutec.atoms.tma import TmaDescriptorError, store_overrun
from cutec.dtypes import DTYPES, numpy_dtype
from cutec.ir.json_read import expression_names
from cutec.ir.param_access import READ, WRITE
from cutec.ir.signature import (
    IMPLICIT_CTAS,
    IMPLICIT_FLAGS,
    IMPLICIT_WAVE,
    IMPLICIT_WORKSPACE,
    RESIDENT_CTAS,
    KernelSignature,
    LaunchInfo,
    ScalarParam,
    TensorMapParam,
    TensorParam,
    names_resident_ctas,
)
from cutec.ptx.tables import param_layout
from cutec.runtime import arrays, cuda, fastlaunch, overlap
from cutec.runtime.errors import ArgumentErrors, ArgumentValueError
from cutec.runtime.tensor_map import TENSOR_MAPS, TensorMapCache, TensorMapError

if TYPE_CHECKING:
    from cutec.runtime.workspace import Workspace

# The specialisation: run-time extents and strides divisible by SPECIALIZE_DIV, and by
# SPECIALIZE_BYTES' worth of the narrowest element type they index where that is fewer
# elements; base pointers aligned to SPECIALIZE_ALIGN bytes (Triton's choice: 16).
SPECIALIZE_DIV = 16
SPECIALIZE_BYTES = 16
SPECIALIZE_ALIGN = 16


def _byte_divisors(signature: KernelSignature) -> dict[str, int]:
    """Per run-time name that is an extent or stride of a tensor parameter: how many
    elements of the narrowest type among those tensors make SPECIALIZE_BYTES."""
    out: dict[str, int] = {}
    for p in signature.params:
        if not isinstance(p, TensorParam) or p.shape is None:
            continue
        per = max(1, SPECIALIZE_BYTES * 8 // DTYPES[p.element].bits)
        for leaf in (x for pair in p.flat for x in pair):
            if isinstance(leaf, str) and leaf.isidentifier():
                out[leaf] = max(out.get(leaf, 1), per)
    return out


# The parameter buffer's alignment in host memory: a tensor map's .param is 64-byte
# aligned (docs/abi.md), and the buffer is laid out as the parameter space is.
BUFFER_ALIGN = 64
# CTAs per cluster that every GPU with clusters runs (CUDA's portable size); beyond it
# a kernel needs CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, which cutec does
# not set.
PORTABLE_CLUSTER = 8

# struct codes of the .param types (little-endian, as the GPU reads them).
_STRUCT = {"u64": "Q", "s64": "q", "s32": "i", "s16": "h", "s8": "b", "u8": "B",
           "f32": "f", "f64": "d", "b16": "H"}  # fmt: skip
_INT_RANGES = {"i64": 64, "index": 64, "i32": 32, "i16": 16, "i8": 8}
# The least magnitude a float scalar's type rounds to inf: with p significand bits and
# largest exponent e, the largest finite value is (2 - 2^(1-p)) 2^e, and from half an ulp
# above it, 2^(e+1) - 2^(e-p), round-to-nearest-even gives inf.
FLOAT_OVERFLOW = {"f32": 2.0**128 - 2.0**103, "bf16": 2.0**128 - 2.0**119, "f16": 65520.0}

_EXPR_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+|//|[-+*%(),\s]")


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass
class Variant:
    """One specialisation, loaded: what the launch function needs of it."""

    fn: Any  # cutec.runtime.cuda.Function (the compiled kernel on the CPU path)
    smem: int  # dynamic shared memory bytes
    handle: Any = None  # the CUfunction
    address: int = 0  # the CUfunction's address, for the C launch (fastlaunch)
    resident_ctas: int = 0  # CTAs the device holds at once (a grid may name it)
    then: Variant | None = None  # a stream-K gemm's tail, launched after this kernel
    workspace: Workspace | None = None  # a tail's partial tiles and flags
    # A tail's grid per shape (the launch function's `_sk`): its expression names the
    # first kernel's and the tail's resident CTAs, fixed for the variant.
    grids: dict[Any, tuple[int, int, int]] = field(default_factory=dict)
    # The launch function of this variant's own launch record (its block, grid, cluster
    # and .params), where they are not those the kernel's launch function was written
    # for: that function hands the call to it (`build_launcher`'s `delegate`).
    launch: Callable[..., None] | None = None


class _Source:
    """Python source text, indented."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 1

    def __call__(self, line: str) -> None:
        self.lines.append("    " * self.depth + line)


def scalar_value(errors: ArgumentErrors, param: str, declared: str, value: Any) -> Any:
    """A scalar argument as the .param's struct code takes it, checked."""
    if declared in ("f32", "f64", "f16", "bf16"):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise errors.scalar(param, declared, value)
        try:
            number = float(value)
        except OverflowError:  # an int beyond every float
            raise errors.scalar_overflow(param, declared, value) from None
        if math.isfinite(number) and abs(number) >= FLOAT_OVERFLOW.get(declared, math.inf):
            raise errors.scalar_overflow(param, declared, value)
        if declared in ("f16", "bf16"):
            return int(np.array(number, numpy_dtype(DTYPES[declared])).view(np.uint16))
        return number
    if declared == "i1":
        if not isinstance(value, bool | numbers.Integral):
            raise errors.scalar(param, declared, value)
        return 1 if value else 0
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise errors.scalar(param, "int" if declared == "i32" else declared, value)
    bits = _INT_RANGES[declared]
    if not -(1 << (bits - 1)) <= int(value) < 1 << (bits - 1):
        raise errors.scalar_range(param, declared, int(value))
    return int(value)


def host_scalar(declared: str, value: Any) -> Any:
    """The value `scalar_value` packed, as the CPU backends take it: f16 and bf16 are
    packed as their 16 bits for the .param buffer, the interpreter takes the number."""
    if declared in ("f16", "bf16"):
        return float(np.array(value, np.uint16).view(numpy_dtype(DTYPES[declared])))
    return value


_CEIL_DIV = re.compile(r"ceil_div\(([A-Za-z_][A-Za-z0-9_]*),(\d+)\)")


def grid_code(expr: str, names: dict[str, str]) -> str:
    """A grid expression (`symbolic.parse_expr` text) as Python over the launch's locals.

    ``ceil_div(M,128)``, the usual grid, is written inline as ``-(-M // 128)``."""
    expr = _CEIL_DIV.sub(lambda m: f"(-(-{m[1]}//{m[2]}))", expr)
    out = []
    for tok in _EXPR_TOKEN.findall(expr):
        if tok in ("ceil_div", "min", "max"):
            out.append({"ceil_div": "_ceil_div"}.get(tok, tok))
        elif tok[0].isalpha() or tok[0] == "_":
            if tok not in names:
                raise ValueError(f"the grid expression {expr!r} names {tok!r}, no run-time value")
            out.append(names[tok])
        else:
            out.append(tok)
    if "".join(out).replace(" ", "") == "" or len("".join(_EXPR_TOKEN.findall(expr))) != len(expr):
        raise ValueError(f"cannot read the grid expression {expr!r}")
    return "".join(out)


def checked_cluster(
    kernel: str, cluster: tuple[int, int, int] | None
) -> tuple[int, int, int] | None:
    """A kernel's CTAs per cluster (its `cluster` clause) as the launch uses them: None for
    no clause or (1, 1, 1), which launch as before (cuLaunchKernel); an `ArgumentValueError`
    naming the clause for more CTAs than a portable cluster holds."""
    if cluster is None or cluster == (1, 1, 1):
        return None
    ctas = cluster[0] * cluster[1] * cluster[2]
    if ctas > PORTABLE_CLUSTER:
        raise ArgumentValueError(
            f"{kernel}: its clause 'cluster {cluster}' asks for {ctas} CTAs per cluster; a "
            f"portable cluster has at most {PORTABLE_CLUSTER} (cutec does not ask the driver "
            "for non-portable cluster sizes)"
        )
    return cluster


def _whole_clusters(
    grid: tuple[str, str, str], names: dict[str, str], cluster: tuple[int, int, int] | None
) -> list[str]:
    """The grid expressions as Python (`grid_code`), each rounded up to a multiple of the
    cluster's extent on its axis: a cluster launch needs a whole number of clusters, and
    the CTAs past the kernel's own grid run (kernels guard them, docs/abi.md)."""
    out = []
    for axis, expr in enumerate(grid):
        value = grid_code(expr, names)
        c = 1 if cluster is None else cluster[axis]
        out.append(value if c == 1 else f"(-(-({value}) // {c}) * {c})")
    return out


def map_value(
    found: dict[Any, Any], key: Any, maps: TensorMapCache | None, kernel: str,
    param: TensorMapParam, pointer: int, values: dict[str, Any],
) -> Any:  # fmt: skip
    """What tensor-map parameter `param` passes at a launch, remembered in `found` by
    `key`: the 128 bytes of its map over the tensor at `pointer` (`maps` keeps them, each
    encoded once), or on the CPU (`maps` None) the map's description
    (`cutec.atoms.tma.TmaTensorMap`), which the CPU backend applies to the array."""
    try:
        desc = param.describe(values)
    except TmaDescriptorError as e:
        raise TensorMapError(f"{kernel}: parameter '{param.name}': {e}") from None
    why = store_overrun(desc.global_dims, desc.dtype.nbytes) if param.store else None
    if why is not None:
        raise TensorMapError(f"{kernel}: parameter '{param.name}': {why}")
    value: Any = desc if maps is None else maps.for_param(kernel, param, pointer, values).data()
    if len(found) > 4096:
        found.clear()
    found[key] = value
    return value


def _map_code(
    code: _Source, env: dict[str, Any], signature: KernelSignature, local: dict[str, str],
    names: dict[str, str],
) -> dict[str, str]:  # fmt: skip
    """Each tensor map's value, `_m<i>`, by its parameter's name: remembered per (its
    tensor's base, the run-time values its recipe reads), so a launch on the same tensor
    and shape costs one lookup and no driver call; else `map_value`."""
    out: dict[str, str] = {}
    tensor_maps = [p for p in signature.params if isinstance(p, TensorMapParam)]
    for i, p in enumerate(tensor_maps):
        env[f"_mp{i}"], env[f"_md{i}"] = p, {}
        reads = sorted(set().union(*(expression_names(x) for x in (*p.dims, *p.strides)
                                     if isinstance(x, str))))  # fmt: skip
        pointer = f"p_{local[p.tensor]}"
        key = f"({pointer}, {''.join(names[n] + ', ' for n in reads)})"
        values = "{" + ", ".join(f"{n!r}: {names[n]}" for n in reads) + "}"
        code(f"_m{i} = _md{i}.get({key})")
        code(f"if _m{i} is None:")
        code(f"    _m{i} = _map_value(_md{i}, {key}, _maps, {signature.kernel!r}, _mp{i}, "
             f"{pointer}, {values})")  # fmt: skip
        out[p.name] = f"_m{i}"
    return out


def build_launcher(
    signature: KernelSignature,
    block: tuple[int, int, int] | None,
    grid: tuple[str, str, str] | None,
    offset_bits: int,
    specialize: frozenset[str],
    get_variant: Callable[[int, int | None], Variant],
    launch: Callable[..., None],
    current_stream: Callable[[Any], int],
    *,
    cpu: bool = False,
    then: tuple[KernelSignature, LaunchInfo] | None = None,
    max_block: tuple[int, int, int] | None = None,
    cluster: tuple[int, int, int] | None = None,
    maps: TensorMapCache | None = None,
    delegate: bool = False,
) -> tuple[Callable[..., None], list[tuple[str, str, int]]]:
    """The launch function of `signature`, and the facts each bit of its key stands for.

    `get_variant(key, device)` returns the loaded specialisation for key bits
    (bit i set: fact i holds). `specialize` names the run-time values and
    pointers the key may cover. `then` is a stream-K gemm's tail (its signature and
    launch facts), launched after the kernel with the same arguments and its implicit
    ones (the variant's `then`). `block` is the kernel's block (its `threads` clause),
    `max_block` an upper bound of it, where the kernel has one. `cluster` is its CTAs per
    cluster (its `cluster` clause): the launch rounds its grid up to whole clusters and
    goes through cuLaunchKernelEx. `maps` keeps the tensor maps its tensor-map
    parameters are built into (`TENSOR_MAPS`, the process's, by default).

    With `delegate`, a variant whose `launch` is set (its own launch record differs from
    this one: a specialisation's plan chose another block, grid or tensor maps) is
    launched by that function, given the call's arguments as they came; its launch
    keywords are then checked against that variant's block, not this one's.
    """
    errors = ArgumentErrors(signature.kernel)
    cluster = checked_cluster(signature.kernel, cluster)
    facts = dict(signature.facts)
    env: dict[str, Any] = {
        "_err": errors, "_view": arrays.view_of, "_variants": {}, "_checked": {},
        "_get_variant": get_variant, "_launch": launch, "_stream_of": current_stream,
        "_scalar": scalar_value, "_ceil_div": ceil_div, "_Tensor": None,
        "_host_array": arrays.host_array, "_lock": threading.Lock(), "_dims": launch_dims,
        "_overrun": arrays.buffer_overrun, "_injective": overlap.injective,
        "_overlap": check_overlap, "_aliases": allowed_aliases, "_count": launch_count,
        "_inference_mode": _torch_inference_mode(),
    }  # fmt: skip
    env["_pack"], env["_buf"], env["_params"], env["_keep"] = _param_buffer(signature)
    env["_maps"] = None if cpu else maps if maps is not None else TENSOR_MAPS
    env["_map_value"] = map_value
    code = _Source()
    names: dict[str, str] = {}  # run-time name -> local variable
    first_use: dict[str, str] = {}  # run-time name -> the parameter that bound it
    origins: dict[str, str] = {}  # n_<name> -> the extent or stride local it is read from
    key_facts: list[tuple[str, str, int]] = []  # (kind, name, divisor) per key bit
    params = [p.name for p in signature.params if p.passed]  # not the maps, built here
    local = _parameter_names(params)
    outputs = written_params(signature, then)
    env["_outputs"] = tuple(outputs)

    gpu_env: dict[str, Any] = {"_fast": False} if cpu else cuda_env()
    deferred: list[tuple[Any, ...]] = []  # checks of leaves that are expressions
    first_tensor = ""  # the first tensor parameter: the launch's GPU is its GPU
    bind, check = _Source(), _Source()  # run-time names; checks of extents and strides
    check.depth = 2
    _keyword_code(code, block, max_block, delegate)
    code("_torch = False")
    code("_dev = 0" if cpu else "_dev = None")
    if cpu:
        code("_arrays = {}")
    layout_locals: list[str] = []  # every extent and stride read from an array
    aligned: list[tuple[str, str, int]] = []  # (parameter, local, bytes) of promised alignments
    for p in signature.params:
        if not isinstance(p, TensorParam):
            continue
        a = local[p.name]
        if cpu:
            _host_tensor_code(code, p, a, p.name in outputs)
        else:
            first_tensor = first_tensor or p.name
            _tensor_code(code, env, p, a, first_tensor == p.name, first_tensor, p.name in outputs)
        if p.align > 1:
            aligned.append((p.name, a, p.align))
        if p.shape is not None:
            _layout_code(bind, check, p, a, names, first_use, facts, deferred, origins)
            layout_locals += [f"e_{a}_{i}" for i in range(len(p.flat))]
            layout_locals += [f"t_{a}_{i}" for i in range(len(p.flat))]
        if p.name in specialize and p.align % SPECIALIZE_ALIGN:
            key_facts.append(("align", p.name, SPECIALIZE_ALIGN))
    in_bytes = _byte_divisors(signature)
    for name in names:
        if name not in specialize:
            continue
        # 16 elements, and 16 bytes' worth where that is fewer (8 of a 16-bit type: what
        # a TMA map's strides need), each a bit unless the kernel's facts already say it.
        for d in sorted({SPECIALIZE_DIV, in_bytes.get(name, SPECIALIZE_DIV)}, reverse=True):
            if facts.get(name, 1) % d:
                key_facts.append(("div", name, d))
    raw: dict[str, str] = {a: a for a in local.values()}  # the arguments as they came
    for p in signature.params:
        if isinstance(p, ScalarParam):
            a = local[p.name]
            if delegate and p.type in ("f16", "bf16"):  # packed below as 16 bits
                raw[a] = f"r_{a}"
                code(f"r_{a} = {a}")
            if p.type == "f64":
                code(f"if type({a}) is not float:")
                code(f"    {a} = _scalar(_err, {p.name!r}, {p.type!r}, {a})")
            elif p.type == "f32":  # a float, unless beyond f32's range (then an error)
                limit = FLOAT_OVERFLOW["f32"]
                code(f"if type({a}) is not float or not -{limit!r} < {a} < {limit!r}:")
                code(f"    {a} = _scalar(_err, {p.name!r}, {p.type!r}, {a})")
            else:
                code(f"{a} = _scalar(_err, {p.name!r}, {p.type!r}, {a})")
            if p.name not in names:
                names[p.name] = a
                layout_locals.append(a)  # a scalar may enter the grid
    code.lines += bind.lines
    # Every check below depends only on the extents and strides (and scalars): done once
    # per distinct set of them, as the grid and the specialisation key's integer bits.
    code(f"_sk = ({''.join(v + ', ' for v in layout_locals)})")
    code("_hit = _checked.get(_sk)")
    code("if _hit is None:")
    code.lines += check.lines
    code.depth += 1
    for param, mode, what, declared, got, guard in deferred:
        value = grid_code(declared, names)
        code(f"if {got} != {value}" + (f" and {guard}:" if guard else ":"))
        code(f"    raise _err.{what}({param!r}, {mode}, f'{declared} = {{{value}}}', {got})")
    if offset_bits == 32:
        _offset_checks(code, signature, local)
    spans = _output_code(code, signature, local, outputs)
    int_bits = [
        f"(({names[n]} % {d} == 0) << {i})" for i, (k, n, d) in enumerate(key_facts) if k == "div"
    ]
    code(f"_ik = {' | '.join(int_bits) if int_bits else '0'}")
    # A grid that names resident_ctas (a persistent kernel's) needs the variant: it is
    # computed after the variant is found, the others once per shape here.
    late_grid = grid is not None and any(names_resident_ctas(e) for e in grid)
    if grid is None or late_grid:
        code("_dg = (None, None, None)")
    else:
        code(f"_dg = ({', '.join(_whole_clusters(grid, names, cluster))},)")
        code("if min(_dg) < 0:")
        code("    raise _err.grid(_dg)")
    code("if len(_checked) > 4096:")
    code("    _checked.clear()")
    held = "".join(f"{w}, " for w in ("_live", *spans.values()))
    code(f"_hit = _checked[_sk] = (_ik, {held}*_dg)")
    code.depth -= 1
    code(f"_ik, {held}_g0, _g1, _g2 = _hit")
    _overlap_code(code, signature, local, outputs, spans)
    code("if not _live:")
    code("    return  # every output is empty: nothing to launch")
    # The bases: usually all 16-byte aligned, which satisfies every promise up to 16 bytes
    # and every alignment fact of the key; one test for all, the details only otherwise.
    ptr_bits = [
        f"((p_{local[n]} % {SPECIALIZE_ALIGN} == 0) << {i})"
        for i, (k, n, _) in enumerate(key_facts)
        if k == "align"
    ]
    mask = sum(1 << i for i, (k, _, _) in enumerate(key_facts) if k == "align")
    small = [(n, a, b) for n, a, b in aligned if b <= SPECIALIZE_ALIGN]
    for n, a, b in aligned:
        if b > SPECIALIZE_ALIGN:
            code(f"if p_{a} % {b}:")
            code(f"    raise _err.align({n!r}, p_{a}, {b})")
    ptrs = sorted({f"p_{local[n]}" for k, n, _ in key_facts if k == "align"} |
                  {f"p_{a}" for _, a, _ in small})  # fmt: skip
    if ptrs:
        code(f"if ({' | '.join(ptrs)}) & {SPECIALIZE_ALIGN - 1} == 0:")
        code(f"    _key = _ik | {mask}" if mask else "    _key = _ik")
        code("else:")
        for n, a, b in small:
            code(f"    if p_{a} % {b}:")
            code(f"        raise _err.align({n!r}, p_{a}, {b})")
        code(f"    _key = _ik | {' | '.join(ptr_bits)}" if ptr_bits else "    _key = _ik")
    else:
        code("_key = _ik")
    code("_var = _variants.get(_key << 8 | _dev)")
    code("if _var is None:")
    code("    _var = _variants[_key << 8 | _dev] = _get_variant(_key, _dev)")
    if delegate:
        # A variant of another launch record: its own launch function launches it (and
        # the C launcher's `_resolve` leaves such a call to this function: DELEGATED).
        passed_args = "".join(f"{raw[local[p]]}, " for p in params)
        code("if _var.launch is not None:")
        code(f"    return _var.launch(self, {passed_args}grid=grid, block=block, stream=stream, "
             f"smem=smem, allow_alias=allow_alias)  {_DELEGATED}")  # fmt: skip
        code("if block is not None:")
        code(f"    block = _dims(_err, 'block', block, {block!r}, {max_block!r})")
    # Grid and block.
    code("if grid is not None:")
    code("    _g0, _g1, _g2 = grid")
    if cluster is not None:  # a given grid is whole clusters: the caller's numbers stand
        cx, cy, cz = cluster
        code(f"    if _g0 % {cx} or _g1 % {cy} or _g2 % {cz}:")
        code(f"        raise _err.cluster_grid(grid, {cluster!r})")
    if grid is None:
        code("else:")
        code("    raise _err.no_launch_shape('grid')")
    elif late_grid:
        resident = {**names, RESIDENT_CTAS: "_var.resident_ctas"}
        code("else:")
        code(f"    _g0, _g1, _g2 = {', '.join(_whole_clusters(grid, resident, cluster))}")
        code("    if min(_g0, _g1, _g2) < 0:")
        code("        raise _err.grid((_g0, _g1, _g2))")
    code("if block is None:")
    if block is None:
        code("    raise _err.no_launch_shape('block')")
    else:
        code(f"    _b0, _b1, _b2 = {block[0]}, {block[1]}, {block[2]}")
    code("else:")
    code("    _b0, _b1, _b2 = block")
    code("if not (_g0 and _g1 and _g2):")
    code("    return  # an empty problem: nothing to launch")
    map_locals = _map_code(code, env, signature, local, names)
    body = list(code.lines)  # shared with the resolve function (below)
    # The values of the arguments the runtime supplies (a stream-K gemm's; docs/abi.md).
    implicit = {
        IMPLICIT_WAVE: "_var.resident_ctas", IMPLICIT_WORKSPACE: "_ws[0]",
        IMPLICIT_CTAS: "_tv.workspace.ctas", IMPLICIT_FLAGS: "_ws[1]",
    }  # fmt: skip

    def values_of(sig: KernelSignature) -> str:
        out = []
        for name, kind in sig.abi:
            if name in implicit:
                out.append("0" if cpu and kind == "ptr" else implicit[name])
            elif name in map_locals:
                out.append(map_locals[name])
            else:
                out.append(f"p_{local[name]}" if kind == "ptr" else names[name])
        return ", ".join(out)

    if not cpu:
        code("if stream is None:")
        code("    _stream = _torch_stream(_dev) if _torch else 0")
        code("else:")
        code("    _stream = _stream_of(stream)")
        code("_smem = _var.smem if smem is None else smem")
    _launch_code(code, signature.kernel, "", values_of(signature), "_var", "_smem", cpu, gpu_env,
                 cluster)  # fmt: skip
    if then is not None:
        tail, tail_launch = then
        assert tail_launch.grid is not None and tail_launch.block is not None
        env["_pack_t"], env["_buf_t"], env["_params_t"], env["_keep_t"] = _param_buffer(tail)
        tail_names = {**names, IMPLICIT_WAVE: "_var.resident_ctas",
                      RESIDENT_CTAS: "_tv.resident_ctas"}  # fmt: skip
        # The tail: its own grid (empty when the last wave is not split) and block.
        code("_tv = _var.then")
        code("_tg = _tv.grids.get(_sk)")
        code("if _tg is None:")
        code("    if len(_tv.grids) > 4096:")
        code("        _tv.grids.clear()")
        code(f"    _tg = _tv.grids[_sk] = ("
             f"{', '.join(grid_code(e, tail_names) for e in tail_launch.grid)})")  # fmt: skip
        code("_g0, _g1, _g2 = _tg")
        code("_b0, _b1, _b2 = " + ", ".join(str(b) for b in tail_launch.block))
        code("if _g0 > 0 and _g1 > 0 and _g2 > 0:")
        code.depth += 1
        code("_ws = _tv.workspace.get(0)" if cpu else "_ws = _tv.workspace.get(_stream)")
        if cpu:
            code(f"_arrays = {{**_arrays, {IMPLICIT_WORKSPACE!r}: _ws[0], "
                 f"{IMPLICIT_FLAGS!r}: _ws[1]}}")  # fmt: skip
        _launch_code(code, tail.kernel, "_t", values_of(tail), "_tv", "_tv.smem", cpu, gpu_env)
        code.depth -= 1

    env.update(gpu_env)
    # `self` first: the function becomes the kernel object's __call__ (cutec.runtime.jit).
    # Named after the kernel and its parameters: Python's own messages for a missing or
    # an unknown argument then read "sgemm_nt() missing 1 required positional argument:
    # 'beta'", and arguments may be passed by name.
    fn_name = signature.kernel if _plain_name(signature.kernel) else "launch"
    header = f"def {fn_name}(self, {', '.join(local[p] for p in params)}"
    header = header.rstrip(", ") + (", " if params else "")
    header += "*_extra, grid=None, block=None, stream=None, smem=None, allow_alias=None):"
    # One argument too many is named as the kernel's parameters, not as Python counts
    # them (`self` included): "transpose() takes 2 arguments (S, D), got 3".
    given = f"len(_extra) + {len(params)}"
    arity = f"    if _extra: raise _err.count({params!r}, {given})\n"
    text = header + "\n" + arity + "\n".join(code.lines) + "\n"
    if _uses_torch(signature) and not cpu:
        env["_Tensor"] = _torch_tensor_type()
    # The C launcher launches one kernel with the caller's arguments only.
    simple = not (cpu or env["_blocking"] or signature.implicit or then)
    pairs = overlap_pairs(signature, outputs, spans)
    plan = None
    if simple:
        plan = _fast_plan(signature, local, names, origins, outputs, pairs, cluster)
    if plan is not None:
        # The C launcher's way into Python for a shape it has not seen: every check and
        # lookup of the launch function, then what to launch instead of launching.
        text += f"\n\ndef _resolve({header[header.index('(') + 1 : header.index('*_extra')]}):\n"
        text += "    grid = block = stream = smem = allow_alias = None\n"
        # A variant of another launch record: the launch function, called instead, hands
        # it to that record's own.
        body = [line.split("return ")[0] + "return None" if line.endswith(_DELEGATED) else line
                for line in body]  # fmt: skip
        text += "\n".join(body) + "\n"
        # Each argument's span in bytes (0 for a scalar), for the C launcher's overlap tests.
        widths = "".join(f"{spans.get(p, '0')}, " for p in params)
        mapped = "".join(f"{m}, " for m in map_locals.values())  # each map's 128 bytes
        text += (
            "    return (_var.address, (_g0, _g1, _g2), (_b0, _b1, _b2), _var.smem, _var, "
            f"({widths}), ({mapped}))\n"
        )
    exec(compile(text, f"<cutec launcher for {signature.kernel}>", "exec"), env)
    fn = env[fn_name]
    fn.__cutec_source__ = text  # for debugging: the generated code
    fn.__variants__ = env["_variants"]
    fn.__fast_plan__ = plan
    return fn, key_facts


# Marks the line of a delegating launch function that hands a call to a variant's own.
_DELEGATED = "# delegated"


def _param_buffer(signature: KernelSignature) -> tuple[Any, Any, int, Any]:
    """The .param buffer of `signature` (docs/abi.md): a struct packer writing it, the
    buffer, the address of the array of pointers to each parameter cuLaunchKernel
    takes, and what must stay alive for them."""
    layout = param_layout(signature.abi_types())
    assert layout is not None, "the PTX emitter accepted these parameters"
    fmt = "<"
    at = 0
    for p in layout:
        # A tensor map (.b8 [128]) is packed as its bytes.
        fmt += "x" * (p.offset - at) + (f"{p.size}s" if p.ptx == "b8" else _STRUCT[p.ptx])
        at = p.offset + p.size
    # The buffer starts at a multiple of BUFFER_ALIGN, so that each parameter sits at an
    # address aligned as in the parameter space (a map's 64 bytes): ctypes promises 16.
    storage = ctypes.create_string_buffer(max(at, 1) + BUFFER_ALIGN - 1)
    start = ctypes.addressof(storage)
    base = start + (-start % BUFFER_ALIGN)
    buffer = (ctypes.c_char * max(at, 1)).from_address(base)
    pointers = (ctypes.c_void_p * max(len(layout), 1))(*[base + p.offset for p in layout])
    return (struct.Struct(fmt).pack_into, buffer, ctypes.addressof(pointers),
            (storage, buffer, pointers))  # fmt: skip


def _launch_code(
    code: _Source, kernel: str, suffix: str, values: str, var: str, smem: str, cpu: bool,
    gpu_env: dict[str, Any], cluster: tuple[int, int, int] | None = None,
) -> None:  # fmt: skip
    """Pack the parameters of variant `var` (into ``_buf<suffix>``) and launch it on
    grid ``_g*`` and block ``_b*`` (in clusters of `cluster`: cuLaunchKernelEx)."""
    if cpu:
        code(f"_launch({var}, (_g0, _g1, _g2), (_b0, _b1, _b2), {var}.smem, ({values},), _arrays)")
        return
    # One parameter buffer per kernel object: packing it and launching from it is
    # one step under a lock, or a second thread could repack it in between (the
    # driver reads it during cuLaunchKernel).
    code("with _lock:")
    code.depth += 1
    code(f"_pack{suffix}(_buf{suffix}, 0, {values})")
    args = f"_g0, _g1, _g2, _b0, _b1, _b2, {smem}, _stream, _params{suffix}"
    if cluster is not None:
        shape = ", ".join(map(str, cluster))
        if gpu_env["_fast"]:
            code(f"_r = _cu_launch_ex({var}.address, {args}, {shape})")
        else:  # cuda.bindings' cuLaunchKernelEx (cuda.launch_cluster)
            code(f"_r = _cu_launch_cluster({var}.handle, (_g0, _g1, _g2), (_b0, _b1, _b2), "
                 f"({shape}), {smem}, _stream, _params{suffix})")  # fmt: skip
    elif gpu_env["_fast"]:  # the C launch (fastlaunch): plain ints in, an int out
        code(f"_r = _cu_launch({var}.address, {args})")
    else:  # cuda.bindings' cuLaunchKernel, which also takes `extra`
        code(f"_r = _cu_launch({var}.handle, {args}, 0)[0]")
    code("if _r:")
    code(
        f"    _launch_failed(_r, {var}.fn, (_g0, _g1, _g2), (_b0, _b1, _b2), {smem}, _stream, "
        f"_params{suffix}, {cluster!r})"
    )
    code.depth -= 1
    code(f"_pending.append({kernel!r})")
    code("if _blocking:")
    code(f"    _synchronize_after({var}.fn, _stream)")


# The C launcher's argument kinds (fastlaunch.c): a tensor, a Python float, a Python int.
_FAST_SCALARS = {"f32": "f", "f64": "f", "i32": "i", "i64": "i", "index": "i"}


def _fast_plan(
    signature: KernelSignature,
    local: dict[str, str],
    names: dict[str, str],
    origins: dict[str, str],
    outputs: dict[str, str],
    pairs: list[tuple[TensorParam, TensorParam]],
    cluster: tuple[int, int, int] | None,
) -> tuple[Any, ...] | None:
    """What the C launcher needs to pack the parameters itself: each argument's kind,
    rank and torch dtype, and for each .param its struct code, offset and source
    (argument, field: -1 the base or the scalar, i an extent, rank + i a stride; a tensor
    map's code is "M", its argument the tensor it maps, its field its index among the
    maps); and for its checks, whether the kernel writes each argument, the least
    magnitude of each float scalar that overflows, and the (output, other) pairs of
    arguments whose bytes must not meet; then the argument each map is built over and
    the cluster shape (None: none). None where it cannot serve this signature (a scalar
    type or a tensor it does not read, no tensor to take the GPU from)."""
    passed = [p for p in signature.params if p.passed]
    if not any(isinstance(p, TensorParam) for p in passed):
        return None
    index = {p.name: i for i, p in enumerate(passed)}
    kinds, ranks, dtypes = "", [], []
    fields: dict[str, tuple[int, int]] = {}  # launch-function local -> (argument, field)
    for i, p in enumerate(passed):
        a = local[p.name]
        if isinstance(p, ScalarParam):
            if p.type not in _FAST_SCALARS:
                return None
            kinds += _FAST_SCALARS[p.type]
            ranks.append(0)
            dtypes.append(None)
            fields[a] = (i, -1)
            continue
        assert isinstance(p, TensorParam)
        dtype = _torch_dtype(p.element)
        if p.shape is None or dtype is None:
            return None
        rank = len(p.flat)
        kinds += "t"
        ranks.append(rank)
        dtypes.append(dtype)
        fields[f"p_{a}"] = (i, -1)
        for d in range(rank):
            fields[f"e_{a}_{d}"] = (i, d)
            fields[f"t_{a}_{d}"] = (i, rank + d)
    tensor_maps = [p for p in signature.params if isinstance(p, TensorMapParam)]
    for m, p in enumerate(tensor_maps):
        fields[p.name] = (index[p.tensor], m)
    layout = param_layout(signature.abi_types())
    assert layout is not None
    slots = []
    for (name, kind), param in zip(signature.abi, layout, strict=True):
        if param.ptx == "b8":  # a tensor map: its bytes come with the resolved launch
            slots.append(("M", param.offset, *fields[name]))
            continue
        var = f"p_{local[name]}" if kind == "ptr" else names[name]
        source = fields.get(origins.get(var, var))
        if source is None:
            return None
        slots.append((_STRUCT[param.ptx], param.offset, *source))
    written = tuple(p.name in outputs for p in passed)
    limits = tuple(FLOAT_OVERFLOW["f32"] if isinstance(p, ScalarParam) and p.type == "f32"
                   else math.inf for p in passed)  # fmt: skip
    meet = tuple((index[p.name], index[q.name]) for p, q in pairs)
    map_args = tuple(index[p.tensor] for p in tensor_maps)
    return (kinds, tuple(ranks), tuple(dtypes), tuple(slots), written, limits, meet, map_args,
            cluster)  # fmt: skip


def fast_call(kernel: Any, fn: Callable[..., None]) -> Any:
    """A C launcher (fastlaunch.Launcher) for kernel object `kernel` whose launch function
    is `fn`, or None where there is none (no C extension, no driver, no torch, a
    signature it does not serve, CUTEC_LAUNCH_BLOCKING)."""
    plan = getattr(fn, "__fast_plan__", None)
    extension = fastlaunch.load()
    tensor_type = _torch_tensor_type()
    if plan is None or extension is None or tensor_type is None:
        return None
    env = fn.__globals__
    return extension.Launcher(
        MethodType(fn, kernel), MethodType(env["_resolve"], kernel), tensor_type,
        env["_torch_stream"], cuda.PENDING.append, kernel.name, _fast_failed, *plan,
        env["_inference_mode"],
    )  # fmt: skip


def _fast_failed(err: int, variant: Variant, grid: Any, block: Any, smem: int, stream: int,
                 params: int, cluster: Any) -> None:  # fmt: skip
    """A failed launch of the C launcher, reported (or retried) as the Python path does."""
    cuda.launch_failed(err, variant.fn, grid, block, smem, stream, params, cluster)


def cuda_env() -> dict[str, Any]:
    """The driver entry points a GPU launch function calls, bound once."""
    torch = sys.modules.get("torch")
    raw_stream = getattr(getattr(torch, "_C", None), "_cuda_getCurrentRawStream", None)
    fast = fastlaunch.load()
    return {
        "_fast": fast is not None,
        "_cu_launch": fast.launch if fast is not None else cuda.driver().cuLaunchKernel,
        "_cu_launch_ex": fast.launch_ex if fast is not None else None,
        "_cu_launch_cluster": cuda.launch_cluster,
        "_launch_failed": cuda.launch_failed,
        "_pending": cuda.PENDING,
        "_blocking": cuda.launch_blocking(),
        "_synchronize_after": cuda.synchronize_after,
        # torch's current stream on the arrays' GPU, when torch arrays were passed.
        "_torch_stream": raw_stream or (lambda dev: 0),
    }


# Names the launch function uses for itself, and the prefixes of its per-parameter locals.
# (and the builtins it calls, which a parameter of the same name would hide).
_RESERVED = frozenset({"self", "grid", "block", "stream", "smem", "allow_alias", "type", "min",
                       "len", "str", "tuple", "ValueError", "TypeError"})  # fmt: skip
_LOCAL_PREFIX = re.compile(r"^(?:[pdvetnswz])_")


def _plain_name(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name) and not name.startswith("_")


def _parameter_names(params: list[str]) -> dict[str, str]:
    """The launch function's parameter names: the kernel's own, unless one could collide
    with the function's locals (then a_0, a_1, ... for all)."""
    if all(_plain_name(p) and p not in _RESERVED and not _LOCAL_PREFIX.match(p) for p in params):
        return {p: p for p in params}
    return {p: f"a_{i}" for i, p in enumerate(params)}


# CUDA's launch limits (the same for compute capability 8.x and 9.x): grid x, y, z;
# block x, y, z; threads per block.
_GRID_LIMITS = (2**31 - 1, 65535, 65535)
_BLOCK_LIMITS = (1024, 1024, 64)
_MAX_THREADS = 1024


def _integer(x: Any) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def launch_dims(
    errors: ArgumentErrors,
    what: str,
    value: Any,
    declared: tuple[int, int, int] | None = None,
    bound: tuple[int, int, int] | None = None,
) -> tuple[int, int, int]:
    """A `grid=` or `block=` argument (`what`) as three sizes within CUDA's limits; a block
    must be the kernel's (`declared`, its `threads` clause) or within its `bound`."""
    items = tuple(value) if isinstance(value, tuple | list) else (value,)
    if not 1 <= len(items) <= 3 or not all(_integer(x) for x in items):
        raise errors.launch_shape_type(what, value)
    dims = (*(int(x) for x in items), 1, 1)[:3]
    grid = what == "grid"
    least = 0 if grid else 1  # an empty grid launches nothing; an empty block is an error
    for axis, d, most in zip("xyz", dims, _GRID_LIMITS if grid else _BLOCK_LIMITS, strict=True):
        if not least <= d <= most:
            raise errors.launch_shape(what, value, f"{axis} is {d}, not in [{least}, {most}]")
    if grid:
        return dims  # type: ignore[return-value]
    threads = dims[0] * dims[1] * dims[2]
    if threads > _MAX_THREADS:
        raise errors.launch_shape(what, value, f"{threads} threads; a block has at most 1024")
    if declared is not None and dims != declared:
        raise errors.block(dims, declared)  # type: ignore[arg-type]
    if bound is not None and threads > bound[0] * bound[1] * bound[2]:
        raise errors.launch_shape(
            what, value, f"{threads} threads, but the kernel is compiled for at most {bound}"
        )
    return dims  # type: ignore[return-value]


def launch_count(errors: ArgumentErrors, what: str, value: Any) -> int:
    """A non-negative integer keyword (`smem=`)."""
    if not _integer(value):
        raise errors.launch_shape_type(what, value)
    if value < 0:
        raise errors.launch_shape(what, value, "a number of bytes is not negative")
    return int(value)


def _keyword_code(
    code: _Source,
    block: tuple[int, int, int] | None,
    bound: tuple[int, int, int] | None,
    delegate: bool = False,
) -> None:
    """The launch keywords, checked at the call (the launch reads `grid`, `block` and
    `smem` as checked here). A delegating launch function checks `block` within CUDA's
    limits only, and against its variant's block once it knows the variant."""
    code("if grid is not None:")
    code("    grid = _dims(_err, 'grid', grid)")
    code("if block is not None:")
    if delegate:
        code("    _dims(_err, 'block', block)")
    else:
        code(f"    block = _dims(_err, 'block', block, {block!r}, {bound!r})")
    code("if smem is not None:")
    code("    smem = _count(_err, 'smem', smem)")


def written_params(
    signature: KernelSignature, then: tuple[KernelSignature, LaunchInfo] | None = None
) -> dict[str, str]:
    """The caller's tensors the kernel (or its tail) writes: their access, "write" or
    "atomic" (cutec.ir.param_access)."""
    out: dict[str, str] = {}
    for sig in (signature, *([then[0]] if then else [])):
        for p in sig.params:
            if isinstance(p, TensorParam) and p.access != READ:
                out[p.name] = WRITE if out.get(p.name) == WRITE else p.access
    return out


def allowed_aliases(errors: ArgumentErrors, value: Any, outputs: tuple[str, ...]) -> frozenset[str]:
    """`allow_alias=`: True (every output), False, an output's name, or a tuple of them:
    the outputs that may share memory with the launch's other arrays."""
    if value is True or value is False:
        return frozenset(outputs if value else ())
    names = (value,) if isinstance(value, str) else value
    try:
        allowed = frozenset(names)
    except TypeError:
        raise errors.allow_alias(value, list(outputs)) from None
    if not allowed <= set(outputs):
        raise errors.allow_alias(value, list(outputs))
    return allowed


Array = tuple[int, tuple[int, ...], tuple[int, ...], int]  # base, extents, strides, bytes


def check_overlap(
    errors: ArgumentErrors, allowed: frozenset[str] | None, out: str, other: str, a: Array,
    b: Array,
) -> None:  # fmt: skip
    """Output `out` (array `a`), whose span meets `other`'s (`b`): an error where they may
    share memory, unless allow_alias names either."""
    if allowed and (out in allowed or other in allowed):
        return
    if overlap.overlaps(a, b):
        raise errors.overlap(out, other)


def _array_code(p: TensorParam, a: str) -> str:
    """The launch function's `Array` of tensor `p`."""
    n = len(p.flat)
    extents = "".join(f"e_{a}_{i}, " for i in range(n))
    strides = "".join(f"t_{a}_{i}, " for i in range(n))
    return f"(p_{a}, ({extents}), ({strides}), {DTYPES[p.element].bits // 8})"


def _output_code(
    code: _Source, signature: KernelSignature, local: dict[str, str], outputs: dict[str, str]
) -> dict[str, str]:
    """Once per shape: each plainly written output's layout injective, `_live` (some
    output has an element), and the span in bytes (`w_<a>`) of each tensor an overlap
    test reads; returns those spans' locals by parameter."""
    shaped = [p for p in signature.params if isinstance(p, TensorParam) and p.shape is not None]
    live = []
    for p in shaped:
        a = local[p.name]
        if p.name not in outputs:
            continue
        live.append(f"z_{a}")
        if outputs[p.name] == WRITE:  # atomics may share an element between coordinates
            n = len(p.flat)
            extents = "".join(f"e_{a}_{i}, " for i in range(n))
            strides = "".join(f"t_{a}_{i}, " for i in range(n))
            code(f"if z_{a} and not _injective(({extents}), ({strides})):")
            code(f"    raise _err.not_injective({p.name!r}, ({extents}), ({strides}))")
    # An output without a shape (a bare pointer) may hold anything: the launch goes on.
    bare = any(p.name in outputs and p.shape is None for p in signature.params
               if isinstance(p, TensorParam))  # fmt: skip
    code(f"_live = {' or '.join(live) if live and not bare else 'True'}")
    spans: dict[str, str] = {}
    if not live or len(shaped) < 2:
        return spans
    for p in shaped:
        a = local[p.name]
        terms = "".join(f" + (e_{a}_{i} - 1) * t_{a}_{i}" for i in range(len(p.flat)))
        spans[p.name] = f"w_{a}"
        code(f"w_{a} = (1{terms}) * {DTYPES[p.element].bits // 8} if z_{a} else 0")
    return spans


def overlap_pairs(
    signature: KernelSignature, outputs: dict[str, str], spans: dict[str, str]
) -> list[tuple[TensorParam, TensorParam]]:
    """The (output, other tensor) pairs a launch tests for shared memory, each once."""
    shaped = [p for p in signature.params if isinstance(p, TensorParam) and p.name in spans]
    pairs = []
    for i, p in enumerate(shaped):
        for j, q in enumerate(shaped):
            if p.name in outputs and i != j and not (q.name in outputs and j < i):
                pairs.append((p, q))
    return pairs


def _overlap_code(
    code: _Source, signature: KernelSignature, local: dict[str, str], outputs: dict[str, str],
    spans: dict[str, str],
) -> None:  # fmt: skip
    """Per call: each output's bytes apart from every other tensor's, unless allowed.
    Spans that meet are looked at closely (`check_overlap`), others cost two compares."""
    code("if allow_alias is not None:")
    code("    allow_alias = _aliases(_err, allow_alias, _outputs)")
    for p, q in overlap_pairs(signature, outputs, spans):
        a, b = local[p.name], local[q.name]
        code(f"if p_{a} < p_{b} + w_{b} and p_{b} < p_{a} + w_{a}:")
        code(f"    _overlap(_err, allow_alias, {p.name!r}, {q.name!r}, {_array_code(p, a)}, "
             f"{_array_code(q, b)})")  # fmt: skip


def _torch_inference_mode() -> Callable[[], bool]:
    """torch.is_inference_mode_enabled, if torch is imported (never imported for it)."""
    torch = sys.modules.get("torch")
    found = getattr(torch, "is_inference_mode_enabled", None)
    return found if found is not None else (lambda: False)


def _uses_torch(signature: KernelSignature) -> bool:
    return any(isinstance(p, TensorParam) for p in signature.params)


def _torch_tensor_type() -> Any:
    """torch.Tensor if torch is already imported (never imported just for this)."""
    torch = sys.modules.get("torch")
    return getattr(torch, "Tensor", None)


def _unpack_code(code: _Source, p: TensorParam, a: str, shape: str, strides: str) -> None:
    """`e_<a>_<i>` extents and `t_<a>_<i>` strides by unpacking (a wrong rank raises)."""
    if p.shape is None:
        return
    n = len(p.flat)
    extents = "".join(f"e_{a}_{i}, " for i in range(n))
    steps = "".join(f"t_{a}_{i}, " for i in range(n))
    code("try:")
    code(f"    {extents}= {shape}")
    code(f"    {steps}= {strides}")
    code("except ValueError:")
    code(f"    raise _err.rank({p.name!r}, {p.shape!r}, tuple({shape})) from None")


def _tensor_code(
    code: _Source, env: dict[str, Any], p: TensorParam, a: str, first: bool, first_name: str,
    written: bool,
) -> None:  # fmt: skip
    """A device array's fields: `p_<a>` base, `d_<a>` GPU, its extents and strides; an
    array the kernel writes (`written`) must be writable."""
    name = p.name
    code(f"if type({a}) is _Tensor:")
    code.depth += 1
    code(f"if {a}.dtype is not _dt_{a}:")
    code(f"    raise _err.dtype({name!r}, {p.element!r}, str({a}.dtype)[6:])")
    code(f"p_{a} = {a}.data_ptr()")
    code(f"d_{a} = {a}.get_device()")
    code(f"if d_{a} < 0:")
    code(f"    raise _err.host({name!r}, 'a CPU torch tensor')")
    if written:  # torch's one tensor it refuses to write (arrays.torch_readonly)
        code(f"if {a}.is_inference() and not _inference_mode():")
        code(f"    raise _err.readonly({name!r}, 'torch')")
    _unpack_code(code, p, a, f"{a}.shape", f"{a}.stride()")
    code("_torch = True")
    code.depth -= 1
    code("else:")
    code.depth += 1
    _view_code(code, p, a, on_gpu=True, written=written)
    code(f"d_{a} = v_{a}.device")
    code(f"_torch = _torch or v_{a}.kind == 'torch'")
    code.depth -= 1
    env[f"_dt_{a}"] = _torch_dtype(p.element)
    if first:
        code(f"_dev = d_{a}")
    else:
        code(f"if d_{a} != _dev:")
        code(f"    raise _err.device({name!r}, d_{a}, {first_name!r}, _dev)")


def _host_tensor_code(code: _Source, p: TensorParam, a: str, written: bool) -> None:
    """A host array's fields (device="cpu"); `_arrays[name]` the numpy array to run on,
    within the memory it comes from."""
    _view_code(code, p, a, on_gpu=False, written=written)
    code(f"_arrays[{p.name!r}] = _h = _host_array(v_{a})")
    code("if _h is None:")
    code(f"    raise _err.not_contiguous({p.name!r}, v_{a}.strides)")
    code("_o = _overrun(_h)")
    code("if _o is not None:")
    code(f"    raise _err.beyond_buffer({p.name!r}, *_o)")


def _view_code(code: _Source, p: TensorParam, a: str, on_gpu: bool, written: bool) -> None:
    """Any array through `arrays.view_of`: `v_<a>`, its base `p_<a>`, extents and
    strides; its memory must be the GPU's (`on_gpu`) or the host's, and writable where
    the kernel writes it."""
    name = p.name
    code(f"v_{a} = _view({a})")
    code(f"if v_{a} is None:")
    code(f"    raise _err.not_array({name!r}, {a})")
    # No array library has a tf32 type: a tf32 tensor is an f32 array (tf32 is stored as
    # float32; the tensor cores read its top 19 bits).
    accepted = (p.element, "f32") if p.element == "tf32" else (p.element,)
    code(f"if v_{a}.dtype not in {accepted!r}:")
    code(f"    raise _err.dtype({name!r}, {p.element!r}, v_{a}.dtype)")
    if on_gpu:
        code(f"if v_{a}.device is None:")
        code(f"    raise _err.host({name!r}, v_{a}.kind)")
    else:
        code(f"if v_{a}.device is not None:")
        code(f"    raise _err.on_gpu({name!r}, v_{a}.kind)")
    if written:
        code(f"if v_{a}.readonly:")
        code(f"    raise _err.readonly({name!r}, v_{a}.kind)")
    code(f"p_{a} = v_{a}.ptr")
    _unpack_code(code, p, a, f"v_{a}.shape", f"v_{a}.strides")


def _layout_code(
    bind: _Source,
    check: _Source,
    p: TensorParam,
    a: str,
    names: dict[str, str],
    first_use: dict[str, str],
    facts: dict[str, int],
    deferred: list[tuple[Any, ...]],
    origins: dict[str, str],
) -> None:
    """A tensor's run-time names (`bind`) and the checks of its shape and strides."""
    name = p.name
    flat = p.flat
    # An empty array's strides are never used: numpy reports 0 for them, any value may
    # come (z_<a>: the array has an element).
    check(f"z_{a} = {' and '.join(f'e_{a}_{i}' for i in range(len(flat))) or 'True'}")
    for i, (extent, _) in enumerate(flat):
        _leaf_code(
            bind, check, name, i, extent, f"e_{a}_{i}", "extent", names, first_use, facts,
            deferred, origins,
        )  # fmt: skip
    for i, (_, stride) in enumerate(flat):
        # A stride of a mode of extent 1 is never used: frameworks report any value there.
        _leaf_code(
            bind, check, name, i, stride, f"t_{a}_{i}", "stride", names, first_use, facts,
            deferred, origins, guard=f"e_{a}_{i} != 1 and z_{a}", nonempty=f"z_{a}",
        )  # fmt: skip


def _leaf_code(
    bind: _Source,
    code: _Source,
    param: str,
    mode: int,
    declared: Any,
    got: str,
    what: str,
    names: dict[str, str],
    first_use: dict[str, str],
    facts: dict[str, int],
    deferred: list[tuple[Any, ...]],
    origins: dict[str, str],
    guard: str | None = None,
    nonempty: str | None = None,
) -> None:
    """The check of one extent or stride; a run-time name's first use binds it, and its
    `assume` facts are checked there (for a stride, where its array has an element:
    `nonempty`; torch gives an empty tensor strides such as (1, 1))."""
    if isinstance(declared, int):
        cond = f"{got} != {declared}" + (f" and {guard}" if guard else "")
        code(f"if {cond}:")
        code(f"    raise _err.{what}({param!r}, {mode}, {declared}, {got})")
        return
    if not declared.isidentifier():
        # An expression of run-time names (a default compact stride): checked once all
        # names are bound.
        deferred.append((param, mode, what, declared, got, guard))
        return
    if declared in names:
        cond = f"{got} != {names[declared]}" + (f" and {guard}" if guard else "")
        code(f"if {cond}:")
        code(
            f"    raise _err.mismatch({param!r}, {declared!r}, {got}, "
            f"{first_use[declared]!r}, {names[declared]})"
        )
        return
    var = f"n_{declared}"
    names[declared] = var
    first_use[declared] = param
    bind(f"{var} = {got}")
    origins[var] = got
    used = f" and {nonempty}" if nonempty else ""
    if what == "stride":
        code(f"if {var} < 0{used}:")
        code(f"    raise _err.negative_stride({param!r}, {mode}, {var})")
    d = facts.get(declared, 1)
    if d > 1:
        code(f"if {var} % {d}{used}:")
        code(f"    raise _err.fact({param!r}, {declared!r}, {var}, {d})")


def _offset_checks(code: _Source, signature: KernelSignature, local: dict[str, str]) -> None:
    """Each tensor's largest element offset below 2^31 (the kernel's 32-bit offsets)."""
    for p in signature.params:
        if not isinstance(p, TensorParam) or p.shape is None:
            continue
        a = local[p.name]
        terms = [f"(e_{a}_{i} - 1) * t_{a}_{i}" for i in range(len(p.flat))]
        code(f"_largest = {' + '.join(terms) if terms else '0'}")
        code("if _largest >= 2147483648:")
        code(f"    raise _err.too_large({p.name!r}, _largest)")


def _torch_dtype(element: str) -> Any:
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    if element == "tf32":
        element = "f32"  # a tf32 tensor is a float32 one (see _view_code)
    for torch_name, cutec_name in arrays.TORCH_DTYPES.items():
        if cutec_name == element:
            return getattr(torch, torch_name, None)
    return None
