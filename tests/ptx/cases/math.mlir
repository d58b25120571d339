// The math dialect: every function on f32 (and sqrt on f64), each result stored.
module {
  kernel @math(%in: !gpu.ptr<f32, global>, %out: !gpu.ptr<f32, global>, %d: !gpu.ptr<f64, global>) {
    %tid = gpu.thread_id x : index
    %pi = thread.ptr_add %in, %tid : !gpu.ptr<f32, global>, index
    %x = thread.load %pi : !gpu.ptr<f32, global> -> f32
    %e = math.exp %x : f32
    %e2 = math.exp2 %x : f32
    %l = math.log %x : f32
    %l2 = math.log2 %x : f32
    %s = math.sqrt %x : f32
    %r = math.rsqrt %x : f32
    %a = arith.addf %e, %e2 : f32
    %b = arith.addf %a, %l : f32
    %c = arith.addf %b, %l2 : f32
    %f = arith.addf %c, %s : f32
    %g = arith.addf %f, %r : f32
    %po = thread.ptr_add %out, %tid : !gpu.ptr<f32, global>, index
    thread.store %g, %po : f32, !gpu.ptr<f32, global>
    %pd = thread.ptr_add %d, %tid : !gpu.ptr<f64, global>, index
    %xd = thread.load %pd : !gpu.ptr<f64, global> -> f64
    %sd = math.sqrt %xd : f64
    thread.store %sd, %pd : f64, !gpu.ptr<f64, global>
    return
  }
}
