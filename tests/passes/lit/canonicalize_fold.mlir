// RUN: cutec opt %s --passes canonicalize
// Constant folding of arith, identities, and dead-code removal.

// CHECK-LABEL: func @fold_ints
func @fold_ints(%x: i32) -> (i32, i32, i32, i8, i1) {
  %a = arith.constant 6 : i32
  %b = arith.constant 7 : i32
  %m = arith.muli %a, %b : i32
  %z = arith.constant 0 : i32
  %same = arith.addi %x, %z : i32
  %big = arith.constant 127 : i8
  %one = arith.constant 1 : i8
  %wrap = arith.addi %big, %one : i8
  %neg = arith.constant -7 : i32
  %q = arith.divsi %neg, %a : i32
  %lt = arith.cmpi ult, %neg, %a : i32
  %dead = arith.muli %x, %x : i32
  // CHECK-DAG: %[[C42:.*]] = arith.constant 42 : i32
  // CHECK-DAG: %[[WRAP:.*]] = arith.constant -128 : i8
  // CHECK-DAG: %[[Q:.*]] = arith.constant -1 : i32
  // CHECK-DAG: %[[F:.*]] = arith.constant false
  // CHECK-NOT: arith.muli
  // CHECK: return %[[C42]], %x, %[[Q]], %[[WRAP]], %[[F]] : i32, i32, i32, i8, i1
  return %m, %same, %q, %wrap, %lt : i32, i32, i32, i8, i1
}

// CHECK-LABEL: func @fold_floats
func @fold_floats(%x: f32) -> (f32, f32, f16, f32) {
  %a = arith.constant 1.5 : f32
  %b = arith.constant 2.25 : f32
  %s = arith.addf %a, %b : f32
  %one = arith.constant 1.0 : f32
  %same = arith.mulf %x, %one : f32
  %h = arith.constant 65519.0 : f32
  %t = arith.truncf %h : f32 to f16
  %z = arith.constant 0.0 : f32
  %keep = arith.addf %x, %z : f32
  // x + 0.0 is not x when x is -0.0: it must stay.
  // CHECK-DAG: arith.constant 3.75 : f32
  // CHECK-DAG: arith.constant 65504.0 : f16
  // CHECK-DAG: %[[KEEP:.*]] = arith.addf %x, %{{.*}} : f32
  // CHECK: return %{{.*}}, %x, %{{.*}}, %[[KEEP]]
  return %s, %same, %t, %keep : f32, f32, f16, f32
}

// CHECK-LABEL: func @fold_control_flow
func @fold_control_flow(%x: i32, %n: index) -> i32 {
  %t = arith.constant true
  %r = scf.if %t -> (i32) {
    %y = arith.addi %x, %x : i32
    scf.yield %y : i32
  } else {
    scf.yield %x : i32
  }
  %c4 = arith.constant 4 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  %s = scf.for %i = %c4 to %c2 step %c1 iter_args(%acc = %r) -> (i32) {
    %z = arith.muli %acc, %acc : i32
    scf.yield %z : i32
  }
  // CHECK-NOT: scf.if
  // CHECK-NOT: scf.for
  // CHECK: %[[Y:.*]] = arith.addi %x, %x : i32
  // CHECK-NEXT: return %[[Y]] : i32
  return %s : i32
}

// An iter_arg nothing reads (a fragment refilled before each use) is dropped; the
// one the body reads and the one whose result is used stay.
// CHECK-LABEL: func @dead_iter_args
func @dead_iter_args(%x: f32, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: %[[R:.*]] = scf.for %{{.*}} = %{{.*}} to %n step %{{.*}} iter_args(%[[ACC:.*]] = %x) -> (f32) {
  // CHECK-NEXT: %[[F:.*]] = arith.addf %x, %x : f32
  // CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[F]] : f32
  // CHECK-NEXT: scf.yield %[[S]] : f32
  // CHECK-NEXT: }
  // CHECK-NEXT: return %[[R]] : f32
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%frag = %x, %acc = %x) -> (f32, f32) {
    %f = arith.addf %x, %x : f32
    %s = arith.addf %acc, %f : f32
    scf.yield %f, %s : f32, f32
  }
  return %r#1 : f32
}

// A value carried around a loop that only passes it back (a cycle) is dropped too;
// the loop stays for its barrier.
// CHECK-LABEL: func @dead_cycle
func @dead_cycle(%x: f32, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: scf.for %{{.*}} = %{{.*}} to %n step %{{.*}} {
  // CHECK-NEXT: gpu.barrier
  // CHECK-NEXT: scf.yield
  // CHECK-NEXT: }
  // CHECK-NEXT: return
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> (f32) {
    gpu.barrier
    scf.yield %a : f32
  }
  return
}

// A loop from %a to %a + 1 step 1 (the whole-tensor gemm's loop over tiles with a
// CTA per tile) runs once: its body, with the induction variable %a. Constant
// bounds one step apart too; two steps stay a loop.
// CHECK-LABEL: func @single_trip
func @single_trip(%a: index, %x: i32) -> (i32, index) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %b = arith.addi %a, %c1 : index
  // CHECK-NOT: scf.for
  // CHECK: %[[Y:.*]] = arith.muli %x, %x : i32
  // CHECK: %[[J:.*]] = arith.addi %a, %a : index
  %s = scf.for %i = %a to %b step %c1 iter_args(%acc = %x) -> (i32) {
    %z = arith.muli %acc, %acc : i32
    scf.yield %z : i32
  }
  %t = scf.for %i = %c2 to %c3 step %c1 iter_args(%j = %a) -> (index) {
    %k = arith.addi %j, %j : index
    scf.yield %k : index
  }
  // CHECK: return %[[Y]], %[[J]] : i32, index
  return %s, %t : i32, index
}

// A single trip whose yield passes an iter_arg and the induction variable through:
// the results are the init and the lower bound (the body arguments' values; the
// results were left naming the erased body's arguments, found by test_simplify).
// CHECK-LABEL: func @single_trip_yields_its_arguments
func @single_trip_yields_its_arguments(%a: index, %x: i32) -> (i32, index) {
  %c1 = arith.constant 1 : index
  %b = arith.addi %a, %c1 : index
  // CHECK-NOT: scf.for
  %s, %t = scf.for %i = %a to %b step %c1 iter_args(%acc = %x, %j = %a) -> (i32, index) {
    scf.yield %acc, %i : i32, index
  }
  // CHECK: return %x, %a : i32, index
  return %s, %t : i32, index
}

// CHECK-LABEL: func @two_trips
func @two_trips(%a: index, %x: i32) -> i32 {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %b = arith.addi %a, %c2 : index
  // CHECK: scf.for
  %s = scf.for %i = %a to %b step %c1 iter_args(%acc = %x) -> (i32) {
    %z = arith.muli %acc, %acc : i32
    scf.yield %z : i32
  }
  return %s : i32
}
