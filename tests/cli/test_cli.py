"""The `cutec` command: verbs, exit codes, and no tracebacks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cutec import __version__
from cutec.cli import main
from cutec.driver import DEFAULT_PIPELINE
from cutec.ptx.ptxas import find_ptxas

ROOT = Path(__file__).parents[2]
SAXPY = ROOT / "examples" / "ir" / "saxpy.mlir"


def test_version(capsys) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"cutec {__version__}"


def test_compile_runs_the_default_pipeline(capsys, tmp_path: Path) -> None:
    out = tmp_path / "saxpy.opt.mlir"
    assert main(["compile", str(SAXPY), "-o", str(out)]) == 0
    text = out.read_text()
    assert "arith.constant 128 : index" in text and "%vy2" not in text
    assert not list(tmp_path.glob("*.tmp*")), "no half-written output may be left"


def test_compile_cute_source_to_cute_ir(capsys) -> None:
    assert main(["compile", str(ROOT / "examples" / "sgemm_1.cute"), "--emit=cute"]) == 0
    out = capsys.readouterr().out
    assert "kernel @sgemm_nt(" in out and "cute.gemm" in out


def test_cute_syntax_error_is_located(capsys, tmp_path: Path) -> None:
    src = tmp_path / "k.cute"
    src.write_text("kernel k() threads 32 {\n  x = = 1\n}\n")
    assert main(["compile", str(src), "--emit=cute"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{src}:2:")
    assert "Traceback" not in err


def test_missing_file_is_a_user_error(capsys) -> None:
    assert main(["opt", "/no/such/file.mlir"]) == 1
    assert capsys.readouterr().err.strip() == "error: no such file: '/no/such/file.mlir'"


def test_unknown_flag_is_a_user_error(capsys) -> None:
    assert main(["opt", str(SAXPY), "--frobnicate"]) == 1
    assert "unrecognized arguments: --frobnicate" in capsys.readouterr().err


def test_print_ir_after_unknown_pass_is_a_user_error(capsys) -> None:
    assert main(["opt", str(SAXPY), "--print-ir-after", "nope"]) == 1
    assert "unknown pass 'nope'" in capsys.readouterr().err


def test_list_passes(capsys) -> None:
    assert main(["opt", "-", "--list-passes"]) == 0
    names = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    from cutec.driver import ALL_PASSES

    expected = {"canonicalize", "cse", "licm", "simplify", "vectorize", "lower-to-thread"}
    assert names == list(ALL_PASSES) and expected | {"legalize-ptx"} <= set(names)


def test_binary_input_is_a_user_error(capsys, tmp_path: Path) -> None:
    bad = tmp_path / "bin.mlir"
    bad.write_bytes(b"\xff\xfe\x00garbage")
    assert main(["opt", str(bad)]) == 1
    assert "is not UTF-8 text" in capsys.readouterr().err


def test_console_script_entry_point(tmp_path: Path) -> None:
    """The installed `cutec` command (python -m cutec.cli as a stand-in) exits 1 on bad IR."""
    bad = tmp_path / "bad.mlir"
    bad.write_text("module {\n  %x = arith.addi\n}\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "cutec.cli", "opt", str(bad)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"{bad}:3:1: error: expected an SSA value (%name), found '}}'")
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("flag", ["--print-ir-after-all", "--print-ir-before-all"])
def test_print_all_goes_to_stderr(capsys, flag: str) -> None:
    assert main(["opt", str(SAXPY), "--passes", "canonicalize,cse", flag]) == 0
    captured = capsys.readouterr()
    assert captured.err.count("// -----// IR Dump") == 2
    assert captured.out.startswith("module {")


def _dumps(err: str) -> dict[str, str]:
    """--print-ir-after-all's IR by pass name (the last dump of each)."""
    parts = err.split("// -----// IR Dump After ")[1:]
    return {part.split(" ", 1)[0]: part for part in parts}


