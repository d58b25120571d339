// RUN: cutec opt %s --passes reassociate
// In an scf.for body, the invariant addends of a single-use add tree are
// summed once before the loop and the varying part adds that sum; a shifted
// product of a varying value by an invariant factor shifts the factor instead.
// A tree with fewer than two invariant leaves, or an add used twice inside
// the tree, stays.

// CHECK-LABEL: kernel @offsets
kernel @offsets(%g: !gpu.ptr<f32, global>, %s: !gpu.ptr<f32, shared>, %ld: i32, %base: i32, %t: i32, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : i32
  // CHECK: %[[LD8:.*]] = arith.shli %ld, %c3 : i32
  // CHECK-NEXT: %[[INV:.*]] = arith.addi %base, %t : i32
  // CHECK-NEXT: scf.for %k
  scf.for %k = %c0 to %n step %c1 {
    // CHECK-NEXT: %[[K:.*]] = arith.index_cast %k
    // CHECK-NEXT: %[[M:.*]] = arith.muli %[[K]], %[[LD8]] : i32
    // CHECK-NEXT: %[[O:.*]] = arith.addi %[[M]], %[[INV]] : i32
    // CHECK-NEXT: thread.ptr_add %g, %[[O]]
    %ki = arith.index_cast %k : index to i32
    %o1 = arith.muli %ki, %ld : i32
    %o2 = arith.shli %o1, %c3 : i32
    %a = arith.addi %base, %o2 : i32
    %b = arith.addi %a, %t : i32
    %p = thread.ptr_add %g, %b : !gpu.ptr<f32, global>, i32
    %v = thread.load %p : !gpu.ptr<f32, global> -> f32
    thread.store %v, %s : f32, !gpu.ptr<f32, shared>
    scf.yield
  }
  return
}

// CHECK-LABEL: kernel @stays
kernel @stays(%g: !gpu.ptr<f32, global>, %base: i32, %t: i32, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: scf.for %k
  scf.for %k = %c0 to %n step %c1 {
    // One invariant leaf: nothing to group.
    // CHECK-NEXT: %[[K:.*]] = arith.index_cast %k
    // CHECK-NEXT: %[[A:.*]] = arith.addi %base, %[[K]] : i32
    // CHECK-NEXT: %[[B:.*]] = arith.addi %[[A]], %[[K]] : i32
    %ki = arith.index_cast %k : index to i32
    %a = arith.addi %base, %ki : i32
    %b = arith.addi %a, %ki : i32
    // %a is used twice, so it is a leaf of this tree: one invariant leaf (%t).
    // CHECK-NEXT: %[[C:.*]] = arith.addi %[[A]], %t : i32
    %c = arith.addi %a, %t : i32
    %p = thread.ptr_add %g, %b : !gpu.ptr<f32, global>, i32
    %q = thread.ptr_add %g, %c : !gpu.ptr<f32, global>, i32
    %v = thread.load %p : !gpu.ptr<f32, global> -> f32
    thread.store %v, %q : f32, !gpu.ptr<f32, global>
    scf.yield
  }
  return
}

// A constant leaf stays out of the invariant sum, also one licm had hoisted with an
// invariant (a single-use add before the loop): it is added last, so the accesses
// that differ by a constant share the rest.
// CHECK-LABEL: kernel @constant_last
kernel @constant_last(%s: !gpu.ptr<f32, shared>, %base: i32, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : i32
  %inv = arith.addi %base, %c512 : i32
  // CHECK: scf.for %k
  scf.for %k = %c0 to %n step %c1 {
    // CHECK-NEXT: %[[K:.*]] = arith.index_cast %k
    // CHECK-NEXT: %[[X:.*]] = arith.addi %[[K]], %base : i32
    // CHECK-NEXT: %[[C:.*]] = arith.constant 512 : i32
    // CHECK-NEXT: %[[A:.*]] = arith.addi %[[X]], %[[C]] : i32
    // CHECK-NEXT: thread.ptr_add %s, %[[A]]
    %ki = arith.index_cast %k : index to i32
    %a = arith.addi %ki, %inv : i32
    %p = thread.ptr_add %s, %a : !gpu.ptr<f32, shared>, i32
    %v = thread.load %p : !gpu.ptr<f32, shared> -> f32
    thread.store %v, %s : f32, !gpu.ptr<f32, shared>
    scf.yield
  }
  return
}

