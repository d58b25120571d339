"""The whole-tensor GEMM: ``gemm(A, B, C, alpha, beta, tile = (BM, BN, BK), stages = S)``
on global tensors, expanded into CTA tiles and a pipelined k-loop.

The expansion is the library func ``gemm_tiled`` (``lib/gemm_tiled.cute``, CuTe's
sgemm_sm80 structure written once in the language), inlined with the choices of
`cutec.atoms.tile_plan` (shared-memory layout atoms and swizzle, copy thread and
value layouts, the MMA's warp layout). It happens here, not in an IR pass, for the
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
from cutec.atoms.tile_plan import (
    TILE_PLAN_ATTR,
    TilePlanError,
    choose_threads,
    copy_bytes,
    plan_epilogue,
    plan_gemm,
)
from cutec.diagnostics import CompileError, Diagnostic, Note
from cutec.dtypes import dtype_of_ir
from cutec.frontend import ast
from cutec.frontend import scope as S
from cutec.frontend.build_calls import inline_call
from cutec.frontend.build_imports import program_globals
from cutec.frontend.build_tensors import tensor_arg
from cutec.frontend.imports import load_file
from cutec.frontend.static_eval import describe, error, loc_of
from cutec.ir import types as T
from cutec.ir.attributes import ArrayAttr, DenseArrayAttr, IntegerAttr, StringAttr
from cutec.ir.dialects import cute as C
from cutec.ir.dialects.builtin import KernelOp
from cutec.ir.signature import RESIDENT_CTAS
from cutec.layout.symbolic import ceil_div, is_static, known_divisible, smax, smin, sym
from cutec.target import AddressSpace

if TYPE_CHECKING:
    from cutec.frontend.context import BuildContext
    from cutec.ir.core import Block, Operation

LIBRARY = Path(__file__).parent / "lib" / "gemm_tiled.cute"
# The whole-tensor gemm's keywords: the CTA tile, the pipeline's stages, the
# accumulators' element type (f32, or the operands' own: f16 accumulation, the
# instruction CuTe's sgemm_sm80 tutorial uses), and the block size of a kernel
# that has no `threads` clause; `persistent = true` makes each CTA loop over tiles
# (cta, cta + ctas, ...), for a grid smaller than the tiles. `wave = W` (the CTAs of
# one wave: the SMs times the CTAs each holds) leaves the tiles after the last full
# wave to a second kernel, when that wave would run at most two thirds full; that
# kernel's gemm says `wave = W, stream_k = (WS, FL)` and splits them into equal
# shares of k-tiles, partial tiles summed through the workspace WS and flags FL.
# `split_min_k` (default SPLIT_MIN_K) is the least K the split must save (the same in
# both kernels).
KEYWORDS = ("tile", "stages", "acc_dtype", "num_threads", "persistent", "wave", "stream_k",
            "split_min_k")  # fmt: skip
# gemm_tiled's rule splits a last wave only when the k-loop it saves is worth this
# much of K (about what a share's second prologue and epilogue and the partial
# tile's store and load cost: lib/gemm_tiled.cute).
SPLIT_MIN_K = 2048


@cache
def _gemm_tiled() -> S.FuncRef:
    names, errors = program_globals(load_file(LIBRARY).program)
    assert not errors, errors
    return names["gemm_tiled"]


def _ops(block: Block) -> list[Operation]:
    return [op for top in list(block.ops) for op in top.walk()]


def _at_call(d: Diagnostic, node: ast.Node) -> Diagnostic:
    """A mistake found inside the expansion (a tile too large for shared memory ...),
    located at the user's call; the library line it arose at becomes a note."""
    if d.location is None or d.location.file != str(LIBRARY):
        return d
    note = Note("in the whole-tensor gemm's expansion (docs/passes.md, *tile*)", d.location)
    return Diagnostic(d.message, loc_of(node), d.severity, [*d.notes, note])


