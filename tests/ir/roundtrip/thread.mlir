module {
  kernel @copy(%g: !gpu.ptr<f32, global>, %sm: !gpu.ptr<f32, shared>) attributes {reqntid = array<i32: 128, 1, 1>, minnctapersm = 2 : i32, maxnreg = 128 : i32, cluster_dim = array<i32: 2, 1, 1>, dynamic_smem = 49152 : i32} {
    %t = gpu.thread_id x : index
    %ty = gpu.thread_id y : index
    %b = gpu.block_id z : index
    %pg = thread.ptr_add %g, %t : !gpu.ptr<f32, global>, index
    %ps = thread.ptr_add %sm, %t : !gpu.ptr<f32, shared>, index
    %tok = thread.cp_async %ps, %pg {bytes = 16 : i32} : !gpu.ptr<f32, shared>, !gpu.ptr<f32, global>
    %grp = thread.cp_async_commit %tok
    thread.cp_async_wait %grp {pending = 0 : i32}
    gpu.barrier
    %v = thread.load %ps : !gpu.ptr<f32, shared> -> f32 loc("copy.cute":12:7)
    thread.store %v, %pg : f32, !gpu.ptr<f32, global> loc("copy.cute":13:7)
    %e = thread.cp_async_commit
    return loc("copy.cute":14:1)
  }
  kernel @bounded() attributes {maxntid = array<i32: 256, 1, 1>, grid = ["ceil_div(M,128)", "N", "1"]} {
    return
  }
}
