module {
  func @transcendental(%x: f32, %d: f64, %h: f16) -> f32 {
    %0 = math.exp %x : f32
    %1 = math.exp2 %x : f32
    %2 = math.log %x : f32
    %3 = math.log2 %x : f32
    %4 = math.sqrt %d : f64
    %5 = math.rsqrt %h : f16
    %6 = "math.exp"(%x) : (f32) -> f32
    return %0 : f32
  }
}
