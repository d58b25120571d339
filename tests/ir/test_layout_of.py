"""layout_of: every tensor's symbolic layout rebuilt from IR text alone, without the frontend.

The expected layouts of tests/ir/data/example_layouts.json are the ones the
frontend computed for every tensor of every example before layout inference
moved into the IR (written by the builder, symbol for symbol); the CuTe
partitions come from CuTe C++ (tests/atoms/data/tiled_reference.txt, as quoted
in tests/frontend/test_builder_examples.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cutec.frontend import compile_source
from cutec.ir.core import Operation, Value
from cutec.ir.dialects.builtin import KernelOp, ModuleOp
from cutec.ir.layout_of import LayoutAnalysis, UnknownLayout, layout_of
from cutec.ir.parser import parse_module
from cutec.ir.printer import print_op
from cutec.ir.verifier import verify

ROOT = Path(__file__).parents[2]
SAVED = json.loads((Path(__file__).parent / "data" / "example_layouts.json").read_text())


def reparsed(example: str) -> ModuleOp:
    """The example's IR printed and parsed back: no frontend state survives."""
    path = ROOT / "examples" / example
    return parse_module(print_op(compile_source(path.read_text(), str(path))), example)


def kernel(module: ModuleOp, name: str) -> KernelOp:
    (k,) = [k for k in module.walk_type(KernelOp) if k.sym_name == name]
    return k


def named(op: Operation, name: str) -> Value:
    for o in op.walk():
        for r in o.results:
            if r.name_hint == name:
                return r
    raise AssertionError(f"no value named {name}")


@pytest.mark.parametrize("example", sorted(SAVED))
def test_every_tensor_of_every_example_matches_the_frontends_layout(example: str) -> None:
    module = reparsed(example)
    la = LayoutAnalysis()
    for entry in SAVED[example]:
        op = list(kernel(module, entry["kernel"]).walk())[entry["op"]]
        assert op.name == entry["name"]
        got = str(la.layout_of(op.results[entry["result"]]))
        assert got == entry["layout"], (entry["kernel"], entry["op"], entry["name"])


@pytest.mark.parametrize(
    ("example", "kernel_name", "value", "cute"),
    [
        # CuTe C++ (tiled_reference.txt): the SM80 2x2 MMA fragments and their ldmatrix retiles
        ("sgemm_sm80.cute", "hgemm_tn", "tCrA", "((_2,_2,_2),_4,_4):((_1,_2,_4),_32,_8)"),
        ("sgemm_sm80.cute", "hgemm_tn", "tCrB", "((_2,_2),_8,_4):((_1,_2),_16,_4)"),
        ("sgemm_sm80.cute", "hgemm_tn", "tXrA", "((_8,_1),_4,_4):((_1,_0),_32,_8)"),
        ("sgemm_sm80.cute", "hgemm_tn", "tXrB", "(((_4,_2),_1),_4,_4):(((_1,_16),_0),_32,_4)"),
        # partition_S of the swizzled (BLK_M,BLK_K,PIPE) smem: (CPY,MMA_M,MMA_K,PIPE)
        (
            "sgemm_sm80.cute",
            "hgemm_tn",
            "tXsA",
            "Sw<3,3,3> o _0 o ((_8,_1),_4,_4,(_1,_3)):((_1,_0),_2048,_128,(_0,_8192))",
        ),
        ("wgmma_sm90.cute", "hgemm_nt", "tCrC", "((_2,_2,_8),_2,_2):((_1,_2,_4),_32,_64)"),
    ],
)
def test_partitions_match_cute(example: str, kernel_name: str, value: str, cute: str) -> None:
    k = kernel(reparsed(example), kernel_name)
    assert str(layout_of(named(k, value))) == cute


DYNAMIC = """
builtin.module {
  kernel @k(%p: !gpu_ptr, %M: index, %K: index, %ld: index, %n: index) {
    %tid = gpu.thread_id x : index
    %bx = gpu.block_id x : index
    %c2 = arith.constant 2 : index
    %M2 = arith.muli %M, %c2 : index
    %A = cute.make_tensor %p, %M2, %K, %ld {div = array<i64: 1, 1, 8>}
      : !gpu_ptr -> !cute.tensor<f32, gmem, (?,?):(1,?)>
    %gA = cute.local_tile %A, %bx {tiler = #cute.tuple<(64,8)>, coord = #cute.tuple<(?,_)>}
      : !cute.tensor<f32, gmem, (?,?):(1,?)> -> !cute.tensor<f32, gmem, (64,8,?):(1,?,?)>
    %tA = cute.local_partition %gA, %tid {thr_layout = #cute.layout<(16,8):(1,16)>}
      : !cute.tensor<f32, gmem, (64,8,?):(1,?,?)> -> !cute.tensor<f32, gmem, (4,1,?):(16,0,?)>
    %nk = cute.size %tA {mode = #cute.tuple<2>} : !cute.tensor<f32, gmem, (4,1,?):(16,0,?)> -> index
    return
  }
}
"""


def _dynamic() -> KernelOp:
    ptr = "!gpu.ptr<f32, global>"
    return kernel(parse_module(DYNAMIC.replace("!gpu_ptr", ptr)), "k")


def test_symbols_come_from_the_ir_with_their_facts() -> None:
    k = _dynamic()
    la = LayoutAnalysis()
    # M*2 is replayed on the symbols; ld's divisor 8 (from `div`) survives the tiling.
    assert str(la.layout_of(named(k, "A"))) == "(2*M,K):(_1,ld)"
    assert str(la.layout_of(named(k, "gA"))) == "(_64,_8,ceil_div(K,8)):(_1,ld,8*ld)"
    assert str(la.layout_of(named(k, "tA"))) == "(_4,_1,ceil_div(K,8)):(_16,_0,8*ld)"
    assert la.layout_of(named(k, "A")).stride[1].divisibility() == 8
    assert str(la.integer_of(named(k, "nk"))) == "ceil_div(K,8)"


def test_an_argument_that_is_no_leaf_is_an_opaque_symbol() -> None:
    k = _dynamic()
    la = LayoutAnalysis()
    n = la.integer_of(k.body.args[4])
    assert str(n) == "n"
    assert n.bounds[0] == 0  # nothing promised: it may be 0


def test_a_tensor_without_a_defining_rule_reads_its_type() -> None:
    text = """
builtin.module {
  func @f(%t: !cute.tensor<f32, gmem, (?,8):(1,?)>) {
    %s = cute.slice %t {coord = #cute.tuple<(_,3)>} : !cute.tensor<f32, gmem, (?,8):(1,?)>
      -> !cute.tensor<f32, gmem, (?):(1)>
    return
  }
}
"""
    module = parse_module(text)
    (s,) = [op for op in module.walk() if op.name == "cute.slice"]
    assert str(LayoutAnalysis().layout_of(s.results[0])) == "(t):(_1)"
    with pytest.raises(UnknownLayout):
        LayoutAnalysis(strict=True).layout_of(s.results[0])


def test_the_verifier_recomputes_dynamic_views() -> None:
    # A wrong static stride in a view of a dynamic tensor is now caught.
    good = "-> !cute.tensor<f32, gmem, (4,1,?):(16,0,?)>\n"
    bad = DYNAMIC.replace(good, good.replace("16,0", "8,0")).replace(
        "(4,1,?):(16,0,?)> -> index", "(4,1,?):(8,0,?)> -> index"
    )
    bad = bad.replace("!gpu_ptr", "!gpu.ptr<f32, global>")
    with pytest.raises(Exception, match=r"result layout must be \(4,1,\?\):\(16,0,\?\)"):
        verify(parse_module(bad))
