// One producer warp and two consumer warps, synchronised by mbarriers: a
// two-stage pipeline over NT tiles of 64 f32.
//
// Warp 0 (producer) copies tile t into stage s = t % 2 with cp.async (8 bytes a
// lane) after waiting on empty[s], then each lane arrives on full[s] when its
// copies land (cp.async.mbarrier.arrive.noinc: full[s] counts 32 arrivals).
// Warps 1 and 2 (consumers) wait on full[s], read their 32 elements of the stage,
// and arrive on empty[s] (64 arrivals). y[j] = sum over tiles of 2 * x[t][j].
// Round n = t / 2 of a stage waits on full for parity n % 2, and on empty for the
// parity of round n - 1 (a fresh barrier counts the phase before its first, of
// parity 1, as complete: round 0 does not wait). Thread 0's inits are fenced and
// published by the CTA barrier before any other thread uses them.
module {
  kernel @pipeline(%x: !gpu.ptr<f32, global>, %y: !gpu.ptr<f32, global>, %nt: i32) attributes {reqntid = array<i32: 96, 1, 1>, grid = ["1", "1", "1"]} {
    %data = thread.alloc_shared {bytes = 512 : i64, align = 128 : i64} : !gpu.ptr<f32, shared>
    %bars = thread.alloc_shared {bytes = 32 : i64, align = 8 : i64} : !gpu.ptr<i64, shared>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %c32 = arith.constant 32 : i32
    %c64 = arith.constant 64 : i32
    %tid = gpu.thread_id x : index
    %t = arith.index_cast %tid : index to i32
    %is0 = arith.cmpi eq, %t, %c0 : i32
    scf.if %is0 {
      %full1 = thread.ptr_add %bars, %c1 : !gpu.ptr<i64, shared>, i32
      %empty0 = thread.ptr_add %bars, %c2 : !gpu.ptr<i64, shared>, i32
      %c3 = arith.constant 3 : i32
      %empty1 = thread.ptr_add %bars, %c3 : !gpu.ptr<i64, shared>, i32
      thread.mbarrier_init %bars, %c32 : !gpu.ptr<i64, shared>, i32
      thread.mbarrier_init %full1, %c32 : !gpu.ptr<i64, shared>, i32
      thread.mbarrier_init %empty0, %c64 : !gpu.ptr<i64, shared>, i32
      thread.mbarrier_init %empty1, %c64 : !gpu.ptr<i64, shared>, i32
      thread.fence_mbarrier_init
      scf.yield
    }
    gpu.barrier
    %w = gpu.warp_idx : index
    %wi = arith.index_cast %w : index to i32
    %producer = arith.cmpi eq, %wi, %c0 : i32
    scf.if %producer {
      %two_lanes = arith.muli %t, %c2 : i32
      scf.for %k = %c0 to %nt step %c1 : i32 {
        %s = arith.remui %k, %c2 : i32
        %n = arith.divui %k, %c2 : i32
        %parity = arith.xori %n, %c1 : i32
        %s2 = arith.addi %s, %c2 : i32
        %empty = thread.ptr_add %bars, %s2 : !gpu.ptr<i64, shared>, i32
        PRODUCER_WAIT
        %base = arith.muli %k, %c64 : i32
        %src_i = arith.addi %base, %two_lanes : i32
        %src = thread.ptr_add %x, %src_i : !gpu.ptr<f32, global>, i32
        %stage = arith.muli %s, %c64 : i32
        %dst_i = arith.addi %stage, %two_lanes : i32
        %dst = thread.ptr_add %data, %dst_i : !gpu.ptr<f32, shared>, i32
        %tok = thread.cp_async %dst, %src {bytes = 8 : i32} : !gpu.ptr<f32, shared>, !gpu.ptr<f32, global>
        %full = thread.ptr_add %bars, %s : !gpu.ptr<i64, shared>, i32
        thread.cp_async_mbarrier_arrive %full : !gpu.ptr<i64, shared>
        scf.yield
      }
      scf.yield
    } else {
      %j = arith.subi %t, %c32 : i32
      %zero = arith.constant 0.0 : f32
      %two = arith.constant 2.0 : f32
      %acc = scf.for %k = %c0 to %nt step %c1 iter_args(%a = %zero) -> (f32) : i32 {
        %s = arith.remui %k, %c2 : i32
        %n = arith.divui %k, %c2 : i32
        %parity = arith.andi %n, %c1 : i32
        %full = thread.ptr_add %bars, %s : !gpu.ptr<i64, shared>, i32
        CONSUMER_WAIT
        %stage = arith.muli %s, %c64 : i32
        %at_i = arith.addi %stage, %j : i32
        %at = thread.ptr_add %data, %at_i : !gpu.ptr<f32, shared>, i32
        %v = thread.load %at : !gpu.ptr<f32, shared> -> f32
        %s2 = arith.addi %s, %c2 : i32
        %empty = thread.ptr_add %bars, %s2 : !gpu.ptr<i64, shared>, i32
        thread.mbarrier_arrive %empty : !gpu.ptr<i64, shared>
        %a2 = arith.fma %v, %two, %a : f32
        scf.yield %a2 : f32
      }
      %out = thread.ptr_add %y, %j : !gpu.ptr<f32, global>, i32
      thread.store %acc, %out : f32, !gpu.ptr<f32, global>
      scf.yield
    }
    return
  }
}