def _k_major(t: S.Tensor, name: str, node: ast.Node) -> bool:
    """True for a K-major operand ((MN,K) with K's stride 1), False for MN-major."""
    stride = t.layout.stride
    if not isinstance(stride, tuple) or len(stride) != 2:
        raise error(f"the whole-tensor gemm's {name} must be a rank-2 tensor", node)
    for mode, s in enumerate(stride):
        if is_static(s) and int(s) == 1:
            return mode == 1
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
    owner = t.value.owner
    align = owner.attributes.get("align") if isinstance(owner, C.MakeTensorOp) else None
    align_bytes = align.value if isinstance(align, IntegerAttr) else bits // 8
    return known_divisible(extent, v) and known_divisible(ld, v) and align_bytes * 8 >= v * bits


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
    if "split_min_k" in kwargs and wave is None:
        raise error("split_min_k needs 'wave': it says when the tail after the waves splits", node)
    if "stream_k" in kwargs:
        if wave is None:
            raise error("a stream-K gemm needs 'wave', the CTAs of the full waves' kernel", node)
        if persistent:
            raise error("a stream-K gemm takes one wave already: leave out 'persistent'", node)
    stream_k = _stream_k_workspace(kwargs.get("stream_k"), acc, node)
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
    a_k, b_k = _k_major(a, "A", node.args[0]), _k_major(b, "B", node.args[1])
    bits = dtype_of_ir(str(a.element)).bits
    schedule = "stream-K" if stream_k is not None else "persistent" if persistent else "tiles"
    k = a.layout.shape[1]
    launch = _infer_launch(
        ctx, tile, c, k, kwargs.get("num_threads"), schedule, wave, split_min_k, node
    )
    try:
        a_copy = copy_bytes(bits, lambda v: _divisible(a, a_k, v, bits))
        b_copy = copy_bytes(bits, lambda v: _divisible(b, b_k, v, bits))
        plan = plan_gemm(bits, bits, a_k, b_k, tile, a_copy, b_copy, threads=ctx.num_threads)
        epilogue = plan_epilogue(dtype_of_ir(str(acc)).bits, tile[0], plan)
    except TilePlanError as e:
        raise error(str(e), node) from None
    cpa = S.AtomRef("copy", plan.a.copy_atom, copy_atom(plan.a.copy_atom))
    cpb = S.AtomRef("copy", plan.b.copy_atom, copy_atom(plan.b.copy_atom))
    ct = {"T": a.element, "TACC": acc, "BM": tile[0], "BN": tile[1], "BK": tile[2], "BP": stages}
    ct |= {"CPA": cpa, "CPB": cpb, "CV": epilogue.vec, "CN": epilogue.chunk_n}
    ct |= {"PERSISTENT": persistent, "WAVE": wave is not None, "STREAM_K": stream_k is not None}
    ct["SPLIT_MIN_K"] = split_min_k
    # Without them, the wave and the workspace are never read: 1 and C stand in.
    operands = [*args, 1 if wave is None else wave, *(stream_k or (args[2], args[2]))]
    operands += [plan.a.smem_atom, plan.b.smem_atom]
    operands += [plan.a.thr, plan.a.val, plan.b.thr, plan.b.val, plan.warps, plan.mma_tile]
    operands += [epilogue.thr]
    assert ctx.body_block is not None
    before = set(_ops(ctx.body_block))
    n_errors = len(ctx.errors)
    try:
        inline_call(ctx, _gemm_tiled(), node, operands, {}, ct)
    except CompileError as e:
        raise CompileError("", diagnostics=[_at_call(d, node) for d in e.diagnostics]) from None
    ctx.errors[n_errors:] = [_at_call(d, node) for d in ctx.errors[n_errors:]]
    # The expansion is the user's gemm: its ops (what the passes report and the PTX's
    # .loc lines) are located at the call.
    made = [op for op in _ops(ctx.body_block) if op not in before]
    for op in made:
        op.location = loc_of(node)
    mmas = [op for op in made if isinstance(op, C.MakeTiledMmaOp)]
    if not mmas:  # the expansion failed; its errors are in ctx.errors
        return
    (op,) = mmas
    reasons = (*launch, plan.remark, plan.a.remark, plan.b.remark, epilogue.remark)
    op.attributes[TILE_PLAN_ATTR] = ArrayAttr(tuple(StringAttr(r) for r in reasons))


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


def _infer_launch(
    ctx: BuildContext,
    tile: tuple[int, ...],
    c: S.Tensor,
    k: Any,
    threads: Any,
    schedule: str,
    wave: Any,
    min_k: int,
    node: ast.Call,
) -> list[str]:
    """The launch clauses the kernel left out (``ctx.inferable``), chosen for this gemm:
    `threads` (`num_threads =`, else `choose_threads`) and the grid, one CTA per tile of C
    (persistent: one wave, ``min(tiles, resident_ctas)``; stream-K: one wave, or none
    when the full waves' kernel takes every tile); the remarks saying so."""
    kernel = ctx.body_block.parent_op if ctx.body_block is not None else None
    assert isinstance(kernel, KernelOp)
    remarks = []
    # A block size other than 128 or 256 is plan_gemm's located error.
    if threads is not None:
        n = _static_ints(threads, 1, "num_threads", node)[0]
        if "threads" not in ctx.inferable and n != ctx.num_threads:
            raise error(
                f"num_threads = {n}, but the kernel's 'threads' clause runs {ctx.num_threads}",
                node,
            )
    if "threads" in ctx.inferable:
        if threads is None:
            n, why = choose_threads(tile)  # type: ignore[arg-type]
        else:
            why = f"{n} threads: the gemm's num_threads"
        kernel.attributes["reqntid"] = DenseArrayAttr(T.i32, (n, 1, 1))
        ctx.num_threads = n
        ctx.inferable.discard("threads")
        remarks.append(f"launch: {why}")
    if "grid" in ctx.inferable:
        extent_m, extent_n = c.layout.shape
        tiles_m, tiles_n = ceil_div(extent_m, tile[0]), ceil_div(extent_n, tile[1])
        per = f"{tile[0]}x{tile[1]}"
        w = None if wave is None else wave if isinstance(wave, int) else wave.sym
        if schedule == "stream-K":
            splits = _tail_splits(tiles_m * tiles_n, w, k, min_k)
            grid = (str(sym(RESIDENT_CTAS) * splits), "1", "1")
            shown = f"{RESIDENT_CTAS}, or 0"  # the rule's min/max expression is the attribute
            why = (
                f"as many CTAs as the GPU holds at once, sharing the k-tiles of the {per} "
                f"tiles of C after the last full wave of {w} (stream-K); none when that "
                "wave is empty or more than two thirds full"
            )
        elif schedule == "persistent":
            grid = (str(smin(tiles_m * tiles_n, sym(RESIDENT_CTAS))), "1", "1")
            shown = grid[0]
            why = f"as many CTAs as the GPU holds at once, each looping over {per} tiles of C"
        else:
            grid = (str(tiles_m), str(tiles_n), "1")
            shown = f"{grid[0]}, {grid[1]}"
            why = f"one CTA per {per} tile of C"
            if w is not None:
                why += (
                    f" (those past the full waves of {w} return at once when the "
                    "stream-K kernel takes the last wave's tiles)"
                )
        kernel.attributes["grid"] = ArrayAttr(tuple(StringAttr(g) for g in grid))
        ctx.inferable.discard("grid")
        remarks.append(f"launch: grid ({shown}), {why}")
    return remarks
