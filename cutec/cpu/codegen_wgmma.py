"""Warp code of the wgmma family (cutec/ir/dialects/thread_wgmma.py; the semantics and
checks are `cutec.cpu.wgmma`'s, run by the warp-op hook, `cutec.cpu.native_wgmma`).

* **Accumulator registers.** Each accumulator web (`wgmma.AccumulatorWebs`: a
  wgmma's accumulator, the loop-carried values and region results that hand it
  on) has one frame slot per component, which all its tied values share: the
  registers the lowering ties together. The wgmma itself (`codegen_collective`)
  stores its input words, calls the hook (the issue) and fills its result slots
  with 0xFF bytes; ``thread.wgmma_wait`` calls the hook, which writes each
  completed wgmma's D words into the slots of its webs in this warp's frame, and
  the warp reloads them (its cached registers of those slots are dropped).
* **Batch ops and checks.** ``thread.wgmma_fence / commit / wait`` need all 32
  lanes (else a divergent collective, as for mma.sync) and call the hook (a wait
  is a resume point, as an mbarrier wait: the warp returns while the rest of its
  warpgroup has not committed the group it waits for); so
  does ``thread.fence_proxy_async`` (with the live lanes in scratch row 0; it is an
  mbarrier init fence too, `cutec.cpu.native_mbarrier`) and
  every op that reads or writes an accumulator register (the hook checks that
  no wgmma in flight writes it, and notes the access for the wgmma_fence rule).
* ``thread.gmma_desc`` is native: the pointer's buffer gives its base in the
  shared window (`wgmma.shared_window`, a constant per buffer), and the
  descriptor is the op's constant fields or'd with the address >> 4; an address
  not 16-byte aligned or past the 14-bit field, or not in shared memory, fails.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cutec.cpu import wgmma
from cutec.cpu.codegen_mbarrier import NOT_READY, call_warp_hook
from cutec.cpu.lanes import (
    ERR_COLLECTIVE,
    ERR_DESC,
    OFFSET_BITS,
    Loc,
    Unsupported,
    components,
    scalar_type,
    splat,
    vec,
)
from cutec.ir.core import Operation
from cutec.ir.dialects import thread

if TYPE_CHECKING:
    from cutec.cpu.codegen import _Gen

WGMMA_HANDLERS: dict[str, object] = {}


def assign_web_slots(g: _Gen, webs: wgmma.AccumulatorWebs) -> list[list[tuple[int, str]]]:
    """Give each web one slot per component, shared by its tied values; per web, its
    (slot, LLVM type) components (for the runner, which writes D there)."""
    out = []
    for members in webs.tied:
        if len({v.type for v in members}) > 1:  # one slot per component: one type
            types = ", ".join(sorted({str(v.type) for v in members}))
            raise Unsupported(f"accumulator registers of different types ({types})")
        elem, n = components(members[0].type)
        ty = scalar_type(elem)
        slots = [g.new_slot(ty) for _ in range(n)]
        for v in members:
            for i, slot in enumerate(slots):
                g.locs[(v, i)] = Loc(slot, None, ty)
        out.append([(slot, ty) for slot in slots])
    return out


def call_hook(g: _Gen, op: Operation, mask: str | None = None) -> str:
    """Call the warp-op hook for `op` (`mask`: the live lanes, in scratch row 0); a
    failure in it (an exception, raised again by the runner) returns 2. The hook's
    return code (0, or NOT_READY at a wgmma_wait)."""
    i64 = vec("i64")
    if mask is not None:
        row = g.op(f"getelementptr [{g.collective_rows} x {i64}], ptr %wscratch, i64 0, i64 0")
        live = g.op(f"zext {vec('i1')} {mask} to {i64}")
        g.emit(f"store {i64} {live}, ptr {row}, align 64")
    return call_warp_hook(g, op)


def _full_mask(g: _Gen, op: Operation) -> None:
    """Every lane of the warp must be here (a warpgroup instruction is .sync.aligned)."""
    mask = g.mask_now()
    if mask not in g.full_masks:
        dead = g.op(f"xor {vec('i1')} {mask}, {splat(1, 'i1')}")
        g.fail_if(dead, g.op_index(op), ERR_COLLECTIVE)
        g.full_masks.add(mask)


def _batch(g: _Gen, op: Operation) -> None:
    _full_mask(g, op)
    call_hook(g, op)


def _wait(g: _Gen, op: thread.WgmmaWaitOp) -> None:
    """A resume point, as an mbarrier wait: the warp returns NOT_READY while the rest of
    its warpgroup has not committed the groups (the runner calls it again later)."""
    _full_mask(g, op)
    g.barriers.append(op)
    state = len(g.barriers)
    g.branch(f"br label %resume{state}")
    g.label(f"resume{state}")
    rc = call_hook(g, op)
    wait, go = g.fresh("wait"), g.fresh("go")
    g.emit(f"br i1 {g.op(f'icmp eq i32 {rc}, {NOT_READY}')}, label %{wait}, label %{go}")
    g.label(wait, keep_cache=True)
    g.emit(f"store i32 {state}, ptr %frame, align 64")
    g.emit(f"ret i32 {NOT_READY}")
    g.label(go, keep_cache=True)
    assert g.web_slots is not None
    for slots in g.web_slots:  # the hook wrote D into the web slots
        for slot, _ in slots:
            g.st.cache.pop(slot, None)


def _proxy_fence(g: _Gen, op: Operation) -> None:
    """An mbarrier init fence too (cutec.cpu.mbarrier): the hook runs both."""
    if g.uses_warp_hook:  # else the kernel has no mbarrier and no wgmma
        call_hook(g, op, g.mask_now())


def access(g: _Gen, op: Operation) -> None:
    """`op` reads or writes accumulator registers: the hook checks it."""
    call_hook(g, op, g.mask_now())


_INT_OF = {"half": "i16", "bfloat": "i16", "float": "i32", "double": "i64"}


def poison(g: _Gen, op: thread.AtomOp) -> None:
    """The wgmma's results hold 0xFF bytes until its wait."""
    for r in op.outs:
        elem, n = components(r.type)
        ty = scalar_type(elem)
        ity = _INT_OF.get(ty, ty)
        bits = splat(-1, ity)
        value = bits if ty == ity else g.op(f"bitcast {vec(ity)} {bits} to {vec(ty)}")
        for i in range(n):
            g.define(r, i, value)


