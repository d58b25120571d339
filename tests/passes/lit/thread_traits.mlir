// RUN: cutec opt %s --passes canonicalize,cse

// The thread dialect's traits: stores stay, reads do not cross a barrier or a
// write that may alias them, pure ops merge and dead reads go.

// CHECK-LABEL: kernel @stores_stay
kernel @stores_stay(%g: !gpu.ptr<f32, global>, %p: i1, %x: f32) {
  %v = thread.from_elements %x, %x, %x, %x : vector<4xf32>
  // CHECK: thread.store %{{.*}}, %g : vector<4xf32>
  thread.store %v, %g : vector<4xf32>, !gpu.ptr<f32, global>
  // CHECK-NEXT: thread.store_if %p, %x, %g
  thread.store_if %p, %x, %g : f32, !gpu.ptr<f32, global>
  // An unused load and an unused predicated load are dead.
  // CHECK-NOT: thread.load
  %dead = thread.load %g : !gpu.ptr<f32, global> -> vector<4xf32>
  %dead2 = thread.load_if %p, %g, %x : !gpu.ptr<f32, global> -> f32
  return
}

// CHECK-LABEL: kernel @barrier_orders_shared_loads
kernel @barrier_orders_shared_loads(%s: !gpu.ptr<f32, shared>, %g: !gpu.ptr<f32, global>) {
  // CHECK: %[[A:.*]] = thread.load %s : !gpu.ptr<f32, shared> -> vector<2xf32>
  %a = thread.load %s : !gpu.ptr<f32, shared> -> vector<2xf32>
  // CHECK-NEXT: gpu.barrier
  gpu.barrier
  // CHECK-NEXT: %[[B:.*]] = thread.load %s : !gpu.ptr<f32, shared> -> vector<2xf32>
  %b = thread.load %s : !gpu.ptr<f32, shared> -> vector<2xf32>
  // CHECK-NEXT: thread.store %[[A]], %g
  thread.store %a, %g : vector<2xf32>, !gpu.ptr<f32, global>
  // CHECK-NEXT: thread.store %[[B]], %g
  thread.store %b, %g : vector<2xf32>, !gpu.ptr<f32, global>
  return
}

// A generic pointer may point into shared memory: a store through it separates
// two shared loads, and a shared store separates two generic loads.
// CHECK-LABEL: kernel @generic_aliases
kernel @generic_aliases(%s: !gpu.ptr<f32, shared>, %x: f32) {
  %gen = thread.cvta %s : !gpu.ptr<f32, shared> to !gpu.ptr<f32, generic>
  // CHECK: thread.load %s
  %a = thread.load %s : !gpu.ptr<f32, shared> -> f32
  // CHECK: thread.store %x, %{{.*}} : f32, !gpu.ptr<f32, generic>
  thread.store %x, %gen : f32, !gpu.ptr<f32, generic>
  // CHECK-NEXT: thread.load %s
  %b = thread.load %s : !gpu.ptr<f32, shared> -> f32
  // CHECK-NEXT: thread.load %{{.*}} : !gpu.ptr<f32, generic>
  %c = thread.load %gen : !gpu.ptr<f32, generic> -> f32
  // CHECK-NEXT: thread.store %x, %s
  thread.store %x, %s : f32, !gpu.ptr<f32, shared>
  // CHECK-NEXT: thread.load %{{.*}} : !gpu.ptr<f32, generic>
  %d = thread.load %gen : !gpu.ptr<f32, generic> -> f32
  %s1 = arith.addf %a, %b : f32
  %s2 = arith.addf %c, %d : f32
  %s3 = arith.addf %s1, %s2 : f32
  thread.store %s3, %s : f32, !gpu.ptr<f32, shared>
  return
}

// Special registers are pure: repeated reads merge. cp.async with an unused
// token, its commit and wait stay, and so does an atom op.
// CHECK-LABEL: kernel @registers_and_async
kernel @registers_and_async(%s: !gpu.ptr<f32, shared>, %g: !gpu.ptr<f32, global>, %a: f32) {
  // CHECK: %[[L:.*]] = gpu.lane_id : index
  %l1 = gpu.lane_id : index
  %l2 = gpu.lane_id : index
  // CHECK-NEXT: %[[N:.*]] = gpu.block_dim x : index
  %n1 = gpu.block_dim x : index
  %n2 = gpu.block_dim x : index
  // CHECK-NEXT: arith.addi %[[L]], %[[L]]
  %x = arith.addi %l1, %l2 : index
  // CHECK-NEXT: arith.addi %[[N]], %[[N]]
  %y = arith.addi %n1, %n2 : index
  %p = thread.ptr_add %g, %x : !gpu.ptr<f32, global>, index
  %q = thread.ptr_add %g, %y : !gpu.ptr<f32, global>, index
  // CHECK: thread.cp_async cg
  %t = thread.cp_async cg %s, %p {bytes = 16 : i32} : !gpu.ptr<f32, shared>, !gpu.ptr<f32, global>
  // CHECK-NEXT: thread.cp_async_commit
  %c = thread.cp_async_commit %t
  // CHECK-NEXT: thread.cp_async_wait
  thread.cp_async_wait %c {pending = 0 : i32}
  // CHECK-NEXT: thread.atom "UniversalFMA_F32F32F32F32"
  %d = thread.atom "UniversalFMA_F32F32F32F32"(%a, %a, %a) {role = "mma"} : (f32, f32, f32) -> (f32)
  // CHECK-NEXT: thread.store
  thread.store %a, %q : f32, !gpu.ptr<f32, global>
  return
}
