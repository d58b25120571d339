"""GPU proof of the copy atoms: tiny hand-assembled PTX kernels, checked against the layouts.

Each kernel is one warp built from the atoms' own templates:

* ldmatrix: shared memory holds the 16-bit element indices 0..255; lane l
  supplies the row address ``src_layout(l, 0) / 8`` bytes; the registers each
  lane receives are written out and must equal, element by element,
  ``dst_layout(lane, 32 * reg + 16 * half) / 16``.
* stmatrix: lane t's registers hold the indices ``src_layout(t, 32 r + 16 h) / 16``;
  after the store through addresses ``dst_layout(l, 0) / 8``, shared memory
  must read 0, 1, 2, ... (every element landed where the layouts say).
* cp.async: each lane copies its chunk with a chosen ``src_size``; the bytes
  past ``src_size`` must be zeros, over shared memory first filled with 0xff.

The kernel text is assembled with ptxas in every run (no GPU needed); the
launches need a GPU of compute capability >= 9.0 and ``cuda.bindings``.
"""

from __future__ import annotations

import numpy as np
import pytest

from cutec.atoms.copy import CopyAtom, copy_atom, universal_copy
from cutec.atoms.copy_sm80 import cp_async
from cutec.atoms.sync import sync_op
from tests.atoms.ptx_harness import assemble, ptx_version_for, ptxas_path

MATRIX_NAMES = [
    f"{arch}_{kind}_{op}_{nt}"
    for arch, op in (("SM75", "LDSM"), ("SM90", "STSM"))
    for nt, kinds in (("N", ("U32x1", "U32x2", "U32x4")), ("T", ("U16x2", "U16x4", "U16x8")))
    for kind in kinds
]
# (atom, bytes per lane, src_size per lane pattern; None: the plain atom, no src-size)
CP_ASYNC_CASES = [
    (cp_async(32, zfill=True), 4, (4, 0)),
    (cp_async(64, zfill=True), 8, (8, 0, 4)),
    (cp_async(128, zfill=True), 16, (16, 0, 8, 4)),
    (cp_async(128, "cg", zfill=True), 16, (16, 0, 8, 4)),
    (cp_async(128, "cg"), 16, None),
]

_HEAD = """.version {v0}.{v1}
.target {target}
.address_size 64

.visible .entry {name}({params})
{{
    .reg .pred %p<4>;
    .reg .b16 %rs<8>;
    .reg .b32 %r<64>;
    .reg .b64 %rd<32>;
    .shared .align 128 .b8 smem[1024];
    mov.u32 %r0, %tid.x;
    mov.u32 %r1, smem;
"""


def _module(
    name: str, target: str, min_ptx: tuple[int, int], params: list[str], body: list[str]
) -> str:
    v = ptx_version_for(target, min_ptx)
    head = _HEAD.format(
        v0=v[0],
        v1=v[1],
        target=target,
        name=name,
        params=", ".join(f".param .u64 {p}" for p in params),
    )
    loads = [
        f"    ld.param.u64 %rd{20 + i}, [{p}];\n    cvta.to.global.u64 %rd{i}, %rd{20 + i};"
        for i, p in enumerate(params)
    ]
    return head + "\n".join(loads) + "\n" + "\n".join(f"    {s}" for s in body) + "\n    ret;\n}\n"


def _st(bits: int, space: str, addr: str, regs: list[str]) -> str:
    tpl = universal_copy(bits).template(f"st.{space}")
    return tpl.render({"addr": addr, "v": regs if len(regs) > 1 else regs[0]})


def _ld(bits: int, space: str, addr: str, regs: list[str]) -> str:
    tpl = universal_copy(bits).template(f"ld.{space}")
    return tpl.render({"addr": addr, "v": regs if len(regs) > 1 else regs[0]})


_BAR = sync_op("bar.sync").render({"id": "0"})
_REG4 = ["%r10", "%r11", "%r12", "%r13"]


def _fill_indices() -> list[str]:
    """Lane t stores the 16-bit values 8t..8t+7 at bytes 16t..16t+15 of smem."""
    return [
        "shl.b32 %r2, %r0, 4;",
        "add.u32 %r3, %r1, %r2;",  # smem + 16 t
        "shl.b32 %r4, %r0, 3;",
        "mul.lo.u32 %r5, %r4, 65537;",  # (8t) | (8t) << 16
        "add.u32 %r20, %r5, 65536;",  # pairs (8t+2k, 8t+2k+1)
        "add.u32 %r21, %r5, 196610;",
        "add.u32 %r22, %r5, 327684;",
        "add.u32 %r23, %r5, 458758;",
        _st(128, "shared", "%r3", ["%r20", "%r21", "%r22", "%r23"]),
    ]


