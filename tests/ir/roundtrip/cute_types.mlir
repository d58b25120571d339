// Layout and tensor types: static, dynamic (?), nested, swizzled.
module {
  func @layouts(%a: !cute.layout<(4,8):(1,4)>, %b: !cute.layout<((2,2),3):((1,4),2)>, %c: !cute.layout<8:1>, %d: !cute.layout<(128,?):(1,?)>, %e: !cute.layout<Sw<3,4,3> o 0 o (8,64):(64,1)>, %f: !cute.layout<(2,(3,4)):(0,(?,12))>) {
    return
  }
  func @tensors(%g: !cute.tensor<f32, gmem, (?,?):(1,?)>, %s: !cute.tensor<f16, smem, Sw<2,3,3> o 0 o (64,(8,4)):(8,(1,512))>, %r: !cute.tensor<f32, rmem, ((2,2),4,8):((1,2),4,16)>, %v: !cute.tensor<bf16, gmem, ((128,8),(?,?)):((1,?),(128,?))>) {
    return
  }
}
