"""The builtin registry and docs/language.md agree: every builtin the docs name exists,
every registered builtin is documented in the section its entry names, and each
registered name builds (no entry points at nothing)."""

from __future__ import annotations

import re
from pathlib import Path

from cutec.frontend.builtins import REGISTRY
from cutec.frontend.pygments_lexer import CuteLexer
from cutec.frontend.static_eval import DTYPES

DOCS = Path(__file__).parents[2] / "docs" / "language.md"

# Documentation placeholders that stand for the user's own values, not builtins.
PLACEHOLDERS = {
    "a", "b", "c", "t", "x", "y", "L", "mma", "thr_copy", "thr_mma", "tiled", "bar", "bars",
    "atom", "p", "rx", "ry", "rz", "alpha", "beta", "op",
}  # fmt: skip
# Sections of "## Builtins" whose code spans name builtins (the types are dtypes, not
# builtins; atoms are atom names resolved by the atom library).
SECTIONS = (
    "Indices and launch geometry",
    "Integers and tuples",
    "Layouts",
    "Tensors",
    "Atoms, TiledCopy, TiledMMA",
    "Algorithms",
    "Fragment arithmetic",
    "Synchronisation",
    "Atomics and fences",
)
_SPAN = re.compile(r"`([^`]+)`")
_HEAD = re.compile(r"^([A-Za-z_]\w*)")


def _sections() -> dict[str, str]:
    text = DOCS.read_text()
    builtins = text[text.index("## Builtins") : text.index("\n## ", text.index("## Builtins") + 5)]
    out: dict[str, str] = {}
    parts = re.split(r"^### (.+)$", builtins, flags=re.MULTILINE)
    for title, body in zip(parts[1::2], parts[2::2], strict=True):
        out[title.strip()] = body
    return out


def _spans(body: str) -> list[str]:
    """The code spans of a section: in a table only the first column's (the others
    say what CuTe or PTX call it)."""
    spans: list[str] = []
    for line in body.splitlines():
        if line.startswith("|"):
            cells = line.strip("|").split("|")
            spans += _SPAN.findall(cells[0]) if cells else []
        else:
            spans += _SPAN.findall(line)
    return spans


def _documented(bare: bool = False) -> dict[str, set[str]]:
    """Section -> the builtin names its code spans use: called (``name(``), indexed
    (``name[``) or a member (``name.x``, ``GMMA.Layout_...``); with `bare`, also the
    spans that are just a name (``threadIdx``), which prose uses for CuTe's names too."""
    found: dict[str, set[str]] = {}
    for title, body in _sections().items():
        if title not in SECTIONS:
            continue
        names = found.setdefault(title, set())
        for span in _spans(body):
            head = _HEAD.match(span)
            if head is None:
                continue
            name, rest = head.group(1), span[head.end() :]
            if name in PLACEHOLDERS or name in DTYPES or re.fullmatch(r"SM\d\d_\w+", name):
                continue
            used = rest[:1] in ("(", "[") or re.match(r"\.(x|y|z|Layout)", rest) is not None
            if used or (bare and rest == ""):
                names.add(name)
    return found


def test_every_documented_builtin_is_registered() -> None:
    missing = {
        f"{name} ({title})"
        for title, names in _documented().items()
        for name in names
        if name not in REGISTRY
    }
    assert not missing, f"docs/language.md names builtins the registry lacks: {sorted(missing)}"


def test_every_registered_builtin_is_documented_in_its_section() -> None:
    documented = _documented(bare=True)
    undocumented = sorted(
        f"{b.name} (section {b.section!r})"
        for b in REGISTRY.values()
        if b.name not in documented.get(b.section, set())
    )
    assert not undocumented, f"registered but not in docs/language.md: {undocumented}"


def test_every_callable_builtin_has_a_build_function() -> None:
    values = {
        "thread", "threadIdx", "block", "blockIdx", "block_dim", "grid_dim",
        "LayoutLeft", "LayoutRight", "GMMA", "UniversalCopy", "UniversalFMA",
    }  # fmt: skip
    for b in REGISTRY.values():
        assert (b.build is None) == (b.name in values), b.name
        assert b.summary, b.name


def test_the_highlighter_knows_every_builtin() -> None:
    """Registered names are builtins (atom families and the layout type keep their own
    classes); a user's function call is a function."""
    kinds = {value: str(token) for token, value in CuteLexer().get_tokens(" ".join(REGISTRY))}
    for name in REGISTRY:
        assert kinds[name] in ("Token.Name.Builtin", "Token.Name.Class", "Token.Keyword.Type"), (
            name,
            kinds[name],
        )
    assert kinds["copy"] == kinds["warp_idx"] == "Token.Name.Builtin"
    calls = {value: str(token) for token, value in CuteLexer().get_tokens("my_helper(x)")}
    assert calls["my_helper"] == "Token.Name.Function"
