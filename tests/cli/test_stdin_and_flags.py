"""`cutec compile -` in either language, `--lang`, `--no-loc`, `opt --list-passes`."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from cutec.cli import main
from cutec.commands.common import detect_lang

ROOT = Path(__file__).parents[2]
SGEMM_1 = ROOT / "examples" / "sgemm_1.cute"
SAXPY = ROOT / "examples" / "ir" / "saxpy.mlir"


def _stdin(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(text))


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("module {\n}\n", "mlir"),
        ('// a comment\n\n// another\nmodule attributes {target = "sm_90a"} {}', "mlir"),
        ('"builtin.module"() ({\n}) : () -> ()\n', "mlir"),
        ("kernel @vadd(%a: index) {\n}\n", "mlir"),
        ("func @f() {\n}\n", "mlir"),
        ("func.func @f() {\n}\n", "mlir"),
        ("%0 = arith.constant 1 : index\n", "mlir"),
        ("#map = affine_map<(d0) -> (d0)>\n", "mlir"),
        ("kernel sgemm[BM = 128](A: f32) threads 32 {\n}\n", "cute"),
        ("kernel copy(A: f32) threads 32 {\n}\n", "cute"),
        ("func load(x) {\n}\n", "cute"),
        ('// lib\nimport "lib/mainloop.cute" as ml\n', "cute"),
        ("/* a block\n comment */ const N = 4\n", "cute"),
        ("  \n\tkernel\n  k() {}\n", "cute"),
        ("", None),
        ("// only a comment\n", None),
        ("x = 1\n", None),
        ("kernelfoo\n", None),
    ],
)
def test_detect_lang(text: str, lang: str | None) -> None:
    assert detect_lang(text) == lang


def test_every_example_is_detected_by_its_content() -> None:
    for path in [*ROOT.glob("examples/*.cute"), *ROOT.glob("examples/ir/*.mlir")]:
        assert detect_lang(path.read_text()) == path.suffix[1:], path


def test_cute_from_stdin_is_detected(capsys, monkeypatch) -> None:
    _stdin(monkeypatch, SGEMM_1.read_text())
    assert main(["compile", "-", "--emit=cute"]) == 0
    assert "kernel @sgemm_nt(" in capsys.readouterr().out


def test_cute_from_stdin_defaults_to_ptx(capsys, monkeypatch) -> None:
    _stdin(monkeypatch, SGEMM_1.read_text())
    assert main(["compile", "-", "--lang", "cute"]) == 0
    assert ".entry sgemm_nt(" in capsys.readouterr().out


def test_ir_from_stdin_is_detected(capsys, monkeypatch) -> None:
    _stdin(monkeypatch, SAXPY.read_text())
    assert main(["compile", "-"]) == 0
    assert capsys.readouterr().out.startswith("module {")


def test_lang_overrides_detection(capsys, monkeypatch) -> None:
    _stdin(monkeypatch, SAXPY.read_text())
    assert main(["compile", "-", "--lang", "cute", "--emit=ast"]) == 1
    assert capsys.readouterr().err.startswith("<stdin>:")


def test_stdin_diagnostics_are_located_at_stdin(capsys, monkeypatch) -> None:
    _stdin(monkeypatch, "kernel k() threads 32 {\n  x = = 1\n}\n")
    assert main(["compile", "-"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("<stdin>:2:7: error: ") and "Traceback" not in err


def test_undetectable_stdin_asks_for_lang(capsys, monkeypatch) -> None:
    _stdin(monkeypatch, "x = 1\n")
    assert main(["compile", "-"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: cannot tell whether standard input is .cute source or textual")
    assert err.endswith("give --lang cute or --lang mlir")


def test_unknown_lang_is_a_user_error(capsys) -> None:
    assert main(["compile", "-", "--lang", "c"]) == 1
    assert "invalid choice: 'c'" in capsys.readouterr().err


def test_file_without_suffix_is_detected(capsys, tmp_path: Path) -> None:
    src = tmp_path / "kernel.txt"
    src.write_text(SGEMM_1.read_text())
    assert main(["compile", str(src), "--emit=cute"]) == 0
    assert "kernel @sgemm_nt(" in capsys.readouterr().out


def test_help_says_what_stdin_reads(capsys) -> None:
    assert main(["compile", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "- for standard input (either language" in out and "--lang {cute,mlir}" in out


@pytest.mark.parametrize("emit", ["cute", "thread"])
def test_compile_no_loc(capsys, emit: str) -> None:
    assert main(["compile", str(SGEMM_1), f"--emit={emit}"]) == 0
    assert "loc(" in capsys.readouterr().out
    assert main(["compile", str(SGEMM_1), f"--emit={emit}", "--no-loc"]) == 0
    out = capsys.readouterr().out
    assert "loc(" not in out and "kernel @sgemm_nt(" in out


def test_compile_and_opt_share_no_loc(capsys) -> None:
    for verb in ("compile", "opt"):
        assert main([verb, "--help"]) == 0
        assert "--no-loc" in capsys.readouterr().out
    assert main(["opt", str(SAXPY), "--no-loc"]) == 0
    opt = capsys.readouterr().out
    assert main(["compile", str(SAXPY), "--passes", "", "--no-loc"]) == 0
    assert capsys.readouterr().out == opt and "loc(" not in opt


def test_list_passes_needs_no_file(capsys) -> None:
    assert main(["opt", "--list-passes"]) == 0
    from cutec.driver import ALL_PASSES

    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()] == list(ALL_PASSES)


def test_opt_without_file_is_a_user_error(capsys) -> None:
    assert main(["opt"]) == 1
    assert capsys.readouterr().err.strip() == (
        "error: cutec opt needs an IR file (or - for standard input)"
    )


GEMM_AUTO = ROOT / "examples" / "gemm_auto.cute"


def test_divisible_and_aligned_promise_what_launches_satisfy(capsys, tmp_path: Path) -> None:
    """gemm_auto assumes nothing of its sizes: compiled as is, sm_90a's gemm_tn cannot
    read A by TMA and takes the mma.sync body; with the launches' promises (16-byte
    leading dimensions and bases, as the JIT's specialisation gives) it is the Hopper body."""
    out = tmp_path / "k.ptx"
    argv = ["compile", str(GEMM_AUTO), "--kernel", "gemm_tn", "--arch", "sm_90a", "-o", str(out)]
    assert main(argv) == 0
    assert "wgmma" not in out.read_text()
    facts = ["--divisible", "ldA=8", "--divisible", "ldB=8", "--aligned", "A=16",
             "--aligned", "B=16", "--divisible", "nothing=4"]  # fmt: skip
    assert main([*argv, *facts]) == 0
    assert "wgmma.mma_async" in out.read_text()


@pytest.mark.parametrize(
    ("flag", "bad", "says"),
    [("--divisible", "ldA", "expected NAME=N"), ("--divisible", "ldA=0", "expected NAME=N"),
     ("--aligned", "A=12", "not a positive power of two")],
)  # fmt: skip
def test_a_bad_promise_is_a_user_error(flag: str, bad: str, says: str, capsys) -> None:
    assert main(["compile", str(GEMM_AUTO), flag, bad, "-o", "/dev/null"]) == 1
    assert says in capsys.readouterr().err
