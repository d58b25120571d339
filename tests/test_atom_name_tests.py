"""No code outside cutec/atoms tests an atom's name: it reads the record's family and traits.

An atom's name (CuTe's ``SM80_16x8x16_F32F16F16F32_TN``, ``UniversalCopy<uint128_t>``)
is a key to look the record up by, never a fact to decide on: which instruction an
atom is, and how to lower, run or show it, is its `family` and the family's traits
(cutec/atoms/family.py, docs/atoms.md). This scan of the AST of every module of
cutec/ but cutec/atoms/ fails on a *test* of an atom's name:

* a string constant that looks like (a piece of) an atom name (`ATOM_TEXT`: ``SM<n>_``,
  ``UniversalFMA``/``UniversalCopy`` followed by more, ``LDSM``, ``STSM``, ``CP_ASYNC``,
  ``CACHEALWAYS``/``CACHEGLOBAL``, ``ZFILL``, ``TMA_LOAD``/``TMA_STORE``) used in a
  comparison (``==``, ``!=``, ``in``, ``not in``, alone or in a tuple/list/set), as
  the argument of a string test (``startswith``, ``endswith``, ``find``, ``index``,
  ``count``, ``partition``, ``split``, ``removeprefix``, ``removesuffix``,
  ``replace``) or as a regular expression (``re.compile``, ``re.match`` ...);
* any string constant in such a string test or ``in`` test of an expression that is
  an atom's name by its spelling: a variable ``atom``, an attribute ``.atom`` (the IR
  types' and ops' atom name, also ``.atom.value``), or ``atom.name``/``record.name``.

Not tests of an atom's name, so allowed: looking an atom up by a literal name
(``copy_atom("UniversalCopy<uint8_t>")``), building a name (an f-string), docstrings
and comments (no comparison), and comparing with a bare language keyword of the
frontend's builtins table (``v.name in ("UniversalCopy", "UniversalFMA")``): no atom
is called exactly that, so such a comparison can only be about the keyword. A
prefix test with a keyword (``startswith("UniversalCopy")``) is about atom names and
fails. The check reads spellings, so a test hidden behind another variable name
(``n.startswith(prefix)``) escapes it; review catches the rest.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "cutec"

ATOM_TEXT = re.compile(
    r"SM\d+_|Universal(?:FMA|Copy)(?=.)|LDSM|STSM|CP_ASYNC|CACHE(?:ALWAYS|GLOBAL)|ZFILL"
    r"|TMA_(?:LOAD|STORE)"
)
# The frontend's builtins table spells these as language keywords; no atom has these names.
KEYWORDS = frozenset({"UniversalFMA", "UniversalCopy"})
STRING_TESTS = frozenset(
    {
        "startswith",
        "endswith",
        "find",
        "index",
        "count",
        "partition",
        "rpartition",
        "split",
        "rsplit",
        "removeprefix",
        "removesuffix",
        "replace",
    }
)
REGEX_CALLS = frozenset(
    {"compile", "match", "fullmatch", "search", "sub", "subn", "findall", "finditer", "split"}
)


def _strings(node: ast.AST) -> list[str]:
    """The string constants `node` is or holds directly (a tuple, list or set of them)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [s for e in node.elts for s in _strings(e)]
    return []


def _names_an_atom(node: ast.AST) -> bool:
    """Whether `node` is spelled as an atom's name: ``atom``, ``x.atom``, ``x.atom.value``,
    ``atom.name``, ``record.name``."""
    if isinstance(node, ast.Attribute) and node.attr == "value":
        node = node.value
    if isinstance(node, ast.Name):
        return node.id == "atom"
    if isinstance(node, ast.Attribute):
        if node.attr == "atom":
            return True
        return (
            node.attr == "name"
            and isinstance(node.value, ast.Name)
            and (node.value.id in ("atom", "record"))
        )
    return False


def _atom_text(strings: list[str], keywords_allowed: bool) -> list[str]:
    """The strings that look like atom names (a bare keyword too unless allowed)."""
    return [s for s in strings if ATOM_TEXT.search(s) or (s in KEYWORDS and not keywords_allowed)]


def name_tests(source: str) -> list[tuple[int, str]]:
    """(line, source text) of every test of an atom's name in `source`."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        bad = False
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            strings = [s for side in sides for s in _strings(side)]
            bad = bool(_atom_text(strings, keywords_allowed=True))
            substring = any(isinstance(o, ast.In | ast.NotIn) for o in node.ops)
            if substring and any(_names_an_atom(c) for c in node.comparators) and strings:
                bad = True
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            func = node.func
            strings = [s for a in node.args for s in _strings(a)]
            if func.attr in STRING_TESTS:
                bad = bool(_atom_text(strings, keywords_allowed=False)) or (
                    _names_an_atom(func.value) and bool(strings)
                )
            regex = isinstance(func.value, ast.Name) and func.value.id == "re"
            if regex and func.attr in REGEX_CALLS and node.args:
                bad = bool(_atom_text(_strings(node.args[0]), keywords_allowed=False))
        if bad:
            found.append((node.lineno, ast.get_source_segment(source, node) or ""))
    return sorted(found)


def scan(root: Path) -> list[str]:
    """Every test of an atom's name in the modules under `root` but `root`/atoms."""
    out = []
    for path in sorted(root.rglob("*.py")):
        if (root / "atoms") in path.parents:
            continue
        for line, text in name_tests(path.read_text()):
            out.append(f"{path.relative_to(root.parent)}:{line}: {text}")
    return out


def test_no_code_outside_atoms_tests_an_atom_name() -> None:
    found = scan(ROOT)
    assert not found, (
        "dispatch on the atom's family and traits (cutec/atoms/family.py), not its name:\n"
        + "\n".join(found)
    )


def test_the_scan_catches_planted_name_tests(tmp_path: Path) -> None:
    pkg = tmp_path / "cutec"
    (pkg / "atoms").mkdir(parents=True)
    (pkg / "passes").mkdir()
    # Inside cutec/atoms a name may be parsed: not reported.
    (pkg / "atoms" / "copy.py").write_text('def f(name):\n    return name.startswith("SM90_")\n')
    (pkg / "passes" / "lower.py").write_text(
        '"""Lowers SM80_16x8x16 atoms."""  # a docstring and a comment: no test\n'
        "import re\n"
        "\n"
        "\n"
        "def f(atom, tiled, op, v, name):\n"
        '    a = atom.startswith(("UniversalCopy<", "SM80_CP_ASYNC_"))\n'
        '    b = "ZFILL" in name\n'
        '    c = tiled.atom.endswith("_T")\n'
        '    d = name == "SM75_U32x4_LDSM_N"\n'
        '    e = re.compile(r"SM90_64x(\\d+)x")\n'
        '    g = name.startswith("UniversalFMA")\n'
        '    h = "_T" in op.atom.value\n'
        '    k = v.name in ("UniversalCopy", "UniversalFMA")  # keywords: allowed\n'
        '    m = copy_atom("UniversalCopy<uint8_t>")  # a lookup: allowed\n'
        '    n = f"UniversalCopy<uint{8}_t>"  # building a name: allowed\n'
        "    return a, b, c, d, e, g, h, k, m, n\n"
    )
    assert [line.split(": ", 1)[0] for line in scan(pkg)] == [
        f"cutec/passes/lower.py:{n}" for n in (6, 7, 8, 9, 10, 11, 12)
    ]
