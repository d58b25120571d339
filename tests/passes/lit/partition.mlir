// RUN: cutec opt %s --passes partition
// Each thread's slice becomes an explicit view of the root tensor: the fragment
// layout in the type, the offset as index arithmetic of the thread and block
// indices, dynamic layout leaves as operands.

// CHECK-LABEL: kernel @copy
kernel @copy(%S: !gpu.ptr<f32, global>, %M: index, %N: index) attributes {reqntid = array<i32: 256, 1, 1>} {
  %bid_x = gpu.block_id x : index
  %tid_x = gpu.thread_id x : index
  %0 = cute.make_tiled_copy : !cute.tiled_copy<"UniversalCopy<uint128_t>", f32, (256,4):(4,1), (128,8)>
  %S_1 = cute.make_tensor %S, %M, %N, %M {div = array<i64: 128, 8, 128>, align = 16 : i64} : !gpu.ptr<f32, global> -> !cute.tensor<f32, gmem, (?,?):(1,?)>
  %tile = cute.local_tile %S_1, %bid_x {tiler = #cute.tuple<(128,8)>, coord = #cute.tuple<(?,0)>} : !cute.tensor<f32, gmem, (?,?):(1,?)> -> !cute.tensor<f32, gmem, (128,8):(1,?)>
  // Thread t owns rows 4*(t % 32) .. +3 of column t / 32 of block bid_x's tile:
  // offset 128*bid_x + M*(t >> 5) + 4*(t & 31).
  // CHECK-NOT: cute.partition
  // CHECK-DAG: %[[HI:.*]] = arith.shrui %tid_x, %{{.*}} : index
  // CHECK-DAG: %[[COL:.*]] = arith.muli %M, %[[HI]] : index
  // CHECK-DAG: %[[LO:.*]] = arith.andi %tid_x, %{{.*}} : index
  // CHECK: arith.addi
  // CHECK: %[[OFF:.*]] = arith.addi %{{.*}}, %{{.*}} : index
  // CHECK-NEXT: %t = cute.view %S_1, %[[OFF]] : !cute.tensor<f32, gmem, (?,?):(1,?)> -> !cute.tensor<f32, gmem, ((4,1),1,1):((1,0),0,0)>
  %t = cute.partition %tile, %0, %tid_x {operand = "S"} : !cute.tensor<f32, gmem, (128,8):(1,?)>, !cute.tiled_copy<"UniversalCopy<uint128_t>", f32, (256,4):(4,1), (128,8)> -> !cute.tensor<f32, gmem, ((4,1),1,1):((1,0),0,0)>
  %r = cute.make_fragment : !cute.tensor<f32, rmem, ((4,1),1,1):((1,0),0,0)>
  // CHECK: cute.copy %0, %t, %r
  cute.copy %0, %t, %r : !cute.tiled_copy<"UniversalCopy<uint128_t>", f32, (256,4):(4,1), (128,8)>, !cute.tensor<f32, gmem, ((4,1),1,1):((1,0),0,0)>, !cute.tensor<f32, rmem, ((4,1),1,1):((1,0),0,0)>
  return
}
