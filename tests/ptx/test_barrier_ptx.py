"""Named barriers, cluster barriers and the mbarrier-init fence in PTX (cutec/ptx/barrier.py):
the instructions of tests/ir/roundtrip/thread_barrier.mlir, assembled by ptxas; the cluster
barriers are refused before sm_90, and the fence is nothing there."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutec.diagnostics import CompileError
from cutec.driver import Options, Source, Stage, compile
from cutec.ir.dialects.builtin import ModuleOp
from cutec.ir.parser import parse_module
from cutec.ir.verifier import verify
from cutec.ptx.ptxas import assemble, find_ptxas
from tests.cpu.test_barriers import handoff_text
from tests.ptx.legal import ptx_of

ROOT = Path(__file__).parents[2]
ALL_OPS = ROOT / "tests" / "ir" / "roundtrip" / "thread_barrier.mlir"
needs_ptxas = pytest.mark.skipif(find_ptxas() is None, reason="no ptxas (install the test extra)")

NAMED = """
module {
  kernel @named() attributes {reqntid = array<i32: 256, 1, 1>} {
    thread.fence_mbarrier_init
    thread.named_barrier_arrive {count = 256 : i32, id = 1 : i32}
    thread.named_barrier_sync {count = 96 : i32, id = 15 : i32}
    return
  }
}
"""


def _module(text: str, name: str) -> ModuleOp:
    module = parse_module(text, name)
    verify(module)
    return module


def _body(ptx: str) -> list[str]:
    """The kernel's instructions (no directives, labels or braces)."""
    lines = [line.strip() for line in ptx.splitlines()]
    return [ln for ln in lines if ln and ln[0] not in ".{}/$)" and not ln.endswith(":")]


def test_each_op_prints_its_instruction_on_sm_90() -> None:
    body = _body(ptx_of(_module(ALL_OPS.read_text(), "thread_barrier.mlir"), "sm_90a"))
    assert body == [
        "fence.mbarrier_init.release.cluster;",
        "barrier.cluster.arrive.relaxed.aligned;",
        "barrier.cluster.wait.aligned;",
        "elect.sync _|%p0, 0xffffffff;",
        "setmaxnreg.dec.sync.aligned.u32 40;",
        "bar.arrive 1, 256;",
        "bar.sync 15, 128;",
        "barrier.cluster.arrive.aligned;",
        "barrier.cluster.wait.aligned;",
        "ret;",
    ]


def test_named_barriers_on_sm_80_and_no_fence_there() -> None:
    body = _body(ptx_of(_module(NAMED, "named.mlir"), "sm_80"))
    assert body == ["bar.arrive 1, 256;", "bar.sync 15, 96;", "ret;"]


def test_cluster_barriers_are_refused_before_sm_90() -> None:
    module = _module(ALL_OPS.read_text(), "thread_barrier.mlir")
    with pytest.raises(CompileError, match=r"barrier\.cluster\.arrive\.relaxed needs sm_90"):
        ptx_of(module, "sm_80")


@needs_ptxas
@pytest.mark.parametrize(
    ("text", "target"), [(None, "sm_90a"), (NAMED, "sm_90a"), (NAMED, "sm_80")]
)
def test_ptxas_accepts_them(text: str | None, target: str) -> None:
    module = _module(text or ALL_OPS.read_text(), "barriers.mlir")
    result = assemble(ptx_of(module, target), target)
    assert result.ok, result.stderr


@needs_ptxas
@pytest.mark.parametrize(("target", "cluster"), [("sm_90a", True), ("sm_80", False)])
def test_ptxas_accepts_the_cute_pipeline(target: str, cluster: bool) -> None:
    """tests/cpu/data/mbarrier_handoff.cute (mbarriers, their fence, a named barrier, and
    on sm_90a a cluster barrier), as the driver compiles it."""
    source = Source(handoff_text(cluster), "handoff.cute")
    ptx = compile(source, Stage.PTX, Options(target=target)).text
    body = _body(ptx)
    assert ("fence.mbarrier_init.release.cluster;" in body) == (target == "sm_90a")
    assert ("barrier.cluster.wait.aligned;" in body) == cluster
    assert body.count("bar.sync 1, 96;") == 1 and body.count("bar.arrive 1, 96;") == 1
    result = assemble(ptx, target)
    assert result.ok, result.stderr
