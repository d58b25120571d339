"""The plan of the whole-tensor gemm's Hopper body (``lib/gemm_ws_sm90.cute``): a
warp-specialised kernel whose producer warpgroup loads A's and B's k-tiles by TMA and
whose consumer warpgroups multiply them by wgmma.

`plan_ws` is a pure function of the facts the planner has (`WsFacts`). It returns the
plan, or the sentence saying why the body does not serve this gemm (the planner then
keeps the mma.sync body and reports that sentence). The rules:

* **wgmma's operands**: 16-bit types (f16, bf16) in either majorness (the descriptor
  reads MN-major 16-bit tiles); f32 accumulators, or f16 ones for f16 operands. wgmma
  transposes 16-bit types only: a shared-memory tf32 operand must be K-major. An
  M-major tf32 A is read into registers instead (an RS wgmma: each consumer thread
  loads its fragment from the stage, any majorness); with an N-major tf32 B and a
  K-major A the body computes Cᵀ = B·Aᵀ, B in A's place (`swapped`); tf32 with both
  operands MN-major keeps the mma.sync body.
* **TMA**: a tensor map needs a 16-byte aligned base and strides that are multiples of
  16 bytes (the kernel's facts: `align 16`, ``ldA % 8 == 0`` for 16-bit types); the
  extents may be anything (out-of-bounds boxes read zeros).
* **Warpgroups**: one consumer warpgroup per 64 rows up to two (a wgmma is 64 rows), so
  BM is 64, 128 or 256; each consumer thread holds BM·BN / (128 · consumers)
  accumulators, at most 128 registers (the 232 a consumer takes less the addresses and
  loop state; 256 spill). With two consumers the producer gives registers back:
  setmaxnreg 40 / 232, 128 · (40 + 2 · 232) = 64,512 of the 65,536.
* **Shared memory**: per operand the widest GMMA swizzle atom (128, 64 or 32 bytes)
  whose contiguous extent divides the tile's (BK for a K-major operand, BM or BN for an
  MN-major one); the stages, S · (BM + BN) · BK elements, and their barriers within the
  target's shared memory.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from cutec.heuristics.tile_plan import TilePlanError

WARPGROUP = 128
MMA_M = 64  # rows of one wgmma
MAX_ACC_REGS = 128  # accumulator registers a consumer thread may hold
MAX_MMA_N = 256
PRODUCER_REGS = 40  # setmaxnreg with two consumers (CUTLASS's cooperative kernel's)
CONSUMER_REGS = 232
SWIZZLES = (128, 64, 32)  # GMMA layout atoms' swizzle widths, in bytes
BARRIER_BYTES = 16  # a stage's full and empty mbarriers
A_REGS_REMARK = (
    "A: each consumer thread loads its wgmma fragment from the stage into registers "
    "(wgmma reads a shared-memory tf32 operand K-major only)"
)
EPI_N = 32  # columns of C per chunk of the TMA epilogue (two buffers of BM x EPI_N)


@dataclass(frozen=True)
class WsFacts:
    """What the Hopper body's plan depends on: element and accumulator bits, whether
    the element type is f16 (f16 accumulation needs it), the operands' majorness,
    whether each may be read through a tensor map (`a_tma`, `b_tma`), the tile, stages,
    the block the kernel fixes (None: the plan's), the schedule ("tiles", "persistent"
    or "stream-K") and the target's shared memory per CTA."""

    bits: int
    acc_bits: int
    is_f16: bool
    a_k_major: bool
    b_k_major: bool
    a_tma: bool
    b_tma: bool
    tile: tuple[int, int, int]
    stages: int
    threads: int | None
    schedule: str
    smem_bytes: int
    epilogue: str = "registers"  # the gemm's `epilogue =`: "registers" or "tma"
    c_bits: int = 32
    c_tma_store: bool = False  # C M-major, and a store map may write it (16-byte rows)
    c_f32_or_f16: bool = True  # C's type has a wgmma accumulator of its own