// A constant crosses an index compare: k + c < K becomes c < K - k where two or more
// compares share (k, K), so the residue predicates of one thread's copies share
// K - k. An i32 compare (which may wrap), an unsigned one and one alone stay.
// CHECK-LABEL: kernel @residues
kernel @residues(%g: !gpu.ptr<f32, global>, %K: index, %Ki: i32, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c16i = arith.constant 16 : i32
  %z = arith.constant 0.0 : f32
  // CHECK: scf.for %k
  scf.for %k = %c0 to %n step %c1 {
    // CHECK-NEXT: %[[R:.*]] = arith.subi %K, %k : index
    // CHECK-NEXT: %[[P1:.*]] = arith.cmpi slt, %c16, %[[R]] : index
    // CHECK-NEXT: %[[P2:.*]] = arith.cmpi slt, %c32, %[[R]] : index
    // CHECK-NEXT: %[[A3:.*]] = arith.addi %k, %c16 : index
    // CHECK-NEXT: %[[P3:.*]] = arith.cmpi ult, %[[A3]], %K : index
    // CHECK: arith.cmpi slt, %{{.*}}, %Ki : i32
    // CHECK: %[[A5:.*]] = arith.addi %k, %c32 : index
    // CHECK-NEXT: arith.cmpi slt, %[[A5]], %n : index
    %a1 = arith.addi %k, %c16 : index
    %p1 = arith.cmpi slt, %a1, %K : index
    %a2 = arith.addi %k, %c32 : index
    %p2 = arith.cmpi slt, %a2, %K : index
    %a3 = arith.addi %k, %c16 : index
    %p3 = arith.cmpi ult, %a3, %K : index
    %ki = arith.index_cast %k : index to i32
    %a4 = arith.addi %ki, %c16i : i32
    %p4 = arith.cmpi slt, %a4, %Ki : i32
    %a5 = arith.addi %k, %c32 : index
    %p5 = arith.cmpi slt, %a5, %n : index
    %q1 = arith.andi %p1, %p2 : i1
    %q2 = arith.andi %p3, %p4 : i1
    %q3 = arith.andi %q1, %q2 : i1
    %q = arith.andi %q3, %p5 : i1
    thread.store_if %q, %z, %g : f32, !gpu.ptr<f32, global>
    scf.yield
  }
  return
}

// The same when the hoisted add has other users (the prologue's copies): it stays for
// them, and the loop's sum takes its leaves.
// CHECK-LABEL: kernel @constant_last_shared
kernel @constant_last_shared(%s: !gpu.ptr<f32, shared>, %base: i32, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : i32
  // CHECK: %[[INV:.*]] = arith.addi %base, %c512 : i32
  // CHECK-NEXT: %[[P0:.*]] = thread.ptr_add %s, %[[INV]]
  %inv = arith.addi %base, %c512 : i32
  %p0 = thread.ptr_add %s, %inv : !gpu.ptr<f32, shared>, i32
  %v0 = thread.load %p0 : !gpu.ptr<f32, shared> -> f32
  thread.store %v0, %s : f32, !gpu.ptr<f32, shared>
  // CHECK: scf.for %k
  scf.for %k = %c0 to %n step %c1 {
    // CHECK-NEXT: %[[K:.*]] = arith.index_cast %k
    // CHECK-NEXT: %[[X:.*]] = arith.addi %[[K]], %base : i32
    // CHECK-NEXT: %[[C:.*]] = arith.constant 512 : i32
    // CHECK-NEXT: %[[A:.*]] = arith.addi %[[X]], %[[C]] : i32
    %ki = arith.index_cast %k : index to i32
    %a = arith.addi %ki, %inv : i32
    %p = thread.ptr_add %s, %a : !gpu.ptr<f32, shared>, i32
    %v = thread.load %p : !gpu.ptr<f32, shared> -> f32
    thread.store %v, %s : f32, !gpu.ptr<f32, shared>
    scf.yield
  }
  return
}

// Subtracted leaves are terms of the tree too (the swizzled ldmatrix addresses subtract
// invariant parts of the XOR): ((v + 2048) - a) - b becomes (v - (a + b)) + 2048, the
// sum a + b before the loop. Two reads that differ by a constant then share v - (a + b).
// A varying value that is only subtracted stays as it is.
// CHECK-LABEL: kernel @subtracted
kernel @subtracted(%s: !gpu.ptr<f32, shared>, %a: i32, %b: i32, %c: i32, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2048 = arith.constant 2048 : i32
  // CHECK: %[[AB:.*]] = arith.addi %a, %b : i32
  // CHECK-NEXT: %[[CA:.*]] = arith.subi %c, %a : i32
  // CHECK-NEXT: scf.for %k
  scf.for %k = %c0 to %n step %c1 {
    // CHECK-NEXT: %[[K:.*]] = arith.index_cast %k
    // CHECK-NEXT: %[[X:.*]] = arith.subi %[[K]], %[[AB]] : i32
    // CHECK-NEXT: %[[C:.*]] = arith.constant 2048 : i32
    // CHECK-NEXT: %[[O:.*]] = arith.addi %[[X]], %[[C]] : i32
    // CHECK-NEXT: thread.ptr_add %s, %[[O]]
    %ki = arith.index_cast %k : index to i32
    %o1 = arith.addi %ki, %c2048 : i32
    %o2 = arith.subi %o1, %a : i32
    %o3 = arith.subi %o2, %b : i32
    %p = thread.ptr_add %s, %o3 : !gpu.ptr<f32, shared>, i32
    %v = thread.load %p : !gpu.ptr<f32, shared> -> f32
    // c - (a - k): k + (c - a), the invariant difference before the loop.
    // CHECK: %[[Y:.*]] = arith.addi %[[K]], %[[CA]] : i32
    %d = arith.subi %a, %ki : i32
    %e = arith.subi %c, %d : i32
    %q = thread.ptr_add %s, %e : !gpu.ptr<f32, shared>, i32
    thread.store %v, %q : f32, !gpu.ptr<f32, shared>
    // a - k - b: nothing added varies, so it stays.
    // CHECK: %[[D:.*]] = arith.subi %a, %[[K]] : i32
    // CHECK-NEXT: %[[F:.*]] = arith.subi %[[D]], %b : i32
    %d2 = arith.subi %a, %ki : i32
    %f = arith.subi %d2, %b : i32
    %r = thread.ptr_add %s, %f : !gpu.ptr<f32, shared>, i32
    thread.store %v, %r : f32, !gpu.ptr<f32, shared>
    scf.yield
  }
  return
}
