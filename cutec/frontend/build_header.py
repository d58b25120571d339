"""The kernel header in the IR builder: parameters, assumptions, the launch shape.

Compile-time parameters are bound from their defaults or from ``-D NAME=VALUE``
(`bind_ct_params`, also for a func's ``[...]`` parameters). A tensor parameter
``A: f32[M, K] : (1, ldA)`` becomes a pointer argument and index arguments for
its extents and strides (`signature`); inside the kernel those are SymInts
named after the parameter (``M``) with the divisibility the kernel's
``assume NAME % N == 0`` clauses declare (`collect_facts`, `bind_params`), kept
on the SymInt and checked at launch. ``threads`` becomes the kernel's
``reqntid`` and ``cluster`` its ``cluster_dim``; ``grid`` is kept as three
`symbolic.parse_expr` strings over the run-time parameters, for the launcher.

Plain functions of the build context `ctx`; builder.py calls them in order.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cutec.diagnostics import CompileError, Diagnostic, Note
from cutec.frontend import ast
from cutec.frontend import scope as S
from cutec.frontend.build_scalars import as_runtime, const_index, runtime_binop, static_int
from cutec.frontend.builtins import lookup as lookup_builtin
from cutec.frontend.parser import parse_source
from cutec.frontend.scope import POISON, Poisoned
from cutec.frontend.static_eval import (
    DTYPES,
    algebra_errors,
    checked_layout,
    describe,
    error,
    lcm,
    loc_of,
    require_int,
    to_int_tuple,
)
from cutec.ir import types as T
from cutec.ir.attributes import (
    ArrayAttr,
    Attribute,
    DenseArrayAttr,
    DictAttr,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    TypeAttr,
)
from cutec.ir.dialects import builtin
from cutec.ir.dialects.cute import MakeTensorOp, TensorType
from cutec.ir.dialects.cute_infer import spec_of
from cutec.ir.dialects.gpu import PointerType
from cutec.ir.signature import RESIDENT_CTAS
from cutec.layout import Layout, compact_col_major
from cutec.layout.inttuple import congruent, format_tuple
from cutec.layout.symbolic import SymInt, is_static, sym
from cutec.target import AddressSpace

if TYPE_CHECKING:
    from cutec.frontend.context import BuildContext


# -------------------------------------------------------------- compile-time parameters


def bind_ct_params(
    ctx: BuildContext, params: tuple[ast.CtParam, ...], defines: Mapping[str, Any], owner: ast.Node
) -> None:
    """Bind each compile-time parameter to its -D value or its default (a kernel's, or
    a func's with the call's ``[...]`` values as `defines`); a failed one is poisoned."""
    for p in params:
        try:
            if p.name in defines:
                value = define_value(ctx, p, defines[p.name])
            elif p.default is not None:
                value = ctx.eval(p.default)
            else:
                raise error(
                    f"compile-time parameter '{p.name}' has no default; "
                    f"set it with -D {p.name}=VALUE",
                    p,
                )
            check_ct_kind(p, value)
            ctx.scope.bind(p.name, value, loc_of(p), const=True)
        except CompileError as e:
            ctx.errors.extend(e.diagnostics)
            ctx.scope.bind(p.name, POISON, loc_of(p))
        except Poisoned:
            ctx.scope.bind(p.name, POISON, loc_of(p))


def params_attribute(ctx: BuildContext, params: tuple[ast.CtParam, ...]) -> DictAttr:
    """The compile-time parameters' values (defaults and -D alike): they name the
    specialisation, so the IR (and a cache key made from it) says which one it is."""
    entries: list[tuple[str, Attribute]] = []
    for p in params:
        binding = ctx.scope.lookup(p.name)
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
            attr = StringAttr(str(value) if not isinstance(value, tuple) else format_tuple(value))
        entries.append((p.name, attr))
    return DictAttr(tuple(entries))


def define_value(ctx: BuildContext, p: ast.CtParam, text: Any) -> Any:
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
        return ctx.eval(const.value)
    except CompileError as e:
        raise CompileError(f"-D {p.name}={text}: {e}", loc_of(p)) from None


def check_ct_kind(p: ast.CtParam, value: Any) -> None:
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


# ------------------------------------------------------------------ run-time parameters


def signature(
    ctx: BuildContext, k: ast.Kernel
) -> tuple[list[str], list[T.Type], dict[str, ast.Name]]:
    """Kernel argument names and types: a pointer per tensor, then its new extents."""
    names: list[str] = []
    types: list[T.Type] = []
    dyn: dict[str, ast.Name] = {}
    seen_params: dict[str, ast.Param] = {}
    for p in k.params:
        if p.name in seen_params:
            ctx.errors.append(
                Diagnostic(
                    f"parameter '{p.name}' is declared twice",
                    loc_of(p),
                    notes=[Note("first declared here", loc_of(seen_params[p.name]))],
                )
            )
            continue
        seen_params[p.name] = p
        if p.type is None:
            ctx.errors.append(Diagnostic(f"kernel parameter '{p.name}' needs a type", loc_of(p)))
            continue
        if p.type.dims is None:
            t = scalar_type(ctx, p.type)
            if t is not None:
                names.append(p.name)
                types.append(t)
            continue
        element = element_type(ctx, p.type)
        names.append(p.name)
        types.append(PointerType(element or T.f32, AddressSpace.GLOBAL))
        exprs = list(p.type.dims) + ([p.stride] if p.stride is not None else [])
        for e in exprs:
            for n in ast.walk(e):
                if (
                    isinstance(n, ast.Name)
                    and n.id not in dyn
                    and ctx.scope.lookup(n.id) is None
                    and n.id not in ctx.globals
                    and n.id not in DTYPES
                    and lookup_builtin(n.id) is None
                ):
                    if n.id in seen_params:
                        continue
                    dyn[n.id] = n
                    names.append(n.id)
                    types.append(T.index)
    return names, types, dyn


def scalar_type(ctx: BuildContext, ref: ast.TypeRef) -> T.Type | None:
    if ref.name == "int":
        return T.index
    if ref.name == "bool":
        return T.i1
    t = element_type(ctx, ref)
    return t


def element_type(ctx: BuildContext, ref: ast.TypeRef) -> T.Type | None:
    binding = ctx.scope.lookup(ref.name)
    if binding is not None and isinstance(binding.value, T.Type):
        return binding.value
    if ref.name in DTYPES:
        return DTYPES[ref.name]
    close = difflib.get_close_matches(ref.name, [*DTYPES, "int"], n=1)
    notes = [Note(f"did you mean '{close[0]}'?")] if close else []
    ctx.errors.append(Diagnostic(f"unknown element type '{ref.name}'", loc_of(ref), notes=notes))
    return None


def bind_params(
    ctx: BuildContext,
    k: ast.Kernel,
    op: builtin.KernelOp,
    arg_names: list[str],
    dyn: dict[str, ast.Name],
    facts: dict[str, int],
) -> None:
    args = dict(zip(arg_names, op.body.args, strict=True))
    for name in facts:
        if name not in dyn and not any(p.name == name for p in k.params):
            ctx.errors.append(
                Diagnostic(
                    f"assumption about '{name}', which is not a run-time extent, stride or "
                    "int parameter of the kernel",
                    loc_of(k),
                )
            )
    for name, node in dyn.items():
        s = sym(name, divisibility=facts.get(name, 1))
        ctx.sym_values[s] = S.Runtime(args[name], s)
        ctx.scope.bind(name, ctx.sym_values[s], loc_of(node))
    bound: set[str] = set()
    for p in k.params:
        if p.name not in args or p.type is None or p.name in bound:
            continue  # (a second declaration of a name is signature()'s error)
        bound.add(p.name)
        arg = args[p.name]
        if p.type.dims is None:
            s = (
                sym(p.name, divisibility=facts.get(p.name, 1), min_value=0)
                if arg.type == T.index
                else None
            )
            if s is not None:
                ctx.sym_values[s] = S.Runtime(arg, s)
            ctx.scope.bind(p.name, S.Runtime(arg, s), loc_of(p))
            continue
        try:
            ctx.scope.bind(p.name, tensor_param(ctx, p, arg), loc_of(p))
        except CompileError as e:
            ctx.errors.extend(e.diagnostics)
            ctx.scope.bind(p.name, POISON, loc_of(p))
        except Poisoned:
            ctx.scope.bind(p.name, POISON, loc_of(p))


def tensor_param(ctx: BuildContext, p: ast.Param, ptr: Any) -> S.Tensor:
    assert p.type is not None and p.type.dims is not None
    dims = [ctx.eval(d) for d in p.type.dims]
    shape_nodes = list(p.type.dims)
    shape = tuple(
        to_int_tuple(d, n, "a tensor's extents") for d, n in zip(dims, shape_nodes, strict=True)
    )
    shape_v = shape[0] if len(shape) == 1 else shape
    dims_v: Any = dims[0] if len(dims) == 1 else tuple(dims)
    if p.stride is None:
        stride_v: Any = compact_col_major(shape_v)
        stride_vals: Any = col_major_values(ctx, dims_v, p)
    else:
        stride_vals = ctx.eval(p.stride)
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
    leaves += dynamic_values(ctx, dims_v, shape_v, p)
    leaves += dynamic_values(ctx, stride_vals, stride_v, p.stride or p)
    element = ptr.type.element
    t = TensorType(element, AddressSpace.GLOBAL, spec_of(layout))
    div = [x.sym.divisibility() if x.sym is not None else 1 for x in leaves]
    align = pointer_alignment(p, element)
    promised = ctx.launch_alignments.get(p.name, 1)
    if promised > (align or max(1, T.dtype_of(element).bits // 8)):
        align = promised  # a launch's promise, recorded as an `align` clause is
    mk = ctx.emit(MakeTensorOp(ptr, [x.value for x in leaves], t, div, align), p)
    mk.result.name_hint = p.name
    return S.Tensor(mk.result, layout, element, AddressSpace.GLOBAL)


def pointer_alignment(p: ast.Param, element: T.Type) -> int | None:
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


def col_major_values(ctx: BuildContext, dims: Any, node: ast.Node) -> Any:
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
            current = runtime_binop(ctx, "*", current, d, node)
        else:
            current = current * d
    return tuple(out)


def dynamic_values(ctx: BuildContext, vals: Any, syms: Any, node: ast.Node) -> list[S.Runtime]:
    """The run-time values of the dynamic leaves of a shape or stride."""
    if isinstance(syms, tuple):
        out: list[S.Runtime] = []
        vals_t = vals if isinstance(vals, tuple) else (vals,) * len(syms)
        for v, s in zip(vals_t, syms, strict=True):
            out += dynamic_values(ctx, v, s, node)
        return out
    if is_static(syms):
        return []
    assert isinstance(syms, SymInt)
    return [as_runtime(ctx, vals, node, T.index)]


# ------------------------------------------------------- assumptions and launch clauses


def launch_facts(
    facts: dict[str, int], divisors: Mapping[str, int], dyn: Mapping[str, ast.Name]
) -> dict[str, int]:
    """`facts` (the kernel's ``assume``s) with what a launch promises of its run-time
    extents and strides (`divisors`, the JIT's specialisation: `Options.divisors`), as if
    assumed: a name's divisor becomes the lcm of the two. Names that are no extent or
    stride of the kernel's tensors (`dyn`) are ignored: one set of facts serves every
    kernel of a file."""
    out = dict(facts)
    for name, d in divisors.items():
        if name in dyn:
            out[name] = lcm(out.get(name, 1), d)
    return out


def collect_facts(ctx: BuildContext, k: ast.Kernel) -> dict[str, int]:
    """Divisibility of run-time names from ``assume NAME % N == 0``."""
    facts: dict[str, int] = {}
    for a in k.assumes:
        ok = (
            isinstance(a, ast.BinOp)
            and a.op == "=="
            and isinstance(a.lhs, ast.BinOp)
            and a.lhs.op == "%"
            and isinstance(a.lhs.lhs, ast.Name)
        )
        try:
            if not ok:
                raise error("an assumption must read 'NAME % N == 0' (a divisibility fact)", a)
            assert isinstance(a, ast.BinOp) and isinstance(a.lhs, ast.BinOp)
            name = a.lhs.lhs.id  # type: ignore[union-attr]
            n = static_int(ctx, a.lhs.rhs, "the divisor of an assumption")
            zero = static_int(ctx, a.rhs, "the remainder of an assumption")
            if zero != 0 or n <= 0:
                raise error("an assumption must read 'NAME % N == 0' with N > 0", a)
            facts[name] = lcm(facts.get(name, 1), n)
        except CompileError as e:
            ctx.errors.extend(e.diagnostics)
        except Poisoned:
            pass
    return facts


def launch_attributes(ctx: BuildContext, k: ast.Kernel) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    seen: set[str] = set()
    for clause in k.launch:
        if clause.kind in seen:
            ctx.errors.append(Diagnostic(f"'{clause.kind}' is given twice", loc_of(clause)))
            continue
        seen.add(clause.kind)
        if clause.kind == "grid":
            continue  # needs the run-time parameters; see grid_attribute
        if clause.kind == "blocks_per_sm":
            _blocks_per_sm(ctx, clause, attrs)
            continue
        try:
            v = ctx.eval(clause.value)
            dims = v if isinstance(v, tuple) else (v,)
            if not 1 <= len(dims) <= 3:
                raise error(f"'{clause.kind}' takes one to three sizes", clause.value)
            xyz = [require_int(d, clause.value, f"the {clause.kind} size") for d in dims] + [1] * (
                3 - len(dims)
            )
            if any(d < 1 for d in xyz):
                raise error(
                    f"'{clause.kind}' sizes must be positive, got {tuple(xyz)}", clause.value
                )
            if clause.kind == "threads":
                n = xyz[0] * xyz[1] * xyz[2]
                limit = ctx.target.threads_per_cta
                if n > limit:
                    raise error(f"{n} threads per block; at most {limit}", clause.value)
                attrs["reqntid"] = DenseArrayAttr(T.i32, tuple(xyz))
                ctx.num_threads = n
            else:
                attrs["cluster_dim"] = DenseArrayAttr(T.i32, tuple(xyz))
        except CompileError as e:
            ctx.errors.extend(e.diagnostics)
        except Poisoned:
            pass
    # Without `threads` (or `grid`) a whole-tensor gemm in the body chooses them
    # (build_tile_gemm.py); `check_launch` reports a kernel left without threads.
    ctx.inferable = {c for c in ("threads", "grid") if c not in seen}
    return attrs


def check_launch(ctx: BuildContext, k: ast.Kernel, op: builtin.KernelOp) -> None:
    """A kernel needs its block size: from `threads`, or a whole-tensor gemm's plan."""
    if "reqntid" not in op.attributes:
        ctx.errors.append(
            Diagnostic(f"kernel '{k.name}' needs a 'threads' clause (the block size)", loc_of(k))
        )


def _blocks_per_sm(ctx: BuildContext, clause: ast.LaunchClause, attrs: dict[str, Any]) -> None:
    """``blocks_per_sm N``: CUDA's __launch_bounds__ minimum, PTX's ``.minnctapersm``:
    ptxas keeps registers to what N resident blocks of the kernel leave each."""
    try:
        n = require_int(ctx.eval(clause.value), clause.value, "'blocks_per_sm'")
        if n < 1:
            raise error(f"'blocks_per_sm' must be positive, got {n}", clause.value)
        attrs["minnctapersm"] = IntegerAttr(n, T.i32)
    except CompileError as e:
        ctx.errors.extend(e.diagnostics)
    except Poisoned:
        pass


def grid_attribute(ctx: BuildContext, k: ast.Kernel, op: builtin.KernelOp) -> None:
    """The grid (x, y, z) as expressions over the run-time parameters, for the launcher.

    ``grid = ["ceil_div(M,128)", "ceil_div(N,128)", "1"]``: each entry is
    `symbolic.parse_expr` text naming the kernel's run-time parameters.
    """
    for clause in k.launch:
        if clause.kind != "grid":
            continue
        try:
            with ctx.scratch():
                v = _eval_grid(ctx, clause.value)
            dims = v if isinstance(v, tuple) else (v,)
            if not 1 <= len(dims) <= 3:
                raise error("'grid' takes one to three sizes", clause.value)
            text = []
            for d in dims:
                if isinstance(d, S.Runtime):
                    if d.sym is None:
                        raise error(
                            "the grid must be computed from extents, strides and "
                            "compile-time values",
                            clause.value,
                        )
                    text.append(str(d.sym))
                else:
                    text.append(str(require_int(d, clause.value, "a grid size")))
            text += ["1"] * (3 - len(text))
            op.attributes["grid"] = ArrayAttr(tuple(StringAttr(t) for t in text))
        except CompileError as e:
            ctx.errors.extend(e.diagnostics)
        except Poisoned:
            pass


def _eval_grid(ctx: BuildContext, node: ast.Expr) -> Any:
    """The grid clause's value, with `resident_ctas` bound (a run-time index): the
    kernel's CTAs the GPU holds at once, which the launcher reads from the driver
    (`grid (min(tiles, resident_ctas))` launches a persistent kernel's one wave)."""
    ctx.scope.push()
    try:
        const = const_index(ctx, 0, node)  # stands in: only its symbol reaches the grid
        ctx.scope.bind(RESIDENT_CTAS, S.Runtime(const.value, sym(RESIDENT_CTAS)))
        return ctx.eval(node)
    finally:
        ctx.scope.pop()
