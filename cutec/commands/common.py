"""Pieces shared by the CLI commands: input reading and pass-manager flags."""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys

from cutec.diagnostics import CompileError
from cutec.driver import ALL_PASSES
from cutec.passes import Instrumentation


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


# What the first significant line of the input starts with, after blank lines and
# comments (`//` in both languages, `/* */` in .cute). Textual IR: `module`, an op in the generic
# form (`"arith.addi"(...)`), an SSA result (`%x = ...`), an alias (`#map = ...`,
# `!t = ...`), a dialect op (`func.func`, `builtin.module`), or `kernel`/`func`
# followed by a symbol (`kernel @vadd(`). .cute source: `import`, `const`, or
# `kernel`/`func` followed by a plain name (`kernel sgemm[`, `func load(`).
_IR_START = re.compile(r'module\b|"|%|#|!|[A-Za-z_]\w*\.[A-Za-z_]|(?:kernel|func)\s+@')
_CUTE_START = re.compile(r"(?:import|const)\b|(?:kernel|func)\s+[A-Za-z_]")
_COMMENT = re.compile(r"(?:\s|//[^\n]*|/\*[\s\S]*?\*/)*")

LANGS = ("cute", "mlir")


def detect_lang(text: str) -> str | None:
    """'mlir' or 'cute' by what the input starts with (see above), or None when the
    start is neither (or there is nothing but comments): the caller asks for --lang."""
    start = _COMMENT.match(text)
    assert start is not None  # the pattern matches the empty string
    rest = text[start.end() :]
    if _CUTE_START.match(rest):
        return "cute"
    if _IR_START.match(rest):
        return "mlir"
    return None


def source_lang(path: str, text: str, lang: str | None) -> str:
    """The language of input `path`: `lang` (--lang) when given, else the suffix
    (.cute, .mlir), else what the text starts with (`detect_lang`)."""
    if lang is not None:
        return lang
    for suffix, by_suffix in ((".cute", "cute"), (".mlir", "mlir")):
        if path.endswith(suffix):
            return by_suffix
    detected = detect_lang(text)
    if detected is None:
        what = "standard input" if path == "-" else f"'{path}'"
        raise CompileError(
            f"cannot tell whether {what} is .cute source or textual IR "
            "(it starts with neither `kernel NAME`, `func NAME`, `import`, `const` nor "
            "`module`, an op or `kernel @NAME`): give --lang cute or --lang mlir"
        )
    return detected


def add_no_loc_flag(p: argparse.ArgumentParser, what: str = "") -> None:
    """--no-loc: print IR without its `loc(...)` source locations (cutec compile, opt)."""
    p.add_argument(
        "--no-loc",
        action="store_true",
        help=f"print IR without its loc(...) source locations{what}",
    )


def write_output(path: str | None, text: str | bytes) -> None:
    """Write `text` (or bytes) to `path` atomically (to stdout when path is None or '-'):
    the whole file or, on any failure, nothing (no temporary file is left behind)."""
    if path is None or path == "-":
        if isinstance(text, bytes):
            sys.stdout.buffer.write(text)
        else:
            sys.stdout.write(text)
        return
    if os.path.isdir(path):
        raise CompileError(f"cannot write '{path}': it is a directory")
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
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)  # gone already when os.replace succeeded


def _dump_dir(path: str | None) -> str | None:
    """--dump-dir DIR, created if need be: a CompileError naming the flag when it cannot be
    (a file of that name, no permission), not an internal error at the first dump."""
    if path is None:
        return None
    if os.path.exists(path) and not os.path.isdir(path):
        raise CompileError(f"--dump-dir {path}: it exists and is not a directory")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise CompileError(f"--dump-dir {path}: cannot create it: {e.strerror}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise CompileError(f"--dump-dir {path}: the directory is not writable")
    return path


def _pass_name(value: str) -> str:
    if value not in ALL_PASSES:
        known = ", ".join(ALL_PASSES)
        raise argparse.ArgumentTypeError(f"unknown pass '{value}' (known: {known})")
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
        dump_dir=_dump_dir(args.dump_dir),
        timing=args.timing,
    )
