// The special registers of every target: extents, the lane and the warp-uniform
// warp index (the cluster registers are sm_90a's: tests/ptx/test_rules.py).
module {
  kernel @special(%out: !gpu.ptr<index, global>) {
    %tid = gpu.thread_id x : index
    %nx = gpu.block_dim x : index
    %ny = gpu.block_dim y : index
    %gz = gpu.grid_dim z : index
    %lane = gpu.lane_id : index
    %warp = gpu.warp_idx : index
    %a = arith.addi %nx, %ny : index
    %b = arith.addi %a, %gz : index
    %c = arith.addi %b, %lane : index
    %d = arith.addi %c, %warp : index
    %p = thread.ptr_add %out, %tid : !gpu.ptr<index, global>, index
    thread.store %d, %p : index, !gpu.ptr<index, global>
    return
  }
}
