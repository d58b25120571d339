"""Warp code of the straight-line ops: arith, math, special registers, pointers,
loads and stores (bounds-checked), UniversalFMA / UniversalCopy atoms.

Each handler takes the generator (`cutec.cpu.codegen._Gen`) and one op; values
are `<32 x T>` lane vectors, one per component (docs/cpu-backend.md).
f16 and bf16 arithmetic is computed in f32 and rounded back after each op,
which is the correctly rounded result for + - * / (f32 has 24 >= 2*11 + 2 bits);
bf16's narrowing conversions and tf32's rounding are cutec/cpu/codegen_bf16.py's. A bf16 fma is
computed in f64 (the product is exact there) and rounded to bf16 from there,
as the interpreter does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cutec.atoms.family import Family
from cutec.cpu import checks
from cutec.cpu.cluster import cluster_dim
from cutec.cpu.codegen_bf16 import f32_to_bf16, f32_to_tf32, f64_to_bf16
from cutec.cpu.lanes import (
    BUF_ENTRY,
    ERR_DIVIDE,
    ERR_LOAD,
    ERR_MAPA,
    ERR_REMOTE,
    ERR_STORE,
    INFO_SHADOW,
    OFFSET_BITS,
    Loc,
    Unsupported,
    components,
    scalar_type,
    splat,
    suffix,
    vec,
)
from cutec.ir.attributes import FloatAttr, IntegerAttr
from cutec.ir.core import Operation, Value
from cutec.ir.dialects import thread
from cutec.ir.dialects.gpu import PointerType
from cutec.ir.traits import AddressSpace
from cutec.ir.types import bit_width, element_type, tf32

if TYPE_CHECKING:
    from cutec.cpu.codegen import _Gen

Handler = Callable[["_Gen", Any], None]
OP_HANDLERS: dict[str, Handler] = {}


def _on(*names: str) -> Callable[[Handler], Handler]:
    def mark(fn: Handler) -> Handler:
        for n in names:
            OP_HANDLERS[n] = fn
        return fn

    return mark


_INT_BIN = {
    "arith.addi": "add", "arith.subi": "sub", "arith.muli": "mul",
    "arith.andi": "and", "arith.ori": "or", "arith.xori": "xor",
}  # fmt: skip
_INT_MINMAX = {
    "arith.maxsi": "smax", "arith.minsi": "smin", "arith.maxui": "umax", "arith.minui": "umin",
}  # fmt: skip
_SHIFTS = {"arith.shli": "shl", "arith.shrsi": "ashr", "arith.shrui": "lshr"}
_DIVS = {
    "arith.divsi": "sdiv", "arith.divui": "udiv", "arith.remsi": "srem", "arith.remui": "urem",
    "arith.floordivsi": "sdiv", "arith.ceildivsi": "sdiv",
}  # fmt: skip
_FLOAT_BIN = {"arith.addf": "fadd", "arith.subf": "fsub", "arith.mulf": "fmul",
              "arith.divf": "fdiv"}  # fmt: skip
_FLOAT_INTRINSIC = {"arith.maximumf": "maximum", "arith.minimumf": "minimum"}
_MATH = {"math.exp": "exp", "math.exp2": "exp2", "math.log": "log", "math.log2": "log2",
         "math.sqrt": "sqrt", "math.rsqrt": "rsqrt"}  # fmt: skip
_INT_CASTS = {"arith.extsi", "arith.extui", "arith.trunci", "arith.index_cast",
              "arith.index_castui"}  # fmt: skip
_FLOAT_CASTS = {"arith.sitofp": "sitofp", "arith.uitofp": "uitofp", "arith.extf": "fpext",
                "arith.truncf": "fptrunc"}  # fmt: skip


def _ncomp(v: Value) -> int:
    return components(v.type)[1]


def _widen(g: _Gen, x: str, ty: str, to: str = "float") -> tuple[str, str]:
    """f16 / bf16 lanes widened (exactly) to `to` for arithmetic (others unchanged):
    (value, type)."""
    if ty in ("half", "bfloat"):
        return g.op(f"fpext {vec(ty)} {x} to {vec(to)}"), to
    return x, ty


def _narrow(g: _Gen, x: str, ty: str, to: str) -> str:
    """Lanes of float type `ty` rounded (to nearest even) to `to`."""
    if ty == to:
        return x
    if to == "bfloat":
        return f32_to_bf16(g, x) if ty == "float" else f64_to_bf16(g, x)
    return g.op(f"fptrunc {vec(ty)} {x} to {vec(to)}")


# ---------------------------------------------------------------------- constants, ids
@_on("arith.constant")
def _constant(g: _Gen, op: Operation) -> None:
    attr = op.attributes["value"]
    if not isinstance(attr, IntegerAttr | FloatAttr):
        raise Unsupported(f"constant {attr}")
    ty = scalar_type(op.results[0].type)
    g.alias(op.results[0], 0, _loc_const(splat(attr.value, ty), ty))


def _loc_const(text: str, ty: str) -> Loc:
    return Loc(None, text, ty)


@_on("gpu.thread_id", "gpu.block_id", "gpu.block_dim", "gpu.grid_dim", "gpu.lane_id",
     "gpu.warp_idx")  # fmt: skip
def _ids(g: _Gen, op: Operation) -> None:
    name = op.name
    if name == "gpu.lane_id":  # (linear thread index) % 32
        lin = g.linear_tid()
        g.define(op.results[0], 0, g.op(f"and {vec('i64')} {lin}, {splat(31, 'i64')}"))
        return
    dim = "xyz".index(op.attributes["dim"].value) if name != "gpu.warp_idx" else 0
    if name in ("gpu.block_id", "gpu.block_dim", "gpu.grid_dim"):
        base = {"gpu.block_id": 0, "gpu.block_dim": 3, "gpu.grid_dim": 6}[name]
        g.define(op.results[0], 0, g.splat_reg(g.info(base + dim), "i64"))
        return
    # tid = (x, y, z) of the linear index x + bx * (y + by * z)
    lin = g.linear_tid()
    bx = g.splat_reg(g.info(3), "i64")
    by = g.splat_reg(g.info(4), "i64")
    if dim == 0:
        value = g.op(f"urem {vec('i64')} {lin}, {bx}")
    else:
        rest = g.op(f"udiv {vec('i64')} {lin}, {bx}")
        value = g.op(f"urem {vec('i64')} {rest}, {by}") if dim == 1 else \
            g.op(f"udiv {vec('i64')} {rest}, {by}")  # fmt: skip
    if name == "gpu.warp_idx":  # CuTe's canonical_warp_idx: tid.x / 32
        value = g.op(f"lshr {vec('i64')} {value}, {splat(5, 'i64')}")
    g.define(op.results[0], 0, value)


@_on("gpu.cluster_id", "gpu.cluster_dim", "gpu.cluster_block_id", "gpu.cluster_dim_blocks",
     "gpu.cluster_block_rank")  # fmt: skip
def _cluster_ids(g: _Gen, op: Operation) -> None:
    """The cluster registers, from the block id and grid in ``info`` and the kernel's
    cluster shape (a constant; the grid is whole clusters: cutec.cpu.cluster)."""
    shape = cluster_dim(g.kernel)
    if op.name == "gpu.cluster_block_rank":  # x % cx + cx * (y % cy + cy * (z % cz))
        rank = "0"
        for d in (2, 1, 0):
            within = g.op(f"urem i64 {g.info(d)}, {shape[d]}")
            scaled = g.op(f"mul i64 {rank}, {shape[d]}")
            rank = g.op(f"add i64 {scaled}, {within}")
        g.define(op.results[0], 0, g.splat_reg(rank, "i64"))
        return
    d = "xyz".index(op.attributes["dim"].value)
    if op.name == "gpu.cluster_dim_blocks":
        g.alias(op.results[0], 0, _loc_const(splat(shape[d], "i64"), "i64"))
        return
    base, how = {"gpu.cluster_id": (0, "udiv"), "gpu.cluster_dim": (6, "udiv"),
                 "gpu.cluster_block_id": (0, "urem")}[op.name]  # fmt: skip
    value = g.op(f"{how} i64 {g.info(base + d)}, {shape[d]}")
    g.define(op.results[0], 0, g.splat_reg(value, "i64"))


# ---------------------------------------------------------------------- integer ops
@_on(*_INT_BIN, *_INT_MINMAX, *_SHIFTS)
def _int_binary(g: _Gen, op: Operation) -> None:
    a_v, b_v = op.operands
    ty = g.ty(a_v)
    for i in range(_ncomp(a_v)):
        a, b = g.get(a_v, i), g.get(b_v, i)
        if op.name in _INT_BIN:
            r = g.op(f"{_INT_BIN[op.name]} {vec(ty)} {a}, {b}")
        elif op.name in _INT_MINMAX:
            fn = f"@llvm.{_INT_MINMAX[op.name]}.{suffix(ty)}"
            g.declare(f"{vec(ty)} {fn}({vec(ty)}, {vec(ty)})")
            r = g.op(f"call {vec(ty)} {fn}({vec(ty)} {a}, {vec(ty)} {b})")
        else:  # a shift by >= width gives 0 (or the sign for shrsi), as PTX's clamp
            width = int(ty[1:])
            ok = g.op(f"icmp ult {vec(ty)} {b}, {splat(width, ty)}")
            safe = g.op(f"select {vec('i1')} {ok}, {vec(ty)} {b}, {vec(ty)} zeroinitializer")
            r = g.op(f"{_SHIFTS[op.name]} {vec(ty)} {a}, {safe}")
            far = "zeroinitializer"
            if op.name == "arith.shrsi":
                far = g.op(f"ashr {vec(ty)} {a}, {splat(width - 1, ty)}")
            r = g.op(f"select {vec('i1')} {ok}, {vec(ty)} {r}, {vec(ty)} {far}")
        g.define(op.results[0], i, r)


@_on(*_DIVS)
def _int_divide(g: _Gen, op: Operation) -> None:
    """A zero divisor in a live lane is an error; dead lanes and MIN / -1 divide by 1
    (x86 traps on both; MIN / 1 is the wrapped MIN / -1)."""
    a_v, b_v = op.operands
    ty = g.ty(a_v)
    width = int(ty[1:])
    index = g.op_index(op)
    for i in range(_ncomp(a_v)):
        a, b = g.get(a_v, i), g.get(b_v, i)
        zero = g.op(f"icmp eq {vec(ty)} {b}, zeroinitializer")
        bad = g.op(f"and {vec('i1')} {zero}, {g.mask_now()}")
        g.fail_if(bad, index, ERR_DIVIDE)
        avoid = zero
        if _DIVS[op.name].startswith("s"):
            amin = g.op(f"icmp eq {vec(ty)} {a}, {splat(-(1 << (width - 1)), ty)}")
            bneg = g.op(f"icmp eq {vec(ty)} {b}, {splat(-1, ty)}")
            both = g.op(f"and {vec('i1')} {amin}, {bneg}")
            avoid = g.op(f"or {vec('i1')} {zero}, {both}")
        b = g.op(f"select {vec('i1')} {avoid}, {vec(ty)} {splat(1, ty)}, {vec(ty)} {b}")
        r = g.op(f"{_DIVS[op.name]} {vec(ty)} {a}, {b}")
        if op.name in ("arith.floordivsi", "arith.ceildivsi"):
            rem = g.op(f"srem {vec(ty)} {a}, {b}")
            nz = g.op(f"icmp ne {vec(ty)} {rem}, zeroinitializer")
            rneg = g.op(f"icmp slt {vec(ty)} {rem}, zeroinitializer")
            bneg = g.op(f"icmp slt {vec(ty)} {b}, zeroinitializer")
            differ = g.op(f"xor {vec('i1')} {rneg}, {bneg}")
            if op.name == "arith.floordivsi":  # q - 1 when the signs of r and b differ
                adjust = g.op(f"and {vec('i1')} {nz}, {differ}")
                one = g.op(f"zext {vec('i1')} {adjust} to {vec(ty)}")
                r = g.op(f"sub {vec(ty)} {r}, {one}")
            else:  # q + 1 when they agree
                same = g.op(f"xor {vec('i1')} {differ}, {splat(1, 'i1')}")
                adjust = g.op(f"and {vec('i1')} {nz}, {same}")
                one = g.op(f"zext {vec('i1')} {adjust} to {vec(ty)}")
                r = g.op(f"add {vec(ty)} {r}, {one}")
        g.define(op.results[0], i, r)


@_on("arith.cmpi", "arith.cmpf")
def _compare(g: _Gen, op: Operation) -> None:
    a_v, b_v = op.operands
    ty = g.ty(a_v)
    pred = op.attributes["predicate"].value
    for i in range(_ncomp(a_v)):
        a, b = g.get(a_v, i), g.get(b_v, i)
        if op.name == "arith.cmpi":
            r = g.op(f"icmp {pred} {vec(ty)} {a}, {b}")
        else:
            r = g.op(f"fcmp {pred} {vec(ty)} {a}, {b}")
        g.define(op.results[0], i, r)


@_on("arith.select")
def _select(g: _Gen, op: Operation) -> None:
    c_v, t_v, f_v = op.operands
    ty = g.ty(t_v)
    scalar_cond = _ncomp(c_v) == 1
    for i in range(_ncomp(t_v)):
        c = g.get(c_v, 0 if scalar_cond else i)
        r = g.op(f"select {vec('i1')} {c}, {vec(ty)} {g.get(t_v, i)}, {vec(ty)} {g.get(f_v, i)}")
        g.define(op.results[0], i, r)


# ---------------------------------------------------------------------- float ops
@_on(*_FLOAT_BIN, *_FLOAT_INTRINSIC, "arith.negf", "arith.fma", *_MATH)
def _float(g: _Gen, op: Operation) -> None:
    ty = g.ty(op.results[0])
    for i in range(_ncomp(op.results[0])):
        # A bf16 fma in f64 (the product is exact there): rounded once, as the reference.
        to = "double" if ty == "bfloat" and op.name == "arith.fma" else "float"
        args = [_widen(g, g.get(v, i), ty, to) for v in op.operands]
        wide = args[0][1]
        x = [a for a, _ in args]
        if op.name in _FLOAT_BIN:
            r = g.op(f"{_FLOAT_BIN[op.name]} {vec(wide)} {x[0]}, {x[1]}")
        elif op.name == "arith.negf":
            r = g.op(f"fneg {vec(wide)} {x[0]}")
        elif op.name in _MATH:
            r = _math(g, _MATH[op.name], x[0], wide)
        else:
            fn = "fma" if op.name == "arith.fma" else _FLOAT_INTRINSIC[op.name]
            r = _call(g, fn, wide, x)
        g.define(op.results[0], i, _narrow(g, r, wide, ty))


def _call(g: _Gen, fn: str, ty: str, args: list[str]) -> str:
    name = f"@llvm.{fn}.{suffix(ty)}"
    g.declare(f"{vec(ty)} {name}({', '.join([vec(ty)] * len(args))})")
    return g.op(f"call {vec(ty)} {name}({', '.join(f'{vec(ty)} {a}' for a in args)})")


def _math(g: _Gen, fn: str, x: str, ty: str) -> str:
    """The function in double precision, rounded once to the type (as the folders)."""
    d = x if ty == "double" else g.op(f"fpext {vec(ty)} {x} to {vec('double')}")
    if fn == "rsqrt":
        s = _call(g, "sqrt", "double", [d])
        r = g.op(f"fdiv {vec('double')} {splat(1.0, 'double')}, {s}")
    elif fn == "exp2":  # the folder's pow(2, x)
        r = _call(g, "pow", "double", [splat(2.0, "double"), d])
    else:
        r = _call(g, fn, "double", [d])
    return _narrow(g, r, "double", ty)


# ---------------------------------------------------------------------- casts
@_on(*_INT_CASTS, *_FLOAT_CASTS, "arith.fptosi", "arith.fptoui", "arith.bitcast")
def _cast(g: _Gen, op: Operation) -> None:
    src_v, dst_v = op.operands[0], op.results[0]
    s, d = g.ty(src_v), g.ty(dst_v)
    for i in range(_ncomp(src_v)):
        x = g.get(src_v, i)
        name = op.name
        if name in _INT_CASTS:
            ws, wd = int(s[1:]), int(d[1:])
            kind = "zext" if name in ("arith.extui", "arith.index_castui") else "sext"
            inst = kind if wd > ws else "trunc" if wd < ws else None
            r = x if inst is None else g.op(f"{inst} {vec(s)} {x} to {vec(d)}")
        elif name == "arith.bitcast":  # (f32 <-> tf32: the same lanes)
            r = x if s == d else g.op(f"bitcast {vec(s)} {x} to {vec(d)}")
        elif name in ("arith.fptosi", "arith.fptoui"):  # saturating, as PTX's cvt.rzi
            x, s = _widen(g, x, s)
            fn = f"@llvm.fpto{'s' if name.endswith('si') else 'u'}i.sat.{suffix(d)}.{suffix(s)}"
            g.declare(f"{vec(d)} {fn}({vec(s)})")
            r = g.op(f"call {vec(d)} {fn}({vec(s)} {x})")
        elif d == "bfloat":  # rounded once, as the interpreter (integers through f64)
            if s in ("float", "half"):
                x, s = _widen(g, x, s)
                r = f32_to_bf16(g, x)
            else:
                if s != "double":
                    x = g.op(f"{_FLOAT_CASTS[name]} {vec(s)} {x} to {vec('double')}")
                r = f64_to_bf16(g, x)
        elif name == "arith.truncf" and element_type(dst_v.type) == tf32:
            r = f32_to_tf32(g, x)  # f32 lanes with the low 13 bits rounded off
        elif s == d:  # tf32 -> f32: the same lanes (cutec.cpu.lanes)
            r = x
        else:
            inst = _FLOAT_CASTS[name]
            if s == "double" and d == "half":
                raise Unsupported("f64 -> f16 rounding")
            r = g.op(f"{inst} {vec(s)} {x} to {vec(d)}")
        g.define(dst_v, i, r)


# ---------------------------------------------------------------------- pointers
def _elem_bytes(t: Any) -> int:
    if not isinstance(t, PointerType):
        raise Unsupported(f"pointer type {t}")
    e = t.element
    return 8 if isinstance(e, PointerType) else max(bit_width(e) // 8, 1)


@_on("thread.ptr_add")
def _ptr_add(g: _Gen, op: thread.PtrAddOp) -> None:
    step = _elem_bytes(op.ptr.type)
    off_ty = g.ty(op.offset)
    off = g.get(op.offset)
    if off_ty != "i64":
        off = g.op(f"sext {vec(off_ty)} {off} to {vec('i64')}")
    if step != 1:
        off = g.op(f"mul {vec('i64')} {off}, {splat(step, 'i64')}")
    g.define(op.result, 0, g.op(f"add {vec('i64')} {g.get(op.ptr)}, {off}"))
    if op.ptr in g.roots:
        g.roots[op.result] = g.roots[op.ptr]


@_on("thread.ptr_cast", "thread.cvta")
def _same_pointer(g: _Gen, op: Operation) -> None:
    g.alias(op.results[0], 0, g.loc(op.operands[0]))
    if op.operands[0] in g.roots:
        g.roots[op.results[0]] = g.roots[op.operands[0]]


@_on("thread.mapa")
def _mapa(g: _Gen, op: thread.MapaOp) -> None:
    """The same offset in buffer ``local + rank * shared + (id - pointers)``: the copy of
    the pointer's shared buffer that CTA `rank` of the cluster owns (cutec.cpu.codegen's
    buffer order); a rank outside the cluster fails (``ERR_MAPA``) in a live lane."""
    i64 = vec("i64")
    ptr, rank = g.get(op.ptr), g.get(op.rank)
    ctas = (g.num_bufs - g.num_local_bufs) // (g.num_local_bufs - g.num_ptr)  # (codegen's)
    bad = g.op(f"icmp uge {i64} {rank}, {splat(ctas, 'i64')}")
    bad = g.op(f"and {vec('i1')} {bad}, {g.mask_now()}")
    g.fail_if(bad, g.op_index(op), ERR_MAPA, [rank, rank], ctas)
    high = g.op(f"shl {i64} {ptr}, {splat(64 - OFFSET_BITS, 'i64')}")
    off = g.op(f"ashr {i64} {high}, {splat(64 - OFFSET_BITS, 'i64')}")
    ids = g.op(f"lshr {i64} {g.op(f'sub {i64} {ptr}, {off}')}, {splat(OFFSET_BITS, 'i64')}")
    shared = g.num_local_bufs - g.num_ptr
    first = g.op(f"mul {i64} {rank}, {splat(shared, 'i64')}")
    first = g.op(f"add {i64} {first}, {splat(g.num_local_bufs - g.num_ptr, 'i64')}")
    remote = g.op(f"add {i64} {first}, {ids}")
    base = g.op(f"shl {i64} {remote}, {splat(OFFSET_BITS, 'i64')}")
    g.define(op.result, 0, g.op(f"add {i64} {base}, {off}"))


@_on("thread.setmaxnreg")
def _nothing(g: _Gen, op: Operation) -> None:
    """No code: registers are the CPU's to spare (the interpreter's `nothing`)."""


@_on("thread.alloc_shared", "thread.dynamic_shared")
def _shared(g: _Gen, op: Operation) -> None:
    buf = g.shared_ids[op] if op.name == "thread.alloc_shared" else g.dynamic_id
    g.alias(op.results[0], 0, _loc_const(splat(buf << OFFSET_BITS, "i64"), "i64"))
    g.roots[op.results[0]] = buf


@_on("thread.extract")
def _extract(g: _Gen, op: thread.ExtractOp) -> None:
    g.alias(op.result, 0, g.loc(op.vector, op.pos.value))


@_on("thread.from_elements")
def _from_elements(g: _Gen, op: thread.FromElementsOp) -> None:
    for i, v in enumerate(op.elements):
        g.alias(op.result, i, g.loc(v))


# ---------------------------------------------------------------------- memory
def _address(g: _Gen, op: Operation, ptr_v: Value, mask: str, nbytes: int, err: int,
             shadow: int | None = None) -> str:  # fmt: skip
    """`<32 x ptr>` host addresses of pointer `ptr_v`'s lanes, checked (bounds, alignment)
    in the lanes of `mask`. A pointer whose buffer is known statically (derived from an
    argument or a shared allocation by ptr_add / ptr_cast / cvta) reads its buffer's
    base and size once; any other decodes the buffer id of each lane. With
    `shadow` (`checks.LOAD` ...), shared lanes are checked against their shadow too."""
    return _address_parts(g, op, ptr_v, mask, nbytes, err, shadow)[0]


def _address_parts(g: _Gen, op: Operation, ptr_v: Value, mask: str, nbytes: int, err: int,
                   shadow: int | None) -> tuple[str, str, str]:  # fmt: skip
    """(host addresses, buffer ids, byte offsets) of `_address`."""
    i64 = vec("i64")
    ptr = g.get(ptr_v)
    root = g.roots.get(ptr_v)
    sh = None
    t = ptr_v.type
    if not g.check_shared or (isinstance(t, PointerType) and t.space is AddressSpace.GLOBAL):
        shadow = None  # no shadow to check
    elif shadow is not None and nbytes % (1 << g.shadow_shift):
        raise AssertionError(f"{op.name}: {nbytes} bytes is no multiple of the shadow's unit "
                             "(cutec.cpu.codegen._shared_access_bytes misses an op)")  # fmt: skip
    if root is not None:
        off = g.op(f"sub {i64} {ptr}, {splat(root << OFFSET_BITS, 'i64')}")
        ids = splat(root, "i64")
        at = g.op(f"getelementptr i8, ptr %bufs, i64 {BUF_ENTRY * root}")
        base = g.splat_reg(g.op(f"load i64, ptr {at}"), "i64")
        size = g.splat_reg(g.op(f"load i64, ptr {g.op(f'getelementptr i8, ptr {at}, i64 8')}"),
                           "i64")  # fmt: skip
        if shadow is not None and root >= g.num_ptr:
            at16 = g.op(f"getelementptr i8, ptr {at}, i64 16")
            sh = g.splat_reg(g.op(f"load i64, ptr {at16}"), "i64")
        bad = "zeroinitializer"
    else:
        high = g.op(f"shl {i64} {ptr}, {splat(64 - OFFSET_BITS, 'i64')}")
        off = g.op(f"ashr {i64} {high}, {splat(64 - OFFSET_BITS, 'i64')}")
        diff = g.op(f"sub {i64} {ptr}, {off}")
        ids = g.op(f"lshr {i64} {diff}, {splat(OFFSET_BITS, 'i64')}")
        id_ok = g.op(f"icmp ult {i64} {ids}, {splat(g.num_bufs, 'i64')}")
        safe = g.op(f"select {vec('i1')} {id_ok}, {i64} {ids}, {i64} zeroinitializer")
        entry = g.op(f"mul {i64} {safe}, {splat(BUF_ENTRY, 'i64')}")
        at = g.op(f"getelementptr i8, ptr %bufs, {i64} {entry}")
        base = _gather(g, at, "i64", splat(1, "i1"), 8)
        at8 = g.op(f"getelementptr i8, {vec('ptr')} {at}, i64 8")
        size = _gather(g, at8, "i64", splat(1, "i1"), 8)
        if shadow is not None:
            at16 = g.op(f"getelementptr i8, {vec('ptr')} {at}, i64 16")
            sh = _gather(g, at16, "i64", splat(1, "i1"), 8)
        bad = g.op(f"xor {vec('i1')} {id_ok}, {splat(1, 'i1')}")
    if g.bounds_check:
        end = g.op(f"add {i64} {off}, {splat(nbytes, 'i64')}")
        misaligned = g.op(f"and {i64} {off}, {splat(nbytes - 1, 'i64')}")
        if nbytes & (nbytes - 1):
            misaligned = g.op(f"urem {i64} {off}, {splat(nbytes, 'i64')}")
        for cond in (f"icmp slt {i64} {off}, zeroinitializer", f"icmp sgt {i64} {end}, {size}",
                     f"icmp ne {i64} {misaligned}, zeroinitializer"):  # fmt: skip
            bad = g.op(f"or {vec('i1')} {bad}, {g.op(cond)}")
        bad = g.op(f"and {vec('i1')} {bad}, {mask}")
        g.fail_if(bad, g.op_index(op), err, [ids, off], nbytes)
    if sh is not None:
        assert shadow is not None
        _shadow_check(g, op, sh, ids, off, mask, nbytes, shadow)
    remote = isinstance(t, PointerType) and t.space is AddressSpace.SHARED_CLUSTER
    if remote and shadow in (checks.LOAD, checks.STORE) and root is None and g.bounds_check:
        _remote_check(g, op, at, ids, off, mask, nbytes, shadow)
    addr = g.op(f"add {i64} {base}, {off}")
    return g.op(f"inttoptr {i64} {addr} to {vec('ptr')}"), ids, off


def _remote_check(g: _Gen, op: Operation, at: str, ids: str, off: str, mask: str, nbytes: int,
                  kind: int) -> None:  # fmt: skip
    """Check a shared::cluster access against the owner's accesses since its last cluster
    barrier (`checks.remote_conflict`; on a conflict err gets (op, lane, buffer, byte,
    ERR_REMOTE, kind) and the warp returns 2), then a store marks its bytes written
    (`checks.remote_stamp`). ``bufs``' fourth word of another CTA's buffer is its
    record (0: none): the owner's shadow and its first interval since the barrier.
    After the bounds check: the bytes are in the buffer."""
    i64, i1 = vec("i64"), vec("i1")
    rec = _gather(g, g.op(f"getelementptr i8, {vec('ptr')} {at}, i64 24"), "i64", mask, 8)
    live = g.op(f"and {i1} {mask}, {g.op(f'icmp ne {i64} {rec}, zeroinitializer')}")
    at_rec = g.op(f"inttoptr {i64} {rec} to {vec('ptr')}")
    shadow = _gather(g, at_rec, "i64", live, 8)
    since = _gather(g, g.op(f"getelementptr i8, {vec('ptr')} {at_rec}, i64 8"), "i64", live, 8)
    first = g.op(f"ashr {i64} {off}, {splat(g.shadow_shift, 'i64')}")
    c32, many = splat(32, "i64"), splat(checks.MANY, "i64")
    words: list[str] = []
    for k in range(nbytes >> g.shadow_shift):
        unit = g.op(f"add {i64} {first}, {splat(k, 'i64')}")
        step = g.op(f"mul {i64} {unit}, {splat(16, 'i64')}")  # (W and R: 16 bytes a unit)
        at_w = g.op(f"inttoptr {i64} {g.op(f'add {i64} {shadow}, {step}')} to {vec('ptr')}")
        words.append(at_w)
        w = _gather(g, at_w, "i64", live, 8)
        writer = g.op(f"and {i64} {w}, {splat(checks.TID_MASK, 'i64')}")
        bad = g.op(f"icmp ne {i64} {w}, zeroinitializer")
        w_epoch = g.op(f"lshr {i64} {w}, {c32}")
        for cond in (f"icmp ne {i64} {writer}, {many}", f"icmp uge {i64} {w_epoch}, {since}"):
            bad = g.op(f"and {i1} {bad}, {g.op(cond)}")
        if kind == checks.STORE:
            at_r = g.op(f"getelementptr i8, {vec('ptr')} {at_w}, i64 8")
            r = _gather(g, at_r, "i64", live, 8)
            r_since = g.op(f"icmp uge {i64} {g.op(f'lshr {i64} {r}, {c32}')}, {since}")
            read = g.op(f"and {i1} {g.op(f'icmp ne {i64} {r}, zeroinitializer')}, {r_since}")
            bad = g.op(f"or {i1} {bad}, {read}")
        byte = g.op(f"shl {i64} {unit}, {splat(g.shadow_shift, 'i64')}")
        g.fail_if(g.op(f"and {i1} {bad}, {live}"), g.op_index(op), ERR_REMOTE, [ids, byte], kind)
    if kind == checks.STORE:
        stamp = g.op(f"or {i64} {g.op(f'shl {i64} {since}, {c32}')}, {many}")
        for at_w in words:
            _scatter(g, stamp, at_w, "i64", live, 8)


def _shadow_check(g: _Gen, op: Operation, sh: str, ids: str, off: str, mask: str, nbytes: int,
                  kind: int) -> None:  # fmt: skip
    """Check and record the live lanes' shared bytes (cutec.cpu.checks); on a failure
    the helper has filled err (op, lane, buffer, byte, ERR_SHARED, bytes, code, other
    thread, kind) and the warp returns 2."""
    i64 = vec("i64")
    live = g.op(f"zext {vec('i1')} {mask} to {i64}")
    for k, row in enumerate((live, sh, off, ids)):
        at = g.op(f"getelementptr [4 x {i64}], ptr %shlanes, i64 0, i64 {k}")
        g.emit(f"store {i64} {row}, ptr {at}, align 64")
    fn = g.op(f"inttoptr i64 {g.info(INFO_SHADOW)} to ptr")
    lane = g.op(f"call i32 {fn}(ptr %shlanes, i64 {nbytes}, ptr %info, i64 {kind}, ptr %err, "
                f"i64 {g.op_index(op)}, i64 {g.shadow_shift})")  # fmt: skip
    failed = g.op(f"icmp sge i32 {lane}, 0")
    ok = g.fresh("ok")
    g.emit(f"br i1 {failed}, label %failed, label %{ok}, !prof !0")
    g.label(ok, keep_cache=True)


def _gather(g: _Gen, at: str, ty: str, mask: str, align: int, passthru: str = "") -> str:
    fn = f"@llvm.masked.gather.{suffix(ty)}.v32p0"
    g.declare(f"{vec(ty)} {fn}({vec('ptr')}, {vec('i1')}, {vec(ty)})")
    passthru = passthru or "zeroinitializer"
    return g.op(f"call {vec(ty)} {fn}({vec('ptr')} align {align} {at}, {vec('i1')} {mask}, "
                f"{vec(ty)} {passthru})")  # fmt: skip


def _scatter(g: _Gen, value: str, at: str, ty: str, mask: str, align: int) -> None:
    fn = f"@llvm.masked.scatter.{suffix(ty)}.v32p0"
    g.declare(f"void {fn}({vec(ty)}, {vec('ptr')}, {vec('i1')})")
    g.emit(f"call void {fn}({vec(ty)} {value}, {vec('ptr')} align {align} {at}, "
           f"{vec('i1')} {mask})")  # fmt: skip


def _memory_type(v: Value) -> tuple[str, int, int]:
    """(element LLVM type, components, element bytes) of a loaded or stored value."""
    elem, n = components(v.type)
    ty = scalar_type(elem)
    if ty == "i1" or isinstance(elem, PointerType):
        raise Unsupported(f"a load or store of {v.type}")
    return ty, n, bit_width(elem) // 8


def _offset(g: _Gen, addr: str, k: int) -> str:
    return addr if k == 0 else g.op(f"getelementptr i8, {vec('ptr')} {addr}, i64 {k}")


@_on("thread.load", "thread.load_if")
def _load(g: _Gen, op: Operation) -> None:
    result = op.results[0]
    ty, n, step = _memory_type(result)
    mask = g.mask_now()
    if op.name == "thread.load_if":
        mask = g.op(f"and {vec('i1')} {mask}, {g.get(op.pred)}")
    addr = _address(g, op, op.ptr, mask, n * step, ERR_LOAD, checks.LOAD)
    for i in range(n):
        passthru = g.get(op.default, i) if op.name == "thread.load_if" else ""
        g.define(result, i, _gather(g, _offset(g, addr, i * step), ty, mask, step, passthru))


@_on("thread.store", "thread.store_if")
def _store(g: _Gen, op: Operation) -> None:
    ty, n, step = _memory_type(op.value)
    mask = g.mask_now()
    if op.name == "thread.store_if":
        mask = g.op(f"and {vec('i1')} {mask}, {g.get(op.pred)}")
    addr = _address(g, op, op.ptr, mask, n * step, ERR_STORE, checks.STORE)
    for i in range(n):
        _scatter(g, g.get(op.value, i), _offset(g, addr, i * step), ty, mask, step)


# ---------------------------------------------------------------------- atoms
@_on("thread.atom")
def _atom(g: _Gen, op: thread.AtomOp) -> None:
    """A one-thread atom, by its family's rule (`_THREAD_ATOM_CODE`)."""
    rule = _THREAD_ATOM_CODE.get(op.family())
    if rule is None:
        raise Unsupported(f"atom {op.atom.value} ({op.role.value})")
    rule(g, op)