def test_ptx_legalisation_is_a_pass_print_ir_shows(capsys, tmp_path: Path) -> None:
    """--emit=ptx runs legalize-ptx last: its dump has the floordivsi rewritten; the
    thread stage (what the CPU backend runs) leaves it."""
    case = str(ROOT / "tests" / "ptx" / "cases" / "arith.mlir")
    out = str(tmp_path / "k.ptx")
    assert main(["compile", case, "--emit=ptx", "--print-ir-after-all", "-o", out]) == 0
    dumps = _dumps(capsys.readouterr().err)
    assert list(dumps)[-2:] == ["order-shared-loads", "legalize-ptx"]
    assert "arith.floordivsi" in dumps["order-shared-loads"]
    assert "arith.floordivsi" not in dumps["legalize-ptx"]
    assert "arith.remsi" in dumps["legalize-ptx"]
    assert main(["compile", case, "--emit=thread", "--print-ir-after-all", "-o", out]) == 0
    assert "legalize-ptx" not in _dumps(capsys.readouterr().err)
    assert "arith.floordivsi" in Path(out).read_text()


@pytest.mark.skipif(find_ptxas() is None, reason="no ptxas (install the test extra)")
def test_resource_usage_writes_ir_as_its_stage_leaves_it(capsys, tmp_path: Path) -> None:
    """--resource-usage assembles a cubin, yet --emit=thread still writes the thread
    stage's IR, not the module after the PTX stage's legalize-ptx."""
    case = str(ROOT / "tests" / "ptx" / "cases" / "arith.mlir")
    out = tmp_path / "k.mlir"
    assert main(["compile", case, "--emit=thread", "--resource-usage", "-o", str(out)]) == 0
    assert "registers" in capsys.readouterr().err
    assert "arith.floordivsi" in out.read_text()


def test_compile_cute_runs_the_pipeline_and_times_the_frontend(capsys, tmp_path: Path) -> None:
    dumps = tmp_path / "dumps"
    src = str(ROOT / "examples" / "sgemm_2.cute")
    assert main(["compile", src, "--emit=cute", "--timing", "--dump-dir", str(dumps)]) == 0
    rows = [line.split()[0] for line in capsys.readouterr().err.splitlines()[2:]]
    pipeline = DEFAULT_PIPELINE.split(",")
    assert rows == ["frontend", *pipeline, "total"]
    assert sorted(p.name for p in dumps.iterdir()) == [
        "00_input.mlir",
        *(f"{i:02d}_{name}.mlir" for i, name in enumerate(pipeline, start=1)),
    ]
    assert main(["compile", src, "--emit=cute", "--passes", "", "--timing"]) == 0
    rows = [line.split()[0] for line in capsys.readouterr().err.splitlines()[2:]]
    assert rows == ["frontend", "total"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["layout", "--op", "composition", "(4,8):(1,4)"],
            "error: composition: missing a required argument: 'rhs'",
        ),
        (
            ["layout", "(4,8):(1,4)", "--svg", "/nonexistent/dir/x.svg"],
            "error: cannot write '/nonexistent/dir/x.svg': No such file or directory",
        ),
        (
            ["atoms", "show", "SM80_16x8x16_F32F16F16F32_TN", "--svg", "/nonexistent/dir/x.svg"],
            "error: cannot write '/nonexistent/dir/x.svg': No such file or directory",
        ),
    ],
)
def test_layout_and_atoms_user_errors_exit_1(capsys, argv: list[str], message: str) -> None:
    assert main(argv) == 1
    assert capsys.readouterr().err.strip().splitlines()[-1] == message


def test_huge_layout_prints_its_text_but_no_table(capsys) -> None:
    assert main(["layout", "(99999999999999999999999,2):(1,4)"]) == 0
    assert capsys.readouterr().out.strip() == "(_99999999999999999999999,_2):(_1,_4)"
    assert main(["layout", "(200,200):(1,200)", "--svg", "/tmp/never-written.svg"]) == 1
    assert "--svg draws layouts of at most 16384 cells" in capsys.readouterr().err


def test_remarks_say_which_copy_atom_was_chosen_and_why_not_wider(capsys) -> None:
    src = str(ROOT / "examples" / "tiled_copy.cute")
    args = ["compile", src, "--emit=thread", "--kernel", "copy_kernel", "--remarks"]
    assert main(args) == 0
    err = capsys.readouterr().err.splitlines()
    first = next(i for i, line in enumerate(err) if ": remark: copy by " in line)
    err = err[first:]
    assert err[0].startswith(f"{src}:32:3: remark: copy by UniversalCopy<uint32_t> (32-bit")
    assert "64-bit accesses not used: 2 consecutive elements of (_4,_8):(_32,8*M)" in err[0]
    assert err[1] == "  copy(thr_tile_S, fragment)" and err[2] == "  ^"
    # Without the flag, nothing is said.
    assert main(args[:-1]) == 0
    assert capsys.readouterr().err == ""
