// Shared memory, a barrier and cp.async with commit and wait: each thread
// copies 16 bytes of a tile to shared memory, waits, and reads its neighbour's.
// `test.smem_alloc` stands for the thread dialect's shared allocation, which
// does not exist yet (tests/ptx/test_emit.py defines and registers it).
module {
  kernel @smem(%src: !gpu.ptr<f32, global>, %dst: !gpu.ptr<f32, global>) attributes {reqntid = array<i32: 64, 1, 1>, dynamic_smem = 1024 : i64} {
    %tile = test.smem_alloc {bytes = 1024 : i64} : !gpu.ptr<f32, shared>
    %tid = gpu.thread_id x : index
    %c4 = arith.constant 4 : index
    %off = arith.muli %tid, %c4 : index
    %s = thread.ptr_add %src, %off : !gpu.ptr<f32, global>, index
    %d = thread.ptr_add %tile, %off : !gpu.ptr<f32, shared>, index
    %t0 = thread.cp_async %d, %s {bytes = 16 : i32} : !gpu.ptr<f32, shared>, !gpu.ptr<f32, global>
    %s4 = thread.ptr_add %s, %c4 : !gpu.ptr<f32, global>, index
    %t1 = thread.cp_async %d, %s4 {bytes = 4 : i32} : !gpu.ptr<f32, shared>, !gpu.ptr<f32, global>
    %g = thread.cp_async_commit %t0, %t1
    thread.cp_async_wait %g {pending = 0 : i32}
    gpu.barrier
    %c1 = arith.constant 1 : index
    %c63 = arith.constant 63 : index
    %n = arith.addi %tid, %c1 : index
    %wrap = arith.andi %n, %c63 : index
    %noff = arith.muli %wrap, %c4 : index
    %q = thread.ptr_add %tile, %noff : !gpu.ptr<f32, shared>, index
    %v = thread.load %q : !gpu.ptr<f32, shared> -> f32
    %two = arith.constant 2.0 : f32
    %w = arith.mulf %v, %two : f32
    thread.store %w, %d : f32, !gpu.ptr<f32, shared>
    gpu.barrier
    %r = thread.load %d : !gpu.ptr<f32, shared> -> f32
    %o = thread.ptr_add %dst, %tid : !gpu.ptr<f32, global>, index
    thread.store %r, %o : f32, !gpu.ptr<f32, global>
    return
  }
}
