"""Dialect conversion, small form (MLIR's ``applyPartialConversion`` /
``applyFullConversion``): what the lowering from the cute dialect to the
thread dialect is written on.

* A `ConversionTarget` says which ops are legal afterwards: by op class or
  by dialect, legal, illegal, or legal when a callback says so.
* `ConversionPattern`s (rewrite patterns that may hold a `TypeConverter`)
  rewrite the ops that are not legal, through the usual `PatternRewriter`.
* A `TypeConverter` maps types (``!cute.tensor`` to pointers and registers);
  patterns convert their results' and their regions' block arguments' types
  with it, and a target can call an op legal when all its types are.

The driver visits every op nested in the root once, in program order, so an
op's operands were defined, and converted, before it; the ops a pattern
creates are legalised in turn. An op with no legal outcome is a
`ConversionError`: one located diagnostic per op, naming it.

Trade-offs, written down here:

* Replacements take effect at once (uses are rewired when a pattern calls
  `replace_op`), and a failed conversion is not rolled back: the IR is left
  half-converted, and the compilation stops with the error.
* TODO(materialisation): when a converted value's type changed and one of
  its users stays legal (so is never rewritten), that user now has an
  operand of the new type and verification will say so. MLIR inserts
  source/target materialisations (``unrealized_conversion_cast``) there; add
  them when a lowering first needs to mix converted and unconverted ops.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from cutec.diagnostics import CompileError, Diagnostic
from cutec.ir.core import Block, Operation, Region
from cutec.ir.rewrite import (
    ConvergenceError,
    PatternRewriter,
    PatternSet,
    RewriteListener,
    RewritePattern,
)

if TYPE_CHECKING:
    from cutec.ir.types import Type

LegalityCallback = Callable[[Operation], bool]


class ConversionError(CompileError):
    """Ops stayed illegal after conversion: one located diagnostic each."""


class TypeConverter:
    """Maps types to their converted form.

    Conversions are functions ``Type -> Type | None`` (None: not mine), tried
    from the last added to the first; a type no conversion claims cannot be
    converted (`convert_type` returns None). Add ``lambda t: t`` first to keep
    every other type as it is.
    """

    def __init__(self, conversions: Iterable[Callable[[Type], Type | None]] = ()) -> None:
        self._conversions: list[Callable[[Type], Type | None]] = list(conversions)
        self._cache: dict[Type, Type | None] = {}

    def add_conversion(self, conversion: Callable[[Type], Type | None]) -> None:
        self._conversions.append(conversion)
        self._cache.clear()

    def convert_type(self, type: Type) -> Type | None:
        if type in self._cache:
            return self._cache[type]
        converted = None
        for conversion in reversed(self._conversions):
            converted = conversion(type)
            if converted is not None:
                break
        self._cache[type] = converted
        return converted

    def is_legal(self, type: Type) -> bool:
        """A type is legal when it converts to itself."""
        return self.convert_type(type) == type

    def is_op_legal(self, op: Operation) -> bool:
        """All operand, result and block argument types of `op` are legal."""
        if not all(self.is_legal(v.type) for v in (*op.operands, *op.results)):
            return False
        return all(
            self.is_legal(a.type) for region in op.regions for b in region.blocks for a in b.args
        )

    def convert_block_signature(self, block: Block) -> bool:
        """Convert `block`'s argument types in place; False if one cannot be."""
        converted = [self.convert_type(a.type) for a in block.args]
        if any(t is None for t in converted):
            return False
        for arg, t in zip(block.args, converted, strict=True):
            assert t is not None
            arg.type = t
        return True

    def convert_region_signatures(self, region: Region) -> bool:
        """Convert the argument types of every block of `region`."""
        return all(self.convert_block_signature(b) for b in region.blocks)