def _gmma_desc(g: _Gen, op: thread.GmmaDescOp) -> None:
    i64 = vec("i64")
    ptr = g.get(op.ptr)
    high = g.op(f"shl {i64} {ptr}, {splat(64 - OFFSET_BITS, 'i64')}")
    off = g.op(f"ashr {i64} {high}, {splat(64 - OFFSET_BITS, 'i64')}")
    ids = g.op(f"lshr {i64} {g.op(f'sub {i64} {ptr}, {off}')}, {splat(OFFSET_BITS, 'i64')}")
    base = splat(-1, "i64")  # not a shared buffer
    for k, entry in enumerate(g.window):
        here = g.op(f"icmp eq {i64} {ids}, {splat(g.num_ptr + k, 'i64')}")
        base = g.op(f"select {vec('i1')} {here}, {i64} {splat(entry.base, 'i64')}, {i64} {base}")
    addr = g.op(f"add {i64} {base}, {off}")
    bad = g.op(f"icmp slt {i64} {base}, zeroinitializer")
    low = g.op(f"and {i64} {addr}, {splat(15, 'i64')}")
    for cond in (f"icmp ne {i64} {low}, zeroinitializer",
                 f"icmp sge {i64} {addr}, {splat(wgmma.WINDOW_LIMIT, 'i64')}",
                 f"icmp slt {i64} {addr}, zeroinitializer"):  # fmt: skip
        bad = g.op(f"or {vec('i1')} {bad}, {g.op(cond)}")
    bad = g.op(f"and {vec('i1')} {bad}, {g.mask_now()}")
    g.fail_if(bad, g.op_index(op), ERR_DESC, [ids, addr])
    fields = op.descriptor(0).encode()
    fields -= (fields >> 63) << 64  # as a signed i64 constant
    shifted = g.op(f"lshr {i64} {addr}, {splat(4, 'i64')}")
    g.define(op.result, 0, g.op(f"or {i64} {shifted}, {splat(fields, 'i64')}"))


WGMMA_HANDLERS.update({
    "thread.wgmma_fence": _batch, "thread.wgmma_commit": _batch, "thread.wgmma_wait": _wait,
    "thread.fence_proxy_async": _proxy_fence, "thread.gmma_desc": _gmma_desc,
})  # fmt: skip
