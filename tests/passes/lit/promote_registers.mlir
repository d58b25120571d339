// RUN: cutec opt %s --passes promote-registers
// Private arrays accessed at constant offsets become SSA values: a loop that
// writes an element carries it as an iter_arg, an if yields it, a vector
// access is extracts / from_elements, a predicated one a select.

// CHECK-LABEL: kernel @accumulate
kernel @accumulate(%g: !gpu.ptr<f32, global>, %n: index, %p: i1) attributes {reqntid = array<i32: 32, 1, 1>} {
  // CHECK-NOT: thread.alloc_local
  // CHECK: %[[Z:.*]] = arith.constant 0.0 : f32
  %acc = thread.alloc_local {bytes = 8 : i64, align = 16 : i64} : !gpu.ptr<f32, local>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1i = arith.constant 1 : i32
  %acc1 = thread.ptr_add %acc, %c1i : !gpu.ptr<f32, local>, i32
  %x = thread.load %g : !gpu.ptr<f32, global> -> f32
  thread.store %x, %acc : f32, !gpu.ptr<f32, local>
  // Element 0 is carried (written in the body); element 1 is only read: not carried.
  // CHECK: %[[R:.*]] = scf.for %{{.*}} = %{{.*}} to %n step %{{.*}} iter_args(%[[A:.*]] = %[[X:.*]]) -> (f32) {
  scf.for %i = %c0 to %n step %c1 {
    %a = thread.load %acc : !gpu.ptr<f32, local> -> f32
    %b = thread.load %acc1 : !gpu.ptr<f32, local> -> f32
    // CHECK: %[[S:.*]] = arith.addf %[[A]], %[[Z]] : f32
    %s = arith.addf %a, %b : f32
    thread.store %s, %acc : f32, !gpu.ptr<f32, local>
    // CHECK: scf.yield %[[S]] : f32
    scf.yield
  }
  // Under a predicate: the element keeps its value where %p is false.
  // CHECK: %[[Y:.*]] = thread.load %g
  %y = thread.load %g : !gpu.ptr<f32, global> -> f32
  // CHECK: %[[SEL:.*]] = arith.select %p, %[[Y]], %[[R]] : f32
  thread.store_if %p, %y, %acc : f32, !gpu.ptr<f32, local>
  // An if that writes element 1 on one side yields it from both.
  // CHECK: %[[IF:.*]] = scf.if %p -> (f32) {
  // CHECK: scf.yield %[[SEL]] : f32
  // CHECK: } else {
  // CHECK: scf.yield %[[Z]] : f32
  scf.if %p {
    %v = thread.load %acc : !gpu.ptr<f32, local> -> f32
    thread.store %v, %acc1 : f32, !gpu.ptr<f32, local>
    scf.yield
  }
  // A vector load of both elements.
  // CHECK: %[[V:.*]] = thread.from_elements %[[SEL]], %[[IF]] : vector<2xf32>
  // CHECK: thread.store %[[V]], %g : vector<2xf32>, !gpu.ptr<f32, global>
  %v2 = thread.load %acc : !gpu.ptr<f32, local> -> vector<2xf32>
  thread.store %v2, %g : vector<2xf32>, !gpu.ptr<f32, global>
  return
}

// An array indexed at a run-time offset stays in local memory.
// CHECK-LABEL: kernel @dynamic
kernel @dynamic(%g: !gpu.ptr<f32, global>, %i: i32) attributes {reqntid = array<i32: 32, 1, 1>} {
  // CHECK: thread.alloc_local
  %r = thread.alloc_local {bytes = 16 : i64, align = 16 : i64} : !gpu.ptr<f32, local>
  %q = thread.ptr_add %r, %i : !gpu.ptr<f32, local>, i32
  %x = thread.load %g : !gpu.ptr<f32, global> -> f32
  // CHECK: thread.store %{{.*}}, %{{.*}} : f32, !gpu.ptr<f32, local>
  thread.store %x, %q : f32, !gpu.ptr<f32, local>
  return
}

