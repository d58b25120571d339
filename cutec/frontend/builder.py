"""The IR builder: a `.cute` AST to verified cute-dialect IR.

`build_module(program, defines, kernel)` makes one ``builtin.kernel`` per
kernel of the file (not of the files it imports, whose funcs and consts are in
scope: `build_imports`), each built by `build_kernel` in a build context of its
own (context.py, which lists the feature modules). Compile-time parameters are
bound from their defaults or from ``-D NAME=VALUE``; every static expression is
evaluated with the layout algebra, so the IR holds only results (layouts in
types, tilers in attributes).

Statements are built one at a time; a user mistake in one is recorded and the
next statement is built, so one run reports every independent error
(build_stmts.py). The diagnostics of all kernels are raised together, once
each.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cutec.diagnostics import (
    CompileError,
    Diagnostic,
    InternalCompilerError,
    Location,
    Note,
    unique,
)
from cutec.frontend import ast
from cutec.frontend.build_header import (
    bind_ct_params,
    bind_params,
    check_launch,
    collect_facts,
    grid_attribute,
    launch_attributes,
    launch_facts,
    params_attribute,
    signature,
)
from cutec.frontend.build_imports import program_globals
from cutec.frontend.context import BuildContext, default_target
from cutec.frontend.static_eval import loc_of
from cutec.ir.attributes import StringAttr
from cutec.ir.builder import Builder as IRBuilder
from cutec.ir.dialects import builtin
from cutec.ir.verifier import verify
from cutec.target import Target


def build_kernel(
    ctx: BuildContext,
    k: ast.Kernel,
    defines: Mapping[str, Any],
    name: str | None = None,
    divisors: Mapping[str, int] | None = None,
) -> builtin.KernelOp | None:
    """The kernel `k` (named `name`, by default its own): its header (build_header.py),
    then its body (build_stmts.py); None when the header has mistakes (they are in
    ``ctx.errors``). `divisors` (and ``ctx.launch_alignments``) are what a launch
    promises of the run-time extents and strides (and the bases), recorded as the
    kernel's ``assume``s (and ``align`` clauses) are."""
    bind_ct_params(ctx, k.ct_params, defines, k)
    facts = collect_facts(ctx, k)
    arg_names, arg_types, dyn_names = signature(ctx, k)
    facts = launch_facts(facts, divisors or {}, dyn_names)
    attrs = launch_attributes(ctx, k)
    if k.ct_params and not ctx.errors:
        attrs["params"] = params_attribute(ctx, k.ct_params)
    op = builtin.KernelOp(name or k.name, arg_types, attrs)
    op.location = loc_of(k)
    ctx.body_block = op.body
    for arg, name in zip(op.body.args, arg_names, strict=True):
        arg.name_hint = name
    ctx.ir = IRBuilder.at_end(op.body)
    bind_params(ctx, k, op, arg_names, dyn_names, facts)
    if ctx.errors:
        return None
    ctx.build_block(k.body, new_scope=True)
    grid_attribute(ctx, k, op)
    if not ctx.errors:  # else the body's mistake may be why no gemm chose the block
        check_launch(ctx, k, op)
    end = builtin.ReturnOp()
    end.location = Location(k.span.file, k.body.span.end_line, max(k.body.span.end_col - 1, 1))
    ctx.ir.insert(end)
    return op


# --------------------------------------------------------------------------- the module


def build_module(
    program: ast.Program,
    defines: Mapping[str, Any] | None = None,
    kernel: str | None = None,
    target: Target | None = None,
    divisors: Mapping[str, int] | None = None,
    alignments: Mapping[str, int] | None = None,
) -> builtin.ModuleOp:
    """Build every kernel of `program` (or only `kernel`) for `target` (default sm_90a); raise
    one CompileError with all diagnostics when the program has mistakes.

    `divisors` and `alignments` (by name) are what the launches promise of the run-time
    extents and strides and of the tensors' bases (the JIT's specialisation: docs/runtime.md):
    each kernel records them as its own ``assume``s and ``align`` clauses, so what the
    frontend chooses (a whole-tensor gemm's plan) sees them too.

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
                    notes=[Note("first defined here", loc_of(seen[k.name]))],
                )
            )
            continue
        seen[k.name] = k
        ctx = BuildContext(globals_, target, launch_alignments=dict(alignments or {}))
        own = {n: v for n, v in defines.items() if any(p.name == n for p in k.ct_params)}
        op = build_kernel(ctx, k, own, divisors=divisors)
        errors += ctx.errors
        if op is None or ctx.errors:
            continue
        module.body.append(op)
        if ctx.wants_tail:
            tail, tail_errors = _build_tail(
                k, own, globals_, target, program, divisors or {}, alignments or {}
            )
            errors += tail_errors
            if tail is not None:
                op.attributes["then"] = StringAttr(tail.sym_name)
                module.body.append(tail)
    if errors:
        raise CompileError("", diagnostics=unique(errors))
    try:
        verify(module)
    except CompileError as e:  # the builder made IR its own verifier rejects: a bug
        raise InternalCompilerError(e, stage="frontend") from e
    return module


def _build_tail(
    k: ast.Kernel,
    defines: Mapping[str, Any],
    globals_: dict[str, Any],
    target: Target,
    program: ast.Program,
    divisors: Mapping[str, int],
    alignments: Mapping[str, int],
) -> tuple[builtin.KernelOp | None, list[Diagnostic]]:
    """A stream-K gemm's second kernel, `<kernel>__tail`: `k` built again, its gemm
    expanded for the tiles after the full waves (build_tile_gemm.py). The first kernel
    names it in its `then` attribute; the runtime launches it after the first."""
    name = f"{k.name}__tail"
    clash = next((other for other in program.kernels if other.name == name), None)
    if clash is not None:
        note = Note(f"'{k.name}' is a stream-K gemm", loc_of(k))
        message = f"kernel '{name}' is the name of kernel '{k.name}''s stream-K tail"
        return None, [Diagnostic(message, loc_of(clash), notes=[note])]
    ctx = BuildContext(globals_, target, stream_k_tail=True, launch_alignments=dict(alignments))
    op = build_kernel(ctx, k, defines, name, divisors)
    return (None if ctx.errors else op), ctx.errors
