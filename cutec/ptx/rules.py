"""Emission rules of the straight-line ops: arith, gpu, thread and return.

A rule is ``rule(ctx, op)``: it reads its operands' registers from the
`KernelEmitter` `ctx`, defines its results' registers and prints its
instructions. Most ops share one rule driven by a table of tables.py
(`BINARY`, `CAST` ...); an op with a shape of its own has a small function.
The structured control flow (scf) is control.py's.

Every op of the thread and gpu dialects has its rule here (docs/ptx.md has
the table of op → instruction). A vector value is N registers (regalloc.py):
`ctx.reg` is its brace list, `ctx.elements` its registers. ``thread.atom``
renders its atom's `PtxTemplate` through `render_template`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from cutec.atoms.copy import CopyAtomError
from cutec.atoms.ptx_template import Operand, PtxTemplate
from cutec.ir.attributes import FloatAttr
from cutec.ir.core import Operation, Value
from cutec.ir.dialects import arith, gpu, thread
from cutec.ir.dialects import math as math_ops
from cutec.ir.dialects.arith_fold import TF32_DROPPED_BITS, TF32_NAN_BITS
from cutec.ir.dialects.gpu import PointerType
from cutec.ir.dialects.thread import PACKED_WIDTH
from cutec.ir.dialects.thread_async import CP_ASYNC_BYTES
from cutec.ir.dialects.thread_wgmma import accumulates
from cutec.ir.rule_table import lookup
from cutec.ir.types import IndexType, IntegerType
from cutec.ir.value import BlockArgument, OpResult
from cutec.ptx.regalloc import packs
from cutec.ptx.tables import (
    BINARY,
    CAST,
    CMPF,
    CMPI,
    LN_2_F32,
    LOG2_E_F32,
    MATH,
    MATH_TYPES,
    ONLY,
    SHIFT,
    TERNARY,
    UNARY,
    PtxType,
    fill,
    fill_cast,
    float_immediate,
    ptx_type,
)
from cutec.target import AddressSpace, Feature

if TYPE_CHECKING:
    from cutec.ptx.emitter import KernelEmitter

Rule = Callable[["KernelEmitter", Operation], None]


def _row(table: Mapping[type, str], op: Operation) -> str:
    row = lookup(table, op)
    if row is None:
        raise KeyError(op.name)
    return row


def _instruction(ctx: KernelEmitter, op: Operation, table: Mapping[type, str]) -> str:
    """The op's template filled with its result's suffix (a located error if it has none)."""
    t = ctx.ptype(op.results[0], op)
    ins = fill(_row(table, op), t)
    allowed = ONLY.get(type(op))
    if ins is None or (allowed is not None and t.f not in allowed and t.s not in allowed):
        raise ctx.error(op)
    return ins


# --------------------------------------------------------------------------- arith


def _nary(table: Mapping[type, str]) -> Rule:
    """``<ins> %d, %a[, %b[, %c]];`` from `table`."""

    def rule(ctx: KernelEmitter, op: Operation) -> None:
        ins = _instruction(ctx, op, table)
        args = ", ".join(ctx.reg(v) for v in op.operands)
        ctx.emit(f"{ins} {ctx.define(op.results[0], op)}, {args};")

    return rule


def _shift(ctx: KernelEmitter, op: Operation) -> None:
    ins = _instruction(ctx, op, SHIFT)
    value, amount = op.operands
    a = ctx.ptype(amount, op)
    n = ctx.reg(amount)
    if a.reg != "b32":  # the amount is a u32 register
        n32 = ctx.temp("b32")
        ctx.emit(f"cvt.u32.{a.u} {n32}, {n};")
        n = n32
    ctx.emit(f"{ins} {ctx.define(op.results[0], op)}, {ctx.reg(value)}, {n};")


def _constant(ctx: KernelEmitter, op: Operation) -> None:
    assert isinstance(op, arith.ConstantOp)
    t = ctx.ptype(op.result, op)
    value = op.value
    if isinstance(value, FloatAttr):
        text = float_immediate(value.value, t)
    elif t.reg == "pred":
        text = str(value.value & 1)
    else:
        text = str(value.value)
    if text is None:
        raise ctx.error(op, f"no immediate of {t.ir}")
    ctx.emit(f"mov.{t.reg} {ctx.define(op.result, op)}, {text};")


def _cmp(table: Mapping[str, str]) -> Rule:
    def rule(ctx: KernelEmitter, op: Operation) -> None:
        assert isinstance(op, arith.CmpIOp | arith.CmpFOp)
        t = ctx.ptype(op.lhs, op)
        pred = op.predicate.value
        a, b = ctx.reg(op.lhs), ctx.reg(op.rhs)
        if t.reg == "pred" and pred in ("eq", "ne"):  # setp takes no predicates
            d = ctx.define(op.result, op)
            ctx.emit(f"xor.pred {d}, {a}, {b};")
            if pred == "eq":
                ctx.emit(f"not.pred {d}, {d};")
            return
        cmp = fill(table[pred], t)
        if cmp is None:
            raise ctx.error(op)
        ctx.emit(f"setp.{cmp} {ctx.define(op.result, op)}, {a}, {b};")

    return rule


def _select(ctx: KernelEmitter, op: Operation) -> None:
    assert isinstance(op, arith.SelectOp)
    t = ctx.ptype(op.result, op)
    c, a, b = (ctx.reg(v) for v in op.operands)
    if ctx.ptype(op.cond, op).reg != "pred":
        raise ctx.error(op, "the condition must be a scalar i1")
    d = ctx.define(op.result, op)
    if t.reg == "pred":  # selp takes no predicates
        ctx.emit(f"@{c} mov.pred {d}, {a};")
        ctx.emit(f"@!{c} mov.pred {d}, {b};")
    else:
        ctx.emit(f"selp.{t.f or t.reg} {d}, {a}, {b}, {c};")


def _cast(ctx: KernelEmitter, op: Operation) -> None:
    a, d = ctx.ptype(op.operands[0], op), ctx.ptype(op.results[0], op)
    src = ctx.reg(op.operands[0])
    if a.reg == "pred" or d.reg == "pred":
        _cast_pred(ctx, op, a, d, src)
        return
    ints = a.f is None and d.f is None and a.s is not None and d.s is not None
    if (ints and a.nbytes == d.nbytes) or (isinstance(op, arith.BitcastOp) and a.reg == d.reg):
        ctx.emit(f"mov.{d.reg} {ctx.define(op.results[0], op)}, {src};")
        return
    if isinstance(op, arith.ExtFOp) and a.ir == "bf16" and ctx.target.sm < 90:
        # cvt.f32.bf16 needs sm_90: a bf16 is the top half of the f32 it widens to.
        bits = ctx.temp("b32")
        ctx.emit(f"cvt.u32.u16 {bits}, {src};")
        ctx.emit(f"shl.b32 {bits}, {bits}, 16;")
        ctx.emit(f"mov.b32 {ctx.define(op.results[0], op)}, {bits};")
        return
    if isinstance(op, arith.TruncFOp) and d.ir == "tf32" and a.ir == "f32":
        _round_tf32(ctx, op, src)
        return
    ins = fill_cast(_row(CAST, op), d, a)
    if ins is None or (isinstance(op, arith.BitcastOp) and a.nbytes != d.nbytes):
        raise ctx.error(op)
    ctx.emit(f"{ins} {ctx.define(op.results[0], op)}, {src};")


def _round_tf32(ctx: KernelEmitter, op: Operation, src: str) -> None:
    """f32 -> tf32 to nearest even, the low 13 bits cleared (arith_fold.tf32_words).
    sm_90 has ``cvt.rn.tf32.f32`` (PTX ISA 7.8); sm_80 only ``cvt.rna`` (ties away), so
    there the bits are rounded by hand, ``(u + 0xFFF + lsb) & ~0x1FFF``, a NaN made
    0x7FFFE000."""
    d = ctx.define(op.results[0], op)
    if ctx.target.sm >= 90:
        ctx.emit(f"cvt.rn.tf32.f32 {d}, {src};")
        return
    bits, lsb, nan = ctx.temp("b32"), ctx.temp("b32"), ctx.temp("pred")
    half = (1 << (TF32_DROPPED_BITS - 1)) - 1
    ctx.emit(f"mov.b32 {bits}, {src};")
    ctx.emit(f"bfe.u32 {lsb}, {bits}, {TF32_DROPPED_BITS}, 1;")
    ctx.emit(f"add.u32 {bits}, {bits}, {half};")
    ctx.emit(f"add.u32 {bits}, {bits}, {lsb};")
    ctx.emit(f"and.b32 {bits}, {bits}, {-(1 << TF32_DROPPED_BITS) & 0xFFFFFFFF};")
    ctx.emit(f"testp.notanumber.f32 {nan}, {src};")
    ctx.emit(f"selp.b32 {d}, {TF32_NAN_BITS}, {bits}, {nan};")


def _cast_pred(ctx: KernelEmitter, op: Operation, a: PtxType, d: PtxType, src: str) -> None:
    """Casts from and to i1: ``selp`` out of a predicate, ``setp`` on the low bit into one."""
    widen = (arith.ExtUIOp, arith.ExtSIOp, arith.IndexCastOp, arith.IndexCastUIOp)
    narrow = (arith.TruncIOp, arith.IndexCastOp, arith.IndexCastUIOp)
    if a.reg == "pred" and d.s is not None and isinstance(op, widen):
        true = "1" if isinstance(op, arith.ExtUIOp | arith.IndexCastUIOp) else "-1"
        ctx.emit(f"selp.{d.s} {ctx.define(op.results[0], op)}, {true}, 0, {src};")
    elif d.reg == "pred" and a.s is not None and isinstance(op, narrow):
        low = ctx.temp(a.reg)
        ctx.emit(f"and.{a.b} {low}, {src}, 1;")
        ctx.emit(f"setp.ne.{a.b} {ctx.define(op.results[0], op)}, {low}, 0;")
    else:
        raise ctx.error(op)


# --------------------------------------------------------------------------- math


def _math(ctx: KernelEmitter, op: Operation) -> None:
    """``sqrt.rn``, ``rsqrt.approx``, ``ex2.approx``, ``lg2.approx`` (tables.MATH); exp
    and log scale by log2(e) before ``ex2`` and by ln(2) after ``lg2``, as CUDA's
    ``__expf``/``__logf``. Another float type is a located error."""
    t = ctx.ptype(op.results[0], op)
    allowed = MATH_TYPES[type(op)]
    if t.f not in allowed:
        raise ctx.error(op, f"{op.name} is emitted for {' and '.join(sorted(allowed))} only")
    ins = fill(MATH[type(op)], t)
    assert ins is not None
    x, d = ctx.reg(op.operands[0]), ctx.define(op.results[0], op)
    if isinstance(op, math_ops.ExpOp):
        scaled = ctx.temp(t.reg)
        ctx.emit(f"mul.rn.f32 {scaled}, {x}, {LOG2_E_F32};")
        ctx.emit(f"{ins} {d}, {scaled};")
    elif isinstance(op, math_ops.LogOp):
        log2 = ctx.temp(t.reg)
        ctx.emit(f"{ins} {log2}, {x};")
        ctx.emit(f"mul.rn.f32 {d}, {log2}, {LN_2_F32};")
    else:
        ctx.emit(f"{ins} {d}, {x};")


# --------------------------------------------------------------------------- gpu


def _special_register(name: str, feature: Feature | None = None) -> Rule:
    """``mov.u32 %r, %<name>[.x];`` (every special register is u32), widened to the
    index result; a register of a feature the target lacks (clusters) is an error."""

    def rule(ctx: KernelEmitter, op: Operation) -> None:
        if feature is not None and not ctx.target.has(feature):
            raise ctx.error(op, f"%{name} needs {feature.value}, which {ctx.target} lacks")
        dim = op.attributes.get("dim")
        r = ctx.temp("b32")
        ctx.emit(f"mov.u32 {r}, %{name}{'' if dim is None else '.' + dim.value};")
        _widen(ctx, op, r)

    return rule


def _widen(ctx: KernelEmitter, op: Operation, r: str) -> None:
    """The u32 `r` into `op`'s one result (an index, or an i32)."""
    t = ctx.ptype(op.results[0], op)
    if t.reg == "b32":
        ctx.emit(f"mov.b32 {ctx.define(op.results[0], op)}, {r};")
    elif t.reg == "b64" and t.s is not None:
        ctx.emit(f"cvt.u64.u32 {ctx.define(op.results[0], op)}, {r};")
    else:
        raise ctx.error(op, "special registers are read as index or i32")


