// RUN: cutec opt %s --passes vectorize,select-atoms
// Copies that name no atom get the UniversalCopy of the width vectorize chose;
// a predicated one moves one element per access; a named atom is kept.

// CHECK-LABEL: kernel @choose
kernel @choose(%g: !gpu.ptr<f32, global>, %p: !gpu.ptr<f32, global>) attributes {reqntid = array<i32: 1, 1, 1>} {
  %a = cute.make_tensor %g {align = 16 : i64} : !gpu.ptr<f32, global> -> !cute.tensor<f32, gmem, (4,2):(1,4)>
  %b = cute.make_tensor %p : !gpu.ptr<f32, global> -> !cute.tensor<f32, gmem, (4,2):(1,4)>
  %r = cute.make_fragment : !cute.tensor<f32, rmem, (4,2):(1,4)>
  // CHECK: cute.copy %a, %r {vector = 4 : i64, atom = "UniversalCopy<uint128_t>"}
  cute.copy %a, %r : !cute.tensor<f32, gmem, (4,2):(1,4)>, !cute.tensor<f32, rmem, (4,2):(1,4)>
  // %b is aligned to its element only.
  // CHECK: cute.copy %r, %b {vector = 1 : i64, atom = "UniversalCopy<uint32_t>"}
  cute.copy %r, %b : !cute.tensor<f32, rmem, (4,2):(1,4)>, !cute.tensor<f32, gmem, (4,2):(1,4)>
  %pred = cute.make_fragment : !cute.tensor<i1, rmem, (4,2):(1,4)>
  // CHECK: cute.copy_if %pred, %a, %r {atom = "UniversalCopy<uint32_t>", vector = 1 : i64}
  cute.copy_if %pred, %a, %r : !cute.tensor<i1, rmem, (4,2):(1,4)>, !cute.tensor<f32, gmem, (4,2):(1,4)>, !cute.tensor<f32, rmem, (4,2):(1,4)>
  return
}
