// A TMA store at thread level: each CTA stores two 16 x 8 boxes of the column-major
// f32 matrix D (M x N, leading dimension ldD) through the tensor map D_map, at
// (16 * block.x, 16 * block.y + 8 * k) for k = 0, 1, staging both in one 512-byte
// tile. For each box its 128 threads copy S[128 * (2 * (block.y * grid_dim.x +
// block.x) + k) + thread.x] to element thread.x of the tile (element (i, j) at
// j * 16 + i) with st.shared, fence the writes to the async proxy and meet at a CTA
// barrier; thread 0 issues the store, commits it and waits until it has read the
// tile; a second barrier frees the tile for the next box. Elements of a box outside
// M x N are not written.
module attributes {target = "sm_90a"} {
  kernel @tma_store(%S: !gpu.ptr<f32, global>, %T: index, %D: !gpu.ptr<f32, global>, %M: index, %N: index, %ldD: index) attributes {reqntid = array<i32: 128, 1, 1>, tensor_maps = ["D_map"]} {
    %tile = thread.alloc_shared {bytes = 512 : i64, align = 128 : i64} : !gpu.ptr<f32, shared>
    %c0 = arith.constant 0 : i32
    %c2 = arith.constant 2 : i32
    %c8 = arith.constant 8 : i32
    %c16 = arith.constant 16 : i32
    %c128 = arith.constant 128 : i32
    %i0 = arith.constant 0 : index
    %i1 = arith.constant 1 : index
    %i2 = arith.constant 2 : index
    %tid = gpu.thread_id x : index
    %t = arith.index_cast %tid : index to i32
    %first = arith.cmpi eq, %t, %c0 : i32
    %bx = gpu.block_id x : index
    %by = gpu.block_id y : index
    %x = arith.index_cast %bx : index to i32
    %y = arith.index_cast %by : index to i32
    %gx = gpu.grid_dim x : index
    %g = arith.index_cast %gx : index to i32
    %row = arith.muli %y, %g : i32
    %cta = arith.addi %row, %x : i32
    %pair = arith.muli %cta, %c2 : i32
    %m0 = arith.muli %x, %c16 : i32
    %ny = arith.muli %y, %c16 : i32
    %here = thread.ptr_add %tile, %t : !gpu.ptr<f32, shared>, i32
    scf.for %k = %i0 to %i2 step %i1 {
      %kk = arith.index_cast %k : index to i32
      %box = arith.addi %pair, %kk : i32
      %base = arith.muli %box, %c128 : i32
      %at = arith.addi %base, %t : i32
      %src = thread.ptr_add %S, %at : !gpu.ptr<f32, global>, i32
      %v = thread.load %src : !gpu.ptr<f32, global> -> f32
      thread.store %v, %here : f32, !gpu.ptr<f32, shared>
      thread.fence_proxy_async
      gpu.barrier
      scf.if %first {
        %dn = arith.muli %kk, %c8 : i32
        %n0 = arith.addi %ny, %dn : i32
        %map = thread.tensor_map "D_map" : i64
        thread.atom "SM90_TMA_STORE_2D"(%map, %m0, %n0, %tile) {role = "copy", bits = 4096 : i64} : (i64, i32, i32, !gpu.ptr<f32, shared>) -> ()
        thread.bulk_commit
        thread.bulk_wait {pending = 0 : i32, read}
        scf.yield
      }
      gpu.barrier
      scf.yield
    }
    return
  }
}
