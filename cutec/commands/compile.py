"""``cutec compile FILE``: compile a kernel.

A ``.cute`` file goes through the frontend: ``--emit=ast`` prints its syntax
tree, ``--emit=cute`` the built and verified cute-dialect IR after the pass
pipeline. ``-D NAME=VALUE`` sets a
compile-time parameter, ``--kernel NAME`` builds one kernel. Textual IR
(``.mlir``) runs through the pipeline and prints the resulting IR. The
pipeline is canonicalize,cse unless ``--passes`` names another (``--passes ''``
runs none).
"""

from __future__ import annotations

import argparse
import time

from cutec.commands.common import (
    add_pass_manager_flags,
    instrumentation_from,
    read_source,
    write_output,
)
from cutec.diagnostics import CompileError
from cutec.ir.parser import parse_module
from cutec.ir.printer import print_op
from cutec.ir.verifier import verify
from cutec.passes import PASSES, PassManager, parse_pipeline

DEFAULT_PIPELINE = "canonicalize,cse"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "compile",
        help="compile a kernel",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", help="a kernel: .cute source, .mlir (textual IR), or - for stdin")
    p.add_argument("-o", "--output", metavar="FILE", help="output file (default: stdout)")
    p.add_argument(
        "--passes",
        default=None,
        metavar="PIPELINE",
        help=f"the pass pipeline (default: {DEFAULT_PIPELINE}; '' for none)",
    )
    p.add_argument(
        "--emit",
        choices=("ast", "cute", "ir"),
        default=None,
        help="what to write: the .cute AST, or the IR (cute: after the frontend and the "
        "pipeline; ir: the same, and the only choice for .mlir input)",
    )
    p.add_argument(
        "-D",
        dest="defines",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="set a compile-time parameter of a .cute kernel (repeatable)",
    )
    p.add_argument("--kernel", metavar="NAME", help="build only this kernel of a .cute file")
    add_pass_manager_flags(p)
    p.set_defaults(run=run)


def _defines(items: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        name, eq, value = item.partition("=")
        name = name.strip()
        if not eq or not name.isidentifier() or not value.strip():
            raise CompileError(f"-D {item}: expected NAME=VALUE")
        if name in out:
            raise CompileError(f"-D {name} is given twice")
        out[name] = value.strip()
    return out


def _pipeline(args: argparse.Namespace) -> str:
    return DEFAULT_PIPELINE if args.passes is None else args.passes


def run(args: argparse.Namespace) -> int:
    text, file = read_source(args.file)
    if args.file.endswith(".cute"):
        return _run_cute(args, text, file)
    if args.emit == "ast" or args.defines or args.kernel:
        raise CompileError(f"{file}: --emit=ast, -D and --kernel apply to .cute input only")
    passes = parse_pipeline(_pipeline(args), PASSES)
    module = parse_module(text, file)
    verify(module)
    PassManager(passes, instrumentation_from(args)).run(module)
    write_output(args.output, print_op(module))
    return 0


def _run_cute(args: argparse.Namespace, text: str, file: str) -> int:
    from cutec.frontend.parser import parse_source

    defines = _defines(args.defines)
    if args.emit == "ast":
        from cutec.frontend.emit_ast import format_ast

        write_output(args.output, format_ast(parse_source(text, file)))
        return 0
    from cutec.frontend import compile_source

    manager = PassManager(parse_pipeline(_pipeline(args), PASSES), instrumentation_from(args))
    start = time.perf_counter()
    module = compile_source(text, file, defines, args.kernel)
    manager.timings.append(("frontend", time.perf_counter() - start))  # in --timing's table
    manager.run(module)
    write_output(args.output, print_op(module))
    return 0
