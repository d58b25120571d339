// RUN: cutec opt %s --passes lower-to-thread
// An atomic of one element of a global tensor is the thread atomic on that element's
// pointer: a linear index goes through the layout (as cute.load's), a coordinate
// of one index per mode through each mode's stride (no division).

// CHECK-LABEL: kernel @atomics
kernel @atomics(%p: !gpu.ptr<i32, global>, %n: index, %q: !gpu.ptr<f32, global>, %m: index, %ld: index) attributes {reqntid = array<i32: 64, 1, 1>} {
  %t = cute.make_tensor %p, %n : !gpu.ptr<i32, global> -> !cute.tensor<i32, gmem, ?:1>
  %c = cute.make_tensor %q, %m, %n, %ld : !gpu.ptr<f32, global> -> !cute.tensor<f32, gmem, (?,?):(1,?)>
  %i = gpu.thread_id x : index
  %j = gpu.block_id x : index
  %one = arith.constant 1 : i32
  %half = arith.constant 0.5 : f32
  %c0 = arith.constant 0 : index
  // CHECK: %[[I:.*]] = arith.index_cast %i : index to i32
  // CHECK-NEXT: %[[PI:.*]] = thread.ptr_add %p, %[[I]] : !gpu.ptr<i32, global>, i32
  // CHECK-NEXT: %[[OLD:.*]] = thread.atomic_rmw add relaxed gpu %[[PI]], %one : !gpu.ptr<i32, global>, i32
  %old = cute.atomic_rmw %one, %t, %i {kind = "add", sem = "relaxed", scope = "gpu"} : i32, !cute.tensor<i32, gmem, ?:1> -> i32
  // (m, n) = (%i, %j): %i + ld * %j
  // CHECK: %[[J:.*]] = arith.index_cast %j : index to i32
  // CHECK: %[[LD:.*]] = arith.index_cast %ld : index to i32
  // CHECK-NEXT: %[[COL:.*]] = arith.muli %[[J]], %[[LD]] : i32
  // CHECK-NEXT: %[[OFF:.*]] = arith.addi %[[I]], %[[COL]] : i32
  // CHECK-NEXT: %[[PC:.*]] = thread.ptr_add %q, %[[OFF]] : !gpu.ptr<f32, global>, i32
  // CHECK-NEXT: thread.atomic_rmw add release cta %[[PC]], %half : !gpu.ptr<f32, global>, f32
  %sum = cute.atomic_rmw %half, %c, %i, %j {kind = "add", sem = "release", scope = "cta"} : f32, !cute.tensor<f32, gmem, (?,?):(1,?)> -> f32
  // CHECK-NOT: arith.divui
  // CHECK: %[[V:.*]] = thread.atomic_load acquire sys %[[PI]] : !gpu.ptr<i32, global>
  %v = cute.atomic_load %t, %i {sem = "acquire", scope = "sys"} : !cute.tensor<i32, gmem, ?:1> -> i32
  // CHECK-NEXT: %[[MAX:.*]] = thread.atomic_rmw max acq_rel gpu %[[PI]], %[[V]]
  %big = cute.atomic_rmw %v, %t, %i {kind = "max", sem = "acq_rel", scope = "gpu"} : i32, !cute.tensor<i32, gmem, ?:1> -> i32
  // CHECK-NEXT: gpu.fence acq_rel gpu
  gpu.fence acq_rel gpu
  // CHECK-NEXT: thread.atomic_store release gpu %[[MAX]], %p : i32, !gpu.ptr<i32, global>
  cute.atomic_store %big, %t, %c0 {sem = "release", scope = "gpu"} : i32, !cute.tensor<i32, gmem, ?:1>
  // CHECK-NEXT: thread.store %[[OLD]]
  cute.store %old, %t, %c0 : i32, !cute.tensor<i32, gmem, ?:1>
  // CHECK-NOT: cute.
  return
}
