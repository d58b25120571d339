// Atomics and fences: the cute ops on a global tensor's element (a linear index or one
// coordinate per mode), the thread ops on a global pointer, the gpu fence.
module {
  kernel @atomics(%p: !gpu.ptr<i32, global>, %n: index, %q: !gpu.ptr<f32, global>, %m: index, %ld: index) attributes {reqntid = array<i32: 64, 1, 1>} {
    %t = cute.make_tensor %p, %n : !gpu.ptr<i32, global> -> !cute.tensor<i32, gmem, ?:1>
    %c = cute.make_tensor %q, %m, %n, %ld : !gpu.ptr<f32, global> -> !cute.tensor<f32, gmem, (?,?):(1,?)>
    %i = gpu.thread_id x : index
    %j = gpu.block_id x : index
    %one = arith.constant 1 : i32
    %half = arith.constant 0.5 : f32
    %old = cute.atomic_rmw %one, %t, %i {kind = "add", sem = "relaxed", scope = "gpu"} : i32, !cute.tensor<i32, gmem, ?:1> -> i32
    %big = cute.atomic_rmw %old, %t, %i {kind = "max", sem = "acq_rel", scope = "sys"} : i32, !cute.tensor<i32, gmem, ?:1> -> i32 loc("a.cute":4:3)
    %sum = cute.atomic_rmw %half, %c, %i, %j {kind = "add", sem = "release", scope = "cta"} : f32, !cute.tensor<f32, gmem, (?,?):(1,?)> -> f32
    %was = cute.atomic_rmw %sum, %c, %i {kind = "exch", sem = "acquire", scope = "gpu"} : f32, !cute.tensor<f32, gmem, (?,?):(1,?)> -> f32
    %v = cute.atomic_load %t, %i {sem = "acquire", scope = "gpu"} : !cute.tensor<i32, gmem, ?:1> -> i32
    cute.atomic_store %v, %t, %i {sem = "release", scope = "gpu"} : i32, !cute.tensor<i32, gmem, ?:1>
    gpu.fence acq_rel gpu
    %x = thread.atomic_rmw min relaxed cta %p, %one : !gpu.ptr<i32, global>, i32
    %y = thread.atomic_rmw add acq_rel sys %q, %half : !gpu.ptr<f32, global>, f32
    %z = thread.atomic_load relaxed gpu %q : !gpu.ptr<f32, global>
    thread.atomic_store relaxed sys %x, %p : i32, !gpu.ptr<i32, global> loc("a.cute":9:3)
    gpu.fence sc sys {note = "before the flag"}
    return
  }
}
