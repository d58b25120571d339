// RUN: cutec opt %s --passes sink-barriers
// A CTA barrier moves below the global loads after it (and the pure ops
// before them) when the previous barrier of its block leaves no global write
// between them; a shared access, a generic pointer or a global write stops it,
// and a kernel whose barriers are not all in scf.for bodies keeps them all.

// CHECK-LABEL: kernel @mainloop
kernel @mainloop(%g: !gpu.ptr<f32, global>, %s: !gpu.ptr<f32, shared>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %v0 = thread.load %g : !gpu.ptr<f32, global> -> f32
  // CHECK: scf.for
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%v = %v0) -> (f32) {
    // CHECK-NEXT: gpu.barrier
    // CHECK-NEXT: thread.store %{{.*}}, %s
    // CHECK-NEXT: %[[K1:.*]] = arith.addi %k, %c1
    // CHECK-NEXT: %[[P:.*]] = arith.cmpi slt, %[[K1]], %n
    // CHECK-NEXT: %[[Q:.*]] = thread.ptr_add %g, %[[K1]]
    // CHECK-NEXT: %[[W:.*]] = thread.load_if %[[P]], %[[Q]], %z
    // CHECK-NEXT: gpu.barrier
    // CHECK-NEXT: %[[X:.*]] = arith.addf %[[W]], %z
    // CHECK-NEXT: thread.load %s
    gpu.barrier
    thread.store %v, %s : f32, !gpu.ptr<f32, shared>
    gpu.barrier
    %k1 = arith.addi %k, %c1 : index
    %p = arith.cmpi slt, %k1, %n : index
    %q = thread.ptr_add %g, %k1 : !gpu.ptr<f32, global>, index
    %w = thread.load_if %p, %q, %z : !gpu.ptr<f32, global> -> f32
    %x = arith.addf %w, %z : f32
    %y = thread.load %s : !gpu.ptr<f32, shared> -> f32
    %t = arith.addf %x, %y : f32
    scf.yield %t : f32
  }
  thread.store %r, %g : f32, !gpu.ptr<f32, global>
  return
}

// CHECK-LABEL: kernel @global_write_between
kernel @global_write_between(%g: !gpu.ptr<f32, global>, %h: !gpu.ptr<f32, global>) {
  %v = thread.load %g : !gpu.ptr<f32, global> -> f32
  // Another thread's store to %h before this barrier must be seen by the load.
  // CHECK: gpu.barrier
  // CHECK-NEXT: thread.store
  // CHECK-NEXT: gpu.barrier
  // CHECK-NEXT: thread.load %h
  gpu.barrier
  thread.store %v, %h : f32, !gpu.ptr<f32, global>
  gpu.barrier
  %w = thread.load %h : !gpu.ptr<f32, global> -> f32
  thread.store %w, %g : f32, !gpu.ptr<f32, global>
  return
}

// CHECK-LABEL: kernel @no_barrier_before
kernel @no_barrier_before(%g: !gpu.ptr<f32, global>, %s: !gpu.ptr<f32, shared>) {
  // Without a barrier before it in the block, what precedes is unknown.
  // CHECK: thread.store
  // CHECK-NEXT: gpu.barrier
  // CHECK-NEXT: thread.load %g
  %z = arith.constant 0.0 : f32
  thread.store %z, %s : f32, !gpu.ptr<f32, shared>
  gpu.barrier
  %w = thread.load %g : !gpu.ptr<f32, global> -> f32
  thread.store %w, %s : f32, !gpu.ptr<f32, shared>
  return
}

// CHECK-LABEL: kernel @shared_and_generic_stop
kernel @shared_and_generic_stop(%g: !gpu.ptr<f32, global>, %s: !gpu.ptr<f32, shared>, %e: !gpu.ptr<f32, generic>) {
  %z = arith.constant 0.0 : f32
  // CHECK: gpu.barrier
  // CHECK-NEXT: thread.store
  // CHECK-NEXT: gpu.barrier
  // CHECK-NEXT: thread.load %s
  gpu.barrier
  thread.store %z, %s : f32, !gpu.ptr<f32, shared>
  gpu.barrier
  %a = thread.load %s : !gpu.ptr<f32, shared> -> f32
  %b = thread.load %g : !gpu.ptr<f32, global> -> f32
  // A generic address may be shared memory another thread just wrote.
  // CHECK: gpu.barrier
  // CHECK-NEXT: thread.store
  // CHECK-NEXT: gpu.barrier
  // CHECK-NEXT: thread.load %e
  gpu.barrier
  thread.store %a, %s : f32, !gpu.ptr<f32, shared>
  gpu.barrier
  %c = thread.load %e : !gpu.ptr<f32, generic> -> f32
  %d = thread.load %g : !gpu.ptr<f32, global> -> f32
  %t = arith.addf %b, %c : f32
  %u = arith.addf %t, %d : f32
  thread.store %u, %g : f32, !gpu.ptr<f32, global>
  return
}

// CHECK-LABEL: kernel @barrier_under_if
kernel @barrier_under_if(%g: !gpu.ptr<f32, global>, %s: !gpu.ptr<f32, shared>, %c: i1) {
  %z = arith.constant 0.0 : f32
  // Threads may meet at different barriers: no barrier of this kernel moves.
  // CHECK: gpu.barrier
  // CHECK-NEXT: thread.store
  // CHECK-NEXT: gpu.barrier
  // CHECK-NEXT: thread.load %g
  gpu.barrier
  thread.store %z, %s : f32, !gpu.ptr<f32, shared>
  gpu.barrier
  %w = thread.load %g : !gpu.ptr<f32, global> -> f32
  scf.if %c {
    gpu.barrier
    scf.yield
  }
  thread.store %w, %s : f32, !gpu.ptr<f32, shared>
  return
}
