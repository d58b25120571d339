// RUN: cutec opt %s --passes lower-to-thread
// cute ops become one thread's loads, stores and arithmetic. Each view's offset
// from its root is materialised once (32-bit, so the kernel records
// offsets = 32), each element is that base plus its layout's offset; the
// register fragment is a private array (promote-registers makes it SSA).

// CHECK-LABEL: kernel @scale
// CHECK-SAME: offsets = 32 : i64
kernel @scale(%x: !gpu.ptr<f32, global>, %y: !gpu.ptr<f32, global>, %a: f32, %b: f32) attributes {reqntid = array<i32: 4, 1, 1>, grid = ["1", "1", "1"]} {
  %tid_x = gpu.thread_id x : index
  %x_1 = cute.make_tensor %x : !gpu.ptr<f32, global> -> !cute.tensor<f32, gmem, 16:1>
  %y_1 = cute.make_tensor %y : !gpu.ptr<f32, global> -> !cute.tensor<f32, gmem, 16:1>
  %tx = cute.local_partition %x_1, %tid_x {thr_layout = #cute.layout<4:1>} : !cute.tensor<f32, gmem, 16:1> -> !cute.tensor<f32, gmem, ((4)):((4))>
  %ty = cute.local_partition %y_1, %tid_x {thr_layout = #cute.layout<4:1>} : !cute.tensor<f32, gmem, 16:1> -> !cute.tensor<f32, gmem, ((4)):((4))>
  // CHECK: %[[R:.*]] = thread.alloc_local {bytes = 16 : i64, align = 16 : i64} : !gpu.ptr<f32, local>
  %r = cute.make_fragment : !cute.tensor<f32, rmem, ((4)):((1))>
  // The thread's offset, tid % 4, once; then x[off + 4*i] → r[i].
  // CHECK: %[[TID:.*]] = arith.index_cast %tid_x : index to i32
  // CHECK: %[[OFF:.*]] = arith.andi %[[TID]], %{{.*}} : i32
  // CHECK: %[[X0:.*]] = thread.ptr_add %x, %[[OFF]] : !gpu.ptr<f32, global>, i32
  // CHECK: %[[V0:.*]] = thread.load %[[X0]] : !gpu.ptr<f32, global> -> f32
  // CHECK: thread.store %[[V0]], %[[R]] : f32, !gpu.ptr<f32, local>
  // CHECK: %[[C4:.*]] = arith.constant 4 : i32
  // CHECK: %[[X1:.*]] = thread.ptr_add %[[X0]], %[[C4]] : !gpu.ptr<f32, global>, i32
  // CHECK: thread.load %[[X1]]
  cute.copy %tx, %r : !cute.tensor<f32, gmem, ((4)):((4))>, !cute.tensor<f32, rmem, ((4)):((1))>
  // axpby never reads y when beta == 0 (it may hold NaN).
  // CHECK: %[[ZERO:.*]] = arith.constant 0.0 : f32
  // CHECK: %[[BZ:.*]] = arith.cmpf oeq, %b, %[[ZERO]] : f32
  // CHECK: scf.if %[[BZ]] {
  // CHECK-NOT: thread.load {{.*}}global
  // CHECK: arith.mulf %a
  // CHECK: thread.store
  // CHECK: } else {
  // CHECK: %[[AX:.*]] = arith.mulf %a
  // CHECK: %[[Y:.*]] = thread.load {{.*}} : !gpu.ptr<f32, global> -> f32
  // CHECK: arith.fma %b, %[[Y]], %[[AX]] : f32
  cute.axpby %a, %r, %b, %ty : f32, !cute.tensor<f32, rmem, ((4)):((1))>, f32, !cute.tensor<f32, gmem, ((4)):((4))>
  // CHECK-NOT: cute.
  return
}

// A named 128-bit UniversalCopy moves 4 elements per access; shared memory is
// a static 128-byte-aligned array; a gemm is FMAs over (V,M,K) x (V,N,K).
// CHECK-LABEL: kernel @vec_and_gemm
kernel @vec_and_gemm(%g: !gpu.ptr<f32, global>) attributes {reqntid = array<i32: 1, 1, 1>} {
  %tid = gpu.thread_id x : index
  %t = cute.make_tiled_copy : !cute.tiled_copy<"UniversalCopy<uint128_t>", f32, (1,4):(4,1), (4,1)>
  %gt = cute.make_tensor %g : !gpu.ptr<f32, global> -> !cute.tensor<f32, gmem, (4,2):(1,4)>
  // CHECK: %[[S:.*]] = thread.alloc_shared {bytes = 32 : i64, align = 128 : i64} : !gpu.ptr<f32, shared>
  %s = cute.alloc_smem : !cute.tensor<f32, smem, (4,2):(1,4)>
  // CHECK: thread.load %g : !gpu.ptr<f32, global> -> vector<4xf32>
  // CHECK: thread.store %{{.*}}, %[[S]] : vector<4xf32>, !gpu.ptr<f32, shared>
  cute.copy %t, %gt, %s : !cute.tiled_copy<"UniversalCopy<uint128_t>", f32, (1,4):(4,1), (4,1)>, !cute.tensor<f32, gmem, (4,2):(1,4)>, !cute.tensor<f32, smem, (4,2):(1,4)>
  %c = cute.make_fragment : !cute.tensor<f32, rmem, (2,2):(1,2)>
  // C(m,n) += A(m,k) * B(n,k), A = B = the first two elements of s, K = 1.
  %a = cute.slice %s {coord = #cute.tuple<(_,_)>} : !cute.tensor<f32, smem, (4,2):(1,4)> -> !cute.tensor<f32, smem, (4,2):(1,4)>
  // CHECK-COUNT-4: arith.fma
  // CHECK-NOT: arith.fma
  %sub1 = cute.local_tile %a {tiler = #cute.tuple<(2,1)>, coord = #cute.tuple<(0,0)>} : !cute.tensor<f32, smem, (4,2):(1,4)> -> !cute.tensor<f32, smem, (2,1):(1,0)>
  cute.gemm %sub1, %sub1, %c : !cute.tensor<f32, smem, (2,1):(1,0)>, !cute.tensor<f32, smem, (2,1):(1,0)>, !cute.tensor<f32, rmem, (2,2):(1,2)>
  return
}
