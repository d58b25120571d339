// RUN: cutec opt %s --passes lower-to-thread
// An mbarrier op names an i64 element of an smem tensor: the thread op on that element's
// shared pointer (a linear index through the layout, or one index per mode).

// CHECK-LABEL: kernel @mbarriers
kernel @mbarriers() attributes {reqntid = array<i32: 128, 1, 1>} {
  // CHECK: %[[BARS:.*]] = thread.alloc_shared {bytes = 32 : i64, align = 128 : i64} : !gpu.ptr<i64, shared>
  %bars = cute.alloc_smem : !cute.tensor<i64, smem, 4:1>
  // CHECK: %[[GRID:.*]] = thread.alloc_shared {bytes = 32 : i64, align = 128 : i64} : !gpu.ptr<i64, shared>
  %grid = cute.alloc_smem : !cute.tensor<i64, smem, (2,2):(1,2)>
  %i = gpu.thread_id x : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 96 : i32
  %tx = arith.constant 1024 : i32
  %phase = arith.constant 0 : i32
  // CHECK: %[[I:.*]] = arith.index_cast %i : index to i32
  // CHECK-NEXT: %[[P:.*]] = thread.ptr_add %[[BARS]], %[[I]] : !gpu.ptr<i64, shared>, i32
  // CHECK-NEXT: thread.mbarrier_init %[[P]], %n : !gpu.ptr<i64, shared>, i32
  cute.mbarrier_init %n, %bars, %i : i32, !cute.tensor<i64, smem, 4:1>
  // (1, 1): element 1 + 2 * 1
  // CHECK: %[[C3:.*]] = arith.constant 3 : i32
  // CHECK-NEXT: %[[P3:.*]] = thread.ptr_add %[[GRID]], %[[C3]] : !gpu.ptr<i64, shared>, i32
  // CHECK-NEXT: thread.mbarrier_arrive %[[P3]] : !gpu.ptr<i64, shared>
  cute.mbarrier_arrive %grid, %c1, %c1 : !cute.tensor<i64, smem, (2,2):(1,2)>
  // CHECK-NEXT: thread.mbarrier_arrive_expect_tx %[[P]], %tx : !gpu.ptr<i64, shared>, i32
  cute.mbarrier_arrive_expect_tx %tx, %bars, %i : i32, !cute.tensor<i64, smem, 4:1>
  // CHECK-NEXT: thread.mbarrier_expect_tx %[[P]], %tx : !gpu.ptr<i64, shared>, i32
  cute.mbarrier_expect_tx %tx, %bars, %i : i32, !cute.tensor<i64, smem, 4:1>
  // CHECK-NEXT: thread.mbarrier_wait %[[P]], %phase : !gpu.ptr<i64, shared>, i32
  cute.mbarrier_wait %phase, %bars, %i : i32, !cute.tensor<i64, smem, 4:1>
  // CHECK-NOT: cute.
  return
}