def _lane_offset(param_index: int) -> list[str]:
    """%r6 = smem + offs[lane] (offs: a u32 per lane in global memory)."""
    return [
        "mul.wide.u32 %rd10, %r0, 4;",
        f"add.u64 %rd11, %rd{param_index}, %rd10;",
        _ld(32, "global", "%rd11", ["%r7"]),
        "add.u32 %r6, %r1, %r7;",
    ]


def ldmatrix_kernel(atom: CopyAtom) -> str:
    """out[lane * num + reg] = the registers ldmatrix delivers."""
    num = atom.dst_regs.count  # type: ignore[union-attr]
    regs = _REG4[:num]
    body = [
        *_fill_indices(),
        _BAR,
        *_lane_offset(1),
        atom.template().render({"d": regs if num > 1 else regs[0], "src": "%r6"}),
        f"mul.wide.u32 %rd12, %r0, {4 * num};",
        "add.u64 %rd13, %rd0, %rd12;",
        _st(32 * num, "global", "%rd13", regs),
    ]
    return _module("ldsm", atom.target(), atom.min_ptx, ["out", "offs"], body)


def stmatrix_kernel(atom: CopyAtom) -> str:
    """Registers from inp[lane * num + reg], stmatrix, then out = the 512 smem bytes."""
    num = atom.src_regs.count  # type: ignore[union-attr]
    regs = _REG4[:num]
    body = [
        f"mul.wide.u32 %rd12, %r0, {4 * num};",
        "add.u64 %rd13, %rd2, %rd12;",
        _ld(32 * num, "global", "%rd13", regs),
        *_lane_offset(1),
        atom.template().render({"s": regs if num > 1 else regs[0], "dst": "%r6"}),
        _BAR,
        "shl.b32 %r2, %r0, 4;",
        "add.u32 %r3, %r1, %r2;",
        _ld(128, "shared", "%r3", _REG4),
        "mul.wide.u32 %rd14, %r0, 16;",
        "add.u64 %rd15, %rd0, %rd14;",
        _st(128, "global", "%rd15", _REG4),
    ]
    return _module("stsm", atom.target(), atom.min_ptx, ["out", "offs", "inp"], body)


