"""``cutec compile FILE``: compile a kernel through the driver's stages.

A ``.cute`` file goes through the frontend and every stage to PTX (the
default), or stops where ``--emit`` says: ``ast`` (its syntax tree), ``cute``
(the verified cute-dialect IR after the cute-level pipeline), ``thread`` (one
thread's program after the lowering pipeline), ``ptx``, ``cubin`` (ptxas; with
``-o``). ``-o k.ptx`` / ``-o k.cubin`` pick the stage by suffix. At the cubin stage
(and with ``--resource-usage``) ptxas's performance warnings (wgmma serialised,
setmaxnreg ignored) are printed as located warnings; they do not change the exit code.
``-D NAME=VALUE`` sets a compile-time parameter, ``--kernel NAME`` builds one
kernel. ``--divisible NAME=N`` and ``--aligned NAME=BYTES`` promise what the launches
will satisfy, as the JIT's specialisation does for each launch (docs/runtime.md): a
run-time extent or stride that is a multiple of N, a tensor whose base is aligned to
BYTES. The kernel is built as if it assumed them (a whole-tensor gemm plans with them:
``--divisible ldA=8`` lets a 16-bit A move 16 bytes at a time); names a kernel does not
have are ignored, so one set serves every kernel of a file. Textual IR (``.mlir``) runs
through the pipeline and prints the resulting IR (or goes on to ``thread``, ``ptx``,
``cubin``). The cute-level pipeline is the driver's DEFAULT_PIPELINE unless ``--passes``
names another (``--passes ''`` runs none); the lowering pipeline follows past ``cute``.

The input's language is ``--lang`` when given, else its suffix (``.cute``,
``.mlir``), else what it starts with (after blank lines and comments): textual
IR starts with ``module``, an op (``"arith.addi"``, ``func.func``, ``%x =``) or
``kernel @NAME``; .cute source with ``kernel NAME``, ``func NAME``, ``import``
or ``const``. ``-`` reads standard input, either language:

    cat k.cute | cutec compile - --emit=cute      # detected as .cute
    cutec compile - --lang cute -o k.ptx < k.cute

Diagnostics of standard input are located as ``<stdin>:line:col``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import replace

from cutec.commands.common import (
    LANGS,
    add_no_loc_flag,
    add_pass_manager_flags,
    instrumentation_from,
    read_source,
    source_lang,
    write_output,
)
from cutec.diagnostics import CompileError
from cutec.driver import DEFAULT_PIPELINE, Options, Result, Source, Stage, compile
from cutec.ir.printer import print_op
from cutec.target import COMPILE_TARGETS, DEFAULT_TARGET


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "compile",
        help="compile a kernel",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "file",
        help="a kernel: .cute source, .mlir (textual IR), or - for standard input "
        "(either language: --lang, or detected from what it starts with)",
    )
    p.add_argument(
        "--lang",
        choices=LANGS,
        default=None,
        help="the input's language: cute (.cute source) or mlir (textual IR); by default "
        "the file's suffix, else detected from its first line (kernel NAME / func NAME / "
        "import: cute; module / an op / kernel @NAME: mlir)",
    )
    p.add_argument("-o", "--output", metavar="FILE", help="output file (default: stdout)")
    p.add_argument(
        "--passes",
        default=None,
        metavar="PIPELINE",
        help=f"the pass pipeline (default: {DEFAULT_PIPELINE}; '' for none)",
    )
    p.add_argument(
        "--emit",
        choices=(*(s.name.lower() for s in Stage), "ir"),
        default=None,
        help="the last stage to run and print: ast (the .cute syntax tree), cute (the IR "
        "after the frontend and the pipeline; 'ir' says the same), thread (after the "
        "lowering), ptx (the default for .cute input), cubin",
    )
    p.add_argument(
        "-D",
        dest="defines",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="set a compile-time parameter of a .cute kernel (repeatable)",
    )
    p.add_argument(
        "--divisible",
        action="append",
        default=[],
        metavar="NAME=N",
        help="promise that the run-time extent or stride NAME is a multiple of N at every "
        "launch (repeatable; as `assume NAME %% N == 0`)",
    )
    p.add_argument(
        "--aligned",
        action="append",
        default=[],
        metavar="NAME=BYTES",
        help="promise that tensor NAME's base is aligned to BYTES (a power of two) at every "
        "launch (repeatable; as `align BYTES`)",
    )
    p.add_argument("--kernel", metavar="NAME", help="build only this kernel of a .cute file")
    p.add_argument(
        "--resource-usage",
        action="store_true",
        help="print each kernel's registers, shared memory, spills and stack (ptxas -v) to stderr",
    )
    p.add_argument(
        "--remarks",
        action="store_true",
        help="print what the passes chose and why (copy atoms, access widths) and, from "
        "--emit=thread on, the shared-memory wavefronts of each access (bank conflicts) "
        "to stderr",
    )
    p.add_argument(
        "--arch",
        choices=COMPILE_TARGETS,
        default=DEFAULT_TARGET,
        help=f"the GPU target (default: {DEFAULT_TARGET}); its shared-memory limit applies",
    )
    add_no_loc_flag(p, " (the IR of --emit=cute and thread; PTX keeps its .loc lines)")
    add_pass_manager_flags(p, verify_each=False)
    p.set_defaults(run=run)


def _named(items: list[str], flag: str, what: str, ok: Callable[[str], bool]) -> dict[str, str]:
    """``NAME=VALUE`` items of `flag`, each NAME once and each VALUE `ok`."""
    out: dict[str, str] = {}
    for item in items:
        name, eq, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not eq or not name.isidentifier() or not ok(value):
            raise CompileError(f"{flag} {item}: expected {what}")
        if name in out:
            raise CompileError(f"{flag} {name} is given twice")
        out[name] = value
    return out


def _defines(items: list[str]) -> dict[str, str]:
    return _named(items, "-D", "NAME=VALUE", bool)


def _facts(items: list[str], flag: str) -> dict[str, int]:
    """``NAME=N`` items of `flag` as a mapping; N a positive integer."""
    positive = _named(
        items, flag, "NAME=N, N a positive integer", lambda v: v.isdigit() and int(v) > 0
    )
    return {name: int(n) for name, n in positive.items()}


# Without --emit, the output file's suffix names the stage (-o k.ptx writes PTX).
_STAGE_OF_SUFFIX = {".ptx": Stage.PTX, ".cubin": Stage.CUBIN}


def _stage(args: argparse.Namespace, lang: str) -> Stage:
    """--emit, else the output file's suffix, else PTX for .cute source (the whole
    compile) and the pipeline's IR for textual IR."""
    if args.emit not in (None, "ir"):
        return Stage.named(args.emit)
    for suffix, stage in _STAGE_OF_SUFFIX.items():
        if args.emit is None and args.output and args.output.endswith(suffix):
            return stage
    if args.emit is None and lang == "cute":
        return Stage.PTX
    return Stage.CUTE


