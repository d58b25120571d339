"""pipeline: software-pipeline a k-loop of cp.async copies over N shared stages.

A loop annotated ``pipeline(stages = N)`` (``scf.for ... {pipeline_stages = N}``)
is written as one stage::

    for k in range(n) pipeline(stages = N) {
      copy(copy_a, tAgA[_, _, _, k], tAsA)      // cp.async: gmem -> smem   (producer)
      cp_async_fence(); cp_async_wait(0); sync()
      ... compute on sA, sB (gemm, or smem -> rmem copies + gemm) ...
      sync()
    }

and becomes CuTe's multistage mainloop (sgemm_sm80): each shared tensor the
producer writes gets N stages (stage s is ``sA_full[_, .., _, s]``), a prologue
issues tiles 0 .. N-2 into stages 0 .. N-2, and iteration i computes on stage
i % N while tile i+N-1 loads into stage (i+N-1) % N. With ``W = N - 2``::

    prologue: if lb < ub { for s < N-1: copy tile min'(s) -> stage s; commit }
              else { N-1 empty commits }
    iteration i:  wait_group(W); barrier
                  copy tile min'(i+N-1) -> stage (i+N-1)%N; commit
                  compute on stage i%N
    after:    wait_group(0); barrier       (only if shared memory is used after)

where ``min'(t)`` is tile t when it exists and otherwise tile 0 in the prologue
and tile i in the steady state (a select, not a branch).

*Groups.* Exactly one commit per prologue stage and per iteration, and every
group g copies a real tile into stage g % N. So before iteration i's wait,
N-1+i groups are committed; tile i is group i, so at most N-2 may stay pending.

*One barrier per iteration.* The barrier of iteration i (a) publishes tile i,
which each thread's wait completed for its own copies, to the whole CTA, and
(b) orders every thread's reads of stage (i-1)%N in iteration i-1 before the
copy of iteration i that overwrites that stage. No other barrier is needed:
stage i%N is next written in iteration i+1, after that iteration's barrier.
The user's own ``cp_async_fence/wait`` and ``sync`` are replaced by these.

*Residues.* No tile past the loop's end is addressed. A stage written with a
stand-in tile is never read as data: in the steady state, iteration i >= n-N+1
writes stage (i-1)%N while the tiles left, i .. n-1 <= i+N-2, sit in the other
stages. (CuTe's tutorial clamps its ``k_tile_next`` the same way, but reads tile
0 of an empty K; here a loop of no tile copies nothing.) A select rather than a
branch keeps the copy's address math loop-invariant where it is (a branch per
stage gave sgemm_tn 170 registers instead of 128 under ptxas 13.0).

*Register double-buffering.* When the compute reads the staged tensors only
through copies into registers (s2r: ldmatrix or UniversalCopy), grouped in
K-blocks ``loads_j; rest_j`` (as a fully unrolled k_block loop writes them),
the loads of block j+1 move above ``rest_j`` and block 0 of the next tile is
loaded at the end of the iteration, after the barrier. Ops right after a block's
loads that only rewrite what they loaded (gemm_tiled's tf32 rounding) move with
them and are emitted after ``rest_j`` (`_rewrites_loaded`, `_split_loads`). Where
the copies go depends on the MMA::

    FMA (UniversalFMA):
    iteration i:  copy tile min'(i+N-1); commit; loads_1; rest_0
                  loads_{j+1}; rest_j                            (0 < j < KB-1)
                  wait_group(W); barrier; loads_0 of stage (i+1)%N; rest_KB-1

    tensor cores (a warp-level MMA), copies c_0, c_1, ... largest first:
    iteration i:  loads_1; c_0; rest_0
                  loads_2; c_1; commit; rest_1                   (KB >= 3)
                  loads_{j+1}; rest_j                            (1 < j < KB-1)
                  wait_group(W); barrier; loads_0 of stage (i+1)%N; rest_KB-1

The copies spread over blocks 0 .. KB-2 (ceil(#copies / (KB-1)) per block; all
in block 0 when KB = 2). Why the orders differ: ptxas keeps cp.async and
ldmatrix, both on shared memory, in program order. With the copies first,
ptxas hoisted block 0's MMAs above them and left block 1's ldmatrix after
them, right before the MMAs that read them (gemm_auto NT 128x256x64: block
1's first MMA stalled on them, 7% of the k-loop's warp samples under ncu);
CuTe's sgemm_sm80 order, loads first, then spreading the copies and the
larger first, measured 0.58 → 0.59 → 0.60x cuBLAS (docs/notes/2026-11-28-k-loop-schedule.md). For
FMA loops the copies first keep sgemm_pipeline_pass at 107 registers (126
with the loads first). Every K-block's loads and copies touch disjoint stages.

This needs KB >= 2 blocks, and is done only when the registers that
``loads_{j+1}`` touches are disjoint from those ``rest_j`` touches (and those
of ``loads_0`` from ``rest_{KB-1}``), computed from the fragments' static
layouts. The barrier argument holds: the last reads of stage (i-1)%N are the
loads of block KB-1 of iteration i-1, before that iteration's barrier. The
wait too: the producer of iteration i commits before its wait, N+i groups in
all, and stage (i+1)%N is group i+1's, complete after it, in the last
iteration as well (it then holds a stand-in tile; the registers go unused).

*Epilogue.* Up to N-2 groups (stand-in tiles) may be in flight after the loop.
Nobody reads them; when code after the loop touches shared memory, a
``wait_group(0)`` and a barrier come first (unless the code after the loop
begins with that pair, as the whole-tensor gemm's epilogue does).

After the pass, a use of the one-stage tensor outside the loop sees stage 0.
Two pipelined loops over the same shared tensors (a stream-K gemm's whole-tile
and split-tile mainloops) share its stages: the first loop stages the buffer,
the second uses those stages (and must have as many).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from cutec.analysis.bounds import mask_type
from cutec.analysis.shared_plan import VIEW_OPS, smem_root
from cutec.atoms.mma import mma_atom_named
from cutec.diagnostics import CompileError, InternalCompilerError
from cutec.ir.attributes import UnitAttr
from cutec.ir.builder import Builder
from cutec.ir.core import Block, BlockArgument, Operation, Value
from cutec.ir.dialects import arith, gpu, scf, thread
from cutec.ir.dialects import cute as C
from cutec.ir.dialects.builtin import KernelOp, ModuleOp
from cutec.ir.dialects.cute_attrs import UNDERSCORE, TupleAttr
from cutec.ir.dialects.cute_types import DYN, LayoutSpec, TensorType
from cutec.ir.layout_of import LayoutAnalysis
from cutec.ir.traits import AddressSpace, EffectKind, Pure
from cutec.ir.types import IndexType, IntegerType, dtype_of
from cutec.layout import ComposedLayout, Layout, cosize, size
from cutec.layout.layout import append
from cutec.layout.symbolic import is_static
from cutec.passes.manager import Pass, working_on

# Stage strides are multiples of this many bytes (shared buffers are 128-byte aligned).
STAGE_ALIGN_BYTES = 128

_SHARED = (AddressSpace.SHARED, AddressSpace.GENERIC)
_SYNC = (C.CopyAsyncOp, thread.CpAsyncCommitOp, thread.CpAsyncWaitOp, gpu.BarrierOp)


def _error(what: str, op: Operation) -> CompileError:
    return CompileError(f"cannot pipeline this loop: {what}", op.location)


def _is_pure(op: Operation) -> bool:
    return op.has_trait(Pure) and not op.regions


# --------------------------------------------------------------------------- analysis


@dataclass
class _Plan:
    """What the loop body is made of, in body order."""

    loop: scf.ForOp
    stages: int
    buffers: list[C.AllocSmemOp]  # the shared tensors the producer writes
    producer: list[Operation]  # copy_async and the non-pure ops building them (predicates)
    compute: list[Operation]  # the non-pure ops after the first barrier
    blocks: list[tuple[list[Operation], list[Operation]]] | None = None  # (loads, rest)
    # Each block's loads split into the copies and the conversions of what they load;
    # made at analysis (`_is_s2r` asks for the plan's buffers, which the rewrite replaces).
    split: list[tuple[list[Operation], list[Operation]]] = field(default_factory=list)


def analyse(loop: scf.ForOp, stages: int, la: LayoutAnalysis) -> _Plan:
    """Split the body into producer and compute; errors name what does not fit."""
    body = loop.body
    ops = [op for op in body.ops if not isinstance(op, scf.YieldOp)]
    first = next((i for i, op in enumerate(ops) if isinstance(op, gpu.BarrierOp)), None)
    if first is None:
        raise _error(
            "its body must publish the copied tiles with sync() before computing on them", loop
        )
    pre, post = ops[:first], ops[first + 1 :]
    # The compute's barriers order its shared reads before the next copy, which the
    # pipeline's own barrier does; one before other compute would also order that
    # compute's global writes, which the pipeline does not keep.
    inner = [op for op in post[:-1] if isinstance(op, gpu.BarrierOp)]
    post = [op for op in post if not isinstance(op, gpu.BarrierOp)]
    if inner and not all(_writes_only_registers(n) for op in post for n in op.walk()):
        raise _error("a sync() between its computations orders their memory writes", inner[0])
    copies = [op for op in pre if isinstance(op, C.CopyAsyncOp)]
    buffers: list[C.AllocSmemOp] = []
    for copy in copies:
        dst = copy.dst.type
        if not isinstance(dst, TensorType) or dst.space is not AddressSpace.SHARED:
            raise _error("it copies asynchronously into memory other than shared", copy)
        root = smem_root(copy.dst)
        if root is None:
            raise _error("the copy's destination is not a view of a 'smem' tensor", copy)
        if root not in buffers:
            buffers.append(root)
    if not buffers:
        raise _error("it has no cp.async copy into shared memory before its first sync()", loop)
    producer = _producer(loop, pre, copies)
    for op in post:
        _check_compute(op, loop)
    compute = [op for op in post if not _is_pure(op)]
    plan = _Plan(loop, stages, buffers, producer, compute)
    plan.blocks = _blocks(plan, la)
    plan.split = [_split_loads(plan, loads) for loads, _ in plan.blocks or []]
    return plan


def _producer(loop: scf.ForOp, pre: list[Operation], copies: list[Operation]) -> list[Operation]:
    """The copies and every op before the barrier that they need (their predicates)."""
    body, in_pre = loop.body, set(pre)
    chosen: set[Operation] = set()
    work = list(copies)
    while work:
        op = work.pop()
        if op in chosen:
            continue
        chosen.add(op)
        for v in op.operands:
            if isinstance(v, BlockArgument) and v.owner is body and v is not loop.induction_var:
                raise _error("its copies depend on a value the loop carries", op)
            owner = v.owner
            if isinstance(owner, Operation) and owner.parent is body:
                if owner not in in_pre:
                    raise _error("its copies depend on a value computed after the sync()", op)
                work.append(owner)
        if isinstance(op, C.MakeFragmentOp):  # a predicate tensor: its stores belong too
            work.extend(u.owner for u in op.result.uses if u.owner.parent is body)
    for op in pre:
        if op in chosen or _is_pure(op):
            continue
        if isinstance(op, thread.CpAsyncCommitOp | thread.CpAsyncWaitOp):
            continue  # replaced by the pipeline's own
        raise _error(
            f"before its first sync() only the cp.async copies and what they need may run, "
            f"not '{op.name}'",
            op,
        )
    for op in chosen:
        if op.regions or not (
            _is_pure(op)
            or isinstance(op, C.CopyAsyncOp | C.MakeFragmentOp)
            or _writes_only_registers(op)
        ):
            raise _error(f"'{op.name}' cannot be issued ahead with the copies", op)
        if not _is_pure(op):
            for r in op.results:
                used = any(u.owner not in chosen and u.owner.parent is body for u in r.uses)
                if used and not isinstance(op, C.CopyAsyncOp):
                    raise _error("the compute uses a value the copies make", op)
    return [op for op in pre if op in chosen and not _is_pure(op)]


def _writes_only_registers(op: Operation) -> bool:
    effects = op.memory_effects()
    return effects is not None and all(
        e.space is AddressSpace.REGISTER for e in effects if e.kind is EffectKind.WRITE
    )


def _check_compute(op: Operation, loop: scf.ForOp) -> None:
    for nested in op.walk():
        if isinstance(nested, _SYNC):
            raise _error(
                f"after its first sync() the body computes; '{nested.name}' there is the "
                "pipeline's to place",
                nested,
            )
        effects = nested.memory_effects()
        if effects and any(
            e.kind is EffectKind.WRITE and e.space in (AddressSpace.SHARED, AddressSpace.GENERIC)
            for e in effects
        ):
            raise _error("its compute writes shared memory, which the stages would race", nested)


# --------------------------------------------------------------------------- K-blocks


def _reads_staged(op: Operation, plan: _Plan) -> bool:
    for nested in op.walk():
        for v in nested.operands:
            t = v.type
            shared = isinstance(t, TensorType) and t.space is AddressSpace.SHARED
            if shared and smem_root(v) in plan.buffers:
                return True
    return False


def _is_s2r(op: Operation, plan: _Plan) -> bool:
    if not isinstance(op, C.CopyOp | C.CopyIfOp):
        return False
    dst = op.dst.type
    return (
        isinstance(dst, TensorType)
        and dst.space is AddressSpace.REGISTER
        and smem_root(op.src) in plan.buffers
    )


def _blocks(
    plan: _Plan, la: LayoutAnalysis
) -> list[tuple[list[Operation], list[Operation]]] | None:
    """The compute as K-blocks (loads, rest), when double-buffering them is exact."""
    blocks: list[tuple[list[Operation], list[Operation]]] = []
    for op in plan.compute:
        if _is_s2r(op, plan):
            if not blocks or blocks[-1][1]:
                blocks.append(([], []))
            blocks[-1][0].append(op)
        elif blocks and not blocks[-1][1] and _rewrites_loaded(la, op, blocks[-1][0]):
            blocks[-1][0].append(op)  # a conversion of the loaded registers moves with them
        else:
            if not blocks or _reads_staged(op, plan):
                return None  # compute that reads a stage other than through registers
            blocks[-1][1].append(op)
    if len(blocks) < 2 or not _loads_movable(plan, blocks):
        return None
    try:
        touched = [(_registers(la, loads), _registers(la, rest)) for loads, rest in blocks]
    except _Unknown:
        return None
    for j in range(len(blocks)):
        nxt = touched[(j + 1) % len(blocks)][0]
        if _overlap(nxt, touched[j][1]):
            return None
    return blocks


def _rewrites_loaded(la: LayoutAnalysis, op: Operation, loads: list[Operation]) -> bool:
    """Whether `op` only reads and rewrites registers that `loads` (a K-block's loads,
    so far) wrote, or fragments made among them: gemm_tiled's in-place tf32 rounding,
    ``copy(tf32(tCrA[_, _, k]), tCrA[_, _, k])``. It then belongs to the loads, and the
    double-buffering moves it ahead with them (left in the rest of the block, it kept
    the raw and the rounded registers live together: ptxas spilled)."""
    if not all(_writes_only_registers(n) for n in op.walk()):
        return False
    made = {r for load in loads for r in load.results}
    try:
        loaded, mine = _registers(la, loads), _registers(la, [op])
    except _Unknown:
        return False
    return all(
        root in made or (root in loaded and elems <= loaded[root]) for root, elems in mine.items()
    )


def _split_loads(plan: _Plan, loads: list[Operation]) -> tuple[list[Operation], list[Operation]]:
    """A K-block's loads: the copies into registers, and the conversions of what they
    loaded (`_rewrites_loaded`), which are emitted after the previous block's rest.
    Right behind the loads, each conversion waited for its ld.shared ahead of that
    block's MMAs: gemm_auto tf32 NT 0.72x cuBLAS there, 0.77x after the rest (128x256x32
    on an H200, 2026-11-29)."""
    ahead = [op for op in loads if _is_s2r(op, plan)]
    return ahead, [op for op in loads if not _is_s2r(op, plan)]


def _loads_movable(plan: _Plan, blocks: list[tuple[list[Operation], list[Operation]]]) -> bool:
    """The loads depend on nothing in the body but pure ops (which move with them)."""
    body = plan.loop.body
    for loads, _ in blocks:
        group = set(loads)  # (a conversion's fragment is made among the loads)
        work = [v for op in loads for v in op.operands]
        seen: set[Value] = set()
        while work:
            v = work.pop()
            if v in seen:
                continue
            seen.add(v)
            carried = isinstance(v, BlockArgument) and v.owner is body
            if carried and v is not plan.loop.induction_var:
                return False
            owner = v.owner
            if isinstance(owner, Operation) and owner.parent is body and owner not in group:
                if not _is_pure(owner):
                    return False
                work.extend(owner.operands)
    return True


class _Unknown(Exception):
    """A register tensor whose elements are not known at compile time."""


def _registers(la: LayoutAnalysis, ops: list[Operation]) -> dict[Value, set[int]]:
    """The register elements each fragment root has that `ops` may read or write."""
    out: dict[Value, set[int]] = {}
    for op in ops:
        for nested in op.walk():
            for v in nested.operands:
                t = v.type
                if not isinstance(t, TensorType) or t.space is not AddressSpace.REGISTER:
                    continue
                try:
                    root, offset, layout = la.address_of(v)
                    n = size(layout)
                    if not isinstance(offset, int) or not isinstance(n, int):
                        raise _Unknown
                    elems = {offset + int(layout(i)) for i in range(n)}
                except _Unknown:
                    raise
                except Exception as e:  # a layout the analysis cannot evaluate
                    raise _Unknown from e
                out.setdefault(root, set()).update(elems)
    return out


def _overlap(a: dict[Value, set[int]], b: dict[Value, set[int]]) -> bool:
    return any(root in b and elems & b[root] for root, elems in a.items())


# --------------------------------------------------------------------------- rewrite


def staged_type(t: TensorType, stages: int) -> TensorType:
    """The type of `stages` copies of a static shared tensor: a last mode (stages):(D),
    D the cosize rounded up to 128 bytes and, when swizzled, to the swizzle's span
    (so every stage has the same swizzle pattern)."""
    layout = t.spec.with_values(())
    inner = layout.layout_b if isinstance(layout, ComposedLayout) else layout
    align = max(1, STAGE_ALIGN_BYTES * 8 // _bits(t))
    if isinstance(layout, ComposedLayout):
        sw = layout.layout_a
        align = max(align, 1 << (sw.bits + sw.base + abs(sw.shift)))
    span = cosize(inner)
    stride = -(-span // align) * align
    staged = append(inner, Layout(stages, stride))
    if isinstance(layout, ComposedLayout):
        staged = ComposedLayout(layout.layout_a, layout.offset, staged)
    return TensorType(t.element, t.space, LayoutSpec.of(staged))


def _bits(t: TensorType) -> int:
    return dtype_of(t.element).bits


@dataclass
class _Emitter:
    """Clones body ops into a new place for one k-tile and one stage.

    `env` maps the old loop's values to the new ones. A pure op of the old body is
    cloned where its value is first needed; a view of a staged tensor made outside
    the loop is cloned on top of this stage's slice.
    """

    b: Builder
    body: Block
    stage_roots: dict[Value, tuple[Value, int, TensorType]]  # stage-0 slice -> (full, rank, type)
    staged: set[Value]  # values outside the loop that view a staged tensor
    env: dict[Value, Value]
    stage: int | Value = 0
    base: dict[Value, Value] = field(default_factory=dict)  # the env before any clone

    def __post_init__(self) -> None:
        self.base = dict(self.env)

    def child(self, b: Builder, iv: Value, stage: int | Value, old_iv: Value) -> _Emitter:
        """An emitter for another tile and stage: nothing cloned here is reused there."""
        env = {**self.base, old_iv: iv}
        return _Emitter(b, self.body, self.stage_roots, self.staged, env, stage)

    def resolve(self, v: Value) -> Value:
        if v in self.env:
            return self.env[v]
        if v in self.stage_roots:
            full, rank, t = self.stage_roots[v]
            new = self.b.insert(_stage_slice(full, rank, t, self.stage)).result
        else:
            owner = v.owner
            if not isinstance(owner, Operation):
                return v
            in_body = owner.parent is self.body
            if not (in_body and _is_pure(owner)) and v not in self.staged:
                if in_body:
                    raise InternalCompilerError(f"pipeline: {owner.name} is used before it runs")
                return v
            new_op = self._clone(owner)
            new = new_op.results[v.index]  # type: ignore[attr-defined]
        self.env[v] = new
        return new

    def emit(self, op: Operation) -> Operation:
        return self._clone(op)

    def _clone(self, op: Operation) -> Operation:
        for v in _outer_operands(op):
            self.resolve(v)
        return self.b.insert(op.clone(self.env))


def _outer_operands(op: Operation) -> Iterator[Value]:
    """The operands of `op` and of its nested ops that are defined outside `op`."""
    inside: set[Value] = set()
    for nested in op.walk():
        for region in nested.regions:
            for block in region.blocks:
                inside.update(block.args)
        inside.update(nested.results)
    for nested in op.walk():
        for v in nested.operands:
            if v not in inside:
                yield v


def _stage_slice(full: Value, rank: int, t: TensorType, stage: int | Value) -> C.SliceOp:
    if isinstance(stage, int):
        coord = TupleAttr((UNDERSCORE,) * rank + (stage,))
        return C.SliceOp(full, [], t, coord)
    return C.SliceOp(full, [stage], t, TupleAttr((UNDERSCORE,) * rank + (DYN,)))


@dataclass
class _Index:
    """Index arithmetic at a builder, folding constants."""

    b: Builder
    consts: dict[int, Value] = field(default_factory=dict)

    def const(self, n: int) -> Value:
        if n not in self.consts:
            self.consts[n] = self.b.insert(arith.constant(n, IndexType())).result
        return self.consts[n]

    def add(self, a: Value, n: int) -> Value:
        c = _constant(a)
        if c is not None:
            return self.const(c + n)
        return a if n == 0 else self.b.insert(arith.AddIOp(a, self.const(n))).result

    def wrap(self, a: Value, delta: int, n: int) -> Value:
        """``(a + delta) mod n`` for a stage ``0 <= a < n`` and ``delta`` in {1, -1}, as a
        compare and a select (a remainder by 3 is a multiply-high and two more ops)."""
        edge, back = (n - 1, 0) if delta == 1 else (0, n - 1)
        at_edge = self.b.insert(arith.CmpIOp("eq", a, self.const(edge))).result
        return self.select(at_edge, self.const(back), self.add(a, delta))

    def less(self, a: Value, b: Value) -> Value:
        return self.b.insert(arith.CmpIOp("slt", a, b)).result

    def select(self, cond: Value, a: Value, b: Value) -> Value:
        return self.b.insert(arith.SelectOp(cond, a, b)).result


def _constant(v: Value) -> int | None:
    owner = v.owner
    if isinstance(owner, arith.ConstantOp):
        value = getattr(owner.value, "value", None)
        return value if isinstance(value, int) else None
    return None


def _zero_fill(em: _Emitter, producer: list[Operation], la: LayoutAnalysis) -> None:
    """The producer's cp.async copies for `em`'s tile and stage with every element
    masked off (zfill): the stage's buffers become zeros, no global byte is read."""
    for op in producer:
        if not isinstance(op, C.CopyAsyncOp):
            continue
        src, dst = em.resolve(op.src), em.resolve(op.dst)
        pred = em.b.insert(C.MakeFragmentOp(mask_type(la.layout_of(src)))).result
        em.b.insert(C.FillOp(pred, em.b.insert(arith.constant(0, IntegerType(1))).result))
        copy = em.b.insert(C.CopyAsyncOp(op.tiled, src, dst, pred))
        copy.attributes.update(op.attributes)
        copy.attributes["zfill"] = UnitAttr()