def _fma_atom(g: _Gen, op: thread.AtomOp) -> None:
    """UniversalFMA: d = a * b + c (integers: mad.lo's low bits)."""
    a, b, c = op.args
    out = op.outs[0]
    ty = g.ty(out)
    if ty.startswith("i"):
        prod = g.op(f"mul {vec(ty)} {g.get(a)}, {g.get(b)}")
        g.define(out, 0, g.op(f"add {vec(ty)} {prod}, {g.get(c)}"))  # mad.lo
    else:  # bf16 in f64, as arith.fma
        x = [_widen(g, g.get(v), ty, "double" if ty == "bfloat" else "float")
             for v in (a, b, c)]  # fmt: skip
        r = _call(g, "fma", x[0][1], [v for v, _ in x])
        g.define(out, 0, _narrow(g, r, x[0][1], ty))


def _universal_copy_atom(g: _Gen, op: thread.AtomOp) -> None:
    """UniversalCopy: the role's ld/st of the registers, consecutive from the address."""
    load = op.role.value.startswith("ld.")
    registers = list(op.outs if load else op.args[1:])
    types = [_memory_type(r) for r in registers]
    total = sum(n * step for _, n, step in types)
    mask = g.mask_now()
    err, kind = (ERR_LOAD, checks.LOAD) if load else (ERR_STORE, checks.STORE)
    addr = _address(g, op, op.args[0], mask, total, err, kind)
    k = 0
    for r, (ty, n, step) in zip(registers, types, strict=True):
        for i in range(n):
            at = _offset(g, addr, k)
            if load:
                g.define(r, i, _gather(g, at, ty, mask, step))
            else:
                _scatter(g, g.get(r, i), at, ty, mask, step)
            k += step


# The native backend's rule for each one-thread atom family (the atom's family picks it,
# never its name), as the interpreter's `_THREAD_ATOM_RULES`; warp-collective families
# are codegen_collective's.
_THREAD_ATOM_CODE: dict[Family | None, Callable[[_Gen, thread.AtomOp], None]] = {
    Family.UNIVERSAL_FMA: _fma_atom,
    Family.UNIVERSAL_COPY: _universal_copy_atom,
}
# One-thread families the native backend leaves to the interpreter (a kernel with one
# runs there: docs/cpu-backend.md, *Not yet*). TMA loads are codegen_tma's.
INTERPRETER_ONLY: frozenset[Family] = frozenset({Family.TMA_STORE})
