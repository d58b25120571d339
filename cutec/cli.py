"""The `cutec` command line.

Each verb lives in `cutec.commands.<verb>` with ``add_parser(subparsers)``
(which sets ``run`` as the default handler) and ``run(args) -> int``.

Exit codes: 0 success; 1 a user error, printed as a located diagnostic;
2 an internal compiler error (a bug in cutec). No Python traceback reaches the
user unless CUTEC_TRACEBACK=1 is set.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from cutec import __version__
from cutec.diagnostics import CompileError, report_internal_error

# Verb modules, in help order. A new verb adds its module here.
COMMANDS = ("compile", "opt", "run_cmd", "cache_cmd", "layout_cmd", "atoms_cmd")


class _ArgumentParser(argparse.ArgumentParser):
    """argparse that reports usage errors as exit code 1 (a user error)."""

    def error(self, message: str):  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(1)


def build_parser() -> argparse.ArgumentParser:
    parser = _ArgumentParser(prog="cutec", description="A compiler for CuTe-style GPU kernels.")
    parser.add_argument("--version", action="version", version=f"cutec {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_ArgumentParser)
    for name in COMMANDS:
        module = importlib.import_module(f"cutec.commands.{name}")
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not getattr(args, "run", None):
            parser.print_help(sys.stderr)
            return 1
        return int(args.run(args))
    except CompileError as e:
        print(e.render(), file=sys.stderr)
        return 1
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:  # anything else is a bug in cutec
        report_internal_error(e, sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
