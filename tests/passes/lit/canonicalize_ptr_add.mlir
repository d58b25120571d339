// RUN: cutec opt %s --passes canonicalize
// A pointer's constant offset is added last (thread.ptr_add's ConstantOffsetLast):
// accesses that differ by a constant share one pointer, and ptxas folds the
// constant into the instruction's address offset.

// CHECK-LABEL: kernel @offsets
kernel @offsets(%s: !gpu.ptr<f32, shared>, %x: i32) {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %c48 = arith.constant 48 : i32
  %c64 = arith.constant 64 : i32
  // ptr_add(p, x + 64) -> ptr_add(ptr_add(p, x), 64)
  // CHECK-DAG: %[[C64:.*]] = arith.constant 64 : i32
  // CHECK-DAG: %[[C16:.*]] = arith.constant 16 : i32
  // CHECK: %[[PX:.*]] = thread.ptr_add %s, %x : !gpu.ptr<f32, shared>, i32
  // CHECK-NEXT: %[[A:.*]] = thread.ptr_add %[[PX]], %[[C64]]
  // CHECK-NEXT: %[[VA:.*]] = thread.load %[[A]]
  %xo = arith.addi %x, %c64 : i32
  %a = thread.ptr_add %s, %xo : !gpu.ptr<f32, shared>, i32
  %va = thread.load %a : !gpu.ptr<f32, shared> -> f32
  // ptr_add(ptr_add(p, 16), x) -> ptr_add(ptr_add(p, x), 16)
  // CHECK-NEXT: %[[PX2:.*]] = thread.ptr_add %s, %x
  // CHECK-NEXT: %[[B:.*]] = thread.ptr_add %[[PX2]], %[[C16]]
  %p16 = thread.ptr_add %s, %c16 : !gpu.ptr<f32, shared>, i32
  %b = thread.ptr_add %p16, %x : !gpu.ptr<f32, shared>, i32
  // ptr_add(ptr_add(p, 16), 48) -> ptr_add(p, 64); ptr_add(p, 0) -> p
  // CHECK-NEXT: %[[SUM:.*]] = arith.constant 64 : i32
  // CHECK-NEXT: %[[C:.*]] = thread.ptr_add %s, %[[SUM]]
  // CHECK-NEXT: thread.store %[[VA]], %[[B]]
  // CHECK-NEXT: thread.store %[[VA]], %[[C]]
  // CHECK-NEXT: thread.store %[[VA]], %s
  %c = thread.ptr_add %p16, %c48 : !gpu.ptr<f32, shared>, i32
  %z = thread.ptr_add %s, %c0 : !gpu.ptr<f32, shared>, i32
  thread.store %va, %b : f32, !gpu.ptr<f32, shared>
  thread.store %va, %c : f32, !gpu.ptr<f32, shared>
  thread.store %va, %z : f32, !gpu.ptr<f32, shared>
  return
}

// An i32 offset wraps where pointer arithmetic does not: x - 4 keeps its add (x may
// be below -2^31 + 4 once split), and two constants whose sum leaves i32 stay apart.
// CHECK-LABEL: kernel @wrapping
kernel @wrapping(%s: !gpu.ptr<f32, shared>, %x: i32) {
  %cm4 = arith.constant -4 : i32
  %big = arith.constant 2147483647 : i32
  %c1 = arith.constant 1 : i32
  // CHECK: %[[XO:.*]] = arith.addi %x, %{{.*}} : i32
  // CHECK-NEXT: %[[A:.*]] = thread.ptr_add %s, %[[XO]]
  %xo = arith.addi %x, %cm4 : i32
  %a = thread.ptr_add %s, %xo : !gpu.ptr<f32, shared>, i32
  %v = thread.load %a : !gpu.ptr<f32, shared> -> f32
  // CHECK: %[[P:.*]] = thread.ptr_add %s, %{{.*}} : !gpu.ptr<f32, shared>, i32
  // CHECK-NEXT: %[[Q:.*]] = thread.ptr_add %[[P]], %{{.*}} : !gpu.ptr<f32, shared>, i32
  // CHECK-NEXT: thread.store %{{.*}}, %[[Q]]
  %p = thread.ptr_add %s, %big : !gpu.ptr<f32, shared>, i32
  %q = thread.ptr_add %p, %c1 : !gpu.ptr<f32, shared>, i32
  thread.store %v, %q : f32, !gpu.ptr<f32, shared>
  return
}
