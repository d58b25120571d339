// A thread's private array (thread.alloc_local) indexed at run time, so ptxas
// keeps it in local memory: a stack frame.
module {
  kernel @local(%out: !gpu.ptr<f32, global>, %in: !gpu.ptr<f32, global>, %k: index) attributes {reqntid = array<i32: 32, 1, 1>} {
    %buf = thread.alloc_local {bytes = 64 : i64, align = 16 : i64} : !gpu.ptr<f32, local>
    %tid = gpu.thread_id x : index
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    scf.for %i = %c0 to %c16 step %c1 {
      %p = thread.ptr_add %buf, %i : !gpu.ptr<f32, local>, index
      %pi = thread.ptr_add %in, %i : !gpu.ptr<f32, global>, index
      %x = thread.load %pi : !gpu.ptr<f32, global> -> f32
      thread.store %x, %p : f32, !gpu.ptr<f32, local>
      scf.yield
    }
    %q = thread.ptr_add %buf, %k : !gpu.ptr<f32, local>, index
    %v = thread.load %q : !gpu.ptr<f32, local> -> vector<4xf32>
    %e = thread.extract %v {pos = 1 : i64} : vector<4xf32>
    %o = thread.ptr_add %out, %tid : !gpu.ptr<f32, global>, index
    thread.store %e, %o : f32, !gpu.ptr<f32, global>
    return
  }
}
