// Every arith op at least once; f16 and bf16 arithmetic goes through f32
// (legalize.py), floordivsi and ceildivsi become divsi/remsi sequences.
module {
  kernel @arith_ops(%oi: !gpu.ptr<i32, global>, %ol: !gpu.ptr<i64, global>, %of: !gpu.ptr<f32, global>, %od: !gpu.ptr<f64, global>, %oh: !gpu.ptr<f16, global>, %ob: !gpu.ptr<bf16, global>, %o8: !gpu.ptr<i8, global>, %x: i32, %y: i32, %u: i64, %f: f32, %g: f32, %d: f64, %h: f16, %bh: bf16) {
    %tid = gpu.thread_id x : index
    // integers
    %c5 = arith.constant 5 : i32
    %c_neg = arith.constant -7 : i32
    %add = arith.addi %x, %y : i32
    %sub = arith.subi %add, %c5 : i32
    %mul = arith.muli %sub, %y : i32
    %divs = arith.divsi %mul, %c_neg : i32
    %divu = arith.divui %divs, %c5 : i32
    %rems = arith.remsi %divu, %y : i32
    %remu = arith.remui %rems, %c5 : i32
    %fdiv = arith.floordivsi %remu, %c_neg : i32
    %cdiv = arith.ceildivsi %fdiv, %y : i32
    %and = arith.andi %cdiv, %x : i32
    %or = arith.ori %and, %y : i32
    %xor = arith.xori %or, %c5 : i32
    %shl = arith.shli %xor, %c5 : i32
    %shrs = arith.shrsi %shl, %y : i32
    %shru = arith.shrui %shrs, %x : i32
    %maxs = arith.maxsi %shru, %x : i32
    %mins = arith.minsi %maxs, %y : i32
    %maxu = arith.maxui %mins, %c5 : i32
    %minu = arith.minui %maxu, %c_neg : i32
    %p0 = thread.ptr_add %oi, %tid : !gpu.ptr<i32, global>, index
    thread.store %minu, %p0 : i32, !gpu.ptr<i32, global>
    // 64-bit integers, a shift by a 64-bit amount, index casts
    %wide = arith.extsi %minu : i32 to i64
    %wideu = arith.extui %x : i32 to i64
    %l = arith.muli %wide, %u : i64
    %l2 = arith.shli %l, %wideu : i64
    %l3 = arith.floordivsi %l2, %u : i64
    %ti = arith.index_cast %tid : index to i64
    %l4 = arith.addi %l3, %ti : i64
    %back = arith.index_cast %l4 : i64 to index
    %iu = arith.index_castui %x : i32 to index
    %isum = arith.addi %back, %iu : index
    %icd = arith.ceildivsi %isum, %tid : index
    %p1 = thread.ptr_add %ol, %icd : !gpu.ptr<i64, global>, index
    thread.store %l4, %p1 : i64, !gpu.ptr<i64, global>
    %narrow = arith.trunci %l4 : i64 to i32
    %i8v = arith.trunci %narrow : i32 to i8
    %i8w = arith.extsi %i8v : i8 to i32
    %p8 = thread.ptr_add %o8, %i8w : !gpu.ptr<i8, global>, i32
    thread.store %i8v, %p8 : i8, !gpu.ptr<i8, global>
    // f32
    %one = arith.constant 1.5 : f32
    %inf = arith.constant inf : f32
    %fa = arith.addf %f, %g : f32
    %fs = arith.subf %fa, %one : f32
    %fm = arith.mulf %fs, %g : f32
    %fd = arith.divf %fm, %f : f32
    %fmax = arith.maximumf %fd, %inf : f32
    %fmin = arith.minimumf %fmax, %g : f32
    %fn = arith.negf %fmin : f32
    %ff = arith.fma %fn, %f, %g : f32
    %fromi = arith.sitofp %x : i32 to f32
    %fromu = arith.uitofp %u : i64 to f32
    %f2 = arith.addf %ff, %fromi : f32
    %f3 = arith.addf %f2, %fromu : f32
    %toi = arith.fptosi %f3 : f32 to i32
    %tou = arith.fptoui %f3 : f32 to i64
    %bits = arith.bitcast %f3 : f32 to i32
    %fb = arith.bitcast %toi : i32 to f32
    %pf = thread.ptr_add %of, %toi : !gpu.ptr<f32, global>, i32
    thread.store %fb, %pf : f32, !gpu.ptr<f32, global>
    %pl = thread.ptr_add %ol, %bits : !gpu.ptr<i64, global>, i32
    thread.store %tou, %pl : i64, !gpu.ptr<i64, global>
    // comparisons and select: every predicate
    %ceq = arith.cmpi eq, %x, %y : i32
    %cne = arith.cmpi ne, %x, %y : i32
    %cslt = arith.cmpi slt, %x, %y : i32
    %csle = arith.cmpi sle, %x, %y : i32
    %csgt = arith.cmpi sgt, %x, %y : i32
    %csge = arith.cmpi sge, %x, %y : i32
    %cult = arith.cmpi ult, %x, %y : i32
    %cule = arith.cmpi ule, %x, %y : i32
    %cugt = arith.cmpi ugt, %x, %y : i32
    %cuge = arith.cmpi uge, %x, %y : i32
    %foeq = arith.cmpf oeq, %f, %g : f32
    %fone = arith.cmpf one, %f, %g : f32
    %folt = arith.cmpf olt, %f, %g : f32
    %fole = arith.cmpf ole, %f, %g : f32
    %fogt = arith.cmpf ogt, %f, %g : f32
    %foge = arith.cmpf oge, %f, %g : f32
    %ford = arith.cmpf ord, %f, %g : f32
    %fueq = arith.cmpf ueq, %f, %g : f32
    %fune = arith.cmpf une, %f, %g : f32
    %fult = arith.cmpf ult, %f, %g : f32
    %fule = arith.cmpf ule, %f, %g : f32
    %fugt = arith.cmpf ugt, %f, %g : f32
    %fuge = arith.cmpf uge, %f, %g : f32
    %funo = arith.cmpf uno, %f, %g : f32
    %a1 = arith.andi %ceq, %cne : i1
    %a2 = arith.ori %a1, %cslt : i1
    %a3 = arith.xori %a2, %csle : i1
    %a4 = arith.andi %a3, %csgt : i1
    %a5 = arith.ori %a4, %csge : i1
    %a6 = arith.xori %a5, %cult : i1
    %a7 = arith.andi %a6, %cule : i1
    %a8 = arith.ori %a7, %cugt : i1
    %a9 = arith.xori %a8, %cuge : i1
    %b1 = arith.andi %foeq, %fone : i1
    %b2 = arith.ori %b1, %folt : i1
    %b3 = arith.xori %b2, %fole : i1
    %b4 = arith.andi %b3, %fogt : i1
    %b5 = arith.ori %b4, %foge : i1
    %b6 = arith.xori %b5, %ford : i1
    %b7 = arith.andi %b6, %fueq : i1
    %b8 = arith.ori %b7, %fune : i1
    %b9 = arith.xori %b8, %fult : i1
    %b10 = arith.andi %b9, %fule : i1
    %b11 = arith.ori %b10, %fugt : i1
    %b12 = arith.xori %b11, %fuge : i1
    %b13 = arith.andi %b12, %funo : i1
    %sel = arith.select %a9, %f, %g : f32
    %sel2 = arith.select %b13, %sel, %fb : f32
    %pf2 = thread.ptr_add %of, %tid : !gpu.ptr<f32, global>, index
    thread.store %sel2, %pf2 : f32, !gpu.ptr<f32, global>
    // f64, and widening and narrowing floats
    %dc = arith.constant 0.25 : f64
    %fe = arith.extf %sel2 : f32 to f64
    %da = arith.addf %d, %fe : f64
    %dm = arith.fma %da, %dc, %d : f64
    %dd = arith.divf %dm, %d : f64
    %pd = thread.ptr_add %od, %tid : !gpu.ptr<f64, global>, index
    thread.store %dd, %pd : f64, !gpu.ptr<f64, global>
    %dt = arith.truncf %dd : f64 to f32
    // f16 and bf16: computed in f32
    %hc = arith.constant 1.0 : f16
    %ha = arith.addf %h, %hc : f16
    %hm = arith.mulf %ha, %h : f16
    %hf = arith.fma %hm, %h, %hc : f16
    %hmax = arith.maximumf %hf, %h : f16
    %hlt = arith.cmpf olt, %hmax, %hc : f16
    %ht = arith.truncf %dt : f32 to f16
    %hsel = arith.select %hlt, %hmax, %ht : f16
    %ph = thread.ptr_add %oh, %tid : !gpu.ptr<f16, global>, index
    thread.store %hsel, %ph : f16, !gpu.ptr<f16, global>
    %hl = thread.load %ph : !gpu.ptr<f16, global> -> f16
    %hw = arith.extf %hl : f16 to f32
    %bc = arith.constant 2.0 : bf16
    %bs = arith.subf %bh, %bc : bf16
    %bd = arith.divf %bs, %bh : bf16
    %bn = arith.negf %bd : bf16
    %bmin = arith.minimumf %bn, %bh : bf16
    %bw = arith.extf %bmin : bf16 to f32
    %bsum = arith.addf %bw, %hw : f32
    %bt = arith.truncf %bsum : f32 to bf16
    %pb = thread.ptr_add %ob, %tid : !gpu.ptr<bf16, global>, index
    thread.store %bt, %pb : bf16, !gpu.ptr<bf16, global>
    %hi = arith.bitcast %hl : f16 to i16
    %hix = arith.extui %hi : i16 to i32
    %fh = arith.sitofp %hix : i32 to f16
    %ph2 = thread.ptr_add %oh, %hix : !gpu.ptr<f16, global>, i32
    thread.store %fh, %ph2 : f16, !gpu.ptr<f16, global>
    return
  }
}
