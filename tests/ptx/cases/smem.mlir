// Shared memory, a barrier and cp.async with commit and wait: each thread
// copies 16 bytes of a tile to shared memory, waits, and reads its neighbour's.
// Then: cp.async.cg with a zero-filling src-size, the dynamic shared array,
// ptr_cast, and cvta to the generic space and back.
module {
  kernel @smem(%src: !gpu.ptr<f32, global>, %dst: !gpu.ptr<f32, global>, %n: index) attributes {reqntid = array<i32: 64, 1, 1>, dynamic_smem = 1024 : i64} {
    %tile = thread.alloc_shared {bytes = 1024 : i64, align = 16 : i64} : !gpu.ptr<f32, shared>
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
    %nx = arith.addi %tid, %c1 : index
    %wrap = arith.andi %nx, %c63 : index
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
    // cp.async.cg into the dynamic shared array, zero-filled past the end of %src
    %dyn = thread.dynamic_shared : !gpu.ptr<i8, shared>
    %dynf = thread.ptr_cast %dyn : !gpu.ptr<i8, shared> to !gpu.ptr<f32, shared>
    %dd = thread.ptr_add %dynf, %off : !gpu.ptr<f32, shared>, index
    %in = arith.cmpi slt, %off, %n : index
    %c16 = arith.constant 16 : i32
    %c0 = arith.constant 0 : i32
    %size = arith.select %in, %c16, %c0 : i32
    %c8 = arith.constant 8 : i32
    %size8 = arith.select %in, %c8, %c0 : i32
    %t2 = thread.cp_async cg %dd, %s, %size {bytes = 16 : i32} : !gpu.ptr<f32, shared>, !gpu.ptr<f32, global>
    %t3 = thread.cp_async ca %dd, %s, %size8 {bytes = 8 : i32} : !gpu.ptr<f32, shared>, !gpu.ptr<f32, global>
    %g2 = thread.cp_async_commit %t2, %t3
    thread.cp_async_wait %g2 {pending = 0 : i32}
    // generic addresses: a shared one read through plain ld, a global one written by st
    %gen = thread.cvta %dd : !gpu.ptr<f32, shared> to !gpu.ptr<f32, generic>
    %x = thread.load %gen : !gpu.ptr<f32, generic> -> f32
    %back = thread.cvta %gen : !gpu.ptr<f32, generic> to !gpu.ptr<f32, shared>
    thread.store %x, %back : f32, !gpu.ptr<f32, shared>
    %go = thread.cvta %o : !gpu.ptr<f32, global> to !gpu.ptr<f32, generic>
    thread.store %x, %go : f32, !gpu.ptr<f32, generic>
    %gi = thread.cvta %go : !gpu.ptr<f32, generic> to !gpu.ptr<f32, global>
    thread.store %x, %gi : f32, !gpu.ptr<f32, global>
    // {ordered} shared loads (order-shared-loads): relaxed loads at CTA scope
    %r1 = thread.load %dd {ordered} : !gpu.ptr<f32, shared> -> f32
    %r4 = thread.load %dd {ordered} : !gpu.ptr<f32, shared> -> vector<4xf32>
    %r40 = thread.extract %r4 {pos = 0 : i64} : vector<4xf32>
    %rs = arith.addf %r1, %r40 : f32
    thread.store %rs, %gi : f32, !gpu.ptr<f32, global>
    return
  }
}
