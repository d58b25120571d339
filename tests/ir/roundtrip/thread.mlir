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
  // Vector and predicated accesses, pointer casts, shared memory.
  kernel @vectors(%g: !gpu.ptr<f32, global>, %h: !gpu.ptr<f16, global>, %n: i32, %p: i1) attributes {reqntid = array<i32: 32, 1, 1>} {
    %s = thread.alloc_shared {bytes = 4096 : i64, align = 16 : i64} : !gpu.ptr<f32, shared>
    %d = thread.dynamic_shared : !gpu.ptr<i8, shared>
    %l = thread.alloc_local {bytes = 64 : i64, align = 16 : i64} : !gpu.ptr<f32, local>
    %v4 = thread.load %g : !gpu.ptr<f32, global> -> vector<4xf32>
    %x = thread.extract %v4 {pos = 3 : i64} : vector<4xf32>
    thread.store %x, %l : f32, !gpu.ptr<f32, local>
    %v2 = thread.from_elements %x, %x : vector<2xf32>
    %s2 = thread.ptr_cast %s : !gpu.ptr<f32, shared> to !gpu.ptr<f32, shared>
    thread.store %v2, %s2 : vector<2xf32>, !gpu.ptr<f32, shared>
    thread.store %v4, %s : vector<4xf32>, !gpu.ptr<f32, shared>
    %zero = arith.constant 0.0 : f32
    %y = thread.load_if %p, %g, %zero : !gpu.ptr<f32, global> -> f32
    %zv = thread.from_elements %zero, %zero, %zero, %zero : vector<4xf32>
    %y4 = thread.load_if %p, %g, %zv : !gpu.ptr<f32, global> -> vector<4xf32>
    thread.store_if %p, %y, %g : f32, !gpu.ptr<f32, global>
    thread.store_if %p, %y4, %g : vector<4xf32>, !gpu.ptr<f32, global>
    %hi = thread.ptr_cast %h : !gpu.ptr<f16, global> to !gpu.ptr<i32, global>
    %gen = thread.cvta %s : !gpu.ptr<f32, shared> to !gpu.ptr<f32, generic>
    %back = thread.cvta %gen : !gpu.ptr<f32, generic> to !gpu.ptr<f32, shared>
    %gg = thread.cvta %gen : !gpu.ptr<f32, generic> to !gpu.ptr<f32, global>
    %w = thread.load %gen : !gpu.ptr<f32, generic> -> f32
    %c1 = thread.cp_async ca %s, %g {bytes = 4 : i32} : !gpu.ptr<f32, shared>, !gpu.ptr<f32, global>
    %c2 = thread.cp_async cg %s, %g, %n {bytes = 16 : i32} : !gpu.ptr<f32, shared>, !gpu.ptr<f32, global>
    %c3 = thread.cp_async ca %s, %g, %n {bytes = 8 : i32} : !gpu.ptr<f32, shared>, !gpu.ptr<f32, global>
    %grp = thread.cp_async_commit %c1, %c2, %c3
    thread.cp_async_wait %grp {pending = 1 : i32}
    return
  }
  // The generic atom op: registers in, registers out, named by the atom.
  kernel @atoms(%a: f32, %b: f32, %c: f32, %s: !gpu.ptr<f16, shared>, %r: i32, %q: !gpu.ptr<f32, global>) attributes {reqntid = array<i32: 32, 1, 1>} {
    %d = thread.atom "UniversalFMA_F32F32F32F32"(%a, %b, %c) {role = "mma"} : (f32, f32, f32) -> (f32)
    %m:4 = thread.atom "SM80_16x8x8_F32F16F16F32_TN"(%r, %r, %r, %c, %c, %c, %c) {role = "mma"} : (i32, i32, i32, f32, f32, f32, f32) -> (f32, f32, f32, f32)
    %l:4 = thread.atom "SM75_U32x4_LDSM_N"(%s) {role = "copy"} : (!gpu.ptr<f16, shared>) -> (i32, i32, i32, i32)
    %u = thread.atom "UniversalCopy<uint32_t>"(%q) {role = "ld.global"} : (!gpu.ptr<f32, global>) -> (f32)
    thread.atom "UniversalCopy<uint32_t>"(%q, %u) {role = "st.global"} : (!gpu.ptr<f32, global>, f32) -> ()
    return
  }
}