def _warp_idx(ctx: KernelEmitter, op: Operation) -> None:
    """``%tid.x / 32`` broadcast from lane 0 (CuTe's canonical_warp_idx_sync), never
    ``%warpid``: ``shfl.sync.idx.b32 %w, %w, 0, 0x1f, 0xffffffff;``."""
    tid, warp, uniform = ctx.temp("b32"), ctx.temp("b32"), ctx.temp("b32")
    ctx.emit(f"mov.u32 {tid}, %tid.x;")
    ctx.emit(f"shr.u32 {warp}, {tid}, 5;")
    ctx.emit(f"shfl.sync.idx.b32 {uniform}, {warp}, 0, 0x1f, 0xffffffff;")
    _widen(ctx, op, uniform)


def _barrier(ctx: KernelEmitter, op: Operation) -> None:
    ctx.emit("bar.sync 0;")


# --------------------------------------------------------------------------- thread

# State spaces ld and st may name; a generic address is read by ld without one.
_MEMORY_SPACES = frozenset(
    {AddressSpace.GLOBAL, AddressSpace.SHARED, AddressSpace.SHARED_CLUSTER, AddressSpace.LOCAL}
)


def _space(ctx: KernelEmitter, op: Operation, ptr: Value) -> str:
    """``.global`` for ``ld.global`` ...; "" for a generic pointer (plain ``ld``)."""
    t = ptr.type
    assert isinstance(t, PointerType)
    if t.space is AddressSpace.GENERIC:
        return ""
    if t.space not in _MEMORY_SPACES:
        raise ctx.error(op, f"no ld/st of {t.space.value} memory")
    if t.space is AddressSpace.SHARED_CLUSTER and not ctx.target.has(Feature.CLUSTERS):
        raise ctx.error(op, "shared::cluster memory needs thread-block clusters")
    return "." + t.space.value


