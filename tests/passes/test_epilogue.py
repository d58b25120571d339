"""The epilogue `axpby`: vectorised where x and y allow it, and computed in the
accumulator's type with y converted both ways (an f32 accumulator into f16 or bf16
output), checked by the values it writes on both CPU backends."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from cutec.cpu import native, reference
from cutec.diagnostics import CompileError
from cutec.driver import Options, Source, Stage, compile
from cutec.ir.dialects.builtin import KernelOp, ModuleOp
from cutec.ir.dialects.cute_compute import AxpbyOp
from tests.gemm_auto_launch import DIVISIBLE

EXAMPLES = Path(__file__).parents[2] / "examples"


def _module(text: str, **defines: object) -> ModuleOp:
    module = compile(Source(text, "epilogue.cute"), Stage.THREAD, Options(defines=defines))
    assert isinstance(module.module, ModuleOp)
    return module.module


def _cute_module(text: str, **defines: object) -> ModuleOp:
    module = compile(Source(text, "epilogue.cute"), Stage.CUTE, Options(defines=defines))
    assert isinstance(module.module, ModuleOp)
    return module.module


def _kernel(text: str, **defines: object) -> KernelOp:
    (k,) = _module(text, **defines).walk_type(KernelOp)
    return k


def _cute_axpby(path: Path, kernel: str, **defines: object) -> list[AxpbyOp]:
    module = compile(Source.from_file(path), Stage.CUTE, Options(kernel=kernel, defines=defines))
    assert isinstance(module.module, ModuleOp)
    return list(module.module.walk_type(AxpbyOp))


def test_epilogue_vector_width_follows_the_layouts() -> None:
    """sgemm_pipelined's permuted TiledMMA gives each thread runs of 4 rows: 4-wide
    stores; sgemm_2's rows are 16 apart (and its residue tiles predicate the epilogue):
    one element per access."""
    (wide,) = _cute_axpby(EXAMPLES / "sgemm_pipelined.cute", "sgemm_nt")
    assert wide.attributes["vector"].value == 4 and wide.pred is None
    (narrow,) = _cute_axpby(EXAMPLES / "sgemm_2.cute", "sgemm_nt")
    assert narrow.pred is not None and narrow.attributes["vector"].value == 1
    ptx = compile(
        Source.from_file(EXAMPLES / "sgemm_pipelined.cute"), Stage.PTX, Options(kernel="sgemm_nt")
    ).ptx
    assert ptx is not None and ptx.count("st.global.v4.f32") == 32  # 16 per beta branch


@pytest.mark.parametrize(
    ("kernel", "m_divisible", "width"), [("gemm_nt", True, 4), ("gemm_tn", False, 1)]
)
def test_a_predicated_epilogue_moves_vectors_that_cannot_straddle_the_end(
    kernel: str, m_divisible: bool, width: int
) -> None:
    """gemm_auto's epilogue comes back from shared memory as 4 f32 along M, under the
    predicate of a tile that may run past C. With ldC a multiple of 16 (which the jit
    learns at a launch) and M too, no vector straddles the end and each is one access
    under its first element's predicate; where the launch's M is odd (no fact of M),
    the epilogue moves an element at a time."""
    divisors = {n: d for n, d in DIVISIBLE["divisors"].items() if m_divisible or n != "M"}
    options = Options(
        kernel=kernel, target="sm_80", divisors=divisors, alignments=DIVISIBLE["alignments"]
    )
    module = compile(Source.from_file(EXAMPLES / "gemm_auto.cute"), Stage.CUTE, options)
    assert isinstance(module.module, ModuleOp)
    chunks = list(module.module.walk_type(AxpbyOp))  # one per MMA tile of C along N
    assert len(chunks) == 4  # 128x128 on 2x2 warps: MMA tiles of 32 columns
    for axpby in chunks:
        assert axpby.pred is not None and axpby.attributes["vector"].value == width


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32"])
def test_axpby_converts_the_accumulator(dtype: str) -> None:
    """y = alpha * acc + beta * y in f32, y read and written as `dtype` (to nearest even):
    within an ulp of the output type, and bit for bit the
    same on both CPU backends."""
    text = _EPILOGUE_KERNEL
    k = _kernel(text, T=dtype)
    np_type = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32}[dtype]
    m = 512
    rng = np.random.default_rng(5)
    c0 = rng.standard_normal(m).astype(np_type)
    acc = rng.standard_normal(m).astype(np.float32)
    (axpby,) = _cute_module(text, T=dtype).walk_type(AxpbyOp)
    assert axpby.attributes["vector"].value == 4  # 16 bytes of f32 x, 8 or 16 of y
    for beta in (0.0, -0.75):
        args = {"A": acc, "C": c0.copy(), "M": m, "alpha": 1.5, "beta": beta}
        ref = {**args, "C": c0.copy()}
        reference.run_kernel(k, m // 128, ref)
        native.run_kernel(k, m // 128, args)
        assert args["C"].tobytes() == ref["C"].tobytes()
        # fma(beta, y, alpha * x) in f32, then one rounding to the output type.
        want = (np.float32(1.5) * acc).astype(np.float64) + beta * c0.astype(np.float64)
        got = args["C"].astype(np.float64)
        ulp = {"f16": 2.0**-10, "bf16": 2.0**-7, "f32": 2.0**-23}[dtype]
        assert np.all(np.abs(got - want) <= ulp * np.abs(want) + 1e-30)


def test_axpby_of_integer_output_is_a_located_error() -> None:
    text = _EPILOGUE_KERNEL.replace("T: dtype = f16", "T: dtype = i32")
    with pytest.raises(CompileError) as info:
        _kernel(text)
    assert "axpby" in info.value.render()


# Thread t's accumulator holds A[4t..4t+3] of its block's 128; it writes C there.
_EPILOGUE_KERNEL = """
kernel epilogue[T: dtype = f16](A: f32[M] : (1) align 16, C: T[M] : (1) align 16,
                                alpha: f32, beta: f32)
  assume M % 128 == 0
  grid (ceil_div(M, 128)) threads 32
{
  tX = local_tile(local_tile(A, (128), (block.x)), (4), (thread.x))
  tC = local_tile(local_tile(C, (128), (block.x)), (4), (thread.x))
  acc = make_fragment_like(tX)
  copy(tX, acc)
  axpby(alpha, acc, beta, tC)
}
"""
