// TMA tensor maps: the kernel lists its map parameters; thread.tensor_map addresses one.
module attributes {target = "sm_90a"} {
  kernel @k(%A: !gpu.ptr<f32, global>) attributes {tensor_maps = ["A_map", "B_map"]} {
    %m = thread.tensor_map "A_map" : i64
    %n = thread.tensor_map "B_map" : i64
    return
  }
}
