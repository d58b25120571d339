"""The package rules of docs/architecture.md, checked on the import graph of cutec/.

Dependencies run one way: a package imports only packages of a lower layer
(the table below mirrors the diagram in docs/architecture.md). Inside a package
the module-level imports form no cycle, and an import written inside a function
carries a comment saying why (start-up time, or a cycle it breaks).
"""

from __future__ import annotations

import ast
import itertools
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "cutec"

# Layer of each top-level unit of cutec (a package, or a module directly under
# cutec/). A unit may import units of a strictly lower layer and itself.
LAYERS: dict[str, int] = {
    "diagnostics": 0,
    "target": 0,
    "dtypes": 0,
    "layout": 1,
    "atoms": 2,
    "ir": 3,
    "analysis": 4,
    "transforms": 4,
    "heuristics": 4,
    "frontend": 5,
    "passes": 5,
    "ptx": 6,
    "cpu": 6,
    "driver": 7,
    "runtime": 8,
    "commands": 9,
    "cli": 10,
    "__init__": 11,
}
# Units of layer 0 may import each other only along these edges.
BASE_EDGES = {("target", "dtypes")}
# The import cycles that remain (function-level imports included): the strongly
# connected components of more than one module, and the modules in them. These
# numbers may only go down; a change that breaks a cycle lowers them.
CYCLES = 5
CYCLE_MODULES = 21
# Units in which no import cycle may remain: the back ends, which the Hopper path extends.
ACYCLIC_UNITS = ("ptx", "cpu")


@dataclass(frozen=True)
class Import:
    importer: str  # dotted module name
    imported: str  # dotted module name (a module of cutec)
    line: int
    in_function: bool
    commented: bool


def _modules(root: Path) -> dict[str, Path]:
    mods = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = path
    return mods


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"
    )


