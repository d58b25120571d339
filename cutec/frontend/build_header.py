"""Kernel headers for the IR builder: assumptions, the launch shape, the grid.

``assume NAME % N == 0`` gives the divisibility of a run-time extent or stride
(kept on its SymInt, checked at launch); ``threads`` becomes the kernel's
``reqntid`` and ``cluster`` its ``cluster_dim``; ``grid`` is kept as three
`symbolic.parse_expr` strings over the run-time parameters, for the launcher.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cutec.diagnostics import CompileError, Diagnostic
from cutec.frontend import ast
from cutec.frontend import scope as S
from cutec.frontend.build_scalars import static_int
from cutec.frontend.scope import Poisoned
from cutec.frontend.static_eval import error, lcm, loc_of, require_int
from cutec.ir import types as T
from cutec.ir.attributes import ArrayAttr, DenseArrayAttr, StringAttr
from cutec.ir.builder import InsertPoint
from cutec.ir.core import Block
from cutec.ir.dialects import builtin

if TYPE_CHECKING:
    from cutec.frontend.builder import BuildContext

    _Base = BuildContext
else:
    _Base = object


class HeaderMixin(_Base):
    """The kernel header's clauses; mixed into the BuildContext."""

    def collect_facts(self, k: ast.Kernel) -> dict[str, int]:
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
                n = static_int(self, a.lhs.rhs, "the divisor of an assumption")
                zero = static_int(self, a.rhs, "the remainder of an assumption")
                if zero != 0 or n <= 0:
                    raise error("an assumption must read 'NAME % N == 0' with N > 0", a)
                facts[name] = lcm(facts.get(name, 1), n)
            except CompileError as e:
                self.errors.extend(e.diagnostics)
            except Poisoned:
                pass
        return facts

    def launch_attributes(self, k: ast.Kernel) -> dict[str, Any]:
        attrs: dict[str, Any] = {}
        seen: set[str] = set()
        for clause in k.launch:
            if clause.kind in seen:
                self.errors.append(Diagnostic(f"'{clause.kind}' is given twice", loc_of(clause)))
                continue
            seen.add(clause.kind)
            if clause.kind == "grid":
                continue  # needs the run-time parameters; see grid_attribute
            try:
                v = self.eval(clause.value)
                dims = v if isinstance(v, tuple) else (v,)
                if not 1 <= len(dims) <= 3:
                    raise error(f"'{clause.kind}' takes one to three sizes", clause.value)
                xyz = [require_int(d, clause.value, f"the {clause.kind} size") for d in dims] + [
                    1
                ] * (3 - len(dims))
                if any(d < 1 for d in xyz):
                    raise error(
                        f"'{clause.kind}' sizes must be positive, got {tuple(xyz)}", clause.value
                    )
                if clause.kind == "threads":
                    n = xyz[0] * xyz[1] * xyz[2]
                    limit = self.target.threads_per_cta
                    if n > limit:
                        raise error(f"{n} threads per block; at most {limit}", clause.value)
                    attrs["reqntid"] = DenseArrayAttr(T.i32, tuple(xyz))
                    self.num_threads = n
                else:
                    attrs["cluster_dim"] = DenseArrayAttr(T.i32, tuple(xyz))
            except CompileError as e:
                self.errors.extend(e.diagnostics)
            except Poisoned:
                pass
        if "threads" not in seen:
            self.errors.append(
                Diagnostic(
                    f"kernel '{k.name}' needs a 'threads' clause (the block size)", loc_of(k)
                )
            )
        return attrs

    def grid_attribute(self, k: ast.Kernel, op: builtin.KernelOp) -> None:
        """The grid (x, y, z) as expressions over the run-time parameters, for the launcher.

        ``grid = ["ceil_div(M,128)", "ceil_div(N,128)", "1"]``: each entry is
        `symbolic.parse_expr` text naming the kernel's run-time parameters.
        """
        for clause in k.launch:
            if clause.kind != "grid":
                continue
            try:
                with self.ir.at(self._scratch_point()):
                    v = self.eval(clause.value)
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
                self.errors.extend(e.diagnostics)
            except Poisoned:
                pass

    def _scratch_point(self) -> Any:
        return InsertPoint(Block())  # ops computing the grid are thrown away
