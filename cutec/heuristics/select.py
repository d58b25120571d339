"""Choosing the instruction of an ``auto`` atom: one pure function per kind of choice.

The frontend types a tiled object with the atom these functions choose (an MMA's
fragments and an ldmatrix copy's partitions depend on the atom, so they must be
right from the start) and records the `Choice` on its make op, which the
select-atoms pass says in a remark; the pass calls `select_global_copy` itself.
Each returns a `Choice`: the atom's CuTe name (or ``auto`` where the answer is
"plain loads and stores, width by vectorize") and the reasons.

* `select_mma`: ``mma.sync`` m16n8k16 for f16/bf16 (f32 or f16 accumulators as
  the C type says), m16n8k8 for tf32 (a kernel allows tf32 by declaring its A
  and B operands ``tf32``: f32 operands never lose precision silently), m16n8k32
  for s8; otherwise the ``UniversalFMA`` of the element type. Hopper's wgmma is
  not chosen yet: on sm_90a the choice is mma.sync.
* `select_operand_copy`: shared memory → registers of an MMA operand
  (``tiled_copy_A/B(auto, mma)``): ldmatrix ``x4``/``x2``/``x1``, ``.trans``
  for MN-major 16-bit operands, where each lane's 16-byte row is contiguous and
  16-byte aligned in the shared layout; else ``auto`` (ld.shared).
* `select_global_copy`: global → shared memory: cp.async of 16 bytes
  (``.cg``), else 8 or 4 bytes (``.ca``: the PTX ISA allows ``.cg`` for 16 bytes
  only), ``_ZFILL`` where masked elements become zeros; else ``auto``
  (UniversalCopy). The caller supplies the layouts' verdict (`Contiguity`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

from cutec.atoms.copy import copy_atom
from cutec.atoms.copy_record import CopyAtomError
from cutec.atoms.copy_sm75 import matrix_name
from cutec.atoms.copy_sm80 import cp_async
from cutec.atoms.mma import mma_atom_named
from cutec.atoms.tiled_copy import make_copy_atom, make_tiled_copy_A, make_tiled_copy_B
from cutec.atoms.tiled_mma import TiledMMA
from cutec.layout import (
    ComposedLayout,
    DynamicValueError,
    Layout,
    LayoutError,
    coalesce,
    composition,
    logical_divide,
    size,
)
from cutec.layout.inttuple import flatten_to_tuple
from cutec.layout.symbolic import is_static, known_divisible, known_residue
from cutec.target import Feature, Target

AUTO = "auto"  # the same spelling as the IR's (cutec.ir.dialects.cute_atom_types.AUTO)
WARP = 32
LDMATRIX_ROW_BYTES = 16  # each lane names one 16-byte row of an 8x8 matrix


class SelectionError(ValueError):
    """No atom can do what the kernel asks (the caller locates it)."""


@dataclass(frozen=True)
class Choice:
    """An atom and why: `summary` says what it is, `ruled_out` what better was not taken."""

    atom: str
    summary: str
    ruled_out: tuple[str, ...] = field(default=())

    def remark(self) -> str:
        return "; ".join((self.summary, *self.ruled_out))


# --------------------------------------------------------------------------- MMA

# (A, B, C) element types -> the SM80 mma.sync atom (D = C), best first per row.
TENSOR_CORE_MMA: dict[tuple[str, str, str], str] = {
    ("f16", "f16", "f32"): "SM80_16x8x16_F32F16F16F32_TN",
    ("f16", "f16", "f16"): "SM80_16x8x16_F16F16F16F16_TN",
    ("bf16", "bf16", "f32"): "SM80_16x8x16_F32BF16BF16F32_TN",
    ("tf32", "tf32", "f32"): "SM80_16x8x8_F32TF32TF32F32_TN",
    ("s8", "s8", "s32"): "SM80_16x8x32_S32S8S8S32_TN",
}

# Why element types with no tensor-core row above are not given one.
_NO_TENSOR_CORE = {
    "f32": "mma.sync not used: f32 operands have no tensor-core instruction (declare A and B "
    "tf32 to allow mma.sync m16n8k8 with tf32's 10-bit mantissa)",
    "f64": "mma.sync not used: the f64 m8n8k4 is taken only when named",
}


def select_mma(
    target: Target,
    d: str,
    a: str,
    b: str,
    c: str,
    atom_layout: Layout,
    threads: int | None,
) -> Choice:
    """The MMA atom for D = A * B + C with these element types (see the module docstring).

    `atom_layout` is the TiledMMA's layout of atoms over (M, N, K); `threads` the
    kernel's block size (None: not known), which must run every atom's threads.
    """
    ruled_out: list[str] = []
    name = TENSOR_CORE_MMA.get((a, b, c)) if d == c else None
    if name is not None:
        record = mma_atom_named(name)
        assert record is not None
        atoms = int(size(atom_layout))
        need = atoms * record.num_threads
        if not target.has(Feature.MMA_SYNC) or not target.runs(record.min_target):
            ruled_out.append(f"{name} not used: {target.name} has no {record.min_target} mma.sync")
        elif threads is not None and need > threads:
            ruled_out.append(
                f"{name} not used: {atoms} atoms of {record.num_threads} threads need "
                f"{need} threads, the kernel runs {threads}"
            )
        else:
            hopper = []
            if target.has(Feature.WGMMA):
                hopper = ["wgmma not used: select-atoms does not choose Hopper's wgmma yet"]
            m, n, k = record.shape_mnk
            return Choice(name, f"MMA by {name} (mma.sync m{m}n{n}k{k}, {_types(d, a, b, c)})",
                          tuple(hopper))  # fmt: skip
    elif a in _NO_TENSOR_CORE:
        ruled_out.append(_NO_TENSOR_CORE[a])
    else:
        ruled_out.append(f"mma.sync not used: no tensor-core atom takes {_types(d, a, b, c)}")
    if d == a == b == c:
        fma = mma_atom_named("UniversalFMA_" + d.upper() * 4)
        if fma is not None:
            return Choice(fma.name, f"MMA by {fma.name} (one thread's fma)", tuple(ruled_out))
    raise SelectionError(
        f"no MMA atom computes {_types(d, a, b, c)} on {target.name}: "
        + "; ".join(ruled_out)
        + " (and UniversalFMA needs one element type for D, A, B and C)"
    )


def _types(d: str, a: str, b: str, c: str) -> str:
    return f"D {d} = A {a} * B {b} + C {c}"


# --------------------------------------------------------------------------- smem -> rmem


def select_operand_copy(
    target: Target,
    mma: TiledMMA,
    which: str,
    bits: int,
    layout: Layout | ComposedLayout,
    shared: bool,
) -> Choice:
    """The copy atom of ``tiled_copy_A/B(auto, mma)`` reading `layout` (see the module).

    `layout` is the tensor the copy's partition_S reads (`shared`: in shared memory),
    `bits` its element width. ldmatrix needs each lane's row of 16 bytes contiguous
    and 16-byte aligned: checked on the partition of every thread.
    """
    plain = "copy by ld.shared (UniversalCopy, width by vectorize)"
    if which not in "AB":
        return Choice(AUTO, plain, (f"ldmatrix not used: it loads A and B, not {which}",))
    if not shared:
        return Choice(AUTO, "copy by UniversalCopy", ("ldmatrix not used: it reads shared memory",))
    if not target.has(Feature.LDMATRIX):
        return Choice(AUTO, plain, (f"ldmatrix not used: {target.name} has none",))
    ruled_out: list[str] = []
    for trans in (False, True):
        if trans and bits != 16:
            ruled_out.append(
                f"ldmatrix .trans not used: it transposes 16-bit elements, not {bits}-bit ones"
            )
            continue
        for num in (4, 2, 1):
            name = matrix_name("LDSM", num, trans)
            why = _ldmatrix_problem(mma, which, name, bits, layout)
            if why is None:
                kind = "MN-major, .trans" if trans else "K-major"
                summary = f"copy by {name} (ldmatrix.x{num}, {kind} {which})"
                return Choice(name, summary, tuple(shorten(ruled_out)))
            ruled_out.append(f"{name} not used: {why}")
    return Choice(AUTO, plain, tuple(shorten(ruled_out)))


def shorten(reasons: list[str]) -> list[str]:
    """Options tried in turn often fail for one reason: say it once, for the first."""
    out: list[str] = []
    seen: set[str] = set()
    for r in reasons:
        why = r.split(": ", 1)[-1]
        if why not in seen:
            seen.add(why)
            out.append(r)
    return out


@lru_cache(maxsize=512)
def _ldmatrix_problem(
    mma: TiledMMA, which: str, name: str, bits: int, layout: Layout | ComposedLayout
) -> str | None:
    """Why ldmatrix `name` cannot read operand `which` of `mma` from `layout`, or None.

    Memoised: a kernel asks the same question for each K-block's copy of a fragment
    (and tiles, partitions and composes layouts to answer it)."""
    make = make_tiled_copy_A if which == "A" else make_tiled_copy_B
    try:
        tiled = make(make_copy_atom(copy_atom(name), bits), mma)
    except (LayoutError, CopyAtomError) as e:
        if "too few vals" in str(e):
            return f"a thread's {which} fragment holds fewer values than it loads"
        if "too few thrs" in str(e):
            return f"the MMA's atom spreads {which} over fewer threads than a warp's 32"
        return f"the MMA's {which} fragment does not fit it ({e})"
    n = LDMATRIX_ROW_BYTES * 8 // bits  # elements of one lane's row
    swizzle, offset, inner = None, 0, layout
    if isinstance(layout, ComposedLayout):
        swizzle, offset, inner = layout.layout_a, layout.offset, layout.layout_b
        if n > 1 << swizzle.base:
            return f"the swizzle {swizzle} moves blocks of {1 << swizzle.base} elements"
    try:
        tiler = tuple(int(x) for x in tiled.tiler_mn)
        if inner.rank < len(tiler):
            return f"the tensor {layout} has fewer modes than its tile {tiler}"
        for mode, extent in enumerate(tiler):
            have = size(inner, mode)
            if not is_static(have) or int(have) % extent:
                return f"its tile {tiler} does not divide the tensor {layout}"
        frg = tiled.tidfrg_S(inner)  # (Thr, (FrgV, FrgX), Rest)
        row = coalesce(composition(frg[1], Layout(n)))
        rest_strides = [
            *flatten_to_tuple(frg[0].stride),
            *flatten_to_tuple(logical_divide(frg[1], Layout(n))[1].stride),
            *flatten_to_tuple(frg[2].stride),
        ]
    except (LayoutError, DynamicValueError) as e:
        return f"the layout {layout} cannot be partitioned for it ({e})"
    if row != Layout(n, 1):
        return f"a lane's {n} elements are {row} in {inner}, not contiguous"
    for s in [*rest_strides, offset]:
        if not (known_divisible(s, n) or known_residue(s, n) == 0):
            return f"a lane's row does not start 16-byte aligned (stride or offset {s})"
    return None


# --------------------------------------------------------------------------- gmem -> smem


def cp_async_cache(nbytes: int) -> str:
    """The cache operator of an `nbytes` cp.async: ``cg`` (L2 only, past the L1 that a
    copy into shared memory does not need) where the PTX ISA allows it, 16 bytes; else
    ``ca``."""
    return "cg" if nbytes == 16 else "ca"


# Contiguity(p) says why p elements cannot move as one access on both sides, or None.
Contiguity = Callable[[int], "str | None"]


def select_global_copy(
    target: Target,
    bits: int,
    contiguity: Contiguity,
    *,
    predicated: bool = False,
    zfill: bool = False,
    waited: bool = True,
) -> tuple[Choice, int]:
    """cp.async (16, 8 or 4 bytes) for a global → shared copy, and its elements per access.

    `predicated`: a copy_if, whose predicate is per element (an access moves one);
    `zfill`: masked elements become zeros (the ``_ZFILL`` atoms); `waited`: a
    cp_async_fence and cp_async_wait follow the copy (else its data would never
    be waited for). An ``auto`` choice leaves the width to vectorize.
    """
    plain = "copy by UniversalCopy"
    if not target.has(Feature.CP_ASYNC):
        return Choice(AUTO, plain, (f"cp.async not used: {target.name} has none",)), 0
    if not waited:
        reason = (
            "cp.async not used: no cp_async_fence() and cp_async_wait() follow this copy "
            "(a plain copy is complete when it returns)"
        )
        return Choice(AUTO, plain, (reason,)), 0
    ruled_out: list[str] = []
    for nbytes in (16, 8, 4):
        if bits > 8 * nbytes or (8 * nbytes) % bits:
            continue
        p = 8 * nbytes // bits
        cache = cp_async_cache(nbytes)
        atom = cp_async(8 * nbytes, cache, zfill).name
        if predicated and p > 1:
            ruled_out.append(
                f"{nbytes}-byte cp.async not used: a predicated copy tests each element's "
                f"predicate, {p} elements would share one"
            )
            continue
        why = contiguity(p) if p > 1 else None  # one element is aligned to its own size
        if why is None:
            note = "; zero-fills masked elements" if zfill else ""
            summary = f"copy by {atom} (cp.async.{cache}, {nbytes} bytes{note})"
            return Choice(atom, summary, tuple(shorten(ruled_out))), p
        ruled_out.append(f"{nbytes}-byte cp.async not used: {why}")
    return Choice(AUTO, plain, tuple(shorten(ruled_out))), 0


__all__ = [
    "AUTO",
    "TENSOR_CORE_MMA",
    "Choice",
    "SelectionError",
    "cp_async_cache",
    "select_global_copy",
    "select_mma",
    "select_operand_copy",
    "shorten",
]