def _ptr_add(ctx: KernelEmitter, op: Operation) -> None:
    """``p + i * sizeof(element)``: ``mad.wide.s32`` from an i32 offset, else ``mad.lo.s64``."""
    assert isinstance(op, thread.PtrAddOp)
    ptr_type = op.ptr.type
    assert isinstance(ptr_type, PointerType)
    element = ptx_type(ptr_type.element)
    if element is None:
        raise ctx.error(op, f"no PTX form of {ptr_type.element}")
    offset = op.offset.type
    if offset == IntegerType(32):
        ins = "mad.wide.s32"
    elif isinstance(offset, IndexType) or offset == IntegerType(64):
        ins = "mad.lo.s64"
    else:
        raise ctx.error(op, "offsets are i32, i64 or index")
    d = ctx.define(op.result, op)
    ctx.emit(f"{ins} {d}, {ctx.reg(op.offset)}, {element.nbytes}, {ctx.reg(op.ptr)};")


def _access(ctx: KernelEmitter, op: Operation, value: Value) -> tuple[str, PtxType]:
    """The ``.v2``/``.v4`` part ("" for a scalar) and the element type of an access."""
    t = ctx.element_ptype(value, op)
    n = ctx.width(value)
    if n == 1:
        return "", t
    if t.reg == "pred":
        raise ctx.error(op, "no vector access of i1 (each is a byte in memory)")
    return f".v{n}", t


