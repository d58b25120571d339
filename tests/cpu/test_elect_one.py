"""elect_one() (CuTe's elect_one_sync, PTX elect.sync): one lane of each warp gets true.
Both CPU backends elect lane 0, every time; the 32 lanes execute it together, so a call
in divergent code is a located error (both backends), not a silently different
leader. ptxas assembles it for sm_90a; sm_80 has no elect.sync (a located error)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from cutec.cpu import native, reference
from cutec.cpu.reference import InterpreterError
from cutec.diagnostics import CompileError
from cutec.driver import Options, Source, Stage, compile
from cutec.ir.dialects.builtin import KernelOp

BACKENDS = [reference, native]

ELECTED = """\
kernel elected(out: s32[M]) grid 1 threads 128 {
  if elect_one() {
    out[warp_idx()] = s32(lane_idx()) + 1
  }
}
"""
DIVERGENT = """\
kernel elected(out: s32[M]) grid 1 threads 64 {
  if thread.x < 48 {
    if elect_one() {
      out[warp_idx()] = 1
    }
  }
}
"""


def _kernel(text: str, arch: str = "sm_90a", stage: Stage = Stage.THREAD) -> Any:
    result = compile(Source(text, "e.cute"), stage, Options(target=arch))
    return result if stage is Stage.CUBIN else next(iter(result.module.walk_type(KernelOp)))


@pytest.mark.parametrize("backend", BACKENDS, ids=["interpreter", "native"])
def test_one_lane_of_each_warp_is_elected(backend: Any) -> None:
    out = np.zeros(4, np.int32)
    backend.run_kernel(_kernel(ELECTED), 1, {"out": out, "M": 4})
    np.testing.assert_array_equal(out, [1, 1, 1, 1])  # lane 0 of each of the 4 warps


def test_a_call_in_divergent_code_is_a_located_error_on_both_backends() -> None:
    kernel = _kernel(DIVERGENT)
    found = []
    for backend in BACKENDS:
        with pytest.raises(InterpreterError) as info:
            backend.run_kernel(kernel, 1, {"out": np.zeros(2, np.int32), "M": 2})
        found.append(str(info.value))
    assert found[0] == found[1]
    assert found[0].startswith("e.cute:3:") and "thread.elect_one" in found[0], found[0]


def test_elect_sync_assembles_for_sm90a_and_is_refused_for_sm80() -> None:
    result = _kernel(ELECTED, stage=Stage.CUBIN)
    assert "elect.sync _|%p" in (result.ptx or "") and result.cubin
    with pytest.raises(CompileError) as info:
        _kernel(ELECTED, arch="sm_80")
    (d,) = info.value.diagnostics
    assert d.location.line == 2 and "elect_one (elect.sync) needs" in d.message
