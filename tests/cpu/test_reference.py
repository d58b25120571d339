"""The reference interpreter on hand-written thread IR: values, barriers, predicates, errors."""

from __future__ import annotations

import numpy as np
import pytest

from cutec.cpu.reference import AccessError, InterpreterError, run_kernel
from cutec.ir.dialects.builtin import KernelOp
from cutec.ir.parser import parse_module
from cutec.ir.verifier import verify

G32 = "!gpu.ptr<f32, global>"


def _kernel(text: str) -> KernelOp:
    module = parse_module(text, "k.mlir")
    verify(module)
    (kernel,) = module.walk_type(KernelOp)
    return kernel


SCALE = f"""
module {{
  kernel @scale(%x: {G32}, %y: {G32}, %a: f32) attributes {{reqntid = array<i32: 32, 1, 1>}} {{
    %t = gpu.thread_id x : index
    %b = gpu.block_id x : index
    %n = gpu.block_dim x : index
    %base = arith.muli %b, %n : index
    %i = arith.addi %base, %t : index
    %px = thread.ptr_add %x, %i : {G32}, index
    %v = thread.load %px : {G32} -> f32
    %w = arith.mulf %v, %a : f32
    %py = thread.ptr_add %y, %i : {G32}, index
    thread.store %w, %py : f32, {G32}
    return
  }}
}}
"""


def test_copy_and_scale_over_several_ctas() -> None:
    x = np.arange(96, dtype=np.float32) / 7
    y = np.zeros(96, dtype=np.float32)
    run = run_kernel(_kernel(SCALE), grid=3, args={"x": x, "y": y, "a": 1.5}, trace=True)
    assert np.array_equal(y, x * np.float32(1.5))  # f32 products, rounded as numpy does
    # The trace: each thread of each CTA reads x[i] and writes y[i] once, i = 32*b + t.
    stores = [(a.block[0], a.thread[0], a.offset) for a in run.trace if a.kind == "store"]
    assert sorted(stores) == [(b, t, 4 * (32 * b + t)) for b in range(3) for t in range(32)]
    assert {a.buffer for a in run.trace if a.kind == "load"} == {"x"}
    assert len(run.trace) == 2 * 96
    assert run.store_counts("y", 96, 4).tolist() == [1] * 96
    assert run.elements("x", "load", 4)[((2, 0, 0), (5, 0, 0))] == [69]


VECTOR = f"""
module {{
  kernel @v4(%x: {G32}, %y: {G32}) attributes {{reqntid = array<i32: 8, 1, 1>}} {{
    %t = gpu.thread_id x : index
    %c4 = arith.constant 4 : index
    %i = arith.muli %t, %c4 : index
    %px = thread.ptr_add %x, %i : {G32}, index
    %v = thread.load %px : {G32} -> vector<4xf32>
    %e0 = thread.extract %v {{pos = 0 : i64}} : vector<4xf32>
    %e3 = thread.extract %v {{pos = 3 : i64}} : vector<4xf32>
    %w = thread.from_elements %e3, %e0 : vector<2xf32>
    %c2 = arith.constant 2 : index
    %j = arith.muli %t, %c2 : index
    %py = thread.ptr_add %y, %j : {G32}, index
    thread.store %w, %py : vector<2xf32>, {G32}
    return
  }}
}}
"""


def test_vector_loads_and_stores() -> None:
    x = np.arange(32, dtype=np.float32)
    y = np.zeros(16, dtype=np.float32)
    run = run_kernel(_kernel(VECTOR), grid=1, args=[x, y], trace=True)
    assert y.tolist() == [v for t in range(8) for v in (4.0 * t + 3, 4.0 * t)]
    loads = run.elements("x", "load", 4)
    assert loads[((0, 0, 0), (3, 0, 0))] == [12, 13, 14, 15]  # one .v4 access, four elements
    assert run.store_counts("y", 16, 4).tolist() == [1] * 16


def test_a_misaligned_vector_load_is_reported() -> None:
    text = VECTOR.replace("%i = arith.muli %t, %c4 : index", "%i = arith.addi %t, %t : index")
    with pytest.raises(AccessError, match=r"misaligned load of 16 bytes at byte offset 8 of x"):
        run_kernel(_kernel(text), grid=1, args=[np.zeros(32, np.float32), np.zeros(16, np.float32)])