def _pairs(elements: Sequence[str]) -> list[tuple[str, str]]:
    """Consecutive elements two by two: (e0, e1), (e2, e3), ..."""
    return list(zip(elements[::2], elements[1::2], strict=True))


def _predicated(pred: str | None) -> str:
    return "" if pred is None else f"@{pred} "


def _emit_load(
    ctx: KernelEmitter, op: Operation, ptr: Value, result: Value, pred: str | None = None
) -> None:
    """``[@%p] ld[.relaxed.cta].<space>[.vN].<type> %d, [%a];`` into `result`'s registers
    (defined before). A shared load marked ``{ordered}`` (order-shared-loads) is a relaxed
    load at CTA scope: the same value, and ptxas keeps it where it is among the others."""
    space = _space(ctx, op, ptr)
    if "ordered" in op.attributes and space == ".shared":
        space = ".relaxed.cta.shared"
    vec, t = _access(ctx, op, result)
    addr, guard = ctx.reg(ptr), _predicated(pred)
    if ctx.width(result) == PACKED_WIDTH:
        # 8 16-bit elements as 4 words of pairs, element 0 in the low half of word 0
        # (little-endian, as memory holds them). Under a predicate the words start as
        # the result's registers (load_if's default), so a false predicate keeps them.
        pairs = _pairs(ctx.elements(result))
        words = [ctx.temp("b32") for _ in pairs]
        if pred is not None:
            for w, (lo, hi) in zip(words, pairs, strict=True):
                ctx.emit(f"mov.b32 {w}, {{{lo}, {hi}}};")
        ctx.emit(f"{guard}ld{space}.v4.b32 {{{', '.join(words)}}}, [{addr}];")
        for w, (lo, hi) in zip(words, pairs, strict=True):
            ctx.emit(f"mov.b32 {{{lo}, {hi}}}, {w};")
        return
    if t.reg == "pred":  # a byte in memory
        byte = ctx.temp("b16")
        ctx.emit(f"{guard}ld{space}.u8 {byte}, [{addr}];")
        ctx.emit(f"{guard}setp.ne.u16 {ctx.reg(result)}, {byte}, 0;")
        return
    ctx.emit(f"{guard}ld{space}{vec}.{t.mem} {ctx.reg(result)}, [{addr}];")


def _emit_store(
    ctx: KernelEmitter, op: Operation, value: Value, ptr: Value, pred: str | None = None
) -> None:
    """``[@%p] st.<space>[.vN].<type> [%a], %v;``."""
    space = _space(ctx, op, ptr)
    vec, t = _access(ctx, op, value)
    text = ctx.reg(value)
    if ctx.width(value) == PACKED_WIDTH:  # 4 words of pairs (see _emit_load)
        words = []
        for lo, hi in _pairs(ctx.elements(value)):
            words.append(ctx.temp("b32"))
            ctx.emit(f"mov.b32 {words[-1]}, {{{lo}, {hi}}};")
        ctx.emit(f"{_predicated(pred)}st{space}.v4.b32 [{ctx.reg(ptr)}], {{{', '.join(words)}}};")
        return
    if t.reg == "pred":
        byte = ctx.temp("b16")
        ctx.emit(f"selp.u16 {byte}, 1, 0, {text};")
        text = byte
    ctx.emit(f"{_predicated(pred)}st{space}{vec}.{t.mem} [{ctx.reg(ptr)}], {text};")