def publish(b: Builder, stages: int) -> None:
    """Wait for the oldest tile in flight and publish it to the CTA: at most
    stages-2 groups stay pending, then the one barrier of the k-tile."""
    b.insert(thread.CpAsyncWaitOp([], stages - 2))
    b.insert(gpu.BarrierOp())


# A buffer an earlier loop staged: its stage count, its stage-0 slice (which the old
# buffer's uses now see), the old rank and type.
Staged = dict[C.AllocSmemOp, tuple[int, Value, int, TensorType]]


def rewrite(plan: _Plan, la: LayoutAnalysis, done: Staged | None = None) -> None:
    loop, n = plan.loop, plan.stages
    loc = loop.location
    done = {} if done is None else done
    # Stage the buffers: every old use sees stage 0 (the same type as before). A
    # buffer another pipelined loop staged already (two k-loops over the same shared
    # tiles, as a stream-K gemm's) keeps its stages.
    stage_roots: dict[Value, tuple[Value, int, TensorType]] = {}
    for alloc in plan.buffers:
        if alloc in done:
            stages, stage0_value, rank, t = done[alloc]
            if stages != n:
                raise _error(
                    f"it pipelines a shared buffer another loop pipelines over {stages} "
                    f"stages, with {n}",
                    loop,
                )
            stage_roots[stage0_value] = (alloc.result, rank, t)
            continue
        t = alloc.result.type
        assert isinstance(t, TensorType)
        b = Builder.after(alloc)
        full = b.insert(C.AllocSmemOp(staged_type(t, n)))
        full.result.name_hint = alloc.result.name_hint
        rank = _rank(t)
        stage0 = b.insert(_stage_slice(full.result, rank, t, 0))
        _check_slice_type(stage0, t)
        alloc.result.replace_all_uses_with(stage0.result)
        alloc.erase()
        stage_roots[stage0.result] = (full.result, rank, t)
        done[full] = (n, stage0.result, rank, t)
    staged = _views_of(stage_roots)

    old_iv, lb, ub, step = loop.induction_var, loop.lb, loop.ub, loop.step
    step_c = _constant(step)
    if step_c is None:
        raise _error("its step must be a compile-time constant", loop)
    b = Builder.before(loop, loc)
    idx = _Index(b)
    em = _Emitter(b, loop.body, stage_roots, staged, {})
    # Prologue: tiles 0 .. n-2 into stages 0 .. n-2, one group each. With fewer
    # tiles, stage s >= tiles gets tile 0 again (never read); with none, nothing
    # is copied. (One branch around all of them: ptxas 13.0 gave sgemm_tn 170
    # registers instead of 128 with one branch per stage.)
    guard = b.insert(scf.IfOp(idx.less(lb, ub), with_else=True))
    then = Builder.at_end(guard.then_block, loc)
    ti = _Index(then)
    for s in range(n - 1):
        k = ti.add(lb, s * step_c)
        if s:
            k = ti.select(ti.less(k, ub), k, lb)
        producer = em.child(then, k, s, old_iv)
        for op in plan.producer:
            producer.emit(op)
        then.insert(thread.CpAsyncCommitOp([]))
    then.insert(scf.YieldOp())
    orelse = Builder.at_end(guard.else_block, loc)  # type: ignore[arg-type]
    if plan.blocks:
        # No tile: stage 0 gets zeros, which the unguarded register loads below read
        # (and never use), so that they read no uninitialised shared memory. The
        # copies of tile 0 with every element masked write them: cp.async with
        # src-size 0 reads nothing, and stores as the real copies do (16 bytes,
        # conflict-free), where a plain clear would store 16-bit elements 4 at a time.
        _zero_fill(em.child(orelse, lb, 0, old_iv), plan.producer, la)
    for _ in range(n - 1):
        orelse.insert(thread.CpAsyncCommitOp([]))
    orelse.insert(scf.YieldOp())
    if plan.blocks:
        # Block 0 of tile 0 into registers, unguarded: with no tile the loop does not
        # run and the values are never used. (Under an scf.if, whatever its other
        # side, ptxas re-paired the f16 fragment halves with PRMTs every k-tile:
        # hgemm_pipeline_pass had 417 SASS instructions per k-tile and 201
        # registers, 344 and 168 without it.)
        publish(b, n)
        child = em.child(b, lb, 0, old_iv)
        for op in plan.blocks[0][0]:
            child.emit(op)

    attrs = {k: v for k, v in loop.attributes.items() if k != scf.PIPELINE_STAGES}
    # One more carried value: the stage iteration i reads, i mod n, stepped by a
    # compare and select (as CuTe's smem_pipe_read) rather than divided out of k.
    new = b.insert(scf.ForOp(lb, ub, step, [*loop.inits, idx.const(0)], attrs or None))
    new.location = loc
    new.induction_var.name_hint = old_iv.name_hint
    bb = Builder.at_end(new.body, loc)
    env = {old: arg for old, arg in zip(loop.body.args, new.body.args, strict=False)}
    k = new.induction_var
    bi = _Index(bb)
    read = new.body.args[-1]
    read.name_hint = "stage"
    body_em = _Emitter(bb, loop.body, stage_roots, staged, env, read)

    producer_em: _Emitter | None = None  # the copies' tile and stage, made once

    def issue(ops: list[Operation], commit: bool = True) -> None:
        nonlocal producer_em
        # Tile i+n-1 into stage (i+n-1)%n; past the end, tile i again (in bounds, and
        # into a stage no later iteration reads): no branch around the copies, so the
        # invariant part of their addresses leaves the loop.
        if producer_em is None:
            ahead = bi.add(k, (n - 1) * step_c)
            tile = bi.select(bi.less(ahead, ub), ahead, k)
            producer_em = body_em.child(bb, tile, bi.wrap(read, -1, n), old_iv)
        for op in ops:
            producer_em.emit(op)
        if commit:
            bb.insert(thread.CpAsyncCommitOp([]))

    def wait() -> None:
        publish(bb, n)

    next_stage: Value | None = None
    if not plan.blocks:
        wait()
        issue(plan.producer)
        for op in plan.compute:
            body_em.emit(op)
    else:
        kb = len(plan.blocks)
        # The copies each of blocks 0 .. KB-2 issues, and whether before that block's
        # loads (FMA) or after them (tensor cores); see the docstring.
        tensor_cores = _warp_mma(plan)
        parts = _spread_copies(plan, la) if tensor_cores else [plan.producer]
        for j in range(kb):
            # Block j+1's loads go above block j's rest, their conversions after it.
            ahead, converts = plan.split[(j + 1) % kb]
            if j == kb - 1:
                wait()
                # Block 0 of tile i+1, from the stage of group i+1 (landed by this
                # wait; in the last iteration a stand-in tile, loaded and unused).
                next_stage = bi.wrap(read, 1, n)
                loads = body_em.child(bb, bi.add(k, step_c), next_stage, old_iv)
                for op in ahead:
                    loads.emit(op)
            else:
                loads = body_em
                part = parts[j] if j < len(parts) else []
                if part and not tensor_cores:
                    issue(part, commit=j == len(parts) - 1)
                for op in ahead:
                    body_em.emit(op)
                if part and tensor_cores:
                    issue(part, commit=j == len(parts) - 1)
            for op in plan.blocks[j][1]:
                body_em.emit(op)
            for op in converts:
                loads.emit(op)
    term = loop.body.terminator
    if next_stage is None:
        next_stage = bi.wrap(read, 1, n)
    bb.insert(scf.YieldOp([*(body_em.resolve(v) for v in term.operands), next_stage]))
    for old_r, new_r in zip(loop.results, new.results, strict=False):
        old_r.replace_all_uses_with(new_r)
    loop.erase()
    if _shared_after(new) and not _drained_after(new):
        after = Builder.after(new, loc)
        after.insert(thread.CpAsyncWaitOp([], 0))
        after.insert(gpu.BarrierOp())


