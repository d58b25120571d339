module {
  kernel @vadd(%a: !gpu.ptr<f32, global>, %b: !gpu.ptr<f32, global>, %c: !gpu.ptr<f32, global>, %n: index) attributes {reqntid = array<i32: 128, 1, 1>} {
    %tid = gpu.thread_id x : index
    %bid = gpu.block_id x : index
    %c128 = arith.constant 128 : index
    %base = arith.muli %bid, %c128 : index
    %i0 = arith.addi %base, %tid : index
    %stride = arith.constant 4096 : index
    %z = arith.constant 0.0 : f32
    %s = scf.for %i = %i0 to %n step %stride iter_args(%acc = %z) -> (f32) {
      %pa = thread.ptr_add %a, %i : !gpu.ptr<f32, global>, index
      %pb = thread.ptr_add %b, %i : !gpu.ptr<f32, global>, index
      %x = thread.load %pa : !gpu.ptr<f32, global> -> f32
      %y = thread.load %pb : !gpu.ptr<f32, global> -> f32
      %sum = arith.addf %x, %y : f32
      %pc = thread.ptr_add %c, %i : !gpu.ptr<f32, global>, index
      thread.store %sum, %pc : f32, !gpu.ptr<f32, global>
      %acc2 = arith.addf %acc, %sum : f32
      scf.yield %acc2 : f32
    }
    return
  }
}