def _load(ctx: KernelEmitter, op: Operation) -> None:
    assert isinstance(op, thread.LoadOp)
    _access(ctx, op, op.result)  # a located error before any register is made
    ctx.define(op.result, op)
    _emit_load(ctx, op, op.ptr, op.result)


def _store(ctx: KernelEmitter, op: Operation) -> None:
    assert isinstance(op, thread.StoreOp)
    _emit_store(ctx, op, op.value, op.ptr)


def _condition(ctx: KernelEmitter, op: Operation, pred: Value) -> str:
    if ctx.ptype(pred, op).reg != "pred":
        raise ctx.error(op, "the predicate must be a scalar i1")
    return ctx.reg(pred)


def _load_if(ctx: KernelEmitter, op: Operation) -> None:
    """``mov`` of the default into the result's registers, then ``@%p ld``."""
    assert isinstance(op, thread.LoadIfOp)
    p = _condition(ctx, op, op.pred)
    _, t = _access(ctx, op, op.result)
    ctx.define(op.result, op)
    for d, v in zip(ctx.elements(op.result), ctx.elements(op.default), strict=True):
        ctx.emit(f"mov.{t.reg} {d}, {v};")
    _emit_load(ctx, op, op.ptr, op.result, p)


def _store_if(ctx: KernelEmitter, op: Operation) -> None:
    """``@%p st``."""
    assert isinstance(op, thread.StoreIfOp)
    _emit_store(ctx, op, op.value, op.ptr, _condition(ctx, op, op.pred))


def _extract(ctx: KernelEmitter, op: Operation) -> None:
    """No instruction: the result is the vector's element register `pos`."""
    assert isinstance(op, thread.ExtractOp)
    ctx.alias(op.result, ctx.elements(op.vector)[op.pos.value])


def _from_elements(ctx: KernelEmitter, op: Operation) -> None:
    """No instruction: the vector lives in its operands' registers."""
    assert isinstance(op, thread.FromElementsOp)
    ctx.element_ptype(op.result, op)  # a located error for a vector PTX cannot hold
    ctx.define_elements(op.result, [ctx.reg(v) for v in op.elements])


def _cp_async(ctx: KernelEmitter, op: Operation) -> None:
    """``cp.async.<ca|cg>.shared.global [%d], [%s], <bytes>[, %src_size];``."""
    assert isinstance(op, thread.CpAsyncOp)
    n = op.bytes.value
    if n not in CP_ASYNC_BYTES.get(op.cache_op, ()):
        raise ctx.error(op, f"cp.async.{op.cache_op} copies no {n} bytes")
    tail = "" if op.src_size is None else f", {ctx.reg(op.src_size)}"
    dst, src = ctx.reg(op.dst), ctx.reg(op.src)
    ctx.emit(f"cp.async.{op.cache_op}.shared.global [{dst}], [{src}], {n}{tail};")


def _cp_async_commit(ctx: KernelEmitter, op: Operation) -> None:
    ctx.emit("cp.async.commit_group;")


def _cp_async_wait(ctx: KernelEmitter, op: Operation) -> None:
    assert isinstance(op, thread.CpAsyncWaitOp)
    ctx.emit(f"cp.async.wait_group {op.pending.value};")


# --------------------------------------------------------------------------- addresses

# cvta's state spaces: the PTX ISA version and target feature each needs (PTX ISA, cvta).
_CVTA_NEEDS: dict[AddressSpace, tuple[tuple[int, int], Feature | None]] = {
    AddressSpace.GLOBAL: ((6, 0), None),
    AddressSpace.SHARED: ((6, 0), None),
    AddressSpace.LOCAL: ((6, 0), None),
    AddressSpace.PARAM: ((7, 7), None),
    AddressSpace.SHARED_CLUSTER: ((7, 8), Feature.CLUSTERS),
}


