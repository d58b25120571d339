"""``cutec cache info|clear``: the disk cache of compiled kernels (cutec.runtime.cache).

The cache lives in ``$CUTEC_CACHE_DIR``, else ``$XDG_CACHE_HOME/cutec``, else
``~/.cache/cutec``; ``CUTEC_CACHE=0`` turns it off. cutec uses it only while it is
the user's alone (0700, with a CACHEDIR.TAG); ``info`` says why it does not.
``clear`` removes the files named as entries, and only from a cutec cache.
"""

from __future__ import annotations

import argparse

from cutec.diagnostics import CompileError


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("cache", help="show or empty the kernel cache", description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument(
        "action", choices=("info", "clear"), help="info: where and how big; clear: empty"
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    # Imported here: the cutec.runtime package loads numpy, which the other verbs'
    # start (the CLI imports every verb to build its parser) should not pay for.
    from cutec.runtime import cache, errors

    if args.action == "clear":
        try:
            removed = cache.clear()
        except errors.NotACacheError as e:  # CUTEC_CACHE_DIR names another directory: exit code 1
            raise CompileError(f"cutec cache clear: {e}") from None
        print(f"removed {removed} entr{'y' if removed == 1 else 'ies'} from {cache.directory()}")
        return 0
    info = cache.info()
    state = "on" if info["enabled"] else "off (CUTEC_CACHE=0)"
    if info["enabled"] and info["problem"] is not None:
        state = f"not used: {info['problem']}"
    print(f"directory: {info['directory']}")
    print(f"cache:     {state}")
    print(f"entries:   {info['entries']} ({info['bytes']} bytes)")
    return 0
