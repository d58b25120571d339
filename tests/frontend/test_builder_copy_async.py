"""Predicated cp.async copies (CuTe's copy_if with an SM80_CP_ASYNC atom): cute.copy_async
with a predicate operand, an AsyncProducer whose token the next fence commits."""

from __future__ import annotations

import pytest

from cutec.diagnostics import CompileError
from cutec.frontend import compile_source
from cutec.ir.dialects import cute as C
from cutec.ir.dialects import thread
from cutec.ir.dialects.builtin import KernelOp
from cutec.ir.parser import parse_module
from cutec.ir.printer import print_op
from cutec.ir.traits import AddressSpace, AsyncProducer, EffectKind, MemoryEffect
from cutec.ir.verifier import verify

KERNEL = """\
kernel k[BM: int = 128, BK: int = 8](A: f32[M, K] : (1, ldA) align 16)
  assume M % 4 == 0, ldA % 4 == 0
  grid ceil_div(M, BM) threads 256
{
  copy_a = tiled_copy(ATOM[u128], thr = (32, 8), val = (4, 1))
  gA = local_tile(A, (BM, BK), (block.x, 0))
  cA = local_tile(make_identity_tensor(shape(A)), (BM, BK), (block.x, 0))
  sA = smem f32[(BM, BK)]
  thr = copy_a.slice(thread.x)
  tAgA = thr.partition_S(gA)
  tAsA = thr.partition_D(sA)
  tAcA = thr.partition_S(cA)
  tApA = make_fragment_like(tAcA, dtype = bool)
  for i in range(size(tApA)) unroll { tApA[i] = elem_less(tAcA[i], shape(A)) }
  copy(copy_a, tAgA, tAsA, pred = tApA)
  cp_async_fence()
  cp_async_wait(0)
  sync()
}
"""


@pytest.mark.parametrize(
    "atom", ["SM80_CP_ASYNC_CACHEALWAYS_ZFILL", "SM80_CP_ASYNC_CACHEGLOBAL_ZFILL"]
)
def test_predicated_cp_async_is_a_copy_async_with_a_predicate(atom: str) -> None:
    module = compile_source(KERNEL.replace("ATOM", atom), "p.cute")
    verify(module)
    first = print_op(module)
    again = parse_module(first, "printed")
    verify(again)
    assert print_op(again) == first
    k = module.lookup("k")
    assert isinstance(k, KernelOp)
    (op,) = [o for o in k.walk() if isinstance(o, C.CopyAsyncOp)]
    assert not [o for o in k.walk() if isinstance(o, C.CopyIfOp | C.CopyOp)]
    assert str(op.operands[0].type.atom) == f"{atom}<uint128_t>"
    assert op.pred is not None and op.pred.name_hint == "tApA"
    assert str(op.pred.type) == "!cute.tensor<i1, rmem, ((4,1),1,1):((1,0),0,0)>"
    assert [v.name_hint for v in op.operands[2:]] == ["tAgA", "tAsA"]
    assert str(op.result.type) == "!gpu.token"
    assert op.has_trait(AsyncProducer)
    # reads the predicate's registers and the source's global memory, writes shared
    assert op.memory_effects() == (
        MemoryEffect(EffectKind.READ, AddressSpace.REGISTER),
        MemoryEffect(EffectKind.READ, AddressSpace.GLOBAL),
        MemoryEffect(EffectKind.WRITE, AddressSpace.SHARED),
    )
    # the fence commits this copy's token
    (commit,) = [o for o in k.walk() if isinstance(o, thread.CpAsyncCommitOp)]
    assert list(commit.operands) == [op.result]


def test_unpredicated_copy_async_keeps_three_operands() -> None:
    text = KERNEL.replace("ATOM", "SM80_CP_ASYNC_CACHEALWAYS").replace(", pred = tApA", "")
    k = compile_source(text, "p.cute").lookup("k")
    (op,) = [o for o in k.walk() if isinstance(o, C.CopyAsyncOp)]
    assert len(op.operands) == 3 and op.pred is None
    assert op.memory_effects() == (
        MemoryEffect(EffectKind.READ, AddressSpace.GLOBAL),
        MemoryEffect(EffectKind.WRITE, AddressSpace.SHARED),
    )


COPY = '!cute.tiled_copy<"SM80_CP_ASYNC_CACHEALWAYS_ZFILL<uint128_t>", f32, (256,4):(4,1), (128,8)>'


def _copy_async(pred_type: str) -> str:
    v = "((4,1),1,1):((1,0),0,0)"
    return (
        "func @f(%g: !cute.tensor<f32, gmem, " + v + ">) {\n"
        "  %c = cute.make_tiled_copy : " + COPY + "\n"
        "  %s = cute.alloc_smem : !cute.tensor<f32, smem, " + v + ">\n"
        "  %p = cute.make_fragment : " + pred_type + "\n"
        "  %t = cute.copy_async %c, %p, %g, %s : " + COPY + ", " + pred_type + ", "
        "!cute.tensor<f32, gmem, " + v + ">, !cute.tensor<f32, smem, " + v + "> -> !gpu.token\n"
        "  return\n}\n"
    )


@pytest.mark.parametrize(
    ("pred_type", "message"),
    [
        ("!cute.tensor<i1, rmem, (4,1):(1,0)>", None),
        (
            "!cute.tensor<i1, rmem, (8,1):(1,0)>",
            "sizes differ: 8 elements in (8,1):(1,0) vs 4 in ((4,1),1,1):((1,0),0,0)",
        ),
        (
            "!cute.tensor<f32, rmem, (4,1):(1,0)>",
            "the predicate must be an i1 rmem tensor, not f32 rmem",
        ),
    ],
)
def test_verifier_checks_the_predicate_of_copy_async(pred_type: str, message: str | None) -> None:
    module = parse_module(_copy_async(pred_type), "p.mlir")
    if message is None:
        verify(module)
        return
    with pytest.raises(CompileError) as info:
        verify(module)
    assert info.value.diagnostics[0].message == f"'cute.copy_async' op {message}"
