"""`cutec compile --emit=ast`: a readable, stable dump of the AST.

One node per line, children indented by two spaces under the field that holds
them; scalar fields sit on the node's line; every node ends with its span as
``@line:col-end_line:end_col`` (end exclusive). Leaves print on one line:

    Kernel sgemm_nt @60:1-70:2
      ct_params:
        CtParam BM @60:17-60:30
          kind: TypeRef int @60:21-60:24
          default: IntLit 128 @60:27-60:30

The format only changes when the AST does (see the change notes in ast.py).
`format_expr` renders an expression back as source text, for messages.
"""

from __future__ import annotations

import dataclasses

from cutec.frontend import ast

_LEAVES: dict[type, str] = {
    ast.Name: "id",
    ast.IntLit: "value",
    ast.FloatLit: "text",
    ast.BoolLit: "value",
    ast.StrLit: "value",
}


def _at(span: ast.Span) -> str:
    return f"@{span.line}:{span.col}-{span.end_line}:{span.end_col}"


def _scalar(value: object) -> str:
    if isinstance(value, str):
        return repr(value) if (not value.isidentifier() or value == "") else value
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _header(node: ast.Node) -> str:
    name = type(node).__name__
    if type(node) in _LEAVES:
        value = getattr(node, _LEAVES[type(node)])
        shown = repr(value) if isinstance(node, ast.StrLit) else _scalar(value)
        return f"{name} {shown} {_at(node.span)}"
    parts = [name]
    for f in dataclasses.fields(node):
        if f.name == "span" or f.name.endswith("_span"):
            continue
        value = getattr(node, f.name)
        if isinstance(value, ast.Node | tuple) or value is None:
            continue
        if f.name in ("op", "kind", "space"):
            parts.append(str(value))
        elif f.name in ("name", "path"):
            parts.append(_scalar(value))
        else:
            parts.append(f"{f.name}={_scalar(value)}")
    return " ".join(parts) + " " + _at(node.span)


def _emit(node: ast.Node, indent: str, out: list[str], label: str = "") -> None:
    out.append(f"{indent}{label}{_header(node)}")
    inner = indent + "  "
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        if isinstance(value, ast.Node):
            _emit(value, inner, out, f"{f.name}: ")
        elif isinstance(value, tuple) and value and isinstance(value[0], ast.Node):
            out.append(f"{inner}{f.name}:")
            for child in value:
                _emit(child, inner + "  ", out)


def format_ast(program: ast.Program) -> str:
    """The whole program, one node per line (ends with a newline)."""
    out = [f"Program {program.file}"]
    for item in program.items:
        _emit(item, "  ", out)
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------
# Expressions back to source

_PREC = {
    "or": 3, "and": 4, "==": 6, "!=": 6, "<": 6, "<=": 6, ">": 6, ">=": 6,
    "|": 7, "^": 8, "&": 9, "<<": 10, ">>": 10, "+": 11, "-": 11, "*": 12, "/": 12, "%": 12,
}  # fmt: skip


def format_expr(e: ast.Expr) -> str:
    """Source text for `e`, parenthesised only where precedence needs it."""
    return _fmt(e, 0)


def _fmt(e: ast.Expr, outer: int) -> str:
    text, prec = _fmt_prec(e)
    return f"({text})" if prec < outer else text


def _fmt_prec(e: ast.Expr) -> tuple[str, int]:
    match e:
        case ast.Name(id=i):
            return i, 99
        case ast.IntLit(value=v):
            return str(v), 99
        case ast.FloatLit(text=t):
            return t, 99
        case ast.BoolLit(value=v):
            return ("true" if v else "false"), 99
        case ast.StrLit(value=v):
            escaped = v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
            return f'"{escaped}"', 99
        case ast.Underscore():
            return "_", 99
        case ast.Skip():
            return "X", 99
        case ast.Auto():
            return "auto", 99
        case ast.Tuple(elts=elts):
            if len(elts) == 1:
                return f"({format_expr(elts[0])},)", 99
            return "(" + ", ".join(format_expr(x) for x in elts) + ")", 99
        case ast.Layout(shape=s, stride=d):
            return f"{_fmt(s, 2)} : {_fmt(d, 2)}", 1
        case ast.IfExp(cond=c, then=t, orelse=o):
            return f"{_fmt(t, 3)} if {_fmt(c, 3)} else {_fmt(o, 2)}", 2
        case ast.BinOp(op=op, lhs=lhs, rhs=rhs):
            p = _PREC[op]
            # left-associative; comparisons do not chain, so both sides bind tighter
            right = p + 1
            left = p + 1 if p == 6 else p
            return f"{_fmt(lhs, left)} {op} {_fmt(rhs, right)}", p
        case ast.UnaryOp(op=op, operand=x):
            if op == "not":
                return f"not {_fmt(x, 5)}", 5
            return f"{op}{_fmt(x, 13)}", 13
        case ast.Call(func=f, args=args, kwargs=kwargs):
            parts = [format_expr(a) for a in args]
            parts += [f"{k.name} = {format_expr(k.value)}" for k in kwargs]
            return f"{_fmt(f, 14)}({', '.join(parts)})", 14
        case ast.Index(value=v, indices=idx):
            return f"{_fmt(v, 14)}[{', '.join(format_expr(i) for i in idx)}]", 14
        case ast.Attribute(value=v, attr=a):
            return f"{_fmt(v, 14)}.{a}", 14
        case ast.Alloc(space=s, dtype=d, layout=layout):
            return f"{s} {d.id}[{format_expr(layout)}]", 99
    raise TypeError(f"not an expression node: {type(e).__name__}")
