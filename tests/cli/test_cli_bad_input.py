"""`cutec compile`, `opt` and `run` on bad input: one clean error and exit code 1, never an
internal compiler error, and nothing half-written left behind (issue 26)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutec.cli import main

ROOT = Path(__file__).parents[2]
SAXPY = ROOT / "examples" / "ir" / "saxpy.mlir"
AXPY = ROOT / "examples" / "elementwise.cute"  # axpy(x: f16[M], y: f32[M], z: f32[M], alpha)


def _error(capsys, argv: list[str]) -> str:
    """The first stderr line of a command that must fail with exit code 1."""
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "internal compiler error" not in err and "Traceback" not in err
    return err.splitlines()[0]


# --------------------------------------------------------------------------- files


def test_output_naming_a_directory_is_refused_and_leaves_nothing(capsys, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    assert _error(capsys, ["compile", str(SAXPY), "-o", str(out)]) == (
        f"error: cannot write '{out}': it is a directory"
    )
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # no out.tmpPID


def test_output_in_a_missing_directory_leaves_nothing(capsys, tmp_path: Path) -> None:
    out = tmp_path / "no" / "k.mlir"
    assert _error(capsys, ["compile", str(SAXPY), "-o", str(out)]) == (
        f"error: cannot write '{out}': No such file or directory"
    )
    assert not list(tmp_path.iterdir())


def test_dump_dir_naming_a_file_is_refused(capsys, tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("x")
    assert _error(capsys, ["compile", str(SAXPY), "--dump-dir", str(f)]) == (
        f"error: --dump-dir {f}: it exists and is not a directory"
    )
    assert _error(capsys, ["opt", str(SAXPY), "--dump-dir", str(f / "sub")]) == (
        f"error: --dump-dir {f / 'sub'}: cannot create it: Not a directory"
    )


def test_a_dump_that_cannot_be_written_is_a_user_error(capsys, tmp_path: Path) -> None:
    # The directory is fine, but one dump's place is taken by a directory: a failure that
    # the check up front cannot see, reported with the file's name.
    (tmp_path / "00_input.mlir.tmp").mkdir()
    err = _error(capsys, ["opt", str(SAXPY), "--passes", "cse", "--dump-dir", str(tmp_path)])
    assert err == (
        f"error: cannot write the IR dump '{tmp_path / '00_input.mlir'}': Is a directory"
    )


def test_dump_dir_is_created(capsys, tmp_path: Path) -> None:
    dump = tmp_path / "a" / "b"
    assert main(["opt", str(SAXPY), "--passes", "cse", "--dump-dir", str(dump)]) == 0
    assert sorted(p.name for p in dump.iterdir()) == ["00_input.mlir", "01_cse.mlir"]


# --------------------------------------------------------------------------- cutec run


def _run(*flags: str, file: Path = AXPY) -> list[str]:
    return ["run", str(file), "--device", "cpu", *flags]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--shape", "x=-64"], "error: --shape x: extent 0 must be at least 1, got -64"),
        (["--shape", "x=0"], "error: --shape x: extent 0 must be at least 1, got 0"),
        (["--shape", "x=65536,65536"], "error: --shape x: 1 extents expected, got 2"),
        (["--shape", "x=64", "--set", "M=32"], "error: --shape x: extent 0 is M = 32, got 64"),
        (["--shape", "q=4"], "error: --shape q: the kernel has no tensor q (its tensors: x, y, z)"),
        (["--set", "M=0"], "error: --set M: extent 0 must be at least 1, got 0"),
        (["--set", "M=²"], "error: --set M: expected an integer, got '²'"),
        (
            ["--shape", "x=64", "--set", "N=4"],
            "error: --set N: the kernel has no scalar, extent or stride N (it has: M, alpha)",
        ),
        (["--shape", "x=2**40"], "error: --shape x=2**40: expected an integer, got '2**40'"),
        (["--shape", "x=64", "--seed", "-1"], "usage: cutec run [-h] [--kernel KERNEL]"),
    ],
)
def test_run_refuses_bad_shapes_and_values(capsys, flags: list[str], message: str) -> None:
    assert _error(capsys, _run(*flags)).startswith(message)


def test_run_refuses_inputs_larger_than_the_machine(capsys) -> None:
    err = _error(capsys, _run("--shape", f"x={2**40}"))
    assert err.startswith("error: the inputs (x (1099511627776,), y (1099511627776,), z ")
    assert "cutec run allocates at most" in err and err.endswith("give smaller --shape")


KERNEL_LDA = (
    "kernel k(A: f32[M, N] : (1, ldA)) grid 1 threads 32 {\n"
    "  if thread.x < 8 {\n    A[thread.x] = 1.0\n  }\n}\n"
)


def test_run_refuses_a_negative_run_time_stride(capsys, tmp_path: Path) -> None:
    src = tmp_path / "k.cute"
    src.write_text(KERNEL_LDA)
    err = _error(capsys, _run("--shape", "A=4,2", "--set", "ldA=-5", file=src))
    assert err == (
        "error: --set ldA=-5: cutec run lays out its inputs from their base upwards: "
        "a stride must be >= 0"
    )


def test_run_of_a_padded_tensor_runs_on_the_cpu(capsys, tmp_path: Path) -> None:
    """ldA = 1000 for a 4-row A: a padded view, which the CPU backend runs over the
    memory from its first element to its last."""
    src = tmp_path / "k.cute"
    src.write_text(KERNEL_LDA)
    assert main(_run("--shape", "A=4,2", "--set", "ldA=1000", file=src)) == 0
    assert "A: shape (4, 2) strides (1, 1000)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("file", "message"),
    [
        (Path("/no/such/k.cute"), "error: no such file: '/no/such/k.cute'"),
        (ROOT / "examples", f"error: '{ROOT / 'examples'}' is a directory, not a file"),
        (
            SAXPY,
            f"error: cutec run launches .cute kernels; '{SAXPY}' is textual IR, whose pointer "
            "arguments have no shapes",
        ),
        (Path("k.txt"), "error: cutec run launches .cute kernels: name the file NAME.cute"),
    ],
)
def test_run_refuses_what_is_not_a_cute_file(
    capsys, tmp_path: Path, monkeypatch, file: Path, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("k.txt").write_text("hello\n")
    assert _error(capsys, _run(file=file)).startswith(message)


def test_run_without_a_gpu_names_the_cli_option(capsys) -> None:
    from cutec.runtime import cuda

    try:
        cuda.driver()
    except cuda.NoDriverError:
        pass
    else:
        pytest.skip("this machine has a CUDA driver")
    err = _error(capsys, ["run", str(AXPY), "--shape", "x=64"])
    assert err.endswith("; cutec run --device cpu runs the kernel on the CPU without a GPU")
    assert "cutec.jit" not in err
