"""The `.cute` abstract syntax tree: the contract between the parser and the IR builder.

Every node is a frozen dataclass whose last field is ``span: Span`` (where the
construct is in the source). Sequences are tuples, so nodes are hashable and
can be compared structurally in tests. The parser does no name resolution and
no typing: whether ``UniversalCopy[u128]`` is an atom, ``thread.x`` a thread
index or ``size(t, 2)`` a layout query is the builder's business. What the
parser guarantees:

* the shapes below (e.g. an `Assign` target is a `Name`, a `Tuple` of `Name`
  or an `Index`; a `For` always has ``start``/``stop``/``step``);
* integer literals fit in a signed 64-bit integer;
* no node is nested more than `MAX_DEPTH` deep, so recursive walks are safe.

Node list (see each docstring for the source form):

* top level: `Program`, `Import`, `Kernel`, `Func`, `Const`
* declarations: `CtParam`, `Param`, `TypeRef`, `LaunchClause`
* statements: `Block`, `Assign`, `AugAssign`, `ExprStmt`, `If`, `For`,
  `Unroll`, `Pipeline`, `While`, `Return`
* expressions: `Name`, `IntLit`, `FloatLit`, `BoolLit`, `StrLit`, `Underscore`,
  `Skip` (CuTe's ``X``), `Auto`, `Tuple`, `Layout`, `BinOp`, `UnaryOp`, `IfExp`,
  `Call`, `Keyword`, `Attribute`, `Index`, `Alloc`
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass

from cutec.diagnostics import Location

# The deepest nesting the parser accepts (expressions, statements, brackets).
# CuTe kernels nest a few levels; the limit keeps every recursive walk of the
# tree (builder, printer, ``==`` on nodes) far from Python's recursion limit.
MAX_DEPTH = 64


@dataclass(frozen=True)
class Span:
    """A source range: 1-based ``line``/``col`` of the first character and
    ``end_line``/``end_col`` one past the last character (so a one-line token
    is ``end_col - col`` characters long)."""

    file: str
    line: int
    col: int
    end_line: int
    end_col: int

    @property
    def location(self) -> Location:
        """The start of the span, as the diagnostics module wants it."""
        return Location(self.file, self.line, self.col)

    def to(self, other: Span) -> Span:
        """The span from the start of `self` to the end of `other`."""
        return Span(self.file, self.line, self.col, other.end_line, other.end_col)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}-{self.end_line}:{self.end_col}"


class Node:
    """Base of every node (not itself a dataclass, so that each subclass's
    ``span`` field comes last, after the fields that say what the node is)."""

    span: Span


# ---------------------------------------------------------------------------
# Expressions


@dataclass(frozen=True)
class Name(Node):
    """An identifier: a binding, a parameter, a dtype (``f32``), an atom
    (``SM80_16x8x16_F32F16F16F32_TN``) or a builtin (``thread``, ``size``)."""

    id: str
    span: Span


@dataclass(frozen=True)
class IntLit(Node):
    """``128``, ``0x80``, ``1_024``. ``value`` is in [0, 2**63)."""

    value: int
    span: Span


@dataclass(frozen=True)
class FloatLit(Node):
    """``1.0``, ``2.5e-3``; ``text`` is the literal as written."""

    value: float
    text: str
    span: Span


@dataclass(frozen=True)
class BoolLit(Node):
    """``true`` or ``false``."""

    value: bool
    span: Span


@dataclass(frozen=True)
class StrLit(Node):
    """``"..."`` with escapes decoded (messages, import paths)."""

    value: str
    span: Span


@dataclass(frozen=True)
class Underscore(Node):
    """``_``: CuTe's Underscore, keep this mode when slicing or tiling."""

    span: Span


@dataclass(frozen=True)
class Skip(Node):
    """``X``: CuTe's step marker, drop this mode (``step=(1, X, 1)``)."""

    span: Span


@dataclass(frozen=True)
class Auto(Node):
    """``auto``: let the compiler choose (an atom, a vector width)."""

    span: Span


@dataclass(frozen=True)
class Tuple(Node):
    """``(a, b, c)``, ``(a,)`` or ``()``: an IntTuple, shape, stride, coordinate
    or tiler. ``(a)`` is just ``a`` (no Tuple node)."""

    elts: tuple[Expr, ...]
    span: Span


@dataclass(frozen=True)
class Layout(Node):
    """``shape : stride``, CuTe's printed layout form: ``(4, 8) : (1, 4)``.

    The colon binds loosest of all operators: ``(BM, BK) : (1, BM + 1)``."""

    shape: Expr
    stride: Expr
    span: Span


@dataclass(frozen=True)
class BinOp(Node):
    """``lhs op rhs``; ``op`` is one of
    ``or and == != < <= > >= | ^ & << >> + - * / %``.

    ``/`` and ``%`` on integers are C's (truncating) division and remainder."""

    op: str
    lhs: Expr
    rhs: Expr
    span: Span


@dataclass(frozen=True)
class UnaryOp(Node):
    """``op operand``; ``op`` is one of ``- + ~ not``."""

    op: str
    operand: Expr
    span: Span


