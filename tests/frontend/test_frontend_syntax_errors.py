# ruff: noqa: E501 - one case per line reads best
"""Syntax errors: each program gives exactly one located diagnostic, in words.

A case is (source, expected ``line:col: error: message``). The kernel wrapper
`K` puts a statement on line 2. Programs with several independent errors are
in `test_recovery_*`.
"""

from __future__ import annotations

import pytest

from cutec.diagnostics import CompileError, SourceManager
from cutec.frontend.parser import parse_source

K = "kernel k(A: f32[M]) grid 1 threads 32 {\n%s\n}\n"

CASES: list[tuple[str, str]] = [
    # calls, tuples, indexing
    (K % "  copy(a b)", "2:10: error: expected ')' or ',' after argument, found 'b'"),
    (K % "  copy(a, , b)", "2:11: error: expected ')' or an expression, found ','"),
    (K % "  x = ", "3:1: error: expected an expression, found '}'"),
    (K % "  x = (1, 2", "3:1: error: expected ')' or ',' after tuple element, found '}'"),
    (K % "  x = t[1 2]", "2:11: error: expected ']' or ',' after index, found '2'"),
    (K % "  x = (1;)", "2:9: error: expected ')' or ',' after tuple element, found ';'"),
    (K % "  x = a.1", "2:9: error: expected a name, found '1'"),
    (K % "  f(a = 1, b)", "2:12: error: positional argument after a keyword argument"),
    (K % "  f(a = 1, a = 2)", "2:12: error: keyword argument 'a' repeated"),
    # statements
    (K % "  x = 1 2", "2:9: error: expected the end of the statement, found '2'"),
    (K % "  x = (a, b) = c", "2:14: error: expected the end of the statement, found '='"),
    (K % "  x = a < b < c", "2:13: error: expected the end of the statement, found '<'"),
    (
        K % "  1 = x",
        "2:3: error: cannot assign to this expression "
        "(expected a name, a tuple of names, or a tensor element)",
    ),
    (
        K % "  f(x) += 1",
        "2:3: error: cannot assign to this expression (expected a name, or a tensor element)",
    ),
    (K % "  (a, f(b)) = c", "2:7: error: can only unpack into names"),
    (K % "  const x += 1", "2:11: error: expected '=', found '+='"),
    (
        K % "  return return",
        "2:10: error: expected the end of the statement or an expression, found 'return'",
    ),
    (K % "  while { }", "2:9: error: expected an expression, found '{'"),
    (K % "  if x { y = 1 } else z = 2", "2:23: error: expected '{' or 'if', found 'z'"),
    (K % "  for in range(4) { }", "2:7: error: expected a name, found 'in'"),
    (K % "  for k in range(4 { }", "2:20: error: expected ')' or ',' after range bound, found '{'"),
    (K % "  for k in range() { }", "2:18: error: expected an expression, found ')'"),
    (K % "  for k in range(1, 2, 3, 4) { }", "2:27: error: expected ')', found '4'"),
    (K % "  for k in range(4) unroll(2 { }", "2:30: error: expected ')' after unroll factor, found '{'"),
    (K % "  x = smem f32(4)", "2:15: error: expected '[', found '('"),
    # compile-time arguments in angle brackets
    (K % "  x = UniversalCopy<u128>", "2:25: error: expected the end of the statement, found '>'"),
    (
        K % "  a = tiled_copy(UniversalCopy<u128>, thr = (32, 8))",
        "2:36: error: expected ')' or ',' after argument, found '>'",
    ),
    # lexical
    (K % "  x = 99999999999999999999", "2:7: error: integer literal 99999999999999999999 is too large (the limit is 2**63 - 1)"),
    (K % "  x = 9223372036854775808", "2:7: error: integer literal 9223372036854775808 is too large (the limit is 2**63 - 1)"),
    (K % "  x = 0x_", "2:7: error: malformed integer literal '0x_'"),
    (K % '  x = "abc', "2:7: error: unterminated string: '\"' without a closing '\"' on its line"),
    (K % "  x = 'a'", "2:7: error: strings are written with double quotes (\"...\")"),
    (K % "  x = a @ b", "2:9: error: unexpected character '@'"),
    (K % "  x = a /* b", "2:9: error: unterminated block comment: '/*' without '*/'"),
    (K % "  x = a \x07 b", "2:9: error: unexpected character U+0007"),
    # declarations
    ("kernel k(A: f32[M] threads 32 { }", "1:20: error: expected ')', ',' or 'align' after parameter, found 'threads'"),
    ("kernel k[BM: int = ](A: f32[M]) { }", "1:20: error: expected an expression, found ']'"),
    ("kernel k(A: f32[M, K] : ) { }", "1:25: error: expected an expression, found ')'"),
    ("kernel k(A: f32[M] align) { }", "1:25: error: expected an integer, found ')'"),
    ("kernel (A: f32[M]) { }", "1:8: error: expected a name, found '('"),
    ("kernel k(A: f32[M]) grid 1 grid 2 { }", "1:28: error: 'grid' given twice in the kernel header"),
    ("kernel k()", "1:11: error: expected '{', 'assume', 'blocks_per_sm', 'cluster', 'grid' or 'threads', found the end of the file"),
    ("kernel k() { } }", "1:16: error: expected a newline, found '}'"),
    ("func f(a, b) { return a }\nfoo", "2:1: error: expected 'const', 'func', 'import' or 'kernel', found 'foo'"),
    ("import common.cute", "1:8: error: expected a string, found 'common'"),
    ('import "a.cute" as', "1:19: error: expected a name, found the end of the file"),
    ("const = 3", "1:7: error: expected a name, found '='"),
    # the file ends too early
    ("kernel k(A: f32[M]) {\n  x = 1\n", "2:8: error: expected '}', found the end of the file"),
    ("kernel k(A: f32[M]) {\n  x = f(1,\n", "2:11: error: expected ')' or an expression, found the end of the file"),
    # limits
    ("kernel k() { x = " + "(" * 70 + "1" + ")" * 70 + " }", "1:81: error: brackets nested too deeply (more than 64 levels)"),
    ("kernel k() { x = " + "+".join(["a"] * 100) + " }", "1:18: error: expression or statement nested too deeply (more than 64 levels)"),
    ("kernel k() { x = " + "-" * 100 + "a }", "1:54: error: expression or statement nested too deeply (more than 64 levels)"),
]  # fmt: skip


