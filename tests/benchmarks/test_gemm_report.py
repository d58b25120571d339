"""benchmarks/gemm.py's reporting and planning, which need neither torch nor a GPU.

The GPU run itself is measured on the GPU machine; here: the ratios, the table,
the JSON round trip, the plot's series (and the PNG where matplotlib is
installed), the speed-target lines, argument parsing and the plan, the CuTe
tutorials' build commands, and a whole --dry-run.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

import gemm  # noqa: E402
import gemm_impls  # noqa: E402
import gemm_report as report  # noqa: E402
from cute_tutorials import build as cute_build  # noqa: E402

from cutec.driver import Options, Source, Stage, compile  # noqa: E402

Row = report.Row


def _rows() -> list[Row]:
    p = ("f32", "NT", 4096, 4096, 4096)
    return [
        Row("cuBLAS", "cuBLAS", *p, rel_err=1e-7, ms=2.8),
        Row("cutec", "sgemm_2.sgemm_nt", *p, rel_err=2e-7, ms=4.0, counterpart="sgemm_2"),
        Row("Triton", "Triton", *p, rel_err=3e-7, ms=3.2),
        Row("CuTe", "sgemm_2", *p, rel_err=2e-7, ms=3.6),
        Row("CuTe", "sgemm_1", *p, rel_err=2e-7, ms=5.0),
        Row("cutec", "sgemm_1.sgemm_nt", *p, status="error", note="CompileError: x | y"),
        Row("cuBLAS", "cuBLAS", "f16", "NT", 1024, 1024, 1024, rel_err=3e-4, ms=0.01),
    ]


def test_ratios_are_reference_time_over_row_time() -> None:
    rows = _rows()
    report.add_ratios(rows)
    cutec = rows[1]
    assert cutec.ratios == pytest.approx({"cuBLAS": 0.7, "Triton": 0.8, "CuTe": 0.9})
    assert rows[3].ratios == pytest.approx({"cuBLAS": 2.8 / 3.6})  # CuTe: vs cuBLAS only
    assert rows[0].ratios == {}  # cuBLAS against itself: no ratio
    assert rows[5].ratios == {}  # not timed
    assert rows[6].ratios == {}  # another problem: no reference in this run


def test_table_orders_rows_and_shows_errors() -> None:
    rows = _rows()
    report.add_ratios(rows)
    lines = report.table(rows).splitlines()
    assert lines[0].startswith("| dtype | layout | M×N×K | implementation | rel err |")
    names = [line.split(" | ")[3] for line in lines[2:]]
    assert names == ["cutec sgemm_1.sgemm_nt", "cutec sgemm_2.sgemm_nt", "CuTe sgemm_1",
                     "CuTe sgemm_2", "Triton", "cuBLAS", "cuBLAS"]  # fmt: skip
    cells = (
        "f32 | NT | 4096³ | cutec sgemm_2.sgemm_nt | 2.0e-07 | 4.000 | 34.4 | 0.70 | 0.80 | 0.90"
    )
    assert lines[3] == f"| {cells} |"
    assert "**error**: CompileError: x / y |" in lines[2]  # a '|' would break the table
    assert lines[-1].startswith("| f16 | NT | 1024³ | cuBLAS | 3.0e-04 | 0.010 | 214.7 |")


def test_json_round_trip() -> None:
    rows = _rows()
    report.add_ratios(rows)
    text = report.to_json(rows, {"gpu": "X"}, {"launch_overhead": {"ratio": 1.2}})
    back, meta, host = report.from_json(text)
    assert meta == {"gpu": "X"} and host == {"launch_overhead": {"ratio": 1.2}}
    assert back == report.ordered(rows)


def test_plot_series_leave_gaps_for_untimed_rows() -> None:
    rows = report.fake_rows()
    series = report.plot_series(rows)
    xs, lines = series["f32"]
    assert xs == ["1024³", "4096³", "1001×999×1003"]
    cutec = lines["cutec sgemm_2.sgemm_nt NT"]
    assert cutec[:2] == pytest.approx([40.0, 40.0]) and math.isnan(cutec[2])
    assert lines["cuBLAS NT"][2] == pytest.approx(40 / 1.3)
    assert list(series["f16"][1]) == ["cuBLAS NT"]  # the failed cutec row draws no line


def test_png_is_written(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    path = tmp_path / "gemm.png"
    assert report.write_png(report.fake_rows(), path, "test") == f"wrote {path}"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_target_lines() -> None:
    rows = _rows()
    lines = report.target_lines(rows)
    assert lines[0] == "sgemm_2.sgemm_nt NT >= 0.85x cuBLAS: 0.70 (NOT met)"
    assert lines[1] == "sgemm_2.sgemm_nt NT >= 1.00x CuTe sgemm_2: 0.90 (NOT met)"
    assert lines[3] == "sgemm_1.sgemm_nt NT >= 1.00x CuTe sgemm_1: not measured"


def test_tensor_core_target_lines_for_the_kernels_measured() -> None:
    """Issues 13's and 29's targets: per dtype and layout, at 4096³ and 8192³, only for the
    cutec kernels the run measured; a size not run is "not measured"."""
    p = ("f16", "TN", 4096, 4096, 4096)
    q = ("f16f32", "NN", 8192, 8192, 8192)
    rows = [
        Row("cutec", "gemm_auto.gemm_tn", *p, rel_err=2e-3, ms=0.30),
        Row("CuTe", "sgemm_sm80", *p, rel_err=2e-3, ms=0.36),
        Row("cutec", "gemm_auto.gemm_nn", *q, rel_err=1e-5, ms=3.0),
        Row("cuBLAS", "cuBLAS", *q, rel_err=1e-5, ms=1.5),
    ]
    lines = report.target_lines(rows)[len(report.SIMT_TARGETS) :]
    assert lines == [
        "gemm_auto.gemm_tn f16 TN 4096³ >= 1.00x CuTe sgemm_sm80: 1.20 (met)",
        "gemm_auto.gemm_tn f16 TN 8192³ >= 1.00x CuTe sgemm_sm80: not measured",
        "gemm_auto.gemm_nn f16f32 NN 4096³ >= 0.90x cuBLAS: not measured",
        "gemm_auto.gemm_nn f16f32 NN 8192³ >= 0.90x cuBLAS: 0.50 (NOT met)",
        "gemm_auto.gemm_nn f16f32 NN 4096³ >= 1.00x Triton: not measured",
        "gemm_auto.gemm_nn f16f32 NN 8192³ >= 1.00x Triton: not measured",
    ]


def test_arguments_and_plan() -> None:
    assert gemm.parse_shape("4096") == (4096, 4096, 4096)
    assert gemm.parse_shape("3000x2000×1003") == (3000, 2000, 1003)
    args = gemm.parse_args(["--quick", "--kernels", "wgmma_sm90,sgemm_2.sgemm_tn"])
    assert args.shapes == gemm.QUICK and args.repeat == 10
    impls = [(i.dtype, i.layout, i.family, i.name) for i in gemm.plan(args)]
    assert impls == [
        ("f16", "NT", "cutec", "wgmma_sm90.hgemm_nt"),
        ("f16", "NT", "CuTe", "wgmma_sm90"),
        ("f16", "NT", "CuTe", "wgmma_tma_sm90"),
        ("f16", "NT", "Triton", "Triton"),
        ("f16", "NT", "cuBLAS", "cuBLAS"),
        ("f16", "TN", "cutec", "wgmma_sm90.hgemm_tn"),
        ("f16", "TN", "CuTe", "sgemm_sm80"),
        ("f16", "TN", "CuTe", "wgmma_sm90"),
        ("f16", "TN", "CuTe", "wgmma_tma_sm90"),
        ("f16", "TN", "Triton", "Triton"),
        ("f16", "TN", "cuBLAS", "cuBLAS"),
        ("f32", "TN", "cutec", "sgemm_2.sgemm_tn"),
        ("f32", "TN", "CuTe", "sgemm_1"),
        ("f32", "TN", "CuTe", "sgemm_2"),
        ("f32", "TN", "CuTe", "sgemm_sm80"),
        ("f32", "TN", "Triton", "Triton"),
        ("f32", "TN", "cuBLAS", "cuBLAS"),
    ]
    with pytest.raises(SystemExit):
        gemm.parse_args(["--kernels", "nope"])


def test_a_define_sets_a_parameter_over_the_kernels_own_and_names_the_rows() -> None:
    argv = ["--kernels", "gemm_auto.gemm_nt", "--define", "BN=128", "--define", "BP=3"]
    args = gemm.parse_args(argv)
    chosen = [k for k in args.kernels_selected if k.dtype == "f16f32"]
    (k,) = chosen
    assert dict(k.defines) == {"BN": "128", "BK": "64", "BP": "3"}
    assert k.label == "gemm_auto.gemm_nt[BN=128,BP=3]"
    names = {i.name for i in gemm.plan(args) if i.family == "cutec"}
    assert "gemm_auto.gemm_nt[BN=128,BP=3]" in names
    for bad in ("BN", "=128", "BN="):
        with pytest.raises(SystemExit):
            gemm.parse_args(["--define", bad])


def test_cute_tutorial_build_and_constraints(tmp_path: Path) -> None:
    t = cute_build.TUTORIALS["sgemm_sm80"]
    cmd = cute_build.nvcc_command(t, tmp_path / "cutlass", tmp_path / "build", "nvcc")
    assert cmd[:8] == ["nvcc", "-O3", "-std=c++17", "-arch=sm_90a", "--shared", "-Xcompiler",
                       "-fPIC", "--expt-relaxed-constexpr"]  # fmt: skip
    src = cute_build._source_text(t, tmp_path / "cutlass").splitlines()
    assert src[1:4] == ["#define WRAP_F32_NT", "#define WRAP_F32_TN", "#define WRAP_F16_TN"]
    assert src[0].endswith('/examples/cute/tutorial/sgemm_sm80.cu"')
    assert t.supports("f16", "TN", 4096, 4096, 4096) is None
    assert t.supports("f16", "TN", 4096, 4096, 4032 + 8) == (
        "needs M % 128, N % 128, K % 64 == 0 (no predication)"
    )
    assert t.supports("f16", "NT", 4096, 4096, 4096) == "no f16 NT kernel"


def test_dry_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert gemm.main(["--dry-run", "--quick", "--kernels", "sgemm_2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2].startswith("| f16 | NT | 4096³ | cutec wgmma_sm90.hgemm_nt | **error**")
    assert out[-1].startswith("| f16 | NT | 4096³ | cuBLAS | 3.0e-04 | 0.200 | 687.2 |")


class _FakeTensor:
    """What raw_launch_args reads of a torch tensor."""

    def __init__(self, ptr: int, shape: tuple[int, int], strides: tuple[int, int]) -> None:
        self.ptr, self.shape, self.strides = ptr, shape, strides

    def data_ptr(self) -> int:
        return self.ptr

    def stride(self, dim: int) -> int:
        return self.strides[dim]


@pytest.mark.parametrize("kernel", ["sgemm_nt", "sgemm_tn"])
def test_raw_launch_matches_the_emitted_parameter_list(kernel: str) -> None:
    """The hand-packed launch of the overhead comparison agrees with the PTX cutec writes."""
    src = Source.from_file(BENCH.parent / "examples" / "sgemm_2.cute")
    ptx = compile(src, Stage.PTX, Options(kernel=kernel, target="sm_90a")).ptx
    spec = next(k for k in gemm_impls.CUTEC_KERNELS if k.label == f"sgemm_2.{kernel}")
    nt = kernel == "sgemm_nt"
    a = _FakeTensor(0x1000, (64, 32), (1, 72) if nt else (40, 1))
    b = _FakeTensor(0x2000, (48, 32), (1, 56) if nt else (36, 1))
    c = _FakeTensor(0x3000, (64, 48), (1, 80))
    raw = gemm_impls.raw_launch_args(spec, ptx, a, b, c)
    assert (raw.name, raw.threads) == (kernel, 256)
    lda, ldb = (72, 56) if nt else (40, 36)
    assert raw.params == [
        ("u64", 0x1000), ("s64", 64), ("s64", 32), ("s64", lda), ("u64", 0x2000), ("s64", 48),
        ("s64", ldb), ("u64", 0x3000), ("s64", 80), ("f32", 1.0), ("f32", 0.0),
    ]  # fmt: skip
    with pytest.raises(RuntimeError, match="parameters are"):
        gemm_impls.raw_launch_args(spec, ptx.replace(".param .f32", ".param .f64"), a, b, c)
