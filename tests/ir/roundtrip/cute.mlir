// Every cute op: tensors from pointers, allocations, views, atom objects, copies and gemm.
module {
  kernel @sgemm(%pA: !gpu.ptr<f32, global>, %M: index, %K: index, %ldA: index, %alpha: f32, %beta: f32) attributes {reqntid = array<i32: 256, 1, 1>} {
    %A = cute.make_tensor %pA, %M, %K, %ldA {div = array<i64: 1, 8, 4>} : !gpu.ptr<f32, global> -> !cute.tensor<f32, gmem, (?,?):(1,?)> loc("sgemm.cute":3:5)
    %bx = gpu.block_id x : index
    %tid = gpu.thread_id x : index
    %gA = cute.local_tile %A, %bx {tiler = #cute.tuple<(128,128,8)>, coord = #cute.tuple<(?,0,_)>, proj = #cute.tuple<(1,X,1)>} : !cute.tensor<f32, gmem, (?,?):(1,?)> -> !cute.tensor<f32, gmem, (128,8,?):(1,?,?)>
    %sA = cute.alloc_smem : !cute.tensor<f32, smem, (128,8):(1,129)>
    %tAgA = cute.local_partition %gA, %tid {thr_layout = #cute.layout<(32,8):(1,32)>} : !cute.tensor<f32, gmem, (128,8,?):(1,?,?)> -> !cute.tensor<f32, gmem, (4,1,?):(32,0,?)>
    %tAsA = cute.local_partition %sA, %tid {thr_layout = #cute.layout<(32,8):(1,32)>} : !cute.tensor<f32, smem, (128,8):(1,129)> -> !cute.tensor<f32, smem, (4,1):(32,0)>
    %tCsA = cute.local_partition %sA, %tid {thr_layout = #cute.layout<(16,16):(1,16)>, proj = #cute.tuple<(1,X)>} : !cute.tensor<f32, smem, (128,8):(1,129)> -> !cute.tensor<f32, smem, (8,8):(16,129)>
    %tCrC = cute.make_fragment : !cute.tensor<f32, rmem, (8,8):(1,8)>
    %rX = cute.make_fragment : !cute.tensor<f32, rmem, (8,8):(1,8)>
    cute.map %rX, %tCrC : !cute.tensor<f32, rmem, (8,8):(1,8)>, !cute.tensor<f32, rmem, (8,8):(1,8)> {
    ^bb0(%e: f32):
      %s = arith.mulf %alpha, %e : f32
      cute.yield %s : f32
    }
    %cA = cute.compose %sA {layout = #cute.layout<(8,128):(128,1)>} : !cute.tensor<f32, smem, (128,8):(1,129)> -> !cute.tensor<f32, smem, (8,128):(129,1)>
    %rA = cute.recast %sA : !cute.tensor<f32, smem, (128,8):(1,129)> -> !cute.tensor<i16, smem, (256,8):(1,258)>
    %vA = cute.view %A, %tid, %ldA : !cute.tensor<f32, gmem, (?,?):(1,?)> -> !cute.tensor<f32, gmem, (4,2):(32,?)>
    cute.clear %tCrC : !cute.tensor<f32, rmem, (8,8):(1,8)>
    %n = cute.size %tAgA {mode = #cute.tuple<2>} : !cute.tensor<f32, gmem, (4,1,?):(32,0,?)> -> index
    %k = arith.constant 0 : index
    %a_k = cute.slice %tAgA, %k {coord = #cute.tuple<(_,_,?)>} : !cute.tensor<f32, gmem, (4,1,?):(32,0,?)> -> !cute.tensor<f32, gmem, (4,1):(32,0)>
    cute.copy %a_k, %tAsA : !cute.tensor<f32, gmem, (4,1):(32,0)>, !cute.tensor<f32, smem, (4,1):(32,0)>
    %copy = cute.make_tiled_copy : !cute.tiled_copy<"UniversalCopy<uint128_t>", f32, (256,4):(4,1), (128,8)>
    %auto_copy = cute.make_tiled_copy : !cute.tiled_copy<auto, f32, (256,4):(4,1), (128,8)>
    %async = cute.make_tiled_copy : !cute.tiled_copy<"SM80_CP_ASYNC_CACHEALWAYS<uint128_t>", f32, (256,4):(4,1), (128,8)>
    %tXgA = cute.partition %gA, %copy, %tid {operand = "S"} : !cute.tensor<f32, gmem, (128,8,?):(1,?,?)>, !cute.tiled_copy<"UniversalCopy<uint128_t>", f32, (256,4):(4,1), (128,8)> -> !cute.tensor<f32, gmem, ((4,1),1,1,?):((1,0),0,0,?)>
    %tXsA = cute.partition %sA, %copy, %tid {operand = "D"} : !cute.tensor<f32, smem, (128,8):(1,129)>, !cute.tiled_copy<"UniversalCopy<uint128_t>", f32, (256,4):(4,1), (128,8)> -> !cute.tensor<f32, smem, ((4,1),1,1):((1,0),0,0)>
    %tXgA_k = cute.slice %tXgA, %k {coord = #cute.tuple<(_,_,_,?)>} : !cute.tensor<f32, gmem, ((4,1),1,1,?):((1,0),0,0,?)> -> !cute.tensor<f32, gmem, ((4,1),1,1):((1,0),0,0)>
    cute.copy %copy, %tXgA_k, %tXsA : !cute.tiled_copy<"UniversalCopy<uint128_t>", f32, (256,4):(4,1), (128,8)>, !cute.tensor<f32, gmem, ((4,1),1,1):((1,0),0,0)>, !cute.tensor<f32, smem, ((4,1),1,1):((1,0),0,0)>
    %tok = cute.copy_async %async, %tXgA_k, %tXsA : !cute.tiled_copy<"SM80_CP_ASYNC_CACHEALWAYS<uint128_t>", f32, (256,4):(4,1), (128,8)>, !cute.tensor<f32, gmem, ((4,1),1,1):((1,0),0,0)>, !cute.tensor<f32, smem, ((4,1),1,1):((1,0),0,0)> -> !gpu.token
    %zfill = cute.make_tiled_copy : !cute.tiled_copy<"SM80_CP_ASYNC_CACHEALWAYS_ZFILL<uint128_t>", f32, (256,4):(4,1), (128,8)>
    %zpred = cute.make_fragment : !cute.tensor<i1, rmem, ((4,1),1,1):((1,0),0,0)>
    %ztok = cute.copy_async %zfill, %zpred, %tXgA_k, %tXsA : !cute.tiled_copy<"SM80_CP_ASYNC_CACHEALWAYS_ZFILL<uint128_t>", f32, (256,4):(4,1), (128,8)>, !cute.tensor<i1, rmem, ((4,1),1,1):((1,0),0,0)>, !cute.tensor<f32, gmem, ((4,1),1,1):((1,0),0,0)>, !cute.tensor<f32, smem, ((4,1),1,1):((1,0),0,0)> -> !gpu.token
    %grp = thread.cp_async_commit %tok, %ztok
    thread.cp_async_wait %grp {pending = 0 : i32}
    %tCrC3 = cute.make_fragment : !cute.tensor<f32, rmem, (1,8,8):(0,1,8)>
    %tXrA = cute.retile %tCrC3, %copy {operand = "D"} : !cute.tensor<f32, rmem, (1,8,8):(0,1,8)>, !cute.tiled_copy<"UniversalCopy<uint128_t>", f32, (256,4):(4,1), (128,8)> -> !cute.tensor<f32, rmem, ((4,1),2,8):((1,0),4,8)>
    %mma = cute.make_tiled_mma : !cute.tiled_mma<"UniversalFMA_F32F32F32F32", f32, f32, f32, f32, (16,16,1):(1,16,0)>
    %auto_mma = cute.make_tiled_mma : !cute.tiled_mma<auto, f32, f16, f16, f32, (2,2,1):(1,2,0), (32,32,16)>
    %perm_mma = cute.make_tiled_mma : !cute.tiled_mma<"UniversalFMA_F32F32F32F32", f32, f32, f32, f32, (16,16,1):(1,16,0), ((16,4,2):(4,1,64),(16,4,2):(4,1,64),1)>
    %tCsA3 = cute.partition %sA, %perm_mma, %tid {operand = "A"} : !cute.tensor<f32, smem, (128,8):(1,129)>, !cute.tiled_mma<"UniversalFMA_F32F32F32F32", f32, f32, f32, f32, (16,16,1):(1,16,0), ((16,4,2):(4,1,64),(16,4,2):(4,1,64),1)> -> !cute.tensor<f32, smem, (1,(4,2),8):(0,(1,64),129)>
    %tCsA2 = cute.partition %sA, %mma, %tid {operand = "A"} : !cute.tensor<f32, smem, (128,8):(1,129)>, !cute.tiled_mma<"UniversalFMA_F32F32F32F32", f32, f32, f32, f32, (16,16,1):(1,16,0)> -> !cute.tensor<f32, smem, (1,8,8):(0,16,129)>
    gpu.barrier
    cute.gemm %tCsA, %tCsA, %tCrC : !cute.tensor<f32, smem, (8,8):(16,129)>, !cute.tensor<f32, smem, (8,8):(16,129)>, !cute.tensor<f32, rmem, (8,8):(1,8)>
    cute.gemm %mma, %tCsA, %tCsA, %tCrC : !cute.tiled_mma<"UniversalFMA_F32F32F32F32", f32, f32, f32, f32, (16,16,1):(1,16,0)>, !cute.tensor<f32, smem, (8,8):(16,129)>, !cute.tensor<f32, smem, (8,8):(16,129)>, !cute.tensor<f32, rmem, (8,8):(1,8)>
    cute.fill %tCrC, %beta : !cute.tensor<f32, rmem, (8,8):(1,8)>, f32
    cute.axpby %alpha, %tCrC, %beta, %tCrC : f32, !cute.tensor<f32, rmem, (8,8):(1,8)>, f32, !cute.tensor<f32, rmem, (8,8):(1,8)>
    %v = cute.load %tCrC, %k : !cute.tensor<f32, rmem, (8,8):(1,8)> -> f32
    cute.store %v, %tCrC, %k : f32, !cute.tensor<f32, rmem, (8,8):(1,8)>
    return
  }
  // Divides, coordinate tensors, predicated copies, wgmma batch brackets.
  kernel @copy_if(%pS: !gpu.ptr<f32, global>, %M: index, %N: index, %pD: !gpu.ptr<f32, global>) attributes {reqntid = array<i32: 256, 1, 1>} {
    %S = cute.make_tensor %pS, %M, %N, %M : !gpu.ptr<f32, global> -> !cute.tensor<f32, gmem, (?,?):(1,?)>
    %D = cute.make_tensor %pD, %M, %N, %M : !gpu.ptr<f32, global> -> !cute.tensor<f32, gmem, (?,?):(1,?)>
    %bx = gpu.block_id x : index
    %tid = gpu.thread_id x : index
    %tiled_S = cute.divide %S {kind = "tiled", tiler = #cute.tuple<(128,64)>} : !cute.tensor<f32, gmem, (?,?):(1,?)> -> !cute.tensor<f32, gmem, ((128,64),?,?):((1,?),128,?)>
    %tile_S = cute.slice %tiled_S, %bx, %bx {coord = #cute.tuple<((_,_),?,?)>} : !cute.tensor<f32, gmem, ((128,64),?,?):((1,?),128,?)> -> !cute.tensor<f32, gmem, (128,64):(1,?)>
    %zipped = cute.divide %tile_S {kind = "zipped", tiler = #cute.tuple<(32,8)>} : !cute.tensor<f32, gmem, (128,64):(1,?)> -> !cute.tensor<f32, gmem, ((32,8),(4,8)):((1,?),(32,?))>
    %cS = cute.make_identity_tensor %M, %N : !cute.coord_tensor<2, (?,?):(E0,E1)>
    %tile_C = cute.local_tile %cS, %bx, %bx {tiler = #cute.tuple<(128,64)>, coord = #cute.tuple<(?,?)>} : !cute.coord_tensor<2, (?,?):(E0,E1)> -> !cute.coord_tensor<2, (128,64):(E0,E1)>
    %copy = cute.make_tiled_copy : !cute.tiled_copy<"UniversalCopy<uint128_t>", f32, (256,4):(4,1), (128,8)>
    %tSgS = cute.partition %tile_S, %copy, %tid {operand = "S"} : !cute.tensor<f32, gmem, (128,64):(1,?)>, !cute.tiled_copy<"UniversalCopy<uint128_t>", f32, (256,4):(4,1), (128,8)> -> !cute.tensor<f32, gmem, ((4,1),1,8):((1,0),0,?)>
    %tSgC = cute.partition %tile_C, %copy, %tid {operand = "S"} : !cute.coord_tensor<2, (128,64):(E0,E1)>, !cute.tiled_copy<"UniversalCopy<uint128_t>", f32, (256,4):(4,1), (128,8)> -> !cute.coord_tensor<2, ((4,1),1,8):((E0,0),0,8*E1)>
    %pred = cute.make_fragment : !cute.tensor<i1, rmem, ((4,1),1,8):((1,0),0,4)>
    %frag = cute.make_fragment : !cute.tensor<f32, rmem, ((4,1),1,8):((1,0),0,4)>
    %i = arith.constant 5 : index
    %m = cute.load_coord %tSgC, %i {mode = 0 : i64} : !cute.coord_tensor<2, ((4,1),1,8):((E0,0),0,8*E1)> -> index
    %in = arith.cmpi slt, %m, %M : index
    cute.store %in, %pred, %i : i1, !cute.tensor<i1, rmem, ((4,1),1,8):((1,0),0,4)>
    cute.copy_if %copy, %pred, %tSgS, %frag : !cute.tiled_copy<"UniversalCopy<uint128_t>", f32, (256,4):(4,1), (128,8)>, !cute.tensor<i1, rmem, ((4,1),1,8):((1,0),0,4)>, !cute.tensor<f32, gmem, ((4,1),1,8):((1,0),0,?)>, !cute.tensor<f32, rmem, ((4,1),1,8):((1,0),0,4)>
    cute.copy_if %pred, %frag, %frag : !cute.tensor<i1, rmem, ((4,1),1,8):((1,0),0,4)>, !cute.tensor<f32, rmem, ((4,1),1,8):((1,0),0,4)>, !cute.tensor<f32, rmem, ((4,1),1,8):((1,0),0,4)>
    cute.fence_view_async_shared
    cute.warpgroup_fence_operand %frag : !cute.tensor<f32, rmem, ((4,1),1,8):((1,0),0,4)>
    cute.warpgroup_arrive
    cute.warpgroup_commit_batch
    cute.warpgroup_wait {pending = 0 : i32}
    return
  }
}
