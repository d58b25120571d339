"""The runtime without a GPU: launch signatures, specialize-args, the launch
function's checks and packing, the disk cache, device="cpu" and the CLI verbs.

The GPU launch function is exercised here with the CUDA driver replaced by a
recorder (`_fake_gpu`): every check and the packed parameter bytes are the
same code a GPU launch runs; tests/gpu/test_jit_gpu.py runs them for real.
"""

from __future__ import annotations

import ctypes
import struct
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import cutec.runtime as rt
from cutec.cli import main
from cutec.diagnostics import CompileError
from cutec.driver import Options, Source, Stage, compile
from cutec.ir.signature import KernelSignature, ScalarParam, TensorParam, names_resident_ctas
from cutec.runtime import cache, launcher
from cutec.runtime.jit import CPU_RESIDENT_CTAS
from tests.passes.test_lowering_values import CP_ASYNC  # one staging kernel for both

EXAMPLES = Path(__file__).parents[2] / "examples"


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test its own disk cache, and no kernel object shared with another test."""
    monkeypatch.setenv("CUTEC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(sys.modules["cutec.runtime.jit"], "_KERNELS", {})


def test_signature_of_sgemm_2() -> None:
    result = compile(Source.from_file(EXAMPLES / "sgemm_2.cute"), Stage.CUTE, Options())
    nt, tn = result.signatures["sgemm_nt"], result.signatures["sgemm_tn"]
    assert nt.params == (
        TensorParam("A", "f32", ("M", "K"), (1, "ldA"), 16),
        TensorParam("B", "f32", ("N", "K"), (1, "ldB"), 16),
        TensorParam("C", "f32", ("M", "N"), (1, "ldC"), 4, "write"),
        ScalarParam("alpha", "f32"),
        ScalarParam("beta", "f32"),
    )
    assert [n for n, _ in nt.abi] == ["A", "M", "K", "ldA", "B", "N", "ldB", "C", "ldC",
                                      "alpha", "beta"]  # fmt: skip
    assert dict(nt.facts) == {"M": 4, "N": 4, "ldA": 4, "ldB": 4}
    assert tn.params[0].stride == ("ldA", 1)
    assert KernelSignature.from_json(nt.to_json()) == nt


def test_signature_names_computed_strides() -> None:
    """transpose.cute's D: f32[N, M] has the default column-major stride (1, N)."""
    result = compile(Source.from_file(EXAMPLES / "transpose.cute"), Stage.CUTE, Options())
    d = result.signatures["transpose"].params[1]
    assert (d.shape, d.stride) == (("N", "M"), (1, "N"))


def test_specialize_args_adds_facts() -> None:
    pipeline = "specialize-args{div=K:16 ldC:8,align=C:16}"
    result = compile(
        Source.from_file(EXAMPLES / "sgemm_2.cute"),
        Stage.CUTE,
        Options(kernel="sgemm_nt", pipeline=pipeline),
    )
    text = result.text
    assert "cute.make_tensor %A, %M, %K, %ldA {div = array<i64: 4, 16, 4>, align = 16" in text
    assert "cute.make_tensor %C, %M, %N, %ldC {div = array<i64: 4, 4, 8>, align = 16" in text
    with pytest.raises(Exception, match="must read NAME:N"):
        compile(Source.from_file(EXAMPLES / "sgemm_2.cute"), Stage.CUTE,
                Options(kernel="sgemm_nt", pipeline="specialize-args{div=K16}"))  # fmt: skip


def _col_major(rows: int, cols: int, rng: np.random.Generator) -> np.ndarray:
    return np.asfortranarray(rng.standard_normal((rows, cols)).astype(np.float32))


def test_cpu_sgemm_ragged_against_float64() -> None:
    k = rt.jit(EXAMPLES / "sgemm_2.cute", kernel="sgemm_tn", device="cpu", BM=32, BN=32)
    rng = np.random.default_rng(0)
    m, n, kk = 36, 40, 9
    a = np.ascontiguousarray(_col_major(m, kk, rng))  # K-major
    b = np.ascontiguousarray(_col_major(n, kk, rng))
    c0 = _col_major(m, n, rng)
    c = c0.copy(order="F")
    k(a, b, c, 1.5, 0.5)
    ref = 1.5 * a.astype(np.float64) @ b.astype(np.float64).T + 0.5 * c0
    assert np.linalg.norm(c - ref) / np.linalg.norm(ref) < 1e-6


def test_cpu_transpose() -> None:
    k = rt.jit(EXAMPLES / "transpose.cute", device="cpu")
    s = _col_major(64, 96, np.random.default_rng(1))
    d = np.full((96, 64), np.nan, np.float32, order="F")
    k(D=d, S=s)  # by the kernel's parameter names
    assert np.array_equal(d, s.T)