# An 8x8 tile through shared memory: thread (tx, ty) writes s[ty][tx] and reads s[tx][ty].
TRANSPOSE = f"""
module {{
  kernel @transpose(%in: {G32}, %out: {G32}) attributes {{reqntid = array<i32: 8, 8, 1>}} {{
    %s = thread.alloc_shared {{bytes = 256 : i64, align = 16 : i64}} : !gpu.ptr<f32, shared>
    %tx = gpu.thread_id x : index
    %ty = gpu.thread_id y : index
    %b = gpu.block_id x : index
    %c8 = arith.constant 8 : index
    %c64 = arith.constant 64 : index
    %row = arith.muli %ty, %c8 : index
    %lin = arith.addi %row, %tx : index
    %col = arith.muli %tx, %c8 : index
    %tr = arith.addi %col, %ty : index
    %tile = arith.muli %b, %c64 : index
    %g = arith.addi %tile, %lin : index
    %pin = thread.ptr_add %in, %g : {G32}, index
    %v = thread.load %pin : {G32} -> f32
    %ps = thread.ptr_add %s, %lin : !gpu.ptr<f32, shared>, index
    thread.store %v, %ps : f32, !gpu.ptr<f32, shared>
    gpu.barrier
    %pt = thread.ptr_add %s, %tr : !gpu.ptr<f32, shared>, index
    %w = thread.load %pt : !gpu.ptr<f32, shared> -> f32
    %pout = thread.ptr_add %out, %g : {G32}, index
    thread.store %w, %pout : f32, {G32}
    return
  }}
}}
"""


def test_shared_memory_transpose_needs_its_barrier() -> None:
    x = np.arange(128, dtype=np.float32)
    out = np.zeros(128, dtype=np.float32)
    run_kernel(_kernel(TRANSPOSE), grid=2, args=[x, out])
    expected = x.reshape(2, 8, 8).transpose(0, 2, 1).reshape(-1)
    assert np.array_equal(out, expected)
    # Without the barrier a thread reads the tile before the others wrote it: a race ...
    racy = _kernel(TRANSPOSE.replace("gpu.barrier\n", ""))
    race = r"k.mlir:19:5: shared-memory race on byte 32 of shared@k.mlir:4:10: store by this "
    race += r"thread, load by thread \(1, 0, 0\), no barrier between \(thread.store, thread \(0, 1"
    with pytest.raises(AccessError, match=race):
        run_kernel(racy, grid=2, args=[x, out])
    # ... and, run on regardless, a wrong result.
    out[:] = 0
    run_kernel(racy, grid=2, args=[x, out], check_shared=False)
    assert not np.array_equal(out, expected)
    assert np.isnan(out).any()  # unwritten shared memory reads as 0xFF bytes: NaN


def test_a_barrier_some_threads_skip_is_divergent() -> None:
    text = TRANSPOSE.replace(
        "    gpu.barrier\n",
        "    %c0 = arith.constant 0 : index\n"
        "    %first = arith.cmpi eq, %lin, %c0 : index\n"
        "    scf.if %first {\n      gpu.barrier\n      scf.yield\n    }\n",
    )
    args = [np.zeros(64, np.float32), np.zeros(64, np.float32)]
    with pytest.raises(InterpreterError, match=r"k.mlir:\d+:\d+: divergent barrier: thread "
                       r"\(1, 0, 0\) of block \(0, 0, 0\) does not reach it"):  # fmt: skip
        run_kernel(_kernel(text), grid=1, args=args, check_shared=False)


PREDICATED = f"""
module {{
  kernel @guarded(%x: {G32}, %y: {G32}, %n: index) attributes {{reqntid = array<i32: 16, 1, 1>}} {{
    %t = gpu.thread_id x : index
    %in = arith.cmpi slt, %t, %n : index
    %minus = arith.constant -1.0 : f32
    %px = thread.ptr_add %x, %t : {G32}, index
    %v = thread.load_if %in, %px, %minus : {G32} -> f32
    %py = thread.ptr_add %y, %t : {G32}, index
    thread.store %v, %py : f32, {G32}
    %two = arith.constant 2.0 : f32
    %w = arith.addf %v, %two : f32
    thread.store_if %in, %w, %px : f32, {G32}
    return
  }}
}}
"""


def test_predicated_loads_return_the_default_and_touch_nothing() -> None:
    x = np.arange(10, dtype=np.float32)  # shorter than the CTA: the guard keeps it in bounds
    y = np.zeros(16, dtype=np.float32)
    run = run_kernel(_kernel(PREDICATED), grid=1, args=[x, y, 10], trace=True)
    assert y.tolist() == [float(i) for i in range(10)] + [-1.0] * 6
    assert x.tolist() == [i + 2.0 for i in range(10)]
    assert max(a.offset for a in run.trace if a.buffer == "x") == 36


