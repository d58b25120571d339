"""The whole-tensor GEMM: ``gemm(A, B, C, alpha, beta, tile = (BM, BN, BK), stages = S)``
on global tensors, expanded into CTA tiles and a pipelined k-loop.

The expansion is a library func, inlined with the choices of the planner
(`cutec.heuristics.planner.plan_kernel`): the body for the target (every target's is
``gemm_tiled``, ``lib/gemm_tiled.cute``, CuTe's sgemm_sm80 structure written once in
the language), the block, the shared-memory layout atoms and swizzle, the copy
thread and value layouts, the MMA's warp layout. It happens here, not in an IR pass, for the
reason select-atoms chooses `auto` MMAs when the frontend builds them
(docs/passes.md, *select-atoms*): every fragment's and partition's type depends on
the atoms and tiles chosen, so the views must be built after the choice, through
the same builder a hand-written kernel goes through. The plan's reasons ride on
the TiledMMA's make op (``tile_plan``) and the `tile` pass reports them.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cutec.atoms.copy import copy_atom
from cutec.atoms.mma import mma_atom_named
from cutec.diagnostics import CompileError, Diagnostic, Note
from cutec.dtypes import dtype_of_ir
from cutec.frontend import ast
from cutec.frontend import scope as S
from cutec.frontend.build_calls import gmma_layout_atom, inline_call
from cutec.frontend.build_imports import program_globals
from cutec.frontend.build_tensors import tensor_arg
from cutec.frontend.imports import load_file
from cutec.frontend.static_eval import describe, error, loc_of
from cutec.heuristics.planner import SPLIT_MIN_K, GemmFacts, KernelPlan, LibraryBody, plan_kernel
from cutec.heuristics.tile_plan import TilePlanError
from cutec.ir import types as T
from cutec.ir.attributes import ArrayAttr, DenseArrayAttr, IntegerAttr, StringAttr
from cutec.ir.dialects import cute as C
from cutec.ir.dialects.builtin import KernelOp
from cutec.ir.dialects.cute_infer import spec_of
from cutec.ir.dialects.gpu import PointerType
from cutec.ir.signature import (
    IMPLICIT_CTAS,
    IMPLICIT_FLAGS,
    IMPLICIT_WAVE,
    IMPLICIT_WORKSPACE,
    RESIDENT_CTAS,
)
from cutec.layout import Layout
from cutec.layout.symbolic import ceil_div, is_static, known_divisible, smax, smin, sym
from cutec.target import AddressSpace

if TYPE_CHECKING:
    from cutec.frontend.context import BuildContext
    from cutec.ir.core import Block, Operation

LIBRARY = Path(__file__).parent / "lib"  # the library bodies' .cute files
TMA_ALIGN = 16  # bytes: a tensor map's base and strides
# The whole-tensor gemm's keywords: the CTA tile, the pipeline's stages, the
# accumulators' element type (f32, or the operands' own: f16 accumulation, the
# instruction CuTe's sgemm_sm80 tutorial uses), and the block size of a kernel that has
# no `threads` clause; `persistent = true` makes each CTA loop over tiles (cta,
# cta + ctas, ...), for a grid smaller than the tiles.
#
# Stream-K: the GPU runs tiles in waves of W CTAs (its SMs times the CTAs each holds),
# and a last wave at most two thirds full is better split. `stream_k = true` makes
# the kernel two: this one takes the tiles of the full waves, and `<kernel>__tail`,
# which the runtime launches after it, splits the tiles after them into equal shares
# of k-tiles (stream-K), partial tiles summed through a workspace and flags the
# runtime owns; W is the first kernel's resident CTAs (docs/abi.md, *Implicit
# arguments*). The same by hand: `wave = W` in the first kernel, `wave = W,
# stream_k = (WS, FL)` in a second (examples/gemm_stream_k.cute). `split_min_k`
# (default: the planner's SPLIT_MIN_K) is the least K a split must save (the same in
# both kernels).
KEYWORDS = ("tile", "stages", "acc_dtype", "num_threads", "persistent", "wave", "stream_k",
            "split_min_k", "epilogue")  # fmt: skip
# `epilogue = "tma"` asks the Hopper body to write C through shared memory and TMA stores
# where beta = 0 and C allows it; "registers" (the default) writes the accumulators.
EPILOGUES = ("registers", "tma")


@cache
def _library_func(body: LibraryBody) -> tuple[S.FuncRef, Path]:
    """The func of a library body, and its file."""
    path = LIBRARY / body.file
    names, errors = program_globals(load_file(path).program)
    assert not errors, errors
    return names[body.func], path


def _ops(block: Block) -> list[Operation]:
    return [op for top in list(block.ops) for op in top.walk()]


def _at_call(d: Diagnostic, node: ast.Node, body: Path) -> Diagnostic:
    """A mistake found inside the expansion (a tile too large for shared memory ...),
    located at the user's call; the library line it arose at becomes a note."""
    if d.location is None or d.location.file != str(body):
        return d
    note = Note("in the whole-tensor gemm's expansion (docs/passes.md, *tile*)", d.location)
    return Diagnostic(d.message, loc_of(node), severity=d.severity, notes=[*d.notes, note])


