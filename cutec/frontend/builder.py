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
from collections.abc import Iterator, Mapping
from typing import Any

from cutec.diagnostics import CompileError, Diagnostic, InternalCompilerError, Location, Note
from cutec.frontend import ast
from cutec.frontend import scope as S
from cutec.frontend.build_calls import CallMixin
from cutec.frontend.build_control import ControlMixin
from cutec.frontend.build_exprs import ExprMixin
from cutec.frontend.build_header import HeaderMixin
from cutec.frontend.build_imports import program_globals
from cutec.frontend.build_scalars import as_runtime, runtime_binop
from cutec.frontend.builtins import REGISTRY as BUILTIN_REGISTRY
from cutec.frontend.parser import parse_source
from cutec.frontend.scope import POISON, Poisoned
from cutec.frontend.static_eval import (
    DTYPES,
    algebra_errors,
    checked_layout,
    describe,
    error,
    loc_of,
    to_int_tuple,
)
from cutec.ir import types as T
from cutec.ir.attributes import (
    Attribute,
    DictAttr,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    TypeAttr,
)
from cutec.ir.builder import Builder as IRBuilder
from cutec.ir.core import Operation
from cutec.ir.dialects import builtin
from cutec.ir.dialects.cute import MakeTensorOp, TensorType
from cutec.ir.dialects.cute_infer import spec_of
from cutec.ir.dialects.gpu import PointerType
from cutec.ir.verifier import verify
from cutec.layout import Layout, compact_col_major
from cutec.layout.inttuple import congruent, format_tuple
from cutec.layout.symbolic import SymInt, is_static, sym
from cutec.target import DEFAULT_TARGET, AddressSpace, Target
from cutec.target import target as lookup_target


def default_target() -> Target:
    return lookup_target(DEFAULT_TARGET)