def cp_async_kernel(atom: CopyAtom, nbytes: int) -> str:
    """smem chunk of lane t := 0xff..; cp.async src + n t -> smem + n t; out := smem."""
    bits = 8 * nbytes
    ones = _REG4[: max(1, bits // 32)]
    zfill = "src_size" in {op.name for op in atom.template().operands}
    copy_values = {"dst": "%r3", "src": "%rd13"}
    if zfill:
        copy_values["src_size"] = "%r7"
    body = [
        f"mul.lo.u32 %r2, %r0, {nbytes};",
        "add.u32 %r3, %r1, %r2;",  # smem + n t
        *[f"mov.b32 {r}, -1;" for r in ones],
        _st(bits, "shared", "%r3", ones),
        _BAR,
        "cvt.u64.u32 %rd12, %r2;",
        "add.u64 %rd13, %rd1, %rd12;",  # src + n t
        *(_lane_offset(2)[:3] if zfill else []),  # %r7 = sizes[t]
        atom.template().render(copy_values),
        sync_op("cp.async.commit_group").render({}),
        sync_op("cp.async.wait_group").render({"n": "0"}),
        _BAR,
        _ld(bits, "shared", "%r3", _REG4[: max(1, bits // 32)]),
        "add.u64 %rd14, %rd0, %rd12;",
        _st(bits, "global", "%rd14", _REG4[: max(1, bits // 32)]),
    ]
    return _module("cpasync", atom.target(), atom.min_ptx, ["out", "src", "sizes"], body)


def _predicted_registers(atom: CopyAtom, frag_side: str) -> np.ndarray:
    """[lane, reg] u32: element indices at (lane, 32 reg + 16 h) of the fragment, h = 0, 1."""
    frag = getattr(atom, frag_side)
    num = (atom.dst_regs if frag_side == "dst_layout" else atom.src_regs).count  # type: ignore
    out = np.zeros((32, num), dtype=np.uint32)
    for lane in range(32):
        for reg in range(num):
            lo = frag(lane, 32 * reg) // 16
            hi = frag(lane, 32 * reg + 16) // 16
            out[lane, reg] = lo | (hi << 16)
    return out


def _row_offsets(layout) -> np.ndarray:
    """Byte offset of the row each lane addresses: layout(lane, 0) / 8."""
    return np.array([layout(lane, 0) // 8 for lane in range(32)], dtype=np.uint32)


# --- ptxas: the kernels themselves are valid on every machine ------------------------------------

KERNELS = (
    [(n, lambda n=n: ldmatrix_kernel(copy_atom(n))) for n in MATRIX_NAMES if "LDSM" in n]
    + [(n, lambda n=n: stmatrix_kernel(copy_atom(n))) for n in MATRIX_NAMES if "STSM" in n]
    + [(a.name, lambda a=a, b=b: cp_async_kernel(a, b)) for a, b, _ in CP_ASYNC_CASES]
)


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas not on PATH")
@pytest.mark.parametrize(("name", "build"), KERNELS, ids=[k[0] for k in KERNELS])
def test_gpu_kernels_assemble(name: str, build) -> None:
    ptx = build()
    target = ptx.split(".target ")[1].split()[0]
    result = assemble(ptx, target)
    assert result.returncode == 0, f"{name}:\n{result.stderr}\n{ptx}"


# --- the GPU -------------------------------------------------------------------------------------


class _Gpu:
    """One warp of hand-written PTX on numpy arrays, through cutec.runtime.cuda."""

    def __init__(self) -> None:
        from cutec.runtime import cuda

        self.cuda = cuda
        self.cc_major = cuda.device(0).capability[0]

    def run(self, ptx: str, entry: str, arrays: list[np.ndarray], out_index: int = 0) -> None:
        """Launch one warp of `entry` with device copies of `arrays` (copied back)."""
        self.cuda.run_ptx(ptx, entry, arrays)


@pytest.fixture(scope="module")
def gpu() -> _Gpu:
    try:
        g = _Gpu()
    except Exception as exc:  # no cuda.bindings, no driver, or no device
        pytest.skip(f"no usable GPU: {exc}")
    if g.cc_major < 9:
        pytest.skip("stmatrix needs compute capability >= 9.0")
    return g


@pytest.mark.gpu
@pytest.mark.parametrize("name", [n for n in MATRIX_NAMES if "LDSM" in n])
def test_ldmatrix_registers_match_layouts(gpu: _Gpu, name: str) -> None:
    atom = copy_atom(name)
    expected = _predicted_registers(atom, "dst_layout")
    out = np.zeros_like(expected)
    gpu.run(ldmatrix_kernel(atom), "ldsm", [out, _row_offsets(atom.src_layout)])
    np.testing.assert_array_equal(out, expected)


@pytest.mark.gpu
@pytest.mark.parametrize("name", [n for n in MATRIX_NAMES if "STSM" in n])
def test_stmatrix_lands_where_layouts_say(gpu: _Gpu, name: str) -> None:
    atom = copy_atom(name)
    inp = _predicted_registers(atom, "src_layout")
    out = np.zeros(256, dtype=np.uint16)
    gpu.run(stmatrix_kernel(atom), "stsm", [out, _row_offsets(atom.dst_layout), inp])
    n = atom.total_bits // 16
    np.testing.assert_array_equal(out[:n], np.arange(n, dtype=np.uint16))


@pytest.mark.gpu
@pytest.mark.parametrize(
    ("atom", "nbytes", "sizes"), CP_ASYNC_CASES, ids=[c[0].name for c in CP_ASYNC_CASES]
)
def test_cp_async_zero_fills(gpu: _Gpu, atom: CopyAtom, nbytes: int, sizes) -> None:
    src = (np.arange(32 * nbytes, dtype=np.uint32) % 251 + 1).astype(np.uint8)  # no zeros
    out = np.zeros(32 * nbytes, dtype=np.uint8)
    lane_sizes = np.array(
        [sizes[t % len(sizes)] if sizes else nbytes for t in range(32)], dtype=np.uint32
    )
    gpu.run(cp_async_kernel(atom, nbytes), "cpasync", [out, src, lane_sizes])
    expected = src.reshape(32, nbytes).copy()
    for t in range(32):
        expected[t, lane_sizes[t] :] = 0
    np.testing.assert_array_equal(out.reshape(32, nbytes), expected)
