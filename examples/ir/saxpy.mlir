// y[i] = a * x[i] + y[i] for one element per thread, written directly in the
// thread dialect. `cutec compile` folds the constant index arithmetic and
// removes the duplicated loads of y; the store and the barrier stay.
module {
  kernel @saxpy(%a: f32, %x: !gpu.ptr<f32, global>, %y: !gpu.ptr<f32, global>, %n: index) attributes {reqntid = array<i32: 128, 1, 1>} {
    %tid = gpu.thread_id x : index
    %bid = gpu.block_id x : index
    %c64 = arith.constant 64 : index
    %c2 = arith.constant 2 : index
    %bdim = arith.muli %c64, %c2 : index
    %base = arith.muli %bid, %bdim : index
    %i = arith.addi %base, %tid : index
    %inside = arith.cmpi ult, %i, %n : index
    scf.if %inside {
      %px = thread.ptr_add %x, %i : !gpu.ptr<f32, global>, index
      %py = thread.ptr_add %y, %i : !gpu.ptr<f32, global>, index
      %py2 = thread.ptr_add %y, %i : !gpu.ptr<f32, global>, index
      %vx = thread.load %px : !gpu.ptr<f32, global> -> f32
      %vy = thread.load %py : !gpu.ptr<f32, global> -> f32
      %vy2 = thread.load %py2 : !gpu.ptr<f32, global> -> f32
      %unused = arith.mulf %vy2, %vy2 : f32
      %ax = arith.mulf %a, %vx : f32
      %r = arith.addf %ax, %vy : f32
      thread.store %r, %py : f32, !gpu.ptr<f32, global>
      scf.yield
    }
    gpu.barrier
    return
  }
}