class BuildContext(HeaderMixin, CallMixin, ControlMixin, ExprMixin):
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
        self.builtins = BUILTIN_REGISTRY
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

    def lookup_global(self, name: str) -> Any:
        if name in self.globals:
            value = self.globals[name]
            if value is POISON:
                raise Poisoned()
            return value
        return self.builtin(name)

    def similar_names(self, name: str) -> str | None:
        known = [n for frame in self.scope.frames for n in frame] + list(self.globals)
        known += self.builtin_names()
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
        return close[0] if close else None

    # ------------------------------------------------------------------ the kernel
    def build(self, defines: Mapping[str, Any]) -> builtin.KernelOp | None:
        k = self.kernel
        self.bind_ct_params(k.ct_params, defines, k)
        facts = self.collect_facts(k)
        arg_names, arg_types, dyn_names = self.signature(k)
        attrs = self.launch_attributes(k)
        if k.ct_params and not self.errors:
            attrs["params"] = self.params_attribute(k.ct_params)
        op = builtin.KernelOp(k.name, arg_types, attrs)
        op.location = loc_of(k)
        self.kernel_op = op
        self.body_block = op.body
        for arg, name in zip(op.body.args, arg_names, strict=True):
            arg.name_hint = name
        self.ir = IRBuilder.at_end(op.body)
        self.bind_params(k, op, arg_names, dyn_names, facts)
        if self.errors:
            return None
        self.build_block(k.body, new_scope=True)
        self.grid_attribute(k, op)
        end = builtin.ReturnOp()
        end.location = Location(k.span.file, k.body.span.end_line, max(k.body.span.end_col - 1, 1))
        self.ir.insert(end)
        return op

    def bind_ct_params(
        self, params: tuple[ast.CtParam, ...], defines: Mapping[str, Any], owner: ast.Node
    ) -> None:
        for p in params:
            try:
                if p.name in defines:
                    value = self.define_value(p, defines[p.name])
                elif p.default is not None:
                    value = self.eval(p.default)
                else:
                    raise error(
                        f"compile-time parameter '{p.name}' has no default; "
                        f"set it with -D {p.name}=VALUE",
                        p,
                    )
                self.check_ct_kind(p, value)
                self.scope.bind(p.name, value, loc_of(p), const=True)
            except CompileError as e:
                self.errors.extend(e.diagnostics)
                self.scope.bind(p.name, POISON, loc_of(p))
            except Poisoned:
                self.scope.bind(p.name, POISON, loc_of(p))

    def params_attribute(self, params: tuple[ast.CtParam, ...]) -> DictAttr:
        """The compile-time parameters' values (defaults and -D alike): they name the
        specialisation, so the IR (and a cache key made from it) says which one it is."""
        entries: list[tuple[str, Attribute]] = []
        for p in params:
            binding = self.scope.lookup(p.name)
            assert binding is not None
            value = binding.value
            if isinstance(value, bool):
                attr: Attribute = IntegerAttr(int(value), T.i1)
            elif isinstance(value, int):
                attr = IntegerAttr(value, T.i64)
            elif isinstance(value, float):
                attr = FloatAttr(value, T.f64)
            elif isinstance(value, T.Type):
                attr = TypeAttr(value)
            elif isinstance(value, S.AtomRef):
                attr = StringAttr(value.name)
            else:  # layouts and shapes: their CuTe text
                attr = StringAttr(
                    str(value) if not isinstance(value, tuple) else format_tuple(value)
                )
            entries.append((p.name, attr))
        return DictAttr(tuple(entries))

    def define_value(self, p: ast.CtParam, text: Any) -> Any:
        """The value of ``-D NAME=TEXT``: TEXT is parsed as an expression of the language."""
        if not isinstance(text, str):
            return text
        try:
            prog = parse_source(f"const __define = {text}\n", f"<-D {p.name}>")
        except CompileError as e:
            raise CompileError(f"-D {p.name}={text}: not an expression ({e})", loc_of(p)) from None
        const = prog.items[0]
        assert isinstance(const, ast.Const)
        try:
            return self.eval(const.value)
        except CompileError as e:
            raise CompileError(f"-D {p.name}={text}: {e}", loc_of(p)) from None

    def check_ct_kind(self, p: ast.CtParam, value: Any) -> None:
        kind = p.kind.name if p.kind is not None else None
        ok = {
            None: True,
            "int": not isinstance(value, bool) and is_static(value),
            "bool": isinstance(value, bool),
            "float": isinstance(value, float) or (not isinstance(value, bool) and is_static(value)),
            "dtype": isinstance(value, T.Type),
            "layout": isinstance(value, Layout) or type(value).__name__ == "ComposedLayout",
            "shape": isinstance(value, tuple | int),
            "copy_atom": isinstance(value, S.AtomRef) and value.kind in ("copy", "auto"),
            "mma_atom": isinstance(value, S.AtomRef) and value.kind in ("mma", "auto"),
            "atom": isinstance(value, S.AtomRef),
        }.get(kind)
        if ok is None:
            raise error(
                f"unknown kind '{kind}' of compile-time parameter '{p.name}' "
                "(int, bool, float, dtype, layout, shape, copy_atom, mma_atom)",
                p.kind,
            )
        if not ok:
            raise error(
                f"compile-time parameter '{p.name}' is declared {kind} "
                f"but its value is {describe(value)}",
                p,
            )

    def signature(self, k: ast.Kernel) -> tuple[list[str], list[T.Type], dict[str, ast.Name]]:
        """Kernel argument names and types: a pointer per tensor, then its new extents."""
        names: list[str] = []
        types: list[T.Type] = []
        dyn: dict[str, ast.Name] = {}
        seen_params: dict[str, ast.Param] = {}
        for p in k.params:
            if p.name in seen_params:
                self.errors.append(
                    Diagnostic(
                        f"parameter '{p.name}' is declared twice",
                        loc_of(p),
                        [Note("first declared here", loc_of(seen_params[p.name]))],
                    )
                )
                continue
            seen_params[p.name] = p
            if p.type is None:
                self.errors.append(
                    Diagnostic(f"kernel parameter '{p.name}' needs a type", loc_of(p))
                )
                continue
            if p.type.dims is None:
                t = self.scalar_type(p.type)
                if t is not None:
                    names.append(p.name)
                    types.append(t)
                continue
            element = self.element_type(p.type)
            names.append(p.name)
            types.append(PointerType(element or T.f32, AddressSpace.GLOBAL))
            exprs = list(p.type.dims) + ([p.stride] if p.stride is not None else [])
            for e in exprs:
                for n in ast.walk(e):
                    if (
                        isinstance(n, ast.Name)
                        and n.id not in dyn
                        and self.scope.lookup(n.id) is None
                        and n.id not in self.globals
                        and n.id not in DTYPES
                        and self.builtin(n.id) is None
                    ):
                        if n.id in seen_params:
                            continue
                        dyn[n.id] = n
                        names.append(n.id)
                        types.append(T.index)
        return names, types, dyn

    def scalar_type(self, ref: ast.TypeRef) -> T.Type | None:
        if ref.name == "int":
            return T.index
        if ref.name == "bool":
            return T.i1
        t = self.element_type(ref)
        return t

    def element_type(self, ref: ast.TypeRef) -> T.Type | None:
        binding = self.scope.lookup(ref.name)
        if binding is not None and isinstance(binding.value, T.Type):
            return binding.value
        if ref.name in DTYPES:
            return DTYPES[ref.name]
        close = difflib.get_close_matches(ref.name, [*DTYPES, "int"], n=1)
        notes = [Note(f"did you mean '{close[0]}'?")] if close else []
        self.errors.append(Diagnostic(f"unknown element type '{ref.name}'", loc_of(ref), notes))
        return None

    def bind_params(
        self,
        k: ast.Kernel,
        op: builtin.KernelOp,
        arg_names: list[str],
        dyn: dict[str, ast.Name],
        facts: dict[str, int],
    ) -> None:
        args = dict(zip(arg_names, op.body.args, strict=True))
        for name in facts:
            if name not in dyn and not any(p.name == name for p in k.params):
                self.errors.append(
                    Diagnostic(
                        f"assumption about '{name}', which is not a run-time extent, stride or "
                        "int parameter of the kernel",
                        loc_of(k),
                    )
                )
        for name, node in dyn.items():
            s = sym(name, divisibility=facts.get(name, 1))
            self.sym_values[s] = S.Runtime(args[name], s)
            self.scope.bind(name, self.sym_values[s], loc_of(node))
        for p in k.params:
            if p.name not in args or p.type is None:
                continue
            arg = args[p.name]
            if p.type.dims is None:
                s = (
                    sym(p.name, divisibility=facts.get(p.name, 1), min_value=0)
                    if arg.type == T.index
                    else None
                )
                if s is not None:
                    self.sym_values[s] = S.Runtime(arg, s)
                self.scope.bind(p.name, S.Runtime(arg, s), loc_of(p))
                continue
            try:
                self.scope.bind(p.name, self.tensor_param(p, arg), loc_of(p))
            except CompileError as e:
                self.errors.extend(e.diagnostics)
                self.scope.bind(p.name, POISON, loc_of(p))
            except Poisoned:
                self.scope.bind(p.name, POISON, loc_of(p))

    def tensor_param(self, p: ast.Param, ptr: Any) -> S.Tensor:
        assert p.type is not None and p.type.dims is not None
        dims = [self.eval(d) for d in p.type.dims]
        shape_nodes = list(p.type.dims)
        shape = tuple(
            to_int_tuple(d, n, "a tensor's extents") for d, n in zip(dims, shape_nodes, strict=True)
        )
        shape_v = shape[0] if len(shape) == 1 else shape
        dims_v: Any = dims[0] if len(dims) == 1 else tuple(dims)
        if p.stride is None:
            stride_v: Any = compact_col_major(shape_v)
            stride_vals: Any = self.col_major_values(dims_v, p)
        else:
            stride_vals = self.eval(p.stride)
            stride_v = to_int_tuple(stride_vals, p.stride, "a tensor's strides")
        if not congruent(shape_v, stride_v):
            raise error(
                f"tensor '{p.name}' has shape {format_tuple(shape_v)} but stride "
                f"{format_tuple(stride_v)}; they must be congruent (same nesting)",
                p.stride or p,
            )
        with algebra_errors(p):
            layout = Layout(shape_v, stride_v)
        checked_layout(layout, p)
        # The operands carrying the dynamic leaves, in the type's reading order.
        leaves: list[Any] = []
        leaves += self.dynamic_values(dims_v, shape_v, p)
        leaves += self.dynamic_values(stride_vals, stride_v, p.stride or p)
        element = ptr.type.element
        t = TensorType(element, AddressSpace.GLOBAL, spec_of(layout))
        div = [x.sym.divisibility() if x.sym is not None else 1 for x in leaves]
        align = self.pointer_alignment(p, element)
        mk = self.emit(MakeTensorOp(ptr, [x.value for x in leaves], t, div, align), p)
        mk.result.name_hint = p.name
        return S.Tensor(mk.result, layout, element, AddressSpace.GLOBAL)

    def pointer_alignment(self, p: ast.Param, element: T.Type) -> int | None:
        """The `align N` of a tensor parameter, checked: a power of two, whole elements."""
        if p.align is None:
            return None
        n = p.align.value
        element_bytes = max(1, T.dtype_of(element).bits // 8)
        if n & (n - 1) or n == 0:
            raise error(f"align {n} is not a power of two", p.align)
        if n % element_bytes:
            raise error(
                f"align {n} is less than one {element} element ({element_bytes} bytes); a "
                f"pointer is always aligned to its element",
                p.align,
            )
        if n > 256:
            raise error(f"align {n} is more than any access needs (at most 256)", p.align)
        return n

    def col_major_values(self, dims: Any, node: ast.Node) -> Any:
        """CuTe's default (column-major) stride, as values: (1, M, M*N, ...)."""
        if not isinstance(dims, tuple):
            return 1
        if any(isinstance(d, tuple) for d in dims):
            raise error("a nested tensor shape needs an explicit stride", node)
        out: list[Any] = []
        current: Any = 1
        for d in dims:
            out.append(current)
            if isinstance(current, S.Runtime) or isinstance(d, S.Runtime):
                current = runtime_binop(self, "*", current, d, node)
            else:
                current = current * d
        return tuple(out)

    def dynamic_values(self, vals: Any, syms: Any, node: ast.Node) -> list[S.Runtime]:
        """The run-time values of the dynamic leaves of a shape or stride."""
        if isinstance(syms, tuple):
            out: list[S.Runtime] = []
            vals_t = vals if isinstance(vals, tuple) else (vals,) * len(syms)
            for v, s in zip(vals_t, syms, strict=True):
                out += self.dynamic_values(v, s, node)
            return out
        if is_static(syms):
            return []
        assert isinstance(syms, SymInt)
        return [as_runtime(self, vals, node, T.index)]

    # ------------------------------------------------------------------ statements
    def build_block(self, block: ast.Block, new_scope: bool = True) -> None:
        if new_scope:
            self.scope.push()
        try:
            for stmt in block.stmts:
                self.build_stmt_safely(stmt)
        finally:
            if new_scope:
                self.scope.pop()

    def build_stmt_safely(self, stmt: ast.Stmt) -> None:
        try:
            self.build_stmt(stmt)
        except CompileError as e:
            self.errors.extend(e.diagnostics)
            self.poison(stmt)
        except Poisoned:
            self.poison(stmt)
        except RecursionError:
            self.errors.append(Diagnostic("this statement is nested too deeply", loc_of(stmt)))
            self.poison(stmt)
        except Exception as e:  # a bug in cutec, not the user's mistake
            raise InternalCompilerError(
                e, stage="frontend", op=f"statement at {loc_of(stmt)}"
            ) from e

    def poison(self, stmt: ast.Stmt) -> None:
        if isinstance(stmt, ast.Assign):
            for n in _target_names(stmt.target):
                self.scope.assign(n, POISON)

    def build_stmt(self, stmt: ast.Stmt) -> None:
        method = getattr(self, "stmt_" + type(stmt).__name__, None)
        if method is None:
            raise error(f"{type(stmt).__name__} statements are not supported", stmt)
        method(stmt)

    def stmt_ExprStmt(self, stmt: ast.ExprStmt) -> None:
        self.eval(stmt.expr)

    def stmt_Assign(self, stmt: ast.Assign) -> None:
        value = self.eval(stmt.value)
        target = stmt.target
        if isinstance(target, ast.Name):
            self.assign_name(target, value, stmt.const, stmt)
        elif isinstance(target, ast.Tuple):
            if not isinstance(value, tuple) or len(value) != len(target.elts):
                n = len(value) if isinstance(value, tuple) else 1
                raise error(f"cannot unpack {n} value(s) into {len(target.elts)} names", stmt)
            for t, v in zip(target.elts, value, strict=True):
                if not isinstance(t, ast.Name):
                    raise error("only names can be unpacked into", t)
                self.assign_name(t, v, stmt.const, stmt)
        elif isinstance(target, ast.Index):
            self.store_element(target, value, stmt)
        else:
            raise error("cannot assign to this expression", target)

    def assign_name(self, target: ast.Name, value: Any, const: bool, stmt: ast.Node) -> None:
        # 'const' makes the name immutable; a run-time value (a dynamic size) is allowed,
        # as CuTe's `auto const K_TILE_MAX = size<3>(tAgA)` is.
        if const and isinstance(value, S.Tensor):
            raise error(
                f"'const {target.id}' needs a compile-time value or a run-time "
                "scalar, not a tensor",
                stmt,
            )
        existing = self.scope.lookup(target.id)
        if existing is not None and existing.const:
            raise error(
                f"'{target.id}' is a compile-time constant and cannot be reassigned",
                target,
                [Note("declared here", existing.loc)] if existing.loc else None,
            )
        if (
            existing is not None
            and isinstance(value, S.Runtime)
            and isinstance(existing.value, S.Runtime)
            and existing.value.type != value.type
        ):
            raise error(
                f"'{target.id}' holds a {existing.value.type} value; cannot assign a "
                f"{value.type} value",
                stmt,
            )
        if isinstance(value, S.Tensor | S.Runtime) and value.value.name_hint is None:
            value.value.name_hint = target.id
        if existing is None or const:
            self.scope.bind(target.id, value, loc_of(target), const)
        else:
            self.scope.assign(target.id, value)

    def stmt_AugAssign(self, stmt: ast.AugAssign) -> None:
        as_binop = ast.BinOp(stmt.op, stmt.target, stmt.value, stmt.span)
        self.stmt_Assign(ast.Assign(stmt.target, as_binop, False, stmt.span))

    def stmt_Return(self, stmt: ast.Return) -> None:
        if self.inline_depth == 0:
            raise error("'return' is only allowed in a func", stmt)
        self.returned = self.eval(stmt.value) if stmt.value is not None else None


def _target_names(t: ast.Expr) -> Iterator[str]:
    if isinstance(t, ast.Name):
        yield t.id
    elif isinstance(t, ast.Tuple):
        for e in t.elts:
            yield from _target_names(e)


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