def _warp_mma(plan: _Plan) -> bool:
    """Whether the compute's MMA is a warp-level (tensor-core) instruction."""
    for op in plan.compute:
        for nested in op.walk():
            if isinstance(nested, C.GemmOp) and nested.mma is not None:
                atom = mma_atom_named(nested.mma.type.atom)
                if atom is not None and atom.num_threads > 1:
                    return True
    return False


def _spread_copies(plan: _Plan, la: LayoutAnalysis) -> list[list[Operation]]:
    """The producer split over K-blocks 0 .. KB-2: one part per block, each copy with
    the predicate fragment it reads, the copies moving the most elements first;
    the whole producer in block 0 when a copy's ops cannot be told apart."""
    assert plan.blocks is not None
    copies = [op for op in plan.producer if isinstance(op, C.CopyAsyncOp)]
    parts = len(plan.blocks) - 1
    if parts < 2 or len(copies) < 2:
        return [plan.producer]
    owner: dict[Operation, C.CopyAsyncOp] = {c: c for c in copies}
    fragments = {c.pred: c for c in copies if c.pred is not None}
    for op in plan.producer:
        if op in owner:
            continue
        users = {fragments[v] for v in (*op.results, *op.operands) if v in fragments}
        if len(users) != 1:
            return [plan.producer]  # an op no copy, or several, reads
        owner[op] = users.pop()
    sizes = {c: size(la.layout_of(c.dst)) for c in copies}  # shared stages: static
    if not all(is_static(n) for n in sizes.values()):
        return [plan.producer]
    ranked = sorted(copies, key=lambda c: -int(sizes[c]))  # stable: ties keep their order
    per = -(-len(ranked) // parts)
    out = []
    for i in range(0, len(ranked), per):
        chosen = set(ranked[i : i + per])
        out.append([op for op in plan.producer if owner[op] in chosen])
    return out


def _shared_after(loop: scf.ForOp) -> bool:
    """Whether code after the loop may touch shared memory (inside another loop or a
    branch, conservatively yes: the code before it may run after it)."""
    if not isinstance(loop.parent_op, KernelOp):
        return True
    return any(
        (effects := nested.memory_effects()) is None or any(e.space in _SHARED for e in effects)
        for later in _following(loop)
        for nested in later.walk()
    )


def _drained_after(loop: scf.ForOp) -> bool:
    """Whether the loop is followed right away by ``cp_async_wait 0`` and a barrier
    (the whole-tensor gemm's epilogue begins so): a second pair would wait for nothing."""
    wait = loop.next_op
    return (
        isinstance(wait, thread.CpAsyncWaitOp)
        and wait.pending.value == 0
        and isinstance(wait.next_op, gpu.BarrierOp)
    )


def _following(op: Operation) -> Iterator[Operation]:
    later = op.next_op
    while later is not None:
        yield later
        later = later.next_op


def _rank(t: TensorType) -> int:
    shape = t.spec.shape
    return len(shape) if isinstance(shape, tuple) else 1


def _check_slice_type(op: C.SliceOp, t: TensorType) -> None:
    full = op.source.type
    assert isinstance(full, TensorType)
    got = LayoutSpec.of(C.SliceOp.infer_layout(full.spec.with_values(()), op.attributes))
    if got != t.spec:
        raise InternalCompilerError(f"pipeline: a stage of {full} is {got}, not {t.spec}")


def _views_of(roots: dict[Value, tuple[Value, int, TensorType]]) -> set[Value]:
    """Every value that views a stage-0 slice through view ops."""
    out: set[Value] = set()
    work = list(roots)
    while work:
        v = work.pop()
        for use in v.uses:
            owner = use.owner
            if isinstance(owner, VIEW_OPS) and owner.operands[0] is v:
                for r in owner.results:
                    if r not in out:
                        out.add(r)
                        work.append(r)
    return out


@dataclass
class Pipeline(Pass):
    """Software-pipeline the loops annotated ``pipeline(stages = N)``."""

    name = "pipeline"
    summary = "multistage cp.async software pipeline of loops annotated pipeline(stages = N)"

    def run(self, module: ModuleOp) -> None:
        loops = [
            op for op in module.walk()
            if isinstance(op, scf.ForOp) and scf.PIPELINE_STAGES in op.attributes
        ]  # fmt: skip
        done: Staged = {}
        analyses = self.analyses
        for loop in loops:
            with working_on(loop):
                stages = loop.attributes[scf.PIPELINE_STAGES].value  # type: ignore[attr-defined]
                # The layouts stay valid through a rewrite: staging a buffer keeps its
                # views' layouts, and the pass reads no shared tensor's address or
                # symbol, only register addresses at constant offsets and the shapes
                # of copies.
                la = analyses.get(LayoutAnalysis, loop)
                plan = analyse(loop, stages, la)
                rewrite(plan, la, done)
                how = (
                    f"registers double-buffered over {len(plan.blocks)} K-blocks"
                    if plan.blocks
                    else "no register double-buffering"
                )
                self.remark(f"pipelined over {stages} shared-memory stages ({how})", loop.location)
