"""``cutec compile FILE``: compile a kernel.

Until the .cute frontend and the PTX emitter land, this compiles textual IR
(.mlir) through the default pipeline and prints the resulting IR.
"""

from __future__ import annotations

import argparse

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
    p = subparsers.add_parser("compile", help="compile a kernel", description=__doc__)
    p.add_argument("file", help="a kernel: .mlir (textual IR) for now, or - for stdin")
    p.add_argument("-o", "--output", metavar="FILE", help="output file (default: stdout)")
    p.add_argument(
        "--passes",
        default=DEFAULT_PIPELINE,
        metavar="PIPELINE",
        help=f"the pass pipeline (default: {DEFAULT_PIPELINE})",
    )
    p.add_argument(
        "--emit",
        choices=("ir",),
        default="ir",
        help="what to write: the IR after the pipeline (ptx comes with the emitter)",
    )
    add_pass_manager_flags(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.file.endswith(".cute"):
        raise CompileError(
            f"{args.file}: the .cute frontend is not available yet; "
            "compile textual IR (.mlir) instead"
        )
    passes = parse_pipeline(args.passes, PASSES)
    text, file = read_source(args.file)
    module = parse_module(text, file)
    verify(module)
    PassManager(passes, instrumentation_from(args)).run(module)
    write_output(args.output, print_op(module))
    return 0