class ConversionTarget:
    """Which ops are legal after a conversion.

    Rules by op class win over rules by dialect (the part of the op name
    before the dot); a class rule covers subclasses. A dynamic rule calls
    back with the op. An op no rule covers is *unknown*: left alone by a
    partial conversion, illegal in a full one.
    """

    def __init__(self) -> None:
        self._ops: dict[type[Operation], bool | LegalityCallback] = {}
        self._dialects: dict[str, bool | LegalityCallback] = {}

    def add_legal_op(self, *op_types: type[Operation]) -> None:
        for t in op_types:
            self._ops[t] = True

    def add_illegal_op(self, *op_types: type[Operation]) -> None:
        for t in op_types:
            self._ops[t] = False

    def add_dynamically_legal_op(self, op_type: type[Operation], legal: LegalityCallback) -> None:
        self._ops[op_type] = legal

    def add_legal_dialect(self, *names: str) -> None:
        for n in names:
            self._dialects[n] = True

    def add_illegal_dialect(self, *names: str) -> None:
        for n in names:
            self._dialects[n] = False

    def add_dynamically_legal_dialect(self, name: str, legal: LegalityCallback) -> None:
        self._dialects[name] = legal

    def is_legal(self, op: Operation) -> bool | None:
        """True / False, or None when no rule covers the op."""
        rule: bool | LegalityCallback | None = None
        for cls in type(op).__mro__:
            if cls in self._ops:
                rule = self._ops[cls]
                break
        else:
            rule = self._dialects.get(op.name.split(".", 1)[0])
        if rule is None or isinstance(rule, bool):
            return rule
        return bool(rule(op))


class ConversionPattern(RewritePattern):
    """A rewrite pattern for conversion, with the `TypeConverter` it uses.

    Its `match_and_rewrite` sees the op with its operands already converted
    (their producers were visited first) and replaces it with legal ops.
    """

    def __init__(self, type_converter: TypeConverter | None = None) -> None:
        self.type_converter = type_converter

    def convert_result_types(self, op: Operation) -> list[Type] | None:
        """The converted types of `op`'s results (None if one cannot be)."""
        assert self.type_converter is not None, f"{type(self).__name__} has no type converter"
        converted = [self.type_converter.convert_type(t) for t in op.result_types]
        return None if any(t is None for t in converted) else converted  # type: ignore[misc]


class _Tracker(RewriteListener):
    """Collects the ops a pattern inserted and the ops it erased."""

    def __init__(self) -> None:
        self.inserted: list[Operation] = []
        self.erased: dict[int, Operation] = {}  # by id; holding the op keeps its id unique

    def op_inserted(self, op: Operation) -> None:
        self.inserted.extend(op.walk())

    def op_erased(self, op: Operation) -> None:
        self.erased[id(op)] = op


def _convert(
    root: Operation,
    target: ConversionTarget,
    patterns: PatternSet | Iterable[RewritePattern],
    full: bool,
    max_rewrites: int | None,
) -> bool:
    if not isinstance(patterns, PatternSet):
        patterns = PatternSet(patterns)
    tracker = _Tracker()
    rewriter = PatternRewriter(tracker)
    # Program order: an op's operands were converted before it is.
    pending = [op for op in root.walk() if op is not root]
    pending.reverse()  # popped from the end
    limit = max_rewrites if max_rewrites is not None else 16 * len(pending) + 1000
    failed: list[Operation] = []
    changed = False
    rewrites = 0
    while pending:
        op = pending.pop()
        if id(op) in tracker.erased or op.parent is None:
            continue
        legal = target.is_legal(op)
        if legal or (legal is None and not full):
            continue
        tracker.inserted = []
        if not any(p.match_and_rewrite(op, rewriter) for p in patterns.for_op(op)):
            failed.append(op)
            continue
        changed = True
        rewrites += 1
        if rewrites > limit:
            raise ConvergenceError(f"conversion did not finish in {limit} rewrites", op)
        # Legalise what the pattern made, and the op itself if it was changed in place.
        again = [*tracker.inserted, op] if op.parent is not None else tracker.inserted
        pending.extend(reversed(again))
    failed = [op for op in failed if id(op) not in tracker.erased and op.parent is not None]
    if failed:
        raise ConversionError(
            "",
            diagnostics=[
                Diagnostic(
                    f"failed to legalize operation '{op.name}'"
                    + ("" if target.is_legal(op) is False else " (no legality rule covers it)"),
                    op.location or op.parsed_at,
                )
                for op in failed
            ],
        )
    return changed


def apply_partial_conversion(
    root: Operation,
    target: ConversionTarget,
    patterns: PatternSet | Iterable[RewritePattern],
    *,
    max_rewrites: int | None = None,
) -> bool:
    """Convert the illegal ops nested in `root`; ops of unknown legality stay
    as they are. Raises `ConversionError` for each illegal op no pattern
    converted; returns whether anything changed."""
    return _convert(root, target, patterns, False, max_rewrites)


def apply_full_conversion(
    root: Operation,
    target: ConversionTarget,
    patterns: PatternSet | Iterable[RewritePattern],
    *,
    max_rewrites: int | None = None,
) -> bool:
    """Convert every op nested in `root` that is not legal, unknown ones
    included: afterwards all are legal, or `ConversionError` names each op
    that is not."""
    return _convert(root, target, patterns, True, max_rewrites)
