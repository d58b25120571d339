// RUN: cutec opt %s --passes canonicalize
// The integer canonicalization patterns: constants move right (so the folds
// see them), x - c is x + (-c), constant chains merge, x % 1 is 0.

// CHECK-LABEL: func @constant_to_right
func @constant_to_right(%M: index, %x: i32) -> (index, index, index, i32) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %one = arith.muli %c1, %M : index
  %zero = arith.muli %c0, %M : index
  %same = arith.addi %c0, %M : index
  %c5 = arith.constant 5 : i32
  %and = arith.andi %c5, %x : i32
  // CHECK-DAG: %[[Z:.*]] = arith.constant 0 : index
  // CHECK-DAG: %[[C5:.*]] = arith.constant 5 : i32
  // CHECK-DAG: %[[AND:.*]] = arith.andi %x, %[[C5]] : i32
  // CHECK-NOT: arith.muli
  // CHECK: return %M, %[[Z]], %M, %[[AND]] : index, index, index, i32
  return %one, %zero, %same, %and : index, index, index, i32
}

// CHECK-LABEL: func @merge_constants
func @merge_constants(%x: index, %y: i8) -> (index, index, i8) {
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c1 = arith.constant 1 : index
  %a = arith.addi %x, %c4 : index
  %b = arith.addi %c8, %a : index
  %d = arith.subi %b, %c1 : index
  %m = arith.muli %x, %c4 : index
  %n = arith.muli %m, %c8 : index
  %c100 = arith.constant 100 : i8
  %p = arith.addi %y, %c100 : i8
  %q = arith.addi %p, %c100 : i8
  // CHECK-DAG: %[[C11:.*]] = arith.constant 11 : index
  // CHECK-DAG: %[[D:.*]] = arith.addi %x, %[[C11]] : index
  // CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
  // CHECK-DAG: %[[N:.*]] = arith.muli %x, %[[C32]] : index
  // 100 + 100 wraps to -56 in i8, as the two adds do.
  // CHECK-DAG: %[[CW:.*]] = arith.constant -56 : i8
  // CHECK-DAG: %[[Q:.*]] = arith.addi %y, %[[CW]] : i8
  // CHECK: return %[[D]], %[[N]], %[[Q]] : index, index, i8
  return %d, %n, %q : index, index, i8
}

// CHECK-LABEL: func @remainder_by_one
func @remainder_by_one(%x: i32, %y: index) -> (i32, index, index) {
  %c1 = arith.constant 1 : i32
  %m1 = arith.constant -1 : index
  %i1 = arith.constant 1 : index
  %r = arith.remsi %x, %c1 : i32
  %s = arith.remsi %y, %m1 : index
  %u = arith.remui %y, %i1 : index
  // CHECK-DAG: %[[Z32:.*]] = arith.constant 0 : i32
  // CHECK-DAG: %[[Z1:.*]] = arith.constant 0 : index
  // CHECK-DAG: %[[Z2:.*]] = arith.constant 0 : index
  // CHECK-NOT: arith.rem
  // CHECK: return %[[Z32]], %[[Z1]], %[[Z2]] : i32, index, index
  return %r, %s, %u : i32, index, index
}
