// RUN: cutec opt %s --passes order-shared-loads
// A shared load directly in an scf.for body becomes {ordered} (ld.relaxed.cta.shared)
// unless another shared load of the body reads the elements next to it and the two
// could be one aligned vector load (ptxas merges those; it cannot merge relaxed ones).
// Global loads, loads outside loops and loads already vectors of 4 are judged alike.

// CHECK-LABEL: kernel @fragments
kernel @fragments(%G: !gpu.ptr<f32, global>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c129 = arith.constant 129 : index
  %tid = gpu.thread_id x : index
  %s = thread.alloc_shared {bytes = 4096 : i64, align = 128 : i64} : !gpu.ptr<f32, shared>
  // Stride-16 fragments (sgemm_2 NT): no neighbours.
  %m = arith.andi %tid, %c16 : index
  %a0 = thread.ptr_add %s, %m : !gpu.ptr<f32, shared>, index
  %a1 = thread.ptr_add %a0, %c16 : !gpu.ptr<f32, shared>, index
  // Four contiguous elements from a 16-byte aligned start (sgemm_1 TN): mergeable.
  %c32 = arith.constant 32 : index
  %row = arith.muli %tid, %c32 : index
  %b0 = thread.ptr_add %s, %row : !gpu.ptr<f32, shared>, index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %b1 = thread.ptr_add %b0, %c1 : !gpu.ptr<f32, shared>, index
  %b2 = thread.ptr_add %b0, %c2 : !gpu.ptr<f32, shared>, index
  %b3 = thread.ptr_add %b0, %c3 : !gpu.ptr<f32, shared>, index
  // Contiguous but from a row of a 129-padded layout: alignment unknown, not mergeable.
  %prow = arith.muli %tid, %c129 : index
  %p0 = thread.ptr_add %s, %prow : !gpu.ptr<f32, shared>, index
  %p1 = thread.ptr_add %p0, %c1 : !gpu.ptr<f32, shared>, index
  %z = arith.constant 0.0 : f32
  // CHECK: thread.load %{{.*}} : !gpu.ptr<f32, shared> -> f32
  %outside = thread.load %a0 : !gpu.ptr<f32, shared> -> f32
  // CHECK: scf.for
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %outside) -> (f32) {
    // CHECK-NEXT: thread.load %a0 {ordered}
    // CHECK-NEXT: thread.load %a1 {ordered}
    // CHECK-NEXT: thread.load %b0 :
    // CHECK-NEXT: thread.load %b1 :
    // CHECK-NEXT: thread.load %b2 :
    // CHECK-NEXT: thread.load %b3 :
    // CHECK-NEXT: thread.load %p0 {ordered}
    // CHECK-NEXT: thread.load %p1 {ordered}
    // CHECK-NEXT: thread.load %G :
    %x0 = thread.load %a0 : !gpu.ptr<f32, shared> -> f32
    %x1 = thread.load %a1 : !gpu.ptr<f32, shared> -> f32
    %y0 = thread.load %b0 : !gpu.ptr<f32, shared> -> f32
    %y1 = thread.load %b1 : !gpu.ptr<f32, shared> -> f32
    %y2 = thread.load %b2 : !gpu.ptr<f32, shared> -> f32
    %y3 = thread.load %b3 : !gpu.ptr<f32, shared> -> f32
    %q0 = thread.load %p0 : !gpu.ptr<f32, shared> -> f32
    %q1 = thread.load %p1 : !gpu.ptr<f32, shared> -> f32
    %g = thread.load %G : !gpu.ptr<f32, global> -> f32
    %s0 = arith.addf %x0, %x1 : f32
    %s1 = arith.addf %y0, %y1 : f32
    %s2 = arith.addf %y2, %y3 : f32
    %s3 = arith.addf %q0, %q1 : f32
    %s4 = arith.addf %s0, %s1 : f32
    %s5 = arith.addf %s2, %s3 : f32
    %s6 = arith.addf %s4, %s5 : f32
    %s7 = arith.addf %s6, %g : f32
    %t = arith.addf %acc, %s7 : f32
    scf.yield %t : f32
  }
  thread.store %r, %G : f32, !gpu.ptr<f32, global>
  return
}

// CHECK-LABEL: kernel @vectors
kernel @vectors(%G: !gpu.ptr<f32, global>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %s = thread.alloc_shared {bytes = 4096 : i64, align = 16 : i64} : !gpu.ptr<f32, shared>
  %v1 = thread.ptr_add %s, %c4 : !gpu.ptr<f32, shared>, index
  %z = arith.constant 0.0 : f32
  // Two vectors of 4 side by side: 32 bytes, more than one load can take.
  // CHECK: scf.for
  // CHECK-NEXT: thread.load %s {ordered} : !gpu.ptr<f32, shared> -> vector<4xf32>
  // CHECK-NEXT: thread.load %v1 {ordered} : !gpu.ptr<f32, shared> -> vector<4xf32>
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %z) -> (f32) {
    %a = thread.load %s : !gpu.ptr<f32, shared> -> vector<4xf32>
    %b = thread.load %v1 : !gpu.ptr<f32, shared> -> vector<4xf32>
    %a0 = thread.extract %a {pos = 0 : i64} : vector<4xf32>
    %b0 = thread.extract %b {pos = 0 : i64} : vector<4xf32>
    %t0 = arith.addf %a0, %b0 : f32
    %t = arith.addf %acc, %t0 : f32
    scf.yield %t : f32
  }
  thread.store %r, %G : f32, !gpu.ptr<f32, global>
  return
}
