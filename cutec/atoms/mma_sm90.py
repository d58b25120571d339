"""Hopper `wgmma.mma_async` atoms: a warpgroup (128 threads) computes 64xNxK, N = 8..256 step 8.

Layouts are CuTe's mma_traits_sm90_gmma.hpp. Operands read from shared memory
(A in SS atoms, B always) pass a 64-bit GMMA descriptor, and their TV layout is
CuTe's ABLayout: a stride-0 thread mode, since every thread names the whole tile.
The major-ness of a shared-memory operand is not in the TV layouts but in the
instruction's transpose immediates (and the descriptor's canonical layout).
Names follow CuTe with the majors as a suffix: A is T when K-major, B is N when
K-major, so `_TN` is K-major for both.
"""

from __future__ import annotations

import functools

from cutec.atoms.family import Family
from cutec.atoms.mma_record import Major, MmaAtom
from cutec.atoms.ptx_template import Operand, PtxTemplate
from cutec.dtypes import dtype
from cutec.layout import Layout
from cutec.target import target

WARPGROUP = Layout(128)
GMMA_N = tuple(range(8, 257, 8))

# Register-sourced A by element width: lane 4g+q of warp w holds rows 16w+g and 16w+g+8;
# the value mode walks the 32-bit words of K (PTX ISA, wgmma register fragment A).
A_RS = {
    32: Layout(((4, 8, 4), (2, 2)), ((64, 1, 16), (8, 256))),
    16: Layout(((4, 8, 4), (2, 2, 2)), ((128, 1, 16), (64, 8, 512))),
    8: Layout(((4, 8, 4), (4, 2, 2)), ((256, 1, 16), (64, 8, 1024))),
}


def c_layout_64xn(n: int) -> Layout:
    """(T128, V n/2) -> m + 64 n: the 64x8 accumulator pattern repeated n/8 times along N."""
    return Layout(((4, 8, 4), (2, 2, n // 8)), ((128, 1, 16), (64, 8, 512)))


def ab_layout(mn: int, k: int) -> Layout:
    """(T128, (MN,K)) -> mn + k*MN with stride-0 threads: a descriptor names the whole tile."""
    return Layout((128, (mn, k)), (0, (1, mn)))


def _suffix(a_major: Major, b_major: Major) -> str:
    return ("T" if a_major == "K" else "N") + ("N" if b_major == "K" else "T")


def _wgmma(n: int, d: str, a: str, b: str, src: str, a_major: Major, b_major: Major) -> MmaAtom:
    """One wgmma atom: D(64xn) += A(64xk) · B(nxk)ᵀ, A from smem (SS) or registers (RS)."""
    bits = dtype(a).bits
    k = 256 // bits  # one instruction consumes 32 bytes of K
    # f16 accumulators are packed two to a b32 register.
    d_op = Operand("d", "f32", n // 2) if d == "f32" else Operand("d", "b32", n // 4)
    a_op = Operand("a", "b64") if src == "SS" else Operand("a", "b32", 4)
    ops = (d_op, a_op, Operand("b", "b64"), Operand("scale_d", "pred"))
    # Immediates: scale-a, scale-b (+1), then the transpose flags that 16-bit types take
    # (imm-trans-a only for a shared-memory A): 0 = K-major, 1 = MN-major.
    imms = ["1", "1"]
    if bits == 16:
        if src == "SS":
            imms.append("0" if a_major == "K" else "1")
        imms.append("0" if b_major == "K" else "1")
    text = (
        f"wgmma.mma_async.sync.aligned.m64n{n}k{k}.{d}.{a}.{b} "
        f"$d, $a, $b, $scale_d, {', '.join(imms)};"
    )
    types = f"{d}{a}{b}".upper()
    return MmaAtom(
        name=f"SM90_64x{n}x{k}_{types}_{src}_{_suffix(a_major, b_major)}",
        family=Family.WGMMA,
        min_target=target("sm_90a"),
        shape_mnk=(64, n, k),
        d_type=d,
        a_type=a,
        b_type=b,
        c_type=d,
        thr_id=WARPGROUP,
        a_layout=ab_layout(64, k) if src == "SS" else A_RS[bits],
        b_layout=ab_layout(n, k),
        c_layout=c_layout_64xn(n),
        ptx=PtxTemplate(text, ops),
        a_major=a_major,
        b_major=b_major,
        a_in_smem=src == "SS",
        b_in_smem=True,
    )


def _family(n: int) -> list[MmaAtom]:
    rows = []
    for d, ab in (("f16", "f16"), ("f32", "f16"), ("f32", "bf16")):
        for src in ("SS", "RS"):
            for a_major in ("K", "MN"):
                if src == "RS" and a_major == "MN":
                    continue  # registers hold A K-major only
                for b_major in ("K", "MN"):
                    rows.append(_wgmma(n, d, ab, ab, src, a_major, b_major))
    for src in ("SS", "RS"):
        # 32- and 8-bit types exist K-major only.
        rows.append(_wgmma(n, "f32", "tf32", "tf32", src, "K", "K"))
        for d in ("f32", "f16"):
            for a in ("e4m3", "e5m2"):
                for b in ("e4m3", "e5m2"):
                    rows.append(_wgmma(n, d, a, b, src, "K", "K"))
    return rows


def name_over_n(atom: MmaAtom) -> str:
    """`atom`'s name with N left open, naming its row of every N:
    ``SM90_64xNx16_F32F16F16_SS_TN``."""
    m, n, k = atom.shape_mnk
    return atom.name.replace(f"_{m}x{n}x{k}_", f"_{m}xNx{k}_", 1)


@functools.cache
def atoms() -> tuple[MmaAtom, ...]:
    """All wgmma atoms, generated over N."""
    return tuple(atom for n in GMMA_N for atom in _family(n))
