"""TMA stores at thread level to PTX: a TMA_STORE atom's `thread.atom` is
cp.async.bulk.tensor global <- shared::cta completing by bulk group, and
`thread.bulk_commit` / `thread.bulk_wait` are cp.async.bulk.commit_group /
wait_group(.read). tests/ptx/data/tma_store.mlir is the kernel; `TMA_STORE` its launch
record (a .mlir kernel has no map recipe of its own), which tests/cpu/test_tma_store.py
and tests/gpu/test_tma_store_gpu.py launch it with."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutec.atoms.tma import TmaDataType
from cutec.diagnostics import CompileError
from cutec.driver import Options, Source, Stage, compile
from cutec.ir.dialects import thread
from cutec.ir.parser import parse_module
from cutec.ir.signature import KernelSignature, LaunchInfo, TensorMapParam, TensorParam
from cutec.ir.traits import AddressSpace, EffectKind, is_side_effect_free
from cutec.ir.verifier import verify
from cutec.ptx.ptxas import find_ptxas

TMA_STORE_MLIR = Path(__file__).parent / "data" / "tma_store.mlir"

# S holds the boxes' values (two boxes of 128 per CTA); D is column-major M x N with
# leading dimension ldD, written through D_map in 16 x 8 boxes; the grid covers D in
# 16 x 16 tiles.
TMA_STORE = (
    KernelSignature(
        "tma_store",
        (
            TensorParam("S", "f32", ("T",), (1,), 16, "read"),
            TensorParam("D", "f32", ("M", "N"), (1, "ldD"), 16, "write"),
            TensorMapParam(
                "D_map",
                "D",
                TmaDataType.FLOAT32,
                ("M", "N"),
                ("ldD",),
                (16, 8),
                (1, 1),
                store=True,
            ),
        ),
        (
            ("S", "ptr"),
            ("T", "index"),
            ("D", "ptr"),
            ("M", "index"),
            ("N", "index"),
            ("ldD", "index"),
            ("D_map", "tensor_map"),
        ),
        (),
    ),
    LaunchInfo((128, 1, 1), None, ("ceil_div(M,16)", "ceil_div(N,16)", "1"), None, 0, 32),
)


def tma_store_ptx() -> str:
    """The PTX cutec writes for tests/ptx/data/tma_store.mlir (sm_90a)."""
    result = compile(Source.from_file(TMA_STORE_MLIR), Stage.PTX, Options(target="sm_90a"))
    assert result.ptx is not None
    return result.ptx


def test_the_store_and_its_group_ops_print_their_instructions() -> None:
    lines = [line.strip() for line in tma_store_ptx().splitlines()]
    lines = [line for line in lines if not line.startswith(".loc")]
    store = next(i for i, line in enumerate(lines) if line.startswith("cp.async.bulk.tensor"))
    words = lines[store].split()
    assert words[0] == "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"
    # [map, {x, y}], [tile]: the map's generic address, the 32-bit shared address
    assert words[1].startswith("[%rd") and words[3].startswith("%r") and words[3].endswith("}],")
    assert words[4].startswith("[%r") and words[4].endswith("];")
    assert lines[store + 1 : store + 3] == [
        "cp.async.bulk.commit_group;",
        "cp.async.bulk.wait_group.read 0;",
    ]
    fence = lines.index("fence.proxy.async.shared::cta;")
    assert lines[fence + 1] == "bar.sync 0;" and fence < store


@pytest.mark.skipif(find_ptxas() is None, reason="no ptxas (install the test extra)")
@pytest.mark.parametrize("read", [True, False])
def test_the_tma_store_kernel_assembles(read: bool) -> None:
    text = TMA_STORE_MLIR.read_text()
    if not read:
        text = text.replace("{pending = 0 : i32, read}", "{pending = 1 : i32}")
    result = compile(Source.from_file("k.mlir", text), Stage.CUBIN, Options(target="sm_90a"))
    assert result.cubin is not None and result.warnings == []
    wait = "cp.async.bulk.wait_group.read 0;" if read else "cp.async.bulk.wait_group 1;"
    assert wait in (result.ptx or "")


def test_a_negative_pending_count_is_a_located_error() -> None:
    """(The ops' round trip is tests/ir/roundtrip/thread_tma.mlir's.)"""
    wait = "thread.bulk_wait {pending = -1 : i32}"
    text = f"module {{\n  kernel @k() {{\n    {wait}\n    return\n  }}\n}}\n"
    with pytest.raises(CompileError, match="attribute 'pending' must be non-negative") as e:
        verify(parse_module(text, "k.mlir"))
    assert "k.mlir:3:5" in e.value.render()


def test_the_store_writes_global_memory_and_the_group_ops_stay() -> None:
    """The store's tensor is named by its map, not a pointer: its effects say it
    writes global memory (and reads the shared tile); the group ops order both."""
    module = parse_module(TMA_STORE_MLIR.read_text(), "k.mlir")
    (store,) = [op for op in module.walk_type(thread.AtomOp)]
    effects = {(e.kind, e.space) for e in store.memory_effects() or ()}
    assert effects == {(EffectKind.WRITE, AddressSpace.GLOBAL),
                       (EffectKind.READ, AddressSpace.SHARED)}  # fmt: skip
    for cls in (thread.BulkCommitOp, thread.BulkWaitOp):
        (op,) = module.walk_type(cls)
        assert not is_side_effect_free(op)
        assert (EffectKind.WRITE, AddressSpace.SHARED) in {
            (e.kind, e.space) for e in op.memory_effects() or ()
        }


@pytest.mark.parametrize("old", ["thread.bulk_commit", "thread.bulk_wait"])
def test_the_group_ops_for_sm80_are_located_errors(old: str) -> None:
    """Without TMA, each op is an error at its line (the atom and the map first: the
    test keeps only the group op)."""
    text = f"""module attributes {{target = "sm_80"}} {{
  kernel @k() {{
    {old} {{pending = 0 : i32}}
    return
  }}
}}
""".replace("thread.bulk_commit {pending = 0 : i32}", "thread.bulk_commit")
    with pytest.raises(CompileError, match=r"needs sm_90") as info:
        compile(Source.from_file("k.mlir", text), Stage.PTX, Options(target="sm_80"))
    assert "k.mlir:3:5" in info.value.render()