def _cvta(ctx: KernelEmitter, op: Operation) -> None:
    """``cvta.<space>.u64`` (to generic) or ``cvta.to.<space>.u64`` (from generic)."""
    assert isinstance(op, thread.CvtaOp)
    src, dst = op.ptr.type, op.result.type
    assert isinstance(src, PointerType) and isinstance(dst, PointerType)
    to_generic = dst.space is AddressSpace.GENERIC
    space = src.space if to_generic else dst.space
    needs = _CVTA_NEEDS.get(space)
    if needs is None:
        raise ctx.error(op, f"cvta has no {space.value} form")
    (major, minor), feature = needs
    if ctx.target.ptx_version < (major, minor) or (feature and not ctx.target.has(feature)):
        raise ctx.error(op, f"cvta of {space.value} addresses needs PTX {major}.{minor}")
    ins = f"cvta.{space.value}.u64" if to_generic else f"cvta.to.{space.value}.u64"
    ctx.emit(f"{ins} {ctx.define(op.result, op)}, {ctx.reg(op.ptr)};")


def _mapa(ctx: KernelEmitter, op: Operation) -> None:
    """``mapa.shared::cluster.u64 d, a, rank;`` (PTX ISA 7.8, sm_90): the shared::cluster
    address of shared address `a` in the cluster's CTA `rank` (a u32 operand), both
    addresses in 64-bit registers as every pointer is."""
    assert isinstance(op, thread.MapaOp)
    if not ctx.target.has(Feature.CLUSTERS):
        raise ctx.error(op, "mapa (another CTA's shared memory) needs thread-block clusters")
    rank = ctx.temp("b32")
    ctx.emit(f"cvt.u32.u64 {rank}, {ctx.reg(op.rank)};")
    d = ctx.define(op.result, op)
    ctx.emit(f"mapa.shared::cluster.u64 {d}, {ctx.reg(op.ptr)}, {rank};")


def _ptr_cast(ctx: KernelEmitter, op: Operation) -> None:
    """No instruction: the same address, in the same register."""
    assert isinstance(op, thread.PtrCastOp)
    ctx.alias(op.result, ctx.reg(op.ptr))


def shared_buffer(ctx: KernelEmitter, op: Operation, nbytes: int, align: int = 16) -> None:
    """A static shared buffer whose address is `op`'s one result (a shared pointer):
    ``.shared .align A .b8 k_smem_N[bytes];`` and ``mov.u64 %rd, k_smem_N;``, the
    buffer's 64-bit shared-window address, which ``ld.shared``, ``st.shared`` and
    ``cp.async`` take as it is."""
    ctx.emit(f"mov.u64 {ctx.define(op.results[0], op)}, {ctx.declare_shared(nbytes, align)};")


def _alloc_shared(ctx: KernelEmitter, op: Operation) -> None:
    assert isinstance(op, thread.AllocSharedOp)
    shared_buffer(ctx, op, op.bytes.value, op.align.value)


def _alloc_local(ctx: KernelEmitter, op: Operation) -> None:
    """``.local .align A .b8 k_local_N[bytes];`` and ``mov.u64 %rd, k_local_N;``."""
    assert isinstance(op, thread.AllocLocalOp)
    name = ctx.declare_local(op.bytes.value, op.align.value)
    ctx.emit(f"mov.u64 {ctx.define(op.result, op)}, {name};")


def _dynamic_shared(ctx: KernelEmitter, op: Operation) -> None:
    """``mov.u64 %rd, k_dynamic_smem;`` (the extern array of docs/abi.md)."""
    name = ctx.dynamic_shared()
    if name is None:
        raise ctx.error(op, "the kernel has no 'dynamic_smem' bytes")
    ctx.emit(f"mov.u64 {ctx.define(op.results[0], op)}, {name};")


def render_template(
    ctx: KernelEmitter,
    template: PtxTemplate,
    values: Mapping[str, Value | str | Sequence[Value | str]],
) -> None:
    """Print an atom's instruction: each template operand from the registers of its values.

    A `str` is taken as written (a register name or an immediate). Results must
    be defined (`ctx.define`) before, operands read, by the atom op's rule.
    """
    regs: dict[str, str | list[str]] = {}
    for name, v in values.items():
        if isinstance(v, str):
            regs[name] = v
        elif isinstance(v, Value):
            regs[name] = ctx.reg(v)
        else:
            regs[name] = [x if isinstance(x, str) else ctx.reg(x) for x in v]
    ctx.emit(template.render(regs))


# --------------------------------------------------------------------------- atoms


