"""The `.cute` parser: lark LALR(1) over `grammar.lark`, straight to the AST.

The transformer runs inside the LALR parser (lark's ``transformer=`` option),
so no parse tree is built and nothing recurses over the input: a 10 000-term
sum parses as fast as ten terms and is then rejected by the depth limit, not by
a Python RecursionError. Spans are computed from the tokens each rule keeps
(brackets and keywords are named terminals in the grammar for that reason).

Entry point: `parse_source(text, file) -> ast.Program`; every failure is a
`CompileError` (several diagnostics when recovery finds more errors).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedInput

from cutec.diagnostics import SOURCES, CompileError, Diagnostic, Location
from cutec.frontend import ast
from cutec.frontend.diagnostics import (
    MAX_ERRORS,
    MAX_SOURCE_BYTES,
    MAX_TOKENS,
    next_item_offset,
    syntax_diagnostic,
)

_GRAMMAR = Path(__file__).with_name("grammar.lark")

# Tokens after which a newline does not end a statement (the expression or
# declaration must go on), and tokens before which it does not either.
_NO_SEP_AFTER = frozenset(
    [
        "LBRACE",
        "COMMA",
        "EQ",
        "PLUSEQ",
        "MINUSEQ",
        "STAREQ",
        "SLASHEQ",
        "PERCENTEQ",
        "COLON",
        "DOT",
        "OR",
        "AND",
        "NOT",
        "EQEQ",
        "NE",
        "LT",
        "LE",
        "GT",
        "GE",
        "BAR",
        "CARET",
        "AMP",
        "SHL",
        "SHR",
        "PLUS",
        "MINUS",
        "STAR",
        "SLASH",
        "PERCENT",
        "TILDE",
    ]
)
_NO_SEP_BEFORE = frozenset(
    ["RBRACE", "ELSE", "DOT", "LBRACE", "GRID", "THREADS", "CLUSTER", "ASSUME"]
)
_OPENERS = {"LPAR": "RPAR", "LSQB": "RSQB", "LBRACE": "RBRACE"}
_CLOSERS = frozenset(_OPENERS.values())

_INT_LIMIT = 2**63


class Separators:
    """Post-lexer: newlines and ';' become one `_SEP` between statements.

    Inside ``( )`` and ``[ ]`` newlines are whitespace, as in Python. A ';'
    is only dropped where it would make an empty statement, so ``x = ;``
    stays an error. Also enforces the bracket nesting limit and reports an
    unterminated block comment.
    """

    always_accept = ("NEWLINE", "SEMI", "BLOCK_COMMENT")

    def __init__(self) -> None:
        self.file = "<input>"

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        stack: list[Token] = []
        prev: str | None = None
        pending: Token | None = None
        count = 0
        for tok in stream:
            kind = tok.type
            count += 1
            if count > MAX_TOKENS:
                raise CompileError(
                    f"source file too long (more than {MAX_TOKENS} tokens); split it with import",
                    _loc(self.file, tok),
                )
            if kind == "BLOCK_COMMENT":
                if not tok.value.endswith("*/") or len(tok.value) < 4:
                    raise CompileError(
                        "unterminated block comment: '/*' without '*/'", _loc(self.file, tok)
                    )
                continue
            if kind in ("NEWLINE", "SEMI"):
                in_brackets = bool(stack) and stack[-1].type != "LBRACE"
                if kind == "NEWLINE" and (in_brackets or prev is None or prev in _NO_SEP_AFTER):
                    continue
                if kind == "SEMI" and not in_brackets and prev in (None, "LBRACE"):
                    continue
                if pending is None or (kind == "SEMI" and pending.type == "NEWLINE"):
                    pending = Token.new_borrow_pos("_SEP", tok.value, tok)
                    if in_brackets:  # ';' inside brackets: the parser reports it
                        yield pending
                        pending = None
                continue
            if pending is not None:
                if kind not in _NO_SEP_BEFORE:
                    yield pending
                pending = None
            if kind in _OPENERS:
                stack.append(tok)
                if len(stack) > ast.MAX_DEPTH:
                    raise CompileError(
                        f"brackets nested too deeply (more than {ast.MAX_DEPTH} levels)",
                        _loc(self.file, tok),
                    )
            elif kind in _CLOSERS and stack:
                stack.pop()
            prev = kind
            yield tok


def _loc(file: str, tok: Token) -> Location:
    return Location(file, tok.line or 1, tok.column or 1)


class _Assume:
    """An ``assume`` header clause, before it is folded into the Kernel."""

    def __init__(self, facts: list[ast.Expr]) -> None:
        self.facts = facts


class _Builder(Transformer):
    """LALR callbacks: one per grammar rule or alias, returning AST nodes.

    Child lists contain lark Tokens, AST nodes, helper lists and None (for
    absent optional parts, ``maybe_placeholders``).
    """

    def __init__(self) -> None:
        super().__init__()
        self.file = "<input>"
        self._depth: dict[int, int] = {}
        self._paren: dict[int, ast.Span] = {}

    def reset(self, file: str) -> None:
        self.file = file
        self._depth.clear()
        self._paren.clear()

    # -- spans and depth -------------------------------------------------

    def _tspan(self, tok: Token) -> ast.Span:
        return ast.Span(self.file, tok.line, tok.column, tok.end_line, tok.end_column)

    def _span_of(self, x: Any) -> ast.Span | None:
        if isinstance(x, Token):
            return self._tspan(x)
        if isinstance(x, ast.Node):
            return self._paren.get(id(x), x.span)
        if isinstance(x, list):
            spans = [s for s in map(self._span_of, x) if s is not None]
            return spans[0].to(spans[-1]) if spans else None
        if isinstance(x, _Assume):
            return self._span_of(x.facts)
        return None

    def _span(self, children: list[Any]) -> ast.Span:
        spans = [s for s in map(self._span_of, children) if s is not None]
        return spans[0].to(spans[-1])

    def _node(self, node: ast.Node) -> Any:
        """Record `node`'s depth and reject trees deeper than MAX_DEPTH."""
        depth = 1 + max((self._depth.get(id(c), 1) for c in ast.children(node)), default=0)
        if depth > ast.MAX_DEPTH:
            raise CompileError(
                f"expression or statement nested too deeply (more than {ast.MAX_DEPTH} levels)",
                node.span.location,
            )
        self._depth[id(node)] = depth
        return node

    @staticmethod
    def _nodes(children: list[Any]) -> list[Any]:
        return [c for c in children if isinstance(c, ast.Node)]

    # -- literals and atoms ----------------------------------------------

    def name(self, c: list[Any]) -> ast.Name:
        return ast.Name(str(c[0]), self._tspan(c[0]))

    def int_lit(self, c: list[Any]) -> ast.IntLit:
        return self._int(c[0])

    def _int(self, tok: Token) -> ast.IntLit:
        text = tok.value.replace("_", "")
        too_big = len(text) > 24
        if not too_big:
            try:
                value = int(text, 16) if text[:2] in ("0x", "0X") else int(text)
            except ValueError:
                raise CompileError(
                    f"malformed integer literal '{tok.value}'", _loc(self.file, tok)
                ) from None
            too_big = value >= _INT_LIMIT
        if too_big:
            shown = tok.value if len(tok.value) <= 24 else tok.value[:20] + "..."
            raise CompileError(
                f"integer literal {shown} is too large (the limit is 2**63 - 1)",
                _loc(self.file, tok),
            )
        return ast.IntLit(value, self._tspan(tok))

    def float_lit(self, c: list[Any]) -> ast.FloatLit:
        tok = c[0]
        value = float(tok.value)
        if value == float("inf"):
            raise CompileError(f"float literal {tok.value[:24]} is too large", _loc(self.file, tok))
        return ast.FloatLit(value, tok.value, self._tspan(tok))

    def str_lit(self, c: list[Any]) -> ast.StrLit:
        tok = c[0]
        return ast.StrLit(_unescape(tok.value[1:-1]), self._tspan(tok))

    def bool_lit(self, c: list[Any]) -> ast.BoolLit:
        return ast.BoolLit(c[0].type == "TRUE", self._tspan(c[0]))

    def underscore(self, c: list[Any]) -> ast.Underscore:
        return ast.Underscore(self._tspan(c[0]))

    def skip(self, c: list[Any]) -> ast.Skip:
        return ast.Skip(self._tspan(c[0]))

    def auto(self, c: list[Any]) -> ast.Auto:
        return ast.Auto(self._tspan(c[0]))

    def paren(self, c: list[Any]) -> Any:
        # `(e)` is `e`, but a parent's span must include the parentheses.
        inner = c[1]
        self._paren[id(inner)] = self._span(c)
        return inner

    def tuple(self, c: list[Any]) -> ast.Tuple:
        elts = [x for x in c[1:-1] if isinstance(x, ast.Node)]
        for x in c[1:-1]:
            if isinstance(x, list):
                elts += x
        return self._node(ast.Tuple(tuple(elts), self._span(c)))

    def alloc(self, c: list[Any]) -> ast.Alloc:
        space, dtype, _, layout, _ = c
        dt = ast.Name(str(dtype), self._tspan(dtype))
        return self._node(ast.Alloc(space.value, dt, layout, self._span(c)))

    # -- operators ---------------------------------------------------------

    def layout(self, c: list[Any]) -> ast.Layout:
        return self._node(ast.Layout(c[0], c[2], self._span(c)))

    def ifexp(self, c: list[Any]) -> ast.IfExp:
        then, _, cond, _, orelse = c
        return self._node(ast.IfExp(cond, then, orelse, self._span(c)))

    def binop(self, c: list[Any]) -> ast.BinOp:
        lhs, op, rhs = c
        return self._node(ast.BinOp(op.value, lhs, rhs, self._span(c)))

    def unop(self, c: list[Any]) -> ast.UnaryOp:
        op, operand = c
        return self._node(ast.UnaryOp(op.value, operand, self._span(c)))

    def call(self, c: list[Any]) -> ast.Call:
        func, _, arglist, _ = c
        args: list[ast.Expr] = []
        kwargs: list[ast.Keyword] = []
        for a in arglist or []:
            if isinstance(a, ast.Keyword):
                if any(k.name == a.name for k in kwargs):
                    raise CompileError(f"keyword argument '{a.name}' repeated", a.span.location)
                kwargs.append(a)
            elif kwargs:
                raise CompileError("positional argument after a keyword argument", a.span.location)
            else:
                args.append(a)
        return self._node(ast.Call(func, tuple(args), tuple(kwargs), self._span(c)))

    def args(self, c: list[Any]) -> list[Any]:
        return self._nodes(c)

    def exprs(self, c: list[Any]) -> list[Any]:
        return self._nodes(c)

    def keyword(self, c: list[Any]) -> ast.Keyword:
        name, _, value = c
        return self._node(ast.Keyword(str(name), value, self._span(c)))

    def index(self, c: list[Any]) -> ast.Index:
        value, _, indices, _ = c
        return self._node(ast.Index(value, tuple(indices), self._span(c)))

    def attribute(self, c: list[Any]) -> ast.Attribute:
        value, _, attr = c
        return self._node(ast.Attribute(value, str(attr), self._tspan(attr), self._span(c)))

    # -- statements --------------------------------------------------------

    def block(self, c: list[Any]) -> ast.Block:
        stmts = tuple(self._nodes(c))
        return self._node(ast.Block(stmts, self._span(c)))

    def expr_stmt(self, c: list[Any]) -> ast.ExprStmt:
        return self._node(ast.ExprStmt(c[0], self._span(c)))

    def assign_stmt(self, c: list[Any]) -> ast.Assign:
        target, _, value = c
        _check_target(target, allow_tuple=True)
        return self._node(ast.Assign(target, value, False, self._span(c)))

    def aug_assign_stmt(self, c: list[Any]) -> ast.AugAssign:
        target, op, value = c
        _check_target(target, allow_tuple=False)
        return self._node(ast.AugAssign(target, op.value[:-1], value, self._span(c)))

    def const_stmt(self, c: list[Any]) -> ast.Assign:
        _, name, _, value = c
        target = ast.Name(str(name), self._tspan(name))
        return self._node(ast.Assign(target, value, True, self._span(c)))

    def if_stmt(self, c: list[Any]) -> ast.If:
        _, cond, then, _, orelse = c
        if isinstance(orelse, ast.If):
            orelse = ast.Block((orelse,), orelse.span)
        return self._node(ast.If(cond, then, orelse, self._span([c[0], orelse or then])))

    def for_stmt(self, c: list[Any]) -> ast.For:
        var = ast.Name(str(c[1]), self._tspan(c[1]))
        rng = self._tspan(c[3])
        lpar = next(i for i, x in enumerate(c) if isinstance(x, Token) and x.type == "LPAR")
        rpar = next(i for i, x in enumerate(c) if isinstance(x, Token) and x.type == "RPAR")
        bounds = self._nodes(c[lpar + 1 : rpar])
        if len(bounds) == 1:
            bounds = [ast.IntLit(0, rng), bounds[0]]
        if len(bounds) == 2:
            bounds.append(ast.IntLit(1, rng))
        unroll, pipeline, body = c[rpar + 1], c[rpar + 2], c[rpar + 3]
        start, stop, step = bounds
        return self._node(ast.For(var, start, stop, step, unroll, pipeline, body, self._span(c)))

    def unroll(self, c: list[Any]) -> ast.Unroll:
        factor = next(iter(self._nodes(c)), None)
        return self._node(ast.Unroll(factor, self._span(c)))

    def pipeline(self, c: list[Any]) -> ast.Pipeline:
        name = ast.Name(str(c[2]), self._tspan(c[2]))
        return self._node(ast.Pipeline(name, c[4], self._span(c)))

    def while_stmt(self, c: list[Any]) -> ast.While:
        _, cond, body = c
        return self._node(ast.While(cond, body, self._span(c)))

    def return_stmt(self, c: list[Any]) -> ast.Return:
        return self._node(ast.Return(c[1], self._span(c)))

    # -- declarations -------------------------------------------------------

    def type_ref(self, c: list[Any]) -> ast.TypeRef:
        name = c[0]
        dims = tuple(c[2]) if c[2] is not None else None
        return self._node(ast.TypeRef(str(name), dims, self._span(c)))

    def dims(self, c: list[Any]) -> list[Any]:
        return self._nodes(c)

    def ct_param(self, c: list[Any]) -> ast.CtParam:
        name, _, kind, _, default = c
        return self._node(ast.CtParam(str(name), kind, default, self._span(c)))

    def ct_params(self, c: list[Any]) -> list[Any]:
        return self._nodes(c)

    def param(self, c: list[Any]) -> ast.Param:
        name, _, type_, _, stride, _, align = c
        align_lit = self._int(align) if align is not None else None
        return self._node(ast.Param(str(name), type_, stride, align_lit, self._span(c)))

    def params(self, c: list[Any]) -> list[Any]:
        return self._nodes(c)

    def launch_clause(self, c: list[Any]) -> ast.LaunchClause:
        kw, value = c
        return self._node(ast.LaunchClause(kw.value, value, self._span(c)))

    def assume_clause(self, c: list[Any]) -> _Assume:
        return _Assume(self._nodes(c))

    def kernel_def(self, c: list[Any]) -> ast.Kernel:
        kw, name, ct, _, params, _, *clauses, body = c
        launch = [x for x in clauses if isinstance(x, ast.LaunchClause)]
        seen: dict[str, ast.LaunchClause] = {}
        for clause in launch:
            if clause.kind in seen:
                raise CompileError(
                    f"'{clause.kind}' given twice in the kernel header", clause.span.location
                )
            seen[clause.kind] = clause
        assumes = [f for x in clauses if isinstance(x, _Assume) for f in x.facts]
        return self._node(
            ast.Kernel(
                str(name),
                self._tspan(name),
                tuple(ct or ()),
                tuple(params or ()),
                tuple(assumes),
                tuple(launch),
                body,
                self._span([kw, body]),
            )
        )

    def func_def(self, c: list[Any]) -> ast.Func:
        kw, name, ct, _, params, _, body = c
        span = self._span([kw, body])
        return self._node(
            ast.Func(str(name), self._tspan(name), tuple(ct or ()), tuple(params or ()), body, span)
        )

    def const_decl(self, c: list[Any]) -> ast.Const:
        _, name, _, value = c
        return self._node(ast.Const(str(name), self._tspan(name), value, self._span(c)))

    def import_decl(self, c: list[Any]) -> ast.Import:
        _, path, _, alias = c
        return self._node(
            ast.Import(
                _unescape(path.value[1:-1]),
                self._tspan(path),
                str(alias) if alias else None,
                self._span(c),
            )
        )

    def start(self, c: list[Any]) -> list[Any]:
        return self._nodes(c)