def _k_major(t: S.Tensor, name: str, node: ast.Node) -> bool:
    """True for a K-major operand ((MN,K) with K's stride 1), False for MN-major."""
    major = _k_major_or_none(t)
    if major is not None:
        return major
    stride = t.layout.stride
    if not isinstance(stride, tuple) or len(stride) != 2:
        raise error(f"the whole-tensor gemm's {name} must be a rank-2 tensor", node)
    raise error(
        f"the whole-tensor gemm's {name} needs a unit stride in one mode (MN- or "
        f"K-major), got strides {stride}",
        node,
    )


def _divisible(t: S.Tensor, k_major: bool, v: int, bits: int) -> bool:
    """Whether `v` elements of `t` may move as one aligned, predicated vector: its
    contiguous extent and leading dimension multiples of v (the kernel's facts) and
    its base aligned to v elements (``align``)."""
    contiguous = 1 if k_major else 0
    extent, ld = t.layout.shape[contiguous], t.layout.stride[1 - contiguous]
    align_bytes = _align_bytes(t) or bits // 8
    return known_divisible(extent, v) and known_divisible(ld, v) and align_bytes * 8 >= v * bits


def _align_bytes(t: S.Tensor) -> int | None:
    """The base alignment a tensor parameter declares (``align N``), or None."""
    owner = t.value.owner
    align = owner.attributes.get("align") if isinstance(owner, C.MakeTensorOp) else None
    return align.value if isinstance(align, IntegerAttr) else None