def _atom_operand(ctx: KernelEmitter, op: Operation, o: Operand, v: Value) -> tuple[str, str]:
    """The register template operand `o` reads for input value `v`, and its class.

    A shared or local pointer (a 64-bit window address) in a 32-bit address
    operand is narrowed (``cvt.u32.u64``: the windows are below 4 GiB); a vector
    in one register is packed (``mov.b32 %r, {%rs0, %rs1};``).
    """
    if o.kind == "addr":
        if o.ptx_type == "b32":
            r = ctx.temp("b32")
            ctx.emit(f"cvt.u32.u64 {r}, {ctx.reg(v)};")
            return r, "b32"
        return ctx.reg(v), "b64"
    if ctx.width(v) == 1:
        return ctx.reg(v), ctx.ptype(v, op).reg
    if packs(v):  # a fragment register: read where ldmatrix / mma wrote it
        return ctx.packed(v), "b32"
    c = _packed_class(ctx, op, v)
    packed = ctx.temp(c)
    if _byte_elements(ctx, op, v):
        _pack_bytes(ctx, packed, ctx.elements(v))
    else:
        ctx.emit(f"mov.{c} {packed}, {ctx.reg(v)};")
    return packed, c


def _byte_elements(ctx: KernelEmitter, op: Operation, v: Value) -> bool:
    """A vector of 8-bit elements: each in a 16-bit register, which mov cannot pack."""
    return ctx.element_ptype(v, op).nbytes == 1


def _pack_bytes(ctx: KernelEmitter, packed: str, elements: Sequence[str]) -> None:
    """Four bytes (the low bytes of 16-bit registers) into one b32, element 0 lowest:
    widen each, then prmt (selector nibble k picks byte k of the result; bytes 0-3
    are the first source's, 4-7 the second's)."""
    if len(elements) != 4:
        raise AssertionError(f"packing {len(elements)} bytes into 32 bits")
    wide = [ctx.temp("b32") for _ in elements]
    for w, e in zip(wide, elements, strict=True):
        ctx.emit(f"cvt.u32.u16 {w}, {e};")
    lo, hi = ctx.temp("b32"), ctx.temp("b32")
    ctx.emit(f"prmt.b32 {lo}, {wide[0]}, {wide[1]}, 0x0040;")  # bytes e0, e1, -, -
    ctx.emit(f"prmt.b32 {hi}, {wide[2]}, {wide[3]}, 0x0040;")  # bytes e2, e3, -, -
    ctx.emit(f"prmt.b32 {packed}, {lo}, {hi}, 0x5410;")  # e0, e1, e2, e3


def _unpack_bytes(ctx: KernelEmitter, packed: str, elements: Sequence[str]) -> None:
    """The inverse of `_pack_bytes`: byte i, sign-extended (as ld.s8 leaves it), into
    16-bit register i."""
    for i, e in enumerate(elements):
        w = ctx.temp("b32")
        ctx.emit(f"bfe.s32 {w}, {packed}, {8 * i}, 8;")
        ctx.emit(f"cvt.u16.u32 {e}, {w};")


def _bits(ctx: KernelEmitter, op: Operation, v: Value) -> int:
    return ctx.element_ptype(v, op).nbytes * 8 * ctx.width(v)


def _packed_class(ctx: KernelEmitter, op: Operation, v: Value) -> str:
    bits = _bits(ctx, op, v)
    if bits not in (32, 64):
        raise ctx.error(op, f"no register holds {v.type} packed")
    return f"b{bits}"


def _atom(ctx: KernelEmitter, op: Operation) -> None:
    """An atom's `PtxTemplate`, its operands filled from the op's values (`AtomSignature`).

    Results are defined first; an operand that is an input and an output (wgmma's
    accumulator) is moved into the result registers, which the instruction updates.
    A result pair of 16-bit elements is written packed (the emitter unpacks it where a
    use reads its elements); another result vector held in one register is unpacked
    after the instruction.
    """
    assert isinstance(op, thread.AtomOp)
    try:
        atom = op.library_atom()
        signature = op.signature()
    except CopyAtomError as e:
        raise ctx.error(op, str(e)) from None
    if not ctx.target.runs(atom.min_target):  # the target's PTX version covers its atoms
        raise ctx.error(op, f"atom {atom.name} needs {atom.min_target}")
    reads_in_place = accumulates(op)
    tied = _tied_results(op, signature) if reads_in_place else {}
    for r in op.outs:
        if r in tied:
            ctx.share(r, tied[r])
        elif not packs(r):
            ctx.define(r, op)
    regs: dict[str, list[str]] = {}
    unpack: list[tuple[str, Value]] = []
    outs = iter(op.outs)
    for o in signature.outputs:
        names = regs.setdefault(o.name, [])
        for _ in range(o.count):
            r = next(outs)
            if ctx.width(r) == 1:
                names.append(ctx.reg(r))
            elif packs(r):
                names.append(ctx.packed(r) if r in tied else ctx.define_packed(r))
            else:
                names.append(ctx.temp(_packed_class(ctx, op, r)))
                unpack.append((names[-1], r))
    args = iter(op.args)
    for o in signature.inputs:
        if o.name in regs and not reads_in_place:  # scale-d false: d is not read
            for _ in range(o.count):
                next(args)
            continue
        values = [_atom_operand(ctx, op, o, next(args)) for _ in range(o.count)]
        if o.name not in regs:
            regs[o.name] = [name for name, _ in values]
            continue
        for d, (s, c) in zip(regs[o.name], values, strict=True):  # updated in place
            if d != s:
                if ctx.in_wgmma_batch:
                    raise ctx.error(op, _MOVE_IN_BATCH.format(atom=atom.name))
                ctx.emit(f"mov.{c} {d}, {s};")
    render_template(ctx, signature.template, regs)
    for packed, r in unpack:
        if _byte_elements(ctx, op, r):
            _unpack_bytes(ctx, packed, ctx.elements(r))
        else:
            ctx.emit(f"mov.b{_bits(ctx, op, r)} {ctx.reg(r)}, {packed};")


