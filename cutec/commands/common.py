"""Pieces shared by the CLI commands: input reading and pass-manager flags."""

from __future__ import annotations

import argparse
import sys

from cutec.diagnostics import CompileError
from cutec.passes import PASSES, Instrumentation


def read_source(path: str) -> tuple[str, str]:
    """(text, file name) of `path`, or of standard input for '-'."""
    if path == "-":
        return sys.stdin.read(), "<stdin>"
    try:
        with open(path, encoding="utf-8") as f:
            return f.read(), path
    except FileNotFoundError:
        raise CompileError(f"no such file: '{path}'") from None
    except IsADirectoryError:
        raise CompileError(f"'{path}' is a directory, not a file") from None
    except UnicodeDecodeError as e:
        raise CompileError(f"'{path}' is not UTF-8 text ({e.reason} at byte {e.start})") from None
    except OSError as e:
        raise CompileError(f"cannot read '{path}': {e.strerror}") from None


def write_output(path: str | None, text: str | bytes) -> None:
    """Write `text` (or bytes) to `path` atomically (to stdout when path is None or '-')."""
    if path is None or path == "-":
        if isinstance(text, bytes):
            sys.stdout.buffer.write(text)
        else:
            sys.stdout.write(text)
        return
    import os

    tmp = f"{path}.tmp{os.getpid()}"
    try:
        if isinstance(text, bytes):
            with open(tmp, "wb") as f:
                f.write(text)
        else:
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(text)
        os.replace(tmp, path)
    except OSError as e:
        raise CompileError(f"cannot write '{path}': {e.strerror}") from None


def _pass_name(value: str) -> str:
    if value not in PASSES:
        raise argparse.ArgumentTypeError(f"unknown pass '{value}' (known: {', '.join(PASSES)})")
    return value


def add_pass_manager_flags(p: argparse.ArgumentParser, verify_each: bool = True) -> None:
    """The pass-manager flags; `verify_each` is whether the IR is verified after every
    pass by default (cutec opt) or after the last one (cutec compile: --verify-each)."""
    g = p.add_argument_group("pass manager")
    g.add_argument("--no-verify", action="store_true", help="do not verify the IR at all")
    if not verify_each:
        g.add_argument(
            "--verify-each",
            action="store_true",
            help="verify the IR after every pass (by default, after the last one)",
        )
    g.add_argument(
        "--print-ir-after-all",
        action="store_true",
        help="print the IR after every pass (to stderr)",
    )
    g.add_argument(
        "--print-ir-before-all",
        action="store_true",
        help="print the IR before every pass (to stderr)",
    )
    g.add_argument(
        "--print-ir-after",
        action="append",
        default=[],
        type=_pass_name,
        metavar="PASS",
        help="print the IR after PASS (repeatable)",
    )
    g.add_argument(
        "--print-ir-before",
        action="append",
        default=[],
        type=_pass_name,
        metavar="PASS",
        help="print the IR before PASS (repeatable)",
    )
    g.add_argument(
        "--dump-dir", metavar="DIR", help="write the IR after each pass to DIR/NN_<pass>.mlir"
    )
    g.add_argument("--timing", action="store_true", help="print a per-pass wall-time table")


def instrumentation_from(args: argparse.Namespace) -> Instrumentation:
    return Instrumentation(
        verify_each=getattr(args, "verify_each", True),
        verify=not args.no_verify,
        print_before=set(args.print_ir_before),
        print_after=set(args.print_ir_after),
        print_before_all=args.print_ir_before_all,
        print_after_all=args.print_ir_after_all,
        dump_dir=args.dump_dir,
        timing=args.timing,
    )