@dataclass(frozen=True)
class IfExp(Node):
    """``then if cond else orelse`` (CuTe's ``cond ? then : orelse``)."""

    cond: Expr
    then: Expr
    orelse: Expr
    span: Span


@dataclass(frozen=True)
class Keyword(Node):
    """``name = value`` inside a call's parentheses. ``span`` covers both."""

    name: str
    value: Expr
    span: Span


@dataclass(frozen=True)
class Call(Node):
    """``func(args..., name=value...)``.

    ``func`` is any expression: a `Name` (``local_tile``), an `Attribute` for a
    method (``thr_mma.partition_A``), an `Index` for compile-time arguments
    (``mainloop[3]``). Positional arguments always precede keywords (the
    parser rejects ``f(a=1, b)``)."""

    func: Expr
    args: tuple[Expr, ...]
    kwargs: tuple[Keyword, ...]
    span: Span


@dataclass(frozen=True)
class Attribute(Node):
    """``value.attr``: ``thread.x``, ``copy_a.slice``. ``attr_span`` is the
    span of the name after the dot (point errors about the member there)."""

    value: Expr
    attr: str
    attr_span: Span
    span: Span


@dataclass(frozen=True)
class Index(Node):
    """``value[i, j, ...]``: tensor slicing (``tAgA[_, _, _, k]``), element
    access (``tP[i]``) or compile-time arguments (``UniversalCopy[u128]``)."""

    value: Expr
    indices: tuple[Expr, ...]
    span: Span


@dataclass(frozen=True)
class Alloc(Node):
    """``smem f32[layout]`` / ``rmem f32[layout]``: a tensor in shared memory
    or registers; ``space`` is ``"smem"`` or ``"rmem"``, ``dtype`` the element
    type as written (a dtype name or a dtype parameter)."""

    space: str
    dtype: Name
    layout: Expr
    span: Span


# Every expression node (a runtime union, usable in isinstance checks).
Expr = (
    Name
    | IntLit
    | FloatLit
    | BoolLit
    | StrLit
    | Underscore
    | Skip
    | Auto
    | Tuple
    | Layout
    | BinOp
    | UnaryOp
    | IfExp
    | Call
    | Attribute
    | Index
    | Alloc
)

# ---------------------------------------------------------------------------
# Statements


@dataclass(frozen=True)
class Block(Node):
    """``{ stmt; stmt ... }``: a scope. ``span`` includes the braces."""

    stmts: tuple[Stmt, ...]
    span: Span


@dataclass(frozen=True)
class Assign(Node):
    """``target = value`` or ``const target = value``.

    ``target`` is a `Name` (bind, or rebind an existing variable), a `Tuple` of
    `Name` (unpack a tuple, e.g. a function's results) or an `Index` (store an
    element: ``tP[i] = ...``). ``const`` demands a compile-time value (the
    builder reports it otherwise) and is only allowed with a `Name` target."""

    target: Expr
    value: Expr
    const: bool
    span: Span


@dataclass(frozen=True)
class AugAssign(Node):
    """``target op= value``; ``op`` is one of ``+ - * / %`` (without the ``=``);
    ``target`` is a `Name` or an `Index`."""

    target: Expr
    op: str
    value: Expr
    span: Span


@dataclass(frozen=True)
class ExprStmt(Node):
    """An expression evaluated for its effect: ``copy(a, b)``, ``sync()``."""

    expr: Expr
    span: Span


@dataclass(frozen=True)
class If(Node):
    """``if cond { ... } else { ... }``. ``else if`` is an `If` alone in the
    ``orelse`` block (whose span is the inner `If`'s)."""

    cond: Expr
    then: Block
    orelse: Block | None
    span: Span


@dataclass(frozen=True)
class Unroll(Node):
    """The ``unroll`` clause of a `For`: ``unroll`` (fully; the trip count must
    be static) has ``factor=None``; ``unroll(4)`` unrolls by 4; ``unroll(1)``
    keeps the loop rolled (CuTe's ``CUTE_NO_UNROLL``)."""

    factor: Expr | None
    span: Span


@dataclass(frozen=True)
class Pipeline(Node):
    """The ``pipeline(stages = N)`` clause of a `For`: a request to the `pipeline`
    pass to software-pipeline the loop's cp.async copies over `stages` shared
    buffers (``name`` is the parameter's name as written, checked by the builder)."""

    name: Name
    stages: Expr
    span: Span


@dataclass(frozen=True)
class For(Node):
    """``for var in range(start, stop, step) unroll pipeline(stages = 4) { ... }``.

    ``range(n)`` is ``range(0, n, 1)``; the parser fills in `IntLit` 0 / 1 whose
    span is the ``range`` keyword's. Without a clause ``unroll`` is None and the
    compiler decides; without ``pipeline`` the loop is not software-pipelined."""

    var: Name
    start: Expr
    stop: Expr
    step: Expr
    unroll: Unroll | None
    pipeline: Pipeline | None
    body: Block
    span: Span


