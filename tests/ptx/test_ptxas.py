"""The ptxas driver finds the pinned assembler and reports its verdict."""

from __future__ import annotations

import pytest

from cutec.ptx.ptxas import assemble, find_ptxas, ptxas_version

pytestmark = pytest.mark.skipif(find_ptxas() is None, reason="no ptxas (install the test extra)")

TINY = """
.version 8.0
.target sm_90a
.address_size 64
.visible .entry tiny(.param .u64 out)
{
  .reg .b64 %rd<2>;
  .reg .b32 %r<2>;
  ld.param.u64 %rd0, [out];
  mov.u32 %r0, %tid.x;
  st.global.u32 [%rd0], %r0;
  ret;
}
"""


def test_the_pinned_ptxas_is_cuda_13_0() -> None:
    # A newer ptxas would accept PTX the GPU machine's CUDA 13.0 driver cannot load.
    assert ptxas_version(find_ptxas()) == (13, 0)


def test_assemble_gives_a_cubin() -> None:
    result = assemble(TINY, "sm_90a")
    assert result.ok, result.stderr
    assert result.cubin is not None and result.cubin[:4] == b"\x7fELF"


def test_assemble_reports_errors() -> None:
    result = assemble(TINY.replace("st.global.u32", "st.global.u99"), "sm_90a")
    assert not result.ok and result.cubin is None
    assert "u99" in result.stderr or "syntax error" in result.stderr
