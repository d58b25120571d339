"""print → parse → print is the identity for every op and type."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutec.cli import main
from cutec.ir.dialect import registry
from cutec.ir.parser import parse_module
from cutec.ir.printer import print_op
from cutec.ir.verifier import verify

CORPUS = sorted((Path(__file__).parent / "roundtrip").glob("*.mlir"))


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_print_parse_print_is_identity(path: Path) -> None:
    module = parse_module(path.read_text(), str(path))
    verify(module)
    first = print_op(module)
    again = parse_module(first, "first")
    verify(again)
    assert print_op(again) == first


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_generic_form_reads_back_to_the_same_ir(path: Path) -> None:
    module = parse_module(path.read_text(), str(path))
    generic = print_op(module, generic=True)
    assert '"builtin.module"() ({' in generic
    assert print_op(parse_module(generic, "generic")) == print_op(module)


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_cutec_opt_round_trips(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["opt", str(path)]) == 0
    first = capsys.readouterr().out
    module = parse_module(first, "out")
    assert print_op(module) == first


def test_corpus_covers_every_op_and_type() -> None:
    seen_ops: set[str] = set()
    text = ""
    for path in CORPUS:
        text += path.read_text()
        module = parse_module(path.read_text(), str(path))
        seen_ops |= {op.name for op in module.walk()}
    reg = registry()
    missing_ops = set(reg.ops) - seen_ops
    assert not missing_ops, f"ops without a round-trip test: {sorted(missing_ops)}"
    missing_types = [name for name in reg.types if f"!{name}" not in text]
    assert not missing_types, f"types without a round-trip test: {missing_types}"
    for builtin in (
        "i1",
        "i8",
        "i16",
        "i32",
        "i64",
        "index",
        "f16",
        "bf16",
        "f32",
        "f64",
        "tf32",
        "f8E4M3FN",
        "f8E5M2",
        "vector<",
    ):
        assert builtin in text


def test_locations_survive_the_round_trip() -> None:
    text = 'module {\n  func @f() {\n    return loc("a b.cute":12:5)\n  }\n}\n'
    module = parse_module(text, "t")
    ret = module.body.first_op.body.first_op
    assert (ret.location.file, ret.location.line, ret.location.col) == ("a b.cute", 12, 5)
    assert print_op(module) == text


def test_value_names_are_kept_and_uniqued_per_function() -> None:
    text = (
        "module {\n"
        "  func @a(%x: i32) -> i32 {\n    %v = arith.addi %x, %x : i32\n    return %v : i32\n  }\n"
        "  func @b(%x: i32) -> i32 {\n    %v = arith.muli %x, %x : i32\n    return %v : i32\n  }\n"
        "}\n"
    )
    assert print_op(parse_module(text, "t")) == text


def test_numbered_values_are_renumbered_in_order() -> None:
    text = "func @f(%7: i32) -> i32 {\n  %3 = arith.addi %7, %7 : i32\n  return %3 : i32\n}\n"
    out = print_op(parse_module(text, "t"))
    assert "func @f(%0: i32) -> i32" in out
    assert "%1 = arith.addi %0, %0 : i32" in out


def test_printing_without_locations() -> None:
    text = 'func @f() {\n  return loc("k.cute":1:1)\n}\n'
    assert "loc(" not in print_op(parse_module(text, "t"), print_locations=False)
