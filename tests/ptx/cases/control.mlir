// scf.if with results, scf.while, a loop whose yield swaps its carried values,
// and i1 values in registers (select, cmpi eq/ne, casts, an i1 argument).
module {
  kernel @control(%out: !gpu.ptr<i32, global>, %flags: !gpu.ptr<i1, global>, %n: i32, %on: i1) attributes {maxntid = array<i32: 256, 1, 1>, minnctapersm = 2 : i32, maxnreg = 64 : i32} {
    %tid = gpu.thread_id x : index
    %t = arith.index_cast %tid : index to i32
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c3 = arith.constant 3 : i32
    %odd = arith.andi %t, %c1 : i32
    %is_odd = arith.cmpi ne, %odd, %c0 : i32
    %r = scf.if %is_odd -> (i32) {
      %m = arith.muli %t, %c3 : i32
      scf.yield %m : i32
    } else {
      %h = arith.shrsi %t, %c1 : i32
      scf.yield %h : i32
    }
    // Collatz steps of %r, capped by %n: scf.while with two carried values.
    %w:2 = scf.while (%v = %r, %k = %c0) : (i32, i32) -> (i32, i32) {
      %gt1 = arith.cmpi sgt, %v, %c1 : i32
      %below = arith.cmpi slt, %k, %n : i32
      %go = arith.andi %gt1, %below : i1
      scf.condition(%go) %v, %k : i32, i32
    } do {
    ^bb0(%v2: i32, %k2: i32):
      %low = arith.andi %v2, %c1 : i32
      %even = arith.cmpi eq, %low, %c0 : i32
      %half = arith.shrui %v2, %c1 : i32
      %triple = arith.muli %v2, %c3 : i32
      %up = arith.addi %triple, %c1 : i32
      %next = arith.select %even, %half, %up : i32
      %k3 = arith.addi %k2, %c1 : i32
      scf.yield %next, %k3 : i32, i32
    }
    // A loop whose yield swaps its carried values (a parallel copy).
    %lb = arith.constant 0 : i32
    %ub = arith.constant 5 : i32
    %s:2 = scf.for %i = %lb to %ub step %c1 iter_args(%a = %w#0, %b = %w#1) -> (i32, i32) : i32 {
      scf.yield %b, %a : i32, i32
    }
    %p = thread.ptr_add %out, %t : !gpu.ptr<i32, global>, i32
    %sum = arith.addi %s#0, %s#1 : i32
    scf.if %on {
      thread.store %sum, %p : i32, !gpu.ptr<i32, global>
      scf.yield
    }
    // i1 in registers and in memory.
    %pf = thread.ptr_add %flags, %tid : !gpu.ptr<i1, global>, index
    %f = thread.load %pf : !gpu.ptr<i1, global> -> i1
    %same = arith.cmpi eq, %f, %is_odd : i1
    %diff = arith.cmpi ne, %f, %on : i1
    %both = arith.ori %same, %diff : i1
    %either = arith.xori %both, %on : i1
    %pick = arith.select %f, %either, %same : i1
    %wide = arith.extui %pick : i1 to i32
    %neg = arith.extsi %pick : i1 to i32
    %bit = arith.trunci %neg : i32 to i1
    %idx = arith.index_castui %bit : i1 to index
    %true = arith.constant true
    %all = arith.andi %bit, %true : i1
    thread.store %all, %pf : i1, !gpu.ptr<i1, global>
    %sum2 = arith.addi %wide, %neg : i32
    %q = thread.ptr_add %out, %idx : !gpu.ptr<i32, global>, index
    thread.store %sum2, %q : i32, !gpu.ptr<i32, global>
    return
  }
}
