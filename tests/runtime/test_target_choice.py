"""Which target the JIT compiles for on which GPU: sm_90a's wgmma and setmaxnreg exist
on compute capability 9.0 alone (sm_100 and sm_120 have no wgmma), so every other
GPU, older or newer, gets the sm_80 code; no GPU needed."""

from __future__ import annotations

from pathlib import Path

import pytest

import cutec.runtime as rt
from cutec.runtime.cuda import Device

EXAMPLES = Path(__file__).parents[2] / "examples"


@pytest.mark.parametrize(
    ("capability", "arch", "target"),
    [
        ((8, 0), "sm_80", "sm_80"),
        ((8, 9), "sm_89", "sm_80"),
        ((9, 0), "sm_90a", "sm_90a"),
        ((10, 0), "sm_100", "sm_80"),
        ((12, 0), "sm_120", "sm_80"),
    ],
)
def test_only_compute_capability_9_0_gets_sm_90a(
    capability: tuple[int, int], arch: str, target: str
) -> None:
    device = Device(0, None, None, capability, "a GPU")
    assert device.arch == arch
    kern = rt.jit(EXAMPLES / "transpose.cute")
    assert kern._target(device.arch) == target


def test_an_explicit_target_wins() -> None:
    kern = rt.jit(EXAMPLES / "wgmma_sm90.cute", kernel="hgemm_tn", arch="sm_90a")
    assert kern._target("sm_80") == "sm_90a"
