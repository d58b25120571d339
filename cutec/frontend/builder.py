"""The IR builder: a `.cute` AST to verified cute-dialect IR.

`build_module(program, defines, kernel)` makes one ``builtin.kernel`` per
kernel of the file (not of the files it imports, whose funcs and consts are in
scope: `build_imports`). Compile-time parameters are bound from their defaults
or from ``-D NAME=VALUE``; every static expression is evaluated here with the layout
algebra, so the IR holds only results (layouts in types, tilers in
attributes). A tensor parameter ``A: f32[M, K] : (1, ldA)`` becomes a pointer
argument and index arguments for its extents and strides; inside the kernel
those are SymInts named after the parameter (``M``) with the divisibility the
kernel's ``assume`` clauses declare.

Statements are built one at a time; a user mistake in one is recorded and the
next statement is built, so one run reports every independent error. Names a
failed statement would have bound are poisoned: using them stops quietly
instead of cascading into more messages. Anything else escaping is a bug and is
reported as an internal compiler error at the statement.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from cutec.diagnostics import CompileError, Diagnostic, InternalCompilerError, Location, Note
from cutec.frontend import ast, build_stmts
from cutec.frontend import scope as S
from cutec.frontend.build_exprs import ExprMixin
from cutec.frontend.build_header import (
    bind_ct_params,
    bind_params,
    collect_facts,
    grid_attribute,
    launch_attributes,
    params_attribute,
    signature,
)
from cutec.frontend.build_imports import program_globals
from cutec.frontend.builtins import REGISTRY as BUILTIN_REGISTRY
from cutec.frontend.builtins import lookup as lookup_builtin
from cutec.frontend.scope import POISON, Poisoned
from cutec.frontend.static_eval import (
    loc_of,
)
from cutec.ir.builder import Builder as IRBuilder
from cutec.ir.builder import InsertPoint
from cutec.ir.core import Block, Operation
from cutec.ir.dialects import builtin
from cutec.ir.verifier import verify
from cutec.layout.symbolic import SymInt
from cutec.target import DEFAULT_TARGET, Target
from cutec.target import target as lookup_target


def default_target() -> Target:
    return lookup_target(DEFAULT_TARGET)


class BuildContext(ExprMixin):
    """Builds one kernel; `errors` collects the diagnostics of failed statements."""

    def __init__(
        self,
        program: ast.Program,
        globals_: dict[str, Any],
        kernel: ast.Kernel,
        target: Target | None = None,
    ) -> None:
        self.program = program
        self.target = target or default_target()  # its limits bound what a kernel may use
        self.globals = globals_
        self.kernel = kernel
        self.scope = S.Scope()
        self.errors: list[Diagnostic] = []
        self.ir = IRBuilder()
        self.last_entry_op: Operation | None = None  # special registers go to the kernel entry
        self.special: dict[str, S.Runtime] = {}
        self.pending_tokens: list[Any] = []  # cp.async tokens since the last fence
        self.smem_bytes = 0
        self.inline_depth = 0
        self.returned: Any = None
        self.sym_values: dict[SymInt, S.Runtime] = {}  # kernel extents / strides by symbol

    # ------------------------------------------------------------------ IR helpers
    def emit(self, op: Operation, node: ast.Node) -> Any:
        op.location = loc_of(node)
        return self.ir.insert(op)

    def emit_at_entry(self, op: Operation, node: ast.Node) -> Any:
        """Insert at the start of the kernel so the value dominates every use."""
        op.location = loc_of(node)
        if self.last_entry_op is None:
            self.body_block.prepend(op)
        else:
            self.body_block.insert_after(self.last_entry_op, op)
        self.last_entry_op = op
        return op

    def build_block(self, block: ast.Block, new_scope: bool = True) -> None:
        """The statements of `block` (build_stmts.py); control flow recurses through here."""
        build_stmts.build_block(self, block, new_scope)

    def scratch_point(self) -> InsertPoint:
        """A point in a block that is thrown away: ops built there to look at a value
        (the grid's sizes, a while condition's first test) do not reach the kernel."""
        return InsertPoint(Block())

    def lookup_global(self, name: str) -> Any:
        if name in self.globals:
            value = self.globals[name]
            if value is POISON:
                raise Poisoned()
            return value
        return lookup_builtin(name)

    def similar_names(self, name: str) -> str | None:
        known = [n for frame in self.scope.frames for n in frame] + list(self.globals)
        known += list(BUILTIN_REGISTRY)
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
        return close[0] if close else None

    # ------------------------------------------------------------------ the kernel
    def build(self, defines: Mapping[str, Any]) -> builtin.KernelOp | None:
        k = self.kernel
        bind_ct_params(self, k.ct_params, defines, k)
        facts = collect_facts(self, k)
        arg_names, arg_types, dyn_names = signature(self, k)
        attrs = launch_attributes(self, k)
        if k.ct_params and not self.errors:
            attrs["params"] = params_attribute(self, k.ct_params)
        op = builtin.KernelOp(k.name, arg_types, attrs)
        op.location = loc_of(k)
        self.kernel_op = op
        self.body_block = op.body
        for arg, name in zip(op.body.args, arg_names, strict=True):
            arg.name_hint = name
        self.ir = IRBuilder.at_end(op.body)
        bind_params(self, k, op, arg_names, dyn_names, facts)
        if self.errors:
            return None
        self.build_block(k.body, new_scope=True)
        grid_attribute(self, k, op)
        end = builtin.ReturnOp()
        end.location = Location(k.span.file, k.body.span.end_line, max(k.body.span.end_col - 1, 1))
        self.ir.insert(end)
        return op


# --------------------------------------------------------------------------- the module


def build_module(
    program: ast.Program,
    defines: Mapping[str, Any] | None = None,
    kernel: str | None = None,
    target: Target | None = None,
) -> builtin.ModuleOp:
    """Build every kernel of `program` (or only `kernel`) for `target` (default sm_90a); raise
    one CompileError with all diagnostics when the program has mistakes.

    The module records the target: ``module attributes {target = "sm_90a"} {...}``."""
    target = target or default_target()
    defines = dict(defines or {})
    errors: list[Diagnostic] = []
    kernels = program.kernels
    if kernel is not None:
        kernels = tuple(k for k in kernels if k.name == kernel)
        if not kernels:
            names = ", ".join(k.name for k in program.kernels) or "none"
            raise CompileError(f"no kernel named '{kernel}' in {program.file} (kernels: {names})")
    if not kernels:
        raise CompileError(f"{program.file} defines no kernel", program.span.location)
    known_params = {p.name for k in kernels for p in k.ct_params}
    for name in defines:
        if name not in known_params:
            raise CompileError(f"-D {name}: no kernel has a compile-time parameter '{name}'")
    globals_, global_errors = program_globals(program)
    errors += global_errors
    module = builtin.ModuleOp(target=target.name)
    seen: dict[str, ast.Kernel] = {}
    for k in kernels:
        if k.name in seen:
            errors.append(
                Diagnostic(
                    f"kernel '{k.name}' is defined twice",
                    loc_of(k),
                    [Note("first defined here", loc_of(seen[k.name]))],
                )
            )
            continue
        seen[k.name] = k
        ctx = BuildContext(program, globals_, k, target)
        op = ctx.build({n: v for n, v in defines.items() if any(p.name == n for p in k.ct_params)})
        errors += ctx.errors
        if op is not None and not ctx.errors:
            module.body.append(op)
    if errors:
        raise CompileError("", diagnostics=_unique(errors))
    try:
        verify(module)
    except CompileError as e:  # the builder made IR its own verifier rejects: a bug
        raise InternalCompilerError(e, stage="frontend") from e
    return module


def _unique(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """One report per mistake: a statement in an unrolled loop (or an inlined function
    called twice) is built once per copy, and fails the same way at the same place."""
    seen: set[tuple[str, object]] = set()
    out = []
    for d in diagnostics:
        key = (d.message, d.location)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out
