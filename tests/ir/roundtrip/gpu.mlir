// The gpu dialect: what the cute level and the thread level share.
module {
  kernel @ids(%p: !gpu.ptr<f16, shared::cluster>, %q: !gpu.ptr<i32, param>, %r: !gpu.ptr<f32, generic>) attributes {reqntid = array<i32: 64, 2, 1>} {
    %tx = gpu.thread_id x : index
    %tz = gpu.thread_id z : index
    %by = gpu.block_id y : index loc("ids.cute":3:5)
    %nx = gpu.block_dim x : index
    %gz = gpu.grid_dim z : index
    %lane = gpu.lane_id : index
    %warp = gpu.warp_idx : index
    %cl = gpu.cluster_id x : index
    %ncl = gpu.cluster_dim y : index
    %cb = gpu.cluster_block_id z : index
    %ncb = gpu.cluster_dim_blocks x : index
    %rank = gpu.cluster_block_rank : index
    gpu.barrier
    gpu.barrier {note = "after the ids"}
    return
  }
}
