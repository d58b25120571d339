// An atom's instruction rendered from its PtxTemplate: one tf32 mma.sync.
// `test.mma` stands for the generic atom-instruction op (tests/ptx/conftest.py).
module {
  kernel @atom(%a: !gpu.ptr<tf32, global>, %c: !gpu.ptr<f32, global>) attributes {reqntid = array<i32: 32, 1, 1>} {
    %tid = gpu.thread_id x : index
    %pa = thread.ptr_add %a, %tid : !gpu.ptr<tf32, global>, index
    %x = thread.load %pa : !gpu.ptr<tf32, global> -> tf32
    %pc = thread.ptr_add %c, %tid : !gpu.ptr<f32, global>, index
    %y = thread.load %pc : !gpu.ptr<f32, global> -> f32
    %d:4 = "test.mma"(%x, %x, %x, %x, %x, %x, %y, %y, %y, %y) {atom = "SM80_16x8x8_F32TF32TF32F32_TN"} : (tf32, tf32, tf32, tf32, tf32, tf32, f32, f32, f32, f32) -> (f32, f32, f32, f32)
    %s = arith.addf %d#0, %d#3 : f32
    thread.store %s, %pc : f32, !gpu.ptr<f32, global>
    return
  }
}