def _tma_eligible(t: S.Tensor, k_major: bool) -> bool:
    """Whether a tensor map may read `t`: a 16-byte aligned base (``align``) and a
    leading dimension whose bytes are a multiple of 16 (cuTensorMapEncodeTiled's rules;
    the extents may be anything, out-of-bounds boxes reading zeros)."""
    bits = dtype_of_ir(str(t.element)).bits
    ld = t.layout.stride[0 if k_major else 1]
    aligned = (_align_bytes(t) or 0) >= TMA_ALIGN
    return aligned and known_divisible(ld, TMA_ALIGN * 8 // bits)


def _tma_store_eligible(c: S.Tensor) -> bool:
    """Whether a store map may write C: M-major, readable through a map, and its rows
    (M elements) whole 16-byte chunks, which a TMA store writes."""
    if _k_major_or_none(c) is not False:
        return False
    bits = dtype_of_ir(str(c.element)).bits
    return _tma_eligible(c, False) and known_divisible(c.layout.shape[0], TMA_ALIGN * 8 // bits)


def _k_major_or_none(t: S.Tensor) -> bool | None:
    """For a rank-2 tensor (M, N): False when M-major (stride 1 in mode 0), True when
    N-major, None otherwise."""
    stride = t.layout.stride
    if not isinstance(stride, tuple) or len(stride) != 2:
        return None
    for mode, s in enumerate(stride):
        if is_static(s) and int(s) == 1:
            return mode == 1
    return None


def _static_ints(v: Any, n: int, what: str, node: ast.Node) -> tuple[int, ...]:
    items = v if isinstance(v, tuple) else (v,)
    if len(items) != n or not all(isinstance(x, int) or is_static(x) for x in items):
        raise error(f"{what} must be {n} compile-time integers, got {describe(v)}", node)
    return tuple(int(x) for x in items)


def build_tile_gemm(
    ctx: BuildContext, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> None:
    """``gemm(A, B, C, alpha, beta, tile = (BM, BN, BK), stages = S, acc_dtype = f32)``."""
    if len(args) != 5:
        raise error(
            "the whole-tensor gemm takes (A, B, C, alpha, beta, tile = ..., stages = ...)", node
        )
    if set(kwargs) - set(KEYWORDS):
        bad = sorted(set(kwargs) - set(KEYWORDS))[0]
        raise error(f"the whole-tensor gemm has no keyword '{bad}' ({', '.join(KEYWORDS)})", node)
    tile = _static_ints(kwargs["tile"], 3, "tile", node)
    if min(tile) <= 0:  # before the launch is inferred from it
        raise error(f"tile sizes must be positive, got {tile}", node)
    stages = _static_ints(kwargs.get("stages", 2), 1, "stages", node)[0]
    acc = kwargs.get("acc_dtype", T.f32)
    persistent = kwargs.get("persistent", False)
    if not isinstance(persistent, bool):
        raise error(f"persistent must be true or false, got {describe(persistent)}", node)
    wave = _wave(kwargs.get("wave"), node)
    split_min_k = _static_ints(kwargs.get("split_min_k", SPLIT_MIN_K), 1, "split_min_k", node)[0]
    if split_min_k < 0:
        raise error(f"split_min_k must be 0 or more, got {split_min_k}", node)
    sk = None if kwargs.get("stream_k") is False else kwargs.get("stream_k")
    managed = sk is True  # the two kernels are the compiler's
    if "split_min_k" in kwargs and wave is None and not managed:
        raise error("split_min_k needs 'wave': it says when the tail after the waves splits", node)
    if managed and wave is not None:
        raise error(
            "stream_k = true takes the wave from the GPU (the kernel's resident CTAs): "
            "leave out 'wave'",
            node,
        )
    if sk is not None and not managed:
        if wave is None:
            raise error("a stream-K gemm needs 'wave', the CTAs of the full waves' kernel", node)
        if persistent:
            raise error("a stream-K gemm takes one wave already: leave out 'persistent'", node)
    stream_k = None if managed else _stream_k_workspace(sk, acc, node)
    a, b, c = (
        tensor_arg(v, n, f"gemm's {w}")
        for v, n, w in zip(args[:3], node.args[:3], ("A", "B", "C"), strict=True)
    )
    for t, w, n in ((a, "A", node.args[0]), (b, "B", node.args[1]), (c, "C", node.args[2])):
        if t.space is not AddressSpace.GLOBAL:
            raise error(f"the whole-tensor gemm's {w} must be a global tensor", n)
    if a.element != b.element:
        raise error(f"gemm's A holds {a.element} but B holds {b.element}", node)
    if not isinstance(acc, T.FloatType) or acc not in (T.f32, a.element):
        raise error(
            f"acc_dtype must be f32 or the operands' type {a.element}, got {describe(acc)}",
            node,
        )
    epilogue = kwargs.get("epilogue", "registers")
    if epilogue not in EPILOGUES:
        got = repr(epilogue) if isinstance(epilogue, str) else describe(epilogue)
        raise error(f"epilogue must be one of {', '.join(map(repr, EPILOGUES))}, got {got}", node)
    a_k, b_k = _k_major(a, "A", node.args[0]), _k_major(b, "B", node.args[1])
    bits = dtype_of_ir(str(a.element)).bits
    stream_k_remark = None
    if managed:
        if ctx.wants_tail:
            raise error("a kernel holds one stream_k = true gemm", node)
        ctx.wants_tail = True
        wave = _implicit_wave(ctx, node)
        if ctx.stream_k_tail:
            stream_k = _implicit_workspace(ctx, acc, tile, node)
            persistent = False
        else:
            tail = f"{_kernel(ctx).sym_name}__tail"
            stream_k_remark = (
                f"stream-K: the tiles after the last full wave go to kernel '{tail}', which "
                "the runtime launches after this one when it splits them"
            )
    schedule = "stream-K" if stream_k is not None else "persistent" if persistent else "tiles"
    k = a.layout.shape[1]
    facts = GemmFacts(
        ctx.target,
        bits,
        dtype_of_ir(str(acc)).bits,
        a_k,
        b_k,
        tile,  # type: ignore[arg-type]
        stages,
        _block(ctx, kwargs.get("num_threads"), node),
        managed and ctx.stream_k_tail,
        lambda v: _divisible(a, a_k, v, bits),
        lambda v: _divisible(b, b_k, v, bits),
        str(a.element),
        "stream-K" if stream_k is not None or wave is not None else schedule,
        _tma_eligible(a, a_k),
        _tma_eligible(b, b_k),
        epilogue,
        dtype_of_ir(str(c.element)).bits,
        _tma_store_eligible(c),
        str(c.element),
    )
    try:
        kernel_plan = plan_kernel(facts)
    except TilePlanError as e:
        raise error(str(e), node) from None
    tile, stages = kernel_plan.tile, kernel_plan.stages
    launch = _infer_launch(ctx, kernel_plan, c, k, schedule, wave, split_min_k)
    stream_k_remark = kernel_plan.tail_why or stream_k_remark
    if stream_k_remark is not None:
        launch.append(stream_k_remark)
    ct = {"T": a.element, "TACC": acc, "BM": tile[0], "BN": tile[1], "BK": tile[2], "BP": stages}
    ct["PERSISTENT"] = persistent
    if kernel_plan.ws is not None:
        ws = kernel_plan.ws
        ct |= {"MMA": S.AtomRef("mma", ws.mma_atom, mma_atom_named(ws.mma_atom))}
        ct |= {"WGS": ws.consumers, "BYTES": bits // 8, "TC": c.element}
        ct |= {"EPI_TMA": ws.epi_tma, "EN": ws.epi_n, "A_REGS": ws.a_regs}
        ct["MMA_EPI"] = S.AtomRef("mma", ws.epi_mma_atom, mma_atom_named(ws.epi_mma_atom))
        smem_atoms = [
            gmma_layout_atom(n, [a.element], node) for n in (ws.a_smem_atom, ws.b_smem_atom)
        ]
        operands = [*args, *smem_atoms]
    else:
        plan, epilogue = kernel_plan.gemm, kernel_plan.epilogue
        assert plan is not None and epilogue is not None
        cpa = S.AtomRef("copy", plan.a.copy_atom, copy_atom(plan.a.copy_atom))
        cpb = S.AtomRef("copy", plan.b.copy_atom, copy_atom(plan.b.copy_atom))
        ct |= {"CPA": cpa, "CPB": cpb, "CV": epilogue.vec, "CN": epilogue.chunk_n}
        ct |= {"WAVE": wave is not None, "STREAM_K": stream_k is not None}
        ct["SPLIT_MIN_K"] = split_min_k
        ct["ROUND"] = a.element == T.tf32  # tf32 operands rounded to nearest (gemm_tiled)
        # Both operands by cp.async: the k-loop is pipelined (gemm_tiled's tile_mainloop).
        ct["ASYNC"] = plan.a.asynchronous and plan.b.asynchronous
        # Without them, the wave and the workspace are never read: 1 and C stand in.
        operands = [*args, 1 if wave is None else wave, *(stream_k or (args[2], args[2]))]
        operands += [plan.a.smem_atom, plan.b.smem_atom]
        operands += [plan.a.thr, plan.a.val, plan.b.thr, plan.b.val, plan.warps, plan.mma_tile]
        operands += [epilogue.thr]
    assert ctx.body_block is not None
    before = set(_ops(ctx.body_block))
    n_errors = len(ctx.errors)
    func, path = _library_func(kernel_plan.body)
    try:
        inline_call(ctx, func, node, operands, {}, ct)
    except CompileError as e:
        raise CompileError(
            "", diagnostics=[_at_call(d, node, path) for d in e.diagnostics]
        ) from None
    ctx.errors[n_errors:] = [_at_call(d, node, path) for d in ctx.errors[n_errors:]]
    # The expansion is the user's gemm: its ops (what the passes report and the PTX's
    # .loc lines) are located at the call.
    made = [op for op in _ops(ctx.body_block) if op not in before]
    for op in made:
        op.location = loc_of(node)
    mmas = [op for op in made if isinstance(op, C.MakeTiledMmaOp)]
    if not mmas:  # the expansion failed; its errors are in ctx.errors
        return
    op = mmas[0]  # the mainloop's (the Hopper body's TMA epilogue makes a second)
    reasons = (*launch, *kernel_plan.reasons())
    op.attributes["tile_plan"] = ArrayAttr(tuple(StringAttr(r) for r in reasons))


def _wave(v: Any, node: ast.Call) -> Any:
    """``wave = W``: a positive constant, or a kernel's int parameter (at run time a value
    below 1 counts as 1: no split)."""
    if v is None:
        return None
    integer = isinstance(v, S.Runtime) and isinstance(v.value.type, T.IntegerType | T.IndexType)
    if isinstance(v, bool) or not (isinstance(v, int) or integer):
        raise error(f"wave must be an int, the CTAs of one wave, got {describe(v)}", node)
    if isinstance(v, int) and v <= 0:
        raise error(f"wave must be positive, got {v}", node)
    if isinstance(v, S.Runtime) and v.sym is None:
        raise error("wave must be a compile-time int or a kernel's int parameter", node)
    return v


def _kernel(ctx: BuildContext) -> KernelOp:
    """The kernel being built."""
    kernel = ctx.body_block.parent_op if ctx.body_block is not None else None
    assert isinstance(kernel, KernelOp)
    return kernel


def _implicit_arg(ctx: BuildContext, name: str, type: T.Type, node: ast.Call) -> Any:
    """A trailing argument of the kernel that the runtime supplies, listed in its
    `implicit` attribute (docs/abi.md)."""
    kernel = _kernel(ctx)
    if any(a.name_hint == name for a in kernel.args):
        raise error(f"stream_k = true adds a parameter '{name}': rename the kernel's", node)
    arg = kernel.add_arg(type, name)
    listed = kernel.attributes.get("implicit")
    names = (*(listed.elements if isinstance(listed, ArrayAttr) else ()), StringAttr(name))
    kernel.attributes["implicit"] = ArrayAttr(names)
    return arg


def _implicit_wave(ctx: BuildContext, node: ast.Call) -> S.Runtime:
    """`stream_k = true`'s wave: an int argument, the first kernel's resident CTAs."""
    s = sym(IMPLICIT_WAVE, min_value=0)
    ctx.sym_values[s] = S.Runtime(_implicit_arg(ctx, IMPLICIT_WAVE, T.index, node), s)
    return ctx.sym_values[s]


def _implicit_workspace(
    ctx: BuildContext, acc: Any, tile: tuple[int, ...], node: ast.Call
) -> tuple[S.Tensor, S.Tensor]:
    """The tail's workspace and flags under `stream_k = true`, arguments the runtime
    supplies: ``stream_k_workspace: TACC[BM * BN, stream_k_ctas] : (1, BM * BN) align 16``
    and ``stream_k_flags: i32[stream_k_ctas]`` (zero before each launch, zero after)."""
    ws = _implicit_arg(ctx, IMPLICIT_WORKSPACE, PointerType(acc, AddressSpace.GLOBAL), node)
    ctas = _implicit_arg(ctx, IMPLICIT_CTAS, T.index, node)
    flags = _implicit_arg(ctx, IMPLICIT_FLAGS, PointerType(T.i32, AddressSpace.GLOBAL), node)
    s = sym(IMPLICIT_CTAS, min_value=0)
    ctx.sym_values[s] = S.Runtime(ctas, s)
    elems = tile[0] * tile[1]
    out = []
    for ptr, layout, align in ((ws, Layout((elems, s), (1, elems)), 16), (flags, Layout(s, 1), 4)):
        t = C.TensorType(ptr.type.element, AddressSpace.GLOBAL, spec_of(layout))
        mk = ctx.emit_at_entry(C.MakeTensorOp(ptr, [ctas], t, [1], align), node)
        mk.result.name_hint = ptr.name_hint
        out.append(S.Tensor(mk.result, layout, ptr.type.element, AddressSpace.GLOBAL))
    return out[0], out[1]


def _stream_k_workspace(v: Any, acc: Any, node: ast.Call) -> tuple[Any, Any] | None:
    """``stream_k = (WS, FL)``: global tensors of the accumulators' type (a partial tile
    per CTA: WS[_, cta] holds BM * BN elements) and of i32 (a flag per CTA, zero before
    the first launch; each launch leaves them zero)."""
    if v is None:
        return None
    if not (isinstance(v, tuple) and len(v) == 2):
        raise error(f"stream_k takes (workspace, flags), got {describe(v)}", node)
    ws, fl = v
    for t, what, elem in ((ws, "workspace", acc), (fl, "flags", T.i32)):
        if not isinstance(t, S.Tensor) or t.space is not AddressSpace.GLOBAL:
            raise error(f"stream_k's {what} must be a global tensor, got {describe(t)}", node)
        if t.element != elem:
            raise error(f"stream_k's {what} must hold {elem}, not {t.element}", node)
    return ws, fl


def _tail_splits(tiles: Any, wave: Any, k: Any, min_k: int = SPLIT_MIN_K) -> Any:
    """1 when the stream-K kernel takes the tiles after the last full wave, else 0:
    gemm_tiled's rule (a wave below 1 counts as 1; at least one full wave, a last one
    neither empty nor more than two thirds full, and (w - rest) * K >= min_k * w),
    written with min and max for a grid expression: min(1, max(0, x + 1)) is x >= 0."""
    w = smax(wave, 1)
    full = tiles // w
    rest = tiles - full * w
    at_least = [full - 1, rest - 1, 2 * w - 3 * rest, (w - rest) * k - min_k * w]
    out: Any = 1
    for x in at_least:
        out = out * smin(1, smax(0, x + 1))
    return out


def _block(ctx: BuildContext, threads: Any, node: ast.Call) -> int | None:
    """The block the kernel fixes for its gemm: its `threads` clause, or `num_threads =`
    (which must agree with the clause); None leaves it to the planner."""
    n = None if threads is None else _static_ints(threads, 1, "num_threads", node)[0]
    if "threads" in ctx.inferable:
        return n
    if n is not None and n != ctx.num_threads:
        raise error(
            f"num_threads = {n}, but the kernel's 'threads' clause runs {ctx.num_threads}",
            node,
        )
    return ctx.num_threads


def _infer_launch(
    ctx: BuildContext,
    plan: KernelPlan,
    c: S.Tensor,
    k: Any,
    schedule: str,
    wave: Any,
    min_k: int,
) -> list[str]:
    """The launch clauses the kernel left out (``ctx.inferable``), as the plan has them:
    `threads` (`num_threads =`, else the planner's) and the grid, one CTA per tile of C
    (persistent: one wave, ``min(tiles, resident_ctas)``; stream-K: one wave, or none
    when the full waves' kernel takes every tile); the remarks saying so."""
    kernel = _kernel(ctx)
    remarks = []
    tile = plan.tile
    if "threads" in ctx.inferable:
        n = plan.threads
        why = plan.threads_why or f"{n} threads: the gemm's num_threads"
        kernel.attributes["reqntid"] = DenseArrayAttr(T.i32, (n, 1, 1))
        ctx.num_threads = n
        ctx.inferable.discard("threads")
        remarks.append(f"launch: {why}")
    if "grid" in ctx.inferable:
        extent_m, extent_n = c.layout.shape
        per, of_c = f"{tile[0]}x{tile[1]}", "C"
        if plan.ws is not None and plan.ws.swapped:  # the body's tiles are Cᵀ's
            extent_m, extent_n, of_c = extent_n, extent_m, "Cᵀ"
        tiles_m, tiles_n = ceil_div(extent_m, tile[0]), ceil_div(extent_n, tile[1])
        w = None if wave is None else wave if isinstance(wave, int) else wave.sym
        w_text = "resident_ctas CTAs" if str(w) == IMPLICIT_WAVE else w
        if schedule == "stream-K":
            splits = _tail_splits(tiles_m * tiles_n, w, k, min_k)
            grid = (str(sym(RESIDENT_CTAS) * splits), "1", "1")
            shown = f"{RESIDENT_CTAS}, or 0"  # the rule's min/max expression is the attribute
            why = (
                f"as many CTAs as the GPU holds at once, sharing the k-tiles of the {per} "
                f"tiles of {of_c} after the last full wave of {w_text} (stream-K); none when that "
                "wave is empty or more than two thirds full"
            )
        elif schedule == "persistent":
            grid = (str(smin(tiles_m * tiles_n, sym(RESIDENT_CTAS))), "1", "1")
            shown = grid[0]
            why = f"as many CTAs as the GPU holds at once, each looping over {per} tiles of {of_c}"
        else:
            grid = (str(tiles_m), str(tiles_n), "1")
            shown = f"{grid[0]}, {grid[1]}"
            why = f"one CTA per {per} tile of {of_c}"
            if w is not None:
                why += (
                    f" (those past the full waves of {w_text} return at once when the "
                    "stream-K kernel takes the last wave's tiles)"
                )
        kernel.attributes["grid"] = ArrayAttr(tuple(StringAttr(g) for g in grid))
        ctx.inferable.discard("grid")
        remarks.append(f"launch: grid ({shown}), {why}")
    return remarks
