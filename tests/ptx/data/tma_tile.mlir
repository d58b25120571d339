// A TMA load at thread level: each CTA loads the 16 x 8 box at (16 * block.x,
// 8 * block.y) of the column-major f32 matrix A (M x N, leading dimension ldA)
// through the tensor map A_map, one cp.async.bulk.tensor completing on an mbarrier
// that expects the whole box (512 bytes, zero-filled where it is out of bounds), and
// its 128 threads store the box as it lies in shared memory (element (i, j) at
// j * 16 + i) to D[128 * (block.y * grid_dim.x + block.x) + thread.x]. Thread 0
// initialises the mbarrier and makes it visible to the async proxy before the CTA
// barrier; the others wait on phase 0.
module attributes {target = "sm_90a"} {
  kernel @tma_tile(%A: !gpu.ptr<f32, global>, %M: index, %N: index, %ldA: index, %D: !gpu.ptr<f32, global>, %T: index) attributes {reqntid = array<i32: 128, 1, 1>, tensor_maps = ["A_map"]} {
    %tile = thread.alloc_shared {bytes = 512 : i64, align = 128 : i64} : !gpu.ptr<f32, shared>
    %bar = thread.alloc_shared {bytes = 8 : i64, align = 8 : i64} : !gpu.ptr<i64, shared>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c8 = arith.constant 8 : i32
    %c16 = arith.constant 16 : i32
    %c128 = arith.constant 128 : i32
    %c512 = arith.constant 512 : i32
    %tid = gpu.thread_id x : index
    %t = arith.index_cast %tid : index to i32
    %first = arith.cmpi eq, %t, %c0 : i32
    scf.if %first {
      thread.mbarrier_init %bar, %c1 : !gpu.ptr<i64, shared>, i32
      thread.fence_proxy_async
      scf.yield
    }
    gpu.barrier
    %bx = gpu.block_id x : index
    %by = gpu.block_id y : index
    %x = arith.index_cast %bx : index to i32
    %y = arith.index_cast %by : index to i32
    scf.if %first {
      thread.mbarrier_arrive_expect_tx %bar, %c512 : !gpu.ptr<i64, shared>, i32
      %m0 = arith.muli %x, %c16 : i32
      %n0 = arith.muli %y, %c8 : i32
      %map = thread.tensor_map "A_map" : i64
      thread.atom "SM90_TMA_LOAD_2D"(%tile, %map, %m0, %n0, %bar) {role = "copy", bits = 4096 : i64} : (!gpu.ptr<f32, shared>, i64, i32, i32, !gpu.ptr<i64, shared>) -> ()
      scf.yield
    }
    thread.mbarrier_wait %bar, %c0 : !gpu.ptr<i64, shared>, i32
    %src = thread.ptr_add %tile, %t : !gpu.ptr<f32, shared>, i32
    %v = thread.load %src : !gpu.ptr<f32, shared> -> f32
    %gx = gpu.grid_dim x : index
    %g = arith.index_cast %gx : index to i32
    %row = arith.muli %y, %g : i32
    %cta = arith.addi %row, %x : i32
    %base = arith.muli %cta, %c128 : i32
    %at = arith.addi %base, %t : i32
    %dst = thread.ptr_add %D, %at : !gpu.ptr<f32, global>, i32
    thread.store %v, %dst : f32, !gpu.ptr<f32, global>
    return
  }
}
