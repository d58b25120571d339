// RUN: cutec opt %s --passes cse

// CHECK-LABEL: func @pure
func @pure(%a: i32, %b: i32) -> (i32, i32, i32) {
  // CHECK: %[[X:.*]] = arith.addi %a, %b : i32
  %x = arith.addi %a, %b : i32
  // Commutative: b + a is a + b.
  %y = arith.addi %b, %a : i32
  // CHECK-NEXT: %[[S:.*]] = arith.subi %a, %b : i32
  %s = arith.subi %a, %b : i32
  // CHECK-NEXT: %[[T:.*]] = arith.subi %b, %a : i32
  %t = arith.subi %b, %a : i32
  // CHECK-NEXT: return %[[X]], %[[X]], %[[T]]
  return %x, %y, %t : i32, i32, i32
}

// A pure expression in a nested region reuses the one that dominates it.
// CHECK-LABEL: func @nested
func @nested(%a: i32, %p: i1) -> i32 {
  // CHECK: %[[X:.*]] = arith.muli %a, %a
  %x = arith.muli %a, %a : i32
  %r = scf.if %p -> (i32) {
    %y = arith.muli %a, %a : i32
    // CHECK: scf.yield %[[X]] : i32
    scf.yield %y : i32
  } else {
    scf.yield %a : i32
  }
  return %r : i32
}

// Two loads of the same address merge when nothing writes between them ...
// CHECK-LABEL: kernel @loads
kernel @loads(%s: !gpu.ptr<f32, shared>, %g: !gpu.ptr<f32, global>, %x: f32, %n: index) {
  // CHECK: %[[L1:.*]] = thread.load %s
  %l1 = thread.load %s : !gpu.ptr<f32, shared> -> f32
  %l2 = thread.load %s : !gpu.ptr<f32, shared> -> f32
  // CHECK-NEXT: thread.store %[[L1]], %g
  thread.store %l2, %g : f32, !gpu.ptr<f32, global>
  // ... and a store to another address space does not separate them,
  // CHECK-NEXT: thread.store %[[L1]], %g
  %l3 = thread.load %s : !gpu.ptr<f32, shared> -> f32
  thread.store %l3, %g : f32, !gpu.ptr<f32, global>
  // ... but a barrier does,
  // CHECK-NEXT: gpu.barrier
  gpu.barrier
  // CHECK-NEXT: %[[L4:.*]] = thread.load %s
  %l4 = thread.load %s : !gpu.ptr<f32, shared> -> f32
  // CHECK-NEXT: thread.store %[[L4]], %g
  thread.store %l4, %g : f32, !gpu.ptr<f32, global>
  // ... and so do a store to shared memory,
  // CHECK-NEXT: thread.store %x, %s
  thread.store %x, %s : f32, !gpu.ptr<f32, shared>
  // CHECK-NEXT: %[[L5:.*]] = thread.load %s
  %l5 = thread.load %s : !gpu.ptr<f32, shared> -> f32
  thread.store %l5, %g : f32, !gpu.ptr<f32, global>
  // ... and a loop whose body writes shared memory,
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    thread.store %x, %s : f32, !gpu.ptr<f32, shared>
    scf.yield
  }
  // CHECK: scf.yield
  // CHECK-NEXT: }
  // CHECK-NEXT: %[[L6:.*]] = thread.load %s
  %l6 = thread.load %s : !gpu.ptr<f32, shared> -> f32
  thread.store %l6, %g : f32, !gpu.ptr<f32, global>
  // ... and an async copy into shared memory and its wait.
  %tok = thread.cp_async %s, %g {bytes = 16 : i32} : !gpu.ptr<f32, shared>, !gpu.ptr<f32, global>
  %grp = thread.cp_async_commit %tok
  thread.cp_async_wait %grp {pending = 0 : i32}
  // CHECK: thread.cp_async_wait
  // CHECK-NEXT: %[[L7:.*]] = thread.load %s
  %l7 = thread.load %s : !gpu.ptr<f32, shared> -> f32
  // CHECK-NEXT: thread.store %[[L7]], %g
  thread.store %l7, %g : f32, !gpu.ptr<f32, global>
  return
}

// Barriers and async copies are never merged, even when identical.
// CHECK-LABEL: kernel @no_merge
kernel @no_merge(%s: !gpu.ptr<f32, shared>, %g: !gpu.ptr<f32, global>) {
  // CHECK-COUNT-2: gpu.barrier
  gpu.barrier
  gpu.barrier
  // CHECK-COUNT-2: thread.cp_async %s
  %t1 = thread.cp_async %s, %g {bytes = 16 : i32} : !gpu.ptr<f32, shared>, !gpu.ptr<f32, global>
  %t2 = thread.cp_async %s, %g {bytes = 16 : i32} : !gpu.ptr<f32, shared>, !gpu.ptr<f32, global>
  %grp = thread.cp_async_commit %t1, %t2
  return
}
