"""examples/gemm_auto.cute in every majorness and element type, as ptxas assembles
it for each target: no spills, no stack; on sm_80 the tensor-core path (cp.async 16 B,
ldmatrix for 16-bit operands, mma.sync) and one barrier per k-tile; on sm_90a the
warp-specialised TMA + wgmma body (HGMMA, USETMAXREG in its SASS)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cutec.driver import Options, Source, Stage, compile
from cutec.ptx.ptxas import find_ptxas
from tests.gemm_auto_launch import DIVISIBLE
from tests.ptx.sass_check import assert_sass, needs_disassembler

pytestmark = pytest.mark.skipif(find_ptxas() is None, reason="no ptxas (install the test extra)")

EXAMPLE = Path(__file__).parents[2] / "examples" / "gemm_auto.cute"
MMA = {"f16": "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
       "bf16": "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
       "tf32": "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"}  # fmt: skip


def _hopper_body(kernel: str, t: str) -> bool:
    """Whether sm_90a compiles the kernel's gemm to the warp-specialised body: wgmma
    takes 16-bit operands in either majorness; tf32 needs one K-major operand (an M-major
    A goes through registers; TT runs as Cᵀ = B·Aᵀ), so NT keeps mma.sync."""
    return t != "tf32" or kernel != "gemm_nt"


@pytest.mark.parametrize("t", ["f16", pytest.param("bf16", marks=pytest.mark.slow), "tf32"])
@pytest.mark.parametrize("kernel", ["gemm_nt", "gemm_tn", "gemm_nn", "gemm_tt"])
def test_sm90a_assembles_the_warp_specialised_body(kernel: str, t: str) -> None:
    """On sm_90a: TMA loads, wgmma, one setmaxnreg per role, no spills, no ptxas
    performance warning; tf32 NT (both operands MN-major) keeps mma.sync."""
    result = compile(
        Source.from_file(EXAMPLE),
        Stage.CUBIN,
        Options(**DIVISIBLE, kernel=kernel, target="sm_90a", defines={"T": t}),
    )
    assert result.ptx is not None and result.resources
    usage = result.resources[kernel]
    assert not usage.spills and usage.stack_frame == 0, usage
    assert result.warnings == []
    ptx = result.ptx
    if not _hopper_body(kernel, t):
        assert MMA[t] in ptx and "wgmma" not in ptx
        return
    assert "wgmma.mma_async.sync.aligned.m64n128" in ptx and "mma.sync" not in ptx
    assert "cp.async.bulk.tensor.2d" in ptx and "cp.async.cg" not in ptx
    assert ptx.count("setmaxnreg.dec.sync.aligned.u32 40") == 1
    assert ptx.count("setmaxnreg.inc.sync.aligned.u32 232") == 1


@needs_disassembler
@pytest.mark.parametrize(
    ("kernel", "t"),
    [
        ("gemm_nt", "f16"),
        ("gemm_tn", "f16"),
        ("gemm_tt", "tf32"),
        *(pytest.param(k, t, marks=pytest.mark.slow)
          for k, t in (("gemm_nn", "f16"), ("gemm_tt", "f16"), ("gemm_nn", "tf32"))),
    ],
)  # fmt: skip
def test_the_hopper_mainloop_runs_hgmma_and_usetmaxreg(kernel: str, t: str) -> None:
    """SASS at the benchmark's tile (128x256x64, 4 stages; tf32 x32): HGMMA and no HMMA,
    as many USETMAXREG as setmaxnreg sites (2), TMA loads; tf32 TT and NN through the
    register A (RS wgmma), no spills either."""
    bk = 64 if t != "tf32" else 32
    defines = {"T": t, "BN": 256, "BK": bk, "BP": 4}
    options = Options(**DIVISIBLE, kernel=kernel, target="sm_90a", defines=defines)
    result = compile(Source.from_file(EXAMPLE), Stage.CUBIN, options)
    assert result.warnings == []
    assert not result.resources[kernel].spills
    ops = assert_sass(result.cubin, contains={"HGMMA", "UTMALDG", "USETMAXREG"},
                      absent={"HMMA"}, kernel=kernel)  # fmt: skip
    assert ops["USETMAXREG"] == 2
    assert ops["HGMMA"] == 4  # a warpgroup's 64x256 by 4 k-blocks (of 16, tf32 8), one path


@pytest.mark.parametrize("t", ["f16", pytest.param("bf16", marks=pytest.mark.slow), "tf32"])
@pytest.mark.parametrize("kernel", ["gemm_nt", "gemm_tn", "gemm_nn", "gemm_tt"])
def test_assembles_on_the_tensor_core_path(kernel: str, t: str) -> None:
    target = "sm_80"
    result = compile(
        Source.from_file(EXAMPLE),
        Stage.CUBIN,
        Options(**DIVISIBLE, kernel=kernel, target=target, defines={"T": t}),
    )
    assert result.ptx is not None and result.resources
    usage = result.resources[kernel]
    assert not usage.spills and usage.stack_frame == 0, usage
    ptx = result.ptx
    assert MMA[t] in ptx
    assert re.search(r"cp\.async\.cg\.shared\.global(\.L2::\w+)? \[[^]]+\], \[[^]]+\], 16", ptx)
    # ldmatrix reads K-major operands; MN-major 16-bit ones with .trans, MN-major
    # tf32 ones with ld.shared (.trans moves 16-bit elements only)
    a_mn, b_mn = kernel[-2] == "n", kernel[-1] == "t"
    assert ("ldmatrix" in ptx) == (t != "tf32" or not (a_mn and b_mn))
    assert (".trans" in ptx) == (t != "tf32" and (a_mn or b_mn))
    if t != "tf32":  # fragment registers stay packed from ldmatrix to mma.sync, loop
        # included (carry-vectors, the emitter's packed pairs): no 16-bit halves
        assert "mov.b16" not in ptx and not re.search(r"mov\.b32 %r\d+, \{%rs", ptx)


@pytest.mark.parametrize(
    "defines",
    [{"BN": 256, "BK": 64}, {"T": "tf32", "BN": 256}],
    ids=["f16-128x256x64", "tf32-128x256x32"],
)
@pytest.mark.parametrize("kernel", ["gemm_nt", "gemm_tn", "gemm_nn", "gemm_tt"])
def test_benchmark_tiles_do_not_spill(kernel: str, defines: dict) -> None:
    """The tiles on 8 warps that benchmarks/gemm_impls.py runs: 128 f32 accumulators a
    thread. The f16 TN kernel spilled 24 bytes before fragments were carried packed;
    the tf32 kernels use 246-255 of the 255 registers (their MN-major operands' scalar
    shared loads)."""
    options = Options(**DIVISIBLE, kernel=kernel, target="sm_80", defines=defines)
    result = compile(Source.from_file(EXAMPLE), Stage.CUBIN, options)
    usage = result.resources[kernel]
    assert not usage.spills and usage.stack_frame == 0, usage


def test_16_bit_output_assembles() -> None:
    """f32 accumulators converted to an f16 C by the epilogue."""
    result = compile(
        Source.from_file(EXAMPLE),
        Stage.CUBIN,
        Options(**DIVISIBLE, kernel="gemm_tn", target="sm_80", defines={"TC": "f16"}),
    )
    assert result.ptx is not None and result.resources
    assert not result.resources["gemm_tn"].spills
    assert "cvt.rn.f16.f32" in result.ptx


def test_an_output_type_the_emitter_cannot_convert_to_is_located_at_the_call() -> None:
    """C of e4m3: the epilogue's f32 -> e4m3 conversion has no PTX rule yet. The error
    points at the user's gemm call (the axpby's branches had no location, so the
    emitter's diagnostic had none; found by fuzzing the compile-time parameters)."""
    from cutec.diagnostics import CompileError

    options = Options(**DIVISIBLE, kernel="gemm_tn_tile", defines={"TC": "e4m3"})
    with pytest.raises(CompileError) as info:
        compile(Source.from_file(EXAMPLE), Stage.PTX, options)
    (d,) = info.value.diagnostics
    assert "arith.truncf" in d.message and d.location is not None
    call = next(i for i, line in enumerate(EXAMPLE.read_text().splitlines(), 1)
                if "tile = (128, 256, 32)" in line)  # fmt: skip
    assert (d.location.file, d.location.line) == (str(EXAMPLE), call)


