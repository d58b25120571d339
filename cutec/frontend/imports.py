"""``import "file.cute"``: loading a program together with the files it imports.

Semantics (docs/language.md, "Constants and imports"):

* the path is relative to the importing file's directory, but for one that starts
  with ``cutec/``: that names a file of the library shipped with the package
  (``cutec/frontend/lib/``: ``import "cutec/pipeline.cute"``);
* ``import "f.cute"`` makes the functions and constants *defined in* f.cute
  visible by their names (not f.cute's kernels, and not what f.cute itself
  imports: no re-export, so a file's names are found in the files it names);
* ``import "f.cute" as m`` makes them visible as ``m.name`` instead;
* a cycle, a missing file or two definitions of one name are located errors.

`load_file` / `load_source` / `load_program` return a `Module`; a file imported twice (a
diamond) is parsed once and shared.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cutec.diagnostics import CompileError, Location, Note
from cutec.frontend import ast
from cutec.frontend.parser import parse_file, parse_source

MAX_IMPORT_DEPTH = 32
LIBRARY = Path(__file__).parent / "lib"  # the .cute library shipped with the package
LIBRARY_PREFIX = "cutec/"  # an import path naming a library file

Definition = ast.Func | ast.Const


@dataclass(frozen=True)
class Module:
    """A parsed file and its resolved imports, in source order."""

    path: Path | None  # None for source text that has no file
    program: ast.Program
    imports: tuple[tuple[ast.Import, Module], ...]

    def definitions(self) -> dict[str, Definition]:
        """The functions and constants this file defines (what importers see)."""
        out: dict[str, Definition] = {}
        for item in self.program.items:
            if isinstance(item, ast.Func | ast.Const):
                out[item.name] = item
        return out

    def visible(self) -> dict[str, Definition]:
        """Names usable unqualified in this file: its own definitions and those
        of its unaliased imports. Raises CompileError on a clash."""
        seen: dict[str, tuple[Definition, ast.Import | None]] = {}
        for imp, mod in self.imports:
            if imp.alias is None:
                for name, d in mod.definitions().items():
                    _add(seen, name, d, imp)
        for name, d in self.definitions().items():
            _add(seen, name, d, None)
        return {name: d for name, (d, _) in seen.items()}

    def namespaces(self) -> dict[str, Module]:
        """``alias -> module`` for ``import "..." as alias``."""
        out: dict[str, Module] = {}
        for imp, mod in self.imports:
            if imp.alias is not None:
                if imp.alias in out:
                    raise CompileError(f"import alias '{imp.alias}' used twice", imp.span.location)
                out[imp.alias] = mod
        return out


def _add(
    seen: dict[str, tuple[Definition, ast.Import | None]],
    name: str,
    d: Definition,
    via: ast.Import | None,
) -> None:
    if name in seen:
        prev, prev_via = seen[name]
        where = via.span.location if via is not None else d.name_span.location
        first = prev_via.span.location if prev_via is not None else prev.name_span.location
        raise CompileError(
            f"'{name}' is defined twice",
            where,
            notes=[Note("the first definition is visible from here", first)],
        )
    seen[name] = (d, via)


def load_file(path: str | Path) -> Module:
    """Parse `path` and, recursively, every file it imports."""
    return _Loader().load(Path(path), None, ())


def load_source(text: str, file: str = "<input>") -> Module:
    """Like `load_file` for text in memory; imports resolve against `file`'s directory."""
    return load_program(parse_source(text, file))


def load_program(program: ast.Program) -> Module:
    """The module of an already parsed `program`: its imports resolve against the
    directory of ``program.file`` (the current directory for ``<input>``)."""
    file = program.file
    path = Path(file) if file != "<input>" else None
    chain = (path.resolve(),) if path is not None else ()
    base = path.parent if path is not None else Path.cwd()
    return Module(path, program, _Loader().resolve(program, base, chain))


class _Loader:
    def __init__(self) -> None:
        self.cache: dict[Path, Module] = {}

    def load(self, path: Path, at: ast.Import | None, chain: tuple[Path, ...]) -> Module:
        resolved = path.resolve()
        if resolved in chain:
            cycle = " -> ".join(p.name for p in (*chain[chain.index(resolved) :], resolved))
            assert at is not None, "a file cannot be in its own chain before any import"
            raise CompileError(f"import cycle: {cycle}", at.span.location)
        if resolved in self.cache:
            return self.cache[resolved]
        if len(chain) >= MAX_IMPORT_DEPTH:
            assert at is not None
            raise CompileError(
                f"imports nested too deeply (more than {MAX_IMPORT_DEPTH} files)",
                at.span.location,
            )
        if not resolved.is_file():
            where = at.span.location if at is not None else None
            raise CompileError(f"cannot find '{path}'", where)
        program = parse_file(path)
        imports = self.resolve(program, path.parent, (*chain, resolved))
        module = Module(path, program, imports)
        self.cache[resolved] = module
        return module

    def resolve(
        self, program: ast.Program, base: Path, chain: tuple[Path, ...]
    ) -> tuple[tuple[ast.Import, Module], ...]:
        out = []
        for imp in program.imports:
            if not imp.path.endswith(".cute"):
                raise CompileError(f"imported files end in .cute; got '{imp.path}'", _path_loc(imp))
            where = LIBRARY if imp.path.startswith(LIBRARY_PREFIX) else base
            target = where / imp.path.removeprefix(LIBRARY_PREFIX)
            if not _is_file(target):
                raise CompileError(f"cannot find '{imp.path}' (looked in {where})", _path_loc(imp))
            out.append((imp, self.load(target, imp, chain)))
        return tuple(out)


def _is_file(path: Path) -> bool:
    """Whether `path` names a file; one the OS cannot look up (a name longer than it
    allows) names none."""
    try:
        return path.resolve().is_file()
    except OSError:
        return False


def _path_loc(imp: ast.Import) -> Location:
    return imp.path_span.location
