// Every builtin and dialect type, as arguments of one function.
module @types attributes {note = "all types", flags = [1, 2 : i32, "x", true], sizes = array<i32: 1, 2, 3>, empty = array<i64>, ty = (i32, f16) -> (f32, i64), sym = @types, unitflag} {
  func @all(%a: i1, %b: i8, %c: i16, %d: i32, %e: i64, %f: index, %g: f16, %h: bf16, %i: f32, %j: f64, %k: tf32, %l: f8E4M3FN, %m: f8E5M2, %n: vector<4xf32>, %o: vector<2x2xf16>, %p: vector<8xi8>, %q: !gpu.ptr<f32, global>, %r: !gpu.ptr<bf16, shared>, %s: !gpu.ptr<i8, shared::cluster>, %t: !gpu.ptr<f64, local>, %u: !gpu.token, %v: vector<2xindex>) -> (i32, vector<4xf32>) {
    return %d, %n : i32, vector<4xf32>
  }
}
