// The gpu dialect: what the cute level and the thread level share.
module {
  kernel @ids(%p: !gpu.ptr<f16, shared::cluster>, %q: !gpu.ptr<i32, param>) attributes {reqntid = array<i32: 64, 2, 1>} {
    %tx = gpu.thread_id x : index
    %tz = gpu.thread_id z : index
    %by = gpu.block_id y : index loc("ids.cute":3:5)
    gpu.barrier
    gpu.barrier {note = "after the ids"}
    return
  }
}
