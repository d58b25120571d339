"""The build context: the state the IR builder's feature modules share while one kernel
(or one top-level const) is built.

Every function of the builder takes the context as its first argument, ``ctx``,
and reads or changes only what is listed here; the rest of what it needs is its
arguments. The modules, one per feature of the language:

* build_header.py   compile-time parameters, the signature, tensor parameters,
                    assumptions, the launch clauses
* build_stmts.py    blocks, assignments, return: `STATEMENTS`
* build_control.py  for, if, while
* build_exprs.py    names, literals, operators: `EXPRESSIONS`
* build_calls.py    members, indexing, calls, func inlining
* build_scalars.py  run-time scalars (constants, arith ops)
* build_tensors.py  views, slices, allocation
* builtins.py       the registry of builtins, whose build functions are in
                    build_values.py, tensor_builtins.py, build_tuples.py,
                    build_fragments.py, build_tiled.py, build_sync.py,
                    build_barriers.py and build_atomics.py

Expressions hold expressions and a func call holds statements, so the builder
recurses; it does so through two methods here, `eval` (an expression, by
`build_exprs.EXPRESSIONS`) and `build_block` (a block, by build_stmts.py),
which keeps the feature modules free of import cycles: none imports this
module but for its type.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from cutec.diagnostics import Diagnostic
from cutec.frontend import ast, build_stmts
from cutec.frontend import scope as S
from cutec.frontend.build_exprs import EXPRESSIONS
from cutec.frontend.static_eval import error, loc_of
from cutec.ir.builder import Builder as IRBuilder
from cutec.ir.builder import InsertPoint
from cutec.ir.core import Block, Operation, Value
from cutec.layout.symbolic import SymInt
from cutec.target import DEFAULT_TARGET, Target
from cutec.target import target as lookup_target


def default_target() -> Target:
    return lookup_target(DEFAULT_TARGET)


@dataclass(eq=False, slots=True)
class BuildContext:
    """What one kernel's build shares. A top-level const is evaluated in a context of
    its own, with no kernel (`body_block` None)."""

    # The top-level names the code being built sees: its file's consts, funcs and
    # imports (while a func is inlined, those of the func's own file).
    globals: dict[str, Any]
    target: Target  # its limits bound what a kernel may use
    scope: S.Scope = field(default_factory=S.Scope)  # the local names
    errors: list[Diagnostic] = field(default_factory=list)  # of the failed statements
    ir: IRBuilder = field(default_factory=IRBuilder)  # where ops go (regions move it)

    # -- the kernel
    body_block: Block | None = None  # its entry block
    last_entry_op: Operation | None = None  # the last op `emit_at_entry` placed
    num_threads: int | None = None  # its ``threads`` (the product), once known
    # Launch clauses the header left out, for a whole-tensor gemm to infer ("threads",
    # "grid"; build_tile_gemm.py); a kernel left without threads is an error.
    inferable: set[str] = field(default_factory=set)
    sym_values: dict[SymInt, S.Runtime] = field(default_factory=dict)  # extents, strides
    special: dict[str, S.Runtime] = field(default_factory=dict)  # registers read: "tid.x"
    smem_bytes: int = 0  # shared memory allocated so far
    pending_tokens: list[Value] = field(default_factory=list)  # cp.async since the fence
    # A stream-K gemm (`stream_k = true`) is two kernels built from one: the full waves'
    # and `<kernel>__tail` (build_tile_gemm.py). `stream_k_tail` says which is being
    # built; `wants_tail` that the first one's gemm asked for the second.
    stream_k_tail: bool = False
    wants_tail: bool = False  # (set in both builds: one such gemm per kernel)
    # What a launch promises beyond the kernel's own `align` clauses: base alignments in
    # bytes by tensor parameter (the JIT's specialisation, `Options.alignments`).
    launch_alignments: Mapping[str, int] = field(default_factory=dict)

    # -- tiled objects, each made once at the kernel entry (build_tiled.py)
    tiled_copies: dict[Any, S.TiledCopy] = field(default_factory=dict)  # per element type
    copy_typings: dict[Any, set[Any]] = field(default_factory=dict)  # types an untyped copy got
    typed_mmas: dict[Any, Any] = field(default_factory=dict)  # auto MMAs typed at first use
    operand_copies: dict[Any, Any] = field(default_factory=dict)  # auto copies of MMA operands
    tma_maps: list[str] = field(default_factory=list)  # the map parameters, in order

    # -- the funcs being inlined (build_calls.inline_call)
    inline_depth: int = 0
    returned: Any = None  # the value of the innermost func's `return`

    def eval(self, node: ast.Expr) -> Any:
        """The value of the expression `node` (build_exprs.py)."""
        evaluate = EXPRESSIONS.get(type(node))
        if evaluate is None:
            raise error(f"{type(node).__name__.lower()} expressions are not supported here", node)
        return evaluate(self, node)

    def build_block(self, block: ast.Block, new_scope: bool = True) -> None:
        """The statements of `block` (build_stmts.py)."""
        build_stmts.build_block(self, block, new_scope)

    def emit(self, op: Operation, node: ast.Node) -> Any:
        """Insert `op` at the builder's point, located at `node`."""
        op.location = loc_of(node)
        return self.ir.insert(op)

    def emit_at_entry(self, op: Operation, node: ast.Node) -> Any:
        """Insert at the start of the kernel so the value dominates every use."""
        assert self.body_block is not None, "no kernel to emit into"
        op.location = loc_of(node)
        if self.last_entry_op is None:
            self.body_block.prepend(op)
        else:
            self.body_block.insert_after(self.last_entry_op, op)
        self.last_entry_op = op
        return op

    @contextmanager
    def scratch(self) -> Iterator[None]:
        """Build into a block that is thrown away: ops built there to look at a value
        (the grid's sizes, a while condition's first test) do not reach the kernel, and
        their uses of the kernel's values are dropped when the look is over (a use left
        behind would keep a value alive that a pass then cannot erase)."""
        block = Block()
        try:
            with self.ir.at(InsertPoint(block)):
                yield
        finally:
            for op in reversed(list(block.ops)):
                for nested in op.walk(reverse=True):
                    nested.drop_all_references()