_MOVE_IN_BATCH = (
    "{atom}: its accumulator's input lives on after it, so its registers would be copied "
    "between wgmma.fence and the wgmma, where ptxas serialises the batch; read the "
    "accumulator only after warpgroup_wait"
)


def _tied_results(op: thread.AtomOp, signature: thread.AtomSignature) -> dict[Value, Value]:
    """The results of an in-place operand (wgmma's accumulator) that take the registers
    of their input: each whose input dies here (this op is its one use, in the block
    that defines it, so no later or repeated execution reads it).

    Tying matters beyond the moves it saves: a mov into an accumulator register between
    wgmma.fence and the wait makes ptxas serialise the warpgroup's MMAs.
    """
    in_place = {o.name for o in signature.outputs} & {o.name for o in signature.inputs}
    if not in_place:
        return {}
    inputs: dict[str, list[Value]] = {}
    args = iter(op.args)
    for o in signature.inputs:
        inputs[o.name] = [next(args) for _ in range(o.count)]
    tied: dict[Value, Value] = {}
    outs = iter(op.outs)
    for o in signature.outputs:
        for i in range(o.count):
            r = next(outs)
            v = inputs[o.name][i] if o.name in in_place else None
            if v is not None and r.type == v.type and _dies_at(v, op):
                tied[r] = v
    return tied


def _dies_at(value: Value, op: Operation) -> bool:
    """Whether `op` is the one use of `value`, in the block that defines it."""
    if len(value.uses) != 1:
        return False
    if isinstance(value, OpResult):
        return value.op.parent is op.parent
    return isinstance(value, BlockArgument) and value.block is op.parent


RULES: dict[type[Operation], Rule] = {
    arith.ConstantOp: _constant,
    **{cls: _nary(BINARY) for cls in BINARY},
    **{cls: _nary(UNARY) for cls in UNARY},
    **{cls: _nary(TERNARY) for cls in TERNARY},
    **{cls: _shift for cls in SHIFT},
    arith.CmpIOp: _cmp(CMPI),
    arith.CmpFOp: _cmp(CMPF),
    arith.SelectOp: _select,
    **{cls: _cast for cls in CAST},
    **{cls: _math for cls in MATH},
    gpu.ThreadIdOp: _special_register("tid"),
    gpu.BlockIdOp: _special_register("ctaid"),
    gpu.BlockDimOp: _special_register("ntid"),
    gpu.GridDimOp: _special_register("nctaid"),
    gpu.LaneIdOp: _special_register("laneid"),
    gpu.ClusterIdOp: _special_register("clusterid", Feature.CLUSTERS),
    gpu.ClusterDimOp: _special_register("nclusterid", Feature.CLUSTERS),
    gpu.ClusterBlockIdOp: _special_register("cluster_ctaid", Feature.CLUSTERS),
    gpu.ClusterDimBlocksOp: _special_register("cluster_nctaid", Feature.CLUSTERS),
    gpu.ClusterBlockRankOp: _special_register("cluster_ctarank", Feature.CLUSTERS),
    gpu.WarpIdxOp: _warp_idx,
    gpu.BarrierOp: _barrier,
    thread.PtrAddOp: _ptr_add,
    thread.LoadOp: _load,
    thread.StoreOp: _store,
    thread.LoadIfOp: _load_if,
    thread.StoreIfOp: _store_if,
    thread.ExtractOp: _extract,
    thread.FromElementsOp: _from_elements,
    thread.CvtaOp: _cvta,
    thread.MapaOp: _mapa,
    thread.PtrCastOp: _ptr_cast,
    thread.AllocSharedOp: _alloc_shared,
    thread.AllocLocalOp: _alloc_local,
    thread.DynamicSharedOp: _dynamic_shared,
    thread.CpAsyncOp: _cp_async,
    thread.CpAsyncCommitOp: _cp_async_commit,
    thread.CpAsyncWaitOp: _cp_async_wait,
    thread.AtomOp: _atom,
}
