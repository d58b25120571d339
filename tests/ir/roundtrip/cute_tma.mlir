// The cute TMA ops (frontend output of tests/cpu/data/tma_tile.cute's tile_mn_sw128): the
// atom over A, its coordinate tensor, group_modes and tma_partition views, the copy.
module attributes {target = "sm_90a"} {
  kernel @tile_mn_sw128(%A: !gpu.ptr<f16, global>, %M: index, %K: index, %ldA: index, %D: !gpu.ptr<f16, global>, %ldD: index) attributes {reqntid = array<i32: 128, 1, 1>, params = {BM = 128 : i64, BK = 16 : i64}, grid = ["ceil_div(M,128)", "ceil_div(K,16)", "1"]} {
    %bid_x = gpu.block_id x : index
    %bid_y = gpu.block_id y : index
    %tid_x = gpu.thread_id x : index
    %A_1 = cute.make_tensor %A, %M, %K, %ldA {div = array<i64: 1, 1, 8>, align = 16 : i64} : !gpu.ptr<f16, global> -> !cute.tensor<f16, gmem, (?,?):(1,?)>
    %D_1 = cute.make_tensor %D, %M, %K, %ldD : !gpu.ptr<f16, global> -> !cute.tensor<f16, gmem, (?,?):(1,?)>
    %0 = cute.make_tma_atom %A_1 {map = "tma_A"} : !cute.tensor<f16, gmem, (?,?):(1,?)> -> !cute.tma_atom<load, f16, (64,8), (0,1), 128B>
    %sA = cute.alloc_smem : !cute.tensor<f16, smem, Sw<3,3,3> o 0 o ((64,2),(8,2)):((1,512),(64,1024))>
    %mA = cute.get_tma_tensor %0, %M, %K : !cute.tma_atom<load, f16, (64,8), (0,1), 128B> -> !cute.coord_tensor<2, (?,?):(E0,E1)>
    %gA = cute.local_tile %mA, %bid_x, %bid_y {tiler = #cute.tuple<(128,16)>, coord = #cute.tuple<(?,?)>} : !cute.coord_tensor<2, (?,?):(E0,E1)> -> !cute.coord_tensor<2, (128,16):(E0,E1)>
    %gD = cute.local_tile %D_1, %bid_x, %bid_y {tiler = #cute.tuple<(128,16)>, coord = #cute.tuple<(?,?)>} : !cute.tensor<f16, gmem, (?,?):(1,?)> -> !cute.tensor<f16, gmem, (128,16):(1,?)>
    %bar = cute.alloc_smem : !cute.tensor<i64, smem, 1:0>
    %1 = cute.group_modes %sA {begin = 0 : i64, end = 2 : i64} : !cute.tensor<f16, smem, Sw<3,3,3> o 0 o ((64,2),(8,2)):((1,512),(64,1024))> -> !cute.tensor<f16, smem, Sw<3,3,3> o 0 o (((64,2),(8,2))):(((1,512),(64,1024)))>
    %2 = cute.group_modes %gA {begin = 0 : i64, end = 2 : i64} : !cute.coord_tensor<2, (128,16):(E0,E1)> -> !cute.coord_tensor<2, ((128,16)):((E0,E1))>
    %tAgA = cute.tma_partition %2 {tile = #cute.layout<((64,8),(2,2)):((1,128),(64,1024))>} : !cute.coord_tensor<2, ((128,16)):((E0,E1))> -> !cute.coord_tensor<2, (((64,8),(2,2))):(((E0,E1),(64*E0,8*E1)))>
    %tAsA = cute.tma_partition %1 {tile = #cute.layout<((64,8),(2,2)):((1,128),(64,1024))>} : !cute.tensor<f16, smem, Sw<3,3,3> o 0 o (((64,2),(8,2))):(((1,512),(64,1024)))> -> !cute.tensor<f16, smem, Sw<3,3,3> o 0 o ((512,4)):((1,512))>
    %3 = arith.constant 0 : index
    %4 = arith.cmpi eq, %tid_x, %3 : index
    scf.if %4 {
      %5 = arith.constant 0 : index
      %6 = arith.constant 1 : i32
      cute.mbarrier_init %6, %bar, %5 : i32, !cute.tensor<i64, smem, 1:0>
      thread.fence_mbarrier_init
      scf.yield
    }
    gpu.barrier
    %7 = arith.constant 0 : index
    %8 = arith.cmpi eq, %tid_x, %7 : index
    scf.if %8 {
      %9 = arith.constant 0 : index
      %10 = arith.constant 4096 : i32
      cute.mbarrier_arrive_expect_tx %10, %bar, %9 : i32, !cute.tensor<i64, smem, 1:0>
      %11 = arith.constant 0 : index
      cute.tma_copy %0, %tAgA, %tAsA, %bar, %11 : !cute.tma_atom<load, f16, (64,8), (0,1), 128B>, !cute.coord_tensor<2, (((64,8),(2,2))):(((E0,E1),(64*E0,8*E1)))>, !cute.tensor<f16, smem, Sw<3,3,3> o 0 o ((512,4)):((1,512))>, !cute.tensor<i64, smem, 1:0>
      scf.yield
    }
    %12 = arith.constant 0 : index
    %13 = arith.constant 0 : i32
    cute.mbarrier_wait %13, %bar, %12 : i32, !cute.tensor<i64, smem, 1:0>
    %tDsA = cute.local_partition %sA, %tid_x {thr_layout = #cute.layout<(32,4):(1,32)>} : !cute.tensor<f16, smem, Sw<3,3,3> o 0 o ((64,2),(8,2)):((1,512),(64,1024))> -> !cute.tensor<f16, smem, Sw<3,3,3> o 0 o ((2,2),(2,2)):((32,512),(256,1024))>
    %tDgD = cute.local_partition %gD, %tid_x {thr_layout = #cute.layout<(32,4):(1,32)>} : !cute.tensor<f16, gmem, (128,16):(1,?)> -> !cute.tensor<f16, gmem, (4,4):(32,?)>
    cute.copy %tDsA, %tDgD : !cute.tensor<f16, smem, Sw<3,3,3> o 0 o ((2,2),(2,2)):((32,512),(256,1024))>, !cute.tensor<f16, gmem, (4,4):(32,?)>
    return
  }
}
