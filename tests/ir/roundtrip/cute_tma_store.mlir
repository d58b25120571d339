// A TMA store atom and cute.tma_store (frontend output of tests/cpu/data/tma_store_tile.cute).
module attributes {target = "sm_90a"} {
  kernel @store_tile(%A: !gpu.ptr<f16, global>, %M: index, %N: index, %ldA: index, %D: !gpu.ptr<f16, global>, %ldD: index) attributes {reqntid = array<i32: 128, 1, 1>, params = {BM = 128 : i64, BN = 16 : i64}, grid = ["ceil_div(M,128)", "ceil_div(N,16)", "1"]} {
    %bid_x = gpu.block_id x : index
    %bid_y = gpu.block_id y : index
    %tid_x = gpu.thread_id x : index
    %warp_idx = gpu.warp_idx : index
    %A_1 = cute.make_tensor %A, %M, %N, %ldA : !gpu.ptr<f16, global> -> !cute.tensor<f16, gmem, (?,?):(1,?)>
    %D_1 = cute.make_tensor %D, %M, %N, %ldD {div = array<i64: 1, 1, 8>, align = 16 : i64} : !gpu.ptr<f16, global> -> !cute.tensor<f16, gmem, (?,?):(1,?)>
    %0 = cute.make_tma_atom %D_1 {map = "tma_D"} : !cute.tensor<f16, gmem, (?,?):(1,?)> -> !cute.tma_atom<store, f16, (64,8), (0,1), 128B>
    %sD = cute.alloc_smem : !cute.tensor<f16, smem, Sw<3,3,3> o 0 o ((64,2),(8,2)):((1,512),(64,1024))>
    %mD = cute.get_tma_tensor %0, %M, %N : !cute.tma_atom<store, f16, (64,8), (0,1), 128B> -> !cute.coord_tensor<2, (?,?):(E0,E1)>
    %gD = cute.local_tile %mD, %bid_x, %bid_y {tiler = #cute.tuple<(128,16)>, coord = #cute.tuple<(?,?)>} : !cute.coord_tensor<2, (?,?):(E0,E1)> -> !cute.coord_tensor<2, (128,16):(E0,E1)>
    %gA = cute.local_tile %A_1, %bid_x, %bid_y {tiler = #cute.tuple<(128,16)>, coord = #cute.tuple<(?,?)>} : !cute.tensor<f16, gmem, (?,?):(1,?)> -> !cute.tensor<f16, gmem, (128,16):(1,?)>
    %1 = cute.group_modes %sD {begin = 0 : i64, end = 2 : i64} : !cute.tensor<f16, smem, Sw<3,3,3> o 0 o ((64,2),(8,2)):((1,512),(64,1024))> -> !cute.tensor<f16, smem, Sw<3,3,3> o 0 o (((64,2),(8,2))):(((1,512),(64,1024)))>
    %2 = cute.group_modes %gD {begin = 0 : i64, end = 2 : i64} : !cute.coord_tensor<2, (128,16):(E0,E1)> -> !cute.coord_tensor<2, ((128,16)):((E0,E1))>
    %tDgD = cute.tma_partition %2 {tile = #cute.layout<((64,8),(2,2)):((1,128),(64,1024))>} : !cute.coord_tensor<2, ((128,16)):((E0,E1))> -> !cute.coord_tensor<2, (((64,8),(2,2))):(((E0,E1),(64*E0,8*E1)))>
    %tDsD = cute.tma_partition %1 {tile = #cute.layout<((64,8),(2,2)):((1,128),(64,1024))>} : !cute.tensor<f16, smem, Sw<3,3,3> o 0 o (((64,2),(8,2))):(((1,512),(64,1024)))> -> !cute.tensor<f16, smem, Sw<3,3,3> o 0 o ((512,4)):((1,512))>
    %tAgA = cute.local_partition %gA, %tid_x {thr_layout = #cute.layout<(32,4):(1,32)>} : !cute.tensor<f16, gmem, (128,16):(1,?)> -> !cute.tensor<f16, gmem, (4,4):(32,?)>
    %tAsD = cute.local_partition %sD, %tid_x {thr_layout = #cute.layout<(32,4):(1,32)>} : !cute.tensor<f16, smem, Sw<3,3,3> o 0 o ((64,2),(8,2)):((1,512),(64,1024))> -> !cute.tensor<f16, smem, Sw<3,3,3> o 0 o ((2,2),(2,2)):((32,512),(256,1024))>
    cute.copy %tAgA, %tAsD : !cute.tensor<f16, gmem, (4,4):(32,?)>, !cute.tensor<f16, smem, Sw<3,3,3> o 0 o ((2,2),(2,2)):((32,512),(256,1024))>
    cute.fence_view_async_shared
    gpu.barrier
    %3 = arith.constant 0 : index
    %4 = arith.cmpi eq, %warp_idx, %3 : index
    %5 = thread.elect_one : i1
    %6 = arith.andi %4, %5 : i1
    scf.if %6 {
      cute.tma_store %0, %tDsD, %tDgD : !cute.tma_atom<store, f16, (64,8), (0,1), 128B>, !cute.tensor<f16, smem, Sw<3,3,3> o 0 o ((512,4)):((1,512))>, !cute.coord_tensor<2, (((64,8),(2,2))):(((E0,E1),(64*E0,8*E1)))>
      thread.bulk_commit
      thread.bulk_wait {pending = 0 : i32, read}
      scf.yield
    }
    return
  }
}
