// RUN: cutec opt %s --passes simplify
// Strength reduction: division and remainder by 2^k become shifts and masks
// (signed ones only for a dividend known >= 0), multiplication a shift.

// CHECK-LABEL: func @unsigned
func @unsigned(%x: i32) -> (i32, i32) {
  %c8 = arith.constant 8 : i32
  %q = arith.divui %x, %c8 : i32
  %r = arith.remui %x, %c8 : i32
  // CHECK-DAG: %[[C3:.*]] = arith.constant 3 : i32
  // CHECK-DAG: %[[C7:.*]] = arith.constant 7 : i32
  // CHECK-DAG: %[[Q:.*]] = arith.shrui %x, %[[C3]] : i32
  // CHECK-DAG: %[[R:.*]] = arith.andi %x, %[[C7]] : i32
  // CHECK: return %[[Q]], %[[R]] : i32, i32
  return %q, %r : i32, i32
}

// CHECK-LABEL: kernel @signed_nonnegative
kernel @signed_nonnegative(%n: index, %g: !gpu.ptr<i32, global>) {
  %tid = gpu.thread_id x : index
  %bid = gpu.block_id x : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %row = arith.muli %bid, %c128 : index
  %i = arith.addi %row, %tid : index
  // %i = bid*128 + tid >= 0: signed division and remainder are a shift and a mask.
  %warp = arith.divsi %i, %c32 : index
  %lane = arith.remsi %i, %c32 : index
  // %n may be negative: its signed division stays; floor division is a shift anyway.
  %nq = arith.divsi %n, %c32 : index
  %nr = arith.remsi %n, %c32 : index
  %nf = arith.floordivsi %n, %c32 : index
  %tf = arith.floordivsi %tid, %c32 : index
  // CHECK: %[[ROW:.*]] = arith.shli %bid, %{{.*}} : index
  // CHECK: %[[I:.*]] = arith.addi %[[ROW]], %tid : index
  // CHECK-DAG: arith.shrui %[[I]], %[[C5:.*]] : index
  // CHECK-DAG: arith.andi %[[I]], %{{.*}} : index
  // CHECK-DAG: arith.divsi %n, %{{.*}} : index
  // CHECK-DAG: arith.remsi %n, %{{.*}} : index
  // CHECK-DAG: arith.shrsi %n, %{{.*}} : index
  // CHECK-DAG: arith.shrui %tid, %{{.*}} : index
  // CHECK-NOT: arith.muli
  // CHECK-NOT: arith.floordivsi
  %s = arith.addi %warp, %lane : index
  %t = arith.addi %nq, %nr : index
  %u = arith.addi %nf, %tf : index
  %p = arith.addi %s, %t : index
  %w = arith.addi %p, %u : index
  %w32 = arith.index_cast %w : index to i32
  // A truncation to i32 may turn a non-negative index negative: no claim.
  // CHECK: %[[T32:.*]] = arith.index_cast %tid : index to i32
  // CHECK: arith.divsi %[[T32]], %{{.*}} : i32
  %t32 = arith.index_cast %tid : index to i32
  %c32i = arith.constant 32 : i32
  %q32 = arith.divsi %t32, %c32i : i32
  %sum = arith.addi %w32, %q32 : i32
  thread.store %sum, %g : i32, !gpu.ptr<i32, global>
  return
}

// CHECK-LABEL: func @loop_induction_variable
func @loop_induction_variable(%n: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %s = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %c0) -> (index) {
    // %k >= 0: the lower bound and the step are.
    // CHECK: arith.shrui %k
    %q = arith.divsi %k, %c16 : index
    %a = arith.addi %acc, %q : index
    scf.yield %a : index
  }
  return %s : index
}

// CHECK-LABEL: func @special_registers
func @special_registers() -> (index, index) {
  %l = gpu.lane_id : index
  %w = gpu.warp_idx : index
  %c4 = arith.constant 4 : index
  // CHECK: arith.shrui %l
  // CHECK: arith.andi %w
  %a = arith.divsi %l, %c4 : index
  %b = arith.remsi %w, %c4 : index
  return %a, %b : index, index
}
