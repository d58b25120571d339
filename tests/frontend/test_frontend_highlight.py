"""The highlighters agree with the grammar and lex every example cleanly."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pygments.token import Error, Keyword, Text

from cutec.frontend.pygments_lexer import CONSTANTS, KEYWORDS, CuteLexer

ROOT = Path(__file__).parents[2]
GRAMMAR = ROOT / "cutec" / "frontend" / "grammar.lark"
EXAMPLES = sorted((ROOT / "examples").glob("*.cute"))


def _reserved_words() -> set[str]:
    """The grammar's keyword terminals: ``NAME: "word"`` with a word value."""
    found = re.findall(r'^[A-Z_]+: "([A-Za-z_]+)"$', GRAMMAR.read_text(), re.M)
    return set(found)


def test_pygments_keywords_match_the_grammar() -> None:
    assert set(KEYWORDS) | set(CONSTANTS) == _reserved_words()


def test_textmate_keywords_match_the_grammar() -> None:
    tm = json.loads((ROOT / "editors" / "cute.tmLanguage.json").read_text())
    assert tm["scopeName"] == "source.cute"
    text = json.dumps(tm["repository"]["keywords"]) + json.dumps(tm["repository"]["constants"])
    for word in _reserved_words():
        assert re.search(rf"[(|]{re.escape(word)}[|)]", text), word


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_lex_without_errors(path: Path) -> None:
    tokens = list(CuteLexer().get_tokens(path.read_text()))
    assert not [v for t, v in tokens if t is Error or (t is Text and v.strip())]
    assert (Keyword, "kernel") in tokens
