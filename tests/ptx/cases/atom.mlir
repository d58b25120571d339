// Atom instructions rendered from their PtxTemplate by thread.atom: mma.sync
// (tf32, and f16 fed by packed vector<2xf16> pairs and an ldmatrix), UniversalCopy
// loads and stores (a 32-bit shared address, a vector result unpacked), UniversalFMA
// and a zero-filling cp.async atom.
module {
  kernel @atom(%a: !gpu.ptr<tf32, global>, %c: !gpu.ptr<f32, global>, %h: !gpu.ptr<f16, global>, %n: i32) attributes {reqntid = array<i32: 32, 1, 1>} {
    %tile = thread.alloc_shared {bytes = 512 : i64, align = 16 : i64} : !gpu.ptr<f16, shared>
    %tid = gpu.thread_id x : index
    %pa = thread.ptr_add %a, %tid : !gpu.ptr<tf32, global>, index
    %x = thread.load %pa : !gpu.ptr<tf32, global> -> tf32
    %pc = thread.ptr_add %c, %tid : !gpu.ptr<f32, global>, index
    %y = thread.load %pc : !gpu.ptr<f32, global> -> f32
    %d:4 = thread.atom "SM80_16x8x8_F32TF32TF32F32_TN"(%x, %x, %x, %x, %x, %x, %y, %y, %y, %y) {role = "mma"} : (tf32, tf32, tf32, tf32, tf32, tf32, f32, f32, f32, f32) -> (f32, f32, f32, f32)
    %c8 = arith.constant 8 : index
    %off = arith.muli %tid, %c8 : index
    %ph = thread.ptr_add %h, %off : !gpu.ptr<f16, global>, index
    %hv = thread.load %ph : !gpu.ptr<f16, global> -> vector<2xf16>
    %ps = thread.ptr_add %tile, %off : !gpu.ptr<f16, shared>, index
    %l:4 = thread.atom "SM75_U32x4_LDSM_N"(%ps) {role = "copy"} : (!gpu.ptr<f16, shared>) -> (i32, i32, i32, i32)
    %e:4 = thread.atom "SM80_16x8x16_F32F16F16F32_TN"(%hv, %l#0, %l#1, %hv, %l#2, %l#3, %d#0, %d#1, %d#2, %d#3) {role = "mma"} : (vector<2xf16>, i32, i32, vector<2xf16>, i32, i32, f32, f32, f32, f32) -> (f32, f32, f32, f32)
    %pc8 = thread.ptr_add %c, %off : !gpu.ptr<f32, global>, index
    %u:4 = thread.atom "UniversalCopy<uint128_t>"(%pc8) {role = "ld.global"} : (!gpu.ptr<f32, global>) -> (f32, f32, f32, f32)
    %f = thread.atom "UniversalFMA_F32F32F32F32"(%u#0, %e#1, %u#3) {role = "mma"} : (f32, f32, f32) -> (f32)
    thread.atom "UniversalCopy<uint32_t>"(%ps, %hv) {role = "st.shared"} : (!gpu.ptr<f16, shared>, vector<2xf16>) -> ()
    %w = thread.atom "UniversalCopy<uint32_t>"(%ph) {role = "ld.global"} : (!gpu.ptr<f16, global>) -> (vector<2xf16>)
    thread.store %w, %ph : vector<2xf16>, !gpu.ptr<f16, global>
    thread.atom "SM80_CP_ASYNC_CACHEGLOBAL_ZFILL<uint128_t>"(%ps, %ph, %n) {role = "copy"} : (!gpu.ptr<f16, shared>, !gpu.ptr<f16, global>, i32) -> ()
    %s = arith.addf %e#0, %f : f32
    thread.store %s, %pc : f32, !gpu.ptr<f32, global>
    return
  }
}
