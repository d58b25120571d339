"""`import`: resolution relative to the importer, visibility, located errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutec.diagnostics import CompileError
from cutec.frontend.imports import LIBRARY, load_file, load_source


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _error(fn, *args) -> tuple[str, int, int, str]:  # type: ignore[no-untyped-def]
    with pytest.raises(CompileError) as info:
        fn(*args)
    d = info.value.diagnostics[0]
    assert d.location is not None
    return Path(d.location.file).name, d.location.line, d.location.col, d.message


def test_imports_resolve_relative_to_the_importer(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "main.cute": 'import "lib/common.cute"\nimport "lib/ops.cute" as ops\nkernel k() { }\n',
            "lib/common.cute": 'import "ops.cute"\nconst PIPE = 3\nfunc mainloop(a) { }\n',
            "lib/ops.cute": "func axpy(a, b) { }\nkernel not_exported() { }\n",
        },
    )
    main = load_file(tmp_path / "main.cute")
    assert sorted(main.visible()) == ["PIPE", "mainloop"]
    assert sorted(main.namespaces()["ops"].visible()) == ["axpy"]
    (_, common), (_, ops) = main.imports
    # the diamond main -> common -> ops, main -> ops parses ops.cute once
    assert common.imports[0][1] is ops


def test_missing_file_points_at_the_path(tmp_path: Path) -> None:
    _write(tmp_path, {"main.cute": 'kernel k() { }\nimport   "nope.cute"\n'})
    name, line, col, msg = _error(load_file, tmp_path / "main.cute")
    assert (name, line, col) == ("main.cute", 2, 10)
    assert msg == f"cannot find 'nope.cute' (looked in {tmp_path})"


def test_a_cutec_path_names_the_shipped_library(tmp_path: Path) -> None:
    """``import "cutec/pipeline.cute"`` finds cutec's library file wherever the importer
    is (a file of that name beside it does not shadow it); a missing one names the
    library directory."""
    _write(tmp_path, {"main.cute": 'import "cutec/pipeline.cute" as pipe\nkernel k() { }\n',
                      "cutec/pipeline.cute": "func mine() { }\n"})  # fmt: skip
    main = load_file(tmp_path / "main.cute")
    ring = main.namespaces()["pipe"]
    assert ring.path == LIBRARY / "pipeline.cute"
    assert {"pipeline_init", "producer_acquire", "consumer_release"} <= set(ring.visible())
    _write(tmp_path, {"other.cute": 'import "cutec/nope.cute"\n'})
    name, line, col, msg = _error(load_file, tmp_path / "other.cute")
    assert (name, line, col) == ("other.cute", 1, 8)
    assert msg == f"cannot find 'cutec/nope.cute' (looked in {LIBRARY})"


def test_path_the_os_cannot_look_up_is_not_found(tmp_path: Path) -> None:
    # A name longer than the file system allows makes the lookup itself fail (OSError).
    long = "1" * 3000 + ".cute"
    _write(tmp_path, {"main.cute": f'import "{long}"\n'})
    name, line, col, msg = _error(load_file, tmp_path / "main.cute")
    assert (name, line, col) == ("main.cute", 1, 8)
    assert msg == f"cannot find '{long}' (looked in {tmp_path})"


def test_cycle(tmp_path: Path) -> None:
    _write(tmp_path, {"a.cute": 'import "b.cute"\n', "b.cute": '\nimport "a.cute"\n'})
    assert _error(load_file, tmp_path / "a.cute") == (
        "b.cute", 2, 1, "import cycle: a.cute -> b.cute -> a.cute",
    )  # fmt: skip


def test_name_defined_twice(tmp_path: Path) -> None:
    _write(tmp_path, {"lib.cute": "func f() { }\n"})
    main = load_source('import "lib.cute"\nfunc f() { }\n', str(tmp_path / "main.cute"))
    assert _error(main.visible) == ("main.cute", 2, 6, "'f' is defined twice")


def test_syntax_error_in_imported_file_is_located_there(tmp_path: Path) -> None:
    _write(tmp_path, {"lib.cute": "func f() { x = }\n"})
    assert _error(load_source, 'import "lib.cute"\n', str(tmp_path / "main.cute")) == (
        "lib.cute", 1, 16, "expected an expression, found '}'",
    )  # fmt: skip


def test_not_a_cute_file(tmp_path: Path) -> None:
    assert _error(load_source, 'import "lib.h"\n', str(tmp_path / "main.cute")) == (
        "main.cute", 1, 8, "imported files end in .cute; got 'lib.h'",
    )  # fmt: skip
