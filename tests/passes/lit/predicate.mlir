// RUN: cutec opt %s --passes predicate
// M is not known to be a multiple of the tile (8): the copy from the partial tile
// is guarded by an identity tensor viewed through the same ops (zero-filled into
// registers; {residue}: the predicate is an in-bounds test), and the axpby into it
// is masked. N % 8 == 0 is known: untouched.

// CHECK-LABEL: kernel @scale
kernel @scale(%x: !gpu.ptr<f32, global>, %M: index, %y: !gpu.ptr<f32, global>, %a: f32, %b: f32) attributes {reqntid = array<i32: 4, 1, 1>} {
  %bid_x = gpu.block_id x : index
  %tid_x = gpu.thread_id x : index
  // CHECK: %x_1 = cute.make_tensor %x, %M
  // CHECK-NEXT: %[[ID:.*]] = cute.make_identity_tensor %M : !cute.coord_tensor<1, ?:E0>
  %x_1 = cute.make_tensor %x, %M : !gpu.ptr<f32, global> -> !cute.tensor<f32, gmem, ?:1>
  %y_1 = cute.make_tensor %y, %M : !gpu.ptr<f32, global> -> !cute.tensor<f32, gmem, ?:1>
  // CHECK: %gx = cute.local_tile %x_1
  // CHECK-NEXT: %[[CG:.*]] = cute.local_tile %[[ID]], %bid_x {tiler = #cute.tuple<(8)>, coord = #cute.tuple<(?)>} : !cute.coord_tensor<1, ?:E0> -> !cute.coord_tensor<1, ((8)):((E0))>
  %gx = cute.local_tile %x_1, %bid_x {tiler = #cute.tuple<(8)>, coord = #cute.tuple<(?)>} : !cute.tensor<f32, gmem, ?:1> -> !cute.tensor<f32, gmem, ((8)):((1))>
  %gy = cute.local_tile %y_1, %bid_x {tiler = #cute.tuple<(8)>, coord = #cute.tuple<(?)>} : !cute.tensor<f32, gmem, ?:1> -> !cute.tensor<f32, gmem, ((8)):((1))>
  // CHECK: %tx = cute.local_partition %gx
  // CHECK-NEXT: %[[CT:.*]] = cute.local_partition %[[CG]], %tid_x {{.*}} -> !cute.coord_tensor<1, ((2)):((4*E0))>
  %tx = cute.local_partition %gx, %tid_x {thr_layout = #cute.layout<4:1>} : !cute.tensor<f32, gmem, ((8)):((1))> -> !cute.tensor<f32, gmem, ((2)):((4))>
  %ty = cute.local_partition %gy, %tid_x {thr_layout = #cute.layout<4:1>} : !cute.tensor<f32, gmem, ((8)):((1))> -> !cute.tensor<f32, gmem, ((2)):((4))>
  %r = cute.make_fragment : !cute.tensor<f32, rmem, ((2)):((1))>
  // CHECK: %[[P:.*]] = cute.make_fragment : !cute.tensor<i1, rmem, ((2)):((1))>
  // CHECK: %[[C0:.*]] = cute.load_coord %[[CT]], %{{.*}} {mode = 0 : i64}
  // CHECK-NEXT: %[[IN0:.*]] = arith.cmpi slt, %[[C0]], %M : index
  // CHECK-NEXT: cute.store %[[IN0]], %[[P]]
  // CHECK: cute.copy_if %[[P]], %tx, %r {residue, zfill}
  cute.copy %tx, %r : !cute.tensor<f32, gmem, ((2)):((4))>, !cute.tensor<f32, rmem, ((2)):((1))>
  // CHECK: cute.axpby %a, %r, %b, %ty, %{{.*}} : f32, {{.*}}, !cute.tensor<i1, rmem, ((2)):((1))>
  cute.axpby %a, %r, %b, %ty : f32, !cute.tensor<f32, rmem, ((2)):((1))>, f32, !cute.tensor<f32, gmem, ((2)):((4))>
  return
}

// CHECK-LABEL: kernel @full
kernel @full(%x: !gpu.ptr<f32, global>, %N: index) attributes {reqntid = array<i32: 4, 1, 1>} {
  %bid_x = gpu.block_id x : index
  %tid_x = gpu.thread_id x : index
  // CHECK-NOT: make_identity_tensor
  %x_1 = cute.make_tensor %x, %N {div = array<i64: 8>} : !gpu.ptr<f32, global> -> !cute.tensor<f32, gmem, ?:1>
  %gx = cute.local_tile %x_1, %bid_x {tiler = #cute.tuple<(8)>, coord = #cute.tuple<(?)>} : !cute.tensor<f32, gmem, ?:1> -> !cute.tensor<f32, gmem, ((8)):((1))>
  %tx = cute.local_partition %gx, %tid_x {thr_layout = #cute.layout<4:1>} : !cute.tensor<f32, gmem, ((8)):((1))> -> !cute.tensor<f32, gmem, ((2)):((4))>
  %r = cute.make_fragment : !cute.tensor<f32, rmem, ((2)):((1))>
  // CHECK: cute.copy %tx, %r
  cute.copy %tx, %r : !cute.tensor<f32, gmem, ((2)):((4))>, !cute.tensor<f32, rmem, ((2)):((1))>
  return
}