STREAM_K = Path(__file__).parents[2] / "examples" / "gemm_stream_k.cute"


# In the default run (CI time): bf16 NT, and tf32 (whose tail halves BK) NT and TT.
_SLOW = pytest.mark.slow


@pytest.mark.parametrize(
    ("lay", "t", "full", "tail"),
    [("nt", "bf16", {}, {}), *(pytest.param(lay, "bf16", {}, {}, marks=_SLOW)
                               for lay in ("tn", "nn", "tt")),
     *((lay, "tf32", {"BK": 32}, {"BK": 16}) for lay in ("nt", "tt")),
     *(pytest.param(lay, "tf32", {"BK": 32}, {"BK": 16}, marks=_SLOW) for lay in ("tn", "nn"))],
)  # fmt: skip
def test_stream_k_pair_does_not_spill(lay: str, t: str, full: dict, tail: dict) -> None:
    """examples/gemm_stream_k.cute at the tiles its header gives per element type (f16,
    the defaults: tests/ptx/test_examples.py): the full waves' kernel (gemm_auto's)
    and the tail, whose loop over a share's pieces reads the share's bounds back from
    shared memory after each k-loop (kept in registers across it, they made ptxas
    spill 4-32 bytes at BK = 64)."""
    for kernel, defines in ((f"gemm_{lay}", full), (f"gemm_{lay}_tail", tail)):
        options = Options(**DIVISIBLE, kernel=kernel, target="sm_90a", defines={"T": t, **defines})
        result = compile(Source.from_file(STREAM_K), Stage.CUBIN, options)
        usage = result.resources[kernel]
        assert not usage.spills and usage.stack_frame == 0, (kernel, usage)


