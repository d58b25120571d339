// RUN: cutec opt %s --passes licm
// Pure invariant ops leave the loop, in order, from the innermost loop out;
// loads, stores, barriers and ops using the induction variable stay; a
// division by a run-time value leaves a loop that surely runs as it is, any other
// with its divisor replaced by 1 when the loop runs no iteration.

// CHECK-LABEL: kernel @hoist
kernel @hoist(%g: !gpu.ptr<f32, global>, %s: !gpu.ptr<f32, shared>, %ld: index, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: %[[TID:.*]] = gpu.thread_id x
  // CHECK-NEXT: %[[C8:.*]] = arith.constant 8 : index
  // CHECK-NEXT: %[[ROW:.*]] = arith.muli %[[TID]], %ld : index
  // CHECK-NEXT: %[[BASE:.*]] = arith.addi %[[ROW]], %[[C8]] : index
  // CHECK-NEXT: %[[P:.*]] = thread.ptr_add %g, %[[BASE]]
  // CHECK-NEXT: scf.for %k = %c0 to %n step %c1 {
  scf.for %k = %c0 to %n step %c1 {
    %tid = gpu.thread_id x : index
    %c8 = arith.constant 8 : index
    %row = arith.muli %tid, %ld : index
    %base = arith.addi %row, %c8 : index
    %p = thread.ptr_add %g, %base : !gpu.ptr<f32, global>, index
    // CHECK-NEXT: %[[Q:.*]] = thread.ptr_add %[[P]], %k
    // CHECK-NEXT: %[[V:.*]] = thread.load %[[Q]]
    // CHECK-NEXT: thread.store %[[V]], %s
    // CHECK-NEXT: gpu.barrier
    // CHECK-NEXT: %[[W:.*]] = thread.load %s
    // CHECK-NEXT: thread.store %[[W]], %[[P]]
    %q = thread.ptr_add %p, %k : !gpu.ptr<f32, global>, index
    %v = thread.load %q : !gpu.ptr<f32, global> -> f32
    thread.store %v, %s : f32, !gpu.ptr<f32, shared>
    gpu.barrier
    // The shared load is invariant in its address but reads memory: it stays
    // after the barrier.
    %w = thread.load %s : !gpu.ptr<f32, shared> -> f32
    thread.store %w, %p : f32, !gpu.ptr<f32, global>
    scf.yield
  }
  return
}

// CHECK-LABEL: func @nested
func @nested(%a: index, %b: index, %n: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: %[[AB:.*]] = arith.muli %a, %b : index
  // CHECK-NEXT: scf.for %i
  // CHECK-NEXT: %[[AI:.*]] = arith.addi %[[AB]], %i : index
  // CHECK-NEXT: scf.for %j
  // CHECK-NEXT: arith.addi %{{.*}}, %[[AI]] : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %c0) -> (index) {
    %s = scf.for %j = %c0 to %n step %c1 iter_args(%y = %x) -> (index) {
      %ab = arith.muli %a, %b : index
      %ai = arith.addi %ab, %i : index
      %z = arith.addi %y, %ai : index
      scf.yield %z : index
    }
    scf.yield %s : index
  }
  return %r : index
}

// CHECK-LABEL: func @division
func @division(%a: index, %b: index, %n: index) -> (index, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  // CHECK: %[[RUNS:.*]] = arith.cmpi slt, %c0, %n : index
  // CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
  // CHECK-NEXT: %[[D:.*]] = arith.select %[[RUNS]], %b, %[[ONE]] : index
  // CHECK-NEXT: %[[Q0:.*]] = arith.divui %a, %[[D]] : index
  // CHECK-NEXT: %[[H:.*]] = arith.divui %a, %c4 : index
  // CHECK-NEXT: %[[S:.*]] = arith.addi %[[Q0]], %[[H]] : index
  // CHECK-NEXT: %[[MAYBE:.*]] = scf.for
  // CHECK-NEXT: arith.addi %{{.*}}, %[[S]] : index
  // CHECK-NEXT: scf.yield
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %c0) -> (index) {
    %q = arith.divui %a, %b : index
    %h = arith.divui %a, %c4 : index
    %s = arith.addi %q, %h : index
    %y = arith.addi %x, %s : index
    scf.yield %y : index
  }
  // This loop runs 4 times: its division by %b may leave it.
  // CHECK: %[[Q:.*]] = arith.divui %a, %b : index
  // CHECK-NEXT: scf.for
  // CHECK-NOT: arith.divui
  // CHECK: scf.yield
  %t = scf.for %i = %c0 to %c4 step %c1 iter_args(%x = %c0) -> (index) {
    %q = arith.divui %a, %b : index
    %y = arith.addi %x, %q : index
    scf.yield %y : index
  }
  return %r, %t : index, index
}

// In a loop that holds another loop (a persistent kernel's loop over tiles around
// its k-loop), invariant ops before the inner loop leave; those after it stay, so
// that their values are not live across the inner loop (the epilogue's addresses).
// CHECK-LABEL: kernel @after_inner_loop
kernel @after_inner_loop(%g: !gpu.ptr<f32, global>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: %[[TID:.*]] = gpu.thread_id x
  // CHECK-NEXT: %[[C4:.*]] = arith.constant 4 : index
  // CHECK-NEXT: %[[A:.*]] = arith.muli %[[TID]], %[[C4]] : index
  // CHECK-NEXT: thread.ptr_add %g, %[[A]]
  // CHECK-NEXT: scf.for %t = %c0 to %n step %c1 {
  scf.for %t = %c0 to %n step %c1 {
    %tid = gpu.thread_id x : index
    %c4 = arith.constant 4 : index
    %a = arith.muli %tid, %c4 : index
    // CHECK: scf.for %k
    scf.for %k = %c0 to %n step %c1 {
      %p = thread.ptr_add %g, %a : !gpu.ptr<f32, global>, index
      %v = thread.load %p : !gpu.ptr<f32, global> -> f32
      thread.store %v, %p : f32, !gpu.ptr<f32, global>
      scf.yield
    }
    // CHECK: %[[C8:.*]] = arith.constant 8 : index
    // CHECK-NEXT: %[[B:.*]] = arith.muli %[[TID]], %[[C8]] : index
    %c8 = arith.constant 8 : index
    %b = arith.muli %tid, %c8 : index
    %q = thread.ptr_add %g, %b : !gpu.ptr<f32, global>, index
    %w = thread.load %q : !gpu.ptr<f32, global> -> f32
    thread.store %w, %q : f32, !gpu.ptr<f32, global>
    scf.yield
  }
  return
}