def _check_target(target: ast.Expr, *, allow_tuple: bool) -> None:
    """An assignment stores to a name, a tensor element, or unpacks names."""
    if isinstance(target, ast.Name | ast.Index):
        return
    if allow_tuple and isinstance(target, ast.Tuple) and target.elts:
        for elt in target.elts:
            if not isinstance(elt, ast.Name):
                raise CompileError("can only unpack into names", elt.span.location)
        return
    if isinstance(target, ast.Skip):
        raise CompileError(
            "cannot assign to 'X': it is CuTe's step marker (step = (1, X, 1)), not a name",
            target.span.location,
        )
    what = "a tuple of names, " if allow_tuple else ""
    raise CompileError(
        f"cannot assign to this expression (expected a name, {what}or a tensor element)",
        target.span.location,
    )


_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "0": "\0"}


def _unescape(s: str) -> str:
    if "\\" not in s:
        return s
    out, i = [], 0
    while i < len(s):
        ch = s[i]
        if ch == "\\" and i + 1 < len(s):
            out.append(_ESCAPES.get(s[i + 1], s[i + 1]))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


# ---------------------------------------------------------------------------
# The parser object and the entry point


class _Parser:
    """One lark parser, built once (its tables are cached on disk by lark)."""

    def __init__(self) -> None:
        self.builder = _Builder()
        self.postlex = Separators()
        self.lark = Lark(
            _GRAMMAR.read_text(encoding="utf-8"),
            parser="lalr",
            lexer="basic",
            postlex=self.postlex,
            transformer=self.builder,
            maybe_placeholders=True,
            cache=True,
        )
        self.lock = threading.Lock()

    def parse(self, text: str, file: str) -> list[ast.Item]:
        with self.lock:
            self.builder.reset(file)
            self.postlex.file = file
            try:
                return self.lark.parse(text)
            except UnexpectedInput as e:
                raise CompileError("", diagnostics=[syntax_diagnostic(e, text, file)]) from None
            except RecursionError:  # defensive; the depth limits should prevent it
                raise CompileError("input nested too deeply", Location(file, 1, 1)) from None


