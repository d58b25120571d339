"""Sync instruction templates: text, immediate checks, and ptxas for each op's target."""

from __future__ import annotations

import pytest

from cutec.atoms.sync import SYNC_OPS, SyncOp, SyncOpError, sync_op
from tests.atoms.ptx_harness import (
    assemble,
    fake_operands,
    kernel,
    ptx_version_for,
    ptxas_path,
)

IDS = [op.name for op in SYNC_OPS]


def _render(op: SyncOp) -> str:
    return op.render(fake_operands(op.template, dict(op.example)))


@pytest.mark.parametrize(
    ("name", "values", "text"),
    [
        ("bar.sync", {"id": "0"}, "bar.sync 0;"),
        ("bar.sync.named", {"id": "1", "count": "256"}, "bar.sync 1, 256;"),
        (
            "mbarrier.init",
            {"bar": "%r0", "count": "%r1"},
            "mbarrier.init.shared::cta.b64 [%r0], %r1;",
        ),
        (
            "mbarrier.arrive.expect_tx",
            {"state": "%rd0", "bar": "%r0", "tx": "%r1"},
            "mbarrier.arrive.expect_tx.shared::cta.b64 %rd0, [%r0], %r1;",
        ),
        (
            "mbarrier.try_wait.parity",
            {"done": "%p0", "bar": "%r0", "parity": "%r1"},
            "mbarrier.try_wait.parity.shared::cta.b64 %p0, [%r0], %r1;",
        ),
        ("fence.proxy.async", {}, "fence.proxy.async.shared::cta;"),
        ("cp.async.commit_group", {}, "cp.async.commit_group;"),
        ("cp.async.wait_group", {"n": "2"}, "cp.async.wait_group 2;"),
        ("cp.async.bulk.wait_group.read", {"n": "0"}, "cp.async.bulk.wait_group.read 0;"),
        ("wgmma.fence", {}, "wgmma.fence.sync.aligned;"),
        ("wgmma.commit_group", {}, "wgmma.commit_group.sync.aligned;"),
        ("wgmma.wait_group", {"n": "1"}, "wgmma.wait_group.sync.aligned 1;"),
        ("setmaxnreg.dec", {"n": "40"}, "setmaxnreg.dec.sync.aligned.u32 40;"),
    ],
)
def test_rendered_text(name: str, values: dict, text: str) -> None:
    assert sync_op(name).render(values) == text


def test_traits_for_passes() -> None:
    assert sync_op("bar.sync").collective == "cta"
    assert sync_op("wgmma.wait_group").collective == "warpgroup"
    assert sync_op("cp.async.wait_group").group == "cp.async.group"
    assert sync_op("cp.async.bulk.commit_group").group == "bulk_group"
    assert sync_op("mbarrier.try_wait.parity").group == "mbarrier"
    assert sync_op("wgmma.fence").target() == "sm_90a"
    assert sync_op("mbarrier.init").target() == "sm_80"


@pytest.mark.parametrize(
    ("name", "values", "needle"),
    [
        ("bar.sync", {"id": "16"}, "$id must be 0..15, got 16"),
        ("bar.sync.named", {"id": "1", "count": "100"}, "32..1024 in steps of 32, got 100"),
        ("setmaxnreg.inc", {"n": "244"}, "24..256 in steps of 8, got 244"),
        ("setmaxnreg.dec", {"n": "16"}, "24..256 in steps of 8, got 16"),
        ("wgmma.wait_group", {"n": "-1"}, "got -1"),
    ],
)
def test_immediates_out_of_range(name: str, values: dict, needle: str) -> None:
    with pytest.raises(SyncOpError) as info:
        sync_op(name).render(values)
    assert needle in str(info.value)


def test_unknown_op_names_the_known_ones() -> None:
    with pytest.raises(SyncOpError) as info:
        sync_op("bar.wait")
    assert "known: bar.sync, bar.sync.named" in str(info.value)


@pytest.mark.parametrize("op", SYNC_OPS, ids=IDS)
def test_every_op_renders(op: SyncOp) -> None:
    text = _render(op)
    assert "$" not in text and text.endswith(";")


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas not on PATH")
@pytest.mark.parametrize("op", SYNC_OPS, ids=IDS)
def test_every_op_assembles(op: SyncOp) -> None:
    target = op.target()
    ptx = kernel([_render(op)], target, ptx_version_for(target, op.min_ptx))
    result = assemble(ptx, target)
    assert result.returncode == 0, f"{op.name} on {target}:\n{result.stderr}\n{ptx}"


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas not on PATH")
def test_wgmma_fence_needs_the_arch_specific_target() -> None:
    ptx = kernel([_render(sync_op("wgmma.fence"))], "sm_90", (8, 0))
    assert assemble(ptx, "sm_90").returncode != 0