OOB = f"""
module {{
  kernel @shifted(%y: {G32}) attributes {{reqntid = array<i32: 32, 1, 1>}} {{
    %t = gpu.thread_id x : index
    %b = gpu.block_id x : index
    %c32 = arith.constant 32 : index
    %base = arith.muli %b, %c32 : index
    %i = arith.addi %base, %t : index
    %c1 = arith.constant 1 : index
    %j = arith.addi %i, %c1 : index
    %one = arith.constant 1.0 : f32
    %p = thread.ptr_add %y, %j : {G32}, index
    thread.store %one, %p : f32, {G32} loc("shift.cute":7:3)
    return
  }}
}}
"""


def test_an_out_of_bounds_store_names_location_thread_and_block() -> None:
    y = np.zeros(64, dtype=np.float32)
    with pytest.raises(AccessError) as info:
        run_kernel(_kernel(OOB), grid=2, args=[y])
    assert str(info.value) == (
        "shift.cute:7:3: out-of-bounds store of 4 bytes at byte offset 256 of y (256 bytes) "
        "(thread.store, thread (31, 0, 0), block (1, 0, 0))"
    )
    assert (info.value.thread, info.value.block) == ((31, 0, 0), (1, 0, 0))


CP_ASYNC = f"""
module {{
  kernel @stage(%x: {G32}, %y: {G32}, %n: i32) attributes {{reqntid = array<i32: 1, 1, 1>}} {{
    %s = thread.alloc_shared {{bytes = 16 : i64, align = 16 : i64}} : !gpu.ptr<f32, shared>
    %t = thread.cp_async cg %s, %x, %n {{bytes = 16 : i32}} : !gpu.ptr<f32, shared>, {G32}
    %early = thread.load %s : !gpu.ptr<f32, shared> -> f32
    thread.store %early, %y : f32, {G32}
    %g = thread.cp_async_commit %t
    thread.cp_async_wait %g {{pending = 0 : i32}}
    %v = thread.load %s : !gpu.ptr<f32, shared> -> vector<4xf32>
    %c1 = arith.constant 1 : index
    %py = thread.ptr_add %y, %c1 : {G32}, index
    %c2 = arith.constant 2 : index
    %pz = thread.ptr_add %py, %c2 : {G32}, index
    %e = thread.extract %v {{pos = 1 : i64}} : vector<4xf32>
    %f = thread.extract %v {{pos = 2 : i64}} : vector<4xf32>
    thread.store %e, %py : f32, {G32}
    thread.store %f, %pz : f32, {G32}
    return
  }}
}}
"""


def test_cp_async_lands_at_the_wait_and_zero_fills_past_src_size() -> None:
    x = np.array([1, 2, 3, 4], dtype=np.float32)
    y = np.zeros(4, dtype=np.float32)
    with pytest.raises(AccessError) as info:  # the read before the wait
        run_kernel(_kernel(CP_ASYNC), grid=1, args=[x, y, 8])
    assert str(info.value) == (
        "k.mlir:6:14: load of byte 0 of shared@k.mlir:4:10, which a cp.async of thread "
        "(0, 0, 0) writes, before a cp.async wait lands it (thread.load, thread (0, 0, 0), "
        "block (0, 0, 0))"
    )
    run_kernel(_kernel(CP_ASYNC), grid=1, args=[x, y, 8], check_shared=False)
    assert np.isnan(y[0])  # read before the wait: the copy has not landed, NaN
    assert (y[1], y[3]) == (2.0, 0.0)  # element 1 copied, element 2 zero-filled (src-size 8)


DOT = f"""
module {{
  kernel @dot(%x: {G32}, %out: {G32}, %k: index) attributes {{reqntid = array<i32: 4, 1, 1>}} {{
    %t = gpu.thread_id x : index
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f32
    %row = arith.muli %t, %k : index
    %acc = scf.for %i = %c0 to %k step %c1 iter_args(%a = %zero) -> (f32) {{
      %j = arith.addi %row, %i : index
      %p = thread.ptr_add %x, %j : {G32}, index
      %v = thread.load %p : {G32} -> f32
      %d = thread.atom "UniversalFMA_F32F32F32F32"(%v, %v, %a) {{role = "mma"}}
        : (f32, f32, f32) -> (f32)
      scf.yield %d : f32
    }}
    %po = thread.ptr_add %out, %t : {G32}, index
    thread.store %acc, %po : f32, {G32}
    return
  }}
}}
"""


def test_loop_with_universal_fma_atom() -> None:
    x = np.linspace(0, 1, 12, dtype=np.float32)
    out = np.zeros(4, dtype=np.float32)
    run_kernel(_kernel(DOT), grid=1, args=[x, out, 3])
    expected = np.zeros(4, dtype=np.float32)
    for t in range(4):
        for i in range(3):
            v = float(x[3 * t + i])
            expected[t] = np.float32(v * v + float(expected[t]))  # fused: one rounding
    assert np.array_equal(out, expected)