@dataclass(frozen=True)
class WsPlan:
    """The Hopper body's choices: consumer warpgroups, the block, the wgmma atom, each
    operand's GMMA smem layout atom (``Layout_{MN,K}_SW{n}_Atom``), and the sentences."""

    consumers: int
    threads: int
    mma_atom: str
    a_smem_atom: str
    b_smem_atom: str
    remarks: tuple[str, ...]
    epi_tma: bool = False  # the epilogue through shared memory and TMA stores
    epi_n: int = EPI_N  # its chunk's columns
    epi_mma_atom: str = ""  # the 64 x epi_n wgmma whose C layout partitions a chunk
    a_regs: bool = False  # A read into registers (an RS wgmma), not by descriptor
    swapped: bool = False  # the body computes Cᵀ = B·Aᵀ: its A is B, its B is A


def _swizzle(extent: int, bytes_: int) -> int | None:
    """The widest GMMA swizzle whose row (of `extent` elements' bytes) divides the tile."""
    for sw in SWIZZLES:
        if sw % bytes_ == 0 and extent % (sw // bytes_) == 0:
            return sw
    return None


def _atom_name(k_major: bool, sw: int) -> str:
    return f"Layout_{'K' if k_major else 'MN'}_SW{sw}_Atom"


def plan_ws(f: WsFacts) -> WsPlan | str:
    """The Hopper body's plan for `f`, or why the body does not serve it; raises
    TilePlanError when it would but the stages do not fit in shared memory."""
    if f.schedule == "stream-K":
        return "a stream-K gemm runs on the mma.sync body"
    if f.bits not in (16, 32):
        return f"{f.bits}-bit operands"
    if f.bits == 32 and not (f.a_k_major or f.b_k_major):
        return (
            "tf32 operands are both MN-major: wgmma reads a shared-memory tf32 operand "
            "K-major only (it transposes 16-bit types only)"
        )
    for name, ok in (("A", f.a_tma), ("B", f.b_tma)):
        if not ok:
            return (
                f"{name} cannot be read through a tensor map: TMA needs a 16-byte aligned base "
                "and a leading dimension of a multiple of 16 bytes (the kernel's 'align 16' "
                "and an assume, or a launch's facts: the JIT's specialisation, `cutec "
                "compile --divisible/--aligned`)"
            )
    if f.bits == 32 and not f.b_k_major:
        # Cᵀ = B·Aᵀ: B, M-major as the body's A, goes through registers.
        swapped = replace(f, a_k_major=False, b_k_major=True, a_tma=f.b_tma, b_tma=f.a_tma,
                          c_tma_store=False)  # fmt: skip
        plan = plan_ws(swapped)
        if isinstance(plan, str):
            return f"{plan} (in Cᵀ = B·Aᵀ, whose A is B: tf32 with an N-major B)"
        why = (
            "tf32 with an N-major B: the body computes Cᵀ = B·Aᵀ (B as its A, read into "
            f"registers; the {f.tile[0]}x{f.tile[1]} tile is Cᵀ's)"
        )
        return replace(plan, swapped=True, remarks=(why, *plan.remarks))
    bm, bn, bk = f.tile
    a_regs = f.bits == 32 and not f.a_k_major
    if f.acc_bits == 16 and not f.is_f16:
        return "16-bit accumulators need f16 operands"
    if bm not in (MMA_M, 2 * MMA_M, 4 * MMA_M):
        return f"BM = {bm}: the Hopper body takes 64, 128 or 256 rows (64 per wgmma)"
    if bn % 8 or bn > MAX_MMA_N:
        return f"BN = {bn}: a wgmma's N is a multiple of 8 up to {MAX_MMA_N}"
    consumers = 1 if bm == MMA_M else 2
    threads = WARPGROUP * (consumers + 1)
    if f.threads is not None and f.threads != threads:
        return (
            f"the kernel runs {f.threads} threads; the Hopper body's {bm}-row tile needs "
            f"{threads} ({consumers} consumer warpgroups and a producer)"
        )
    acc_regs = bm * bn * f.acc_bits // (32 * WARPGROUP * consumers)
    if acc_regs > MAX_ACC_REGS:
        return (
            f"a {bm}x{bn} tile gives each consumer thread {acc_regs} accumulator registers, "
            f"more than {MAX_ACC_REGS}"
        )
    bytes_ = f.bits // 8
    k_per_mma = 32 // bytes_
    if bk % k_per_mma:
        return f"BK = {bk}: a wgmma consumes {k_per_mma} of K; BK must be a multiple"
    atoms = []
    for name, k_major, mn in (("A", f.a_k_major, bm), ("B", f.b_k_major, bn)):
        sw = _swizzle(bk if k_major else mn, bytes_)
        if sw is None or (not k_major and bk % 8):
            extent = "BK" if k_major else ("BM" if name == "A" else "BN")
            return f"{name}'s tile has no GMMA swizzle atom: {extent} is not a multiple of 32 bytes"
        atoms.append((_atom_name(k_major, sw), sw))
    smem = f.stages * ((bm + bn) * bk * bytes_ + BARRIER_BYTES)
    epi_tma, epi_why = _tma_epilogue(f, consumers)
    if epi_tma:
        smem += 2 * bm * EPI_N * f.c_bits // 8
    if smem > f.smem_bytes:
        raise TilePlanError(
            f"the Hopper body's {f.stages} stages of {bm}x{bn}x{bk} take {smem} bytes of "
            f"shared memory, more than the target's {f.smem_bytes}: use fewer stages or a "
            "smaller tile"
        )
    types = {16: "F16" if f.is_f16 else "BF16", 32: "TF32"}[f.bits]
    acc = "F32" if f.acc_bits == 32 else "F16"
    suffix = ("T" if f.a_k_major else "N") + ("N" if f.b_k_major else "T")
    # An RS atom's A is registers, K-major by name: the thread loads it, any majorness.
    src, suffix = ("RS", "T" + suffix[1]) if a_regs else ("SS", suffix)
    mma = f"SM90_64x{bn}x{k_per_mma}_{acc}{types}{types}_{src}_{suffix}"
    regs = (
        f"; setmaxnreg {PRODUCER_REGS} in the producer, {CONSUMER_REGS} in the consumers"
        if consumers == 2
        else ""
    )
    remarks = (
        f"warp specialisation: {threads} threads, {consumers} consumer warpgroup"
        f"{'s' if consumers > 1 else ''} of {bm // consumers}x{bn} ({acc_regs} accumulator "
        f"registers each) and a producer warpgroup whose elected thread issues the TMA "
        f"loads{regs}",
        f"stages: {f.stages} of {bm}x{bn}x{bk} ({smem} bytes of shared memory with their "
        "full/empty mbarriers)",
        *(
            f"{name} ({'K' if k else 'MN'}-major): TMA into GMMA.{atom} ({sw}-byte swizzle)"
            for name, k, (atom, sw) in (("A", f.a_k_major, atoms[0]), ("B", f.b_k_major, atoms[1]))
        ),
        *([A_REGS_REMARK] if a_regs else []),
        f"MMA by {mma} (wgmma.mma_async m64n{bn}k{k_per_mma})",
        epi_why,
    )
    # Only its C layout is used: a wgmma whose accumulators are C's type (f16 operands).
    epi_mma = f"SM90_64x{EPI_N}x16_{'F32' if f.c_bits == 32 else 'F16'}F16F16_SS_TN"
    return WsPlan(consumers, threads, mma, atoms[0][0], atoms[1][0], remarks, epi_tma,
                  EPI_N, epi_mma, a_regs)  # fmt: skip


def _tma_epilogue(f: WsFacts, consumers: int) -> tuple[bool, str]:
    """Whether the tile goes to C through shared memory and TMA stores (the gemm's
    `epilogue = "tma"`, for beta = 0), and the sentence saying how C is written."""
    registers = (
        "epilogue: each thread writes its accumulators to C with alpha and beta, "
        "predicated past M and N"
    )
    if f.epilogue != "tma":
        return False, registers
    bm, bn, _ = f.tile
    why = None
    if not f.c_tma_store:
        why = ("C must be M-major with a 16-byte aligned base, leading dimension and M "
               "(a TMA store writes whole 16-byte chunks)")  # fmt: skip
    elif bm != MMA_M * consumers:
        why = f"BM = {bm} puts two wgmmas' rows on a consumer"
    elif bn % EPI_N:
        why = f"BN = {bn} is not a multiple of the chunk's {EPI_N} columns"
    elif not f.c_f32_or_f16:
        why = "C must hold f32 or f16 (the chunk is partitioned by a wgmma of C's type)"
    if why is not None:
        return False, f"{registers} (not through TMA stores: {why})"
    return True, (
        f"epilogue: for beta = 0, through shared memory in chunks of {bm}x{EPI_N} (two "
        "buffers) and TMA stores; else from the registers with alpha and beta"
    )