def _targets(
    modules: dict[str, Path], module: str, path: Path, node: ast.Import | ast.ImportFrom
) -> list[str]:
    """The cutec modules an import statement loads (deepest existing module per name)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        if node.level:
            base = module.split(".")
            if path.name != "__init__.py":
                base = base[:-1]
            base = base[: len(base) - node.level + 1]
            prefix = ".".join(base + ([node.module] if node.module else []))
        else:
            prefix = node.module or ""
        names = [
            f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in modules else prefix for a in node.names
        ]
    found = []
    for name in names:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        if name.startswith("cutec") and name:
            found.append(name)
    return sorted(set(found))


def collect(root: Path) -> list[Import]:
    """Every import of a cutec module by a module under `root`."""
    modules = _modules(root)
    out: list[Import] = []
    for module, path in modules.items():
        source = path.read_text()
        lines = source.splitlines()
        tree = ast.parse(source)

        def commented(lineno: int, lines: list[str] = lines) -> bool:
            here = lines[lineno - 1]
            above = lines[lineno - 2].strip() if lineno >= 2 else ""
            return "#" in here or above.startswith("#")

        def visit(node: ast.AST, in_function: bool, module=module, path=path) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.If) and _is_type_checking(child):
                    continue  # annotations only: no run-time dependency
                if isinstance(child, ast.Import | ast.ImportFrom):
                    for target in _targets(modules, module, path, child):
                        out.append(
                            Import(
                                module, target, child.lineno, in_function, commented(child.lineno)
                            )
                        )
                inner = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
                visit(child, inner)

        visit(tree, False)
    return out


IMPORTS = collect(ROOT)
MODULES = _modules(ROOT)


def unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def layering_violations(imports: list[Import]) -> list[str]:
    bad = []
    for imp in imports:
        a, b = unit(imp.importer), unit(imp.imported)
        if a == b or imp.imported == "cutec":
            continue
        ok = LAYERS[b] < LAYERS[a] or (LAYERS[a] == LAYERS[b] == 0 and (a, b) in BASE_EDGES)
        if not ok:
            bad.append(f"{imp.importer}:{imp.line} imports {imp.imported} ({a} -> {b})")
    return bad


def module_cycles(imports: list[Import]) -> list[list[str]]:
    """Cycles among the module-level imports (function-level ones run later)."""
    graph: dict[str, set[str]] = {}
    for imp in imports:
        if not imp.in_function and imp.imported != imp.importer:
            graph.setdefault(imp.importer, set()).add(imp.imported)
    state: dict[str, int] = {}  # 1: on the DFS stack, 2: done
    cycles: list[list[str]] = []

    def dfs(node: str, stack: list[str]) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                dfs(nxt, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            dfs(node, [])
    return cycles


def strongly_connected(imports: list[Import]) -> list[list[str]]:
    """The strongly connected components of more than one module of the whole import
    graph, function-level imports included (Tarjan's algorithm): each a set of modules
    that import each other, at once or later, directly or around a cycle."""
    graph: dict[str, set[str]] = {}
    for imp in imports:
        if imp.imported != imp.importer:
            graph.setdefault(imp.importer, set()).add(imp.imported)
    counter = itertools.count()
    index: dict[str, int] = {}
    low: dict[str, int] = {}  # the lowest index reachable through the DFS subtree
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = next(counter)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:  # `node` is the root of a component: pop it
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    # A chain of imports may be as deep as there are modules.
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * len(graph) + 100))
    try:
        for node in sorted(graph):
            if node not in index:
                visit(node)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(found)


def cycle_problems(components: list[list[str]]) -> list[str]:
    """The components that cross a unit or lie in one of `ACYCLIC_UNITS`."""
    bad = []
    for component in components:
        units = sorted({unit(m) for m in component})
        if len(units) > 1:
            bad.append(f"a cycle across {', '.join(units)}: {', '.join(component)}")
        elif units[0] in ACYCLIC_UNITS:
            bad.append(f"a cycle in {units[0]}/: {', '.join(component)}")
    return bad


def unexplained_inner_imports(imports: list[Import]) -> list[str]:
    return [
        f"{i.importer}:{i.line} imports {i.imported} inside a function without a comment"
        for i in imports
        if i.in_function and not i.commented
    ]


def test_every_unit_has_a_layer() -> None:
    missing = sorted({unit(m) for m in MODULES} - LAYERS.keys())
    assert not missing, f"add these to LAYERS and docs/architecture.md: {missing}"


def test_imports_go_down_the_layers() -> None:
    bad = layering_violations(IMPORTS)
    assert not bad, "imports against the layering:\n" + "\n".join(bad)


def test_layout_is_a_library_on_its_own() -> None:
    bad = [
        f"{i.importer}:{i.line} imports {i.imported}"
        for i in IMPORTS
        if unit(i.importer) == "layout" and unit(i.imported) != "layout"
    ]
    assert not bad


def test_no_module_level_import_cycle() -> None:
    cycles = module_cycles(IMPORTS)
    assert not cycles, "module-level import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_no_import_cycle_crosses_a_package_or_lies_in_a_back_end() -> None:
    bad = cycle_problems(strongly_connected(IMPORTS))
    assert not bad, "import cycles (function-level imports included):\n" + "\n".join(bad)


def test_import_cycles_never_grow() -> None:
    components = strongly_connected(IMPORTS)
    listing = "\n".join(", ".join(c) for c in components)
    assert len(components) <= CYCLES and sum(map(len, components)) <= CYCLE_MODULES, (
        f"more import cycles than CYCLES = {CYCLES} ({CYCLE_MODULES} modules):\n{listing}"
    )


def test_imports_inside_functions_say_why() -> None:
    bad = unexplained_inner_imports(IMPORTS)
    assert not bad, "\n".join(bad)


def test_the_checks_catch_planted_mistakes(tmp_path: Path) -> None:
    pkg = tmp_path / "cutec"
    for d in ("ir", "passes", "layout"):
        (pkg / d).mkdir(parents=True)
        (pkg / d / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    # The IR importing a pass, and the layout package importing the IR.
    (pkg / "ir" / "core.py").write_text("from cutec.passes.manager import PassManager\n")
    (pkg / "passes" / "manager.py").write_text("from cutec.ir import core\n")
    (pkg / "layout" / "a.py").write_text(
        "from cutec.layout import b\n\n\ndef f():\n    from cutec.ir import core\n"
    )
    (pkg / "layout" / "b.py").write_text("from cutec.layout.a import f\n")
    imports = collect(pkg)
    assert layering_violations(imports) == [
        "cutec.ir.core:1 imports cutec.passes.manager (ir -> passes)",
        "cutec.layout.a:5 imports cutec.ir.core (layout -> ir)",
    ]
    assert ["cutec.layout.a", "cutec.layout.b", "cutec.layout.a"] in module_cycles(imports)
    assert unexplained_inner_imports(imports) == [
        "cutec.layout.a:5 imports cutec.ir.core inside a function without a comment"
    ]


def test_the_cycle_check_catches_planted_cycles(tmp_path: Path) -> None:
    """Cycles closed by imports inside functions (which module_cycles does not see):
    one across the IR and the passes (through ir.types), one inside ptx/."""
    pkg = tmp_path / "cutec"
    for d in ("ir", "passes", "ptx"):
        (pkg / d).mkdir(parents=True)
        (pkg / d / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "ir" / "core.py").write_text(
        "from cutec.ir import types\n\n\ndef f():\n    from cutec.passes import cse  # x\n"
    )
    (pkg / "ir" / "types.py").write_text("def g():\n    from cutec.ir import core  # a cycle\n")
    (pkg / "passes" / "cse.py").write_text("from cutec.ir import core\n")
    (pkg / "ptx" / "emitter.py").write_text("from cutec.ptx import rules\n")
    (pkg / "ptx" / "rules.py").write_text("def h():\n    from cutec.ptx import emitter  # y\n")
    imports = collect(pkg)
    assert module_cycles(imports) == []
    components = strongly_connected(imports)
    assert components == [
        ["cutec.ir.core", "cutec.ir.types", "cutec.passes.cse"],
        ["cutec.ptx.emitter", "cutec.ptx.rules"],
    ]
    assert cycle_problems(components) == [
        "a cycle across ir, passes: cutec.ir.core, cutec.ir.types, cutec.passes.cse",
        "a cycle in ptx/: cutec.ptx.emitter, cutec.ptx.rules",
    ]
