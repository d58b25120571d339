"""Hand-written thread-level wgmma kernels for the CPU backends, and their host side.

`Case` describes one warpgroup's product D(64 x N) = A(64 x K) · B(N x K)ᵀ made of
K / k wgmmas of one atom (one commit group). The host lays A and B out in the
bytes of one shared image (`Case.image`) with its own formulas for each major and
swizzle (CuTe's canonical GMMA layouts, written here from the PTX ISA's picture,
not from cutec's code); the kernel copies the image into shared memory with
generic stores, fences it to the async proxy, takes one descriptor per operand and
k-block, runs the wgmmas and stores each thread's accumulator registers in
register order. `Case.tile` reads D back with the accumulator fragment's own
formula (thread 32w + 4g + q holds rows 16w + g (+8), columns 8j + 2q (+1)).
`Case.kernel` takes replacements of its lines to plant bugs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cutec.atoms.emulate import pack_registers
from cutec.atoms.mma import mma_atoms
from cutec.atoms.mma_record import MmaAtom

_BYTES = {"f16": 2, "bf16": 2, "tf32": 4}
_WIDTH = {"none": 1, "32B": 2, "64B": 4, "128B": 8}  # 16-byte units per swizzle row
_NP = {"f16": np.float16, "tf32": np.float32}


def swizzle(addr: np.ndarray, name: str) -> np.ndarray:
    """Swizzle<log2 W, 4, 3>: the 16-byte chunk index ^= the 128-byte row index (mod W)."""
    w = _WIDTH[name]
    return addr ^ (((addr >> 7) % w) << 4)


@dataclass(frozen=True)
class Operand:
    """One operand's placement: a (MN x K) tile of `dtype` at byte `base` of the image."""

    major: str
    swizzle: str
    mn: int
    k: int
    dtype: str
    base: int

    @property
    def eb(self) -> int:
        return _BYTES[self.dtype]

    def lbo_sbo(self) -> tuple[int, int]:
        """The descriptor's byte offsets for this placement."""
        w, t = _WIDTH[self.swizzle], 16 // self.eb
        if self.major == "K":
            if self.swizzle == "none":  # core matrices 8 x 16 B, K-adjacent at 128 B
                return 128, 128 * (self.k * self.eb // 16)
            return 16, 8 * 16 * w  # LBO unused: one swizzle row holds the tile's K
        if self.swizzle == "none":  # core matrices T (MN) x 8 (K), MN-adjacent at 128 B
            return 128 * (self.mn // t), 128
        atom_bytes = 8 * 16 * w * (self.k // 8)  # one swizzle atom of MN, all of K
        return atom_bytes, 8 * 16 * w

    def byte(self, mn: np.ndarray, k: np.ndarray) -> np.ndarray:
        """The image byte of element (mn, k), after the swizzle."""
        w, t = _WIDTH[self.swizzle], 16 // self.eb
        lbo, sbo = self.lbo_sbo()
        if self.major == "K":
            if self.swizzle == "none":
                off = (mn // 8) * sbo + (mn % 8) * 16 + (k // t) * lbo + (k % t) * self.eb
            else:
                off = (mn // 8) * sbo + (mn % 8) * 16 * w + k * self.eb
        elif self.swizzle == "none":
            off = (mn % t) * self.eb + (mn // t) * sbo + (k % 8) * 16 + (k // 8) * lbo
        else:
            off = (mn % (t * w)) * self.eb + (mn // (t * w)) * lbo + (k % 8) * 16 * w \
                + (k // 8) * sbo  # fmt: skip
        return swizzle(self.base + off, self.swizzle)

    def size(self) -> int:
        mn, k = np.meshgrid(np.arange(self.mn), np.arange(self.k), indexing="ij")
        return int(self.byte(mn, k).max()) + self.eb - self.base

    def kblock_start(self, kb: int, kstep: int) -> int:
        """The byte offset (from `base`) of k-block `kb`'s descriptor: before the swizzle,
        the layout at (0, kb * kstep)."""
        t = 16 // self.eb
        lbo, sbo = self.lbo_sbo()
        k = kb * kstep
        if self.major == "K":
            return (k // t) * lbo if self.swizzle == "none" else k * self.eb
        return (k // 8) * (lbo if self.swizzle == "none" else sbo)


def _bits(values: np.ndarray, dtype: str) -> np.ndarray:
    """Little-endian bytes of `values` as `dtype` (bf16: the high half of f32)."""
    if dtype == "bf16":
        return (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16).view(np.uint8)
    return values.astype(_NP[dtype]).view(np.uint8)


@dataclass(frozen=True)
class Case:
    n: int
    ab: str = "f16"  # f16, bf16, tf32
    acc: str = "f32"  # f32 or f16
    a_major: str = "K"
    b_major: str = "K"
    a_swizzle: str = "128B"
    b_swizzle: str = "128B"
    kblocks: int = 2
    rs: bool = False
    loop: bool = False  # the k-blocks in an scf.for, one group each, waited with pending 1
    warpgroups: int = 1  # each computes the same D (its threads' registers in `out`)
    cp_async: bool = False  # the image lands by cp.async (16 bytes a copy), not stores

    @property
    def atom(self) -> MmaAtom:
        k = 256 // (8 * _BYTES[self.ab])
        ab = self.ab.upper() * 2
        majors = ("T" if self.a_major == "K" else "N") + ("N" if self.b_major == "K" else "T")
        name = f"SM90_64x{self.n}x{k}_{self.acc.upper()}{ab}_{'RS' if self.rs else 'SS'}_{majors}"
        return mma_atoms()[name]

    @property
    def threads(self) -> int:
        return 128 * self.warpgroups

    @property
    def k(self) -> int:
        return self.atom.shape_mnk[2] * self.kblocks

    def operands(self) -> tuple[Operand, Operand]:
        a = Operand(self.a_major, self.a_swizzle, 64, self.k, self.ab, 0)
        b_base = -(-a.size() // 1024) * 1024
        return a, Operand(self.b_major, self.b_swizzle, self.n, self.k, self.ab, b_base)

    def inputs(self, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """A (64 x K) and B (N x K), small integers over 4 (exact in every type)."""
        rng = np.random.default_rng(seed)
        a = rng.integers(-8, 9, (64, self.k)) / 4
        b = rng.integers(-8, 9, (self.n, self.k)) / 4
        return a, b

    def image(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The shared image (int32 words) with A and B placed; unused bytes 0."""
        oa, ob = self.operands()
        size = -(-(ob.base + ob.size()) // 1024) * 1024
        img = np.zeros(size, np.uint8)
        for op, x in ((oa, a), (ob, b)):
            mn, k = np.meshgrid(np.arange(op.mn), np.arange(op.k), indexing="ij")
            at = op.byte(mn, k)[..., None] + np.arange(op.eb)
            img[at] = _bits(x, self.ab).reshape(op.mn, op.k, op.eb)
        return img.view(np.int32)

    def a_registers(self, a: np.ndarray) -> np.ndarray:
        """RS: each thread's A register words per k-block, (kblocks, 128, 4) int32."""
        atom = self.atom
        k = atom.shape_mnk[2]
        out = []
        for kb in range(self.kblocks):
            tile = a[:, kb * k : (kb + 1) * k]
            from cutec.atoms.emulate import gather  # the record's A layout, as the lowering

            out.append(pack_registers(atom, "a", gather(atom, "a", tile)).astype(np.uint32))
        return np.stack(out).view(np.int32)

    def tile(self, out: np.ndarray, warpgroup: int = 0) -> np.ndarray:
        """D (64 x N) from the stored registers (threads x registers) of a warpgroup."""
        vals = out.view(np.float16) if self.acc == "f16" else out.view(np.float32)
        vals = vals.reshape(self.threads, self.n // 2)[128 * warpgroup :][:128]
        vals = vals.astype(np.float64)
        d = np.full((64, self.n), np.nan)
        for t in range(128):
            q, g, w = t % 4, t // 4 % 8, t // 32
            for v in range(self.n // 2):
                i, j, nb = v % 2, v // 2 % 2, v // 4
                d[g + 16 * w + 8 * j, 2 * q + i + 8 * nb] = vals[t, v]
        return d

    def kernel(self, replace: dict[str, str] | None = None, file: str = "wg.mlir") -> str:
        """The kernel's text; `replace` substitutes whole lines (by their text) to plant bugs."""
        atom = self.atom
        oa, ob = self.operands()
        nc = atom.fragment("d").count
        kstep = atom.shape_mnk[2]
        reg = "f32" if self.acc == "f32" else "i32"
        zero = "0.0 : f32" if self.acc == "f32" else "0 : i32"
        words = self.image(*self.inputs()).size
        el = {"f16": "f16", "bf16": "bf16", "tf32": "f32"}[self.ab]
        chunk = 4 if self.cp_async else 1  # i32 words a thread copies at a time
        lines = [
            f"  kernel @wg(%img: !gpu.ptr<i32, global>, %areg: !gpu.ptr<i32, global>, "
            f"%out: !gpu.ptr<{reg}, global>) attributes "
            f"{{reqntid = array<i32: {self.threads}, 1, 1>}} {{",
            f"    %s = thread.alloc_shared {{bytes = {4 * words} : i64, align = 1024 : i64}} "
            ": !gpu.ptr<i32, shared>",
            "    %tid = gpu.thread_id x : index",
            "    %t = arith.index_cast %tid : index to i32",
            f"    %cw = arith.constant {chunk} : i32",
            f"    %cstep = arith.constant {self.threads * chunk} : i32",
            f"    %nw = arith.constant {words} : i32",
            "    %first = arith.muli %t, %cw : i32",
            "    scf.for %i = %first to %nw step %cstep : i32 {",
            "      %src = thread.ptr_add %img, %i : !gpu.ptr<i32, global>, i32",
            "      %dst = thread.ptr_add %s, %i : !gpu.ptr<i32, shared>, i32",
            *(
                [
                    "      %tok = thread.cp_async %dst, %src {bytes = 16 : i32} : "
                    "!gpu.ptr<i32, shared>, !gpu.ptr<i32, global>"
                ]
                if self.cp_async
                else [
                    "      %v = thread.load %src : !gpu.ptr<i32, global> -> i32",
                    "      thread.store %v, %dst : i32, !gpu.ptr<i32, shared>",
                ]
            ),
            "      scf.yield",
            "    }",
            *(
                [
                    "    %grp = thread.cp_async_commit",
                    "    thread.cp_async_wait %grp {pending = 0 : i32}",
                ]
                if self.cp_async
                else []
            ),
            "    thread.fence_proxy_async",
            "    gpu.barrier",
            f"    %se = thread.ptr_cast %s : !gpu.ptr<i32, shared> to !gpu.ptr<{el}, shared>",
            f"    %z = arith.constant {zero}",
            "    %off = arith.constant 0 : i1",
            "    %on = arith.constant 1 : i1",
            f"    %nc = arith.constant {nc} : i32",
            "    %c4 = arith.constant 4 : i32",
            "    %t4 = arith.muli %t, %c4 : i32",
        ]
        acc = ["%z"] * nc
        if self.loop:
            lines += self._loop(atom, oa, ob, reg, el)
            acc = [f"%acc#{j}" for j in range(nc)]
        for kb in range(0 if self.loop else self.kblocks):
            descs = []
            for name, o in (("a", oa), ("b", ob)):
                if name == "a" and self.rs:
                    continue
                lbo, sbo = o.lbo_sbo()
                start = (o.base + o.kblock_start(kb, kstep)) // o.eb
                lines += [
                    f"    %{name}o{kb} = arith.constant {start} : i32",
                    f"    %{name}p{kb} = thread.ptr_add %se, %{name}o{kb} : "
                    f"!gpu.ptr<{el}, shared>, i32",
                    f"    %{name}d{kb} = thread.gmma_desc %{name}p{kb} {{lbo = {lbo} : i32, "
                    f'sbo = {sbo} : i32, swizzle = "{o.swizzle}"}} : !gpu.ptr<{el}, shared>',
                ]
                descs.append(f"%{name}d{kb}")
            a_args, a_types = [descs[0]], ["i64"]
            if self.rs:
                a_args, a_types = [], []
                for j in range(4):
                    lines += [
                        f"    %ai{kb}_{j} = arith.constant {kb * 512 + j} : i32",
                        f"    %aj{kb}_{j} = arith.addi %t4, %ai{kb}_{j} : i32",
                        f"    %ap{kb}_{j} = thread.ptr_add %areg, %aj{kb}_{j} : "
                        "!gpu.ptr<i32, global>, i32",
                        f"    %ar{kb}_{j} = thread.load %ap{kb}_{j} : !gpu.ptr<i32, global> -> i32",
                    ]
                    a_args.append(f"%ar{kb}_{j}")
                    a_types.append("i32")
            if kb == 0:
                lines.append("    thread.wgmma_fence")
            args = [*acc, *a_args, descs[-1], "%off" if kb == 0 else "%on"]
            types = [reg] * nc + a_types + ["i64", "i1"]
            lines.append(
                f'    %d{kb}:{nc} = thread.atom "{atom.name}"({", ".join(args)}) '
                f'{{role = "mma"}} : ({", ".join(types)}) -> ({", ".join([reg] * nc)})'
            )
            acc = [f"%d{kb}#{j}" for j in range(nc)]
        lines += [
            *([] if self.loop else ["    thread.wgmma_commit"]),
            "    thread.wgmma_wait {pending = 0 : i32}",
            "    %tn = arith.muli %t, %nc : i32",
        ]
        for j in range(nc):
            lines += [
                f"    %o{j} = arith.constant {j} : i32",
                f"    %q{j} = arith.addi %tn, %o{j} : i32",
                f"    %p{j} = thread.ptr_add %out, %q{j} : !gpu.ptr<{reg}, global>, i32",
                f"    thread.store {acc[j]}, %p{j} : {reg}, !gpu.ptr<{reg}, global>",
            ]
        lines += ["    return", "  }"]
        for old, new in (replace or {}).items():
            assert old in lines, old
            lines[lines.index(old)] = new
        return "\n".join(['module attributes {target = "sm_90a"} {', *lines, "}", ""])

    def _loop(self, atom: MmaAtom, oa: Operand, ob: Operand, reg: str, el: str) -> list[str]:
        """The k-blocks as a loop carrying the accumulators: fence, wgmma, commit, and a
        wait for all but the group just committed."""
        nc, kstep = atom.fragment("d").count, atom.shape_mnk[2]
        lines = [
            "    %kb0 = arith.constant 0 : i32",
            f"    %kbn = arith.constant {self.kblocks} : i32",
            "    %one = arith.constant 1 : i32",
        ]
        for name, o in (("a", oa), ("b", ob)):
            lines += [
                f"    %{name}step = arith.constant {o.kblock_start(1, kstep) // o.eb} : i32",
                f"    %{name}base = arith.constant {o.base // o.eb} : i32",
            ]
        inits = ", ".join(f"%i{j} = %z" for j in range(nc))
        types = ", ".join([reg] * nc)
        lines.append(
            f"    %acc:{nc} = scf.for %kb = %kb0 to %kbn step %one iter_args({inits}) -> "
            f"({types}) : i32 {{"
        )
        for name, o in (("a", oa), ("b", ob)):
            lbo, sbo = o.lbo_sbo()
            lines += [
                f"      %{name}k = arith.muli %kb, %{name}step : i32",
                f"      %{name}o = arith.addi %{name}k, %{name}base : i32",
                f"      %{name}p = thread.ptr_add %se, %{name}o : !gpu.ptr<{el}, shared>, i32",
                f"      %{name}d = thread.gmma_desc %{name}p {{lbo = {lbo} : i32, sbo = {sbo} : "
                f'i32, swizzle = "{o.swizzle}"}} : !gpu.ptr<{el}, shared>',
            ]
        args = ", ".join([*(f"%i{j}" for j in range(nc)), "%ad", "%bd", "%scale"])
        lines += [
            "      %isfirst = arith.cmpi eq, %kb, %kb0 : i32",
            "      %scale = arith.xori %isfirst, %on : i1",
            "      thread.wgmma_fence",
            f'      %d:{nc} = thread.atom "{atom.name}"({args}) {{role = "mma"}} : '
            f"({types}, i64, i64, i1) -> ({types})",
            "      thread.wgmma_commit",
            "      thread.wgmma_wait {pending = 1 : i32}",
            f"      scf.yield {', '.join(f'%d#{j}' for j in range(nc))} : {types}",
            "    }",
        ]
        return lines

    def reference(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """D in float64 (tf32 operands truncated to their 10 mantissa bits first)."""
        if self.ab == "tf32":
            a, b = (_tf32(x) for x in (a, b))
        return a @ b.T


def _tf32(x: np.ndarray) -> np.ndarray:
    bits = x.astype(np.float32).view(np.uint32) & np.uint32(0xFFFFE000)
    return bits.view(np.float32).astype(np.float64)
