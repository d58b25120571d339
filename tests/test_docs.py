"""The docs' cross-references resolve: relative Markdown links, and every
``docs/notes/<note>.md`` that code, examples, tests or docs cite."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
# Code is not prose: fenced blocks and inline spans may hold `f[a](b)`.
CODE = re.compile(r"^```.*?^```|`[^`\n]*`", re.S | re.M)
NOTE = re.compile(r"docs/notes/[\w.-]+?\.md")
CITING = ("cutec", "docs", "examples", "tests", "benchmarks", "tools")
SUFFIXES = {".py", ".md", ".cute", ".mlir", ".c", ".cu"}


def texts(root: Path) -> list[Path]:
    """README.md and every text file under the folders that cite docs."""
    files = [root / "README.md"] if (root / "README.md").exists() else []
    for top in CITING:
        if (root / top).is_dir():
            files += [p for p in (root / top).rglob("*") if p.suffix in SUFFIXES and p.is_file()]
    return sorted(files)


def broken_links(root: Path) -> list[str]:
    bad = []
    for path in texts(root):
        if path.suffix != ".md":
            continue
        for target in LINK.findall(CODE.sub("", path.read_text())):
            if "://" not in target and not (path.parent / target).exists():
                bad.append(f"{path.relative_to(root)}: {target}")
    return bad


def missing_notes(root: Path) -> list[str]:
    return [
        f"{path.relative_to(root)}: {note}"
        for path in texts(root)
        for note in NOTE.findall(path.read_text(errors="replace"))
        if not (root / note).exists()
    ]


def test_relative_links_in_docs_resolve() -> None:
    bad = broken_links(ROOT)
    assert not bad, "\n".join(bad)


def test_cited_notes_exist() -> None:
    bad = missing_notes(ROOT)
    assert not bad, "\n".join(bad)


def test_the_checks_catch_planted_mistakes(tmp_path: Path) -> None:
    (tmp_path / "docs" / "notes").mkdir(parents=True)
    (tmp_path / "docs" / "notes" / "2026-01-01-real.md").write_text("# real\n")
    (tmp_path / "docs" / "page.md").write_text(
        "[gone](missing.md), [here](page.md#top), [web](https://x.org/a.md), `f[a](b)`\n"
    )
    (tmp_path / "cutec").mkdir()
    notes = "docs" + "/notes/"  # split, so that this file cites no note itself
    (tmp_path / "cutec" / "a.py").write_text(
        f"# {notes}2026-01-01-real.md and {notes}2026-01-01-gone.md\n"
    )
    assert broken_links(tmp_path) == ["docs/page.md: missing.md"]
    assert missing_notes(tmp_path) == [f"cutec/a.py: {notes}2026-01-01-gone.md"]
