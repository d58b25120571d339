"""``cutec opt FILE --passes P1,P2``: run passes over textual IR (like mlir-opt)."""

from __future__ import annotations

import argparse
import sys

from cutec.commands.common import (
    add_no_loc_flag,
    add_pass_manager_flags,
    instrumentation_from,
    read_source,
    write_output,
)
from cutec.diagnostics import CompileError
from cutec.driver import ALL_PASSES, Options, Source, Stage, compile
from cutec.ir.printer import print_op


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "opt", help="run passes over textual IR and print the result", description=__doc__
    )
    p.add_argument(
        "file",
        nargs="?",
        help="an IR file (.mlir), or - for standard input (textual IR); not needed "
        "with --list-passes",
    )
    p.add_argument(
        "--passes",
        default="",
        metavar="PIPELINE",
        help="comma-separated passes with options, e.g. 'canonicalize,cse'",
    )
    p.add_argument("-o", "--output", metavar="FILE", help="write the IR here (default: stdout)")
    p.add_argument("--generic", action="store_true", help="print every op in the generic form")
    add_no_loc_flag(p)
    p.add_argument("--list-passes", action="store_true", help="list the passes and exit")
    p.add_argument(
        "--remarks",
        action="store_true",
        help="print the passes' remarks (what they chose and why; bank-conflicts' report) "
        "to stderr",
    )
    add_pass_manager_flags(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.list_passes:
        for name, cls in ALL_PASSES.items():
            print(f"{name:<20}{cls.summary}")
        return 0
    if args.file is None:
        raise CompileError("cutec opt needs an IR file (or - for standard input)")
    text, file = read_source(args.file)
    options = Options(pipeline=args.passes, instrumentation=instrumentation_from(args))
    result = compile(Source(text, file, "mlir"), Stage.CUTE, options)
    if args.remarks:
        for remark in result.remarks:
            print(remark.render(), file=sys.stderr)
    module = result.module
    assert module is not None
    write_output(
        args.output, print_op(module, print_locations=not args.no_loc, generic=args.generic)
    )
    return 0
