// The cute mbarrier ops: an i64 element of an smem tensor, by a linear index or per mode.
module attributes {target = "sm_90a"} {
  kernel @k(%out: !gpu.ptr<f32, global>, %M: index) attributes {reqntid = array<i32: 128, 1, 1>, grid = ["1", "1", "1"]} {
    %tid_x = gpu.thread_id x : index
    %bars = cute.alloc_smem : !cute.tensor<i64, smem, (2,2):(1,2)>
    %0 = arith.constant 2 : index
    %i = arith.remsi %tid_x, %0 : index
    %1 = arith.addi %i, %0 : index
    %2 = arith.constant 96 : i32
    cute.mbarrier_init %2, %bars, %1 : i32, !cute.tensor<i64, smem, (2,2):(1,2)>
    %3 = arith.constant 3 : index
    cute.mbarrier_arrive %bars, %3 : !cute.tensor<i64, smem, (2,2):(1,2)>
    %4 = arith.constant 1024 : i32
    cute.mbarrier_arrive_expect_tx %4, %bars, %i : i32, !cute.tensor<i64, smem, (2,2):(1,2)>
    %5 = arith.muli %i, %0 : index
    %6 = arith.constant 1 : index
    %7 = arith.addi %5, %6 : index
    %8 = arith.constant 16 : i32
    cute.mbarrier_expect_tx %8, %bars, %7 : i32, !cute.tensor<i64, smem, (2,2):(1,2)>
    %9 = arith.constant 4 : index
    %10 = arith.divsi %tid_x, %9 : index
    %11 = arith.index_cast %10 : index to i32
    cute.mbarrier_wait %11, %bars, %i : i32, !cute.tensor<i64, smem, (2,2):(1,2)>
    return
  }
}
