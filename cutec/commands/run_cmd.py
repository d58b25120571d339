"""``cutec run FILE``: launch a kernel once on random inputs and time it.

    cutec run examples/sgemm_2.cute --kernel sgemm_nt --shape A=4096,4096 \\
        --shape B=4096,4096 --set alpha=1 --set beta=0 --repeat 20

Every tensor gets random data (never zeros: normal floats, small non-zero
integers), laid out as its declaration says: static strides as written, a
run-time stride compact after the modes of smaller stride (``(1, ldA)`` gives
``ldA = M``). Extents come from ``--shape NAME=E0,E1,...`` (flattened modes) or
from names already bound (``K`` of A binds K of B); scalars and run-time names
from ``--set NAME=VALUE`` (floats default to 1). It prints a checksum of each
tensor after the launch (sum and sum of absolute values, in float64) and the
median time of ``--repeat`` launches measured with CUDA events (``--device
cpu`` runs once on the CPU backend, untimed, with its checks: a failed one is
reported with the op's location, the thread and the block, exit code 1;
``--no-bounds-check`` and ``--no-shared-checks`` turn them off for speed).
Every flag is checked before anything is allocated (extents at least 1 and as
declared, strides at least 0, names the kernel's, the inputs within half the
machine's memory): a mistake is one ``error:`` line naming the flag, exit code 1.
"""

from __future__ import annotations

import argparse
import re


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("run", help="launch a kernel on random inputs and time it",
                              description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("file", help="a .cute file")
    p.add_argument("--kernel", help="the kernel to run (when the file has several)")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME=VALUE",
                   help="set a compile-time parameter")  # fmt: skip
    p.add_argument("--shape", action="append", default=[], metavar="T=E0,E1,...",
                   help="the extents of tensor T (its flattened modes)")  # fmt: skip
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="a scalar argument or a run-time extent/stride")  # fmt: skip
    p.add_argument("--repeat", type=_count, default=10, help="timed launches (default 10)")
    p.add_argument("--device", default="0", help="a GPU ordinal, or cpu")
    p.add_argument("--arch", help="the target (default: the GPU's)")
    p.add_argument("--seed", type=_count, default=0, help="the inputs' random seed (default 0)")
    p.add_argument(
        "--no-bounds-check",
        action="store_true",
        help="--device cpu: do not check accesses against their buffers' bounds",
    )
    p.add_argument("--no-shared-checks", action="store_true",
                   help="--device cpu: do not check shared memory for races, uninitialised "
                        "loads and cp.async destinations read before their wait")  # fmt: skip
    p.set_defaults(run=run)


def _count(text: str) -> int:
    """An integer >= 0 (--repeat, --seed); argparse reports anything else as exit 1."""
    if not re.fullmatch(r"[0-9]+", text.strip()):
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got '{text}'")
    return int(text)


def run(args: argparse.Namespace) -> int:
    # The CLI imports every verb to build its parser; numpy and the runtime load only
    # when a kernel is run (cutec.commands.run_launch).
    from cutec.commands.run_launch import launch

    return launch(args)
