"""cutec/target.py: the target records, their lookup, and the address spaces."""

from __future__ import annotations

import pytest

from cutec.target import (
    COMPILE_TARGETS,
    DEFAULT_TARGET,
    KIB,
    MAX_PTX_VERSION,
    TARGETS,
    AddressSpace,
    Feature,
    UnknownTargetError,
    target,
)


def test_the_compile_targets() -> None:
    assert DEFAULT_TARGET == "sm_90a"
    assert set(COMPILE_TARGETS) == {"sm_80", "sm_90a"}
    sm80, sm90a = target("sm_80"), target("sm_90a")
    assert (sm80.sm, sm80.arch_specific, sm90a.sm, sm90a.arch_specific) == (80, False, 90, True)
    assert str(sm90a) == "sm_90a"


def test_per_cta_limits() -> None:
    # The per-CTA figures, not the per-SM capacity (228 KiB / 164 KiB).
    assert target("sm_90a").smem_per_cta == 227 * KIB
    assert target("sm_80").smem_per_cta == 163 * KIB
    for t in TARGETS.values():
        assert t.static_smem_per_cta == 48 * KIB
        assert (t.regs_per_thread, t.regs_per_cta, t.threads_per_cta) == (255, 65536, 1024)


@pytest.mark.parametrize("t", TARGETS.values(), ids=str)
def test_ptx_versions(t) -> None:
    assert t.min_ptx <= t.ptx_version <= MAX_PTX_VERSION == (9, 0)
    if t.has(Feature.WGMMA) or t.has(Feature.TMA):
        assert t.ptx_version >= (8, 0)
    assert t.ptx_version_for((6, 0)) == t.min_ptx
    with pytest.raises(ValueError, match=r"PTX ISA \(9, 1\) is above"):
        t.ptx_version_for((9, 1))


def test_features() -> None:
    sm80, sm90, sm90a = target("sm_80"), target("sm_90"), target("sm_90a")
    ampere = {Feature.MMA_SYNC, Feature.LDMATRIX, Feature.CP_ASYNC}
    assert sm80.features == ampere
    assert sm90.features == ampere | {
        Feature.STMATRIX,
        Feature.TMA,
        Feature.MBARRIER,
        Feature.CLUSTERS,
        Feature.ELECT,
    }
    assert sm90a.features == sm90.features | {Feature.WGMMA, Feature.SETMAXNREG}


def test_which_code_runs_where() -> None:
    sm75, sm80, sm90, sm90a = (target(n) for n in ("sm_75", "sm_80", "sm_90", "sm_90a"))
    assert sm90a.runs(sm80) and sm90a.runs(sm90) and sm90a.runs(sm75) and sm80.runs(sm75)
    assert not sm80.runs(sm90) and not sm90.runs(sm90a) and not sm80.runs(sm90a)
    assert sm90a.runs(sm90a)


def test_unknown_target_lists_the_known_ones() -> None:
    with pytest.raises(UnknownTargetError, match="unknown target 'sm_100'; known: sm_75, sm_80"):
        target("sm_100")


def test_address_space_spellings() -> None:
    assert [s.memory for s in (AddressSpace.GLOBAL, AddressSpace.SHARED)] == ["gmem", "smem"]
    assert AddressSpace.from_memory("rmem") is AddressSpace.REGISTER
    assert AddressSpace.from_memory("dsmem") is AddressSpace.SHARED_CLUSTER
    assert AddressSpace.SHARED == "shared" and f"ld.{AddressSpace.GLOBAL}" == "ld.global"
    assert AddressSpace.SHARED.aliases(AddressSpace.SHARED_CLUSTER)
    assert not AddressSpace.SHARED.aliases(AddressSpace.GLOBAL)
    with pytest.raises(ValueError, match="unknown memory 'tmem'; known: gmem, smem, dsmem, rmem"):
        AddressSpace.from_memory("tmem")
    with pytest.raises(ValueError, match="local memory has no tensor-type spelling"):
        _ = AddressSpace.LOCAL.memory
