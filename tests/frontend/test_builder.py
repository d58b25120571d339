"""The IR builder on the examples: verified IR, round trips, and the types CuTe computes."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutec.cli import main
from cutec.diagnostics import CompileError
from cutec.frontend import compile_source
from cutec.ir.core import Operation
from cutec.ir.dialects import cute as C
from cutec.ir.dialects.builtin import KernelOp, ModuleOp
from cutec.ir.parser import parse_module
from cutec.ir.printer import print_op
from cutec.ir.traits import AddressSpace, EffectKind, MemoryEffect
from cutec.ir.verifier import verify

EXAMPLES = Path(__file__).parents[2] / "examples"


def build(name: str, **defines: str) -> ModuleOp:
    path = EXAMPLES / name
    return compile_source(path.read_text(), str(path), defines)


def kernel(module: ModuleOp, name: str) -> KernelOp:
    op = module.lookup(name)
    assert isinstance(op, KernelOp)
    return op


def named(op: Operation, name: str) -> str:
    """The printed type of the value the kernel binds to `name`."""
    for o in op.walk():
        for r in o.results:
            if r.name_hint == name:
                return str(r.type)
    raise AssertionError(f"no value named {name}")


# examples/lib/ holds files of funcs and consts only (no kernel): they build through
# the examples importing them, so the glob is not recursive.
@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.cute")), ids=lambda p: p.name)
def test_example_builds_verifies_and_round_trips(path: Path) -> None:
    module = compile_source(path.read_text(), str(path))
    verify(module)
    first = print_op(module)
    again = parse_module(first, "printed")
    verify(again)
    assert print_op(again) == first
    assert 'loc("' + str(path) in first  # every op carries its source location


def test_sgemm_1_types_are_cutes() -> None:
    k = kernel(build("sgemm_1.cute"), "sgemm_nt")
    # (BLK_M,BLK_K,k) then (THR_M,THR_K,k) = (4,1,k) for a 32x8 thread layout
    assert named(k, "gA") == "!cute.tensor<f32, gmem, (128,8,?):(1,?,?)>"
    assert named(k, "tAgA") == "!cute.tensor<f32, gmem, (4,1,?):(32,0,?)>"
    assert named(k, "tAsA") == "!cute.tensor<f32, smem, (4,1):(32,0)>"
    assert named(k, "tCsA") == "!cute.tensor<f32, smem, (8,8):(16,128)>"
    assert named(k, "tCgC") == "!cute.tensor<f32, gmem, (8,8):(16,?)>"
    assert named(k, "tCrC") == "!cute.tensor<f32, rmem, (8,8):(1,8)>"
    assert [a.name_hint for a in k.body.args] == [
        "A",
        "M",
        "K",
        "ldA",
        "B",
        "N",
        "ldB",
        "C",
        "ldC",
        "alpha",
        "beta",
    ]
    assert str(k.attributes["reqntid"]) == "array<i32: 256, 1, 1>"
    assert str(k.attributes["grid"]) == '["ceil_div(M,128)", "ceil_div(N,128)", "1"]'


def test_sgemm_1_tn_is_k_major() -> None:
    k = kernel(build("sgemm_1.cute"), "sgemm_tn")
    assert named(k, "sA") == "!cute.tensor<f32, smem, (128,8):(8,1)>"
    assert named(k, "tAsA") == "!cute.tensor<f32, smem, (4,1):(256,0)>"


def test_sgemm_2_tiled_partitions() -> None:
    k = kernel(build("sgemm_2.cute"), "sgemm_nt")
    # (CPY,CPY_M,CPY_K,k): one UniversalCopy<uint128_t> moves four f32
    assert named(k, "tAgA") == "!cute.tensor<f32, gmem, ((4,1),1,1,?):((1,0),0,0,?)>"
    assert named(k, "tArA") == "!cute.tensor<f32, rmem, ((4,1),1,1):((1,0),0,0)>"
    # (MMA,MMA_M,MMA_K) of a 16x16x1 UniversalFMA
    assert named(k, "tCsA") == "!cute.tensor<f32, smem, (1,8,8):(0,16,128)>"
    assert named(k, "tCrC") == "!cute.tensor<f32, rmem, (1,8,8):(0,1,8)>"
    copies = [op for op in k.walk() if isinstance(op, C.MakeTiledCopyOp)]
    assert str(copies[0].result.type) == (
        '!cute.tiled_copy<"UniversalCopy<uint128_t>", f32, (256,4):(4,1), (128,8)>'
    )


def test_assumed_divisibility_reaches_make_tensor() -> None:
    k = kernel(build("sgemm_2.cute"), "sgemm_nt")
    a = next(op for op in k.walk() if isinstance(op, C.MakeTensorOp))
    assert str(a.attributes["div"]) == "array<i64: 4, 1, 4>"  # M % 4, K, ldA % 4


def test_define_changes_the_types() -> None:
    k = kernel(build("sgemm_1.cute", BM="64"), "sgemm_nt")
    assert named(k, "gA") == "!cute.tensor<f32, gmem, (64,8,?):(1,?,?)>"
    assert named(k, "tAgA") == "!cute.tensor<f32, gmem, (2,1,?):(32,0,?)>"
    assert str(k.attributes["grid"]) == '["ceil_div(M,64)", "ceil_div(N,128)", "1"]'


def test_copy_and_gemm_effects_follow_the_memories() -> None:
    k = kernel(build("sgemm_1.cute"), "sgemm_nt")
    copy = next(op for op in k.walk() if isinstance(op, C.CopyOp))
    assert copy.memory_effects() == (
        MemoryEffect(EffectKind.READ, AddressSpace.GLOBAL),
        MemoryEffect(EffectKind.WRITE, AddressSpace.SHARED),
    )
    gemm = next(op for op in k.walk() if isinstance(op, C.GemmOp))
    assert {(e.kind, e.space) for e in gemm.memory_effects()} == {
        (EffectKind.READ, AddressSpace.SHARED),
        (EffectKind.READ, AddressSpace.REGISTER),
        (EffectKind.WRITE, AddressSpace.REGISTER),
    }


def test_runtime_branch_carries_scalars() -> None:
    src = (
        "kernel k(A: f32[M] : (1)) threads 32 {\n  n = 0\n  for i in range(M) {\n"
        "    if i > 3 { n += 1 }\n  }\n  r = rmem f32[(4,)]\n  r[n] = 1.0\n}\n"
    )
    text = print_op(compile_source(src, "t.cute"))
    assert "%n = scf.for %i = " in text and "iter_args(%n_1 = %0) -> (index)" in text
    assert "scf.if" in text and "-> (index)" in text
    assert "cute.store" in text


def test_cli_emits_cute_ir(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compile", str(EXAMPLES / "sgemm_1.cute"), "--emit=cute"]) == 0
    out = capsys.readouterr().out
    assert "kernel @sgemm_nt" in out and "cute.local_partition" in out
    assert (
        main(
            [
                "compile",
                str(EXAMPLES / "sgemm_1.cute"),
                "--emit=cute",
                "-D",
                "BM=64",
                "--kernel",
                "sgemm_tn",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "kernel @sgemm_nt" not in out and "(64,8,?)" in out


def test_cli_reports_semantic_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "bad.cute"
    f.write_text("kernel k(A: f32[M] : (1)) threads 32 {\n  x = nope\n}\n")
    assert main(["compile", str(f), "--emit=cute"]) == 1
    err = capsys.readouterr().err
    assert f"{f}:2:7: error: undefined name 'nope'" in err
    assert "  x = nope\n      ^" in err


def test_view_ops_are_reverified_from_the_algebra() -> None:
    text = (
        "func @f(%t: index) {\n"
        "  %s = cute.alloc_smem : !cute.tensor<f32, smem, (128,8):(1,129)>\n"
        "  %p = cute.local_partition %s, %t {thr_layout = #cute.layout<(16,16):(1,16)>, "
        "proj = #cute.tuple<(1,X)>} : !cute.tensor<f32, smem, (128,8):(1,129)> "
        "-> !cute.tensor<f32, smem, (8,8):(16,128)>\n"
        "  return\n}\n"
    )
    with pytest.raises(
        CompileError,
        match=r"result layout must be \(8,8\):\(16,129\), "
        r"not \(8,8\):\(16,128\)",
    ):
        verify(parse_module(text, "bad.mlir"))


def test_full_unroll_makes_the_index_static() -> None:
    src = (
        "kernel k(A: f32[M] : (1)) threads 32 {\n  r = rmem f32[(4, 2)]\n"
        "  for i in range(2) unroll {\n    static_assert(i < 2)\n    clear(r[_, i])\n  }\n}\n"
    )
    text = print_op(compile_source(src, "t.cute"), print_locations=False)
    assert "scf.for" not in text
    assert text.count("cute.slice %r {coord = #cute.tuple<(_,") == 2
    assert "#cute.tuple<(_,1)>" in text


def test_mma_partition_agrees_with_the_atom_library() -> None:
    from cutec.atoms.tiled_mma import make_tiled_mma
    from cutec.ir.dialects.cute_infer import spec_of
    from cutec.layout import Layout

    mma = make_tiled_mma("UniversalFMA_F32F32F32F32", Layout((16, 16, 1)))
    expected = spec_of(mma.get_slice(0).partition_A(Layout((128, 8), (1, 128))))
    k = kernel(build("sgemm_2.cute"), "sgemm_nt")
    assert named(k, "tCsA") == f"!cute.tensor<f32, smem, {expected}>"
