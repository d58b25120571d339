"""The heuristic of the `tile` expansion: how a whole-tensor GEMM on CTA tiles is
staged, copied and computed when the kernel states only the tile sizes.

`plan_gemm` is a pure function of the element bits, the operands' majorness, the
CTA tile and the copy widths `copy_bytes` allows; each choice comes with the
sentence the `tile` pass reports as a remark (docs/passes.md, *tile*). The atoms
themselves are left to select-atoms (`select.py`): the plan fixes what their choice depends on.

The choices, for a block of 4 warps (128 threads) or 8 (256: the kernel's
`threads` says which; a kernel without `threads` gets 8 when the tile holds 8 warps
of 64x64, else 4: `choose_threads`):

* **Shared-memory layout** of an operand tile: 128-byte rows along its contiguous
  mode (K for a K-major operand, M or N for an MN-major one), swizzled so that the
  8 rows of an ldmatrix (or of a row of cp.async stores) fall in distinct banks.
  A row of R bytes holds R/16 chunks of 16 bytes; rows are 8, and the swizzle
  Swizzle<B, M, 3> with 2^M elements in 16 bytes and 2^B = min(R/16, 8) XORs the
  row-index bits above one 128-byte line (bits M+3 ...) into the chunk bits
  (bits M ...): the minimum wavefronts (R = 128: CuTe's Swizzle<3,3,3> for 16-bit
  and Swizzle<3,2,3> for 32-bit elements).
* **gmem -> smem copy**: the widest cp.async the operand's facts allow (16 bytes,
  .cg; else 8 or 4 bytes, .ca): its contiguous extent, leading dimension and
  base alignment multiples of the vector (the predicate pass guards residues a
  vector at a time); the threads laid along the contiguous mode first, as many as
  one row of the tile holds (at most the block), the rest along the other mode.
* **TiledMMA**: 4 warps as 2x2 MMA atoms (M x N) tiled (32, 32, 16 bytes of K),
  CuTe's sgemm_sm80 `Tile<_32,_32,_16>`: each warp takes two n8 atoms side by
  side, so B's fragment is read by one ldmatrix.x4 as A's; each warp owns a
  (BM/2)x(BN/2) quarter of C. 8 warps are 2x4 atoms tiled (32, 64, 16 bytes), each
  warp a (BM/2)x(BN/4) eighth of C: half the accumulator registers per thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cutec.atoms.copy_sm80 import cp_async
from cutec.atoms.copy_universal import universal_copy
from cutec.heuristics.select import cp_async_cache
from cutec.layout import Layout
from cutec.layout.swizzle import ComposedLayout, Swizzle

THREADS = 128  # the default block: 4 warps, 2x2 mma.sync atoms
WARP_LAYOUTS = {128: (2, 2, 1), 256: (2, 4, 1)}  # threads -> MMA atoms (M, N, K) per CTA
COPY_BYTES = 16  # cp.async's widest access
LINE_BYTES = 128  # one shared-memory wavefront: 32 banks of 4 bytes


class TilePlanError(ValueError):
    """The tile cannot be planned; the message says which size to change."""


@dataclass(frozen=True)
class OperandPlan:
    """How one operand (A: (M,K), B: (N,K)) moves: its smem layout atom (rows of
    its contiguous mode), the copy's thread and value layouts, and why."""

    smem_atom: Layout | ComposedLayout
    thr: Layout
    val: Layout
    copy_atom: str  # the gmem -> smem atom: a cp.async, or UniversalCopy below 4 bytes
    remark: str
    asynchronous: bool = True  # a cp.async (False: `plain_copy`, through registers)


@dataclass(frozen=True)
class GemmPlan:
    a: OperandPlan
    b: OperandPlan
    warps: tuple[int, int, int]
    # the TiledMMA's (M, N, K) tile: warps of (16, 16, 16 bytes); M a layout that reorders
    # it for an M-major 32-bit A (_paired_rows)
    mma_tile: tuple[int | Layout, int, int]
    threads: int
    remark: str  # the MMA's warp layout and why


def copy_bytes(bits: int, divisible: Callable[[int], bool]) -> tuple[int, str]:
    """The widest cp.async (16, 8 or 4 bytes) an operand allows, and why not wider.

    `divisible(v)` says whether v elements may move under one predicate and one
    aligned access: the contiguous extent, the leading dimension and the base
    pointer's alignment all multiples of v elements (the caller asks the IR's
    facts). Raises TilePlanError when not even 4 bytes fit.
    """
    why = ""
    for nbytes in (16, 8, 4):
        v = nbytes * 8 // bits
        if v >= 1 and divisible(v):
            return nbytes, why
        why = why or f"; {nbytes}-byte copies not used: {v} elements are not known to align"
    if bits < 32:
        # cp.async moves at least 4 bytes: one element at a time through registers
        # (ld.global + st.shared), which the pipeline cannot issue ahead (`plain_copy`).
        return bits // 8, why + (
            f"; cp.async moves at least 4 bytes ({32 // bits} {bits}-bit elements): each "
            "element goes through a register, and the k-loop is not pipelined (assume the "
            "contiguous extent and the leading dimension are even to pipeline it)"
        )
    raise TilePlanError(
        f"no copy of the {bits}-bit elements fits: cp.async moves 4, 8 or 16 bytes, and "
        "their alignment is not known"
    )