def test_integers_wrap_as_the_hardware_does() -> None:
    text = """
module {
  kernel @wrap(%y: !gpu.ptr<i32, global>, %a: i32) attributes {reqntid = array<i32: 1, 1, 1>} {
    %m = arith.muli %a, %a : i32
    thread.store %m, %y : i32, !gpu.ptr<i32, global>
    return
  }
}
"""
    y = np.zeros(1, dtype=np.int32)
    run_kernel(_kernel(text), grid=1, args=[y, 65537])
    assert y[0] == np.int32(np.int64(65537 * 65537) & 0xFFFFFFFF)  # 131073


def test_unknown_atoms_are_not_run_yet() -> None:
    text = """
module {
  kernel @st(%s: !gpu.ptr<f16, shared>, %r: i32) attributes {reqntid = array<i32: 32, 1, 1>} {
    thread.atom "SM90_U32x1_STSM_N"(%s, %r) {role = "copy"} : (!gpu.ptr<f16, shared>, i32) -> ()
    return
  }
}
"""
    with pytest.raises(NotImplementedError, match="SM90_U32x1_STSM_N"):
        run_kernel(_kernel(text), grid=1, args=[np.zeros(8, np.float16), 0])


def test_universal_copy_atoms_load_and_store_registers() -> None:
    text = f"""
module {{
  kernel @cp(%x: {G32}, %y: {G32}) attributes {{reqntid = array<i32: 2, 1, 1>}} {{
    %t = gpu.thread_id x : index
    %c2 = arith.constant 2 : index
    %i = arith.muli %t, %c2 : index
    %px = thread.ptr_add %x, %i : {G32}, index
    %py = thread.ptr_add %y, %i : {G32}, index
    %r:2 = thread.atom "UniversalCopy<uint64_t>"(%px) {{role = "ld.global"}}
      : ({G32}) -> (f32, f32)
    thread.atom "UniversalCopy<uint64_t>"(%py, %r#1, %r#0) {{role = "st.global"}}
      : ({G32}, f32, f32) -> ()
    return
  }}
}}
"""
    x = np.array([1, 2, 3, 4], dtype=np.float32)
    y = np.zeros(4, dtype=np.float32)
    run = run_kernel(_kernel(text), grid=1, args=[x, y], trace=True)
    assert y.tolist() == [2.0, 1.0, 4.0, 3.0]
    assert [(a.kind, a.offset, a.nbytes) for a in run.trace if a.thread == (1, 0, 0)] == [
        ("load", 8, 8),
        ("store", 8, 8),
    ]


def test_special_registers() -> None:
    text = """
module {
  kernel @ids(%y: !gpu.ptr<index, global>) attributes {reqntid = array<i32: 48, 2, 1>} {
    %tx = gpu.thread_id x : index
    %ty = gpu.thread_id y : index
    %nx = gpu.block_dim x : index
    %row = arith.muli %ty, %nx : index
    %lin = arith.addi %row, %tx : index
    %c4 = arith.constant 4 : index
    %at = arith.muli %lin, %c4 : index
    %p0 = thread.ptr_add %y, %at : !gpu.ptr<index, global>, index
    %lane = gpu.lane_id : index
    thread.store %lane, %p0 : index, !gpu.ptr<index, global>
    %c1 = arith.constant 1 : index
    %p1 = thread.ptr_add %p0, %c1 : !gpu.ptr<index, global>, index
    %warp = gpu.warp_idx : index
    thread.store %warp, %p1 : index, !gpu.ptr<index, global>
    %p2 = thread.ptr_add %p1, %c1 : !gpu.ptr<index, global>, index
    %gz = gpu.grid_dim x : index
    thread.store %gz, %p2 : index, !gpu.ptr<index, global>
    %p3 = thread.ptr_add %p2, %c1 : !gpu.ptr<index, global>, index
    %cb = gpu.cluster_block_rank : index
    thread.store %cb, %p3 : index, !gpu.ptr<index, global>
    return
  }
}
"""
    y = np.zeros((96, 4), dtype=np.int64)
    run_kernel(_kernel(text), grid=1, args=[y])
    lin = np.arange(96)
    assert y[:, 0].tolist() == (lin % 32).tolist()  # the lane of the linear thread id
    # warp_idx is tid.x / 32 (CuTe's canonical_warp_idx_sync), not the linear id's warp
    assert y[:, 1].tolist() == ((lin % 48) // 32).tolist()
    assert set(y[:, 2]) == {1} and set(y[:, 3]) == {0}