def _entries(ptx: str) -> dict[str, str]:
    """Each `.entry` of a PTX module, its name made `K`, its `.loc` lines dropped."""
    out = {}
    for part in re.split(r"(?=\.visible \.entry )", ptx)[1:]:
        name = re.match(r"\.visible \.entry (\w+)", part)[1]  # type: ignore[index]
        body = part[: part.index("\n}\n") + 3]  # (a later entry's .extern is not its own)
        out[name] = re.sub(r"^\s*\.loc .*\n", "", body.replace(name, "K"), flags=re.M)
    return out


def test_stream_k_true_is_the_measured_pair() -> None:
    """gemm_auto with STREAM_K = true at the benchmark's f16 tiles (128x256x64) is one
    module of two entries, `gemm_tn` and `gemm_tn__tail`, each the PTX of
    examples/gemm_stream_k.cute's pair (measured in
    docs/notes/2026-11-28-stream-k-two-kernels.md) but for their
    names, and neither spills on sm_80 (the smaller shared memory: the tail's epilogue
    chunk takes its stages' bytes too)."""
    defines = {"BN": 256, "BK": 64, "STREAM_K": True}
    options = Options(**DIVISIBLE, kernel="gemm_tn", target="sm_80", defines=defines)
    result = compile(Source.from_file(EXAMPLE), Stage.CUBIN, options)
    assert result.ptx is not None
    for kernel in ("gemm_tn", "gemm_tn__tail"):
        usage = result.resources[kernel]
        assert not usage.spills and usage.stack_frame == 0, (kernel, usage)
    ours = _entries(result.ptx)
    for kernel, mine in (("gemm_tn", "gemm_tn"), ("gemm_tn_tail", "gemm_tn__tail")):
        # (the pair's defaults are these tiles: 128x256x64 in 3 stages)
        pair_options = Options(**DIVISIBLE, kernel=kernel, target="sm_80")
        pair = compile(Source.from_file(STREAM_K), Stage.PTX, pair_options)
        assert pair.ptx is not None
        assert _entries(pair.ptx)[kernel] == ours[mine], kernel