def plain_copy(nbytes: int) -> bool:
    """Whether a copy of `nbytes` per thread (`copy_bytes`) is a plain, synchronous one."""
    return nbytes < 4


def _log2(n: int) -> int:
    return n.bit_length() - 1


def _is_pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def plan_operand(
    name: str,
    bits: int,
    k_major: bool,
    mn: int,
    bk: int,
    nbytes: int = COPY_BYTES,
    why: str = "",
    threads: int = THREADS,
) -> OperandPlan:
    """The plan of an (MN, K) operand tile of `bits`-bit elements, copied `nbytes`
    per cp.async (`why`: why not wider) by `threads` threads."""
    mn_name = "M" if name == "A" else "N"
    elems16 = COPY_BYTES * 8 // bits  # elements in 16 bytes
    contiguous = bk if k_major else mn
    width = min(contiguous, LINE_BYTES * 8 // bits)  # one row: at most 128 bytes
    if not _is_pow2(width) or width < elems16 or contiguous % width:
        along = "BK" if k_major else f"B{mn_name}"
        raise TilePlanError(
            f"the {'K' if k_major else mn_name}-major {name} tile needs {along} to be a "
            f"power of two times {elems16} (16 bytes of {bits}-bit elements), got {contiguous}"
        )
    row_bytes = width * bits // 8
    bbits = _log2(min(row_bytes // COPY_BYTES, 8))
    mbits = _log2(elems16)
    rows = Layout((8, width), (width, 1)) if k_major else Layout((width, 8), (1, width))
    swizzle, banks = (bbits, mbits, 3), "8 rows in distinct banks"
    if bits == 32 and not k_major and width == 32:
        # tf32 MN-major is read by ld.shared (ldmatrix .trans moves 16-bit elements):
        # lanes (g, t) read element (mn + g, k + t), word mn + g + 32 (k + t). XORing
        # k's low two bits into mn's bits 3-4 puts the 32 lanes in 32 banks (the
        # 128-byte-row swizzle, k's three bits into mn's bits 2-4, gives 16: 2-way);
        # the 16-byte chunks the copy writes stay whole.
        swizzle, banks = (2, 3, 2), "a warp's ld.shared of 8 rows by 4 columns in distinct banks"
    atom = rows if bbits == 0 else ComposedLayout(Swizzle(*swizzle), 0, rows)
    # Copy threads: one row of the tile's contiguous mode, then the other mode.
    vec = nbytes * 8 // bits
    along = min(contiguous // vec, threads)
    across = threads // along
    other = mn if k_major else bk
    if other % across:
        raise TilePlanError(
            f"{name}'s copy lays {across} threads across {'B' + mn_name if k_major else 'BK'} "
            f"= {other}, which they do not divide"
        )
    if k_major:
        thr, val = Layout((across, along), (along, 1)), Layout((1, vec))
    else:
        thr, val = Layout((along, across), (1, along)), Layout((vec, 1))
    major = "K" if k_major else f"{mn_name}"
    swz = "Swizzle<{},{},{}> o ".format(*swizzle) if bbits else ""
    remark = (
        f"{name} ({major}-major, {bits}-bit): shared tile of {swz}{rows} atoms "
        f"({row_bytes}-byte rows, {banks}); copied {nbytes} bytes "
        f"per thread by threads {thr}, values {val}{why}"
    )
    if plain_copy(nbytes):
        return OperandPlan(atom, thr, val, universal_copy(8 * nbytes).name, remark, False)
    copy = cp_async(8 * nbytes, cp_async_cache(nbytes)).name
    return OperandPlan(atom, thr, val, copy, remark)


def choose_threads(tile: tuple[int, int, int]) -> tuple[int, str]:
    """The block for a kernel that leaves it to its whole-tensor gemm: 8 warps (2x4) when
    the CTA tile has room for 8 warps of 64x64 (BM*BN >= 32768, BN a multiple of 64),
    else 4 (2x2); and why."""
    bm, bn, _ = tile
    if bm * bn >= 8 * 64 * 64 and bn % 64 == 0 and bm % 32 == 0:
        return 256, f"256 threads: the {bm}x{bn} tile holds 8 warps of 64x64 or more"
    return THREADS, f"128 threads: the {bm}x{bn} tile is too small for 8 warps of 64x64"


@dataclass(frozen=True)
class EpiloguePlan:
    """How the accumulators reach an M-major C: through a padded shared chunk of
    `chunk_n` columns, read back `vec` at a time (16 bytes) along M by threads `thr`."""

    vec: int
    chunk_n: int
    thr: Layout
    remark: str


def plan_epilogue(acc_bits: int, bm: int, plan: GemmPlan) -> EpiloguePlan:
    """The epilogue of a CTA tile with BM rows and `acc_bits`-bit accumulators: each
    thread holds its accumulators in pairs along N, which an M-major C cannot take as
    vectors, so a chunk of C (BM x the MMA tile's N) goes through shared memory and
    comes back as 16-byte vectors along M, the threads along M first."""
    vec = COPY_BYTES * 8 // acc_bits
    # One MMA tile along N: the warps' n8 atoms side by side cover 8 * warps_n
    # contiguous columns, twice (two indices of the accumulators' MMA_N mode).
    chunk_n = plan.mma_tile[1]
    along = bm // vec
    across = plan.threads // along
    if bm % vec or along > plan.threads or plan.threads % along or chunk_n % across:
        raise TilePlanError(
            f"the epilogue cannot lay {plan.threads} threads over a ({bm}, {chunk_n}) chunk "
            f"of C in {COPY_BYTES}-byte vectors along M"
        )
    thr = Layout((along, across), (1, along))
    remark = (
        f"epilogue: accumulators through a shared ({bm}, {chunk_n}) chunk of C padded by "
        f"{vec} per column, read back {COPY_BYTES} bytes along M by threads {thr}"
    )
    return EpiloguePlan(vec, chunk_n, thr, remark)


def _paired_rows(warps_m: int) -> Layout:
    """The MMA tile's M mode for an M-major 32-bit A, which ld.shared reads (ldmatrix
    .trans moves 16-bit elements only): a thread holds rows g and g + 8 of each m16 atom
    (g its lane / 4); the layout ``(8, 2, W) : (2, 1, 16)`` puts row g + 8h of warp w's
    atom at 16w + 2g + h, so a thread's two rows are adjacent and its loads of A take 8
    bytes (half as many, still one wavefront each). Measured on an H200 (2026-11-29,
    128x256x32, tf32 rounded): NN 0.52 -> 0.56x cuBLAS, NT 0.77 -> 0.80x. Reordering N
    for an N-major B the same way does not pair its loads (a thread holds one column
    per n8 atom; the pair would span the copy's MMA_N mode) and lost 2-6%."""
    return Layout((8, 2, warps_m), (2, 1, 16))


def plan_gemm(
    a_bits: int,
    b_bits: int,
    a_k_major: bool,
    b_k_major: bool,
    tile: tuple[int, int, int],
    a_copy: tuple[int, str] = (COPY_BYTES, ""),
    b_copy: tuple[int, str] = (COPY_BYTES, ""),
    threads: int = THREADS,
) -> GemmPlan:
    """The plan of a CTA tile (BM, BN, BK) for mma.sync on `threads` threads (128 or
    256); `a_copy` and `b_copy` are `copy_bytes`' answers for the operands."""
    if threads not in WARP_LAYOUTS:
        raise TilePlanError(
            f"the whole-tensor gemm runs on 128 or 256 threads (2x2 or 2x4 warps), not {threads}"
        )
    warps = WARP_LAYOUTS[threads]
    bm, bn, bk = tile
    atom_m, atom_n = 16 * warps[0], 16 * warps[1]  # warps of two m16n8 atoms side by side
    shape = f"{warps[0]}x{warps[1]}"
    if bm % atom_m or bn % atom_n:
        raise TilePlanError(
            f"the tile ({bm}, {bn}, {bk}) must be a multiple of ({atom_m}, {atom_n}) "
            f"for {shape} warps of mma.sync atoms"
        )
    a = plan_operand("A", a_bits, a_k_major, bm, bk, *a_copy, threads=threads)
    b = plan_operand("B", b_bits, b_k_major, bn, bk, *b_copy, threads=threads)
    remark = (
        f"CTA tile ({bm}, {bn}, {bk}) on {threads} threads: {shape} warps of MMA atoms "
        f"tiled ({atom_m}, {atom_n}, {256 // a_bits}), each warp a "
        f"{bm // warps[0]}x{bn // warps[1]} {'quarter' if threads == 128 else 'eighth'} of C"
    )
    # Each warp takes two n8 atoms side by side (CuTe's Tile<_32,_32,_16> for 16-bit
    # elements on 2x2 warps): a B fragment of 16x16 bytes, read by one ldmatrix.x4 like A's.
    mma_tile: tuple[int | Layout, int, int] = (atom_m, atom_n, 256 // a_bits)
    if a_bits == 32 and not a_k_major:
        mma_tile = (_paired_rows(warps[0]), atom_n, 256 // a_bits)
        remark += (
            f"; M reordered by {mma_tile[0]} so that each thread's two rows of an m16 atom "
            f"sit side by side (8-byte ld.shared of the M-major A)"
        )
    return GemmPlan(a, b, warps, mma_tile, threads, remark)
