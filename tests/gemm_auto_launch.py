"""What the JIT's specialisation knows of a launch of examples/gemm_auto.cute whose extents
and leading dimensions are multiples of 16 and whose bases are 16-byte aligned
(docs/runtime.md, *Specialisation*). The example's kernels assume nothing of their sizes;
a test that compiles them through the driver passes these facts to get the plan such a
launch runs (16-byte copies, the Hopper body), as the JIT does."""

from __future__ import annotations

from typing import Any

DIVISIBLE: dict[str, Any] = {
    "divisors": {n: 16 for n in ("M", "N", "K", "ldA", "ldB", "ldC")},
    "alignments": {n: 16 for n in ("A", "B", "C")},
}
