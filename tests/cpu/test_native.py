"""The llvmlite backend (cutec.cpu.native): the reference interpreter's hand-written
kernels and the lowered examples give the reference's bits; the GEMMs match float64;
planted errors are reported with location, thread and block."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cutec.cpu import native, reference
from cutec.cpu.reference import AccessError, InterpreterError
from cutec.driver import Options, Source, Stage, compile
from cutec.ir.dialects.builtin import KernelOp, ModuleOp
from tests.cpu.test_reference import DOT, OOB, PREDICATED, SCALE, TRANSPOSE, VECTOR, _kernel

EXAMPLES = Path(__file__).parents[2] / "examples"


def _kernels(source: Source, **defines: object) -> dict[str, KernelOp]:
    module = compile(source, Stage.THREAD, Options(defines=defines)).module
    assert isinstance(module, ModuleOp)
    return {k.sym_name: k for k in module.walk_type(KernelOp)}


def _both(kernel: KernelOp, grid: object, args: dict) -> tuple[dict, dict]:
    """Run on copies of `args` in the reference and natively: (reference's, native's)."""
    copies = [{k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}
              for _ in range(2)]  # fmt: skip
    reference.run_kernel(kernel, grid, copies[0])
    native.run_kernel(kernel, grid, copies[1])
    return copies[0], copies[1]


def _same_bits(a: dict, b: dict) -> None:
    for name, value in a.items():
        if isinstance(value, np.ndarray):
            assert value.tobytes() == b[name].tobytes(), name


def test_hand_written_kernels_give_the_reference_bits() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(96).astype(np.float32)
    _same_bits(*_both(_kernel(SCALE), 3, {"x": x, "y": np.zeros(96, np.float32), "a": 1.5}))
    _same_bits(*_both(_kernel(VECTOR), 1, {"x": x[:32].copy(), "y": np.zeros(16, np.float32)}))
    y = np.full(96, np.nan, np.float32)
    got = _both(_kernel(SCALE), 3, {"x": x, "y": y, "a": -0.75})[1]
    assert np.array_equal(got["y"], x * np.float32(-0.75))


def test_shared_memory_transpose_and_predicates() -> None:
    x = np.arange(128, dtype=np.float32)
    ref, got = _both(_kernel(TRANSPOSE), 2, {"in": x, "out": np.zeros(128, np.float32)})
    _same_bits(ref, got)
    assert np.array_equal(got["out"][:64], x[:64].reshape(8, 8).T.reshape(-1))
    x = np.arange(10, dtype=np.float32)  # shorter than the CTA: the guard keeps it in bounds
    ref, got = _both(_kernel(PREDICATED), 1, {"x": x, "y": np.zeros(16, np.float32), "n": 10})
    _same_bits(ref, got)


def test_loop_with_universal_fma_atom() -> None:
    x = np.linspace(0, 1, 12, dtype=np.float32)
    _same_bits(*_both(_kernel(DOT), 1, {"x": x, "out": np.zeros(4, np.float32), "k": 3}))


def test_an_out_of_bounds_store_is_reported_like_the_reference() -> None:
    k = _kernel(OOB)
    with pytest.raises(AccessError) as want:
        reference.run_kernel(k, 2, [np.zeros(64, np.float32)])
    with pytest.raises(AccessError) as got:
        native.run_kernel(k, 2, [np.zeros(64, np.float32)])
    assert str(got.value) == str(want.value)
    assert str(got.value).startswith("shift.cute:7:3: out-of-bounds store of 4 bytes")


DIVERGENT = """
module {
  kernel @k(%x: !gpu.ptr<f32, global>) attributes {reqntid = array<i32: 64, 1, 1>} {
    %t = gpu.thread_id x : index
    %c40 = arith.constant 40 : index
    %p = arith.cmpi slt, %t, %c40 : index
    scf.if %p {
      gpu.barrier
      scf.yield
    }
    return
  }
}
"""


def test_a_barrier_under_a_divergent_mask_is_reported() -> None:
    k = _kernel(DIVERGENT)
    with pytest.raises(InterpreterError, match=r"k.mlir:8:7: divergent barrier: thread \(40, 0, 0\)"
                       r" of block \(0, 0, 0\) does not reach it"):  # fmt: skip
        native.run_kernel(k, 1, [np.zeros(4, np.float32)])


# --------------------------------------------------------------------------- the examples
@pytest.fixture(scope="module")
def tiled_copy() -> dict[str, KernelOp]:
    return _kernels(Source.from_file(EXAMPLES / "tiled_copy.cute"))


@pytest.mark.parametrize("name", ["copy_kernel", "copy_kernel_vectorized",
                                  "copy_if_kernel_vectorized"])  # fmt: skip
def test_tiled_copy_examples(tiled_copy: dict[str, KernelOp], name: str) -> None:
    m, n = (260, 100) if name == "copy_if_kernel_vectorized" else (256, 128)
    s = np.random.default_rng(2).standard_normal((n, m)).astype(np.float32)
    d = np.full((n, m), np.nan, np.float32)
    ref, got = _both(tiled_copy[name], (-(-m // 128), -(-n // 64)),
                     {"S": s, "M": m, "N": n, "D": d})  # fmt: skip
    assert np.array_equal(got["D"], s)
    _same_bits(ref, got)


def test_transpose_example() -> None:
    k = _kernels(Source.from_file(EXAMPLES / "transpose.cute"))["transpose"]
    m, n = 64, 96
    s = np.random.default_rng(3).standard_normal((n, m)).astype(np.float32)  # (m, n) col-major
    d = np.full((m, n), np.nan, np.float32)  # (n, m) col-major
    ref, got = _both(k, (m // 32, n // 32), {"S": s, "M": m, "N": n, "D": d})
    assert np.array_equal(got["D"], s.T)
    _same_bits(ref, got)


@pytest.mark.parametrize(
    ("example", "kernel", "shape", "beta"),
    [
        ("sgemm_1", "sgemm_nt", (128, 128, 16), 0.25),
        ("sgemm_1", "sgemm_tn", (100, 36, 13), 0.0),
        ("sgemm_2", "sgemm_nt", (132, 20, 11), 0.0),
        ("sgemm_2", "sgemm_tn", (40, 136, 9), 0.5),
        ("sgemm_2_shared", "sgemm_nt", (128, 128, 16), 0.25),
    ],
)
def test_sgemm_examples_match_float64(example: str, kernel: str, shape: tuple, beta: float) -> None:
    """Sizes the tiles divide and sizes they do not; C poisoned with NaN when beta is 0."""
    from tests.passes.test_lowering_values import _gemm_args

    k = _kernels(Source.from_file(EXAMPLES / f"{example}.cute"))[kernel]
    m, n, kk = shape
    args, want = _gemm_args(kernel, m, n, kk, beta)
    native.run_kernel(k, (-(-m // 128), -(-n // 128)), args)
    c = args["C"].T.astype(np.float64)
    assert np.linalg.norm(c - want) / np.linalg.norm(want) < 1e-6


@pytest.mark.slow
@pytest.mark.parametrize(("example", "kernel"), [("sgemm_1", "sgemm_tn"), ("sgemm_2", "sgemm_nt")])
def test_sgemm_gives_the_reference_bits(example: str, kernel: str) -> None:
    """A ragged case, bit for bit against the interpreter (about 10 s there)."""
    from tests.passes.test_lowering_values import _gemm_args

    k = _kernels(Source.from_file(EXAMPLES / f"{example}.cute"))[kernel]
    args, _ = _gemm_args(kernel, 132, 20, 11, 0.5)
    _same_bits(*_both(k, (2, 1), args))


def test_elementwise_example() -> None:
    k = _kernels(Source.from_file(EXAMPLES / "elementwise.cute"))["axpy"]
    m = 1028  # not a multiple of the tile: the residue is predicated
    rng = np.random.default_rng(4)
    x = rng.standard_normal(m).astype(np.float16)
    y = rng.standard_normal(m).astype(np.float32)
    z = np.full(m, np.nan, np.float32)
    ref, got = _both(k, -(-m // 1024), {"x": x, "y": y, "z": z, "M": m, "alpha": 0.5})
    want = 0.5 * x.astype(np.float64) + y
    assert np.linalg.norm(got["z"] - want) / np.linalg.norm(want) < 1e-6
    _same_bits(ref, got)


BF16 = "!gpu.ptr<bf16, global>"
F32 = "!gpu.ptr<f32, global>"
F64 = "!gpu.ptr<f64, global>"
BF16_OPS = f"""
module {{
  kernel @bf(%x: {BF16}, %y: {BF16}, %w: {F32}, %v: {F64}, %out: {BF16}, %oi: !gpu.ptr<i32, global>,
             %a: bf16) attributes {{reqntid = array<i32: 64, 1, 1>}} {{
    %t = gpu.thread_id x : index
    %c8 = arith.constant 8 : index
    %base = arith.muli %t, %c8 : index
    %px = thread.ptr_add %x, %t : {BF16}, index
    %py = thread.ptr_add %y, %t : {BF16}, index
    %pw = thread.ptr_add %w, %t : {F32}, index
    %pv = thread.ptr_add %v, %t : {F64}, index
    %xv = thread.load %px : {BF16} -> bf16
    %yv = thread.load %py : {BF16} -> bf16
    %wv = thread.load %pw : {F32} -> f32
    %vv = thread.load %pv : {F64} -> f64
    %s = arith.addf %xv, %yv : bf16
    %m = arith.mulf %xv, %a : bf16
    %d = arith.divf %xv, %yv : bf16
    %f = arith.fma %xv, %yv, %s : bf16
    %tw = arith.truncf %wv : f32 to bf16
    %tv = arith.truncf %vv : f64 to bf16
    %e = math.exp %xv : bf16
    %lt = arith.cmpf olt, %xv, %yv : bf16
    %mx = arith.select %lt, %yv, %xv : bf16
    %lim = arith.constant 1000.0 : bf16
    %nlim = arith.constant -1000.0 : bf16
    %lo = arith.maximumf %xv, %nlim : bf16
    %cl = arith.minimumf %lo, %lim : bf16
    %ti = arith.fptosi %cl : bf16 to i32
    %fi = arith.sitofp %ti : i32 to bf16
    %c1 = arith.constant 1.5 : bf16
    %g = arith.subf %mx, %c1 : bf16
    %u = arith.fma %yv, %g, %xv : bf16
    %po = thread.ptr_add %out, %base : {BF16}, index
    %all = thread.from_elements %s, %m, %d, %f : vector<4xbf16>
    thread.store %all, %po : vector<4xbf16>, {BF16}
    %c4 = arith.constant 4 : index
    %po2 = thread.ptr_add %po, %c4 : {BF16}, index
    %all2 = thread.from_elements %tw, %tv, %e, %u : vector<4xbf16>
    thread.store %all2, %po2 : vector<4xbf16>, {BF16}
    %fw = arith.extf %fi : bf16 to f32
    %back = arith.fptosi %fw : f32 to i32
    %sum = arith.addi %ti, %back : i32
    %pi = thread.ptr_add %oi, %t : !gpu.ptr<i32, global>, index
    thread.store %sum, %pi : i32, !gpu.ptr<i32, global>
    return
  }}
}}
"""


def test_bf16_values_give_the_reference_bits() -> None:
    """bf16 arithmetic (through f32, fma through f64), conversions from f32 and f64 (as
    ml-dtypes rounds: ties to even, overflow to inf, subnormals), compares, casts."""
    import ml_dtypes

    k = _kernel(BF16_OPS)
    rng = np.random.default_rng(11)
    for _ in range(3):
        scale = 10.0 ** rng.integers(-30, 30, 64)
        w = (rng.standard_normal(64) * 10.0 ** rng.integers(-40, 38, 64)).astype(np.float32)
        tie = np.array([0x7F7F8000], np.uint32).view(np.float32)[0]  # max bf16 + half an ulp
        w[:6] = [1 + 2**-8, 1 + 3 * 2**-8, tie, 1e-40, -0.0, -(1 + 2**-8)]
        v = rng.standard_normal(64) * 10.0 ** rng.integers(-45, 39, 64)
        v[:3] = [1 + 2**-8 + 2**-40, 3.39e38, 1e-45]  # the first: f32 rounds onto the tie
        args = {
            "x": (rng.standard_normal(64) * scale).astype(ml_dtypes.bfloat16),
            "y": (rng.standard_normal(64) * scale[::-1]).astype(ml_dtypes.bfloat16),
            "w": w, "v": v, "out": np.zeros(512, ml_dtypes.bfloat16),
            "oi": np.zeros(64, np.int32), "a": 0.3,
        }  # fmt: skip
        ref, got = _both(k, 1, args)
        _same_bits(ref, got)
        tw = got["out"].reshape(64, 8)[:6, 4].astype(np.float32)
        assert tw.tolist()[:3] == [1.0, 1 + 2**-6, np.inf] and tw[4] == 0 and tw[5] == -1.0
        assert got["out"].reshape(64, 8)[0, 5] == 1.0  # ml-dtypes: through f32, onto the tie


class _MemoryObjects:
    """A `native.ObjectCache` in memory, counting what it is asked."""

    def __init__(self) -> None:
        self.codes: dict[str, bytes] = {}
        self.stores = 0

    def load(self, key: str) -> bytes | None:
        return self.codes.get(key)

    def store(self, key: str, code: bytes) -> None:
        self.codes[key] = code
        self.stores += 1


def test_object_code_is_stored_once_and_loaded_after() -> None:
    """The first compile stores the object code under the hash of its LLVM text and
    host; the second loads it (LLVM compiles nothing, so stores nothing) and runs the
    same; another specialisation (checks off) is another entry."""
    objects = _MemoryObjects()
    kernel = _kernel(SCALE)
    x = np.random.default_rng(1).standard_normal(96).astype(np.float32)
    outs = []
    for _ in range(2):
        nk = native.compile_kernel(kernel, objects=objects)
        y = np.zeros(96, np.float32)
        native.run_kernel(kernel, 3, {"x": x, "y": y, "a": 1.5}, native=nk)
        outs.append(y)
    assert objects.stores == 1 and list(objects.codes) == [native.object_key(nk.program.text)]
    assert np.array_equal(outs[0], x * np.float32(1.5)) and np.array_equal(outs[0], outs[1])
    native.compile_kernel(kernel, bounds_check=False, check_shared=False, objects=objects)
    assert objects.stores == 2 and len(objects.codes) == 2
