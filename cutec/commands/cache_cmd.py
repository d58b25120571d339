"""``cutec cache info|clear``: the disk cache of compiled kernels (cutec.runtime.cache).

The cache lives in ``$CUTEC_CACHE_DIR``, else ``$XDG_CACHE_HOME/cutec``, else
``~/.cache/cutec``; ``CUTEC_CACHE=0`` turns it off.
"""

from __future__ import annotations

import argparse


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
    from cutec.runtime import cache

    if args.action == "clear":
        removed = cache.clear()
        print(f"removed {removed} entr{'y' if removed == 1 else 'ies'} from {cache.directory()}")
        return 0
    info = cache.info()
    state = "on" if info["enabled"] else "off (CUTEC_CACHE=0)"
    print(f"directory: {info['directory']}")
    print(f"cache:     {state}")
    print(f"entries:   {info['entries']} ({info['bytes']} bytes)")
    return 0
