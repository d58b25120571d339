"""`import` in the builder: imported funcs and consts in scope, by name or as m.name,
each func seeing its own file's names; one located diagnostic per mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutec.diagnostics import CompileError
from cutec.frontend import compile_source
from cutec.ir.dialects import scf
from cutec.ir.dialects.builtin import KernelOp
from cutec.ir.printer import print_op

EXAMPLES = Path(__file__).parents[2] / "examples"
KERNEL = "kernel k(A: f32[M] : (1)) threads 32 {\n"


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root / "main.cute"


def _build(main: Path) -> KernelOp:
    k = compile_source(main.read_text(), str(main)).lookup("k")
    assert isinstance(k, KernelOp)
    return k


def _types(k: KernelOp) -> dict[str, str]:
    return {r.name_hint: str(r.type) for op in k.walk() for r in op.results if r.name_hint}


def _errors(main: Path) -> list[tuple[str, int, int, str]]:
    with pytest.raises(CompileError) as info:
        compile_source(main.read_text(), str(main))
    out = []
    for d in info.value.diagnostics:
        assert d.location is not None
        out.append((Path(d.location.file).name, d.location.line, d.location.col, d.message))
    return out


def test_shared_mainloop_builds_the_same_kernel_as_sgemm_2() -> None:
    def kernel_text(name: str) -> tuple[str, KernelOp]:
        path = EXAMPLES / name
        k = compile_source(path.read_text(), str(path)).lookup("sgemm_nt")
        assert isinstance(k, KernelOp)
        return print_op(k, print_locations=False), k

    shared, k = kernel_text("sgemm_2_shared.cute")
    assert shared == kernel_text("sgemm_2.cute")[0]
    # the loop's ops point into the imported file, the kernel's into the importer
    (loop,) = [op for op in k.walk() if isinstance(op, scf.ForOp)]
    assert loop.location.file == str(EXAMPLES / "lib" / "mainloop.cute")
    assert loop.location.line == 14
    assert k.location.file == str(EXAMPLES / "sgemm_2_shared.cute")


def test_plain_import_by_name_and_alias_as_member(tmp_path: Path) -> None:
    lib = {"lib/frag.cute": "const W = 4\nfunc make() { return rmem f32[(W,)] }\n"}
    main = _write(
        tmp_path,
        {
            "main.cute": 'import "lib/frag.cute"\n'
            + KERNEL
            + "  r = make()\n  t = rmem f32[(W, 2)]\n}\n",
            **lib,
        },
    )
    types = _types(_build(main))
    assert types["r"] == "!cute.tensor<f32, rmem, (4):(1)>"
    assert types["t"] == "!cute.tensor<f32, rmem, (4,2):(1,4)>"
    # as f: f.make() still sees its own file's W (4), not the importer's (8)
    main.write_text(
        'import "lib/frag.cute" as f\nconst W = 8\n'
        + KERNEL
        + "  r = f.make()\n  t = rmem f32[(W, f.W)]\n}\n"
    )
    types = _types(_build(main))
    assert types["r"] == "!cute.tensor<f32, rmem, (4):(1)>"
    assert types["t"] == "!cute.tensor<f32, rmem, (8,4):(1,8)>"
    # by name, the import's W and the file's own W clash
    main.write_text('import "lib/frag.cute"\nconst W = 8\n' + KERNEL + "}\n")
    assert _errors(main) == [("main.cute", 2, 7, "'W' is defined twice")]


def test_imports_resolve_against_the_importing_file(tmp_path: Path) -> None:
    main = _write(
        tmp_path,
        {
            "main.cute": 'import "lib/a.cute"\n' + KERNEL + "  r = twice(3)\n}\n",
            # a.cute's own import is relative to lib/, and its func uses it
            "lib/a.cute": 'import "b.cute" as b\nfunc twice(n) { return b.frag(2 * n) }\n',
            "lib/b.cute": "func frag(n) { return rmem f32[(n,)] }\n",
        },
    )
    assert _types(_build(main))["r"] == "!cute.tensor<f32, rmem, (6):(1)>"


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {"main.cute": 'import "lib/nope.cute"\n' + KERNEL + "}\n"},
            ("main.cute", 1, 8, "cannot find 'lib/nope.cute' (looked in {root})"),
        ),
        (
            {
                "main.cute": 'import "a.cute"\n' + KERNEL + "}\n",
                "a.cute": 'import "b.cute"\nfunc f() { }\n',
                "b.cute": 'const ONE = 1\nimport "a.cute"\n',
            },
            ("b.cute", 2, 1, "import cycle: a.cute -> b.cute -> a.cute"),
        ),
        (
            {
                "main.cute": 'import "a.cute"\nimport "b.cute"\n' + KERNEL + "}\n",
                "a.cute": "func f() { }\n",
                "b.cute": "func f() { }\n",
            },
            ("main.cute", 2, 1, "'f' is defined twice"),
        ),
        (
            {"main.cute": 'import "a.cute" as f\nfunc f() { }\n' + KERNEL + "}\n", "a.cute": ""},
            ("main.cute", 1, 1, "'f' is defined twice"),
        ),
        (
            {
                "main.cute": 'import "a.cute" as m\n' + KERNEL + "  r = m.make_frag()\n}\n",
                "a.cute": "func make_frags() { }\n",
            },
            ("main.cute", 3, 9, "'m' (a.cute) defines no 'make_frag'"),
        ),
        (
            {
                "main.cute": 'import "a.cute" as m\n' + KERNEL + "  m.g()\n}\n",
                "a.cute": 'import "b.cute"\n',
                "b.cute": "func g() { }\n",
            },
            (
                "main.cute",
                3,
                5,
                "a.cute does not define 'g'; it imports it from 'b.cute' (imports are not "
                "passed on: import that file)",
            ),
        ),
        (
            {
                "main.cute": 'import "a.cute" as m\n' + KERNEL + "  m.other()\n}\n",
                "a.cute": "kernel other() threads 32 { }\n",
            },
            ("main.cute", 3, 5, "'other' is a kernel of a.cute; kernels are not imported"),
        ),
        (
            # a mistake inside an imported func is located in its own file
            {
                "main.cute": 'import "a.cute"\n' + KERNEL + "  f()\n}\n",
                "a.cute": "func f() {\n  x = nope\n}\n",
            },
            ("a.cute", 2, 7, "undefined name 'nope'"),
        ),
        (
            # a bad imported const is reported once, in its file; its uses stay quiet
            {
                "main.cute": 'import "a.cute" as m\n' + KERNEL + "  x = m.C + 1\n  y = m.C\n}\n",
                "a.cute": "const C = 1 / 0\n",
            },
            ("a.cute", 1, 11, "division by zero in 1 / 0"),
        ),
    ],
    ids=[
        "missing_file",
        "cycle",
        "clash",
        "alias_clash",
        "undefined_member",
        "not_passed_on",
        "kernel_member",
        "error_in_func",
        "error_in_const",
    ],
)
def test_import_mistakes_are_located(
    tmp_path: Path, files: dict[str, str], expected: tuple[str, int, int, str]
) -> None:
    main = _write(tmp_path, files)
    file, line, col, message = expected
    assert _errors(main) == [(file, line, col, message.format(root=tmp_path))]


def test_undefined_member_suggests_a_close_name(tmp_path: Path) -> None:
    main = _write(
        tmp_path,
        {
            "main.cute": 'import "a.cute" as m\n' + KERNEL + "  m.make_frag()\n}\n",
            "a.cute": "func make_frags() { }\n",
        },
    )
    with pytest.raises(CompileError) as info:
        compile_source(main.read_text(), str(main))
    (d,) = info.value.diagnostics
    assert [n.message for n in d.notes] == ["did you mean 'm.make_frags'?"]


def test_a_file_of_funcs_alone_is_not_a_program(tmp_path: Path) -> None:
    lib = EXAMPLES / "lib" / "mainloop.cute"
    with pytest.raises(CompileError, match="defines no kernel"):
        compile_source(lib.read_text(), str(lib))
