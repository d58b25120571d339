// RUN: cutec opt %s --passes carry-vectors,canonicalize
// A loop whose iter_args are yielded as the elements of one vector, in order, and
// rebuilt into it by the body carries the vector: the from_elements folds away.

// CHECK-LABEL: func @carry_pair
func @carry_pair(%p: !gpu.ptr<f16, shared>, %x: f16, %n: index) -> (f16, f16) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: %[[INIT:.*]] = thread.from_elements %x, %x : vector<2xf16>
  // CHECK-NEXT: %[[R:.*]] = scf.for %{{.*}} = %{{.*}} to %n step %{{.*}} iter_args(%[[V:.*]] = %[[INIT]]) -> (vector<2xf16>) {
  // CHECK-NEXT: thread.store %[[V]], %p : vector<2xf16>, !gpu.ptr<f16, shared>
  // CHECK-NEXT: %[[W:.*]] = thread.load %p
  // CHECK-NEXT: scf.yield %[[W]] : vector<2xf16>
  // CHECK-NEXT: }
  // CHECK-DAG: %[[E0:.*]] = thread.extract %[[R]] {pos = 0 : i64} : vector<2xf16>
  // CHECK-DAG: %[[E1:.*]] = thread.extract %[[R]] {pos = 1 : i64} : vector<2xf16>
  // CHECK: return %[[E1]], %[[E0]] : f16, f16
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%a0 = %x, %a1 = %x) -> (f16, f16) {
    %v = thread.from_elements %a0, %a1 : vector<2xf16>
    thread.store %v, %p : vector<2xf16>, !gpu.ptr<f16, shared>
    %w = thread.load %p : !gpu.ptr<f16, shared> -> vector<2xf16>
    %e0 = thread.extract %w {pos = 0 : i64} : vector<2xf16>
    %e1 = thread.extract %w {pos = 1 : i64} : vector<2xf16>
    scf.yield %e0, %e1 : f16, f16
  }
  return %r#1, %r#0 : f16, f16
}

// The elements come back swapped: the vector the body builds is not the one
// yielded, so the loop keeps carrying the elements.
// CHECK-LABEL: func @swapped
func @swapped(%p: !gpu.ptr<f16, shared>, %x: f16, %n: index) -> f16 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: scf.for {{.*}} -> (f16, f16) {
  // CHECK: thread.from_elements
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%a0 = %x, %a1 = %x) -> (f16, f16) {
    %v = thread.from_elements %a0, %a1 : vector<2xf16>
    thread.store %v, %p : vector<2xf16>, !gpu.ptr<f16, shared>
    %w = thread.load %p : !gpu.ptr<f16, shared> -> vector<2xf16>
    %e0 = thread.extract %w {pos = 0 : i64} : vector<2xf16>
    %e1 = thread.extract %w {pos = 1 : i64} : vector<2xf16>
    scf.yield %e1, %e0 : f16, f16
  }
  return %r#0 : f16
}

// Nothing rebuilds the vector from the arguments: carrying it would gain nothing.
// CHECK-LABEL: func @not_rebuilt
func @not_rebuilt(%p: !gpu.ptr<f16, shared>, %x: f16, %n: index) -> f16 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: scf.for {{.*}} -> (f16, f16) {
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%a0 = %x, %a1 = %x) -> (f16, f16) {
    %s = arith.addf %a0, %a1 : f16
    %w = thread.load %p : !gpu.ptr<f16, shared> -> vector<2xf16>
    %e0 = thread.extract %w {pos = 0 : i64} : vector<2xf16>
    %e1 = thread.extract %w {pos = 1 : i64} : vector<2xf16>
    %t = arith.addf %e0, %s : f16
    scf.yield %t, %e1 : f16, f16
  }
  return %r#0 : f16
}

// A while loop carries the vector too: through `before`'s argument, the condition and
// `after`'s argument, rebuilt from them by from_elements and yielded back as extracts.
// CHECK-LABEL: func @while_vector
func @while_vector(%p: !gpu.ptr<f16, shared>, %x: f16, %n: index) -> f16 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: %[[INIT:.*]] = thread.from_elements %x, %x : vector<2xf16>
  // CHECK: scf.while (%{{.*}} = %c0, %[[V:.*]] = %[[INIT]]) : (index, vector<2xf16>) -> (index, vector<2xf16>) {
  // CHECK: scf.condition(%{{.*}}) %{{.*}}, %[[V]] : index, vector<2xf16>
  // CHECK: ^bb0(%{{.*}}: index, %[[U:.*]]: vector<2xf16>):
  %r:3 = scf.while (%i = %c0, %a0 = %x, %a1 = %x) : (index, f16, f16) -> (index, f16, f16) {
    %go = arith.cmpi slt, %i, %n : index
    scf.condition(%go) %i, %a0, %a1 : index, f16, f16
  } do {
  ^bb0(%j: index, %b0: f16, %b1: f16):
    %v = thread.from_elements %b0, %b1 : vector<2xf16>
    thread.store %v, %p : vector<2xf16>, !gpu.ptr<f16, shared>
    %w = thread.load %p : !gpu.ptr<f16, shared> -> vector<2xf16>
    %e0 = thread.extract %w {pos = 0 : i64} : vector<2xf16>
    %e1 = thread.extract %w {pos = 1 : i64} : vector<2xf16>
    %k = arith.addi %j, %c1 : index
    // CHECK: scf.yield %{{.*}}, %[[W:.*]] : index, vector<2xf16>
    scf.yield %k, %e0, %e1 : index, f16, f16
  }
  // CHECK: thread.extract %{{.*}}#1 {pos = 1 : i64}
  return %r#2 : f16
}