def run(args: argparse.Namespace) -> int:
    text, file = read_source(args.file)
    lang = source_lang(args.file, text, args.lang)
    source = Source(text, file, lang)
    emit = _stage(args, lang)
    options = Options(
        defines=_defines(args.defines),
        kernel=args.kernel,
        divisors=_facts(args.divisible, "--divisible"),
        alignments=_facts(args.aligned, "--aligned"),
        pipeline=args.passes,
        instrumentation=instrumentation_from(args),
        target=args.arch,
        remarks=args.remarks,
    )
    if emit is Stage.CUBIN and args.output in (None, "-"):
        raise CompileError("--emit=cubin writes a binary: name the file with -o")
    # --resource-usage asks ptxas, so it runs the cubin stage whatever is written. IR
    # is written as its stage leaves it (the PTX stage's passes, legalize-ptx, rewrite
    # the module further), so an IR stage is compiled on its own, with the
    # instrumentation and remarks, and the cubin in a second, quiet compile.
    ir_only = args.resource_usage and emit < Stage.PTX
    result = compile(source, Stage.CUBIN if args.resource_usage and not ir_only else emit, options)
    if args.remarks:
        for remark in result.remarks:
            print(remark.render(), file=sys.stderr)
    assembled = result
    if ir_only:
        quiet = replace(options, instrumentation=None, remarks=False)
        assembled = compile(source, Stage.CUBIN, quiet)
    for warning in assembled.warnings:
        print(warning.render(), file=sys.stderr)
    if args.resource_usage:
        for usage in assembled.resources.values():
            print(usage, file=sys.stderr)
    if emit is Stage.CUBIN:
        assert result.cubin is not None
        write_output(args.output, result.cubin)
    elif emit is Stage.PTX:
        assert result.ptx is not None
        write_output(args.output, result.ptx)
    else:
        write_output(args.output, result.text if emit is Stage.AST else _ir(result, args))
    return 0


def _ir(result: Result, args: argparse.Namespace) -> str:
    assert result.module is not None
    return print_op(result.module, print_locations=not args.no_loc)
