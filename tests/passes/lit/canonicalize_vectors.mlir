// RUN: cutec opt %s --passes canonicalize
// A register unpacked and packed again is the register (an ldmatrix result feeding
// mma.sync): from_elements(extract(v, 0), .., extract(v, n-1)) -> v, and
// extract(from_elements(x0, .., xn), i) -> xi. Partial or reordered packs stay.

// CHECK-LABEL: kernel @repack
kernel @repack(%s: !gpu.ptr<f16, shared>, %g: !gpu.ptr<f16, global>) attributes {reqntid = array<i32: 32, 1, 1>} {
  // CHECK-NEXT: %[[R:.*]] = thread.atom "SM75_U32x1_LDSM_N"(%s)
  // CHECK-NEXT: %[[X:.*]] = thread.extract %[[R]] {pos = 0 : i64}
  // CHECK-NEXT: %[[Y:.*]] = thread.extract %[[R]] {pos = 1 : i64}
  %r = thread.atom "SM75_U32x1_LDSM_N"(%s) {role = "copy"} : (!gpu.ptr<f16, shared>) -> (vector<2xf16>)
  %x = thread.extract %r {pos = 0 : i64} : vector<2xf16>
  %y = thread.extract %r {pos = 1 : i64} : vector<2xf16>
  %v = thread.from_elements %x, %y : vector<2xf16>
  // CHECK-NEXT: thread.store %[[R]], %g
  thread.store %v, %g : vector<2xf16>, !gpu.ptr<f16, global>
  // CHECK-NEXT: %[[W:.*]] = thread.from_elements %[[Y]], %[[X]]
  // CHECK-NEXT: thread.store %[[W]], %g
  %w = thread.from_elements %y, %x : vector<2xf16>
  thread.store %w, %g : vector<2xf16>, !gpu.ptr<f16, global>
  // CHECK-NEXT: thread.store %[[Y]], %g
  %z = thread.extract %w {pos = 0 : i64} : vector<2xf16>
  thread.store %z, %g : f16, !gpu.ptr<f16, global>
  return
}