_PARSER: _Parser | None = None


def _parser() -> _Parser:
    global _PARSER
    if _PARSER is None:
        _PARSER = _Parser()
    return _PARSER


def parse_source(text: str, file: str = "<input>") -> ast.Program:
    """Parse a whole `.cute` file. Raises `CompileError` with every syntax
    error found (one per top-level item at most, up to `MAX_ERRORS`)."""
    SOURCES.add(file, text)
    size = len(text.encode("utf-8", errors="replace"))
    if size > MAX_SOURCE_BYTES:
        raise CompileError(
            f"source file too large ({size} bytes; the limit is {MAX_SOURCE_BYTES})",
            Location(file, 1, 1),
        )
    parser = _parser()
    try:
        items = parser.parse(text, file)
    except CompileError as first:
        raise _recover(parser, text, file, first) from None
    lines = text.splitlines() or [""]
    span = ast.Span(file, 1, 1, len(lines), len(lines[-1]) + 1)
    return ast.Program(file, tuple(items), span)


def parse_file(path: str | Path) -> ast.Program:
    """Read and parse a `.cute` file; an unreadable file is a located error."""
    name = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise CompileError(f"cannot read {name}: {e.strerror}", None) from None
    if len(data) > MAX_SOURCE_BYTES:
        raise CompileError(
            f"source file too large ({len(data)} bytes; the limit is {MAX_SOURCE_BYTES})",
            Location(name, 1, 1),
        )
    return parse_source(data.decode("utf-8", errors="replace"), name)


def _recover(parser: _Parser, text: str, file: str, first: CompileError) -> CompileError:
    """Find the errors after the first one: re-parse from each later top-level
    item (a line starting with ``kernel``, ``func``, ``import`` or ``const``),
    with the text before it blanked so that line and column stay right."""
    diags: list[Diagnostic] = list(first.diagnostics)
    err = first
    while len(diags) < MAX_ERRORS:
        loc = err.location
        if loc is None:
            break
        start = next_item_offset(text, loc.line)
        if start is None:
            break
        blanked = "".join(ch if ch == "\n" else " " for ch in text[:start]) + text[start:]
        try:
            parser.parse(blanked, file)
            break
        except CompileError as e:
            if e.location is None or e.location.line <= loc.line:
                break
            diags.extend(e.diagnostics)
            err = e
    return CompileError("", diagnostics=diags)
