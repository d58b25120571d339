// RUN: cutec opt %s --passes canonicalize,cse,licm,simplify,sink-barriers
// Atomics read and write global memory and a fence orders every access: none is
// merged, deleted, hoisted out of a loop or moved across, even an atomic load whose
// value is unused, and a spin loop on an atomic load stays a loop that reads again.

// CHECK-LABEL: kernel @kept
kernel @kept(%g: !gpu.ptr<i32, global>, %f: !gpu.ptr<f32, global>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i32
  // Two atomic loads of one address, nothing between: both read.
  // CHECK: %[[A:.*]] = thread.atomic_load relaxed gpu %g
  // CHECK-NEXT: %[[B:.*]] = thread.atomic_load relaxed gpu %g
  %a = thread.atomic_load relaxed gpu %g : !gpu.ptr<i32, global>
  %b = thread.atomic_load relaxed gpu %g : !gpu.ptr<i32, global>
  // Unused results: the acquire load and the add stay.
  // CHECK-NEXT: thread.atomic_load acquire gpu %g
  // CHECK-NEXT: thread.atomic_rmw add relaxed gpu %g
  %u = thread.atomic_load acquire gpu %g : !gpu.ptr<i32, global>
  %r = thread.atomic_rmw add relaxed gpu %g, %one : !gpu.ptr<i32, global>, i32
  // CHECK-NEXT: arith.addi %[[A]], %[[B]]
  %s = arith.addi %a, %b : i32
  thread.store %s, %g : i32, !gpu.ptr<i32, global>
  // A loop-invariant atomic runs at every iteration.
  // CHECK: scf.for
  // CHECK-NEXT: thread.atomic_rmw add relaxed gpu %g
  // CHECK-NEXT: scf.yield
  scf.for %i = %c0 to %n step %c1 {
    %x = thread.atomic_rmw add relaxed gpu %g, %one : !gpu.ptr<i32, global>, i32
    scf.yield
  }
  // The spin loop: its before-region reads the flag at every test.
  // CHECK: scf.while
  // CHECK-NEXT: %[[V:.*]] = thread.atomic_load acquire gpu %g
  // CHECK: arith.cmpi eq, %[[V]]
  // CHECK-NEXT: scf.condition
  scf.while () : () -> () {
    %v = thread.atomic_load acquire gpu %g : !gpu.ptr<i32, global>
    %z = arith.constant 0 : i32
    %c = arith.cmpi eq, %v, %z : i32
    scf.condition(%c)
  } do {
    scf.yield
  }
  // Two loads of one address with a fence between are two reads.
  // CHECK: thread.load %f
  // CHECK-NEXT: gpu.fence acq_rel gpu
  // CHECK-NEXT: thread.load %f
  %p = thread.load %f : !gpu.ptr<f32, global> -> f32
  gpu.fence acq_rel gpu
  %q = thread.load %f : !gpu.ptr<f32, global> -> f32
  %pq = arith.addf %p, %q : f32
  thread.store %pq, %f : f32, !gpu.ptr<f32, global>
  // An unused fence stays.
  // CHECK: gpu.fence sc sys
  gpu.fence sc sys
  return
}

// CHECK-LABEL: kernel @barriers
kernel @barriers(%g: !gpu.ptr<i32, global>, %f: !gpu.ptr<f32, global>, %s: !gpu.ptr<f32, shared>) {
  // An atomic after the barrier is no plain global load: the barrier stays above it.
  // CHECK: gpu.barrier
  // CHECK-NEXT: thread.store
  // CHECK-NEXT: gpu.barrier
  // CHECK-NEXT: thread.atomic_load acquire gpu %g
  // CHECK-NEXT: thread.load %f
  %x = thread.load %f : !gpu.ptr<f32, global> -> f32
  gpu.barrier
  thread.store %x, %s : f32, !gpu.ptr<f32, shared>
  gpu.barrier
  %v = thread.atomic_load acquire gpu %g : !gpu.ptr<i32, global>
  %w = thread.load %f : !gpu.ptr<f32, global> -> f32
  thread.store %v, %g : i32, !gpu.ptr<i32, global>
  // An atomic between two barriers writes global memory: the second stays.
  // CHECK: gpu.barrier
  // CHECK-NEXT: thread.atomic_rmw add relaxed gpu %g
  // CHECK-NEXT: gpu.barrier
  // CHECK-NEXT: thread.load %f
  gpu.barrier
  %o = thread.atomic_rmw add relaxed gpu %g, %v : !gpu.ptr<i32, global>, i32
  gpu.barrier
  %y = thread.load %f : !gpu.ptr<f32, global> -> f32
  %wy = arith.addf %w, %y : f32
  thread.store %wy, %f : f32, !gpu.ptr<f32, global>
  return
}