def test_cpu_object_code_comes_from_the_disk_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first kernel object compiles the warp code and stores its object code; a new
    kernel object (as in a new process) loads it: LLVM compiles nothing, and it runs."""
    stored: list[str] = []
    real_store = cache.store

    def spy(k: str, entry: cache.Entry) -> None:
        stored.extend(name for name in entry.blobs if name == "object")
        real_store(k, entry)

    monkeypatch.setattr(cache, "store", spy)
    s = _col_major(64, 96, np.random.default_rng(1))
    for _ in range(2):
        monkeypatch.setattr(sys.modules["cutec.runtime.jit"], "_KERNELS", {})
        k = rt.jit(EXAMPLES / "transpose.cute", device="cpu")
        d = np.full((96, 64), np.nan, np.float32, order="F")
        k(D=d, S=s)
        assert np.array_equal(d, s.T) and k.cpu_backend == "native"
    assert stored == ["object"]


class _DLPackOnly:
    """An array known only through DLPack (as JAX's or any framework's would be)."""

    def __init__(self, array: Any) -> None:
        self._array = array

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> Any:
        return self._array.__dlpack_device__()


def test_cpu_dlpack_arrays() -> None:
    k = rt.jit(EXAMPLES / "transpose.cute", device="cpu")
    s = _col_major(64, 96, np.random.default_rng(1))
    d = np.full((96, 64), np.nan, np.float32, order="F")
    k(_DLPackOnly(s), _DLPackOnly(d))
    assert np.array_equal(d, s.T)


# --------------------------------------------------------------------------- checks
def _errors_kernel() -> rt.Kernel:
    return rt.jit(EXAMPLES / "sgemm_2.cute", kernel="sgemm_nt", device="cpu")


def _aligned(rows: int, cols: int) -> np.ndarray:
    return _col_major(rows, cols, np.random.default_rng(2))


@pytest.mark.parametrize(
    ("mutate", "kind", "message"),
    [
        (lambda a, b, c: (a.astype(np.float64), b, c), TypeError,
         "parameter 'A' is declared f32; got an array of f64"),
        (lambda a, b, c: (a[:, :, None], b, c), ValueError, "parameter 'A' has 2 modes"),
        (lambda a, b, c: (a, _aligned(40, 7), c), ValueError,
         "parameter 'B': K is 7 here but 8 in 'A'"),
        (lambda a, b, c: (np.ascontiguousarray(a), b, c), ValueError,
         "parameter 'A': the stride of mode 0 is declared 1; got 8 (in elements)"),
        (lambda a, b, c: (_aligned(34, 8), b, c), ValueError,
         "parameter 'A': M = 34 is not divisible by 4"),
        (lambda a, b, c: ([[1.0]], b, c), TypeError, "parameter 'A' is a tensor; got list"),
    ],
)  # fmt: skip
def test_a_bad_array_names_its_parameter(mutate: Any, kind: type, message: str) -> None:
    k = _errors_kernel()
    a, b, c = _aligned(36, 8), _aligned(40, 8), _aligned(36, 40)
    a, b, c = mutate(a, b, c)
    with pytest.raises(kind, match=message.replace("(", r"\(").replace(")", r"\)")):
        k(a, b, c, 1.0, 0.0)


def test_bad_scalars_and_arity() -> None:
    k = _errors_kernel()
    a, b, c = _aligned(36, 8), _aligned(40, 8), _aligned(36, 40)
    with pytest.raises(TypeError, match="parameter 'alpha' is a scalar of type f32; got '1'"):
        k(a, b, c, "1", 0.0)
    with pytest.raises(
        TypeError, match="sgemm_nt\\(\\) missing 1 required positional argument: 'beta'"
    ):
        k(a, b, c, 1.0)
    # One too many: counted as the kernel's parameters (Python would count `self` too).
    with pytest.raises(
        TypeError, match=r"sgemm_nt\(\) takes 5 arguments \(A, B, C, alpha, beta\), got 6"
    ):
        k(a, b, c, 1.0, 0.0, 2.0)


def test_misaligned_base_is_refused() -> None:
    k = _errors_kernel()
    buf = np.zeros(36 * 8 + 1, np.float32)
    a = np.ndarray((36, 8), np.float32, buf[1:], strides=(4, 144))  # 4 bytes off
    if a.ctypes.data % 16 == 0:
        a = np.ndarray((36, 8), np.float32, buf[2:], strides=(4, 144))
    with pytest.raises(ValueError, match="is not 16-byte aligned"):
        k(a, _aligned(40, 8), _aligned(36, 40), 1.0, 0.0)


class _FakeCai:
    """A device array as `__cuda_array_interface__` describes one (never dereferenced)."""

    def __init__(self, shape: tuple[int, ...], strides: tuple[int, ...], ptr: int,
                 typestr: str = "<f4", device: int = 0, readonly: bool = False
                 ) -> None:  # fmt: skip
        itemsize = int(typestr[2:])
        self.__cuda_array_interface__ = {
            "shape": shape, "strides": tuple(s * itemsize for s in strides),
            "typestr": typestr, "data": (ptr, readonly), "version": 3,
        }  # fmt: skip
        self.device = SimpleNamespace(id=device)


def _fake_gpu(monkeypatch: pytest.MonkeyPatch, k: rt.Kernel, fast: bool = False) -> list[tuple]:
    """Launches of `k` recorded (grid, block, packed parameter bytes) instead of run; with
    `fast`, through the C launch's calling convention (fastlaunch), else cuda.bindings'."""
    calls: list[tuple] = []
    monkeypatch.setattr(k, "_variant", lambda key, dev: launcher.Variant(key, 0, "handle", 0xF00D))
    layout = launcher.param_layout(k.signature.abi_types())
    size = layout[-1].offset + layout[-1].size

    def record(function, g0, g1, g2, b0, b1, b2, smem, stream, params):
        pointers = (ctypes.c_void_p * len(layout)).from_address(params)
        raw = ctypes.string_at(pointers[0], size)
        calls.append(((g0, g1, g2), (b0, b1, b2), raw, stream, function))
        return 0

    def bindings_launch(handle, g0, g1, g2, b0, b1, b2, smem, stream, params, extra):
        return (record(handle, g0, g1, g2, b0, b1, b2, smem, stream, params),)

    monkeypatch.setattr(
        launcher, "cuda_env",
        lambda: {"_fast": fast, "_cu_launch": record if fast else bindings_launch,
                 "_launch_failed": None, "_pending": [], "_blocking": False,
                 "_synchronize_after": None, "_torch_stream": lambda dev: 0},
    )  # fmt: skip
    return calls


@pytest.mark.parametrize("fast", [False, True])
def test_gpu_launch_packs_the_abi(monkeypatch: pytest.MonkeyPatch, fast: bool) -> None:
    k = rt.jit(EXAMPLES / "sgemm_2.cute", kernel="sgemm_nt")
    calls = _fake_gpu(monkeypatch, k, fast)
    m, n, kk = 260, 132, 48
    a = _FakeCai((m, kk), (1, 264), 0x10000)
    b = _FakeCai((n, kk), (1, 136), 0x20000)
    c = _FakeCai((m, n), (1, m), 0x30004)
    k(a, b, c, 1.5, -2.0, stream=7)
    ((grid, block, raw, stream, function),) = calls
    assert grid == (3, 2, 1) and block == (256, 1, 1) and stream == 7
    assert function == (0xF00D if fast else "handle")
    expected = struct.pack("<QqqqQqqQqff", 0x10000, m, kk, 264, 0x20000, n, 136, 0x30004, m,
                           1.5, -2.0)  # fmt: skip
    assert raw == expected
    # The specialisation: K = 48 is a multiple of 16; ldC = 260 is not, but of 16 bytes of
    # f32 (4). ldA = 264 and N = 132 are not multiples of 16, and the kernel's own facts
    # say they are of 4: no bit.
    (key,) = {packed >> 8 for packed in k._launcher.__variants__}  # key << 8 | GPU
    facts = dict(k._facts(key))
    assert facts == {"K": 16, "ldC": 4}
    assert facts.get("@C") is None  # C's base 0x30004 is not 16-byte aligned


def test_gpu_launch_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    k = rt.jit(EXAMPLES / "sgemm_2.cute", kernel="sgemm_nt")
    _fake_gpu(monkeypatch, k)
    a = _FakeCai((64, 16), (1, 64), 0x10000)
    b = _FakeCai((64, 16), (1, 64), 0x20000)
    c = _FakeCai((64, 64), (1, 64), 0x30000)
    with pytest.raises(ValueError, match="'B' is on GPU 1 but 'A' is on GPU 0"):
        k(a, _FakeCai((64, 16), (1, 64), 0x20000, device=1), c, 1.0, 0.0)
    with pytest.raises(ValueError, match="'A' is in host memory"):
        k(np.zeros((64, 16), np.float32, order="F"), b, c, 1.0, 0.0)
    with pytest.raises(ValueError, match="does not fit the kernel's 32-bit offsets"):
        big = (1 << 15) + 16
        k(_FakeCai((1 << 16, big), (1, 1 << 16), 0x10000), _FakeCai((64, big), (1, 64), 0),
          _FakeCai((1 << 16, 64), (1, 1 << 16), 0), 1.0, 0.0)  # fmt: skip
    with pytest.raises(ValueError, match="stride 1 is -64; negative strides"):
        k(_FakeCai((64, 16), (1, -64), 0x10000), b, c, 1.0, 0.0)
    calls = len(k._launcher.__variants__)
    empty = _FakeCai((0, 16), (1, 0), 0x10000)
    k(empty, b, _FakeCai((0, 64), (1, 0), 0x30000), 1.0, 0.0)  # M = 0: nothing to launch
    assert len(k._launcher.__variants__) >= calls


def test_no_driver_says_so() -> None:
    try:
        rt.cuda.driver()
    except rt.NoDriverError as e:
        assert 'device="cpu"' in str(e)
    else:
        pytest.skip("this machine has a CUDA driver")


# --------------------------------------------------------------------------- cache
def test_cache_entries_are_atomic_and_checked(tmp_path: Path) -> None:
    key = cache.key("some", "inputs")
    assert key != cache.key("some", "other inputs")
    cache.store(key, cache.Entry({"ptx": "x"}, {"cubin": b"\x00\x01"}))
    entry = cache.load(key)
    assert entry is not None and entry.meta == {"ptx": "x"} and entry.blobs["cubin"] == b"\x00\x01"
    (path,) = cache.directory().glob("*/*.json")
    assert not list(cache.directory().glob("*/.tmp-*"))
    path.write_text(path.read_text().replace('"x"', '"y"'))  # changed after writing
    assert cache.load(key) is None
    path.write_text("{not json")
    assert cache.load(key) is None
    assert cache.info()["entries"] == 1 and cache.clear() == 1 and cache.info()["entries"] == 0


def test_cache_key_covers_imports(tmp_path: Path) -> None:
    (tmp_path / "lib.cute").write_text("const X = 1\n")
    main_file = tmp_path / "k.cute"
    main_file.write_text('import "lib.cute"\n')
    before = cache.imported_texts(main_file.read_text(), main_file)
    (tmp_path / "lib.cute").write_text("const X = 2\n")
    assert cache.imported_texts(main_file.read_text(), main_file) != before


def test_cache_key_covers_cutecs_own_cute_library() -> None:
    """The whole-tensor gemm inlines lib/gemm_tiled.cute: an edited library must not
    load kernels compiled from the old one (it did: only .py and .lark were hashed)."""
    names = {p.name for p in cache.code_files()}
    assert {"gemm_tiled.cute", "grammar.lark", "cache.py"} <= names


def test_jit_reuses_the_disk_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    first = rt.jit(EXAMPLES / "transpose.cute", device="cpu")
    ptx = first.ptx
    assert rt.jit(EXAMPLES / "transpose.cute", device="cpu") is first  # kept in memory
    monkeypatch.setattr(sys.modules["cutec.runtime.jit"], "_KERNELS", {})  # a new process
    assert cache.info()["entries"] >= 2  # the signature and the unspecialised PTX
    calls = []
    monkeypatch.setattr(sys.modules["cutec.runtime.jit"], "compile", lambda *a: calls.append(a))
    second = rt.jit(EXAMPLES / "transpose.cute", device="cpu")
    assert second.ptx == ptx and not calls


def test_cache_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUTEC_CACHE", "0")
    rt.jit(EXAMPLES / "transpose.cute", device="cpu").ptx  # noqa: B018
    assert cache.info()["entries"] == 0


def test_inspection_on_the_cpu() -> None:
    k = rt.jit(EXAMPLES / "sgemm_2.cute", kernel="sgemm_nt", device="cpu")
    assert ".entry sgemm_nt" in k.ptx
    assert "cute.view" in k.ir("partition")
    with pytest.raises(ValueError, match="no stage or pass"):
        k.ir("nonsense")


def test_a_compile_error_is_the_located_report() -> None:
    k = rt.jit("kernel k(A: f32[M]) grid 1 threads 32 { x = nope }", device="cpu")
    with pytest.raises(rt.CompileError if hasattr(rt, "CompileError") else Exception) as info:
        k.ptx  # noqa: B018
    assert "<jit>:1:" in str(info.value) and "^" in str(info.value)


# --------------------------------------------------------------------------- CLI
def test_cli_run_on_the_cpu(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(EXAMPLES / "transpose.cute"), "--device", "cpu",
                 "--shape", "S=64,32"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    lines = {line.split(":")[0]: line for line in out.splitlines()}
    assert "strides (1, 64)" in lines["S"] and "strides (1, 32)" in lines["D"]
    sums = [line.split("sum ")[1].split()[0] for line in out.splitlines()]
    assert sums[0] == sums[1]  # D is S transposed: the same elements


def test_cli_run_of_a_tma_kernel_makes_no_input_for_its_map(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A tensor map is the runtime's to build: `cutec run` gives the kernel its tensors."""
    tile = Path(__file__).parents[1] / "cpu" / "data" / "tma_tile.cute"
    assert main(["run", str(tile), "--kernel", "tile_k_sw128", "--device", "cpu",
                 "--shape", "A=72,40"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    lines = {line.split(":")[0]: line for line in out.splitlines()}
    assert set(lines) == {"A", "D"}
    assert lines["A"].split("sum ")[1] == lines["D"].split("sum ")[1]  # D is A's copy


def test_cli_cache(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cache", "info"]) == 0
    assert "entries:   0" in capsys.readouterr().out
    rt.jit(EXAMPLES / "transpose.cute", device="cpu").ptx  # noqa: B018
    assert main(["cache", "clear"]) == 0
    assert "removed 2 entries" in capsys.readouterr().out


def test_scalar_conversions() -> None:
    errors = launcher.ArgumentErrors("k")
    assert launcher.scalar_value(errors, "h", "f16", 1.5) == 0x3E00  # 1.5 in binary16
    assert launcher.scalar_value(errors, "b", "bf16", -2.0) == 0xC000
    assert launcher.scalar_value(errors, "p", "i1", True) == 1
    assert launcher.scalar_value(errors, "n", "i32", -(2**31)) == -(2**31)
    with pytest.raises(ValueError, match="parameter 'n': 2147483648 does not fit i32"):
        launcher.scalar_value(errors, "n", "i32", 2**31)
    with pytest.raises(TypeError, match=r"parameter .n. is a scalar of type int; got 1\.5"):
        launcher.scalar_value(errors, "n", "i32", 1.5)
    with pytest.raises(TypeError, match="parameter 'x' is a scalar of type f32; got True"):
        launcher.scalar_value(errors, "x", "f32", True)


def test_cpu_kernels_run_natively_or_fall_back(monkeypatch: pytest.MonkeyPatch) -> None:
    from cutec.cpu import native

    k = rt.jit(EXAMPLES / "transpose.cute", device="cpu")
    s = _col_major(64, 32, np.random.default_rng(5))
    d = np.full((32, 64), np.nan, np.float32, order="F")
    k(s, d)
    assert np.array_equal(d, s.T) and k.cpu_backend == "native"
    staged = rt.jit(CP_ASYNC, device="cpu")  # cp.async, natively
    s = _col_major(36, 10, np.random.default_rng(6))
    d = np.full((36, 10), np.nan, np.float32, order="F")
    staged(s, d)
    assert np.array_equal(d, s) and staged.cpu_backend == "native"

    def unsupported(*args: object, **kwargs: object) -> None:
        raise native.Unsupported("op test.op")

    monkeypatch.setattr(native, "compile_kernel", unsupported)
    k = rt.jit(EXAMPLES / "transpose.cute", device="cpu", B=32)  # a new kernel object
    s = _col_major(64, 32, np.random.default_rng(7))
    d = np.full((32, 64), np.nan, np.float32, order="F")
    k(s, d)
    assert np.array_equal(d, s.T) and k.cpu_backend == "reference (op test.op)"


def test_the_c_launch_builds(tmp_path: Path) -> None:
    """The C launch helper compiles with this machine's compiler and Python headers; where
    libcuda is missing its import fails and load() falls back to cuda.bindings (None)."""
    import shutil

    from cutec.runtime import fastlaunch

    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler")
    target = tmp_path / "cutec_fastlaunch_test.so"
    assert fastlaunch._build(target) and target.stat().st_size > 0
    try:
        rt.cuda.driver()
    except rt.NoDriverError:
        fastlaunch.extension.cache_clear()
        assert fastlaunch.load() is None


def test_cli_run_lays_out_tensors_as_declared() -> None:
    """Static strides as written, run-time ones compact, expressions evaluated."""
    from cutec.commands.run_args import layouts

    a = TensorParam("A", "f32", ("M", "N", "K"), (1, "M", "M*N"), 4)
    b = TensorParam("B", "f32", ("K", "M"), ("ldB", 1), 4)
    values: dict[str, int] = {}
    laid = layouts([a, b], {"A": [3, 5, 7]}, values)
    assert laid == {"A": ((3, 5, 7), (1, 3, 15)), "B": ((7, 3), (3, 1))}
    assert values == {"M": 3, "N": 5, "K": 7, "ldB": 3}


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--shape", "A=34,8", "--shape", "B=40,8"], "parameter 'A': M = 34 is not divisible by 4"),
        (["--shape", "A=36,8", "--shape", "B=40,8", "--set", "alpha=abc"],
         "--set alpha: expected a number, got 'abc'"),
        (["--shape", "A=3x6,8"], "--shape A=3x6,8: expected an integer, got '3x6'"),
    ],
)  # fmt: skip
def test_cli_run_mistakes_are_user_errors(
    flags: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A launch argument the kernel refuses is one message and exit code 1, not an
    internal compiler error."""
    argv = ["run", str(EXAMPLES / "sgemm_2.cute"), "--kernel", "sgemm_nt", "--device", "cpu"]
    assert main(argv + flags) == 1
    err = capsys.readouterr().err
    assert message in err and "internal compiler error" not in err


def test_cpu_refuses_a_host_array_of_negative_strides() -> None:
    """Strided views run (test_broadcast_cpu); a negative stride reaches before the
    first element, which the CPU backend does not address."""
    k = rt.jit(EXAMPLES / "transpose.cute", device="cpu")
    s = _col_major(64, 64, np.random.default_rng(1))[::-1, :]
    d = np.full((64, 64), np.nan, np.float32, order="F")
    with pytest.raises(rt.ArgumentError, match="parameter 'S': device='cpu' runs on arrays"):
        k(s, d)


@pytest.mark.parametrize("kernel", ["sgemm_nt", "sgemm_tn"])
def test_sgemm_pipelined_matches_float64(kernel: str) -> None:
    """The multistage cp.async SIMT GEMM (permuted TiledMMA, one k-block of registers
    ahead): more k-tiles than stages, beta nonzero, then C poisoned with NaN."""
    k = rt.jit(EXAMPLES / "sgemm_pipelined.cute", kernel=kernel, device="cpu")
    assert k.cpu_backend is None or k.cpu_backend == "native"
    rng = np.random.default_rng(7)
    # 5 k-tiles of 16 through 4 stages; two CTAs, the first leaving copies it never waits
    # for (the last k-tiles issue loads nobody reads), which must not haunt the second.
    m, n, kk = 128, 256, 80
    a = rng.standard_normal((m, kk), dtype=np.float32)
    b = rng.standard_normal((n, kk), dtype=np.float32)
    if kernel == "sgemm_nt":
        a, b = np.asfortranarray(a), np.asfortranarray(b)
    c0 = rng.standard_normal((m, n), dtype=np.float32)
    c = np.asfortranarray(c0)
    k(a, b, c, 1.5, -0.5)
    want = 1.5 * (a.astype(np.float64) @ b.astype(np.float64).T) - 0.5 * c0
    assert np.linalg.norm(c - want) / np.linalg.norm(want) < 1e-6
    c = np.asfortranarray(np.full((m, n), np.nan, np.float32))
    k(a, b, c, 1.0, 0.0)
    want = a.astype(np.float64) @ b.astype(np.float64).T
    assert np.linalg.norm(c - want) / np.linalg.norm(want) < 1e-6


# A grid that names resident_ctas: the CTAs the device holds at once (the driver's
# occupancy on a GPU; CPU_RESIDENT_CTAS on the CPU), read at the launch.
RESIDENT = """
kernel fill(A: i32[N] : (1))
  grid (min(ceil_div(N, 32), resident_ctas)) threads 32
{
  for t in range(block.x, ceil_div(N, 32), grid_dim.x) {
    i = t * 32 + thread.x
    if i < N {
      A[i] = i32(block.x)
    }
  }
}
"""


def test_a_grid_may_name_resident_ctas() -> None:
    k = rt.jit(RESIDENT, device="cpu")
    a = np.full(300, -1, np.int32)  # 10 blocks of 32 over 4 CTAs
    k(a)
    want = [(i // 32) % CPU_RESIDENT_CTAS for i in range(300)]
    np.testing.assert_array_equal(a, want)
    small = np.full(40, -1, np.int32)  # 2 blocks: 2 CTAs
    k(small)
    np.testing.assert_array_equal(small, [i // 32 for i in range(40)])
    assert names_resident_ctas("min(resident_ctas,ceil_div(N,32))")
    assert not names_resident_ctas("resident_ctas_2+N")


def test_resident_ctas_is_a_grid_name_only() -> None:
    source = RESIDENT.replace("A[i] = i32(block.x)", "A[i] = i32(resident_ctas)")
    with pytest.raises(CompileError) as e:
        compile(Source(source, "r.cute"), Stage.CUTE, Options())
    assert "resident_ctas" in str(e.value)


def test_persistent_gemm_auto_loops_over_tiles() -> None:
    """gemm_auto with PERSIST = true and small tiles: 12 tiles of 32x32 on the CPU's 4
    resident CTAs, so each CTA takes three."""
    small = {"BM": 32, "BN": 32, "BK": 32, "BP": 2}
    k = rt.jit(EXAMPLES / "gemm_auto.cute", "gemm_tn", device="cpu", PERSIST=True, **small)
    rng = np.random.default_rng(3)
    m, n, kk = 96, 128, 48
    a = rng.integers(-3, 4, (m, kk)).astype(np.float16)
    b = rng.integers(-3, 4, (n, kk)).astype(np.float16)
    c = np.asfortranarray(np.full((m, n), np.nan, np.float32))
    k(a, b, c, 1.0, 0.0)
    np.testing.assert_array_equal(c, a.astype(np.float64) @ b.astype(np.float64).T)


def _stream_k_splitting_any_k() -> str:
    """examples/gemm_stream_k.cute with `split_min_k = 0` in both kernels of each pair:
    small problems split as large ones do (by default a split must save 2048 of K)."""
    source = (EXAMPLES / "gemm_stream_k.cute").read_text()
    assert source.count("wave = W") == 8
    return source.replace("wave = W", "wave = W, split_min_k = 0")


# Tiles small enough for the CPU: 32x32x32, 2 stages, 4 warps.
SK_SMALL = {"BM": 32, "BN": 32, "BK": 32, "BP": 2, "THREADS": 128}


def stream_k_operands(lay: str, mnk: tuple[int, int, int], seed: int) -> tuple[np.ndarray, ...]:
    """Small-integer A (M,K) and B (N,K) in float64, f16 copies laid out as `lay` says
    (NT, TN, NN, TT), C0 and a column-major copy of it for C: every product and sum is
    exact, so the result must equal 2 A B^T - C0 exactly."""
    m, n, k = mnk
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, (m, k)).astype(np.float64)
    b = rng.integers(-3, 4, (n, k)).astype(np.float64)
    c0 = rng.integers(-3, 4, (m, n)).astype(np.float32)
    ga = (np.asfortranarray(a) if lay[0] == "n" else np.ascontiguousarray(a)).astype(np.float16)
    gb = (np.asfortranarray(b) if lay[1] == "t" else np.ascontiguousarray(b)).astype(np.float16)
    return a, b, c0, ga, gb, np.asfortranarray(c0.copy())


def _run_stream_k_pair(
    full: Any, tail: Any, lay: str, mnk: tuple[int, int, int], w: int, seed: int
) -> np.ndarray:
    """C = 2 A B^T - C0 by the full waves' kernel, then the tail (a slot of WS and a flag
    per CPU resident CTA), exact against float64 (a tile written twice would subtract
    C0 twice), the flags left zero; returns WS."""
    a, b, c0, ga, gb, c = stream_k_operands(lay, mnk, seed)
    ws = np.asfortranarray(np.full((32 * 32, CPU_RESIDENT_CTAS), np.nan, np.float32))
    fl = np.zeros(CPU_RESIDENT_CTAS, np.int32)
    full(ga, gb, c, 2.0, -1.0, w)
    tail(ga, gb, c, 2.0, -1.0, w, ws, fl)
    np.testing.assert_array_equal(c, 2.0 * a @ b.T - c0, err_msg=f"{mnk} W {w}")
    assert not fl.any()
    return ws


# CI runs the NT pair; the other majors are slow cases (the same lowering, other
# layouts: `pytest -m slow`), to keep the suite within its time.
@pytest.mark.parametrize(
    "lay", ["nt", *(pytest.param(x, marks=pytest.mark.slow) for x in ("tn", "nn", "tt"))]
)
def test_stream_k_pair_is_exact(lay: str) -> None:
    """examples/gemm_stream_k.cute on the CPU, small tiles: the full waves' kernel and
    the stream-K tail (4 resident CTAs) together compute every tile once, for waves W
    that split the tail (tiles % W at most two thirds of W, shares spanning tiles and
    ending inside them; any K) and ones that do not; the flags are left zero. With the
    default split_min_k, a small K keeps the whole last wave in the first kernel."""
    source = _stream_k_splitting_any_k()
    full = rt.jit(source, f"gemm_{lay}", device="cpu", **SK_SMALL)
    tail = rt.jit(source, f"gemm_{lay}_tail", device="cpu", **SK_SMALL)
    # (M, N, K), W: 6 tiles of W 4 (2 left: split into 4 shares of half a tile), 10 of
    # 3 (1 left: 2 shares), 9 of 4 (1 left, K = 40: 2 k-tiles), 6 of 5 (1 left), 12 of 5
    # (2 left), 6 of 7 (no full wave: the first kernel takes all), 8 of 3 (2 left of 3:
    # two thirds, split), 12 of 5 and 9 with K = 96 (shares spanning tiles), 11 of 4 (3
    # left: more than two thirds, the first kernel takes all, the tail launches none),
    # 12 of 4 (3 full waves, none left: no tail launch), W 0 and -3 (a wave below 1
    # counts as 1: no split).
    cases = [((96, 64, 200), 4), ((160, 64, 72), 3), ((96, 96, 40), 4), ((64, 96, 512), 5),
             ((128, 96, 96), 5), ((64, 96, 64), 7), ((128, 64, 160), 3),
             ((96, 128, 96), 5), ((96, 128, 96), 9), ((352, 32, 64), 4),
             ((96, 128, 96), 4), ((96, 64, 200), 0), ((96, 64, 200), -3)]  # fmt: skip
    for i, (mnk, w) in enumerate(cases):
        _run_stream_k_pair(full, tail, lay, mnk, w, seed=7 + i)
    # The example as written: 6 tiles of W 4 with K = 200 saves 100 of K, below 2048:
    # the first kernel takes every tile, the tail's grid is empty (WS stays NaN).
    path = EXAMPLES / "gemm_stream_k.cute"
    full = rt.jit(path, f"gemm_{lay}", device="cpu", **SK_SMALL)
    tail = rt.jit(path, f"gemm_{lay}_tail", device="cpu", **SK_SMALL)
    assert np.isnan(_run_stream_k_pair(full, tail, lay, (96, 64, 200), 4, seed=6)).all()


def test_mode_0_of_a_rank_1_tensor_is_its_size() -> None:
    """CuTe's size<0> of a rank-1 layout is its size; the verifier of cute.size used to
    reject the mode the layout algebra had accepted (an internal compiler error)."""
    source = """
kernel k(Y: i32[P] : (1))
  grid (1) threads 32
{
  if thread.x == 0 {
    Y[0] = i32(size(Y, 0))
  }
}
"""
    y = np.zeros(7, np.int32)
    rt.jit(source, device="cpu")(y)
    assert y[0] == 7


def test_int_converts_a_scalar_to_int() -> None:
    """`int(x)` makes an index of an integer scalar: an s32 read from shared memory
    indexes a tensor (gemm_tiled.cute reads a stream-K share's bounds back so)."""
    source = """
kernel k(Y: i32[P] : (1))
  grid (1) threads 32
{
  s = smem s64[make_layout(1)]
  if thread.x == 0 {
    s[0] = s64(5)
  }
  sync()
  if thread.x == 1 {
    Y[int(s[0]) - 3] = i32(int(s[0]) * size(Y, 0))
  }
}
"""
    y = np.zeros(7, np.int32)
    rt.jit(source, device="cpu")(y)
    assert y.tolist() == [0, 0, 35, 0, 0, 0, 0]


def test_stream_k_tail_with_a_grid_of_its_own() -> None:
    """A tail kernel whose grid clause is not one wave: more CTAs than WS has slots and
    a second row. The CTAs past the slots, and every CTA of the second row, idle."""
    source = _stream_k_splitting_any_k()
    head = "kernel gemm_tn_tail["
    start = source.index(head)
    text = source[start : source.index("}\n", start) + 2].replace(
        "  threads THREADS\n", "  threads THREADS grid (6, 2)\n"
    )
    full = rt.jit(source, "gemm_tn", device="cpu", **SK_SMALL)
    tail = rt.jit(text, device="cpu", **SK_SMALL)
    _run_stream_k_pair(full, tail, "tn", (96, 64, 200), 4, seed=8)  # 6 tiles: 2 split


def test_persistent_full_waves_with_a_stream_k_tail() -> None:
    """`persistent = true` with `wave = W`: the persistent CTAs loop over the tiles of the
    full waves only, and the stream-K tail takes the rest."""
    source = _stream_k_splitting_any_k().replace(
        "acc_dtype = TACC, wave = W, split_min_k = 0)",
        "acc_dtype = TACC, wave = W, split_min_k = 0,\n       persistent = true)",
    )
    assert source.count("persistent = true") == 4  # the full waves' kernels
    full = rt.jit(source, "gemm_tn", device="cpu", **SK_SMALL)
    tail = rt.jit(source, "gemm_tn_tail", device="cpu", **SK_SMALL)
    for i, (mnk, w) in enumerate([((160, 64, 72), 3), ((96, 128, 96), 5), ((352, 32, 64), 4)]):
        _run_stream_k_pair(full, tail, "tn", mnk, w, seed=9 + i)