// A loop whose body overwrites an element before reading it (a persistent kernel's
// accumulators, cleared for each tile) does not carry it, unless code after the
// loop reads the array: element 0 of %frag is not carried, %keep is.
// CHECK-LABEL: kernel @overwritten_first
kernel @overwritten_first(%g: !gpu.ptr<f32, global>, %n: index) attributes {reqntid = array<i32: 32, 1, 1>} {
  %frag = thread.alloc_local {bytes = 4 : i64, align = 4 : i64} : !gpu.ptr<f32, local>
  %keep = thread.alloc_local {bytes = 4 : i64, align = 4 : i64} : !gpu.ptr<f32, local>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  // CHECK: %[[R:.*]] = scf.for %{{.*}} = %{{.*}} to %n step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (f32) {
  scf.for %t = %c0 to %n step %c1 {
    thread.store %zero, %frag : f32, !gpu.ptr<f32, local>
    thread.store %zero, %keep : f32, !gpu.ptr<f32, local>
    %x = thread.load %g : !gpu.ptr<f32, global> -> f32
    %a = thread.load %frag : !gpu.ptr<f32, local> -> f32
    %s = arith.addf %a, %x : f32
    thread.store %s, %g : f32, !gpu.ptr<f32, global>
    thread.store %s, %keep : f32, !gpu.ptr<f32, local>
    scf.yield
  }
  // CHECK: thread.store %[[R]], %g
  %k = thread.load %keep : !gpu.ptr<f32, local> -> f32
  thread.store %k, %g : f32, !gpu.ptr<f32, global>
  return
}

// A branch outside any loop yields only elements that code after it reads (the CTAs
// past a stream-K kernel's full waves skip their tile): %frag is written in the
// branch and never read after it, so the if yields %keep alone and no zero for
// %frag's other path is made.
// CHECK-LABEL: kernel @branch_dead_after
kernel @branch_dead_after(%g: !gpu.ptr<f32, global>, %p: i1) attributes {reqntid = array<i32: 32, 1, 1>} {
  %frag = thread.alloc_local {bytes = 4 : i64, align = 4 : i64} : !gpu.ptr<f32, local>
  %keep = thread.alloc_local {bytes = 4 : i64, align = 4 : i64} : !gpu.ptr<f32, local>
  // CHECK: %[[IF:.*]] = scf.if %p -> (f32) {
  scf.if %p {
    %x = thread.load %g : !gpu.ptr<f32, global> -> f32
    thread.store %x, %frag : f32, !gpu.ptr<f32, local>
    %a = thread.load %frag : !gpu.ptr<f32, local> -> f32
    %s = arith.addf %a, %x : f32
    thread.store %s, %g : f32, !gpu.ptr<f32, global>
    thread.store %s, %keep : f32, !gpu.ptr<f32, local>
    // CHECK: scf.yield %{{.*}} : f32
    scf.yield
  }
  // CHECK: } else {
  // CHECK-NEXT: scf.yield %{{.*}} : f32
  // CHECK: thread.store %[[IF]], %g
  %k = thread.load %keep : !gpu.ptr<f32, local> -> f32
  thread.store %k, %g : f32, !gpu.ptr<f32, global>
  return
}

// An scf.while that writes an element carries it: an argument of `before`, forwarded
// by the condition into `after`, yielded back, and the loop's result after it.
// CHECK-LABEL: kernel @while_carried
kernel @while_carried(%g: !gpu.ptr<f32, global>, %n: index) attributes {reqntid = array<i32: 32, 1, 1>} {
  // CHECK-NOT: thread.alloc_local
  %acc = thread.alloc_local {bytes = 4 : i64, align = 4 : i64} : !gpu.ptr<f32, local>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %x = thread.load %g : !gpu.ptr<f32, global> -> f32
  // CHECK: %[[X:.*]] = thread.load %g
  thread.store %x, %acc : f32, !gpu.ptr<f32, local>
  // CHECK: %[[W:.*]]:2 = scf.while (%[[I:.*]] = %{{.*}}, %[[A:.*]] = %[[X]]) : (index, f32) -> (index, f32) {
  // CHECK: scf.condition(%{{.*}}) %[[I]], %[[A]] : index, f32
  // CHECK: } do {
  // CHECK: ^bb0(%[[J:.*]]: index, %[[B:.*]]: f32):
  %r = scf.while (%i = %c0) : (index) -> (index) {
    %go = arith.cmpi slt, %i, %n : index
    scf.condition(%go) %i : index
  } do {
  ^bb0(%j: index):
    %a = thread.load %acc : !gpu.ptr<f32, local> -> f32
    // CHECK: %[[S:.*]] = arith.addf %[[B]], %[[B]] : f32
    %s = arith.addf %a, %a : f32
    thread.store %s, %acc : f32, !gpu.ptr<f32, local>
    %k = arith.addi %j, %c1 : index
    // CHECK: scf.yield %{{.*}}, %[[S]] : index, f32
    scf.yield %k : index
  }
  // CHECK: thread.store %[[W]]#1, %g
  %y = thread.load %acc : !gpu.ptr<f32, local> -> f32
  thread.store %y, %g : f32, !gpu.ptr<f32, global>
  return
}
