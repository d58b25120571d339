module {
  func @loops(%n: index, %x: f32, %k: i32) -> (f32, i32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x, %cnt = %k) -> (f32, i32) attributes {unroll = 4 : i32} {
      %a = arith.addf %acc, %x : f32
      %one = arith.constant 1 : i32
      %c = arith.addi %cnt, %one : i32
      scf.yield %a, %c : f32, i32
    }
    %z = arith.constant 0 : i32
    %t = arith.constant 16 : i32
    %s = arith.constant 4 : i32
    scf.for %j = %z to %t step %s : i32 {
      scf.yield
    }
    %p = arith.cmpi slt, %k, %z : i32
    scf.if %p {
      scf.yield
    }
    %v = scf.if %p -> (f32) {
      scf.yield %x : f32
    } else {
      scf.yield %r#0 : f32
    }
    %w = scf.while (%q = %k) : (i32) -> (i32) {
      %lt = arith.cmpi slt, %q, %t : i32
      scf.condition(%lt) %q : i32
    } do {
    ^bb0(%y: i32):
      %y2 = arith.addi %y, %s : i32
      scf.yield %y2 : i32
    }
    return %v, %w : f32, i32
  }
}