@dataclass(frozen=True)
class While(Node):
    """``while cond { ... }``."""

    cond: Expr
    body: Block
    span: Span


@dataclass(frozen=True)
class Return(Node):
    """``return`` or ``return value`` (in a `Func`)."""

    value: Expr | None
    span: Span


Stmt = Assign | AugAssign | ExprStmt | If | For | While | Return

# ---------------------------------------------------------------------------
# Declarations


@dataclass(frozen=True)
class TypeRef(Node):
    """A type as written: ``f32``, ``int``, ``layout``, ``T`` (a dtype
    parameter), or a tensor type ``f32[M, K]`` whose ``dims`` are the shape's
    modes (a `Name` not bound yet introduces a dynamic extent; a `Tuple` is a
    nested mode). ``dims`` is None for a scalar or kind."""

    name: str
    dims: tuple[Expr, ...] | None
    span: Span


@dataclass(frozen=True)
class CtParam(Node):
    """A compile-time parameter, in ``[...]``: ``BM: int = 128``,
    ``T: dtype = f16``, ``sA: layout``, ``atom: copy_atom = auto``.
    ``kind`` may be omitted (inferred from ``default``); so may ``default``
    (then the launcher must bind it)."""

    name: str
    kind: TypeRef | None
    default: Expr | None
    span: Span


@dataclass(frozen=True)
class Param(Node):
    """A run-time parameter, in ``(...)``.

    * tensor: ``A: f32[M, K] : (1, ldA) align 16`` — element type and shape in
      ``type``, the stride after the second colon (None: CuTe's default,
      column-major), ``align`` the pointer alignment in bytes the launcher
      checks (None: the element size).
    * scalar: ``alpha: f32``, ``n: int``.
    * in a `Func`, ``type`` may be None (``func f(t, n)``): the helper is
      inlined, so its parameters take whatever the caller passes, like a C++
      template's.
    """

    name: str
    type: TypeRef | None
    stride: Expr | None
    align: IntLit | None
    span: Span


@dataclass(frozen=True)
class LaunchClause(Node):
    """One clause of a kernel header: ``kind`` is ``"grid"``, ``"threads"``
    or ``"cluster"``; ``value`` an int or a tuple of up to three."""

    kind: str
    value: Expr
    span: Span


@dataclass(frozen=True)
class Kernel(Node):
    """``kernel name[ct_params](params) assume ... grid ... threads ... { body }``.

    ``assumes`` are facts the compiler may use and the launcher checks:
    ``ldA % 4 == 0``, ``M % BM == 0`` (divisibility of dynamic extents and
    strides). Pointer alignment is each tensor `Param`'s ``align``."""

    name: str
    name_span: Span
    ct_params: tuple[CtParam, ...]
    params: tuple[Param, ...]
    assumes: tuple[Expr, ...]
    launch: tuple[LaunchClause, ...]
    body: Block
    span: Span


@dataclass(frozen=True)
class Func(Node):
    """``func name[ct_params](params) { body }``: a device helper, inlined at
    each call (so a mainloop can be shared between kernels)."""

    name: str
    name_span: Span
    ct_params: tuple[CtParam, ...]
    params: tuple[Param, ...]
    body: Block
    span: Span


@dataclass(frozen=True)
class Const(Node):
    """A top-level ``const name = value``: a compile-time constant visible to
    every kernel and function of the file (and of files importing it)."""

    name: str
    name_span: Span
    value: Expr
    span: Span


@dataclass(frozen=True)
class Import(Node):
    """``import "path.cute"`` (its names join this file's) or
    ``import "path.cute" as lib`` (used as ``lib.name``). ``path`` is relative
    to the importing file; `cutec.frontend.imports` resolves it.
    ``path_span`` is the span of the string literal."""

    path: str
    path_span: Span
    alias: str | None
    span: Span


Item = Import | Kernel | Func | Const


@dataclass(frozen=True)
class Program(Node):
    """A whole ``.cute`` file: its items in source order."""

    file: str
    items: tuple[Item, ...]
    span: Span

    @property
    def kernels(self) -> tuple[Kernel, ...]:
        return tuple(i for i in self.items if isinstance(i, Kernel))

    @property
    def funcs(self) -> tuple[Func, ...]:
        return tuple(i for i in self.items if isinstance(i, Func))

    @property
    def imports(self) -> tuple[Import, ...]:
        return tuple(i for i in self.items if isinstance(i, Import))

    @property
    def consts(self) -> tuple[Const, ...]:
        return tuple(i for i in self.items if isinstance(i, Const))


# ---------------------------------------------------------------------------
# Walking


def children(node: Node) -> Iterator[Node]:
    """The direct child nodes of `node`, in field (= source) order."""
    for f in dataclasses.fields(node):
        if f.name == "span" or f.name.endswith("_span"):
            continue
        value = getattr(node, f.name)
        if isinstance(value, Node):
            yield value
        elif isinstance(value, tuple):
            yield from (v for v in value if isinstance(v, Node))


def walk(node: Node) -> Iterator[Node]:
    """`node` and every node below it, pre-order (iterative: no recursion)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(list(children(n))))
