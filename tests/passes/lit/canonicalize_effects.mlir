// RUN: cutec opt %s --passes canonicalize,cse
// Nothing observable is deleted: stores, barriers, an async copy whose token
// is unused, and a commit whose group nobody waits on all stay. Dead reads go.

// CHECK-LABEL: kernel @keep
kernel @keep(%g: !gpu.ptr<f32, global>, %s: !gpu.ptr<f32, shared>) {
  %v = thread.load %g : !gpu.ptr<f32, global> -> f32
  %unused = thread.load %s : !gpu.ptr<f32, shared> -> f32
  // CHECK-NOT: %unused
  // CHECK: thread.store
  thread.store %v, %s : f32, !gpu.ptr<f32, shared>
  // CHECK-NEXT: gpu.barrier
  gpu.barrier
  // CHECK-NEXT: %{{.*}} = thread.cp_async
  %tok = thread.cp_async %s, %g {bytes = 16 : i32} : !gpu.ptr<f32, shared>, !gpu.ptr<f32, global>
  // CHECK-NEXT: %{{.*}} = thread.cp_async_commit
  %grp = thread.cp_async_commit
  // CHECK-NEXT: return
  return
}

// A loop with no results whose body stores is kept; one that only computes goes.
// CHECK-LABEL: kernel @loops
kernel @loops(%g: !gpu.ptr<f32, global>, %n: index, %x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: scf.for
  // CHECK: thread.store
  scf.for %i = %c0 to %n step %c1 {
    thread.store %x, %g : f32, !gpu.ptr<f32, global>
    scf.yield
  }
  // CHECK-NOT: scf.for
  scf.for %j = %c0 to %n step %c1 {
    %y = arith.mulf %x, %x : f32
    scf.yield
  }
  return
}
