// The generic form of ops, including one with regions and a multi-result op.
"builtin.module"() ({
  "builtin.func"() ({
  ^bb0(%a: i32, %b: i32):
    %0 = "arith.addi"(%a, %b) : (i32, i32) -> i32 loc("g.cute":1:2)
    %c = "arith.constant"() {value = 3 : i32} : () -> i32
    %p = "arith.cmpi"(%0, %c) {predicate = "eq"} : (i32, i32) -> i1
    %r = "scf.if"(%p) ({
      "scf.yield"(%0) : (i32) -> ()
    }, {
      "scf.yield"(%c) : (i32) -> ()
    }) : (i1) -> i32
    "builtin.return"(%r) : (i32) -> ()
  }) {sym_name = "g", function_type = (i32, i32) -> i32} : () -> ()
}) : () -> ()