def _diagnose(src: str) -> CompileError:
    with pytest.raises(CompileError) as info:
        parse_source(src, "t.cute")
    return info.value


@pytest.mark.parametrize(("src", "expected"), CASES, ids=range(len(CASES)))
def test_syntax_error(src: str, expected: str) -> None:
    err = _diagnose(src)
    assert len(err.diagnostics) == 1
    d = err.diagnostics[0]
    assert d.location is not None
    assert f"{d.location.line}:{d.location.col}: error: {d.message}" == expected


def test_enough_cases() -> None:
    assert len(CASES) >= 30


def test_render_has_source_line_and_caret() -> None:
    err = _diagnose(K % "  copy(tAgA[_, _, k] tAsA)")
    sources = SourceManager()
    sources.add("t.cute", K % "  copy(tAgA[_, _, k] tAsA)")
    assert err.render(sources) == (
        "t.cute:2:22: error: expected ')' or ',' after argument, found 'tAsA'\n"
        "  copy(tAgA[_, _, k] tAsA)\n"
        "                     ^"
    )


def test_angle_brackets_get_a_hint() -> None:
    err = _diagnose(K % "  x = UniversalCopy<u128>")
    notes = err.diagnostics[0].notes
    assert [n.message for n in notes] == [
        "compile-time arguments are written in brackets or as arguments: "
        "'UniversalCopy[u128]', 'swizzle(3, 4, 3)', not '<...>'"
    ]


def test_chained_comparison_gets_a_hint() -> None:
    err = _diagnose(K % "  x = a < b < c")
    assert [n.message for n in err.diagnostics[0].notes] == [
        "comparisons do not chain: write 'a < b and b < c'"
    ]


def test_unclosed_bracket_note_points_at_it() -> None:
    err = _diagnose("kernel k(A: f32[M]) {\n  x = f(1,\n")
    (note,) = err.diagnostics[0].notes
    assert note.message == "unclosed '(' here; add ')'"
    assert (note.location.line, note.location.col) == (2, 8)


def test_recovery_reports_each_item() -> None:
    src = "kernel k() { x = f(1) }\nkernel j() { x = }\nfunc g() { y = ( }\nconst z = 3\n"
    err = _diagnose(src)
    got = [(d.location.line, d.location.col, d.message) for d in err.diagnostics]
    assert got == [
        (2, 18, "expected an expression, found '}'"),
        (3, 18, "expected ')' or an expression, found '}'"),
    ]


def test_recovery_stops_at_the_limit() -> None:
    src = "".join(f"kernel k{i}() {{ x = }}\n" for i in range(50))
    err = _diagnose(src)
    assert len(err.diagnostics) == 20
    assert [d.location.line for d in err.diagnostics] == list(range(1, 21))


def test_file_too_large() -> None:
    err = _diagnose("// " + "x" * (1 << 20) + "\n")
    d = err.diagnostics[0]
    assert d.message == f"source file too large ({(1 << 20) + 4} bytes; the limit is 1048576)"
    assert (d.location.line, d.location.col) == (1, 1)


def test_empty_statements_are_allowed() -> None:
    prog = parse_source("kernel k() { ; x = 1;; y = 2; }\n;\n", "t.cute")
    assert len(prog.kernels[0].body.stmts) == 2


def test_too_many_tokens() -> None:
    err = _diagnose("kernel k() {\n" + "x = 1\n" * 10_000 + "}\n")
    d = err.diagnostics[0]
    assert d.message == "source file too long (more than 30000 tokens); split it with import"
    assert (d.location.line, d.location.col) == (7500, 5)
