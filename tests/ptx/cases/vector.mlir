// Vector loads and stores (.v2/.v4), extract and from_elements (no instruction),
// predicated loads and stores (scalar, vector and i1), and a vector carried by a loop.
module {
  kernel @vector(%a: !gpu.ptr<f32, global>, %h: !gpu.ptr<f16, global>, %flags: !gpu.ptr<i1, global>, %n: index) attributes {reqntid = array<i32: 128, 1, 1>} {
    %tid = gpu.thread_id x : index
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %off = arith.muli %tid, %c4 : index
    %p = thread.ptr_add %a, %off : !gpu.ptr<f32, global>, index
    %v = thread.load %p : !gpu.ptr<f32, global> -> vector<4xf32>
    %x0 = thread.extract %v {pos = 0 : i64} : vector<4xf32>
    %x3 = thread.extract %v {pos = 3 : i64} : vector<4xf32>
    %s = arith.addf %x0, %x3 : f32
    %w = thread.from_elements %s, %x3 : vector<2xf32>
    thread.store %w, %p : vector<2xf32>, !gpu.ptr<f32, global>
    // under a predicate
    %in = arith.cmpi slt, %off, %n : index
    %z = arith.constant 0.0 : f32
    %zz = thread.from_elements %z, %z, %z, %z : vector<4xf32>
    %u = thread.load_if %in, %p, %zz : !gpu.ptr<f32, global> -> vector<4xf32>
    thread.store_if %in, %u, %p : vector<4xf32>, !gpu.ptr<f32, global>
    %y = thread.load_if %in, %p, %z : !gpu.ptr<f32, global> -> f32
    thread.store_if %in, %y, %p : f32, !gpu.ptr<f32, global>
    %ph = thread.ptr_add %h, %off : !gpu.ptr<f16, global>, index
    %hv = thread.load %ph : !gpu.ptr<f16, global> -> vector<4xf16>
    thread.store_if %in, %hv, %ph : vector<4xf16>, !gpu.ptr<f16, global>
    %pf = thread.ptr_add %flags, %tid : !gpu.ptr<i1, global>, index
    %false = arith.constant false
    %f = thread.load_if %in, %pf, %false : !gpu.ptr<i1, global> -> i1
    thread.store_if %f, %in, %pf : i1, !gpu.ptr<i1, global>
    // a vector carried by a loop, its elements rotated each iteration
    %r = scf.for %i = %c0 to %n step %c4 iter_args(%acc = %u) -> (vector<4xf32>) {
      %e0 = thread.extract %acc {pos = 0 : i64} : vector<4xf32>
      %e1 = thread.extract %acc {pos = 1 : i64} : vector<4xf32>
      %e2 = thread.extract %acc {pos = 2 : i64} : vector<4xf32>
      %e3 = thread.extract %acc {pos = 3 : i64} : vector<4xf32>
      %rot = thread.from_elements %e1, %e2, %e3, %e0 : vector<4xf32>
      scf.yield %rot : vector<4xf32>
    }
    thread.store %r, %p : vector<4xf32>, !gpu.ptr<f32, global>
    return
  }
}
