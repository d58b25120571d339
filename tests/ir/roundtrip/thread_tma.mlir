// TMA tensor maps: the kernel lists its map parameters; thread.tensor_map addresses one.
// A TMA store's bulk async-groups: commit, wait until read, wait until complete.
module attributes {target = "sm_90a"} {
  kernel @k(%A: !gpu.ptr<f32, global>) attributes {tensor_maps = ["A_map", "B_map"]} {
    %m = thread.tensor_map "A_map" : i64
    %n = thread.tensor_map "B_map" : i64
    thread.bulk_commit
    thread.bulk_wait {pending = 1 : i32, read}
    thread.bulk_wait {pending = 0 : i32}
    return
  }
}
