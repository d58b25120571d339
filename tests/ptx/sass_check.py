"""`assert_sass`: a test's check of the machine instructions ptxas chose for a kernel
(cutec.ptx.sass), e.g. that a wgmma kernel's SASS has HGMMA and no HMMA:

    assert_sass(result.cubin, contains={"HGMMA"}, absent={"HMMA"}, kernel="hgemm_nt")
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import pytest

from cutec.ptx.sass import find_disassembler, sass_opcodes

needs_disassembler = pytest.mark.skipif(
    find_disassembler() is None, reason="no nvdisasm (install the test extra)"
)


def assert_sass(
    cubin: bytes | None,
    contains: Iterable[str] = (),
    absent: Iterable[str] = (),
    kernel: str | None = None,
) -> Counter[str]:
    """Fail unless the SASS of `kernel` (every function when None) has each opcode of
    `contains` and none of `absent` (opcodes without modifiers: HGMMA, HMMA, LDSM);
    returns the opcodes' counts."""
    assert cubin is not None, "no cubin (ptxas did not run)"
    ops = sass_opcodes(cubin, kernel)
    missing = sorted(set(contains) - ops.keys())
    present = sorted(set(absent) & ops.keys())
    where = f"kernel '{kernel}'" if kernel else "the cubin"
    assert not missing and not present, (
        f"SASS of {where}: missing {missing}, present {present}; "
        f"its opcodes: {dict(ops.most_common())}"
    )
    return ops
