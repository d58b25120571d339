"""Top-level names for the IR builder: a file's consts and funcs, and what it imports.

`program_globals(program)` resolves the file's imports (`cutec.frontend.imports`:
paths relative to the importing file, cycles and missing files are located
errors) and returns the names every kernel of the file sees:

* its own funcs (`scope.FuncRef`) and consts (their compile-time values);
* for ``import "lib.cute"``, the funcs and consts *defined in* lib.cute, by name;
* for ``import "lib.cute" as m``, one `scope.Namespace` ``m`` whose members are
  those names (``m.mainloop(...)``, ``m.PIPE``).

Each file's names are made once (a file imported twice shares them), and a func
keeps the names of the file that defines it: its body sees its own file's consts,
funcs and imports wherever it is inlined. A name defined twice (by two imports,
or by an import and the file) or an alias that is also a name is a located error;
so is ``m.x`` when m's file does not define x.
"""

from __future__ import annotations

import difflib
from typing import Any

from cutec.diagnostics import CompileError, Diagnostic, Note
from cutec.frontend import ast
from cutec.frontend import scope as S
from cutec.frontend.imports import Module, load_program
from cutec.frontend.scope import POISON, Poisoned
from cutec.frontend.static_eval import error


def program_globals(program: ast.Program) -> tuple[dict[str, Any], list[Diagnostic]]:
    """The top-level names of `program` and the diagnostics of its consts.

    An import that does not resolve, or names that clash, raise CompileError: the
    kernels could only report the names they lack, one cascade per use.
    """
    names = _Globals()
    out = names.of(load_program(program))
    return out, names.errors


class _Globals:
    def __init__(self) -> None:
        self.cache: dict[int, dict[str, Any]] = {}
        self.errors: list[Diagnostic] = []

    def of(self, module: Module) -> dict[str, Any]:
        if id(module) in self.cache:
            return self.cache[id(module)]
        out: dict[str, Any] = {}
        self.cache[id(module)] = out  # the loader has rejected cycles
        visible = module.visible()  # raises on a name defined twice
        module.namespaces()  # raises on an alias used twice
        for imp, sub in module.imports:
            own = self.of(sub)
            names = {n: own[n] for n in sub.definitions()}
            if imp.alias is None:
                out.update(names)
                continue
            if imp.alias in visible:
                d = visible[imp.alias]
                raise CompileError(
                    f"'{imp.alias}' is defined twice",
                    imp.span.location,
                    notes=[Note("also defined here", d.name_span.location)],
                )
            out[imp.alias] = S.Namespace(imp.alias, sub, names)
        items = module.program.items
        for item in items:
            if isinstance(item, ast.Func):
                out[item.name] = S.FuncRef(item, out)
        for item in items:
            if isinstance(item, ast.Const):
                out[item.name] = self.const(out, item)
        return out

    def const(self, names: dict[str, Any], item: ast.Const) -> Any:
        """A top-level const: a compile-time value (consts are evaluated in order), in a
        build context of its own (no kernel)."""
        # Imported here to break a cycle (context -> build_exprs -> build_calls ->
        # build_imports -> context).
        from cutec.frontend.context import BuildContext, default_target

        ctx = BuildContext(names, default_target())
        try:
            value = ctx.eval(item.value)
            if isinstance(value, S.Runtime | S.Tensor):
                raise error(f"'const {item.name}' needs a compile-time value", item)
            return value
        except CompileError as e:
            self.errors.extend(e.diagnostics)
        except Poisoned:
            pass
        return POISON


def namespace_member(ns: S.Namespace, node: ast.Attribute) -> Any:
    """``m.name`` for ``import "lib.cute" as m``."""
    if node.attr in ns.names:
        value = ns.names[node.attr]
        if value is POISON:
            raise Poisoned()  # its definition failed and was reported
        return value
    module: Module = ns.module
    file = module.path.name if module.path is not None else module.program.file
    where = ast.Name(node.attr, node.attr_span)
    if any(k.name == node.attr for k in module.program.kernels):
        raise error(f"'{node.attr}' is a kernel of {file}; kernels are not imported", where)
    for imp, sub in module.imports:
        if node.attr in sub.definitions():
            raise error(
                f"{file} does not define '{node.attr}'; it imports it from '{imp.path}' "
                "(imports are not passed on: import that file)",
                where,
            )
    close = difflib.get_close_matches(node.attr, list(ns.names), n=1, cutoff=0.75)
    notes = [Note(f"did you mean '{ns.alias}.{close[0]}'?")] if close else None
    raise error(f"'{ns.alias}' ({file}) defines no '{node.attr}'", where, notes)
