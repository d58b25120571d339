module {
  func @ints(%a: i32, %b: i32, %i: index, %s: i16) -> i32 {
    %c = arith.constant 42 : i32
    %neg = arith.constant -7 : i64
    %t = arith.constant true
    %f = arith.constant false
    %0 = arith.addi %a, %b : i32
    %1 = arith.subi %a, %b : i32
    %2 = arith.muli %a, %b : i32
    %3 = arith.divsi %a, %b : i32
    %4 = arith.divui %a, %b : i32
    %5 = arith.remsi %a, %b : i32
    %6 = arith.remui %a, %b : i32
    %7 = arith.floordivsi %i, %i : index
    %8 = arith.ceildivsi %i, %i : index
    %9 = arith.andi %a, %b : i32
    %10 = arith.ori %a, %b : i32
    %11 = arith.xori %a, %b : i32
    %12 = arith.shli %a, %b : i32
    %13 = arith.shrsi %a, %b : i32
    %14 = arith.shrui %a, %b : i32
    %15 = arith.maxsi %a, %b : i32
    %16 = arith.minsi %a, %b : i32
    %17 = arith.maxui %a, %b : i32
    %18 = arith.minui %a, %b : i32
    %p = arith.cmpi sge, %a, %b : i32
    %q = arith.cmpi ult, %i, %i : index
    %sel = arith.select %p, %a, %b : i32
    %w = arith.extsi %s : i16 to i32
    %z = arith.extui %s : i16 to i32
    %n = arith.trunci %a : i32 to i16
    %ic = arith.index_cast %a : i32 to index
    %iu = arith.index_castui %i : index to i64
    return %sel : i32
  }
  func @floats(%x: f32, %y: f32, %h: f16, %bh: bf16, %d: f64) -> f32 {
    %c = arith.constant 1.5 : f32
    %big = arith.constant 1.0e+30 : f64
    %inf = arith.constant inf : f32
    %ninf = arith.constant -inf : f32
    %nan = arith.constant nan : f32
    %mz = arith.constant -0.0 : f16
    %0 = arith.addf %x, %y : f32
    %1 = arith.subf %x, %y : f32
    %2 = arith.mulf %x, %y : f32
    %3 = arith.divf %x, %y : f32
    %4 = arith.maximumf %x, %y : f32
    %5 = arith.minimumf %x, %y : f32
    %6 = arith.negf %x : f32
    %7 = arith.fma %x, %y, %c : f32
    %p = arith.cmpf olt, %x, %y : f32
    %u = arith.cmpf uno, %x, %y : f32
    %e = arith.extf %h : f16 to f32
    %eb = arith.extf %bh : bf16 to f64
    %t = arith.truncf %d : f64 to f32
    %tt = arith.truncf %x : f32 to bf16
    %si = arith.fptosi %x : f32 to i32
    %ui = arith.fptoui %x : f32 to i8
    %fs = arith.sitofp %si : i32 to f32
    %fu = arith.uitofp %ui : i8 to f16
    %bc = arith.bitcast %x : f32 to i32
    return %7 : f32
  }
}