def test_stream_k_true_tf32_does_not_spill() -> None:
    """tf32 NN with STREAM_K = true at the benchmark's tf32 tiles (128x256x32): its tail
    runs BK = 16 (at 32 the loop over a share's pieces spilled 12 bytes)."""
    defines = {"T": "tf32", "BN": 256, "STREAM_K": True}
    options = Options(**DIVISIBLE, kernel="gemm_nn", target="sm_90a", defines=defines)
    result = compile(Source.from_file(EXAMPLE), Stage.CUBIN, options)
    for kernel in ("gemm_nn", "gemm_nn__tail"):
        usage = result.resources[kernel]
        assert not usage.spills and usage.stack_frame == 0, (kernel, usage)


@pytest.mark.parametrize(
    ("kernel", "defines"),
    [
        ("gemm_tn", {"BM": 64, "BN": 256, "BK": 64, "BP": 4}),  # one consumer, no setmaxnreg
        ("gemm_nt", {"BM": 256, "BN": 128, "BK": 64, "BP": 3}),  # two 64-row wgmmas each
        ("gemm_nn", {"BM": 128, "BN": 64, "BK": 32, "BP": 4}),  # 64-byte swizzle in K
        ("gemm_nt", {"BM": 128, "BN": 192, "BK": 16, "BP": 4}),  # 32-byte swizzle, N = 192
        ("gemm_tn", {"T": "tf32", "BM": 64, "BN": 128, "BK": 32}),
    ],
)  # fmt: skip
def test_the_hopper_bodys_tile_shapes_assemble_without_spills(kernel: str, defines: dict) -> None:
    options = Options(**DIVISIBLE, kernel=kernel, target="sm_90a", defines=defines)
    result = compile(Source.from_file(EXAMPLE), Stage.CUBIN, options)
    assert result.ptx is not None and "wgmma.mma_async" in result.ptx
    usage = result.resources[kernel]
    assert not usage.spills and usage.stack_frame == 0, usage
    assert result.warnings == []
    assert ("setmaxnreg" in result.ptx) == (defines["BM"] > 64)


def test_the_tma_epilogue_assembles_with_its_stores() -> None:
    """`epilogue = "tma"` where C allows it (M-major, ldC and M multiples of 16 bytes): per
    128x256 tile 8 chunks of 128x32 f32, each 4 TMA stores of (32, 32) boxes (C's
    128-byte-swizzled MN-major atoms tiled along N first), beside the registers'
    epilogue for beta != 0."""
    text = EXAMPLE.read_text().replace(
        "stream_k = STREAM_K)", 'stream_k = STREAM_K, epilogue = "tma")'
    )
    text = re.sub(r"(  assume [^\n]*)", r"\1, ldC % 4 == 0, M % 4 == 0", text)
    options = Options(**DIVISIBLE, kernel="gemm_tn", target="sm_90a", remarks=True,
                      defines={"BN": 256, "BK": 64, "BP": 4})  # fmt: skip
    result = compile(Source(text, "gemm_auto.cute"), Stage.CUBIN, options)
    assert result.ptx is not None and result.warnings == []
    assert result.ptx.count("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group") == 8 * 4
    assert "cp.async.bulk.wait_group.read 1;" in result.ptx
    said = [str(r.message) for r in result.remarks]
    assert any(m.startswith("tile: epilogue: for beta = 0, through shared memory") for m in said)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_operands_below_4_bytes_assemble_through_registers(arch: str) -> None:
    """gemm_tn with no facts about A and B (odd leading dimensions allowed): no cp.async
    fits and no tensor map, so both targets take the mma.sync body with each element
    copied by ld.global + st.shared (the k-loop unpipelined); ptxas assembles it, with
    no spills at BK = 16 (at 128x128x32 on 128 threads the copy's 64 element addresses
    and predicates spill 144-256 bytes: docs/passes.md; values: tests/passes/test_tile.py)."""
    text = re.sub(r"\n  assume [^\n]*", "", EXAMPLE.read_text())
    result = compile(Source(text, "g.cute"), Stage.CUBIN,
                     Options(kernel="gemm_tn", target=arch, defines={"BK": 16}))  # fmt: skip
    usage = result.resources["gemm_tn"]
    assert not usage.spills and usage.stack_frame == 0, usage
    assert result.ptx is not None and "mma.sync.aligned" in result.ptx
    assert "cp.async.cg" not in result.ptx and "cp.async.ca" not in result.ptx
    assert "ld.global.nc.b16" in result.ptx or "ld.global.b16" in result.ptx
